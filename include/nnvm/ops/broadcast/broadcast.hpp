// Numpy/ONNX multidirectional broadcasting, shared by the binary broadcast ops: shapes are
// aligned from the right, a missing leading axis counts as extent 1, and an extent of 1 stretches
// to the other input's extent.
#pragma once

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
inline std::string shape_string(const std::vector<ir::Expr>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + ir::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}
}  // namespace detail

// The broadcast result shape. Symbolic extents combine only with 1 or with an extent shown equal
// (same_extent): a size variable against 5 could be either, so it is refused rather than guessed.
// Throws UserError "nnvm.ops.broadcast" naming both shapes and the (output, right-aligned) axis.
inline std::vector<ir::Expr> broadcast_shape(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<ir::Expr> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    size_t from_right = rank - d;
    ir::Expr ea = from_right <= a.size() ? a[a.size() - from_right] : ir::Expr(int64_t(1));
    ir::Expr eb = from_right <= b.size() ? b[b.size() - from_right] : ir::Expr(int64_t(1));
    if (ir::is_const_int(ir::simplify(eb), 1) || same_extent(ea, eb)) out[d] = ea;
    else if (ir::is_const_int(ir::simplify(ea), 1)) out[d] = eb;
    else
      throw UserError("nnvm.ops.broadcast",
                      str_cat("cannot broadcast shapes ", detail::shape_string(a), " and ", detail::shape_string(b),
                              ": axis ", d, " of the result has extents ", ir::to_string(ea), " and ",
                              ir::to_string(eb), " (each must be 1 or equal to the other)"));
  }
  return out;
}

// The indices that read `t` at output position `v` of a broadcast of rank v.size(): t's axes
// align with the last ones, and an extent-1 axis always reads index 0.
inline std::vector<ir::Expr> broadcast_indices(const te::Tensor& t, const std::vector<ir::Var>& v) {
  std::vector<ir::Expr> idx;
  size_t skip = v.size() - t.rank();
  for (size_t d = 0; d < t.rank(); ++d)
    idx.push_back(ir::is_const_int(ir::simplify(t.shape()[d]), 1) ? ir::Expr(int64_t(0)) : ir::Expr(v[skip + d]));
  return idx;
}

using BinaryFn = std::function<ir::Expr(const ir::Expr&, const ir::Expr&)>;

// f(A, B) over the broadcast shape. Both inputs must share a dtype ("nnvm.ops.input_dtype");
// `float_only` ops also reject integers; float16/bfloat16 compute in float32 and round back.
inline te::Tensor broadcast_binary(const te::Tensor& a, const te::Tensor& b, const BinaryFn& f, bool float_only,
                                   std::string name) {
  DataType t = a.dtype();
  if (t.is_bool() || t.is_handle() || !t.is_scalar() || (float_only && !t.is_float()))
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input A (tensor ", a.name(), ") is ", t, ", expected ", float_only ? "a float" : "a number"),
                    {"input A"});
  check_same_dtype(a, "A", b, "B");
  std::vector<ir::Expr> shape;
  try {
    shape = broadcast_shape(a.shape(), b.shape());
  } catch (const UserError& e) {
    throw UserError(e.id(), str_cat("inputs A (tensor ", a.name(), ") and B (tensor ", b.name(), "): ", e.message()),
                    e.context());
  }
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr x = a(broadcast_indices(a, v)), y = b(broadcast_indices(b, v));
        if (!t.is_storage_only()) return f(x, y);
        return ir::cast(t, f(ir::cast(dtype::float32, x), ir::cast(dtype::float32, y)));
      },
      std::move(name));
}

// The definition of a two-input broadcast op with the injective default schedule.
inline OpDef broadcast_binary_def(std::string name, std::string importer_name, std::string doc, BinaryFn f,
                                  bool float_only = false) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute =
          [op, f, float_only](const std::vector<te::Tensor>& in, const Attrs&) {
            return std::vector<te::Tensor>{broadcast_binary(in[0], in[1], f, float_only, op)};
          },
      .default_schedule =
          [op](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            require_cpu(t, op);
            schedule_injective(s[out[0]], t);
          },
      .doc = std::move(doc),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
