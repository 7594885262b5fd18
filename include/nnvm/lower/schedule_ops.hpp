// Loop nest construction: turns each stage into loops over its leaf iter vars around a
// ProducerStore of its body, and wraps intermediate tensors in ProducerRealize.
// Requires: bounds from infer_bounds. Ensures: a statement with ProducerStore/ProducerLoad on
// tensors (not yet on flat buffers). Non-divisible splits get guards on the original axes, so
// no point outside a tensor is ever computed; a non-divisible split whose inner loop is
// vectorized or unrolled is instead partitioned into full tiles and a serial tail, so the full
// tiles need no guard and still vectorize.
#pragma once

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

class StageNestBuilder {
 public:
  StageNestBuilder(const schedule::Stage& st, const RangeMap& ranges) : st_(st), ranges_(ranges) {
    auto roots = root_sets(st);
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
      if (!is_root || !guarded_.count(root) || overshooting_splits[root] != 1) continue;
      auto* a = st.attr(s->inner);
      if (!a || (a->kind != ir::ForKind::vectorized && a->kind != ir::ForKind::unrolled)) continue;
      long po = leaf_pos(s->outer), pi = leaf_pos(s->inner);
      if (po < 0 || pi < 0 || po > pi) continue;
      partitions_.push_back({s->outer.get(), s->inner.get(), root, ranges.at(root).extent, s->factor});
    }
  }

  // Where a nest is being built: which root axes still need guards, and what a partition's
  // tail fixed (the outer loop's value, the inner loop's extent and kind).
  struct Ctx {
    IterVarSet guard_roots;
    std::unordered_map<const ir::IterVarNode*, Expr> fixed, extent;
    IterVarSet serial;
    IterVarSet bound;  // leaves whose loops enclose the current point
  };
  using Values = std::unordered_map<const ir::IterVarNode*, Expr>;

  Ctx root_ctx() const { return Ctx{guarded_, {}, {}, {}, {}}; }

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
      value[iv.get()] = f != ctx.fixed.end() ? f->second : Expr(iv.var());
    }
    auto& rels = st_.node().relations;
    for (auto it = rels.rbegin(); it != rels.rend(); ++it) {
      if (auto* s = std::get_if<schedule::SplitRelation>(&*it)) {
        Expr factor = s->factor.defined() ? s->factor : ranges_.at(s->inner.get()).extent;
        value[s->parent.get()] =
            ranges_.at(s->parent.get()).min + value.at(s->outer.get()) * factor + value.at(s->inner.get());
      } else {
        auto& f = std::get<schedule::FuseRelation>(*it);
        const ir::Range &ro = ranges_.at(f.outer.get()), &ri = ranges_.at(f.inner.get());
        value[f.outer.get()] = ro.min + value.at(f.fused.get()) / ri.extent;
        value[f.inner.get()] = ri.min + value.at(f.fused.get()) % ri.extent;
      }
    }
    return value;
  }

  // The conjunction of `root < min + extent` over the guarded roots in `only` (undefined if none).
  Expr guard(const Ctx& ctx, const Values& value, ir::IterKind only) const {
    Expr g;
    for (auto& root : st_.node().root_iter_vars) {
      if (!ctx.guard_roots.count(root.get()) || root->kind != only) continue;
      const ir::Range& r = ranges_.at(root.get());
      Expr c = value.at(root.get()) < r.min + r.extent;
      g = g.defined() ? (g && c) : c;
    }
    return g;
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
    Expr ready;
    std::vector<const ir::IterVarNode*> taken;
    for (auto& root : st_.node().root_iter_vars) {
      if (!ctx.guard_roots.count(root.get())) continue;
      auto& deps = leaves_of_root_[root.get()];
      bool all_open = std::all_of(deps.begin(), deps.end(), [&](auto* l) { return ctx.bound.count(l) || ctx.fixed.count(l); });
      if (!all_open) continue;
      taken.push_back(root.get());
    }
    if (!taken.empty()) {
      Values value = values(ctx);
      for (auto* r : taken) {
        const ir::Range& range = ranges_.at(r);
        ready = conj(ready, value.at(r) < range.min + range.extent);
        ctx.guard_roots.erase(r);
      }
    }
    return guarded(ready, build_loop(leaves, pos, ctx, make_body));
  }

  template <class MakeBody>
  Stmt build_loop(const std::vector<IterVar>& leaves, size_t pos, Ctx& ctx, MakeBody& make_body) {
    if (pos == leaves.size()) return make_body(ctx);
    const IterVar& iv = leaves[pos];
    if (ctx.fixed.count(iv.get())) return build_at(leaves, pos + 1, ctx, make_body);
    const ir::Range& r = ranges_.at(iv.get());
    auto* a = st_.attr(iv);
    ir::ForKind kind = a && !ctx.serial.count(iv.get()) ? a->kind : ir::ForKind::serial;
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
                                     build_at(leaves, pos + 1, main, make_body), tag);
      return ir::Seq::make({main_loop, build_at(leaves, pos + 1, tail, make_body)});
    }
    auto ext_it = ctx.extent.find(iv.get());
    Expr extent = ext_it != ctx.extent.end() ? ext_it->second : r.extent;
    ctx.bound.insert(iv.get());
    return ir::For::make(iv.var(), r.min, extent, kind, build_at(leaves, pos + 1, ctx, make_body), tag);
  }

  const schedule::Stage& st_;
  const RangeMap& ranges_;
  IterVarSet guarded_;
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


// The loop nest of one stage. A reduction becomes, inside the loops that enclose its first
// reduction loop, an init nest over the remaining data-parallel loops followed by the update.
inline Stmt make_stage_nest(const schedule::Stage& st, const RangeMap& ranges) {
  using Ctx = StageNestBuilder::Ctx;
  const te::OperationNode& op = st.tensor().op();
  StageNestBuilder builder(st, ranges);
  auto substitute_axes = [&](const Expr& e, const StageNestBuilder::Values& value) {
    ir::VarMap m;
    for (auto& iv : st.node().root_iter_vars) m[iv.var()] = value.at(iv.get());
    return ir::substitute(e, m);
  };
  auto out_indices = [&](const StageNestBuilder::Values& value) {
    std::vector<Expr> idx;
    for (auto& iv : op.axis) idx.push_back(value.at(iv.get()));
    return idx;
  };
  const auto& tensor = st.tensor().node_ptr();
  const auto& leaves = st.leaf_iter_vars();
  const ir::Reduce* red = op.body.as<ir::Reduce>();
  if (!red) {
    return builder.build(leaves, builder.root_ctx(), [&](const Ctx& ctx) {
      auto value = builder.values(ctx);
      Stmt store = ir::make_stmt<ir::ProducerStore>(tensor, substitute_axes(op.body, value), out_indices(value));
      return guarded(builder.guard(ctx, value, ir::IterKind::data_par), store);
    });
  }
  auto is_reduce = [](const IterVar& iv) { return iv->kind == ir::IterKind::reduce; };
  auto first = std::find_if(leaves.begin(), leaves.end(), is_reduce);
  std::vector<IterVar> prefix(leaves.begin(), first), rest(first, leaves.end()), init_leaves;
  std::copy_if(rest.begin(), rest.end(), std::back_inserter(init_leaves), [&](auto& iv) { return !is_reduce(iv); });
  return builder.build(prefix, builder.root_ctx(), [&](const Ctx& outer) {
    Stmt init = builder.build(init_leaves, outer, [&](const Ctx& ctx) {
      auto value = builder.values(ctx);
      Stmt s = ir::make_stmt<ir::ProducerStore>(tensor, substitute_axes(red->init, value), out_indices(value));
      return guarded(builder.guard(ctx, value, ir::IterKind::data_par), s);
    });
    Stmt update = builder.build(rest, outer, [&](const Ctx& ctx) {
      auto value = builder.values(ctx);
      auto idx = out_indices(value);
      Expr acc = ir::make_expr<ir::ProducerLoad>(red->dtype, tensor, idx);
      Stmt s = ir::make_stmt<ir::ProducerStore>(tensor, combine(red->combiner, acc, substitute_axes(red->source, value)), idx);
      Expr cond = conj(builder.guard(ctx, value, ir::IterKind::data_par), builder.guard(ctx, value, ir::IterKind::reduce));
      if (red->condition.defined()) cond = conj(cond, substitute_axes(red->condition, value));
      return guarded(cond, s);
    });
    return ir::Seq::make({init, update});
  });
}

}  // namespace detail

// Requires: every tensor in `args` is a placeholder or a stage of `sch`.
// Ensures: one nest per stage in producer order; intermediates (stages not in args) realized
// around the whole sequence.
inline Stmt schedule_ops(const schedule::Schedule& sch, const RangeMap& ranges,
                         const std::vector<te::Tensor>& args) {
  std::vector<Stmt> nests;
  for (auto& st : sch.stages()) nests.push_back(detail::make_stage_nest(st, ranges));
  Stmt body = ir::Seq::make(nests);
  auto is_arg = [&](const te::Tensor& t) {
    return std::any_of(args.begin(), args.end(), [&](const te::Tensor& a) { return a.same_as(t); });
  };
  const auto& stages = sch.stages();
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    if (is_arg(it->tensor())) continue;
    std::vector<ir::Range> bounds;
    for (auto& e : it->tensor().shape()) bounds.push_back({Expr(int64_t(0)), e});
    body = ir::make_stmt<ir::ProducerRealize>(it->tensor().node_ptr(), std::move(bounds), ir::MemoryScope::global, body);
  }
  return body;
}

}  // namespace lower
NNVM_END_NAMESPACE
