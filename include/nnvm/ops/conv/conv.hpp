// conv: convolution over 1, 2 or 3 spatial axes (ONNX Conv). X is (N, C, D1, ...), W is
// (M, C / group, K1, ...), the optional bias B is (M). Output channel m belongs to group
// g = m / (M / group), which reads input channels g * (C / group) + c:
//   Y[n, m, o...] = B[m] + sum over c, k... of X[n, g * C/group + c, o * stride - pad + k * dilation] * W[m, c, k...]
// with zeros outside X. Depthwise convolution is group == C.
#pragma once

#include "nnvm/ops/conv/window.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"
#include "nnvm/ops/schedule_gpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct ConvParams {
  WindowParams window;  // kernel_shape, when given, must equal W's spatial extents
  int64_t group = 1;

  static ConvParams from(const Attrs& a) { return {WindowParams::from(a), a.get_int("group", 1)}; }
};

namespace detail {
inline int64_t conv_extent(const te::Tensor& t, size_t axis, const char* input) {
  auto c = ir::simplified_const_int(t.shape()[axis]);
  if (!c)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " (tensor ", t.name(), ") axis ", axis, " has the symbolic extent ",
                            ir::to_string(t.shape()[axis]), "; it must be a constant"),
                    {"input " + std::string(input)});
  return *c;
}

// Checks the bias of a conv-like op with `channels` output channels.
inline void check_conv_bias(const te::Tensor& B, const te::Tensor& X, int64_t channels) {
  check_rank(B, "B", 1);
  check_same_dtype(X, "X", B, "B");
  if (!same_extent(B.shape()[0], ir::Expr(channels)))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("bias B has ", ir::to_string(B.shape()[0]), " elements, expected one per output channel (",
                            channels, ")"),
                    {"input B"});
}

// X with the window's pads around its spatial axes (axes 2 to 2 + w.rank(); axes after them, such
// as a channel block, are kept), zero outside X; X itself when there are none.
inline te::Tensor pad_spatial(const te::Tensor& X, const Window& w, const std::string& name) {
  bool any = false;
  std::vector<ir::Expr> shape{X.shape()[0], X.shape()[1]};
  for (size_t d = 0; d < w.rank(); ++d) {
    any |= w.pad_begin[d] > 0 || w.pad_end[d] > 0;
    shape.emplace_back(w.in[d] + w.pad_begin[d] + w.pad_end[d]);
  }
  for (size_t a = 2 + w.rank(); a < X.rank(); ++a) shape.push_back(X.shape()[a]);
  if (!any) return X;
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx{v[0], v[1]};
        ir::Expr inside;
        for (size_t d = 0; d < w.rank(); ++d) {
          ir::Expr i = v[2 + d];
          if (w.pad_begin[d] == 0 && w.pad_end[d] == 0) {
            idx.push_back(i);
            continue;
          }
          ir::Expr c = (i >= ir::Expr(w.pad_begin[d])) && (i < ir::Expr(w.pad_begin[d] + w.in[d]));
          inside = inside.defined() ? ir::Expr(inside && c) : c;
          idx.push_back(w.pad_begin[d] ? ir::Expr(i - ir::Expr(w.pad_begin[d])) : i);
        }
        for (size_t a = 2 + w.rank(); a < X.rank(); ++a) idx.push_back(v[a]);
        // A scalar select runs only the chosen side, so the read outside X never happens.
        return ir::select(inside, X(idx), ir::make_zero(X.dtype()));
      },
      name);
}
}  // namespace detail

// One reduction stage over (C / group, K1, ...) reading a zero-padded copy of X (its own stage,
// made only when there are pads), so the reduction needs no guards and its output width can be
// vectorized. float32 and float64.
inline te::Tensor conv(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {}, const ConvParams& p = {},
                       std::string name = "conv") {
  check_rank(X, "X", 3, 5);
  check_float(X, "X");
  check_same_dtype(X, "X", W, "W");
  check_rank(W, "W", X.rank());
  if (p.group < 1)
    detail::bad_window_attr("group", str_cat("attribute 'group' is ", p.group, "; it must be at least 1"));
  std::vector<int64_t> in = spatial_extents(X, "X"), kernel = spatial_extents(W, "W");
  int64_t M = detail::conv_extent(W, 0, "W"), Cg = detail::conv_extent(W, 1, "W");
  if (!p.window.kernel_shape.empty() && p.window.kernel_shape != kernel)
    detail::bad_window_attr("kernel_shape",
                            str_cat("attribute 'kernel_shape' has ", p.window.kernel_shape.size(),
                                    " values that differ from W's spatial extents (W is tensor ", W.name(), ")"));
  if (!same_extent(X.shape()[1], ir::Expr(Cg * p.group)))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X has ", ir::to_string(X.shape()[1]), " channels but W (", Cg,
                            " input channels per group) with group ", p.group, " expects ", Cg * p.group),
                    {"input W"});
  if (M % p.group != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("W has ", M, " output channels, which group ", p.group, " does not divide"), {"input W"});
  if (B.defined()) detail::check_conv_bias(B, X, M);
  Window w = resolve_window(p.window, in, kernel);
  te::Tensor src = detail::pad_spatial(X, w, name + "_pad");
  // In the padded copy, tap k of output o sits at o * stride + k * dilation.
  Window at = w;
  if (!src.same_as(X)) std::fill(at.pad_begin.begin(), at.pad_begin.end(), 0);
  int64_t Mg = M / p.group;
  size_t n = w.rank();
  std::vector<ir::IterVar> red{te::reduce_axis(ir::Expr(Cg), "rc")};
  for (size_t d = 0; d < n; ++d) red.push_back(te::reduce_axis(ir::Expr(kernel[d]), str_cat("rk", d)));
  std::vector<ir::Expr> shape{X.shape()[0], ir::Expr(M)};
  for (int64_t o : w.out) shape.emplace_back(o);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr m = v[1], c = red[0].var();
        // Input channel of (m, c): the group's first channel plus c, without arithmetic when
        // there is one group or one channel per group.
        if (p.group > 1) {
          ir::Expr first = Mg == 1 ? m : ir::Expr(m / ir::Expr(Mg));
          c = Cg == 1 ? first : ir::Expr(first * ir::Expr(Cg) + c);
        }
        std::vector<ir::Expr> xi{v[0], c}, wi{m, red[0].var()};
        for (size_t d = 0; d < n; ++d) {
          xi.push_back(at.tap(d, v[2 + d], red[1 + d].var()));
          wi.push_back(red[1 + d].var());
        }
        return te::sum(src(xi) * W(wi), red, B.defined() ? B(m) : ir::Expr());
      },
      std::move(name));
}

// The padded copy fills in parallel; the convolution runs its outer output axes in parallel and
// vectorizes the output's innermost axis under the whole reduction (each lane accumulates one
// output element, the weight broadcast across lanes).
namespace detail {
// 2-D convolutions with enough output channels and width: a register tile of kConvTileOc output
// channels by one vector of output columns is accumulated in a local buffer (cache_write) over
// the whole reduction, so each loaded input vector feeds kConvTileOc independent FMAs instead of
// one (a single accumulator is bound by FMA latency). The tile is written back vectorized.
constexpr int64_t kConvTileOc = 8;
inline bool schedule_conv2d_register_tile(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  if (Y.rank() != 4 || Y.op().reduce_axes.size() != 3) return false;
  int64_t lanes = target.vector_lanes(Y.dtype());
  auto* oc = ir::as_const_int(Y.shape()[1]);
  auto* ow = ir::as_const_int(Y.shape()[3]);
  if (!oc || !ow || *oc < kConvTileOc || *ow < lanes || lanes < 2) return false;
  te::Tensor acc = s.cache_write(Y, ir::MemoryScope::local);
  auto st = s[Y];
  const auto& axes = Y.op().axis;
  auto [oco, oci] = st.split(axes[1], kConvTileOc);
  auto [owo, owi] = st.split(axes[3], lanes);
  st.reorder({axes[0], oco, axes[2], owo, oci, owi});
  st.vectorize(owi);
  ir::IterVar outer = st.fuse({axes[0], oco, axes[2]});
  if (worth_parallel(st)) st.parallel(outer);
  s[acc].compute_at(st, owo);
  auto a = s[acc];
  a.reorder({a.reduce_axis(0), a.reduce_axis(1), a.reduce_axis(2), a.axis(0), a.axis(1), a.axis(2), a.axis(3)});
  a.unroll(a.axis(1));
  a.vectorize(a.axis(3));
  return true;
}
}  // namespace detail

inline void schedule_conv(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  for (auto& in : Y.op().inputs)
    if (in->op->kind == te::OpKind::compute) schedule_injective(s[te::Tensor(in)], target);
  if (detail::schedule_conv2d_register_tile(s, Y, target)) return;
  auto st = s[Y];
  const auto& axes = Y.op().axis;
  ir::IterVar outer = st.fuse(std::vector<ir::IterVar>(axes.begin(), axes.end() - 1));
  auto [wo, wi] = st.split(axes.back(), target.vector_lanes(Y.dtype()));
  std::vector<ir::IterVar> order{outer, wo};
  for (size_t r = 0; r < Y.op().reduce_axes.size(); ++r) order.push_back(st.reduce_axis(r));
  order.push_back(wi);
  st.reorder(order);
  st.vectorize(wi);
  if (detail::worth_parallel(st)) st.parallel(outer);
}

// GPUs, 2-D convolutions (any group): each thread computes kGpuConvRegs output channels of one
// output pixel, accumulated in registers (cache_write local) over the whole reduction, so each
// input value it loads feeds kGpuConvRegs multiply-adds. A block is tx threads along the output
// width (the power of two at or above it, at most 16) by ty thread rows along the channels (up
// to 256 threads); the grid covers batch, channel blocks, output rows and column blocks. The
// padded input is its own kernel (the generic recipe), as is any other rank's convolution.
constexpr int64_t kGpuConvRegs = 4;
inline void gpu_schedule_conv(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  for (auto& in : Y.op().inputs)
    if (in->op->kind == te::OpKind::compute) gpu_schedule_stage(s[te::Tensor(in)], target);
  const int64_t* M = ir::as_const_int(Y.shape()[1]);
  const int64_t* OW = Y.rank() == 4 ? ir::as_const_int(Y.shape()[3]) : nullptr;
  if (!M || !OW || *M < 2 * kGpuConvRegs || target.gpu.max_threads_per_block < 256) return gpu_schedule_stage(s[Y], target);
  int64_t tx = 1, ty = 1;
  while (tx < *OW && tx < 16) tx *= 2;
  while (tx * ty < 256 && ty * kGpuConvRegs < *M) ty *= 2;
  te::Tensor acc = s.cache_write(Y, ir::MemoryScope::local);
  auto st = s[Y];
  ir::IterVar n = st.axis(0), oh = st.axis(2);
  auto [mo, mr] = st.split(st.axis(1), kGpuConvRegs);
  auto [mb, mt] = st.split(mo, ty);
  auto [wb, wt] = st.split(st.axis(3), tx);
  st.reorder({n, mb, oh, wb, mt, wt, mr});
  st.bind(st.fuse({n, mb, oh, wb}), gpu::block_x);
  st.bind(mt, gpu::thread_y);
  st.bind(wt, gpu::thread_x);
  st.unroll(mr);
  auto a = s[acc];
  a.compute_at(st, wt);
  a.reorder({a.reduce_axis(0), a.reduce_axis(1), a.reduce_axis(2), a.axis(0), a.axis(1), a.axis(2), a.axis(3)});
  a.unroll(a.axis(1));
}

inline OpDef conv_def() {
  return OpDef{
      .name = "conv",
      .importer_names = {"onnx:Conv"},
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                conv(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), ConvParams::from(attrs))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_conv(s, out[0], t); },
      .gpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                         const Target& t) { gpu_schedule_conv(s, out[0], t); },
      .doc =
          "1-D/2-D/3-D convolution of X by W plus optional bias B (Conv; attributes kernel_shape, strides, "
          "dilations, pads, group, auto_pad)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
