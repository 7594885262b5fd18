// The ops that sample X bilinearly at data-dependent points: roi_align (conv/roi_align.hpp) and
// deform_conv (conv/deform_conv.hpp), each against a plain loop in double written from the ONNX
// spec and reference. The node tests' configurations and more: both pooling modes, both
// coordinate modes, fixed and adaptive sample grids, boxes partly outside the image, empty ones
// and batch indices out of range; deformable convolution with padding, strides, dilations,
// groups, offset groups, mask, bias, offsets far outside X, and zero offsets against plain conv.
// Then the error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_conv_sampling {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;
const DataType f32 = dtype::float32;

NDArray filled(DataType t, Dims s, const std::function<double(int64_t)>& f) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(f(i));
    else if (t == dtype::float64) a.data<double>()[i] = f(i);
    else a.data<int64_t>()[i] = int64_t(f(i));
  }
  return a;
}
NDArray values(DataType t, Dims s, std::vector<double> v) {
  return filled(t, std::move(s), [v](int64_t i) { return v[size_t(i)]; });
}
double at(const NDArray& a, int64_t i) { return nnvm_test::detail::element(a, i); }
void put(NDArray& a, int64_t i, double v) {
  if (a.dtype() == dtype::float32) a.data<float>()[i] = float(v);
  else a.data<double>()[i] = v;
}
double image(int64_t i) { return double((i * 37) % 23) * 0.5 - 5; }

struct RoiRef {
  std::string mode = "avg", ctm = "half_pixel";
  int64_t oh = 1, ow = 1, ratio = 0;
  double scale = 1.0;
  // Adaptive grids capped at ceil((extent + 1) / output extent) samples per bin and axis, as
  // roi_align documents for boxes larger than the image plus one pixel.
  bool capped = false;
};

ops::Attrs attrs_of(const RoiRef& r) {
  return ops::Attrs()
      .set_string("mode", r.mode)
      .set_string("coordinate_transformation_mode", r.ctm)
      .set_int("output_height", r.oh)
      .set_int("output_width", r.ow)
      .set_int("sampling_ratio", r.ratio)
      .set_float("spatial_scale", r.scale);
}

// RoiAlign as the ONNX reference computes it, one bin at a time.
NDArray roi_expect(const NDArray& x, const NDArray& rois, const NDArray& idx, const RoiRef& r) {
  int64_t C = x.shape()[1], H = x.shape()[2], W = x.shape()[3], R = rois.shape()[0];
  NDArray y(x.dtype(), {R, C, r.oh, r.ow});
  double shift = r.ctm == "half_pixel" ? 0.5 : 0.0;
  for (int64_t n = 0; n < R; ++n) {
    double x1 = at(rois, 4 * n) * r.scale - shift, y1 = at(rois, 4 * n + 1) * r.scale - shift;
    double rw = at(rois, 4 * n + 2) * r.scale - shift - x1, rh = at(rois, 4 * n + 3) * r.scale - shift - y1;
    if (r.ctm == "output_half_pixel") rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    double bh = rh / double(r.oh), bw = rw / double(r.ow);
    int64_t gh = r.ratio > 0 ? r.ratio : int64_t(std::ceil(rh / double(r.oh)));
    int64_t gw = r.ratio > 0 ? r.ratio : int64_t(std::ceil(rw / double(r.ow)));
    if (r.capped) gh = std::min(gh, (H + r.oh) / r.oh), gw = std::min(gw, (W + r.ow) / r.ow);
    // A batch index outside [0, N) is clamped, as roi_align documents (ONNX leaves it undefined).
    int64_t count = std::max<int64_t>(gh * gw, 1), b = std::clamp<int64_t>(int64_t(at(idx, n)), 0, x.shape()[0] - 1);
    for (int64_t c = 0; c < C; ++c)
      for (int64_t ph = 0; ph < r.oh; ++ph)
        for (int64_t pw = 0; pw < r.ow; ++pw) {
          double out = 0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; ++iy)
            for (int64_t ix = 0; ix < gw; ++ix) {
              double yy = y1 + double(ph) * bh + (double(iy) + 0.5) * bh / double(gh);
              double xx = x1 + double(pw) * bw + (double(ix) + 0.5) * bw / double(gw);
              double t[4] = {0, 0, 0, 0};
              if (!(yy < -1 || yy > double(H) || xx < -1 || xx > double(W))) {
                yy = std::max(yy, 0.0), xx = std::max(xx, 0.0);
                int64_t yl = int64_t(yy), xl = int64_t(xx), yh = yl + 1, xh = xl + 1;
                if (yl >= H - 1) yh = yl = H - 1, yy = double(yl);
                if (xl >= W - 1) xh = xl = W - 1, xx = double(xl);
                double ly = yy - double(yl), lx = xx - double(xl);
                auto px = [&](int64_t i, int64_t j) { return at(x, ((b * C + c) * H + i) * W + j); };
                t[0] = (1 - ly) * (1 - lx) * px(yl, xl), t[1] = (1 - ly) * lx * px(yl, xh);
                t[2] = ly * (1 - lx) * px(yh, xl), t[3] = ly * lx * px(yh, xh);
              }
              if (r.mode == "avg") {
                out += t[0] + t[1] + t[2] + t[3];
              } else {
                double v = std::max({t[0], t[1], t[2], t[3]});
                out = first ? v : std::max(out, v);
                first = false;
              }
            }
          if (r.mode == "avg") out /= double(count);
          put(y, ((n * C + c) * r.oh + ph) * r.ow + pw, out);
        }
  }
  return y;
}

struct DeformRef {
  Dims pads{0, 0, 0, 0}, strides{1, 1}, dilations{1, 1};
  int64_t group = 1, offset_group = 1;
};

ops::Attrs attrs_of(const DeformRef& d, const NDArray& w) {
  return ops::Attrs()
      .set_ints("kernel_shape", {w.shape()[2], w.shape()[3]})
      .set_ints("pads", d.pads)
      .set_ints("strides", d.strides)
      .set_ints("dilations", d.dilations)
      .set_int("group", d.group)
      .set_int("offset_group", d.offset_group);
}

// DeformConv from the spec: each tap samples X bilinearly (zero outside) at its window position
// plus its offset, times mask and W. Without offset and mask (null) it is Conv.
NDArray deform_expect(const NDArray& x, const NDArray& w, const NDArray* offset, const NDArray* b, const NDArray* mask,
                      const DeformRef& d) {
  int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  int64_t M = w.shape()[0], Cg = w.shape()[1], KH = w.shape()[2], KW = w.shape()[3];
  int64_t OH = (H + d.pads[0] + d.pads[2] - ((KH - 1) * d.dilations[0] + 1)) / d.strides[0] + 1;
  int64_t OW = (W + d.pads[1] + d.pads[3] - ((KW - 1) * d.dilations[1] + 1)) / d.strides[1] + 1;
  NDArray y(x.dtype(), {N, M, OH, OW});
  auto px = [&](int64_t n, int64_t c, int64_t i, int64_t j) {
    return i < 0 || i >= H || j < 0 || j >= W ? 0.0 : at(x, ((n * C + c) * H + i) * W + j);
  };
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b ? at(*b, m) : 0.0;
          for (int64_t cg = 0; cg < Cg; ++cg) {
            int64_t c = m / (M / d.group) * Cg + cg, og = c / (C / d.offset_group);
            for (int64_t i = 0; i < KH; ++i)
              for (int64_t j = 0; j < KW; ++j) {
                int64_t tap = (og * KH + i) * KW + j;
                double py = double(oh * d.strides[0] - d.pads[0] + i * d.dilations[0]);
                double pxx = double(ow * d.strides[1] - d.pads[1] + j * d.dilations[1]);
                if (offset) {
                  py += at(*offset, ((n * 2 * KH * KW * d.offset_group + 2 * tap) * OH + oh) * OW + ow);
                  pxx += at(*offset, ((n * 2 * KH * KW * d.offset_group + 2 * tap + 1) * OH + oh) * OW + ow);
                }
                double fy = std::floor(py), fx = std::floor(pxx), ly = py - fy, lx = pxx - fx;
                int64_t y0 = int64_t(fy), x0 = int64_t(fx);
                double v = (1 - ly) * (1 - lx) * px(n, c, y0, x0) + (1 - ly) * lx * px(n, c, y0, x0 + 1) +
                           ly * (1 - lx) * px(n, c, y0 + 1, x0) + ly * lx * px(n, c, y0 + 1, x0 + 1);
                if (mask) v *= at(*mask, ((n * KH * KW * d.offset_group + tap) * OH + oh) * OW + ow);
                acc += v * at(w, ((m * Cg + cg) * KH + i) * KW + j);
              }
          }
          put(y, ((n * M + m) * OH + oh) * OW + ow, acc);
        }
  return y;
}

}  // namespace

TEST_CASE("conv ops: roi_align") {
  std::vector<OpCheck> cases;
  // The node tests' shapes (1x1x10x10, three boxes, 5x5 bins, sampling_ratio 2), then a wider
  // image with boxes partly or wholly outside it, an empty box and a box larger than the image.
  NDArray x = filled(f32, {1, 1, 10, 10}, [](int64_t i) { return double((i * 29) % 31) / 31; });
  NDArray rois = values(f32, {3, 4}, {0, 0, 9, 9, 0, 5, 4, 9, 5, 5, 9, 9});
  NDArray idx = values(dtype::int64, {3}, {0, 0, 0});
  for (RoiRef r : {RoiRef{"avg", "output_half_pixel", 5, 5, 2}, RoiRef{"avg", "half_pixel", 5, 5, 2},
                   RoiRef{"max", "output_half_pixel", 5, 5, 2}})
    cases.push_back({str_cat("node test config ", r.mode, " ", r.ctm), "roi_align", {x, rois, idx}, attrs_of(r),
                     {roi_expect(x, rois, idx, r)}});
  NDArray x2 = filled(f32, {2, 3, 6, 8}, image);
  NDArray rois2 = values(f32, {6, 4}, {1.25, 0.5, 6.5, 4.75,    // inside
                                       -3.5, -2.25, 2.75, 3.5,  // partly outside, top left
                                       5.5, 3.25, 11.75, 9.5,   // partly outside, bottom right
                                       -9, -9, -4, -5,          // wholly outside
                                       3, 2, 3, 2,              // empty
                                       -0.5, -0.25, 8.25, 6.25});  // larger than the image
  NDArray idx2 = values(dtype::int64, {6}, {1, 0, 1, 0, 1, 1});
  for (RoiRef r : {RoiRef{"avg", "half_pixel", 3, 2, 0, 1.0}, RoiRef{"max", "half_pixel", 3, 2, 0, 1.0},
                   RoiRef{"avg", "output_half_pixel", 2, 3, 0, 1.0}, RoiRef{"max", "output_half_pixel", 2, 4, 0, 1.0},
                   RoiRef{"avg", "half_pixel", 2, 2, 3, 0.5}, RoiRef{"max", "half_pixel", 4, 3, 1, 0.5}})
    cases.push_back({str_cat(r.mode, " ", r.ctm, " ", r.oh, "x", r.ow, " sampling_ratio ", r.ratio, " scale ", r.scale),
                     "roi_align", {x2, rois2, idx2}, attrs_of(r), {roi_expect(x2, rois2, idx2, r)}});
  // Boxes far larger than the image: the adaptive grid's documented cap.
  NDArray big = values(f32, {2, 4}, {-6, -5, 14, 12, -20.5, 1, 3, 30});
  RoiRef rc{"avg", "half_pixel", 3, 2, 0, 1.0, true};
  NDArray big_idx = values(dtype::int64, {2}, {0, 1});
  cases.push_back({"boxes beyond the adaptive cap", "roi_align", {x2, big, big_idx}, attrs_of(rc),
                   {roi_expect(x2, big, big_idx, rc)}});
  NDArray wild_idx = values(dtype::int64, {6}, {7, -3, 1, 0, 2, -1});
  RoiRef rw{"max", "half_pixel", 2, 2, 2, 1.0};
  cases.push_back({"batch indices out of range", "roi_align", {x2, rois2, wild_idx}, attrs_of(rw),
                   {roi_expect(x2, rois2, wild_idx, rw)}});
  NDArray xd = filled(dtype::float64, {1, 2, 5, 7}, image);
  NDArray roisd = values(dtype::float64, {2, 4}, {0.3, 1.1, 5.9, 4.2, -1.7, 0.4, 3.3, 6.1});
  NDArray idxd = values(dtype::int64, {2}, {0, 0});
  RoiRef rd{"avg", "half_pixel", 2, 3, 0, 1.0};
  cases.push_back(
      {"float64 adaptive", "roi_align", {xd, roisd, idxd}, attrs_of(rd), {roi_expect(xd, roisd, idxd, rd)}});
  nnvm_test::check_ops(cases, "roi_align");

  using T = ops::TensorType;
  T xt(f32, {2, 3, 6, 8}), rt(f32, {5, 4}), it(dtype::int64, {5});
  CHECK(infer_error("roi_align", {xt, rt, it}) == "(no error)");
  auto out = ops::infer_types(ops::get_op("roi_align"), {xt, rt, it}, attrs_of(RoiRef{"avg", "half_pixel", 3, 2}));
  CHECK(out[0].shape.size() == 4);
  CHECK(ir::to_string(out[0].shape[0]) == "5");
  CHECK(ir::to_string(out[0].shape[2]) == "3");
  CHECK(infer_error("roi_align", {xt, rt, it}, ops::Attrs().set_string("mode", "sum")) == "nnvm.ops.attr");
  ops::Attrs asymmetric = ops::Attrs().set_string("coordinate_transformation_mode", "asymmetric");
  CHECK(infer_error("roi_align", {xt, rt, it}, asymmetric) == "nnvm.ops.attr");
  CHECK(infer_error("roi_align", {xt, rt, it}, ops::Attrs().set_int("output_height", 0)) == "nnvm.ops.attr");
  CHECK(infer_error("roi_align", {xt, rt, it}, ops::Attrs().set_int("sampling_ratio", -1)) == "nnvm.ops.attr");
  CHECK(infer_error("roi_align", {T(dtype::int32, {2, 3, 6, 8}), rt, it}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("roi_align", {xt, T(dtype::float64, {5, 4}), it}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("roi_align", {xt, rt, T(dtype::int32, {5})}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("roi_align", {T(f32, {2, 3, 6}), rt, it}) == "nnvm.ops.input_shape");
  CHECK(infer_error("roi_align", {xt, T(f32, {5, 5}), it}) == "nnvm.ops.input_shape");
  CHECK(infer_error("roi_align", {xt, rt, T(dtype::int64, {4})}) == "nnvm.ops.input_shape");
}

TEST_CASE("conv ops: deform_conv") {
  std::vector<OpCheck> cases;
  auto add = [&](const std::string& label, const NDArray& x, const NDArray& w, const NDArray& off,
                 const std::optional<NDArray>& b, const std::optional<NDArray>& mask, const DeformRef& d) {
    std::vector<std::optional<NDArray>> in{x, w, off};
    if (b || mask) in.push_back(b);
    if (mask) in.push_back(mask);
    NDArray want = deform_expect(x, w, &off, b ? &*b : nullptr, mask ? &*mask : nullptr, d);
    cases.push_back({label, "deform_conv", in, attrs_of(d, w), {want}});
  };
  // Offsets in [-1.5, 1.5] on a 1/8 grid, some far outside X.
  auto offsets = [](int64_t i) { return i % 13 == 7 ? double(i % 3) * 6.5 - 7 : double((i * 11) % 25 - 12) / 8; };
  // The node tests' configurations: 1x1x3x3 by 2x2 without and with padding, with mask and bias,
  // and two offset groups over two channels.
  NDArray x = filled(f32, {1, 1, 3, 3}, [](int64_t i) { return double(i); });
  NDArray w = filled(f32, {1, 1, 2, 2}, [](int64_t) { return 1.0; });
  add("node test without padding", x, w, filled(f32, {1, 8, 2, 2}, offsets), std::nullopt, std::nullopt, {});
  add("node test with padding", x, w, filled(f32, {1, 8, 4, 4}, offsets), std::nullopt, std::nullopt, {{1, 1, 1, 1}});
  add("node test mask and bias", x, w, filled(f32, {1, 8, 2, 2}, offsets), values(f32, {1}, {0.5}),
      filled(f32, {1, 4, 2, 2}, [](int64_t i) { return double(i % 5) / 4; }), {});
  NDArray x2 = filled(f32, {1, 2, 3, 3}, image);
  add("node test offset groups", x2, filled(f32, {1, 2, 2, 2}, image), filled(f32, {1, 16, 2, 2}, offsets),
      std::nullopt, std::nullopt, {.offset_group = 2});
  // Strides, dilations, asymmetric pads, groups and offset groups together, with mask and bias.
  NDArray x3 = filled(f32, {2, 4, 7, 6}, image);
  NDArray w3 = filled(f32, {6, 2, 3, 2}, [](int64_t i) { return image(i * 5) / 4; });
  DeformRef d3{{1, 0, 2, 1}, {2, 1}, {1, 2}, 2, 2};
  // Output 4 x 5: (7 + 3 - 3) / 2 + 1 and (6 + 1 - 3) / 1 + 1.
  NDArray off3 = filled(f32, {2, 2 * 2 * 3 * 2, 4, 5}, offsets);
  NDArray m3 = filled(f32, {2, 2 * 3 * 2, 4, 5}, [](int64_t i) { return double(i % 7) / 6; });
  NDArray b3 = values(f32, {6}, {1, -1, 0.5, 0, 2, -2});
  add("stride dilation pads group 2 offset_group 2 mask bias", x3, w3, off3, b3, m3, d3);
  add("group 2 offset_group 4, mask without bias", x3, w3, filled(f32, {2, 4 * 2 * 3 * 2, 4, 5}, offsets), std::nullopt,
      filled(f32, {2, 4 * 3 * 2, 4, 5}, [](int64_t i) { return double(i % 3) - 0.5; }),
      {{1, 0, 2, 1}, {2, 1}, {1, 2}, 2, 4});
  NDArray xd = filled(dtype::float64, {1, 3, 5, 4}, image), wd = filled(dtype::float64, {2, 3, 2, 2}, image);
  add("float64 pads", xd, wd, filled(dtype::float64, {1, 8, 6, 5}, offsets), values(dtype::float64, {2}, {0.25, -3}),
      std::nullopt, {{1, 1, 1, 1}});
  // Zero offsets and no mask: deform_conv and conv give the same plain convolution.
  DeformRef dz{{1, 1, 0, 1}, {1, 2}, {2, 1}, 2, 1};
  NDArray wz = filled(f32, {4, 2, 2, 3}, image), bz = values(f32, {4}, {0, 1, 2, 3});
  NDArray plain = deform_expect(x3, wz, nullptr, &bz, nullptr, dz);
  NDArray zero = filled(f32, {2, 2 * 2 * 3, plain.shape()[2], plain.shape()[3]}, [](int64_t) { return 0.0; });
  cases.push_back({"zero offsets", "deform_conv", {x3, wz, zero, bz}, attrs_of(dz, wz), {plain}});
  cases.push_back({"plain conv, same data", "conv", {x3, wz, bz},
                   ops::Attrs()
                       .set_ints("pads", dz.pads)
                       .set_ints("strides", dz.strides)
                       .set_ints("dilations", dz.dilations)
                       .set_int("group", 2),
                   {plain}});
  nnvm_test::check_ops(cases, "deform_conv");

  using T = ops::TensorType;
  T xt(f32, {1, 4, 7, 6}), wt(f32, {6, 2, 3, 2}), ot(f32, {1, 24, 5, 5}), bt(f32, {6}), mt(f32, {1, 12, 5, 5});
  ops::Attrs a = ops::Attrs().set_int("group", 2).set_int("offset_group", 2);
  CHECK(infer_error("deform_conv", {xt, wt, ot, bt, mt}, a) == "(no error)");
  CHECK(infer_error("deform_conv", {xt, wt, ot, T::none(), mt}, a) == "(no error)");
  CHECK(infer_error("deform_conv", {xt, wt, ot}, ops::Attrs(a).set_int("offset_group", 0)) == "nnvm.ops.attr");
  CHECK(infer_error("deform_conv", {xt, wt, ot}, ops::Attrs(a).set_int("group", 0)) == "nnvm.ops.attr");
  CHECK(infer_error("deform_conv", {xt, wt, ot}, ops::Attrs(a).set_ints("strides", {1})) == "nnvm.ops.attr");
  CHECK(infer_error("deform_conv", {xt, wt, ot}, ops::Attrs(a).set_ints("kernel_shape", {3, 3})) == "nnvm.ops.attr");
  CHECK(infer_error("deform_conv", {xt, wt, ot}, ops::Attrs(a).set_int("offset_group", 3)) == "nnvm.ops.input_shape");
  CHECK(infer_error("deform_conv", {xt, wt, ot}, ops::Attrs(a).set_int("group", 3)) == "nnvm.ops.input_shape");
  CHECK(infer_error("deform_conv", {xt, wt, T(f32, {1, 24, 5, 4})}, a) == "nnvm.ops.input_shape");
  CHECK(infer_error("deform_conv", {xt, wt, T(f32, {1, 12, 5, 5})}, a) == "nnvm.ops.input_shape");
  CHECK(infer_error("deform_conv", {xt, wt, ot, bt, T(f32, {1, 24, 5, 5})}, a) == "nnvm.ops.input_shape");
  CHECK(infer_error("deform_conv", {xt, wt, ot, T(f32, {5})}, a) == "nnvm.ops.input_shape");
  CHECK(infer_error("deform_conv", {T(f32, {1, 4, 7}), wt, ot}, a) == "nnvm.ops.input_shape");
  CHECK(infer_error("deform_conv", {xt, wt, T(dtype::float64, {1, 24, 5, 5})}, a) == "nnvm.ops.input_dtype");
  CHECK(infer_error("deform_conv", {T(dtype::int32, {1, 4, 7, 6}), wt, ot}, a) == "nnvm.ops.input_dtype");
}

}  // namespace ops_conv_sampling
