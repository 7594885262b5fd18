// Cross-thread reduction (GPU family): a reduction stage with one of its reduction loops bound
// to threadIdx (Stage::bind) has the threads of a block reduce together, TVM's allreduce:
//
//   for each output the block computes (its loops bound to blockIdx, serial, or threadIdx.y/z):
//     shared red[threads]
//     threadIdx.x = t:   acc = identity; for the other reduction loops: acc = combine(acc, source)
//                        red[t] = acc                        (acc in a register)
//     -- barrier --
//     threadIdx.x = t < s:  red[t] = combine(red[t], red[t + s])   for s = p, p/2, ..., 1
//     -- barrier after each step --
//     threadIdx.x = 0:   out = combine(init, red[0])     (init: the reduction's start value)
//
// where p is the largest power of two below the thread count (the first step folds the threads
// past p, so any count works). Every phase is a loop bound to the thread axis and each reads
// only what earlier phases wrote, so the barriers insert_barriers places between them are all
// the synchronization needed, and the phases also give the right result run one thread after
// another. The stage's data-parallel loops must all enclose its reduction loops; loops of them
// bound to other thread axes (threadIdx.y, one output per row of threads) get rows of `red`.
#pragma once

#include "nnvm/ir/compare.hpp"
#include "nnvm/lower/stage_nest_builder.hpp"
#include "nnvm/te/operation.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {
namespace detail {

inline bool is_thread_tag(const std::string& tag) { return tag.rfind("threadIdx.", 0) == 0; }

// The reduction leaf of `st` bound to a thread axis, or null.
inline const ir::IterVar* thread_bound_reduce_leaf(const schedule::Stage& st) {
  for (auto& iv : st.leaf_iter_vars())
    if (auto* a = st.attr(iv); iv->kind == ir::IterKind::reduce && a && is_thread_tag(a->thread_tag)) return &iv;
  return nullptr;
}

// The nest of reduction `red` of stage `st` inside its data-parallel loops (`outer` is the
// context there) when `tid`, one of the reduction leaves `rest`, is bound to a thread axis.
// `substitute_axes(e, values)` and `out_indices(values)` are the caller's.
template <class SubstituteAxes, class OutIndices>
Stmt cross_thread_reduction(const schedule::Stage& st, StageNestBuilder& builder, const StageNestBuilder::Ctx& outer,
                            const ir::Reduce& red, const std::vector<IterVar>& prefix, const std::vector<IterVar>& rest,
                            const IterVar& tid, SubstituteAxes&& substitute_axes, OutIndices&& out_indices) {
  using Ctx = StageNestBuilder::Ctx;
  const std::string& tag = st.attr(tid)->thread_tag;
  for (auto& iv : rest)
    if (iv->kind != ir::IterKind::reduce)
      throw UserError("nnvm.schedule.cross_thread_order",
                      str_cat("stage ", st.name(), " reduces across threads (", tid.name(), " is bound to ", tag,
                              "), so its data-parallel loops must all come before its reduction loops; reorder ",
                              iv.name(), " outward"),
                      st.ctx());
  const int64_t* threads = ir::as_const_int(builder.extent_of(tid));
  if (!threads)
    throw UserError("nnvm.codegen.launch_extent",
                    str_cat("reduction loop ", tid.name(), " of stage ", st.name(), " is bound to ", tag,
                            " and needs a constant extent; split it by a constant"),
                    st.ctx());
  // One row of partial results per output the block computes at once (its other thread axes).
  std::vector<Expr> row, shape;
  std::vector<ir::Range> region;
  for (auto& iv : prefix)
    if (auto* a = st.attr(iv); a && is_thread_tag(a->thread_tag)) {
      row.push_back(iv.var());
      shape.push_back(builder.extent_of(iv));
      region.push_back({Expr(int64_t(0)), builder.extent_of(iv)});
    }
  shape.push_back(Expr(*threads));
  region.push_back({Expr(int64_t(0)), Expr(*threads)});
  te::Tensor partial = te::placeholder(shape, red.dtype, st.name() + "_red");
  te::Tensor acc = te::placeholder({Expr(int64_t(1))}, red.dtype, st.name() + "_acc");
  auto at = [&](const Expr& t) {
    std::vector<Expr> idx = row;
    idx.push_back(t);
    return idx;
  };
  auto load = [&](const te::Tensor& t, std::vector<Expr> idx) {
    return ir::make_expr<ir::ProducerLoad>(red.dtype, t.node_ptr(), std::move(idx));
  };
  auto store = [](const te::Tensor& t, Expr v, std::vector<Expr> idx) {
    return ir::make_stmt<ir::ProducerStore>(t.node_ptr(), std::move(v), std::move(idx));
  };
  const Expr acc0 = load(acc, {Expr(int64_t(0))});
  const Values outer_values = builder.values(outer);
  // Threads start from the combiner's identity; the reduction's own start (a convolution's
  // bias, say) joins once, at the end.
  const Expr identity = ir::combiner_identity(red.combiner, red.dtype);
  const Expr init = substitute_axes(red.init, outer_values);

  // Each thread reduces its share into a register, then into its slot of `partial`.
  std::vector<IterVar> others;
  for (auto& iv : rest)
    if (!iv.same_as(tid)) others.push_back(iv);
  Stmt own = builder.build({tid}, outer, [&](const Ctx& in_thread) {
    Stmt update = builder.build(others, in_thread, [&](const Ctx& ctx) {
      Values value = builder.values(ctx);
      Expr cond = conj(builder.guard(ctx, value, ir::IterKind::data_par), builder.guard(ctx, value, ir::IterKind::reduce));
      if (red.condition.defined()) cond = conj(cond, substitute_axes(red.condition, value));
      return guarded(cond, store(acc, combine(red.combiner, acc0, substitute_axes(red.source, value)), {Expr(int64_t(0))}));
    });
    Stmt body = ir::Seq::make({store(acc, identity, {Expr(int64_t(0))}), update,
                               store(partial, acc0, at(tid.var()))});
    return ir::make_stmt<ir::ProducerRealize>(acc.node_ptr(), std::vector<ir::Range>{{Expr(int64_t(0)), Expr(int64_t(1))}},
                                              ir::MemoryScope::local, body);
  });

  // A tree over the slots: each step folds the upper part onto the lower one.
  std::vector<Stmt> phases{own};
  int64_t live = *threads;
  while (live > 1) {
    int64_t step = 1;
    while (step * 2 < live) step *= 2;
    ir::Var t(str_cat(tid.name(), "_", step));
    Stmt fold = store(partial, combine(red.combiner, load(partial, at(t)), load(partial, at(t + Expr(step)))), at(t));
    phases.push_back(ir::For::make(t, Expr(int64_t(0)), Expr(live - step), ir::ForKind::thread_binding, fold, tag));
    live = step;
  }
  ir::Var first(tid.name() + "_0");
  Expr total = load(partial, at(Expr(int64_t(0))));
  if (!ir::deep_equal(init, identity)) total = combine(red.combiner, init, total);
  Stmt result = store(st.tensor(), total, out_indices(outer_values));
  phases.push_back(ir::For::make(first, Expr(int64_t(0)), Expr(int64_t(1)), ir::ForKind::thread_binding, result, tag));
  return ir::make_stmt<ir::ProducerRealize>(partial.node_ptr(), region, ir::MemoryScope::shared, ir::Seq::make(phases));
}

}  // namespace detail
}  // namespace lower
NNVM_END_NAMESPACE
