// Schedule building blocks for GPUs (the GPU family's generic recipes use them): a stage's data-
// parallel axes become one thread per output element, in blocks of the target's thread limit.
// The lowering guards the last block when the thread grid does not divide the extent.
#pragma once

#include <algorithm>

#include "nnvm/ir/substitute.hpp"
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

namespace detail {
// The tensors `st`'s body reads with an index that uses reduction variable `k` (a product's
// operands, not its bias).
inline std::vector<te::Tensor> read_along(const te::Tensor& t, const ir::Var& k) {
  struct Reads : ir::IRVisitor {
    const ir::Var* k = nullptr;
    std::vector<std::shared_ptr<const te::TensorNode>> found;
    using ir::IRVisitor::visit;
    void visit(const ir::ProducerLoad* op) override {
      bool uses = false;
      for (auto& i : op->indices) uses |= ir::uses_var(i, *k);
      bool seen = false;
      for (auto& f : found) seen |= f.get() == te::as_tensor(op->tensor.get());
      if (uses && !seen) found.push_back(te::as_tensor(op->tensor));
      ir::IRVisitor::visit(op);
    }
  } r;
  r.k = &k;
  r.visit_expr(t.op().body);
  std::vector<te::Tensor> out;
  for (auto& f : r.found) out.emplace_back(f);
  return out;
}
}  // namespace detail

// A 2-D matrix product Y(i, j) = sum over k (dense): blocks of 16 x 16 threads compute 64 x 64
// tiles of Y, each thread 4 x 4 of them in registers (cache_write local); per 16-wide step of
// k, the block's threads load the slices of both operands it reads into shared memory together
// (any transposition: the slice's axes are fused and spread over the threads), then read them
// from there (tutorial lesson 5). Returns false, scheduling nothing, for products too small to
// fill such blocks (an extent under 32) or a device with fewer than 256 threads per block.
inline bool gpu_schedule_matmul(schedule::Schedule& s, const te::Tensor& Y, const target::Target& target) {
  const auto& op = Y.op();
  if (Y.rank() != 2 || op.reduce_axes.size() != 1 || target.gpu.max_threads_per_block < 256) return false;
  const int64_t *M = ir::as_const_int(Y.shape()[0]), *N = ir::as_const_int(Y.shape()[1]);
  if (!M || !N || *M < 32 || *N < 32) return false;
  std::vector<te::Tensor> operands = detail::read_along(Y, op.reduce_axes[0].var());
  if (operands.size() != 2 || 2 * 64 * 16 * Y.dtype().bytes() > target.gpu.shared_memory_bytes) return false;
  te::Tensor local = s.cache_write(Y, ir::MemoryScope::local);
  std::vector<te::Tensor> tiles;
  for (auto& t : operands) tiles.push_back(s.cache_read(t, ir::MemoryScope::shared, {local}));
  auto c = s[Y];
  auto [bi, bj, ii, jj] = c.tile(c.axis(0), c.axis(1), 64, 64);
  auto [ti, ri] = c.split(ii, 4);
  auto [tj, rj] = c.split(jj, 4);
  c.reorder({bi, bj, ti, tj, ri, rj});
  c.bind(bi, gpu::block_y);
  c.bind(bj, gpu::block_x);
  c.bind(ti, gpu::thread_y);
  c.bind(tj, gpu::thread_x);
  auto cl = s[local];
  cl.compute_at(c, tj);
  auto [ko, ki] = cl.split(cl.reduce_axis(0), 16);
  cl.reorder({ko, ki, cl.axis(0), cl.axis(1)});
  cl.unroll(cl.axis(0));
  cl.unroll(cl.axis(1));
  for (auto& t : tiles) {
    auto st = s[t];
    st.compute_at(cl, ko);
    auto [rest, thread] = st.split(st.fuse({st.axis(0), st.axis(1)}), 256);
    auto [ty, tx] = st.split(thread, 16);
    st.bind(ty, gpu::thread_y);
    st.bind(tx, gpu::thread_x);
  }
  return true;
}

}  // namespace ops
NNVM_END_NAMESPACE
