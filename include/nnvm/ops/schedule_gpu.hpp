// Schedule building blocks for GPUs (the GPU family's generic recipes use them): a stage's data-
// parallel axes become one thread per output element, in blocks of the target's thread limit.
// The lowering guards the last block when the thread grid does not divide the extent.
#pragma once

#include <algorithm>

#include "nnvm/schedule/schedule.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// One thread per element of the stage's output: its axes fused, split by the block size,
// bound to blockIdx.x and threadIdx.x. A reduction stage runs its whole reduction in the
// thread (cross-thread reductions are the dedicated schedules' job). A stage without axes (a
// scalar) is left alone.
inline void gpu_schedule_injective(schedule::Stage st, const target::Target& target) {
  const auto& axes = st.tensor().op().axis;
  if (axes.empty()) return;
  ir::IterVar fused = axes.size() >= 2 ? st.fuse(axes) : axes.front();
  auto [block, thread] = st.split(fused, std::max(1, target.gpu.max_threads_per_block));
  st.bind(block, gpu::block_x);
  st.bind(thread, gpu::thread_x);
}

}  // namespace ops
NNVM_END_NAMESPACE
