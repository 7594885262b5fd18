// The blocked-layout ops: layout_transform between NCHW and NCHW[x]c, conv_nchwc and
// depthwise_conv_nchwc, through check_ops (interpreter, C, LLVM), against loops written here in
// the blocked indexing itself; odd spatial extents, row tiles that do not divide the output
// width, strides, dilations, asymmetric pads; shape and attribute errors.
#include "support/pch.hpp"
#include "support/op_check.hpp"

namespace ops_conv_nchwc {

using namespace nnvm;
using nnvm_test::OpCheck;

namespace {

using Ints = std::vector<int64_t>;

NDArray random_array(const Ints& shape, uint32_t seed) {
  NDArray a(dtype::float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& x : a.values<float>()) x = dist(rng);
  return a;
}

// Row-major flat offset of `idx` in `shape`.
int64_t offset(const Ints& shape, const Ints& idx) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}

struct Conv2d {
  int64_t stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1, top = 0, left = 0, bottom = 0, right = 0;
  ops::Attrs attrs() const {
    ops::Attrs a;
    a.set_ints("strides", {stride_h, stride_w});
    a.set_ints("dilations", {dil_h, dil_w});
    a.set_ints("pads", {top, left, bottom, right});
    return a;
  }
  int64_t out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) const {
    return (in + pb + pe - ((k - 1) * d + 1)) / s + 1;
  }
};

// x (N, Cb, H, W, ib), w (Mb, Cb, KH, KW, ib, ob), b (Mb, ob) or empty.
NDArray ref_conv_nchwc(const NDArray& x, const NDArray& w, const NDArray* b, const Conv2d& g) {
  Ints xs = x.shape(), ws = w.shape();
  int64_t N = xs[0], Cb = xs[1], H = xs[2], W = xs[3], ib = xs[4], Mb = ws[0], KH = ws[2], KW = ws[3], ob = ws[5];
  int64_t OH = g.out(H, KH, g.stride_h, g.dil_h, g.top, g.bottom), OW = g.out(W, KW, g.stride_w, g.dil_w, g.left, g.right);
  NDArray y(dtype::float32, {N, Mb, OH, OW, ob});
  auto xv = x.values<float>();
  auto wv = w.values<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t mo = 0; mo < Mb; ++mo)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t mi = 0; mi < ob; ++mi) {
            double acc = b ? double(b->values<float>()[size_t(mo * ob + mi)]) : 0.0;
            for (int64_t co = 0; co < Cb; ++co)
              for (int64_t kh = 0; kh < KH; ++kh)
                for (int64_t kw = 0; kw < KW; ++kw) {
                  int64_t ih = oh * g.stride_h - g.top + kh * g.dil_h, iw = ow * g.stride_w - g.left + kw * g.dil_w;
                  if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                  for (int64_t ci = 0; ci < ib; ++ci)
                    acc += double(xv[size_t(offset(xs, {n, co, ih, iw, ci}))]) *
                           double(wv[size_t(offset(ws, {mo, co, kh, kw, ci, mi}))]);
                }
            y.values<float>()[size_t(offset(y.shape(), {n, mo, oh, ow, mi}))] = float(acc);
          }
  return y;
}

// x (N, Cb, H, W, c), w (Cb, KH, KW, c), b (Cb, c) or empty.
NDArray ref_depthwise_nchwc(const NDArray& x, const NDArray& w, const NDArray* b, const Conv2d& g) {
  Ints xs = x.shape(), ws = w.shape();
  int64_t N = xs[0], Cb = xs[1], H = xs[2], W = xs[3], c = xs[4], KH = ws[1], KW = ws[2];
  int64_t OH = g.out(H, KH, g.stride_h, g.dil_h, g.top, g.bottom), OW = g.out(W, KW, g.stride_w, g.dil_w, g.left, g.right);
  NDArray y(dtype::float32, {N, Cb, OH, OW, c});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t co = 0; co < Cb; ++co)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow)
          for (int64_t ci = 0; ci < c; ++ci) {
            double acc = b ? double(b->values<float>()[size_t(co * c + ci)]) : 0.0;
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * g.stride_h - g.top + kh * g.dil_h, iw = ow * g.stride_w - g.left + kw * g.dil_w;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x.values<float>()[size_t(offset(xs, {n, co, ih, iw, ci}))]) *
                       double(w.values<float>()[size_t(offset(ws, {co, kh, kw, ci}))]);
              }
            y.values<float>()[size_t(offset(y.shape(), {n, co, oh, ow, ci}))] = float(acc);
          }
  return y;
}

// NCHW (N, C, H, W) to NCHW{b}c and back, element by element.
NDArray ref_block(const NDArray& x, int64_t b) {
  Ints s = x.shape();
  NDArray y(dtype::float32, {s[0], s[1] / b, s[2], s[3], b});
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w)
          y.values<float>()[size_t(offset(y.shape(), {n, c / b, h, w, c % b}))] =
              x.values<float>()[size_t(offset(s, {n, c, h, w}))];
  return y;
}

ops::Attrs layouts(const std::string& src, const std::string& dst) {
  ops::Attrs a;
  a.set_string("src_layout", src);
  a.set_string("dst_layout", dst);
  return a;
}

}  // namespace

TEST_CASE("layout_transform moves feature maps between NCHW and blocked layouts") {
  NDArray x = random_array({2, 12, 5, 7}, 1);
  NDArray x4 = ref_block(x, 4), x6 = ref_block(x, 6);
  nnvm_test::check_ops({
                           OpCheck{"NCHW to NCHW4c", "layout_transform", {x}, layouts("NCHW", "NCHW4c"), {x4}},
                           OpCheck{"NCHW4c to NCHW", "layout_transform", {x4}, layouts("NCHW4c", "NCHW"), {x}},
                           OpCheck{"NCHW4c to NCHW6c", "layout_transform", {x4}, layouts("NCHW4c", "NCHW6c"), {x6}},
                       },
                       "layout_transform");
  auto& def = ops::default_registry().get("layout_transform");
  ops::TensorType t(dtype::float32, {2, 12, 5, 7});
  CHECK_THROWS_WITH_AS(ops::infer_types(def, {t}, layouts("NCHW", "NCHW5c")), doctest::Contains("does not divide"),
                       UserError);
  CHECK_THROWS_WITH_AS(ops::infer_types(def, {t}, layouts("NCHW", "NCWH")), doctest::Contains("different axes"),
                       UserError);
  CHECK_THROWS_WITH_AS(ops::infer_types(def, {t}, layouts("NCHW", "NCHW0c")), doctest::Contains("dst_layout"),
                       UserError);
  CHECK_THROWS_WITH_AS(ops::infer_types(def, {t}, layouts("NCHW8c", "NCHW")), doctest::Contains("rank"), UserError);
}

TEST_CASE("conv_nchwc matches a direct blocked convolution") {
  std::vector<OpCheck> cases;
  auto add = [&](const std::string& label, Ints xs, Ints ws, bool bias, Conv2d g) {
    NDArray x = random_array(xs, uint32_t(cases.size() * 3 + 1)), w = random_array(ws, uint32_t(cases.size() * 3 + 2));
    NDArray b = random_array({ws[0], ws[5]}, uint32_t(cases.size() * 3 + 3));
    std::vector<std::optional<NDArray>> in{x, w};
    if (bias) in.push_back(b);
    cases.push_back(OpCheck{label, "conv_nchwc", in, g.attrs(), {ref_conv_nchwc(x, w, bias ? &b : nullptr, g)}});
  };
  // 3x3 pad 1: row tile 7 divides the width 7; the input block 3 is not a vector.
  add("3x3 pad 1, ib 3, ob 8", {1, 2, 6, 7, 3}, {2, 2, 3, 3, 3, 8}, true, {.top = 1, .left = 1, .bottom = 1, .right = 1});
  // Width 9: no tile of 4..8 divides it, so the tile has a tail; ob 16 is two vectors.
  add("3x3, ob 16, width with a tail", {1, 1, 5, 11, 8}, {1, 1, 3, 3, 8, 16}, true, {});
  add("stride 2, dilation 2, asymmetric pads, no bias", {2, 2, 9, 10, 4}, {3, 2, 3, 2, 4, 8}, false,
      {.stride_h = 2, .stride_w = 2, .dil_h = 2, .dil_w = 1, .top = 2, .left = 0, .bottom = 1, .right = 3});
  add("1x1 stride 2", {1, 4, 7, 7, 2}, {2, 4, 1, 1, 2, 8}, true, {.stride_h = 2, .stride_w = 2});
  nnvm_test::check_ops(cases, "conv_nchwc");

  auto& def = ops::default_registry().get("conv_nchwc");
  ops::TensorType x(dtype::float32, {1, 2, 6, 7, 4});
  CHECK_THROWS_WITH_AS(ops::infer_types(def, {x, ops::TensorType(dtype::float32, {2, 3, 3, 3, 4, 8})}, {}),
                       doctest::Contains("channel blocks"), UserError);
  CHECK_THROWS_WITH_AS(ops::infer_types(def, {x, ops::TensorType(dtype::float32, {2, 2, 3, 3, 2, 8})}, {}),
                       doctest::Contains("block size"), UserError);
  CHECK_THROWS_WITH_AS(ops::infer_types(def,
                                        {x, ops::TensorType(dtype::float32, {2, 2, 3, 3, 4, 8}),
                                         ops::TensorType(dtype::float32, {2, 4})},
                                        {}),
                       doctest::Contains("input B"), UserError);
  CHECK_THROWS_AS(ops::infer_types(def, {x, ops::TensorType(dtype::float32, {2, 2, 9, 3, 4, 8})}, {}), UserError);
}

TEST_CASE("depthwise_conv_nchwc matches a direct blocked depthwise convolution") {
  std::vector<OpCheck> cases;
  auto add = [&](const std::string& label, Ints xs, int64_t k, bool bias, Conv2d g) {
    NDArray x = random_array(xs, uint32_t(cases.size() * 3 + 7)),
            w = random_array({xs[1], k, k, xs[4]}, uint32_t(cases.size() * 3 + 8));
    NDArray b = random_array({xs[1], xs[4]}, uint32_t(cases.size() * 3 + 9));
    std::vector<std::optional<NDArray>> in{x, w};
    if (bias) in.push_back(b);
    cases.push_back(
        OpCheck{label, "depthwise_conv_nchwc", in, g.attrs(), {ref_depthwise_nchwc(x, w, bias ? &b : nullptr, g)}});
  };
  add("3x3 pad 1, b 8", {1, 3, 7, 9, 8}, 3, true, {.top = 1, .left = 1, .bottom = 1, .right = 1});
  add("3x3 stride 2 pad 1, b 16", {1, 2, 9, 9, 16}, 3, true,
      {.stride_h = 2, .stride_w = 2, .top = 1, .left = 1, .bottom = 1, .right = 1});
  add("5x5 dilation 2, no bias", {2, 1, 12, 11, 8}, 5, false, {.dil_h = 2, .dil_w = 2, .top = 2, .bottom = 3});
  // A block of three vectors (256-bit targets): the schedule runs it one vector at a time.
  add("3x3 pad 1 0 1 2, b 24", {1, 2, 6, 13, 24}, 3, true, {.top = 1, .left = 0, .bottom = 1, .right = 2});
  nnvm_test::check_ops(cases, "depthwise_conv_nchwc");

  auto& def = ops::default_registry().get("depthwise_conv_nchwc");
  CHECK_THROWS_WITH_AS(ops::infer_types(def,
                                        {ops::TensorType(dtype::float32, {1, 3, 7, 9, 8}),
                                         ops::TensorType(dtype::float32, {3, 3, 3, 4})},
                                        {}),
                       doctest::Contains("block size"), UserError);
}

}  // namespace ops_conv_nchwc
