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

#include <optional>

#include "nnvm/ir/interval.hpp"
#include "nnvm/ir/simplify.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"
#include "nnvm/target/storage_plan.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The vector registers a blocked conv's accumulator tile may take: the target's own count
// (Target::vector_registers: 32 with AVX-512, 16 with AVX2), at most 16 below 512-bit vectors
// (NEON's 32 are 128-bit, so a block needs more of them than an AVX-512 block does).
inline int64_t vector_registers(const Target& t) {
  return std::min<int64_t>(t.vector_registers, t.vector_bits >= 512 ? 32 : 16);
}

namespace detail {

// Output columns per register tile: the largest of 14..4 that divides `out_width` (a tile that
// divides the row leaves no tail), else 6, with the accumulators (tile x vectors_per_block
// registers) leaving 4 of the target's vector registers (16 with AVX2, 32 with AVX-512) for the
// weight vectors and the broadcast input. AVX-512 thus takes 14 x 2 vectors at 14 or 28 columns,
// 7 x 2 at 7: twice the multiply-adds per loaded weight of the 16-accumulator limit it had.
inline int64_t nchwc_row_tile(int64_t out_width, int64_t vectors_per_block, int64_t registers) {
  int64_t most = std::max<int64_t>(1, (registers - 4) / std::max<int64_t>(1, vectors_per_block));
  for (int64_t t = std::min<int64_t>(14, most); t >= 4; --t)
    if (out_width % t == 0) return std::min(t, out_width);
  return std::min({int64_t(6), most, out_width});
}

// Bytes of the padded input `pad` (rank 5, constant shape) that one output row of `Y` reads:
// every channel block and column of the input rows one window spans (KH rows at dilation 1, more
// when dilated). The span is bounded from the row index Y reads `pad` at, with the output row
// fixed and the reduce axes over their ranges. Empty when a shape or the span is not constant.
inline std::optional<int64_t> padded_rows_bytes(const te::Tensor& Y, const te::Tensor& pad) {
  struct FindRow : ir::IRVisitor {
    const ir::ProducerNode* pad;
    ir::Expr row;
    using ir::IRVisitor::visit;
    void visit(const ir::ProducerLoad* op) override {
      if (op->tensor.get() == pad && op->indices.size() == 5) row = op->indices[2];
      ir::IRVisitor::visit(op);
    }
  } find;
  find.pad = pad.get();
  find.visit_expr(Y.op().body);
  if (!find.row.defined()) return std::nullopt;
  ir::IntervalMap ranges;
  ranges[Y.op().axis[2].var().get()] = ir::Interval::point(0);
  for (auto& r : Y.op().reduce_axes) {
    auto extent = ir::simplified_const_int(r->dom.extent);
    if (!extent || *extent < 1) return std::nullopt;
    ranges[r.var().get()] = ir::Interval::range(0, *extent - 1);
  }
  ir::Interval span = ir::const_bound(find.row, ranges);
  if (!span.is_bounded()) return std::nullopt;
  int64_t bytes = (*span.max - *span.min + 1) * pad.dtype().bytes();
  for (int d : {1, 3, 4}) {
    auto e = ir::simplified_const_int(pad.shape()[d]);
    if (!e) return std::nullopt;
    bytes *= *e;
  }
  return bytes;
}

// Schedules conv stage `Y` (rank 5, a reduction) whose result reaches memory as `out`: `Y` itself
// or an elementwise epilogue of it with Y's shape. False (nothing changed) when the shapes are not
// constant.
//
// `channelwise`: each output channel reads only its own input channel (depthwise convs, pools).
// Such an op reads its input through the padding's select instead of a padded copy: it does a
// few multiply-adds per input element, so copying the padded rows (up to KH times each) cost it
// as much as its own work (2x at 3x3 stride 2); vectorize turns each guarded tap into an if/else
// on a condition that is constant for the tile's rows and mostly for its columns. A block of
// several vectors runs one vector at a time, as if blocked by one vector, so the rows a task
// reads stay a vector wide while the layout keeps the block its producer chose.
inline bool schedule_nchwc(schedule::Schedule& s, const te::Tensor& Y, const te::Tensor& out, const Target& target,
                           bool channelwise = false) {
  if (Y.rank() != 5 || out.rank() != 5 || Y.op().reduce_axes.empty()) return false;
  auto ow = ir::simplified_const_int(Y.shape()[3]);
  auto ob = ir::simplified_const_int(Y.shape()[4]);
  if (!ow || !ob) return false;
  int64_t lanes = target.vector_lanes(Y.dtype());
  bool by_vector = channelwise && *ob > lanes && *ob % lanes == 0;
  te::Tensor acc = s.cache_write(Y, ir::MemoryScope::local);
  if (!out.same_as(Y)) s[Y].compute_inline();
  auto o = s[out];
  const auto& axes = out.op().axis;
  auto [col_tile, col] =
      o.split(axes[3], nchwc_row_tile(*ow, by_vector ? 1 : (*ob + lanes - 1) / lanes, vector_registers(target)));
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
  // The zero-padded input, when the convolution has pads: inlined into a channelwise op (see
  // above); for the others the rows one output row reads, padded per output row into a small
  // buffer that stays in cache (a whole padded copy of the input would cost a pass over memory),
  // a few percent of the conv's work. Inside the parallel loop that buffer is each task's own
  // stack array, which the emitters cap at kMaxStackBytes: where the rows are wider (many
  // channels, wide rows or tall windows: ResNet-50's 512-channel 3x3 convs, VGG's 224-wide rows)
  // the whole input is padded once, in parallel, before the convolution.
  for (auto& in : Y.op().inputs)
    if (in->op->kind == te::OpKind::compute) {
      auto pad = s[te::Tensor(in)];
      if (channelwise) {
        pad.compute_inline();
        continue;
      }
      const auto& pax = pad.tensor().op().axis;
      std::optional<int64_t> tile = padded_rows_bytes(Y, pad.tensor());
      if (tile && *tile <= target::kMaxStackBytes) {
        pad.compute_at(o, rows);
      } else if (pax.size() == 5) {
        ir::IterVar pad_rows = pad.fuse({pax[0], pax[1], pax[2]});
        if (worth_parallel(pad)) pad.parallel(pad_rows);
      }
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

// The output channel block of a blocked (not depthwise) conv whose output rows are `out_width`
// wide: 2 or 4 vectors, whichever divides `channels` and gives the register tile (see
// nchwc_row_tile) the most accumulators, 2 on a tie or when 4's tile leaves a tail; else 1
// vector when that divides; else half or a quarter of a vector (at least 4 lanes); else 0.
// 4 vectors pay off where rows are short: at 7 columns, 2 vectors fill 14 accumulators and 4
// fill 28 (ResNet-18's 7x7 3x3 convs ran at 0.66-0.72 of oneDNN with 2, 0.80-0.84 with 4).
inline int64_t nchwc_output_block(int64_t channels, int64_t out_width, const Target& t) {
  const int64_t lanes = t.vector_lanes(dtype::float32), regs = vector_registers(t);
  int64_t best = 0, best_acc = 0;
  for (int64_t v : {2, 4}) {
    if (channels % (v * lanes) != 0) continue;
    int64_t tile = detail::nchwc_row_tile(out_width, v, regs);
    if (v == 4 && out_width % tile != 0) continue;  // its tail would run without the tile
    if (tile * v > best_acc) best = v * lanes, best_acc = tile * v;
  }
  if (best == 0 && channels % lanes == 0) best = lanes;
  // No whole vector divides the channels (SqueezeNet's 1000-class conv on AVX-512): half or a
  // quarter of one still runs blocked and vectorized, where the NCHW fallback is ~10x slower.
  for (int64_t part = lanes / 2; best == 0 && part >= 4; part /= 2)
    if (channels % part == 0) best = part;
  return best;
}

}  // namespace ops
NNVM_END_NAMESPACE
