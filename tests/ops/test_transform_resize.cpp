// resize (include/nnvm/ops/transform/resize.hpp) against a reference written here as one 1-D
// pass per resized axis (the ONNX reference's separable form), then its error ids. Antialias
// cases use a second reference that sums the stretched kernel over every input position.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_transform_resize {

using namespace nnvm;
using nnvm_test::OpCheck;

namespace {

using Dims = std::vector<int64_t>;

struct Ref {
  std::string mode = "nearest", ctm = "half_pixel", nearest = "round_prefer_floor";
  double a = -0.75;
  bool exclude = false;
  double extrapolation = 0;
  bool antialias = false;
};

double source(int64_t o, int64_t n, int64_t m, double scale, double r0, double r1, const std::string& ctm) {
  double x = double(o), out = scale * double(n);
  if (ctm == "asymmetric") return x / scale;
  if (ctm == "align_corners") return out == 1 ? 0 : x * double(n - 1) / (out - 1);
  if (ctm == "pytorch_half_pixel") return out == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (ctm == "tf_crop_and_resize")
    return r0 * double(n - 1) + (out == 1 ? (r1 - r0) * double(n - 1) / 2 : x * (r1 - r0) * double(n - 1) / (out - 1));
  if (ctm == "half_pixel_symmetric") return double(n) / 2 * (1 - double(m) / out) + (x + 0.5) / scale - 0.5;
  return (x + 0.5) / scale - 0.5;
}

double cubic(double d, double a) {
  d = std::fabs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// Antialias (spec: the kernel stretched by 1/scale when downsampling, weights normalized): the
// kernel k(|p - x| * scale) summed over the integer positions p near x. Positions outside the
// input read the border value (the reference pads with edge values) unless exclude_outside drops
// them; every position with a nonzero weight is visited, zero weights change nothing.
template <class Read>
double antialias_point(double x, double scale, int64_t n, const Ref& r, Read read) {
  double support = r.mode == "cubic" ? 2 : 1, reach = support / scale;
  double sum = 0, total = 0;
  for (int64_t p = int64_t(std::floor(x - reach)) - 1; p <= int64_t(std::ceil(x + reach)) + 1; ++p) {
    double d = std::fabs(double(p) - x) * scale;
    double w = r.mode == "cubic" ? cubic(d, r.a) : std::max(0.0, 1 - d);
    if (r.exclude && (p < 0 || p >= n)) w = 0;
    sum += w * read(p);
    total += w;
  }
  return sum / total;
}

// One pass over axis `ax` of row-major `v` (shape `s`) to extent m; NaN marks tf_crop_and_resize
// points outside the input, replaced by the extrapolation value at the end.
std::vector<double> pass(const std::vector<double>& v, Dims& s, size_t ax, int64_t m, double scale, double r0,
                         double r1, const Ref& r) {
  int64_t outer = 1, inner = 1, n = s[ax];
  for (size_t d = 0; d < ax; ++d) outer *= s[d];
  for (size_t d = ax + 1; d < s.size(); ++d) inner *= s[d];
  std::vector<double> out(size_t(outer * m * inner));
  auto at = [&](int64_t o, int64_t i, int64_t in) { return v[size_t((o * n + std::clamp<int64_t>(i, 0, n - 1)) * inner + in)]; };
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t in = 0; in < inner; ++in) {
        double x = source(j, n, m, scale, r0, r1, r.ctm), f = std::floor(x), t = x - f, res = 0;
        int64_t i = int64_t(f);
        if (r.ctm == "tf_crop_and_resize" && (x < 0 || x > double(n - 1))) {
          res = NAN;
        } else if (r.mode == "nearest") {
          bool up = r.nearest == "ceil" ? t > 0 : r.nearest == "floor" ? false
                  : r.nearest == "round_prefer_ceil" ? t >= 0.5 : t > 0.5;
          res = at(o, i + up, in);
        } else if (r.antialias && r.mode != "nearest" && scale < 1) {
          res = antialias_point(x, scale, n, r, [&](int64_t p) { return at(o, p, in); });
        } else {
          std::vector<int64_t> taps = r.mode == "linear" ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{-1, 0, 1, 2};
          double total = 0;
          std::vector<double> w;
          for (int64_t q : taps) {
            double wq = r.mode == "linear" ? (q == 0 ? 1 - t : t) : cubic(t - double(q), r.a);
            if (r.exclude && (i + q < 0 || i + q >= n)) wq = 0;
            w.push_back(wq);
            total += wq;
          }
          for (size_t q = 0; q < taps.size(); ++q) res += w[q] / (r.exclude ? total : 1) * at(o, i + taps[q], in);
        }
        out[size_t((o * m + j) * inner + in)] = res;
      }
  s[ax] = m;
  return out;
}

NDArray filled(DataType t, Dims s) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = double((i * 37) % 23) * 0.5 - 4;
    if (t == dtype::float32) a.data<float>()[i] = float(v);
    else if (t == dtype::float64) a.data<double>()[i] = v;
    else a.data<int32_t>()[i] = int32_t(v * 2);
  }
  return a;
}
NDArray f32s(std::vector<float> v) {
  NDArray a(dtype::float32, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) a.data<float>()[i] = v[i];
  return a;
}
NDArray i64s(std::vector<int64_t> v) {
  NDArray a(dtype::int64, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) a.data<int64_t>()[i] = v[i];
  return a;
}

// The expected output of resizing `x` over `axes` to extents `m` with `scales` (roi: starts then ends).
NDArray expect(const NDArray& x, const std::vector<int64_t>& axes, const Dims& m, const std::vector<double>& scales,
               const Ref& r, const std::vector<double>& roi = {}) {
  Dims s = x.shape();
  std::vector<double> v(size_t(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i) v[size_t(i)] = nnvm_test::detail::element(x, i);
  size_t k = axes.size();
  for (size_t i = 0; i < k; ++i) {
    size_t ax = size_t(axes[i] < 0 ? axes[i] + int64_t(s.size()) : axes[i]);
    v = pass(v, s, ax, m[i], scales[i], roi.empty() ? 0 : roi[i], roi.empty() ? 1 : roi[i + k], r);
  }
  NDArray out(x.dtype(), s);
  for (size_t i = 0; i < v.size(); ++i) {
    double e = std::isnan(v[i]) ? r.extrapolation : v[i];
    if (x.dtype() == dtype::float32) out.data<float>()[i] = float(e);
    else if (x.dtype() == dtype::float64) out.data<double>()[i] = e;
    else out.data<int32_t>()[i] = int32_t(e);
  }
  return out;
}

ops::Attrs attrs_of(const Ref& r) {
  return ops::Attrs()
      .set_string("mode", r.mode)
      .set_string("coordinate_transformation_mode", r.ctm)
      .set_string("nearest_mode", r.nearest)
      .set_float("cubic_coeff_a", r.a)
      .set_int("exclude_outside", r.exclude)
      .set_float("extrapolation_value", r.extrapolation)
      .set_int("antialias", r.antialias);
}

std::string infer_error(const std::vector<ops::TensorType>& in, const ops::Attrs& attrs) {
  try {
    ops::infer_types(ops::get_op("resize"), in, attrs);
  } catch (const Error& e) {
    return e.id();
  }
  return "(no error)";
}

const DataType f32 = dtype::float32;

}  // namespace

TEST_CASE("transform ops: resize") {
  std::vector<OpCheck> cases;
  auto none = std::nullopt;
  {
    Ref r{.ctm = "asymmetric", .nearest = "floor"};
    NDArray x = filled(f32, {1, 2, 3, 5});
    cases.push_back({"nearest sizes asymmetric floor", "resize", {x, none, none, i64s({1, 2, 7, 3})}, attrs_of(r),
                     {expect(x, {2, 3}, {7, 3}, {7.0 / 3, 3.0 / 5}, r)}});
  }
  {
    Ref r{.nearest = "round_prefer_ceil"};
    NDArray x = filled(f32, {3, 5, 7});
    ops::Attrs a = attrs_of(r).set_ints("axes", {-1, -3});
    cases.push_back({"nearest scales round_prefer_ceil axes -1 -3", "resize", {x, none, f32s({1.5f, 0.6f})}, a,
                     {expect(x, {-1, -3}, {10, 1}, {double(1.5f), double(0.6f)}, r)}});
  }
  {
    Ref r{.mode = "linear"};
    NDArray x = filled(f32, {2, 3, 5});
    cases.push_back({"linear half_pixel scales", "resize", {x, none, f32s({1.f, 1.7f, 0.6f})}, attrs_of(r),
                     {expect(x, {1, 2}, {5, 3}, {double(1.7f), double(0.6f)}, r)}});
  }
  {
    Ref r{.mode = "linear", .ctm = "pytorch_half_pixel"};
    NDArray x = filled(dtype::float64, {1, 1, 4, 5});
    cases.push_back({"linear pytorch_half_pixel sizes float64", "resize", {x, none, none, i64s({1, 1, 1, 3})},
                     attrs_of(r), {expect(x, {2, 3}, {1, 3}, {1.0 / 4, 3.0 / 5}, r)}});
  }
  {
    Ref r{.mode = "cubic", .ctm = "align_corners"};
    NDArray x = filled(f32, {1, 1, 4, 5});
    cases.push_back({"cubic align_corners sizes", "resize", {x, none, none, i64s({1, 1, 7, 3})}, attrs_of(r),
                     {expect(x, {2, 3}, {7, 3}, {7.0 / 4, 3.0 / 5}, r)}});
  }
  {
    Ref r{.mode = "cubic", .a = -0.5, .exclude = true};
    NDArray x = filled(f32, {1, 1, 4, 4});
    cases.push_back({"cubic A -0.5 exclude_outside", "resize", {x, none, f32s({1.f, 1.f, 0.8f, 1.6f})}, attrs_of(r),
                     {expect(x, {2, 3}, {3, 6}, {double(0.8f), double(1.6f)}, r)}});
  }
  {
    Ref r{.mode = "linear", .ctm = "tf_crop_and_resize", .extrapolation = 10};
    NDArray x = filled(f32, {1, 1, 4, 5});
    std::vector<float> roi{0.4f, -0.2f, 1.3f, 0.9f};
    cases.push_back({"linear tf_crop_and_resize extrapolation axes 2 3", "resize", {x, f32s(roi), none, i64s({3, 4})},
                     attrs_of(r).set_ints("axes", {2, 3}),
                     {expect(x, {2, 3}, {3, 4}, {3.0 / 4, 4.0 / 5}, r, {roi[0], roi[1], roi[2], roi[3]})}});
  }
  {
    Ref r{};
    NDArray x = filled(f32, {1, 1, 3, 5});
    ops::Attrs a = attrs_of(r).set_ints("axes", {2, 3}).set_string("keep_aspect_ratio_policy", "not_larger");
    // min(7/3, 8/5) = 1.6: extents round(4.8) = 5 and 8.
    cases.push_back({"nearest sizes not_larger", "resize", {x, none, none, i64s({7, 8})}, a,
                     {expect(x, {2, 3}, {5, 8}, {1.6, 1.6}, r)}});
  }
  {
    Ref r{.mode = "linear", .ctm = "half_pixel_symmetric"};
    NDArray x = filled(f32, {1, 1, 4, 5});
    cases.push_back({"linear half_pixel_symmetric downsample", "resize", {x, none, f32s({1.f, 1.f, 0.6f, 0.7f})},
                     attrs_of(r), {expect(x, {2, 3}, {2, 3}, {double(0.6f), double(0.7f)}, r)}});
  }
  {
    Ref r{.ctm = "align_corners"};
    NDArray x = filled(dtype::int32, {3, 4});
    cases.push_back({"nearest int32 align_corners", "resize", {x, none, f32s({2.f, 0.5f})}, attrs_of(r),
                     {expect(x, {0, 1}, {6, 2}, {2.0, 0.5}, r)}});
  }
  nnvm_test::check_ops(cases, "transform_resize");

  ops::TensorType x{f32, {1, 1, 4, 5}}, sc{f32, {4}}, sz{dtype::int64, {4}}, roi{f32, {0}};
  auto with_scales = ops::Attrs().set_floats("scales", {1, 1, 2, 2});
  CHECK(infer_error({x, roi, sc}, with_scales) == "(no error)");
  CHECK(infer_error({x, roi, sc}, ops::Attrs(with_scales).set_string("mode", "bilinear")) == "nnvm.ops.attr");
  CHECK(infer_error({x, roi, sc}, ops::Attrs(with_scales).set_ints("axes", {1, -3})) == "nnvm.ops.attr");
  CHECK(infer_error({x, roi, sc, sz}, ops::Attrs(with_scales).set_ints("sizes", {1, 1, 8, 8})) == "nnvm.ops.input_shape");
  CHECK(infer_error({x, roi, sc}, ops::Attrs().set_floats("scales", {2, 2})) == "nnvm.ops.input_shape");
  CHECK(infer_error({{dtype::int32, {1, 1, 4, 5}}, roi, sc}, ops::Attrs(with_scales).set_string("mode", "linear")) ==
        "nnvm.ops.input_dtype");
}

TEST_CASE("transform ops: resize antialias") {
  std::vector<OpCheck> cases;
  auto none = std::nullopt;
  NDArray ramp(f32, {1, 1, 4, 4});  // 1 .. 16, the input of the ONNX node cases
  for (int i = 0; i < 16; ++i) ramp.data<float>()[i] = float(i + 1);
  auto at = [](NDArray a, Dims s) {  // `a` with shape s
    NDArray b(a.dtype(), std::move(s));
    std::copy_n(a.data<float>(), a.numel(), b.data<float>());
    return b;
  };
  {
    // Expected outputs copied from the four onnx-node-tests test_resize_downsample_*_antialias
    // cases (test_data_set_0/output_0.pb).
    Ref lin{.mode = "linear", .antialias = true}, cub{.mode = "cubic", .antialias = true};
    cases.push_back({"onnx node downsample_scales_linear_antialias", "resize", {ramp, none, f32s({1, 1, 0.6f, 0.6f})},
                     attrs_of(lin), {at(f32s({2.875f, 4.5f, 9.375f, 11.f}), {1, 1, 2, 2})}});
    cases.push_back({"onnx node downsample_scales_cubic_antialias", "resize", {ramp, none, f32s({1, 1, 0.6f, 0.6f})},
                     attrs_of(cub), {at(f32s({2.5180721f, 4.2858863f, 9.589329f, 11.357142f}), {1, 1, 2, 2})}});
    cases.push_back({"onnx node downsample_sizes_linear_antialias", "resize", {ramp, none, none, i64s({1, 1, 3, 3})},
                     attrs_of(lin),
                     {at(f32s({2.3636363f, 3.590909f, 4.818182f, 7.2727275f, 8.5f, 9.727273f, 12.181818f, 13.409091f,
                               14.636364f}),
                         {1, 1, 3, 3})}});
    cases.push_back({"onnx node downsample_sizes_cubic_antialias", "resize", {ramp, none, none, i64s({1, 1, 3, 3})},
                     attrs_of(cub),
                     {at(f32s({1.7750092f, 3.1200073f, 4.4650054f, 7.1550016f, 8.5f, 9.844998f, 12.534994f,
                               13.8799925f, 15.224991f}),
                         {1, 1, 3, 3})}});
    cases.push_back({"linear antialias, node case vs reference", "resize", {ramp, none, f32s({1, 1, 0.6f, 0.6f})},
                     attrs_of(lin), {expect(ramp, {2, 3}, {2, 2}, {double(0.6f), double(0.6f)}, lin)}});
    cases.push_back({"cubic antialias scales, node case vs reference", "resize", {ramp, none, f32s({1, 1, 0.6f, 0.6f})},
                     attrs_of(cub), {expect(ramp, {2, 3}, {2, 2}, {double(0.6f), double(0.6f)}, cub)}});
  }
  {
    Ref r{.mode = "linear", .antialias = true};
    NDArray x = filled(f32, {7, 9});
    cases.push_back({"linear antialias 2-D scales", "resize", {x, none, f32s({0.45f, 0.7f})}, attrs_of(r),
                     {expect(x, {0, 1}, {3, 6}, {double(0.45f), double(0.7f)}, r)}});
  }
  {
    Ref r{.mode = "cubic", .antialias = true};
    NDArray x = filled(f32, {8, 9});
    cases.push_back({"cubic antialias 2-D sizes", "resize", {x, none, none, i64s({3, 4})}, attrs_of(r),
                     {expect(x, {0, 1}, {3, 4}, {3.0 / 8, 4.0 / 9}, r)}});
  }
  {
    // 0.3: 14 cubic taps on axis 3, wider than the input, so many clamp to the border.
    Ref r{.mode = "cubic", .ctm = "asymmetric", .antialias = true};
    NDArray x = filled(f32, {2, 3, 6, 10});
    cases.push_back({"cubic antialias NCHW scales asymmetric", "resize", {x, none, f32s({1, 1, 0.5f, 0.3f})},
                     attrs_of(r), {expect(x, {2, 3}, {3, 3}, {0.5, double(0.3f)}, r)}});
  }
  {
    // Axis 2 downsampled (antialias), axis 3 upsampled (the plain kernel).
    Ref r{.mode = "linear", .ctm = "pytorch_half_pixel", .exclude = true, .antialias = true};
    NDArray x = filled(dtype::float64, {1, 2, 9, 4});
    cases.push_back({"linear antialias NCHW sizes exclude_outside, one axis up", "resize",
                     {x, none, none, i64s({1, 2, 4, 7})}, attrs_of(r),
                     {expect(x, {2, 3}, {4, 7}, {4.0 / 9, 7.0 / 4}, r)}});
  }
  {
    Ref r{.mode = "cubic", .a = -0.5, .exclude = true, .antialias = true};
    NDArray x = filled(f32, {1, 1, 7, 5});
    cases.push_back({"cubic antialias A -0.5 exclude_outside axes 2 3", "resize", {x, none, f32s({0.5f, 0.65f})},
                     attrs_of(r).set_ints("axes", {2, 3}),
                     {expect(x, {2, 3}, {3, 3}, {0.5, double(0.65f)}, r)}});
  }
  {
    // nearest ignores antialias (the spec applies it to linear and cubic only).
    Ref plain{}, anti{.antialias = true};
    NDArray x = filled(f32, {5, 8});
    cases.push_back({"nearest ignores antialias", "resize", {x, none, f32s({0.6f, 0.5f})}, attrs_of(anti),
                     {expect(x, {0, 1}, {3, 4}, {double(0.6f), 0.5}, plain)}});
  }
  nnvm_test::check_ops(cases, "transform_resize_antialias");

  // 1/100 on two axes: 400 * 400 cubic taps, past the unrolling cap.
  ops::TensorType big{f32, {1, 1, 300, 300}}, sc{f32, {4}}, roi{f32, {0}};
  auto tiny = ops::Attrs().set_floats("scales", {1, 1, 0.01, 0.01}).set_string("mode", "cubic");
  CHECK(infer_error({big, roi, sc}, tiny) == "(no error)");
  CHECK(infer_error({big, roi, sc}, ops::Attrs(tiny).set_int("antialias", 1)) == "nnvm.ops.too_large");
  CHECK(infer_error({big, roi, sc}, ops::Attrs(tiny).set_int("antialias", 1).set_string("mode", "nearest")) ==
        "(no error)");
}

}  // namespace ops_transform_resize
