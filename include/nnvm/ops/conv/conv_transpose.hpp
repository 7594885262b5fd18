// conv_transpose: the transposed convolution (ONNX ConvTranspose), the gradient of conv with
// respect to its input. X is (N, C, D1, ...), W is (C, M / group, K1, ...), the optional bias B
// is (M). Written as a gather, so each output element is computed once with no scatter:
//   Y[n, m, o...] = B[m] + sum over c, k... of X[n, g * C/group + c, i...] * W[g * C/group + c, m % (M/group), k...]
// over the taps where t = o + pad_begin - k * dilation is a non-negative multiple of the
// stride with i = t / stride inside X (g = m / (M / group)).
#pragma once

#include "nnvm/ops/conv/conv.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct ConvTransposeParams {
  WindowParams window;  // ceil_mode unused
  int64_t group = 1;
  std::vector<int64_t> output_padding;  // added at the end of each spatial axis; empty: zeros
  // The spatial output extents (a full-rank list's trailing values are taken); when given, the
  // pads are derived from it and the `pads` attribute is ignored.
  std::vector<int64_t> output_shape;

  static ConvTransposeParams from(const Attrs& a) {
    return {WindowParams::from(a), a.get_int("group", 1), a.get_ints("output_padding", {}),
            a.get_ints("output_shape", {})};
  }
};

// The window of a transposed convolution: `out` are its output extents and `pad_begin` the
// shift of output coordinates into the full (unpadded) result. ONNX: the full extent is
// stride * (in - 1) + output_padding + span; output_shape or SAME_* (output in * stride) fix the
// output extent and the total padding (full - output, never negative) is split with the odd one
// at the end for SAME_UPPER and at the beginning otherwise; NOTSET crops the explicit pads.
inline Window resolve_transpose_window(const ConvTransposeParams& p, std::vector<int64_t> in,
                                       std::vector<int64_t> kernel) {
  size_t n = in.size();
  WindowParams wp = p.window;
  wp.ceil_mode = false;
  std::vector<int64_t> given = p.output_shape;
  if (given.size() == n + 2) given.erase(given.begin(), given.begin() + 2);
  given = spatial_ints(given, "output_shape", n, 0, 1);
  if (!p.output_shape.empty() || wp.auto_pad != "NOTSET") wp.pads.clear();
  Window w;
  check_auto_pad(wp.auto_pad);
  w.in = std::move(in);
  w.kernel = std::move(kernel);
  w.strides = spatial_ints(wp.strides, "strides", n, 1, 1);
  w.dilations = spatial_ints(wp.dilations, "dilations", n, 1, 1);
  std::tie(w.pad_begin, w.pad_end) = split_window_pads(wp.pads, n);
  std::vector<int64_t> extra = spatial_ints(p.output_padding, "output_padding", n, 0, 0);
  w.out.resize(n);
  for (size_t d = 0; d < n; ++d) {
    if (extra[d] >= std::max(w.strides[d], w.dilations[d]))
      detail::bad_window_attr("output_padding", str_cat("attribute 'output_padding' holds ", extra[d], " on axis ", d,
                                                        "; it must be less than the stride or the dilation"));
    int64_t full = w.strides[d] * (w.in[d] - 1) + extra[d] + w.span(d);
    bool fixed = !p.output_shape.empty() || wp.auto_pad == "SAME_UPPER" || wp.auto_pad == "SAME_LOWER";
    if (fixed) {
      w.out[d] = p.output_shape.empty() ? w.in[d] * w.strides[d] : given[d];
      int64_t total = std::max<int64_t>(0, full - w.out[d]);
      w.pad_begin[d] = wp.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[d] = total - w.pad_begin[d];
      continue;
    }
    w.out[d] = full - w.pad_begin[d] - w.pad_end[d];
    if (w.out[d] < 1)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("spatial axis ", d, ": the pads (", w.pad_begin[d], " + ", w.pad_end[d],
                              ") crop the whole output of extent ", full),
                      {"attribute pads"});
  }
  return w;
}

// One guarded reduction stage over (C / group, K1, ...); float32 and float64.
inline te::Tensor conv_transpose(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {},
                                 const ConvTransposeParams& p = {}, std::string name = "conv_transpose") {
  check_rank(X, "X", 3, 5);
  check_float(X, "X");
  check_same_dtype(X, "X", W, "W");
  check_rank(W, "W", X.rank());
  if (p.group < 1)
    detail::bad_window_attr("group", str_cat("attribute 'group' is ", p.group, "; it must be at least 1"));
  std::vector<int64_t> in = spatial_extents(X, "X"), kernel = spatial_extents(W, "W");
  int64_t C = detail::conv_extent(W, 0, "W"), Mg = detail::conv_extent(W, 1, "W");
  if (!p.window.kernel_shape.empty() && p.window.kernel_shape != kernel)
    detail::bad_window_attr("kernel_shape",
                            str_cat("attribute 'kernel_shape' has ", p.window.kernel_shape.size(),
                                    " values that differ from W's spatial extents (W is tensor ", W.name(), ")"));
  if (!same_extent(X.shape()[1], ir::Expr(C)))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X has ", ir::to_string(X.shape()[1]), " channels but W's first axis has ", C),
                    {"input W"});
  if (C % p.group != 0)
    throw UserError("nnvm.ops.input_shape", str_cat("group ", p.group, " does not divide the ", C, " input channels"),
                    {"attribute group"});
  int64_t Cg = C / p.group, M = Mg * p.group;
  if (B.defined()) detail::check_conv_bias(B, X, M);
  Window w = resolve_transpose_window(p, in, kernel);
  size_t n = w.rank();
  std::vector<ir::IterVar> red{te::reduce_axis(ir::Expr(Cg), "rc")};
  for (size_t d = 0; d < n; ++d) red.push_back(te::reduce_axis(ir::Expr(kernel[d]), str_cat("rk", d)));
  std::vector<ir::Expr> shape{X.shape()[0], ir::Expr(M)};
  for (int64_t o : w.out) shape.emplace_back(o);
  DataType t = X.dtype();
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr m = v[1], c = red[0].var(), wm = m;
        if (p.group > 1) {
          ir::Expr g = Mg == 1 ? m : ir::Expr(m / ir::Expr(Mg));
          c = Cg == 1 ? g : ir::Expr(g * ir::Expr(Cg) + c);
          wm = Mg == 1 ? ir::Expr(int64_t(0)) : ir::Expr(m % ir::Expr(Mg));
        }
        std::vector<ir::Expr> xi{v[0], c}, wi{c, wm};
        ir::Expr cond;
        for (size_t d = 0; d < n; ++d) {
          ir::Expr k = red[1 + d].var(), s(w.strides[d]);
          ir::Expr tt = ir::Expr(v[2 + d]) + ir::Expr(w.pad_begin[d]) - k * ir::Expr(w.dilations[d]);
          ir::Expr ok = (tt >= ir::Expr(int64_t(0))) && (tt < ir::Expr(w.in[d] * w.strides[d]));
          if (w.strides[d] != 1) ok = ok && (tt % s == ir::Expr(int64_t(0)));
          cond = cond.defined() ? ir::Expr(cond && ok) : ok;
          xi.push_back(w.strides[d] == 1 ? tt : ir::Expr(tt / s));
          wi.push_back(k);
        }
        // The guarded update runs only where the condition holds, so X is never read outside.
        return ir::Reduce::make(ir::Combiner::sum, X(xi) * W(wi), red, B.defined() ? B(m) : ir::make_zero(t), cond);
      },
      std::move(name));
}

inline OpDef conv_transpose_def() {
  return OpDef{
      .name = "conv_transpose",
      .importer_names = {"onnx:ConvTranspose"},
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                conv_transpose(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), ConvTransposeParams::from(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_reduction(s[out[0]], t);
          },
      .doc =
          "1-D/2-D/3-D transposed convolution plus optional bias B (ConvTranspose; attributes kernel_shape, "
          "strides, dilations, pads, group, output_padding, output_shape, auto_pad)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
