// How a stage's loops derive from its tensor's axes: each split or fuse adds a relation.
// Relations are replayed downward to get loop extents and upward to express every original
// axis as a function of the loop variables.
#pragma once

#include <variant>

#include "nnvm/ir/op.hpp"

NNVM_BEGIN_NAMESPACE
namespace schedule {

using ir::Expr;
using ir::IterVar;

// parent = parent.min + outer * factor + inner; exactly one of factor / nparts is given.
struct SplitRelation {
  IterVar parent, outer, inner;
  Expr factor, nparts;
};
// fused = outer_offset * extent(inner) + inner_offset.
struct FuseRelation {
  IterVar outer, inner, fused;
};
using Relation = std::variant<SplitRelation, FuseRelation>;

inline Expr ceil_div(const Expr& a, const Expr& b) {
  const int64_t *ca = ir::as_const_int(a), *cb = ir::as_const_int(b);
  if (ca && cb) return Expr((*ca + *cb - 1) / *cb);
  return (a + (b - 1)) / b;
}
inline Expr mul_const(const Expr& a, const Expr& b) {
  const int64_t *ca = ir::as_const_int(a), *cb = ir::as_const_int(b);
  if (ca && cb) return Expr(*ca * *cb);
  return a * b;
}

}  // namespace schedule
NNVM_END_NAMESPACE
