// stft: ONNX STFT (opset 17). signal is (batch, length, 1 or 2), real or complex; frames of
// frame_length samples start every frame_step samples, each is multiplied by window (default all
// ones) and DFT-transformed:
//   output[b, f, k] = sum_j window[j] signal[b, f * frame_step + j] e^{-2 pi i k j / frame_length}
// frame_step and frame_length are value inputs; frame_length defaults to the window's length, else
// the signal's. onesided (default 1) keeps the frame_length/2 + 1 first bins, complex signals too
// (as the ONNX reference does). Output (batch, frames, bins, 2), frames = (length -
// frame_length) / frame_step + 1.
#pragma once

#include "nnvm/ops/nn/dft.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct StftSpec {
  int64_t frame_step = 1;
  std::optional<int64_t> frame_length;
  bool onesided = true;
};

// `window` may be undefined (absent).
inline te::Tensor stft(const te::Tensor& signal, const te::Tensor& window, const StftSpec& spec,
                       std::string name = "stft") {
  using namespace signal_detail;
  check_rank(signal, "signal", 3);
  check_norm_float(signal, "signal");
  int64_t parts = complex_parts(signal, "signal");
  int64_t length = transform_detail::const_extent(signal.shape()[1], "the length axis of input signal");
  int64_t step = positive(spec.frame_step, "frame_step");
  std::optional<int64_t> frame = spec.frame_length;
  if (frame) positive(*frame, "frame_length");
  if (window.defined()) {
    check_rank(window, "window", 1);
    check_same_dtype(signal, "signal", window, "window");
    int64_t w = transform_detail::const_extent(window.shape()[0], "the extent of input window");
    if (frame && *frame != w)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input window has length ", w, " but frame_length is ", *frame, "; they must be equal"),
                      {"input window"});
    frame = w;
  }
  int64_t n = frame.value_or(length);
  if (n > length)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input signal has ", length, " samples, fewer than one frame of ", n), {"input signal"});
  int64_t frames = (length - n) / step + 1;
  std::vector<ir::Expr> shape{signal.shape()[0], ir::Expr(frames), ir::Expr(spec.onesided ? n / 2 + 1 : n),
                              ir::Expr(int64_t(2))};
  DataType t = signal.dtype(), ct = norm_compute_type(t);
  SampleFn sample = [&](const std::vector<ir::Var>& out, const ir::Expr& j) {
    ir::Expr at = ir::Expr(out[1]) * step + j;
    Sample s{ir::cast(ct, signal({out[0], at, ir::Expr(int64_t(0))})), ir::Expr()};
    if (parts == 2) s.im = ir::cast(ct, signal({out[0], at, ir::Expr(int64_t(1))}));
    if (window.defined()) {
      ir::Expr w = ir::cast(ct, window({j}));
      s.re = s.re * w;
      if (s.im.defined()) s.im = s.im * w;
    }
    return s;
  };
  return dft_sum(shape, 2, n, n, false, 1.0, t, ct, sample, std::move(name));
}

inline OpDef stft_def() {
  return OpDef{
      .name = "stft",
      .importer_names = {"onnx:STFT"},
      .input_names = {"signal", "frame_step", "window", "frame_length"},
      .optional_inputs = 2,
      .value_inputs = {"frame_step", "frame_length"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            StftSpec spec;
            std::optional<int64_t> step = signal_detail::scalar_input(attrs, "frame_step");
            if (!step)
              throw UserError("nnvm.ops.attr", "input frame_step is required", {"input frame_step"});
            spec.frame_step = *step;
            spec.frame_length = signal_detail::scalar_input(attrs, "frame_length");
            spec.onesided = flag_attr(attrs, "onesided", true);
            te::Tensor window = transform_detail::given(in, 2) ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{stft(in[0], window, spec)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = "short-time Fourier transform of (batch, length, 1|2) frames (frame_step, window, frame_length, onesided)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
