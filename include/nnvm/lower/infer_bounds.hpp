// Bound inference: the range of every loop of every stage.
// Requires: a Schedule whose stages are all computed at the root (Core I).
// Ensures: every IterVar of every stage (root, split, fused) has a range; leaf loops start at
// the range's min. Root ranges are the op's declared ranges: a root stage computes its whole
// tensor.
#pragma once

#include <unordered_map>

#include "nnvm/schedule/schedule.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

using ir::Expr;
using RangeMap = std::unordered_map<const ir::IterVarNode*, ir::Range>;

inline void infer_stage_bounds(const schedule::Stage& stage, RangeMap& ranges) {
  for (auto& iv : stage.node().root_iter_vars) ranges[iv.get()] = iv->dom;
  for (auto& rel : stage.node().relations) {
    if (auto* s = std::get_if<schedule::SplitRelation>(&rel)) {
      const ir::Range& parent = ranges.at(s->parent.get());
      if (s->factor.defined()) {
        ranges[s->outer.get()] = {Expr(int64_t(0)), schedule::ceil_div(parent.extent, s->factor)};
        ranges[s->inner.get()] = {Expr(int64_t(0)), s->factor};
      } else {
        ranges[s->outer.get()] = {Expr(int64_t(0)), s->nparts};
        ranges[s->inner.get()] = {Expr(int64_t(0)), schedule::ceil_div(parent.extent, s->nparts)};
      }
    } else {
      auto& f = std::get<schedule::FuseRelation>(rel);
      ranges[f.fused.get()] = {Expr(int64_t(0)), schedule::mul_const(ranges.at(f.outer.get()).extent,
                                                                     ranges.at(f.inner.get()).extent)};
    }
  }
}

inline RangeMap infer_bounds(const schedule::Schedule& sch) {
  RangeMap ranges;
  for (auto& stage : sch.stages()) infer_stage_bounds(stage, ranges);
  return ranges;
}

}  // namespace lower
NNVM_END_NAMESPACE
