// conv_nchwc: 2-D convolution (one group) in the blocked layout NCHW[x]c, which the layout pass
// (graph/passes/alter_layout.hpp) substitutes for conv on CPUs. With input block ib and output
// block ob:
//   X (N, C / ib, H, W, ib)   W (M / ob, C / ib, KH, KW, ib, ob)   B (M / ob, ob), optional
//   Y[n, mo, oh, ow, mi] = B[mo, mi] + sum over co, kh, kw, ci of
//       X[n, co, oh * stride - pad + kh * dilation, ow * stride - pad + kw * dilation, ci] * W[mo, co, kh, kw, ci, mi]
// with zeros outside X. Window attributes as conv's (strides, dilations, pads, auto_pad).
// The weight layout puts the ob output channels of one input channel and tap next to each other,
// so the inner loop loads them as vectors (nchwc_schedule.hpp).
#pragma once

#include "nnvm/ops/conv/conv.hpp"
#include "nnvm/ops/conv/nchwc_schedule.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// The window of a blocked convolution or pool: spatial axes 2 and 3 of X (rank 5), kernel `kernel`.
inline Window blocked_window(const te::Tensor& X, const WindowParams& p, std::vector<int64_t> kernel) {
  std::vector<int64_t> in{conv_extent(X, 2, "X"), conv_extent(X, 3, "X")};
  if (!p.kernel_shape.empty() && p.kernel_shape != kernel)
    bad_window_attr("kernel_shape", "attribute 'kernel_shape' differs from W's spatial extents");
  return resolve_window(p, std::move(in), std::move(kernel));
}

inline void check_extent(const te::Tensor& t, size_t axis, const char* input, const ir::Expr& want, const char* why) {
  if (!same_extent(t.shape()[axis], want))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " axis ", axis, " has ", ir::to_string(t.shape()[axis]), " elements, expected ",
                            ir::to_string(want), " (", why, ")"),
                    {str_cat("input ", input)});
}
}  // namespace detail

inline te::Tensor conv_nchwc(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {},
                             const WindowParams& p = {}, std::string name = "conv_nchwc") {
  check_rank(X, "X", 5);
  check_float(X, "X");
  check_rank(W, "W", 6);
  check_same_dtype(X, "X", W, "W");
  detail::check_extent(W, 1, "W", X.shape()[1], "X's channel blocks");
  detail::check_extent(W, 4, "W", X.shape()[4], "X's channel block size");
  int64_t ib = detail::conv_extent(X, 4, "X"), ob = detail::conv_extent(W, 5, "W");
  if (B.defined()) {
    check_rank(B, "B", 2);
    check_same_dtype(X, "X", B, "B");
    detail::check_extent(B, 0, "B", W.shape()[0], "W's output channel blocks");
    detail::check_extent(B, 1, "B", W.shape()[5], "W's output channel block size");
  }
  Window w = detail::blocked_window(X, p, {detail::conv_extent(W, 2, "W"), detail::conv_extent(W, 3, "W")});
  te::Tensor src = detail::pad_spatial(X, w, name + "_pad");
  Window at = w;
  if (!src.same_as(X)) std::fill(at.pad_begin.begin(), at.pad_begin.end(), 0);
  auto co = te::reduce_axis(X.shape()[1], "rco");
  auto kh = te::reduce_axis(ir::Expr(w.kernel[0]), "rkh");
  auto kw = te::reduce_axis(ir::Expr(w.kernel[1]), "rkw");
  auto ci = te::reduce_axis(ir::Expr(ib), "rci");
  return te::compute(
      {X.shape()[0], W.shape()[0], ir::Expr(w.out[0]), ir::Expr(w.out[1]), ir::Expr(ob)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr x = src({v[0], co.var(), at.tap(0, v[2], kh.var()), at.tap(1, v[3], kw.var()), ci.var()});
        ir::Expr wt = W({v[1], co.var(), kh.var(), kw.var(), ci.var(), v[4]});
        return te::sum(x * wt, {co, kh, kw, ci}, B.defined() ? B({v[1], v[4]}) : ir::Expr());
      },
      std::move(name));
}

inline OpDef conv_nchwc_def() {
  return OpDef{
      .name = "conv_nchwc",
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                conv_nchwc(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), WindowParams::from(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            detail::schedule_nchwc(s, out[0], out[0], t);
          },
      .cpu_fused_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const te::Tensor& epilogue, const Target& t) {
            return detail::schedule_nchwc(s, out[0], epilogue, t);
          },
      .doc = "2-D convolution in the blocked layout NCHW[x]c: X (N, C/ib, H, W, ib), W (M/ob, C/ib, KH, KW, ib, ob), "
             "B (M/ob, ob); conv's window attributes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
