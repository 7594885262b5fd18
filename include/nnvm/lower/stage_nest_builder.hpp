// The loop nest of one stage, built leaf by leaf: loops over its leaf iter vars (each from 0), the
// guards a non-divisible split or a tensor edge needs (placed as far out as their axes allow),
// full-tile/tail partitions of vectorized or unrolled splits, and hooks for the stages computed
// at each loop. schedule_ops builds every stage's nest with it.
#pragma once

#include <functional>
#include <unordered_set>

#include "nnvm/lower/infer_bounds.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

using ir::Expr;
using ir::IterVar;
using ir::Stmt;

namespace detail {

using IterVarSet = std::unordered_set<const ir::IterVarNode*>;

// Which root axes each iter var of a stage derives from.
inline std::unordered_map<const ir::IterVarNode*, IterVarSet> root_sets(const schedule::Stage& st) {
  std::unordered_map<const ir::IterVarNode*, IterVarSet> roots;
  for (auto& iv : st.node().root_iter_vars) roots[iv.get()] = {iv.get()};
  for (auto& rel : st.node().relations) {
    if (auto* s = std::get_if<schedule::SplitRelation>(&rel)) {
      roots[s->outer.get()] = roots[s->inner.get()] = roots.at(s->parent.get());
    } else {
      auto& f = std::get<schedule::FuseRelation>(rel);
      IterVarSet u = roots.at(f.outer.get());
      u.insert(roots.at(f.inner.get()).begin(), roots.at(f.inner.get()).end());
      roots[f.fused.get()] = u;
    }
  }
  return roots;
}

inline bool provably_divides(const Expr& extent, const Expr& by) {
  const int64_t *e = ir::as_const_int(extent), *b = ir::as_const_int(by);
  if (e && b) return *e % *b == 0;
  return extent.same_as(by);
}

// A split that is partitioned into full tiles plus a tail instead of being guarded.
struct Partition {
  const ir::IterVarNode* outer;
  const ir::IterVarNode* inner;
  const ir::IterVarNode* root;
  Expr root_extent, factor;
};

inline Stmt guarded(const Expr& cond, Stmt s) { return cond.defined() ? ir::IfThenElse::make(cond, std::move(s)) : s; }
inline Expr conj(const Expr& a, const Expr& b) { return !a.defined() ? b : !b.defined() ? a : (a && b); }

// Builds the nest of one stage. `attach(iv, inner, ctx)` wraps the body of the loop of leaf `iv`
// with the nests of the stages computed at that loop.
class StageNestBuilder {
 public:
  // Where a nest is being built: which root axes still need guards, what a partition's tail
  // fixed (the outer loop's value, the inner loop's extent and kind), which loops are open,
  // and whether stages attached to loops go in here (not in a reduction's init nest).
  struct Ctx {
    IterVarSet guard_roots;
    std::unordered_map<const ir::IterVarNode*, Expr> fixed, extent;
    IterVarSet serial;
    IterVarSet bound;
    bool attachments = true;
    int64_t auto_unroll = 0;  // innermost enclosing auto_unroll_max_step pragma
  };
  using AttachFn = std::function<Stmt(const IterVar&, Stmt, const Ctx&)>;

  StageNestBuilder(const schedule::Stage& st, const Bounds& bounds, AttachFn attach)
      : st_(st), ranges_(bounds.ranges), edges_(bounds.edge_guards), attach_(std::move(attach)) {
    const RangeMap& ranges = bounds.ranges;
    auto roots = root_sets(st);
    for (auto& root : st.node().root_iter_vars)
      if (edges_.count(root.get())) guarded_.insert(root.get());
    for (auto& leaf : st.leaf_iter_vars())
      for (auto* r : roots.at(leaf.get())) leaves_of_root_[r].push_back(leaf.get());
    // A root axis needs a guard when some split under it may overshoot its extent.
    std::unordered_map<const ir::IterVarNode*, int> overshooting_splits;
    for (auto& rel : st.node().relations) {
      auto* s = std::get_if<schedule::SplitRelation>(&rel);
      if (!s) continue;
      const Expr& ext = ranges.at(s->parent.get()).extent;
      bool exact = s->factor.defined() ? provably_divides(ext, s->factor) : provably_divides(ext, s->nparts);
      if (exact) continue;
      for (auto* r : roots.at(s->parent.get())) {
        guarded_.insert(r);
        overshoot_.insert(r);
        ++overshooting_splits[r];
      }
    }
    // Partition the splits of a root axis whose inner loop wants vector or unrolled code.
    auto leaf_pos = [&](const IterVar& iv) {
      auto& l = st.leaf_iter_vars();
      for (size_t p = 0; p < l.size(); ++p)
        if (l[p].same_as(iv)) return long(p);
      return -1L;
    };
    for (auto& rel : st.node().relations) {
      auto* s = std::get_if<schedule::SplitRelation>(&rel);
      if (!s || !s->factor.defined() || !ir::as_const_int(s->factor)) continue;
      const ir::IterVarNode* root = s->parent.get();
      bool is_root = roots.at(root).size() == 1 && roots.at(root).count(root);
      if (!is_root || !guarded_.count(root) || overshooting_splits[root] != 1 || edges_.count(root)) continue;
      auto* a = st.attr(s->inner);
      if (!a || (a->kind != ir::ForKind::vectorized && a->kind != ir::ForKind::unrolled)) continue;
      long po = leaf_pos(s->outer), pi = leaf_pos(s->inner);
      if (po < 0 || pi < 0 || po > pi) continue;
      partitions_.push_back({s->outer.get(), s->inner.get(), root, ranges.at(root).extent, s->factor});
    }
  }

  Ctx root_ctx() const { return Ctx{guarded_, {}, {}, {}, {}, true, 0}; }

  // The extent of a leaf's loop (from the inferred bounds).
  const Expr& extent_of(const IterVar& iv) const { return ranges_.at(iv.get()).extent; }

  // Loops over `leaves` (a subsequence of the stage's leaves) around `make_body(ctx)`.
  template <class MakeBody>
  Stmt build(const std::vector<IterVar>& leaves, const Ctx& ctx, MakeBody&& make_body) {
    return build_at(leaves, 0, ctx, make_body);
  }

  // The value of every iter var (root axes included) inside the innermost loop.
  Values values(const Ctx& ctx) const {
    Values value;
    for (auto& iv : st_.leaf_iter_vars()) {
      auto f = ctx.fixed.find(iv.get());
      value[iv.get()] = f != ctx.fixed.end() ? f->second : leaf_value(iv, ranges_);
    }
    return pass_up(st_, ranges_, std::move(value));
  }

  // The conjunction of the guards of the still-guarded roots of kind `only`.
  Expr guard(const Ctx& ctx, const Values& value, ir::IterKind only) const {
    Expr g;
    for (auto& root : st_.node().root_iter_vars)
      if (ctx.guard_roots.count(root.get()) && root->kind == only) g = conj(g, root_condition(root.get(), value));
    return g;
  }

  // A root axis stays inside its range (split overshoot) and inside the tensor (edge guard).
  Expr root_condition(const ir::IterVarNode* root, const Values& value) const {
    const ir::Range& r = ranges_.at(root);
    const Expr& v = value.at(root);
    Expr c = overshoot_.count(root) ? (v < r.min + r.extent) : Expr();
    auto e = edges_.find(root);
    if (e == edges_.end()) return c;
    if (e->second.lower) c = conj(c, v >= 0);
    if (e->second.upper.defined()) c = conj(c, v < e->second.upper);
    return c;
  }

 private:
  const Partition* partition_of(const IterVar& outer) const {
    for (auto& p : partitions_)
      if (p.outer == outer.get()) return &p;
    return nullptr;
  }

  // Emits each guard as soon as every loop its axis depends on is open, so it sits outside
  // the loops it does not depend on (and, in particular, outside vectorized inner loops).
  template <class MakeBody>
  Stmt build_at(const std::vector<IterVar>& leaves, size_t pos, const Ctx& outer, MakeBody& make_body) {
    Ctx ctx = outer;
    std::vector<const ir::IterVarNode*> taken;
    for (auto& root : st_.node().root_iter_vars) {
      if (!ctx.guard_roots.count(root.get())) continue;
      auto& deps = leaves_of_root_[root.get()];
      if (std::all_of(deps.begin(), deps.end(), [&](auto* l) { return ctx.bound.count(l) || ctx.fixed.count(l); }))
        taken.push_back(root.get());
    }
    Expr ready;
    if (!taken.empty()) {
      Values value = values(ctx);
      for (auto* r : taken) {
        ready = conj(ready, root_condition(r, value));
        ctx.guard_roots.erase(r);
      }
    }
    return guarded(ready, build_loop(leaves, pos, ctx, make_body));
  }

  // The product of the constant extents of leaves[pos..], or -1 if one is not constant.
  int64_t nest_steps(const std::vector<IterVar>& leaves, size_t pos, const Ctx& ctx) const {
    int64_t steps = 1;
    for (size_t p = pos; p < leaves.size(); ++p) {
      if (ctx.fixed.count(leaves[p].get())) continue;
      auto e = ctx.extent.find(leaves[p].get());
      const int64_t* c = ir::as_const_int(e != ctx.extent.end() ? e->second : ranges_.at(leaves[p].get()).extent);
      if (!c) return -1;
      steps *= *c;
    }
    return steps;
  }

  template <class MakeBody>
  Stmt build_loop(const std::vector<IterVar>& leaves, size_t pos, Ctx& ctx, MakeBody& make_body) {
    if (pos == leaves.size()) return make_body(ctx);
    const IterVar& iv = leaves[pos];
    auto with_attachments = [&](Stmt inner, const Ctx& c) { return c.attachments ? attach_(iv, std::move(inner), c) : inner; };
    if (ctx.fixed.count(iv.get())) return with_attachments(build_at(leaves, pos + 1, ctx, make_body), ctx);
    auto* a = st_.attr(iv);
    ir::ForKind kind = a && !ctx.serial.count(iv.get()) ? a->kind : ir::ForKind::serial;
    if (kind == ir::ForKind::serial && ctx.auto_unroll > 0) {
      int64_t steps = nest_steps(leaves, pos, ctx);
      if (steps >= 0 && steps <= ctx.auto_unroll) kind = ir::ForKind::unrolled;
    }
    if (a && a->auto_unroll_max_step > 0) ctx.auto_unroll = a->auto_unroll_max_step;
    std::string tag = a ? a->thread_tag : std::string();
    const Partition* part = partition_of(iv);
    if (part && ctx.guard_roots.count(part->root)) {
      const int64_t* ext = ir::as_const_int(part->root_extent);
      int64_t f = *ir::as_const_int(part->factor);
      Expr full_tiles = ext ? Expr(*ext / f) : part->root_extent / part->factor;
      Ctx main = ctx, tail = ctx;
      main.guard_roots.erase(part->root);
      tail.guard_roots.erase(part->root);
      tail.fixed[iv.get()] = full_tiles;
      tail.extent[part->inner] = ext ? Expr(*ext % f) : part->root_extent - full_tiles * part->factor;
      tail.serial.insert(part->inner);
      main.bound.insert(iv.get());
      Stmt main_loop = ir::For::make(iv.var(), Expr(int64_t(0)), full_tiles, kind,
                                     with_attachments(build_at(leaves, pos + 1, main, make_body), main), tag);
      // The tail runs once with the outer loop's variable fixed: the attached stages see it too.
      ir::VarMap fixed{{iv.var(), full_tiles}};
      Stmt tail_body = ir::substitute(with_attachments(build_at(leaves, pos + 1, tail, make_body), tail), fixed);
      return ir::Seq::make({main_loop, tail_body});
    }
    auto ext_it = ctx.extent.find(iv.get());
    Expr extent = ext_it != ctx.extent.end() ? ext_it->second : ranges_.at(iv.get()).extent;
    ctx.bound.insert(iv.get());
    return ir::For::make(iv.var(), Expr(int64_t(0)), extent, kind,
                         with_attachments(build_at(leaves, pos + 1, ctx, make_body), ctx), tag);
  }

  const schedule::Stage& st_;
  const RangeMap& ranges_;
  const std::unordered_map<const ir::IterVarNode*, EdgeGuard>& edges_;
  AttachFn attach_;
  IterVarSet guarded_;    // roots needing any guard
  IterVarSet overshoot_;  // roots a non-divisible split may push past their range
  std::unordered_map<const ir::IterVarNode*, std::vector<const ir::IterVarNode*>> leaves_of_root_;
  std::vector<Partition> partitions_;
};

inline Expr combine(ir::Combiner c, Expr acc, Expr x) {
  switch (c) {
    case ir::Combiner::sum: return acc + x;
    case ir::Combiner::prod: return acc * x;
    case ir::Combiner::min: return ir::min(acc, x);
    case ir::Combiner::max: return ir::max(acc, x);
  }
  return acc;
}


}  // namespace detail
}  // namespace lower
NNVM_END_NAMESPACE
