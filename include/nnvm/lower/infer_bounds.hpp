// Bound inference: the range of every loop of every stage, and the region each realized stage
// must store.
// Requires: inlined bodies (inline_stages). Ensures: every IterVar of every non-inlined stage
// has a range; leaf loops start at the range's min. A root stage computes its whole tensor. A
// stage computed at a consumer's loop computes, per iteration of that loop, the region the
// consumer reads inside it (points outside the tensor are skipped by edge guards), and stores
// it in a buffer whose extents are constant upper bounds of that region when they can be
// proved, else the shape.
#pragma once

#include <unordered_map>

#include "nnvm/ir/interval.hpp"
#include "nnvm/lower/inline_stages.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

using ir::Expr;
using ir::IterVar;
using RangeMap = std::unordered_map<const ir::IterVarNode*, ir::Range>;
using Values = std::unordered_map<const ir::IterVarNode*, Expr>;

// Where a computed region may cross the tensor's edge (a consumer's tile overshooting it), the
// producer's loops keep their tile-sized, often constant, extents and guard each point instead.
struct EdgeGuard {
  bool lower = false;  // guard root >= 0
  Expr upper;          // guard root < upper (undefined: no guard)
};

struct Bounds {
  RangeMap ranges;
  std::unordered_map<const ir::IterVarNode*, EdgeGuard> edge_guards;
  // Realized region of each stage: its mins (the storage origin) and storage extents.
  std::unordered_map<const schedule::StageNode*, std::vector<ir::Range>> realize;
};

// Ranges of a stage's split/fused loops from the ranges of its root axes.
inline void pass_down(const schedule::Stage& stage, RangeMap& ranges) {
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

// Loops run from 0: the value of a leaf is its range's min plus its loop variable.
inline Expr leaf_value(const IterVar& iv, const RangeMap& ranges) {
  const Expr& mn = ranges.at(iv.get()).min;
  return ir::is_const_int(mn, 0) ? Expr(iv.var()) : mn + iv.var();
}

// The value of every iter var of a stage (root axes included) given its leaves' values.
inline Values pass_up(const schedule::Stage& stage, const RangeMap& ranges, Values value) {
  auto& rels = stage.node().relations;
  for (auto it = rels.rbegin(); it != rels.rend(); ++it) {
    if (auto* s = std::get_if<schedule::SplitRelation>(&*it)) {
      Expr factor = s->factor.defined() ? s->factor : ranges.at(s->inner.get()).extent;
      value[s->parent.get()] = ranges.at(s->parent.get()).min + value.at(s->outer.get()) * factor + value.at(s->inner.get());
    } else {
      auto& f = std::get<schedule::FuseRelation>(*it);
      const ir::Range &ro = ranges.at(f.outer.get()), &ri = ranges.at(f.inner.get());
      value[f.outer.get()] = ro.min + value.at(f.fused.get()) / ri.extent;
      value[f.inner.get()] = ri.min + value.at(f.fused.get()) % ri.extent;
    }
  }
  return value;
}

namespace detail {

inline std::vector<const ir::ProducerLoad*> reads_of(const Expr& body, const te::TensorNode* t) {
  struct Finder : ir::IRVisitor {
    const te::TensorNode* t;
    std::vector<const ir::ProducerLoad*> out;
    void visit(const ir::ProducerLoad* op) override {
      if (op->tensor.get() == t) out.push_back(op);
      ir::IRVisitor::visit(op);
    }
  } f;
  f.t = t;
  f.visit_expr(body);
  return f.out;
}

// Constant ranges of every loop known so far, for simplification and constant upper bounds.
inline ir::IntervalMap constant_ranges(const RangeMap& ranges, const schedule::Schedule& sch) {
  ir::IntervalMap out;
  for (auto& st : sch.stages())
    for (auto& iv : st.node().all_iter_vars) {
      auto it = ranges.find(iv.get());
      if (it == ranges.end()) continue;
      const int64_t* ex = ir::as_const_int(it->second.extent);
      if (ex) out[iv.var().get()] = ir::Interval{0, *ex - 1};
    }
  return out;
}

// The region of `producer` that one iteration of `consumer`'s loop `at` reads.
inline std::vector<ir::SymInterval> region_read(const schedule::Stage& consumer, const IterVar& at,
                                                const te::TensorNode* producer, const Expr& consumer_body,
                                                const RangeMap& ranges, const ir::IntervalMap& known) {
  const auto& leaves = consumer.leaf_iter_vars();
  ir::SymIntervalMap relaxed;
  Values leaf_values;
  bool inside = false;
  for (auto& iv : leaves) {
    leaf_values[iv.get()] = leaf_value(iv, ranges);
    if (inside) relaxed[iv.var().get()] = {Expr(int64_t(0)), ranges.at(iv.get()).extent - 1};
    if (iv.same_as(at)) inside = true;
  }
  Values value = pass_up(consumer, ranges, leaf_values);
  ir::VarMap root_sub;
  for (auto& iv : consumer.node().root_iter_vars) root_sub[iv.var()] = value.at(iv.get());
  std::vector<ir::SymInterval> region(producer->shape.size());
  bool first = true;
  for (auto* load : reads_of(consumer_body, producer)) {
    for (size_t d = 0; d < region.size(); ++d) {
      ir::SymInterval r = ir::eval_sym_interval(ir::substitute(load->indices[d], root_sub), relaxed, known);
      if (first) {
        region[d] = r;
      } else {
        region[d].min = region[d].min.defined() && r.min.defined() ? ir::min(region[d].min, r.min) : Expr();
        region[d].max = region[d].max.defined() && r.max.defined() ? ir::max(region[d].max, r.max) : Expr();
      }
    }
    first = false;
  }
  return region;
}

}  // namespace detail

inline Bounds infer_bounds(const schedule::Schedule& sch, const BodyMap& bodies) {
  Bounds b;
  const auto& stages = sch.stages();
  // Consumers come after their producers: walk backwards so a consumer's loops are known
  // before the region of a producer attached to them is derived.
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    const schedule::Stage& st = *it;
    const schedule::StageNode& n = st.node();
    if (n.attach == schedule::AttachKind::inlined) continue;
    const auto& shape = st.tensor().shape();
    std::vector<ir::Range> realize;
    for (auto& e : shape) realize.push_back({Expr(int64_t(0)), e});
    for (auto& iv : n.root_iter_vars) b.ranges[iv.get()] = iv->dom;
    if (n.attach == schedule::AttachKind::at) {
      schedule::Stage consumer(n.attach_stage.lock());
      if (consumer.node().attach == schedule::AttachKind::inlined)
        throw UserError("nnvm.schedule.compute_at_inlined",
                        str_cat("stage ", st.name(), " is computed at a loop of ", consumer.name(), ", which is inlined"), st.ctx());
      for (auto& other : stages) {
        if (other.same_as(consumer) || other.node().attach == schedule::AttachKind::inlined) continue;
        if (!detail::reads_of(bodies.at(&other.node()), st.tensor().get()).empty())
          throw UserError("nnvm.schedule.compute_at_consumers",
                          str_cat("stage ", st.name(), " is computed at a loop of ", consumer.name(), " but ", other.name(),
                                  " reads it too; compute it at the root, or at a loop of its only reader"),
                          st.ctx());
      }
      ir::IntervalMap known = detail::constant_ranges(b.ranges, sch);
      auto region = detail::region_read(consumer, n.attach_iv, st.tensor().get(), bodies.at(&consumer.node()), b.ranges, known);
      for (size_t d = 0; d < n.axis.size(); ++d) {
        Expr lo = region[d].min, hi = region[d].max;
        if (!lo.defined() || !hi.defined()) continue;  // unbounded: compute the whole axis
        lo = ir::simplify(lo, known);
        hi = ir::simplify(hi, known);
        Expr extent = ir::simplify(hi - lo + 1, known);
        b.ranges[n.axis[d].get()] = {lo, extent};
        EdgeGuard g;
        g.lower = !ir::can_prove(lo >= 0, known);
        if (!ir::can_prove(hi < shape[d], known)) g.upper = shape[d];
        if (g.lower || g.upper.defined()) b.edge_guards[n.axis[d].get()] = g;
        ir::Interval bound = ir::const_bound(extent, known);
        const int64_t* full = ir::as_const_int(shape[d]);
        Expr storage = bound.max && (!full || *bound.max < *full) ? Expr(std::max<int64_t>(*bound.max, 1)) : shape[d];
        realize[d] = {lo, storage};
      }
    }
    b.realize[&n] = realize;
    pass_down(st, b.ranges);
  }
  return b;
}

}  // namespace lower
NNVM_END_NAMESPACE
