// deform_conv: ONNX DeformConv (opset 19), 2-D. X is (N, C, H, W), W (M, C / group, KH, KW), offset
// (N, offset_group * KH * KW * 2, OH, OW), the optional B (M) and mask (N, offset_group * KH * KW,
// OH, OW). A convolution (pads, strides, dilations, group as Conv) whose tap (i, j) of output
// (oh, ow) reads X not at the window position p = (oh * sh - ph + i * dh, ow * sw - pw + j * dw) but
// bilinearly at p + (offset[n, 2 t], offset[n, 2 t + 1]), t = (og * KH + i) * KW + j, scaled by
// mask[n, t], zero outside X. Input channel ch uses offset group og = ch / (C / offset_group).
// Without offsets and mask it is Conv.
#pragma once

#include "nnvm/ops/conv/conv.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct DeformConvParams {
  WindowParams window;  // kernel_shape, strides, dilations, pads (DeformConv has no auto_pad)
  int64_t group = 1, offset_group = 1;

  static DeformConvParams from(const Attrs& a) {
    return {WindowParams::from(a), a.get_int("group", 1), a.get_int("offset_group", 1)};
  }
};

// One reduction stage over (C / group, KH, KW); each term reads its offset (and mask) and four
// guarded taps of X. float32 and float64; offset, mask and B have X's dtype.
inline te::Tensor deform_conv(const te::Tensor& X, const te::Tensor& W, const te::Tensor& offset,
                              const te::Tensor& B = {}, const te::Tensor& mask = {}, const DeformConvParams& p = {},
                              std::string name = "deform_conv") {
  check_rank(X, "X", 4);
  check_float(X, "X");
  check_rank(W, "W", 4);
  check_same_dtype(X, "X", W, "W");
  check_rank(offset, "offset", 4);
  check_same_dtype(X, "X", offset, "offset");
  for (auto [attr, v] : {std::pair{"group", p.group}, std::pair{"offset_group", p.offset_group}})
    if (v < 1) detail::bad_window_attr(attr, str_cat("attribute '", attr, "' is ", v, "; it must be at least 1"));
  std::vector<int64_t> in = spatial_extents(X, "X"), kernel = spatial_extents(W, "W");
  int64_t M = detail::conv_extent(W, 0, "W"), Cg = detail::conv_extent(W, 1, "W"), C = detail::conv_extent(X, 1, "X");
  if (!p.window.kernel_shape.empty() && p.window.kernel_shape != kernel)
    detail::bad_window_attr("kernel_shape", str_cat("attribute 'kernel_shape' differs from W's spatial extents (W is "
                                                    "tensor ", W.name(), ")"));
  if (C != Cg * p.group || M % p.group != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("X has ", C, " channels and W ", M, " output by ", Cg, " input channels; group ", p.group,
                            " needs C = ", Cg * p.group, " and M a multiple of ", p.group),
                    {"input W"});
  if (C % p.offset_group != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("X has ", C, " channels, which offset_group ", p.offset_group, " does not divide"),
                    {"input X"});
  if (B.defined()) detail::check_conv_bias(B, X, M);
  Window w = resolve_window(p.window, in, kernel);
  int64_t taps = p.offset_group * kernel[0] * kernel[1];
  auto check_field = [&](const te::Tensor& t, const char* input, int64_t channels) {
    bool ok = same_extent(t.shape()[0], X.shape()[0]) && same_extent(t.shape()[1], ir::Expr(channels)) &&
              same_extent(t.shape()[2], ir::Expr(w.out[0])) && same_extent(t.shape()[3], ir::Expr(w.out[1]));
    if (!ok)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", input, " has shape (", ir::to_string(t.shape()[0]), ", ",
                              ir::to_string(t.shape()[1]), ", ", ir::to_string(t.shape()[2]), ", ",
                              ir::to_string(t.shape()[3]), "), expected (N, ", channels, ", ", w.out[0], ", ",
                              w.out[1], ") for offset_group ", p.offset_group, ", the kernel and the output extents"),
                      {str_cat("input ", input)});
  };
  check_field(offset, "offset", 2 * taps);
  if (mask.defined()) {
    check_rank(mask, "mask", 4);
    check_same_dtype(X, "X", mask, "mask");
    check_field(mask, "mask", taps);
  }
  DataType t = X.dtype();
  auto clamp = [](const ir::Expr& i, int64_t n) { return ir::min(ir::max(i, ir::Expr(int64_t(0))), ir::Expr(n - 1)); };
  int64_t Mg = M / p.group, Cog = C / p.offset_group;
  std::vector<ir::IterVar> red{te::reduce_axis(ir::Expr(Cg), "rc"), te::reduce_axis(ir::Expr(kernel[0]), "rk0"),
                               te::reduce_axis(ir::Expr(kernel[1]), "rk1")};
  return te::compute(
      {X.shape()[0], ir::Expr(M), ir::Expr(w.out[0]), ir::Expr(w.out[1])},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr n = v[0], m = v[1], c = red[0].var(), ki = red[1].var(), kj = red[2].var();
        ir::Expr ch = (m / Mg) * Cg + c;
        ir::Expr tap = ((ch / Cog) * kernel[0] + ki) * kernel[1] + kj;
        // Per axis: the sampled coordinate, clamped to [-2, extent + 1] (NaN to -2): past one
        // pixel outside every tap reads 0 anyway, and the integer cast below stays in range.
        std::vector<ir::Expr> base(2), frac(2);
        for (size_t d = 0; d < 2; ++d) {
          ir::Expr k = d == 0 ? ki : kj;
          ir::Expr pos = ir::cast(t, w.tap(d, v[2 + d], k)) + offset({n, tap * 2 + int64_t(d), v[2], v[3]});
          ir::Expr lo = ir::make_const(t, -2.0), hi = ir::make_const(t, double(in[d] + 1));
          pos = ir::select(ir::call(ir::CallOp::isnan, pos), lo, ir::min(ir::max(pos, lo), hi));
          ir::Expr f = ir::call(ir::CallOp::floor, pos);
          base[d] = ir::cast(dtype::int64, f);
          frac[d] = pos - f;
        }
        ir::Expr one = ir::make_const(t, 1.0), value;
        for (int64_t dy = 0; dy < 2; ++dy)
          for (int64_t dx = 0; dx < 2; ++dx) {
            ir::Expr y = base[0] + dy, x = base[1] + dx;
            ir::Expr inside = y >= int64_t(0) && y < in[0] && x >= int64_t(0) && x < in[1];
            ir::Expr weight = (dy ? frac[0] : one - frac[0]) * (dx ? frac[1] : one - frac[1]);
            ir::Expr term = ir::select(inside, weight * X({n, ch, clamp(y, in[0]), clamp(x, in[1])}), ir::make_zero(t));
            value = value.defined() ? value + term : term;
          }
        if (mask.defined()) value = value * mask({n, tap, v[2], v[3]});
        return te::sum(W({m, c, ki, kj}) * value, red, B.defined() ? B(m) : ir::Expr());
      },
      std::move(name));
}

inline OpDef deform_conv_def() {
  return OpDef{
      .name = "deform_conv",
      .importer_names = {"onnx:DeformConv"},
      .input_names = {"X", "W", "offset", "B", "mask"},
      .optional_inputs = 2,
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            auto opt = [&](size_t i) { return in.size() > i ? in[i] : te::Tensor(); };
            return std::vector<te::Tensor>{
                deform_conv(in[0], in[1], in[2], opt(3), opt(4), DeformConvParams::from(attrs))};
          },
      .doc = "2-D convolution of X by W sampling X bilinearly at per-tap offsets, optional bias B and mask "
             "(DeformConv; attributes kernel_shape, strides, dilations, pads, group, offset_group)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
