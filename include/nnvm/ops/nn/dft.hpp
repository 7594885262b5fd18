// dft: ONNX DFT (opset 17 and 20). The input's last axis holds a real value (extent 1) or a
// complex one (extent 2: real, imaginary); the transform runs along `axis` (the value input
// "axis", default -2; the importer turns opset 17's attribute into it) over n = dft_length samples
// (value input, default the axis extent): missing samples are zeros, extra ones are dropped.
//   forward: y[k] = sum_j x[j] e^{-2 pi i k j / n},   inverse: y[k] = 1/n sum_j x[j] e^{+2 pi i k j / n}
// onesided forward keeps the n/2 + 1 first bins (RFFT). onesided inverse (IRFFT) reads the first
// n/2 + 1 bins of a Hermitian spectrum, default n = 2 * (extent - 1), and returns the real signal
// (last axis 1). Real input to either is taken as having a zero imaginary part, as the ONNX
// reference does.
//
// Cost: a direct O(n^2) sum per output element, one reduction stage; float16/bfloat16 compute in
// float32 with a cast stage after it.
#pragma once

#include <numbers>
#include <optional>

#include "nnvm/ops/nn/moments.hpp"
#include "nnvm/ops/reduce/reduce_common.hpp"
#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {
namespace signal_detail {

// One complex sample as expressions in the compute type; `im` undefined for a real sample.
struct Sample {
  ir::Expr re, im;
};
// The sample j of the sequence that output element `out` transforms.
using SampleFn = std::function<Sample(const std::vector<ir::Var>& out, const ir::Expr& j)>;

// The tensor of `shape` whose element [..., k (at `freq_axis`), ..., c] is part c (0 real,
// 1 imaginary) of scale * sum_{j < count} sample(j) e^{-+2 pi i k j / n}; a last axis of extent 1
// holds the real part only. Computes in `ct` and casts to `t` in a second stage when they differ.
inline te::Tensor dft_sum(const std::vector<ir::Expr>& shape, size_t freq_axis, int64_t n, int64_t count, bool inverse,
                          double scale, DataType t, DataType ct, const SampleFn& sample, std::string name) {
  bool cast_back = ct != t;
  bool real_only = transform_detail::const_extent(shape.back(), "the output's last axis") == 1;
  auto r = te::reduce_axis(ir::Expr(count), "j");
  te::Tensor acc = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr j = r.var();
        // k * j reduced mod n in integers keeps the angle in [0, 2 pi), where float twiddles
        // stay accurate however long the sequence.
        ir::Expr m = (ir::Expr(v[freq_axis]) * j) % n;
        ir::Expr angle = ir::cast(ct, m) * ir::make_const(ct, 2 * std::numbers::pi / double(n));
        // At whole and half turns sin is exactly 0, at quarter turns cos is: the rounded angle
        // would give ~1e-7 instead, and in a bin whose true value is 0 (the imaginary part of a
        // real signal's bins 0 and n/2) those add up over every sample.
        ir::Expr zero = ir::make_zero(ct);
        ir::Expr s = ir::select((m * int64_t(2)) % n == int64_t(0), zero, ir::call(ir::CallOp::sin, angle));
        ir::Expr c = ir::select((m * int64_t(4)) % n == int64_t(0) && (m * int64_t(2)) % n != int64_t(0), zero,
                                ir::call(ir::CallOp::cos, angle));
        if (!inverse) s = -s;
        Sample x = sample(v, j);
        // (re + i im)(c + i s), s signed by the direction
        ir::Expr re = x.im.defined() ? x.re * c - x.im * s : x.re * c;
        ir::Expr im = x.im.defined() ? x.re * s + x.im * c : x.re * s;
        ir::Expr term = real_only ? re : ir::select(ir::Expr(v.back()) == int64_t(0), re, im);
        if (scale != 1) term = term * ir::make_const(ct, scale);
        return te::sum(term, {r});
      },
      cast_back ? name + "_acc" : name);
  if (!cast_back) return acc;
  return te::compute(
      shape, [&](const std::vector<ir::Var>& v) { return ir::cast(t, acc(as_index(v))); }, std::move(name));
}

// The single integer of value input `name` (a scalar or a list of one), or nullopt when absent.
inline std::optional<int64_t> scalar_input(const Attrs& attrs, const char* name) {
  if (!attrs.has(name)) return std::nullopt;
  const std::vector<int64_t>& v = attrs.get_ints(name);
  if (v.size() != 1)
    throw UserError("nnvm.ops.attr", str_cat("input ", name, " holds ", v.size(), " values, expected one"),
                    {str_cat("input ", name)});
  return v[0];
}

// "nnvm.ops.attr" unless a length-like value input is at least 1.
inline int64_t positive(int64_t v, const char* name) {
  if (v < 1)
    throw UserError("nnvm.ops.attr", str_cat("input ", name, " is ", v, " but must be at least 1"), {str_cat("input ", name)});
  return v;
}

// The extent of the real/complex axis of `x` (input `input`): 1 or 2, "nnvm.ops.input_shape" otherwise.
inline int64_t complex_parts(const te::Tensor& x, const char* input) {
  int64_t parts = transform_detail::const_extent(x.shape().back(), str_cat("the last axis of input ", input));
  if (parts != 1 && parts != 2)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axis of input ", input, " (tensor ", x.name(), ") has extent ", parts,
                            ", expected 1 (real) or 2 (complex)"),
                    {str_cat("input ", input)});
  return parts;
}

}  // namespace signal_detail

struct DftSpec {
  int64_t axis = -2;
  std::optional<int64_t> length;  // dft_length
  bool inverse = false, onesided = false;
};

inline te::Tensor dft(const te::Tensor& x, const DftSpec& spec, std::string name = "dft") {
  using namespace signal_detail;
  check_rank(x, "input", 2, 8);
  check_norm_float(x, "input");
  int64_t parts = complex_parts(x, "input");
  // The last axis is the real/complex one, never transformed: valid axes are [-r, -2] and [0, r-2].
  int64_t rank = int64_t(x.rank());
  if (spec.axis < -rank || spec.axis > rank - 2 || spec.axis == -1)
    throw UserError("nnvm.ops.attr",
                    str_cat("input axis is ", spec.axis, " but must lie in [", -rank, ", -2] or [0, ", rank - 2, "]"),
                    {"input axis"});
  size_t a = size_t(spec.axis < 0 ? spec.axis + rank : spec.axis);
  int64_t m = transform_detail::const_extent(x.shape()[a], str_cat("the transformed axis ", a, " of the input"));
  bool irfft = spec.inverse && spec.onesided;
  int64_t n = positive(spec.length.value_or(irfft ? 2 * (m - 1) : m), "dft_length");
  std::vector<ir::Expr> shape = x.shape();
  shape[a] = ir::Expr(spec.onesided && !spec.inverse ? n / 2 + 1 : n);
  shape.back() = ir::Expr(int64_t(irfft ? 1 : 2));
  // IRFFT sums the given half of the spectrum, each bin but 0 and n/2 standing for its mirror too.
  int64_t count = std::min(m, irfft ? n / 2 + 1 : n);
  DataType t = x.dtype(), ct = norm_compute_type(t);
  SampleFn sample = [&](const std::vector<ir::Var>& out, const ir::Expr& j) {
    std::vector<ir::Expr> idx = as_index(out);
    idx[a] = j;
    idx.back() = ir::Expr(int64_t(0));
    Sample s{ir::cast(ct, x(idx)), ir::Expr()};
    if (parts == 2) {
      idx.back() = ir::Expr(int64_t(1));
      s.im = ir::cast(ct, x(idx));
    }
    if (irfft) {
      // Bins 0 and n/2 are their own mirrors; their imaginary parts are dropped (numpy's irfft).
      ir::Expr edge = j == int64_t(0) || j * int64_t(2) == n;
      s.re = s.re * ir::select(edge, ir::make_const(ct, 1), ir::make_const(ct, 2));
      if (s.im.defined()) s.im = s.im * ir::select(edge, ir::make_const(ct, 0), ir::make_const(ct, 2));
    }
    return s;
  };
  return dft_sum(shape, a, n, count, spec.inverse, spec.inverse ? 1.0 / double(n) : 1.0, t, ct, sample, std::move(name));
}

inline OpDef dft_def() {
  return OpDef{
      .name = "dft",
      .importer_names = {"onnx:DFT"},
      .input_names = {"input", "dft_length", "axis"},
      .optional_inputs = 2,
      .value_inputs = {"dft_length", "axis"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            DftSpec spec;
            spec.axis = signal_detail::scalar_input(attrs, "axis").value_or(-2);
            spec.length = signal_detail::scalar_input(attrs, "dft_length");
            spec.inverse = flag_attr(attrs, "inverse", false);
            spec.onesided = flag_attr(attrs, "onesided", false);
            return std::vector<te::Tensor>{dft(in[0], spec)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = "discrete Fourier transform along input axis (inverse, onesided, dft_length); direct O(n^2) sum",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
