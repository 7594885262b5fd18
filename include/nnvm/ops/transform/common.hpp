// Helpers the layout and indexing ops share: constant extents, value inputs read as integer
// lists, row-major index arithmetic, index wrapping and clamping, and the default schedule of an
// op whose outputs are all injective.
#pragma once

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
  if (auto* c = ir::as_const_int(ir::simplify(e))) return *c;
  throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent, got ", ir::to_string(e)));
}

// "nnvm.ops.input_shape" unless `extent` (of output axis `axis`) is non-negative; an empty axis
// (extent 0) is a valid result, as in ONNX.
inline void check_output_extent(int64_t extent, size_t axis, const std::string& why) {
  if (extent < 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("output axis ", axis, " would have extent ", extent, " (", why, ")"));
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

// The default schedule of an op whose every output is one injective stage.
inline ScheduleFn injective_schedule(std::string op) {
  return [op](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
    require_cpu(t, op);
    for (auto& o : out) schedule_injective(s[o], t);
  };
}

}  // namespace transform_detail
}  // namespace ops
NNVM_END_NAMESPACE
