// Input checks shared by op computes. Each throws UserError naming the input and the rule, so an
// op's compute states its shape rules in a few readable lines.
#pragma once

#include "nnvm/ir/compare.hpp"
#include "nnvm/ir/printer.hpp"
#include "nnvm/ir/simplify.hpp"
#include "nnvm/ops/attrs.hpp"
#include "nnvm/te/operation.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// "nnvm.ops.input_shape" unless `t` has rank in [least, most].
inline void check_rank(const te::Tensor& t, const char* input, size_t least, size_t most) {
  if (t.rank() < least || t.rank() > most)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " (tensor ", t.name(), ") has rank ", t.rank(), ", expected ",
                            least == most ? str_cat(least) : str_cat(least, " to ", most)),
                    {"input " + std::string(input)});
}
inline void check_rank(const te::Tensor& t, const char* input, size_t rank) { check_rank(t, input, rank, rank); }

// "nnvm.ops.input_dtype" unless `t` holds float32 or float64 (types with arithmetic).
inline void check_float(const te::Tensor& t, const char* input) {
  DataType d = t.dtype();
  if (!d.is_float() || d.is_storage_only() || !d.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", d, ", expected float32 or float64"),
                    {"input " + std::string(input)});
}
inline void check_same_dtype(const te::Tensor& a, const char* ia, const te::Tensor& b, const char* ib) {
  if (a.dtype() != b.dtype())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("inputs ", ia, " (", a.dtype(), ") and ", ib, " (", b.dtype(), ") must have the same dtype"),
                    {"input " + std::string(ib)});
}

using ir::same_extent;  // equal for every binding of their size variables (ir/simplify.hpp)
// "nnvm.ops.input_shape" unless extents are the same_extent; `what` says which axes.
inline void check_same_extent(const ir::Expr& a, const ir::Expr& b, const std::string& what) {
  if (!same_extent(a, b))
    throw UserError("nnvm.ops.input_shape",
                    str_cat(what, " must be equal, got ", ir::to_string(a), " and ", ir::to_string(b)));
}

// An axis attribute in [-rank, rank) as an index in [0, rank); "nnvm.ops.attr" otherwise.
inline size_t normalize_axis(int64_t axis, size_t rank, const char* attr) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    throw UserError("nnvm.ops.attr", str_cat("attribute '", attr, "' is ", axis, " but must lie in [", -r, ", ", r, ")"),
                    {"attribute " + std::string(attr)});
  return size_t(axis < 0 ? axis + r : axis);
}

}  // namespace ops
NNVM_END_NAMESPACE
