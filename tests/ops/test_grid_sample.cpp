// grid_sample (include/nnvm/ops/transform/grid_sample.hpp) against a plain loop that follows the
// ONNX reference step by step (denormalize, round for nearest, clamp or reflect out-of-border
// coordinates, then pad each tap), for 2-D and 3-D, every mode, padding mode and align_corners,
// coordinates far outside [-1, 1] and halfway ties; then its error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_grid_sample {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;

struct Ref {
  std::string mode = "linear", padding = "zeros";
  bool align = false;
};

double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (x < lo) {
    double dx = lo - x, n = std::trunc(dx / range), r = dx - n * range;
    return std::fmod(n, 2) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi, n = std::trunc(dx / range), r = dx - n * range;
    return std::fmod(n, 2) == 0 ? hi - r : lo + r;
  }
  return x;
}

double cubic(double d) {
  const double a = -0.75;
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

NDArray filled(DataType t, Dims s, double (*f)(int64_t)) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(f(i));
    else a.data<double>()[i] = f(i);
  }
  return a;
}

NDArray expect(const NDArray& x, const NDArray& grid, const Ref& r) {
  const Dims& xs = x.shape();
  const Dims& gs = grid.shape();
  size_t k = xs.size() - 2;
  Dims ys{xs[0], xs[1]};
  for (size_t i = 0; i < k; ++i) ys.push_back(gs[1 + i]);
  NDArray y(x.dtype(), ys);
  int64_t points = 1, plane = 1;
  for (size_t i = 0; i < k; ++i) points *= gs[1 + i], plane *= xs[2 + i];
  bool f64 = x.dtype() == dtype::float64;
  std::vector<double> lo(k), hi(k);
  for (size_t i = 0; i < k; ++i) {
    lo[i] = r.align ? 0 : -0.5;
    hi[i] = r.align ? double(xs[2 + i] - 1) : double(xs[2 + i]) - 0.5;
  }
  for (int64_t n = 0; n < xs[0]; ++n)
    for (int64_t c = 0; c < xs[1]; ++c)
      for (int64_t p = 0; p < points; ++p) {
        // Coordinates per spatial axis, in the grid's type.
        std::vector<double> co(k);
        for (size_t i = 0; i < k; ++i) {
          double g = nnvm_test::detail::element(grid, (n * points + p) * int64_t(k) + int64_t(k - 1 - i));
          double d = double(xs[2 + i]), v;
          if (f64) v = r.align ? (g + 1) / 2 * (d - 1) : ((g + 1) * d - 1) / 2;
          else v = r.align ? double((float(g) + 1.f) / 2.f * float(d - 1)) : double(((float(g) + 1.f) * float(d) - 1.f) / 2.f);
          if (r.mode == "nearest") v = std::nearbyint(v);
          if (v < lo[i] || v > hi[i]) {
            if (r.padding == "border") v = std::clamp(v, 0.0, d - 1);
            else if (r.padding == "reflection") v = reflect(v, lo[i], hi[i]);
          }
          // The kernel clamps coordinates to D + 4 pixels out, NaN to the low end.
          v = std::isnan(v) ? -(d + 4) : std::clamp(v, -(d + 4), d + 4);
          co[i] = f64 ? v : double(float(v));
        }
        auto pixel = [&](const std::vector<int64_t>& idx) {
          int64_t flat = 0;
          for (size_t i = 0; i < k; ++i) {
            int64_t j = idx[i], d = xs[2 + i];
            if (r.padding == "zeros" && (j < 0 || j >= d)) return 0.0;
            if (r.padding == "border") j = std::clamp<int64_t>(j, 0, d - 1);
            if (r.padding == "reflection") j = int64_t(reflect(double(j), lo[i], hi[i]));
            flat = flat * d + j;
          }
          return nnvm_test::detail::element(x, (n * xs[1] + c) * plane + flat);
        };
        double value = 0;
        if (r.mode == "nearest") {
          std::vector<int64_t> idx;
          for (double v : co) idx.push_back(int64_t(v));
          value = pixel(idx);
        } else {
          bool cub = r.mode == "cubic";
          int taps = cub ? 4 : 2, first = cub ? -1 : 0, terms = 1;
          for (size_t i = 0; i < k; ++i) terms *= taps;
          for (int t = 0; t < terms; ++t) {
            std::vector<int64_t> idx(k);
            double w = 1;
            int rest = t;
            for (size_t i = 0; i < k; ++i, rest /= taps) {
              int q = rest % taps;
              double f = std::floor(co[i]), frac = co[i] - f;
              idx[i] = int64_t(f) + first + q;
              w *= cub ? cubic(frac - double(first + q)) : (q == 0 ? 1 - frac : frac);
            }
            value += w * pixel(idx);
          }
        }
        int64_t o = (n * xs[1] + c) * points + p;
        if (f64) y.data<double>()[o] = value;
        else y.data<float>()[o] = float(value);
      }
  return y;
}

ops::Attrs attrs_of(const Ref& r) {
  return ops::Attrs().set_string("mode", r.mode).set_string("padding_mode", r.padding).set_int("align_corners", r.align);
}

// Image values, and grid coordinates: multiples of 1/8 in [-1.375, 1.375] (halfway ties for
// nearest, points outside the border), a few far outside.
double image(int64_t i) { return double((i * 37) % 23) * 0.5 - 5; }
double coords(int64_t i) { return i % 17 == 5 ? double(i % 3) * 7.3 - 9 : double((i * 13) % 23 - 11) / 8; }

}  // namespace

TEST_CASE("transform ops: grid_sample") {
  const DataType f32 = dtype::float32;
  std::vector<OpCheck> cases;
  NDArray x = filled(f32, {2, 3, 4, 5}, image), g = filled(f32, {2, 3, 4, 2}, coords);
  // Every mode with every padding mode, align_corners alternating (cubic kernels are large: their
  // C takes long to compile, so the matrix is not squared with align_corners).
  bool align = false;
  for (const char* mode : {"linear", "nearest", "cubic"})
    for (const char* pad : {"zeros", "border", "reflection"}) {
      Ref r{mode, pad, align = !align};
      cases.push_back({str_cat("2-D ", mode, " ", pad, " align_corners ", align), "grid_sample", {x, g}, attrs_of(r),
                       {expect(x, g, r)}});
    }
  NDArray x3 = filled(f32, {1, 2, 3, 4, 5}, image), g3 = filled(f32, {1, 2, 3, 2, 3}, coords);
  for (Ref r : {Ref{"linear", "border", false}, Ref{"nearest", "zeros", true}, Ref{"linear", "reflection", true}})
    cases.push_back({str_cat("3-D ", r.mode, " ", r.padding, " align_corners ", r.align), "grid_sample", {x3, g3},
                     attrs_of(r), {expect(x3, g3, r)}});
  NDArray xd = filled(dtype::float64, {1, 2, 3, 5}, image), gd = filled(dtype::float64, {1, 4, 3, 2}, coords);
  Ref rd{"linear", "reflection", false};
  cases.push_back({"float64 linear reflection", "grid_sample", {xd, gd}, attrs_of(rd), {expect(xd, gd, rd)}});
  // A 1-pixel axis with align_corners: the border is a single point.
  NDArray x1 = filled(f32, {1, 1, 1, 4}, image), g1 = filled(f32, {1, 2, 5, 2}, coords);
  Ref r1{"linear", "reflection", true};
  cases.push_back({"1-pixel axis reflection align_corners", "grid_sample", {x1, g1}, attrs_of(r1), {expect(x1, g1, r1)}});
  // Coordinates far outside, infinite and NaN: every read stays inside X.
  NDArray gw = filled(f32, {1, 3, 4, 2}, [](int64_t i) {
    const double odd[] = {1e20, -1e20, INFINITY, -INFINITY, NAN, 3e9, -0.2, 0.4};
    return odd[i % 8];
  });
  NDArray xw = filled(f32, {1, 2, 3, 5}, image);
  for (Ref r : {Ref{"linear", "zeros", false}, Ref{"nearest", "zeros", true}})
    cases.push_back({str_cat("far and NaN coordinates ", r.mode), "grid_sample", {xw, gw}, attrs_of(r), {expect(xw, gw, r)}});
  nnvm_test::check_ops(cases, "grid_sample");

  using T = ops::TensorType;
  T xt(f32, {2, 3, 4, 5}), gt(f32, {2, 6, 7, 2});
  CHECK(infer_error("grid_sample", {xt, gt}) == "(no error)");
  CHECK(infer_error("grid_sample", {xt, gt}, ops::Attrs().set_string("mode", "area")) == "nnvm.ops.attr");
  CHECK(infer_error("grid_sample", {xt, gt}, ops::Attrs().set_string("padding_mode", "wrap")) == "nnvm.ops.attr");
  CHECK(infer_error("grid_sample", {T(dtype::int32, {2, 3, 4, 5}), gt}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("grid_sample", {xt, T(f32, {2, 6, 7, 3})}) == "nnvm.ops.input_shape");
  CHECK(infer_error("grid_sample", {xt, T(f32, {1, 6, 7, 2})}) == "nnvm.ops.input_shape");
  CHECK(infer_error("grid_sample", {xt, T(f32, {2, 6, 2})}) == "nnvm.ops.input_shape");
  auto out = ops::infer_types(ops::get_op("grid_sample"), {xt, gt});
  CHECK(out[0].shape.size() == 4);
}

}  // namespace ops_grid_sample
