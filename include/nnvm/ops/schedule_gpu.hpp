// Schedule building blocks for GPUs (the GPU family's generic recipes use them): a stage's data-
// parallel axes become one thread per output element, in blocks of the target's thread limit.
// The lowering guards the last block when the thread grid does not divide the extent.
#pragma once

#include <algorithm>
#include <optional>

#include "nnvm/ir/substitute.hpp"
#include "nnvm/schedule/schedule.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// One thread per element of the stage's output: its axes fused, split by the block size,
// bound to blockIdx.x and threadIdx.x. A reduction stage runs its whole reduction in the
// thread (gpu_schedule_reduction chooses between that and a cross-thread reduction). A stage
// without axes (a scalar) is left alone.
inline void gpu_schedule_injective(schedule::Stage st, const target::Target& target) {
  const auto& axes = st.tensor().op().axis;
  if (axes.empty()) return;
  ir::IterVar fused = axes.size() >= 2 ? st.fuse(axes) : axes.front();
  auto [block, thread] = st.split(fused, std::max(1, target.gpu.max_threads_per_block));
  st.bind(block, gpu::block_x);
  st.bind(thread, gpu::thread_x);
}

// The threads a block reduces `reduced` elements with: the power of two at or above it, at
// most 256 (and the target's limit).
inline int64_t gpu_reduction_threads(int64_t reduced, const target::Target& target) {
  int64_t threads = 1;
  while (threads < reduced && threads < std::min(256, target.gpu.max_threads_per_block)) threads *= 2;
  return threads;
}

// The threads of a block compute each output of `st` together
// (lower/cross_thread_reduction.hpp): its reduction axes fused and split by `threads`, the inner
// loop bound to threadIdx.x. Returns the loop over the outputs (its axes fused; null if none).
inline std::optional<ir::IterVar> gpu_reduce_across_threads(schedule::Stage st, int64_t threads) {
  const auto& op = st.tensor().op();
  std::vector<ir::IterVar> axes, reduce_axes;
  for (size_t d = 0; d < op.axis.size(); ++d) axes.push_back(st.axis(d));
  for (size_t d = 0; d < op.reduce_axes.size(); ++d) reduce_axes.push_back(st.reduce_axis(d));
  auto [serial, thread] = st.split(st.fuse(reduce_axes), threads);
  st.bind(thread, gpu::thread_x);
  if (axes.empty()) return std::nullopt;
  return st.fuse(axes);
}

namespace detail {
inline int64_t constant_product(const std::vector<ir::Expr>& extents) {
  int64_t p = 1;
  for (auto& e : extents) {
    const int64_t* c = ir::as_const_int(e);
    if (!c) return -1;
    p *= *c;
  }
  return p;
}
}  // namespace detail

// A reduction stage. With enough outputs to fill a GPU (8192 threads or more) each thread
// computes one output, its reduction serially (gpu_schedule_injective); with fewer, each block
// computes one output and its threads reduce together (gpu_reduce_across_threads), the
// outputs bound to blockIdx.x. A global pooling, the rows of a small softmax or a full
// reduction to a scalar thus run on many threads instead of one. Symbolic extents keep one
// thread per output.
inline void gpu_schedule_reduction(schedule::Stage st, const target::Target& target) {
  const auto& op = st.tensor().op();
  std::vector<ir::Expr> reduce_extents;
  for (auto& r : op.reduce_axes) reduce_extents.push_back(r->dom.extent);
  const int64_t outputs = detail::constant_product(st.tensor().shape()), reduced = detail::constant_product(reduce_extents);
  const bool worth_it = reduced >= 16 || (reduced >= 2 && outputs <= 64);
  if (outputs < 0 || outputs >= 8192 || reduced < 0 || !worth_it) return gpu_schedule_injective(st, target);
  if (auto rows = gpu_reduce_across_threads(st, gpu_reduction_threads(reduced, target))) st.bind(*rows, gpu::block_x);
}

// The generic recipe for one stage: gpu_schedule_reduction for a reduction, else
// gpu_schedule_injective.
inline void gpu_schedule_stage(schedule::Stage st, const target::Target& target) {
  if (st.tensor().op().reduce_axes.empty()) gpu_schedule_injective(st, target);
  else gpu_schedule_reduction(st, target);
}

// A scan (te/scan.hpp) as one kernel run by one block: the step loop is serial in it, and in
// each step the block's threads compute every body stage and then every output's row together,
// a thread per element (the data axes after the step fused and split by the block size). The
// body stages live in shared memory; a body reduction runs its reduction loop around the thread
// loop, so each thread accumulates its own elements. lower/insert_barriers.hpp puts a barrier
// between the stages and at the end of each step (the rows a step writes are read by other
// threads in the next). Returns false, scheduling nothing, when an extent is not a constant or
// the body's rows are over the target's shared memory: the scan then runs on one thread, which
// is correct but slow.
inline bool gpu_schedule_scan(schedule::Schedule& s, const te::Tensor& scan, const target::Target& target) {
  const te::OperationNode& op = scan.op();
  const int64_t threads = std::max(1, target.gpu.max_threads_per_block);
  auto row = [](const te::Tensor& t) {
    return detail::constant_product(std::vector<ir::Expr>(t.shape().begin() + 1, t.shape().end()));
  };
  int64_t shared = 0;
  for (auto& t : op.scan_body) {
    int64_t n = row(te::Tensor(t));
    if (n < 0 || t->shape.empty()) return false;
    shared += n * t->dtype.bytes();
  }
  for (size_t i = 0; i < op.scan_outputs.size(); ++i)
    if (row(te::scan_output(scan, i)) < 0) return false;
  if (shared > target.gpu.shared_memory_bytes) return false;
  // A thread per element of one step's row: axes 1.. fused, split by the block size.
  auto spread = [&](schedule::Stage st) {
    const auto& axes = st.tensor().op().axis;
    if (axes.size() < 2) return;
    std::vector<ir::IterVar> rest(axes.begin() + 1, axes.end());
    ir::IterVar fused = rest.size() >= 2 ? st.fuse(rest) : rest.front();
    int64_t n = row(st.tensor());
    auto [outer, inner] = st.split(fused, std::min(threads, std::max<int64_t>(n, 1)));
    st.bind(inner, gpu::thread_x);
    if (st.tensor().op().reduce_axes.empty()) return;
    std::vector<ir::IterVar> order{axes.front()};
    for (size_t d = 0; d < st.tensor().op().reduce_axes.size(); ++d) order.push_back(st.reduce_axis(d));
    order.push_back(outer);
    order.push_back(inner);
    st.reorder(order);
  };
  for (auto& t : op.scan_body) {
    schedule::Stage st = s[te::Tensor(t)];
    if (st.node().attach == schedule::AttachKind::inlined) continue;
    st.set_scope(ir::MemoryScope::shared);
    spread(st);
  }
  for (size_t i = 0; i < op.scan_outputs.size(); ++i) spread(s[te::scan_output(scan, i)]);
  return true;
}

// A normalization of y along the axes its `reductions` reduce (softmax, log_softmax; each
// reduction keeps y's rank with extent 1 there) in one kernel: a block per row (y's other axes
// fused), whose threads first compute the row's reductions together, each in shared memory
// (gpu_reduce_across_threads), then the row's outputs, a thread per element; `inlined` stages
// are recomputed where they are read. Returns false, scheduling nothing, when no axis is left
// for rows or the row length is not a constant.
inline bool gpu_schedule_rows(schedule::Schedule& s, const te::Tensor& y, const std::vector<te::Tensor>& reductions,
                              const std::vector<te::Tensor>& inlined, const target::Target& target) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < y.rank(); ++d)
    if (ir::is_const_int(reductions.at(0).shape()[d], 1) && !ir::is_const_int(y.shape()[d], 1)) dims.push_back(d);
  std::vector<ir::Expr> row_extents;
  for (size_t d : dims) row_extents.push_back(y.shape()[d]);
  const int64_t length = detail::constant_product(row_extents);
  if (dims.empty() || dims.size() == y.rank() || length < 0) return false;
  auto c = s[y];
  std::vector<ir::IterVar> rows, along;
  for (size_t d = 0; d < y.rank(); ++d)
    (std::find(dims.begin(), dims.end(), d) != dims.end() ? along : rows).push_back(c.axis(d));
  std::vector<ir::IterVar> order = rows;
  order.insert(order.end(), along.begin(), along.end());
  c.reorder(order);
  const int64_t threads = gpu_reduction_threads(length, target);
  ir::IterVar row = c.fuse(rows);
  auto [steps, lane] = c.split(c.fuse(along), threads);
  c.bind(row, gpu::block_x);
  c.bind(lane, gpu::thread_x);
  for (auto& t : inlined) s[t].compute_inline();
  for (auto& t : reductions) {
    auto st = s[t];
    st.set_scope(ir::MemoryScope::shared);
    st.compute_at(c, row);
    gpu_reduce_across_threads(st, threads);
  }
  return true;
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
