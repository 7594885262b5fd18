// depthwise_conv_nchwc: depthwise 2-D convolution (group == channels, one output per channel)
// in the blocked layout NCHW[x]c, which the layout pass substitutes for such a conv on CPUs:
//   X (N, C / b, H, W, b)   W (C / b, KH, KW, b)   B (C / b, b), optional
//   Y[n, co, oh, ow, ci] = B[co, ci] + sum over kh, kw of
//       X[n, co, oh * stride - pad + kh * dilation, ow * stride - pad + kw * dilation, ci] * W[co, kh, kw, ci]
// with zeros outside X. Window attributes as conv's. Each tap is one vector multiply-add over the
// b channels of a block.
#pragma once

#include "nnvm/ops/conv/conv_nchwc.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor depthwise_conv_nchwc(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {},
                                       const WindowParams& p = {}, std::string name = "depthwise_conv_nchwc") {
  check_rank(X, "X", 5);
  check_float(X, "X");
  check_rank(W, "W", 4);
  check_same_dtype(X, "X", W, "W");
  detail::check_extent(W, 0, "W", X.shape()[1], "X's channel blocks");
  detail::check_extent(W, 3, "W", X.shape()[4], "X's channel block size");
  if (B.defined()) {
    check_rank(B, "B", 2);
    check_same_dtype(X, "X", B, "B");
    detail::check_extent(B, 0, "B", X.shape()[1], "X's channel blocks");
    detail::check_extent(B, 1, "B", X.shape()[4], "X's channel block size");
  }
  Window w = detail::blocked_window(X, p, {detail::conv_extent(W, 1, "W"), detail::conv_extent(W, 2, "W")});
  te::Tensor src = detail::pad_spatial(X, w, name + "_pad");
  Window at = w;
  if (!src.same_as(X)) std::fill(at.pad_begin.begin(), at.pad_begin.end(), 0);
  auto kh = te::reduce_axis(ir::Expr(w.kernel[0]), "rkh");
  auto kw = te::reduce_axis(ir::Expr(w.kernel[1]), "rkw");
  return te::compute(
      {X.shape()[0], X.shape()[1], ir::Expr(w.out[0]), ir::Expr(w.out[1]), X.shape()[4]},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr x = src({v[0], v[1], at.tap(0, v[2], kh.var()), at.tap(1, v[3], kw.var()), v[4]});
        ir::Expr wt = W({v[1], kh.var(), kw.var(), v[4]});
        return te::sum(x * wt, {kh, kw}, B.defined() ? B({v[1], v[4]}) : ir::Expr());
      },
      std::move(name));
}

inline OpDef depthwise_conv_nchwc_def() {
  return OpDef{
      .name = "depthwise_conv_nchwc",
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{depthwise_conv_nchwc(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(),
                                                                WindowParams::from(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            detail::schedule_nchwc(s, out[0], out[0], t, /*channelwise=*/true);
          },
      .cpu_fused_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const te::Tensor& epilogue, const Target& t) {
            return detail::schedule_nchwc(s, out[0], epilogue, t, /*channelwise=*/true);
          },
      .doc = "depthwise 2-D convolution in the blocked layout NCHW[x]c: X (N, C/b, H, W, b), W (C/b, KH, KW, b), "
             "B (C/b, b); conv's window attributes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
