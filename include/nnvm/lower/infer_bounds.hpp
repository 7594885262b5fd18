// Bound inference: the range of every loop of every stage, and the region each realized stage
// must store.
// Requires: inlined bodies (inline_stages). Ensures: every IterVar of every non-inlined stage
// has a range; leaf loops start at the range's min. A root stage computes its whole tensor. A
// stage computed at a consumer's loop computes, per iteration of that loop, the region the
// consumer reads inside it (points outside the tensor are skipped by edge guards), and stores
// it in a buffer whose extents are constant upper bounds of that region when they can be
// proved, else the shape. A scan is a root stage whose step axis ranges over [k, T); its body
// stages, attached at that axis, get update's row t (the rows the scan's outputs store there:
// the outputs of a scan of several states share the step axis). Their reads of the states were
// turned into reads of the scan's outputs (inline_stages), which are realized whole at the root,
// so bounds propagation ends there: no region of a scan is ever derived from its own steps.
#pragma once

#include <optional>
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

inline std::vector<const ir::ProducerLoad*> reads_of(const Expr& body, const ir::ProducerNode* t) {
  struct Finder : ir::IRVisitor {
    const ir::ProducerNode* t;
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

// Every leaf loop of `stage` ranging over its whole extent (loops run from 0).
inline void relax_leaves(const schedule::Stage& stage, const RangeMap& ranges, ir::SymIntervalMap& relaxed,
                         const IterVar& after = IterVar()) {
  bool inside = !after.defined();
  for (auto& iv : stage.leaf_iter_vars()) {
    if (inside) relaxed[iv.var().get()] = {Expr(int64_t(0)), ranges.at(iv.get()).extent - 1};
    if (after.defined() && iv.same_as(after)) inside = true;
  }
}

// A shared stage is filled by all the threads of a block together, so the region it must hold
// is what every thread reads: the loops bound to threadIdx around its attach point (in the
// consumer and in the stages the consumer is itself computed in) range over their extents.
inline void relax_thread_loops(const schedule::Stage& consumer, const RangeMap& ranges, ir::SymIntervalMap& relaxed) {
  for (schedule::Stage cur = consumer;;) {
    for (auto& iv : cur.leaf_iter_vars())
      if (const auto* a = cur.attr(iv); a && a->thread_tag.rfind("threadIdx.", 0) == 0)
        relaxed[iv.var().get()] = {Expr(int64_t(0)), ranges.at(iv.get()).extent - 1};
    if (cur.node().attach != schedule::AttachKind::at) return;
    cur = schedule::Stage(cur.node().attach_stage.lock());
  }
}

inline void merge_into(std::vector<ir::SymInterval>& region, bool& first, const std::vector<ir::SymInterval>& r) {
  for (size_t d = 0; d < region.size(); ++d) {
    if (first) {
      region[d] = r[d];
    } else {
      region[d].min = region[d].min.defined() && r[d].min.defined() ? ir::min(region[d].min, r[d].min) : Expr();
      region[d].max = region[d].max.defined() && r[d].max.defined() ? ir::max(region[d].max, r[d].max) : Expr();
    }
  }
  first = false;
}

// The region of `producer` that `reader` reads while the loops in `relaxed` run over their
// ranges (the loops of one iteration of the attach point).
inline void add_region_read(std::vector<ir::SymInterval>& region, bool& first, const schedule::Stage& reader,
                            const Expr& reader_body, const ir::ProducerNode* producer, const ir::SymIntervalMap& relaxed,
                            const RangeMap& ranges, const ir::IntervalMap& known) {
  Values leaf_values;
  for (auto& iv : reader.leaf_iter_vars()) leaf_values[iv.get()] = leaf_value(iv, ranges);
  Values value = pass_up(reader, ranges, leaf_values);
  ir::VarMap root_sub;
  for (auto& iv : reader.node().root_iter_vars) root_sub[iv.var()] = value.at(iv.get());
  for (auto* load : reads_of(reader_body, producer)) {
    std::vector<ir::SymInterval> r;
    for (auto& idx : load->indices) r.push_back(ir::eval_sym_interval(ir::substitute(idx, root_sub), relaxed, known));
    merge_into(region, first, r);
  }
}

// The stages between `reader` and `consumer` when `reader` is computed, directly or through
// other attached stages, inside loop `at` of `consumer` (or at it); nullopt when it is not.
inline std::optional<std::vector<schedule::Stage>> attach_chain(const schedule::Stage& reader,
                                                                const schedule::Stage& consumer, const IterVar& at) {
  std::vector<schedule::Stage> chain;
  schedule::Stage cur = reader;
  while (cur.node().attach == schedule::AttachKind::at) {
    chain.push_back(cur);
    schedule::Stage parent(cur.node().attach_stage.lock());
    if (parent.same_as(consumer)) {
      const auto& leaves = consumer.leaf_iter_vars();
      auto pos = [&](const IterVar& iv) { return std::find_if(leaves.begin(), leaves.end(), [&](auto& l) { return l.same_as(iv); }); };
      if (pos(cur.node().attach_iv) >= pos(at)) return chain;
      return std::nullopt;
    }
    cur = parent;
  }
  return std::nullopt;
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
      // Readers: the consumer, and stages computed inside the attach loop (they run after this
      // stage's nest in each iteration). Any other reader would see a partial region.
      ir::IntervalMap known = detail::constant_ranges(b.ranges, sch);
      ir::SymIntervalMap consumer_relaxed;
      detail::relax_leaves(consumer, b.ranges, consumer_relaxed, n.attach_iv);
      if (n.scope == ir::MemoryScope::shared) detail::relax_thread_loops(consumer, b.ranges, consumer_relaxed);
      std::vector<ir::SymInterval> region(n.axis.size());
      bool first = true;
      for (auto& reader : stages) {
        if (reader.same_as(st) || reader.node().attach == schedule::AttachKind::inlined) continue;
        const Expr& body = bodies.at(&reader.node());
        if (detail::reads_of(body, st.tensor().get()).empty()) continue;
        if (reader.same_as(consumer)) {
          detail::add_region_read(region, first, reader, body, st.tensor().get(), consumer_relaxed, b.ranges, known);
          continue;
        }
        // Another output of the scan whose step loop this is stores its row t inside that loop
        // (the step variable is the same), after the stages attached there.
        if (schedule::Schedule::is_scan_follower(reader) && reader.tensor().op().scan_outputs.front() == consumer.tensor().get() &&
            n.attach_iv.same_as(consumer.leaf_iter_vars().front())) {
          ir::SymIntervalMap relaxed = consumer_relaxed;
          detail::relax_leaves(reader, b.ranges, relaxed, reader.leaf_iter_vars().front());
          detail::add_region_read(region, first, reader, body, st.tensor().get(), relaxed, b.ranges, known);
          continue;
        }
        auto chain = detail::attach_chain(reader, consumer, n.attach_iv);
        if (!chain)
          throw UserError("nnvm.schedule.compute_at_consumers",
                          str_cat("stage ", st.name(), " is computed at loop ", n.attach_iv.name(), " of ", consumer.name(),
                                  " but ", reader.name(), ", which runs outside that loop, reads it too; compute it at "
                                  "the root, or at a loop that encloses all its readers"),
                          st.ctx());
        ir::SymIntervalMap relaxed = consumer_relaxed;
        for (auto& c : *chain) detail::relax_leaves(c, b.ranges, relaxed);
        detail::add_region_read(region, first, reader, body, st.tensor().get(), relaxed, b.ranges, known);
      }
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
