// What the pools share: the pooling window of X (N, C, D1, ...) and the reduction over its taps
// that lie inside X. Taps in the padding are skipped by a guard on the reduction (no padded copy),
// so max pooling never sees a padding value and the sum pools add nothing for it.
#pragma once

#include "nnvm/ops/conv/nchwc_schedule.hpp"
#include "nnvm/ops/conv/window.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The window of a pool with attributes `p` over X; kernel_shape is required.
inline Window pool_window(const te::Tensor& X, const WindowParams& p) {
  check_rank(X, "X", 3, 5);
  std::vector<int64_t> in = spatial_extents(X, "X");
  if (p.kernel_shape.empty())
    detail::bad_window_attr("kernel_shape", "attribute 'kernel_shape' is required and must not be empty");
  return resolve_window(p, in, spatial_ints(p.kernel_shape, "kernel_shape", in.size(), 1, 1));
}

// The window of a global pool: one output per channel, covering all of X's spatial extents.
inline Window global_window(const te::Tensor& X) {
  check_rank(X, "X", 3, 5);
  std::vector<int64_t> in = spatial_extents(X, "X");
  WindowParams p;
  return resolve_window(p, in, in);
}

// "nnvm.ops.input_dtype" unless X holds float32 or float64, or (when `ints`) an 8..64-bit integer.
inline void check_pool_dtype(const te::Tensor& X, bool ints) {
  DataType t = X.dtype();
  if (ints && t.is_scalar() && !t.is_bool() && !t.is_handle() && !t.is_float()) return;
  check_float(X, "X");
}

// Y[n, c, o...] = `combiner` over the window taps inside X of value(X[n, c, tap...]), starting
// from the combiner's identity.
inline te::Tensor window_reduce(const te::Tensor& X, const Window& w, ir::Combiner combiner,
                                const std::function<ir::Expr(ir::Expr)>& value, const std::string& name) {
  size_t n = w.rank();
  std::vector<ir::IterVar> taps;
  for (size_t d = 0; d < n; ++d) taps.push_back(te::reduce_axis(ir::Expr(w.kernel[d]), str_cat("rk", d)));
  std::vector<ir::Expr> shape{X.shape()[0], X.shape()[1]};
  for (int64_t o : w.out) shape.emplace_back(o);
  std::vector<int64_t> lo(n, 0);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> o(v.begin() + 2, v.end()), k, idx{v[0], v[1]};
        for (auto& t : taps) k.push_back(t.var());
        for (size_t d = 0; d < n; ++d) idx.push_back(w.tap(d, o[d], k[d]));
        ir::Expr source = value(X(idx));
        // Only taps inside X update the result: the guarded read never leaves X.
        return ir::Reduce::make(combiner, source, taps, ir::Expr(), window_guard(w, o, k, lo, w.in));
      },
      name);
}

// A pool in the blocked layout NCHW[x]c, as the layout pass makes it: a 3-D window over
// (H, W, channel block) that is one element wide along the block.
inline bool is_blocked_pool(const te::Tensor& R) {
  const auto& taps = R.op().reduce_axes;
  if (R.rank() != 5 || taps.size() != 3) return false;
  auto block_taps = ir::simplified_const_int(taps.back()->dom.extent);
  return block_taps && *block_taps == 1;
}

// A pool made by window_reduce, possibly followed by one elementwise stage reading only it
// (average's division, lp's root): the reduction runs its outputs in parallel, the last stage
// is vectorized. A blocked pool gets the blocked conv's schedule instead: a tile of output
// columns in registers, vectorized over the channel block.
inline void schedule_pool(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  te::Tensor R = Y.op().reduce_axes.empty() ? te::Tensor(Y.op().inputs.at(0)) : Y;
  if (is_blocked_pool(R) && detail::schedule_nchwc(s, R, Y, target, /*channelwise=*/true)) return;
  if (!Y.op().reduce_axes.empty()) {
    schedule_reduction(s[Y], target);
    return;
  }
  schedule_reduction(s[te::Tensor(Y.op().inputs.at(0))], target);
  schedule_injective(s[Y], target);
}

}  // namespace ops
NNVM_END_NAMESPACE
