// average_pool: the mean of each window (ONNX AveragePool). The divisor counts the taps inside
// X, or with count_include_pad also those in the explicit (or auto_pad) padding; taps past the
// end padding, which only ceil_mode makes, never count. A window with nothing to count gives 0.
#pragma once

#include "nnvm/ops/conv/pooling.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// How many taps of the window at output point `o` lie in [lo, hi) along every axis: per axis
// the taps k in [0, K) with lo <= o * stride - pad_begin + k * dilation < hi, a constant where
// every window along the axis lies inside.
inline ir::Expr window_count(const Window& w, const std::vector<ir::Expr>& o, const std::vector<int64_t>& lo,
                             const std::vector<int64_t>& hi) {
  ir::Expr count(int64_t(1));
  for (size_t d = 0; d < w.rank(); ++d) {
    int64_t first = -w.pad_begin[d], last = (w.out[d] - 1) * w.strides[d] - w.pad_begin[d] + w.span(d) - 1;
    if (first >= lo[d] && last < hi[d]) {
      count = count * ir::Expr(w.kernel[d]);
      continue;
    }
    // First tap at or past lo and first tap at or past hi: ceil((bound - start) / dilation),
    // clamped to [0, K]. Division truncates, which agrees with the ceiling wherever the clamp
    // does not already decide.
    ir::Expr start = w.tap(d, o[d], ir::Expr(int64_t(0))), dil(w.dilations[d]), zero(int64_t(0));
    auto taps_before = [&](int64_t bound) {
      ir::Expr t = (ir::Expr(bound) - start + ir::Expr(w.dilations[d] - 1)) / dil;
      return ir::min(ir::max(t, zero), ir::Expr(w.kernel[d]));
    };
    count = count * ir::max(taps_before(hi[d]) - taps_before(lo[d]), zero);
  }
  return ir::max(count, ir::Expr(int64_t(1)));
}
}  // namespace detail

// Two stages: the window sums (guarded, see window_reduce) and their division.
inline te::Tensor average_pool(const te::Tensor& X, const Window& w, bool count_include_pad,
                               const std::string& name = "average_pool") {
  check_pool_dtype(X, false);
  size_t n = w.rank();
  te::Tensor sum = window_reduce(
      X, w, ir::Combiner::sum, [](ir::Expr x) { return x; }, name + "_sum");
  std::vector<int64_t> lo(n, 0), hi = w.in;
  if (count_include_pad)
    for (size_t d = 0; d < n; ++d) lo[d] = -w.pad_begin[d], hi[d] = w.in[d] + w.pad_end[d];
  DataType t = X.dtype();
  return te::compute(
      sum.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> o(v.begin() + 2, v.end());
        return sum(std::vector<ir::Expr>(v.begin(), v.end())) / ir::cast(t, detail::window_count(w, o, lo, hi));
      },
      name);
}

inline OpDef average_pool_def() {
  return OpDef{
      .name = "average_pool",
      .importer_names = {"onnx:AveragePool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            Window w = pool_window(in[0], WindowParams::from(attrs));
            return std::vector<te::Tensor>{average_pool(in[0], w, attrs.get_int("count_include_pad", 0) != 0)};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc =
          "mean of each window (AveragePool; attributes kernel_shape, strides, dilations, pads, auto_pad, "
          "ceil_mode, count_include_pad)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
