// The sliding window that convolution and pooling share: ONNX's kernel_shape, strides,
// dilations, pads, auto_pad and ceil_mode, checked against the input and resolved to concrete
// pads and output extents. The spatial extents must be constants (auto_pad and the output
// extents are arithmetic on them); the batch and channel extents may be symbolic.
#pragma once

#include "nnvm/ops/checks.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
[[noreturn]] inline void bad_window_attr(const char* attr, const std::string& message) {
  throw UserError("nnvm.ops.attr", message, {"attribute " + std::string(attr)});
}
}  // namespace detail

// The window attributes of one node, as the model wrote them (empty lists: the ONNX default).
struct WindowParams {
  std::vector<int64_t> kernel_shape;        // conv takes it from W when empty; pools require it
  std::vector<int64_t> strides, dilations;  // one per spatial axis; empty: all 1
  std::vector<int64_t> pads;                // [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; empty: all 0
  std::string auto_pad = "NOTSET";          // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  bool ceil_mode = false;                   // pools only: round the output extent up

  static WindowParams from(const Attrs& a) {
    WindowParams p;
    p.kernel_shape = a.get_ints("kernel_shape", {});
    p.strides = a.get_ints("strides", {});
    p.dilations = a.get_ints("dilations", {});
    p.pads = a.get_ints("pads", {});
    p.auto_pad = a.get_string("auto_pad", "NOTSET");
    p.ceil_mode = a.get_int("ceil_mode", 0) != 0;
    return p;
  }
};

// A resolved window over `in.size()` spatial axes. Along axis d, tap k of output o reads input
// coordinate o * strides[d] - pad_begin[d] + k * dilations[d]; coordinates outside [0, in[d])
// are padding.
struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;

  size_t rank() const { return in.size(); }
  // Input coordinates one window covers, first tap to last.
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  ir::Expr tap(size_t d, const ir::Expr& o, const ir::Expr& k) const {
    ir::Expr e = o;
    if (strides[d] != 1) e = e * ir::Expr(strides[d]);
    if (pad_begin[d] != 0) e = e - ir::Expr(pad_begin[d]);
    return e + (dilations[d] == 1 ? k : k * ir::Expr(dilations[d]));
  }
};

// The constant extents of x's axes 2.. ("nnvm.ops.input_shape" for a symbolic one).
inline std::vector<int64_t> spatial_extents(const te::Tensor& x, const char* input) {
  std::vector<int64_t> out;
  for (size_t d = 2; d < x.rank(); ++d) {
    auto c = ir::simplified_const_int(x.shape()[d]);
    if (!c)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", input, " (tensor ", x.name(), ") axis ", d, " has the symbolic extent ",
                              ir::to_string(x.shape()[d]), "; spatial extents must be constants"),
                      {"input " + std::string(input)});
    out.push_back(*c);
  }
  return out;
}

// `values` with one entry per spatial axis (`n`), each at least `least`; empty means `fallback`
// everywhere. "nnvm.ops.attr" naming `attr` otherwise.
inline std::vector<int64_t> spatial_ints(const std::vector<int64_t>& values, const char* attr, size_t n,
                                         int64_t fallback, int64_t least) {
  if (values.empty()) return std::vector<int64_t>(n, fallback);
  if (values.size() != n)
    detail::bad_window_attr(attr, str_cat("attribute '", attr, "' has ", values.size(), " values, expected ", n,
                                          " (one per spatial axis)"));
  for (int64_t v : values)
    if (v < least)
      detail::bad_window_attr(attr, str_cat("attribute '", attr, "' holds ", v, "; values must be at least ", least));
  return values;
}

// Explicit pads split into begin and end halves (2n values, each >= 0).
inline std::pair<std::vector<int64_t>, std::vector<int64_t>> split_window_pads(const std::vector<int64_t>& pads,
                                                                               size_t n) {
  if (pads.empty()) return {std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  if (pads.size() != 2 * n)
    detail::bad_window_attr("pads", str_cat("attribute 'pads' has ", pads.size(), " values, expected ", 2 * n,
                                            " (begin and end for each of the ", n, " spatial axes)"));
  for (int64_t v : pads)
    if (v < 0) detail::bad_window_attr("pads", str_cat("attribute 'pads' holds ", v, "; pads must be >= 0"));
  return {std::vector<int64_t>(pads.begin(), pads.begin() + n), std::vector<int64_t>(pads.begin() + n, pads.end())};
}

inline void check_auto_pad(const std::string& auto_pad) {
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    detail::bad_window_attr("auto_pad", str_cat("attribute 'auto_pad' is '", auto_pad,
                                                "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
}

// The window of a convolution or pool over input extents `in` with the resolved `kernel`.
// Output extents follow ONNX: NOTSET floor((in + pads - span) / stride) + 1, or with ceil_mode
// the ceiling, less one when the last window would start in the end padding; SAME_* ceil(in /
// stride) with the total padding (never negative) split evenly, the odd one at the end (UPPER) or
// the beginning (LOWER); VALID no padding. `pads` is ignored under SAME_* and VALID.
inline Window resolve_window(const WindowParams& p, std::vector<int64_t> in, std::vector<int64_t> kernel) {
  size_t n = in.size();
  check_auto_pad(p.auto_pad);
  Window w;
  w.in = std::move(in);
  w.kernel = std::move(kernel);
  w.strides = spatial_ints(p.strides, "strides", n, 1, 1);
  w.dilations = spatial_ints(p.dilations, "dilations", n, 1, 1);
  auto [begin, end] = split_window_pads(p.pads, n);
  w.pad_begin = std::move(begin);
  w.pad_end = std::move(end);
  w.out.resize(n);
  for (size_t d = 0; d < n; ++d) {
    int64_t s = w.strides[d], span = w.span(d);
    if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
      w.out[d] = (w.in[d] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (w.out[d] - 1) * s + span - w.in[d]);
      w.pad_begin[d] = p.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[d] = total - w.pad_begin[d];
      continue;
    }
    if (p.auto_pad == "VALID") w.pad_begin[d] = w.pad_end[d] = 0;
    int64_t room = w.in[d] + w.pad_begin[d] + w.pad_end[d] - span;
    if (room < 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("spatial axis ", d, ": the window (kernel_shape ", w.kernel[d], ", dilation ",
                              w.dilations[d], ") spans ", span, " but the padded input has only ",
                              w.in[d] + w.pad_begin[d] + w.pad_end[d], " elements, so the output would be empty"),
                      {"attribute kernel_shape"});
    w.out[d] = (p.ceil_mode ? (room + s - 1) / s : room / s) + 1;
    // ONNX (as PyTorch): a window that would start inside the end padding is dropped.
    if (p.ceil_mode && (w.out[d] - 1) * s >= w.in[d] + w.pad_begin[d]) --w.out[d];
  }
  return w;
}

// True where every tap of the output point `o` (spatial indices) along the guarded axes lies in
// [lo[d], hi[d]); `k` are the tap indices. Undefined when no axis needs a guard.
inline ir::Expr window_guard(const Window& w, const std::vector<ir::Expr>& o, const std::vector<ir::Expr>& k,
                             const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  ir::Expr cond;
  for (size_t d = 0; d < w.rank(); ++d) {
    int64_t first = -w.pad_begin[d], last = (w.out[d] - 1) * w.strides[d] - w.pad_begin[d] + w.span(d) - 1;
    if (first >= lo[d] && last < hi[d]) continue;
    ir::Expr c = w.tap(d, o[d], k[d]);
    ir::Expr in = first < lo[d] ? ir::Expr(c >= ir::Expr(lo[d])) : ir::Expr();
    if (last >= hi[d]) in = in.defined() ? ir::Expr(in && (c < ir::Expr(hi[d]))) : ir::Expr(c < ir::Expr(hi[d]));
    cond = cond.defined() ? ir::Expr(cond && in) : in;
  }
  return cond;
}

}  // namespace ops
NNVM_END_NAMESPACE
