// Numpy/ONNX multidirectional broadcasting, shared by the binary broadcast ops: shapes are
// aligned from the right, a missing leading axis counts as extent 1, and an extent of 1 stretches
// to the other input's extent.
#pragma once

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/elementwise/dtypes.hpp"
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
    if (ir::is_const_int(ir::simplify(eb), 1) || same_extent(ea, eb))
      out[d] = ea;
    else if (ir::is_const_int(ir::simplify(ea), 1))
      out[d] = eb;
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

// The broadcast shape of all of `ins` (named `names` in errors), folded from the left.
inline std::vector<ir::Expr> broadcast_shape_of(const std::vector<te::Tensor>& ins,
                                                const std::vector<std::string>& names) {
  std::vector<ir::Expr> shape = ins[0].shape();
  for (size_t k = 1; k < ins.size(); ++k) {
    try {
      shape = broadcast_shape(shape, ins[k].shape());
    } catch (const UserError& e) {
      std::string who = k == 1 ? str_cat("inputs ", names[0], " (tensor ", ins[0].name(), ") and ", names[1],
                                         " (tensor ", ins[1].name(), ")")
                               : str_cat("input ", names[k], " (tensor ", ins[k].name(), ") and the inputs before it");
      throw UserError(e.id(), str_cat(who, ": ", e.message()), e.context());
    }
  }
  return shape;
}

using NaryFn = std::function<ir::Expr(const std::vector<ir::Expr>&)>;

// f(elements of ins) over their broadcast shape. `f` receives the elements as stored: the
// caller converts storage floats and picks the output dtype.
inline te::Tensor broadcast_map(const std::vector<te::Tensor>& ins, const std::vector<std::string>& names,
                                const NaryFn& f, std::string name) {
  std::vector<ir::Expr> shape = broadcast_shape_of(ins, names);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> x;
        for (auto& t : ins) x.push_back(t(broadcast_indices(t, v)));
        return f(x);
      },
      std::move(name));
}

// "nnvm.ops.input_dtype" unless every input has the first one's dtype, of kind `kind`.
inline void check_same_dtypes(const std::vector<te::Tensor>& ins, const std::vector<std::string>& names,
                              DtypeKind kind) {
  check_input_kind(ins[0], names[0], kind);
  for (size_t k = 1; k < ins.size(); ++k) check_same_dtype(ins[0], names[0].c_str(), ins[k], names[k].c_str());
}

using BinaryFn = std::function<ir::Expr(const ir::Expr&, const ir::Expr&)>;

// f(A, B) over the broadcast shape. Both inputs must share a dtype of kind `kind`
// ("nnvm.ops.input_dtype"); float16/bfloat16 compute in float32 and round back.
inline te::Tensor broadcast_binary(const te::Tensor& a, const te::Tensor& b, const BinaryFn& f, DtypeKind kind,
                                   std::string name) {
  check_same_dtypes({a, b}, {"A", "B"}, kind);
  DataType t = a.dtype(), ct = arith_type(t);
  return broadcast_map(
      {a, b}, {"A", "B"},
      [&](const std::vector<ir::Expr>& x) { return ir::cast(t, f(ir::cast(ct, x[0]), ir::cast(ct, x[1]))); },
      std::move(name));
}

// The definition of a two-input broadcast op (inputs A and B, no attributes).
inline OpDef broadcast_binary_def(std::string name, std::string importer_name, std::string doc, BinaryFn f,
                                  DtypeKind kind = DtypeKind::number) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute = [op, f, kind](
                     const std::vector<te::Tensor>& in,
                     const Attrs&) { return std::vector<te::Tensor>{broadcast_binary(in[0], in[1], f, kind, op)}; },
      .doc = std::move(doc),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
