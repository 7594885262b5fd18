// Helpers the layout and indexing ops share: constant extents, value inputs read as integer
// lists, row-major index arithmetic, index wrapping and clamping, and the default schedule of an
// op whose outputs are all injective.
#pragma once

#include "nnvm/limits.hpp"
#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {
namespace transform_detail {

inline std::vector<ir::Expr> exprs(const std::vector<ir::Var>& v) { return {v.begin(), v.end()}; }

// The constant value of extent `e`; "nnvm.ops.input_shape" naming `what` when it is symbolic
// (ops whose index arithmetic or output shape needs the number).
inline int64_t const_extent(const ir::Expr& e, const std::string& what) {
  if (auto c = ir::simplified_const_int(e)) return *c;
  throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent, got ", ir::to_string(e)));
}

// "nnvm.ops.input_shape" unless `extent` (of output axis `axis`) is non-negative; an empty axis
// (extent 0) is a valid result, as in ONNX.
inline void check_output_extent(int64_t extent, size_t axis, const std::string& why) {
  if (extent < 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("output axis ", axis, " would have extent ", extent, " (", why, ")"));
}

// An output extent computed in floating point (Resize's floor(scale * n)): "nnvm.ops.too_large"
// when it is not finite or above max_tensor_bytes, which no tensor's extent can be, so a
// hostile scale cannot wrap the int64 conversion.
inline int64_t extent_from_double(double v, size_t axis, const std::string& why) {
  if (!(v <= double(max_tensor_bytes)))
    throw UserError("nnvm.ops.too_large",
                    str_cat("output axis ", axis, " would have extent ", v, " (", why, "), larger than 2^48"));
  return int64_t(v);
}

// "[2, -1, 3]", for messages.
inline std::string list_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

inline ir::Expr product(const std::vector<ir::Expr>& shape, size_t begin = 0, size_t end = SIZE_MAX) {
  ir::Expr p(int64_t(1));
  for (size_t d = begin; d < std::min(end, shape.size()); ++d) p = p * shape[d];
  return ir::simplify(p);
}

// Row-major flat offset of `idx` in `shape`, and its inverse.
inline ir::Expr ravel(const std::vector<ir::Expr>& idx, const std::vector<ir::Expr>& shape) {
  ir::Expr flat(int64_t(0));
  for (size_t d = 0; d < idx.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}
inline std::vector<ir::Expr> unravel(ir::Expr flat, const std::vector<ir::Expr>& shape) {
  std::vector<ir::Expr> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = d == 0 ? flat : flat % shape[d];
    if (d > 0) flat = flat / shape[d];
  }
  return idx;
}

// An index element read from a tensor, as int64, with a negative value counting from the end
// (ONNX's wrap for Gather and friends).
inline ir::Expr wrap_negative(const ir::Expr& i, const ir::Expr& n) {
  ir::Expr x = ir::cast(dtype::int64, i);
  return ir::select(x < 0, x + n, x);
}
// Kernels cannot fail, so an index that is out of range even after wrapping is clamped into
// [0, n - 1]: the read stays inside the tensor (ONNX leaves the result undefined).
inline ir::Expr wrap_clamp(const ir::Expr& i, const ir::Expr& n) {
  return ir::min(ir::max(wrap_negative(i, n), ir::Expr(int64_t(0))), n - int64_t(1));
}

// "nnvm.ops.index_range" unless every value of the constant index tensor `idx` (int32 or int64)
// lies in [-n, n), where n = extents[flat position % extents.size()] (one extent for Gather, one
// per coordinate of GatherND's last axis). A negative extent is symbolic: not checked. ONNX calls
// an index out of range an error; a kernel cannot report one, so only constants are caught.
inline void check_index_values(const NDArray& idx, const std::vector<int64_t>& extents, const char* input,
                               const std::string& what) {
  if (extents.empty() || (idx.dtype() != dtype::int32 && idx.dtype() != dtype::int64)) return;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t v = idx.dtype() == dtype::int64 ? idx.data<int64_t>()[i] : idx.data<int32_t>()[i];
    int64_t n = extents[size_t(i) % extents.size()];
    if (n >= 0 && (v < -n || v >= n))
      throw UserError("nnvm.ops.index_range",
                      str_cat(input, " holds ", v, " at flat position ", i, ", outside [", -n, ", ", n, ") for ",
                              what, " (extent ", n, ")"),
                      {str_cat("input ", input)});
  }
}

// "nnvm.ops.empty_axis" when `extent` is the constant 0 but the op reads from it (`reads`: the
// output is not empty): every index is out of range, and clamping has no element to clamp to.
inline void check_readable_axis(const ir::Expr& extent, const std::vector<ir::Expr>& out_shape, const std::string& what) {
  if (!ir::is_const_int(ir::simplify(extent), 0)) return;
  for (auto& e : out_shape)
    if (auto c = ir::simplified_const_int(e); !c || *c == 0) return;
  throw UserError("nnvm.ops.empty_axis", str_cat(what, " has extent 0, so no index into it is valid"), {"input data"});
}

// The constant extents of `t`'s axes (-1 for a symbolic one).
inline int64_t extent_or_unknown(const TensorType& t, size_t axis) {
  std::optional<int64_t> c = axis < t.shape.size() ? ir::simplified_const_int(t.shape[axis]) : std::nullopt;
  return c ? *c : -1;
}

// "nnvm.ops.input_dtype" unless `t` holds int32 or int64 (ONNX's index types).
inline void check_index_dtype(const te::Tensor& t, const char* input) {
  if (t.dtype() != dtype::int32 && t.dtype() != dtype::int64)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected int32 or int64"),
                    {"input " + std::string(input)});
}

// Axis values from a value input or attribute, normalized to [0, rank) and checked for repeats.
inline std::vector<size_t> normalize_axes(const std::vector<int64_t>& axes, size_t rank, const char* what) {
  std::vector<size_t> out;
  for (int64_t a : axes) {
    size_t n = normalize_axis(a, rank, what);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw UserError("nnvm.ops.attr", str_cat(what, " names axis ", a, " more than once"),
                      {str_cat("attribute ", what)});
    out.push_back(n);
  }
  return out;
}

// True when optional input `i` was given (left out at the end, or undefined in the middle).
inline bool given(const std::vector<te::Tensor>& in, size_t i) { return i < in.size() && in[i].defined(); }

}  // namespace transform_detail
}  // namespace ops
NNVM_END_NAMESPACE
