// Schedule building blocks that CPU schedules share (TOPI's schedule_injective and friends), also
// the CPU family's generic recipes (schedule_generic.hpp): each takes one stage and the target,
// and only uses split, fuse, vectorize and parallel, so every result is correct for any extent,
// constant or symbolic. Parallel loops only where the target has a thread pool (not on WASM).
#pragma once

#include "nnvm/schedule/schedule.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// Waking the thread pool costs more than a few thousand multiply-adds of work.
inline bool worth_parallel(const schedule::Stage& st) {
  int64_t work = 1;
  for (auto& iv : st.node().root_iter_vars) {
    auto* c = ir::as_const_int(iv->dom.extent);
    if (!c) return true;  // symbolic: may be large
    work *= *c;
  }
  return work >= (int64_t(1) << 14);
}
}  // namespace detail

// Data-parallel stage: the innermost axis is split by the SIMD width and vectorized (the
// lowering peels the remainder into a scalar tail, so odd extents stay vectorized); the other
// axes are fused into one parallel loop. Splitting a fused axis instead would leave div/mod in
// every index and defeat vectorization.
inline void schedule_injective(schedule::Stage st, const target::Target& target) {
  const auto& axes = st.tensor().op().axis;
  if (axes.empty()) return;
  ir::IterVar par = axes.size() >= 2 ? st.fuse(std::vector<ir::IterVar>(axes.begin(), axes.end() - 1)) : ir::IterVar();
  int lanes = target.vector_lanes(st.tensor().dtype());
  if (lanes > 1) {
    auto [outer, inner] = st.split(axes.back(), lanes);
    st.vectorize(inner);
    if (!par.defined()) par = outer;
  } else if (!par.defined()) {
    par = axes.back();
  }
  if (target.has_thread_pool() && detail::worth_parallel(st)) st.parallel(par);
}

// Reduction stage: its data-parallel axes fused into one parallel loop; each iteration runs the
// whole reduction serially (no vectorization: the reduce axis must stay innermost).
inline void schedule_reduction(schedule::Stage st, const target::Target& target) {
  const auto& axes = st.tensor().op().axis;
  if (axes.empty() || !target.has_thread_pool()) return;
  ir::IterVar par = st.fuse(axes);
  if (detail::worth_parallel(st)) st.parallel(par);
}

}  // namespace ops
NNVM_END_NAMESPACE
