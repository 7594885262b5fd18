// dft and stft (include/nnvm/ops/nn/dft.hpp, stft.hpp) against plain loops over std::complex in
// double: the textbook sum for DFT, IRFFT as the inverse DFT of the mirrored (Hermitian) spectrum,
// STFT as windowed frames cut from the signal. Real and complex input, onesided, inverse, axes
// other than -2, dft_length padding and truncating, float64 and float16, a long sequence (angle
// accuracy); then the error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <complex>
#include <numbers>

namespace ops_dft {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;
using C = std::complex<double>;

double wave(int64_t i) { return std::sin(double(i) * 0.7) * 2 + double(i % 5) * 0.25 - 0.5; }

NDArray filled(DataType t, Dims s, double (*f)(int64_t) = wave) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(f(i));
    else if (t == dtype::float64) a.data<double>()[i] = f(i);
    else a.values<float16>()[i] = float16(float(f(i)));
  }
  return a;
}

NDArray ints(std::vector<int64_t> v) { return NDArray::from(v, {}); }

// The input as complex values, indexed [outer][j][inner] around `axis` (the last axis of the
// array, the real/complex one, folded in).
struct Seq {
  int64_t outer = 1, len = 1, inner = 1;
  std::vector<C> v;
  C at(int64_t o, int64_t j, int64_t i) const { return v[size_t((o * len + j) * inner + i)]; }
};
Seq complex_view(const NDArray& x, size_t axis) {
  const Dims& s = x.shape();
  Seq q;
  for (size_t d = 0; d < axis; ++d) q.outer *= s[d];
  q.len = s[axis];
  for (size_t d = axis + 1; d + 1 < s.size(); ++d) q.inner *= s[d];
  int64_t parts = s.back();
  for (int64_t e = 0; e < x.numel() / parts; ++e)
    q.v.emplace_back(nnvm_test::detail::element(x, e * parts), parts == 2 ? nnvm_test::detail::element(x, e * parts + 1) : 0.0);
  return q;
}

// y[o][k][i] as an array of `t` with last axis `parts` (1: real part only).
NDArray store(DataType t, Dims shape, const std::vector<C>& y, int64_t parts) {
  NDArray a(t, std::move(shape));
  for (size_t e = 0; e < y.size(); ++e)
    for (int64_t p = 0; p < parts; ++p) {
      double v = p == 0 ? y[e].real() : y[e].imag();
      int64_t i = int64_t(e) * parts + p;
      if (t == dtype::float32) a.data<float>()[i] = float(v);
      else if (t == dtype::float64) a.data<double>()[i] = v;
      else a.values<float16>()[i] = float16(float(v));
    }
  return a;
}

C twiddle(int64_t k, int64_t j, int64_t n, bool inverse) {
  double angle = 2 * std::numbers::pi * double(k * j % n) / double(n);
  return std::polar(1.0, inverse ? angle : -angle);
}

struct Dft {
  int64_t axis = -2;
  int64_t length = 0;  // 0: default
  bool inverse = false, onesided = false;
};

NDArray expect_dft(const NDArray& x, const Dft& d) {
  int64_t rank = int64_t(x.shape().size());
  size_t a = size_t(d.axis < 0 ? d.axis + rank : d.axis);
  Seq q = complex_view(x, a);
  bool irfft = d.inverse && d.onesided;
  int64_t n = d.length ? d.length : irfft ? 2 * (q.len - 1) : q.len;
  int64_t bins = d.onesided && !d.inverse ? n / 2 + 1 : n;
  std::vector<C> y;
  for (int64_t o = 0; o < q.outer; ++o)
    for (int64_t k = 0; k < bins; ++k)
      for (int64_t i = 0; i < q.inner; ++i) {
        // The n samples the transform reads: zero-padded or truncated; for IRFFT the full
        // spectrum, mirrored from its first half, bins 0 and n/2 real.
        std::vector<C> s(static_cast<size_t>(n));
        for (int64_t j = 0; j < n; ++j) {
          if (!irfft) {
            s[size_t(j)] = j < q.len ? q.at(o, j, i) : 0.0;
            continue;
          }
          int64_t h = j <= n / 2 ? j : n - j;
          C v = h < q.len ? q.at(o, h, i) : 0.0;
          if (h == 0 || 2 * h == n) v = v.real();
          s[size_t(j)] = j <= n / 2 ? v : std::conj(v);
        }
        C sum = 0;
        for (int64_t j = 0; j < n; ++j) sum += s[size_t(j)] * twiddle(k, j, n, d.inverse);
        y.push_back(d.inverse ? sum / double(n) : sum);
      }
  Dims shape = x.shape();
  shape[a] = bins;
  shape.back() = irfft ? 1 : 2;
  return store(x.dtype(), shape, y, shape.back());
}

ops::Attrs dft_attrs(const Dft& d) {
  return ops::Attrs().set_int("inverse", d.inverse).set_int("onesided", d.onesided);
}

OpCheck dft_case(std::string label, const NDArray& x, const Dft& d, double tol = 1e-4) {
  std::vector<std::optional<NDArray>> in{x, std::nullopt, ints({d.axis})};
  if (d.length) in[1] = ints({d.length});
  return {std::move(label), "dft", in, dft_attrs(d), {expect_dft(x, d)}, tol, tol};
}

// signal (batch, length, parts), window of frame_length values or empty for all ones.
NDArray expect_stft(const NDArray& x, int64_t step, int64_t frame, const std::vector<double>& window, bool onesided) {
  Seq q = complex_view(x, 1);
  int64_t frames = (q.len - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
  std::vector<C> y;
  for (int64_t b = 0; b < q.outer; ++b)
    for (int64_t f = 0; f < frames; ++f)
      for (int64_t k = 0; k < bins; ++k) {
        C sum = 0;
        for (int64_t j = 0; j < frame; ++j)
          sum += q.at(b, f * step + j, 0) * (window.empty() ? 1.0 : window[size_t(j)]) * twiddle(k, j, frame, false);
        y.push_back(sum);
      }
  return store(x.dtype(), {q.outer, frames, bins, 2}, y, 2);
}

NDArray hann(DataType t, int64_t n) {
  NDArray w(t, {n});
  for (int64_t j = 0; j < n; ++j) {
    double v = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * double(j) / double(n));
    if (t == dtype::float32) w.data<float>()[j] = float(v);
    else w.data<double>()[j] = v;
  }
  return w;
}
std::vector<double> values(const NDArray& a) {
  std::vector<double> v;
  for (int64_t i = 0; i < a.numel(); ++i) v.push_back(nnvm_test::detail::element(a, i));
  return v;
}

}  // namespace

TEST_CASE("nn ops: dft") {
  const DataType f32 = dtype::float32, f64 = dtype::float64;
  NDArray real = filled(f32, {2, 5, 3, 1}), cplx = filled(f32, {2, 6, 3, 2});
  std::vector<OpCheck> cases{
      dft_case("real, axis 1", real, {.axis = 1}),
      dft_case("complex, axis -2", cplx, {.axis = -2}),
      dft_case("complex, axis 0 (rank 4)", cplx, {.axis = 0}),
      dft_case("complex, axis -4 (rank 4)", cplx, {.axis = -4}),
      dft_case("real onesided, even n", filled(f32, {1, 8, 2, 1}), {.axis = 1, .onesided = true}),
      dft_case("real onesided, odd n", filled(f32, {3, 7, 1}), {.axis = 1, .onesided = true}),
      dft_case("complex inverse", cplx, {.axis = 1, .inverse = true}),
      dft_case("real inverse, axis 0 (rank 2)", filled(f32, {5, 1}), {.axis = 0, .inverse = true}),
      dft_case("dft_length pads 5 to 8", real, {.axis = 1, .length = 8}),
      dft_case("dft_length truncates 6 to 4", cplx, {.axis = 1, .length = 4}),
      dft_case("dft_length pads, onesided", real, {.axis = 1, .length = 9, .onesided = true}),
      dft_case("dft_length truncates, inverse", cplx, {.axis = 2, .length = 2, .inverse = true}),
      dft_case("IRFFT, default n = 2 * (6 - 1)", cplx, {.axis = 1, .inverse = true, .onesided = true}),
      dft_case("IRFFT, odd n = 7", cplx, {.axis = 1, .length = 7, .inverse = true, .onesided = true}),
      dft_case("IRFFT, n = 16 pads the half spectrum", cplx, {.axis = 1, .length = 16, .inverse = true, .onesided = true}),
      dft_case("IRFFT, real input", filled(f32, {4, 3, 1}), {.axis = 0, .inverse = true, .onesided = true}),
      dft_case("float64 complex", filled(f64, {3, 9, 2}), {.axis = 1}, 1e-10),
      dft_case("float64 inverse, dft_length", filled(f64, {2, 3, 4, 2}), {.axis = 2, .length = 6, .inverse = true}, 1e-10),
      dft_case("float16 real", filled(dtype::float16, {2, 6, 1}), {.axis = 1}, 2e-2),
      // 509 samples: k * j reaches 2.6e5; unreduced, the float32 angle would reach 3200 rad and be off
      // by ~1e-4 rad in every twiddle.
      dft_case("long real sequence", filled(f32, {509, 1}), {.axis = 0}, 2e-3),
  };
  // Opset 20 leaves axis out: -2.
  cases.push_back({"axis absent (-2)", "dft", {cplx}, {}, {expect_dft(cplx, {.axis = -2})}});
  nnvm_test::check_ops(cases, "dft");

  using T = ops::TensorType;
  auto axis = [](int64_t a) { return ops::Attrs().set_ints("axis", {a}); };
  T x(f32, {2, 5, 3, 2});
  CHECK(infer_error("dft", {x}, axis(2)) == "(no error)");
  CHECK(infer_error("dft", {T(f32, {2, 5, 3, 3})}) == "nnvm.ops.input_shape");
  CHECK(infer_error("dft", {T(f32, {5})}) == "nnvm.ops.input_shape");
  CHECK(infer_error("dft", {T(dtype::int32, {2, 5, 1})}) == "nnvm.ops.input_dtype");
  for (int64_t a : {3, 4, -1, -5}) CHECK(infer_error("dft", {x}, axis(a)) == "nnvm.ops.attr");
  CHECK(infer_error("dft", {x}, ops::Attrs().set_ints("axis", {1, 2})) == "nnvm.ops.attr");
  CHECK(infer_error("dft", {x}, axis(1).set_ints("dft_length", {0})) == "nnvm.ops.attr");
  CHECK(infer_error("dft", {x}, axis(1).set_int("onesided", 2)) == "nnvm.ops.attr");
  // IRFFT of one bin has the default length 0.
  CHECK(infer_error("dft", {T(f32, {3, 1, 2})}, axis(1).set_int("inverse", 1).set_int("onesided", 1)) == "nnvm.ops.attr");
  auto out = ops::infer_types(ops::get_op("dft"), {x}, axis(1).set_int("inverse", 1).set_int("onesided", 1));
  CHECK(*ir::as_const_int(out[0].shape[1]) == 8);
  CHECK(*ir::as_const_int(out[0].shape[3]) == 1);
}

TEST_CASE("nn ops: stft") {
  const DataType f32 = dtype::float32, f64 = dtype::float64;
  NDArray sig = filled(f32, {2, 20, 1}), csig = filled(f32, {1, 16, 2});
  NDArray w8 = hann(f32, 8);
  auto attrs = [](bool onesided) { return ops::Attrs().set_int("onesided", onesided); };
  std::vector<OpCheck> cases{
      {"frame_length, no window", "stft", {sig, ints({3}), std::nullopt, ints({8})}, {}, {expect_stft(sig, 3, 8, {}, true)}},
      {"window, not onesided", "stft", {sig, ints({4}), w8}, attrs(false), {expect_stft(sig, 4, 8, values(w8), false)}},
      {"window and frame_length, complex signal", "stft", {csig, ints({2}), w8, ints({8})}, attrs(false),
       {expect_stft(csig, 2, 8, values(w8), false)}},
      {"complex signal onesided, odd frame", "stft", {csig, ints({5}), std::nullopt, ints({7})}, {},
       {expect_stft(csig, 5, 7, {}, true)}},
      {"neither: one frame of the whole signal", "stft", {sig, ints({1})}, {}, {expect_stft(sig, 1, 20, {}, true)}},
  };
  NDArray sd = filled(f64, {1, 30, 1}), wd = hann(f64, 10);
  cases.push_back({"float64 window", "stft", {sd, ints({6}), wd}, {}, {expect_stft(sd, 6, 10, values(wd), true)}, 1e-10, 1e-10});
  nnvm_test::check_ops(cases, "stft");

  using T = ops::TensorType;
  T s(f32, {2, 20, 1}), step(dtype::int64, {}), none = T::none();
  auto st = [](int64_t step) { return ops::Attrs().set_ints("frame_step", {step}); };
  CHECK(infer_error("stft", {s, step, T(f32, {8})}, st(2)) == "(no error)");
  CHECK(infer_error("stft", {s, step, T(f32, {8}), step}, st(2).set_ints("frame_length", {6})) == "nnvm.ops.input_shape");
  CHECK(infer_error("stft", {s, step, none, step}, st(2).set_ints("frame_length", {21})) == "nnvm.ops.input_shape");
  CHECK(infer_error("stft", {s, step}, st(0)) == "nnvm.ops.attr");
  CHECK(infer_error("stft", {s, step, none, step}, st(1).set_ints("frame_length", {0})) == "nnvm.ops.attr");
  CHECK(infer_error("stft", {T(f32, {20, 1}), step}, st(1)) == "nnvm.ops.input_shape");
  CHECK(infer_error("stft", {T(f32, {2, 20, 3}), step}, st(1)) == "nnvm.ops.input_shape");
  CHECK(infer_error("stft", {s, step, T(f64, {8})}, st(1)) == "nnvm.ops.input_dtype");
  CHECK(infer_error("stft", {s, step, T(f32, {2, 4})}, st(1)) == "nnvm.ops.input_shape");
  auto out = ops::infer_types(ops::get_op("stft"), {s, step, T(f32, {8})}, st(3));
  REQUIRE(out[0].shape.size() == 4);
  CHECK(*ir::as_const_int(out[0].shape[1]) == 5);
  CHECK(*ir::as_const_int(out[0].shape[2]) == 5);
}

}  // namespace ops_dft
