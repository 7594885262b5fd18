// The CPU schedule of convolutions in the blocked layout NCHW[x]c (conv_nchwc,
// depthwise_conv_nchwc): output (N, M / ob, OH, OW, ob). TVM's x86 conv2d_NCHWc schedule, in nnvm:
//
//   parallel over (n, output channel block, output row)
//     for each tile of `row_tile` output columns
//       acc[row_tile][ob] = bias                 (registers: row_tile x ob / lanes vectors)
//       for every reduction step (input block, kh, kw, input channel in the block)
//         for each column of the tile (unrolled)
//           acc[column][:] += x (one input value, broadcast) * w[:] (one weight vector)
//       out[...] = epilogue(acc)                 (vectorized over the channel block)
//
// Each loaded weight vector feeds row_tile independent multiply-adds, so the loop is bound by
// FMA throughput, not by loads or FMA latency; the accumulators never go to memory, and the
// elementwise ops fused after the convolution (relu, a residual add) run on them at write-back.
#pragma once

#include "nnvm/ir/simplify.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {
namespace detail {

// Output columns per register tile: the largest of 8..4 that divides `out_width` (a tile that
// divides the row leaves no tail), else 6, with the accumulators (tile x vectors_per_block
// registers) kept within 16 of the 16-32 vector registers x86 has.
inline int64_t nchwc_row_tile(int64_t out_width, int64_t vectors_per_block) {
  int64_t most = std::max<int64_t>(1, 16 / std::max<int64_t>(1, vectors_per_block));
  for (int64_t t = std::min<int64_t>(8, most); t >= 4; --t)
    if (out_width % t == 0) return std::min(t, out_width);
  return std::min({int64_t(6), most, out_width});
}

// Schedules conv stage `Y` (rank 5, a reduction) whose result reaches memory as `out`: `Y` itself
// or an elementwise epilogue of it with Y's shape. False (nothing changed) when the shapes are not
// constant.
//
// `channelwise`: each output channel reads only its own input channel (depthwise convs, pools).
// A block of several vectors is then run one vector at a time, as if blocked by one vector: the
// rows one task pads and reads stay a vector wide, so they fit in L1 (a 32-channel block of a
// 112-wide image needs 44 KiB of padded rows; a depthwise conv ran at 0.7 of the 16-channel
// speed), while the layout keeps the block its producer chose.
inline bool schedule_nchwc(schedule::Schedule& s, const te::Tensor& Y, const te::Tensor& out, const Target& target,
                           bool channelwise = false) {
  if (Y.rank() != 5 || out.rank() != 5 || Y.op().reduce_axes.empty()) return false;
  auto* ow = ir::as_const_int(ir::simplify(Y.shape()[3]));
  auto* ob = ir::as_const_int(ir::simplify(Y.shape()[4]));
  if (!ow || !ob) return false;
  int64_t lanes = target.vector_lanes(Y.dtype());
  bool by_vector = channelwise && *ob > lanes && *ob % lanes == 0;
  te::Tensor acc = s.cache_write(Y, ir::MemoryScope::local);
  if (!out.same_as(Y)) s[Y].compute_inline();
  auto o = s[out];
  const auto& axes = out.op().axis;
  auto [col_tile, col] = o.split(axes[3], nchwc_row_tile(*ow, by_vector ? 1 : (*ob + lanes - 1) / lanes));
  ir::IterVar rows;
  if (by_vector) {
    auto [vec, lane] = o.split(axes[4], lanes);
    o.reorder({axes[0], axes[1], axes[2], vec, col_tile, col, lane});
    o.vectorize(lane);
    rows = o.fuse({axes[0], axes[1], axes[2], vec});
  } else {
    o.reorder({axes[0], axes[1], axes[2], col_tile, col, axes[4]});
    o.vectorize(axes[4]);
    rows = o.fuse({axes[0], axes[1], axes[2]});
  }
  if (worth_parallel(o)) o.parallel(rows);
  s[acc].compute_at(o, col_tile);
  // The zero-padded input, when the convolution has pads: the rows one output row reads, padded
  // per output row into a small buffer that stays in cache (a whole padded copy of the input
  // would cost a pass over memory, as much as a depthwise conv's own work). (Padding whole
  // planes per task instead, each input row once, measured no faster for depthwise convs.)
  for (auto& in : Y.op().inputs)
    if (in->op->kind == te::OpKind::compute) {
      auto pad = s[te::Tensor(in)];
      pad.compute_at(o, rows);
      const auto& pax = pad.tensor().op().axis;
      if (pax.size() == 5 && *ob % lanes == 0) {
        auto [outer, inner] = pad.split(pax[4], lanes);
        (void)outer;
        pad.vectorize(inner);
      }
    }
  auto a = s[acc];
  std::vector<ir::IterVar> order{a.axis(0), a.axis(1), a.axis(2)};
  for (size_t r = 0; r < Y.op().reduce_axes.size(); ++r) order.push_back(a.reduce_axis(r));
  order.push_back(a.axis(3));
  order.push_back(a.axis(4));
  a.reorder(order);
  a.unroll(a.axis(3));
  a.vectorize(a.axis(4));
  return true;
}

}  // namespace detail
}  // namespace ops
NNVM_END_NAMESPACE
