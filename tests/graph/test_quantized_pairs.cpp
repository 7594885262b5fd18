// fuse_qdq_pairs (graph/passes/quantized_pairs.hpp): per-tensor QuantizeLinear ->
// DequantizeLinear pairs become one fake_quantize that fuses into the convolution before it, and
// the network's values are those of the pairs, checked against a conv and the two ONNX formulas
// written as plain loops; pairs the op does not cover (per axis) are left alone.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <cmath>

namespace graph_quantized_pairs {

using namespace nnvm;
using graph::GraphBuilder;

namespace {

using nnvm_test::count_ops;

// Small integers, so that the conv's sums are exact in float32 and the reference below needs no
// tolerance.
NDArray small_ints(std::vector<int64_t> shape, int64_t seed, int64_t range) {
  NDArray a(dtype::float32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = float((i * 7919 + seed * 104729) % (2 * range + 1) - range);
  return a;
}

NDArray scalar_of(DataType t, double v) {
  NDArray a(t, {});
  if (t == dtype::float32) a.data<float>()[0] = float(v);
  else if (t == dtype::uint8) a.data<uint8_t>()[0] = uint8_t(v);
  else if (t == dtype::int8) a.data<int8_t>()[0] = int8_t(v);
  return a;
}

// QuantizeLinear then DequantizeLinear, per tensor, as ONNX defines them (round half to even,
// saturation to [lo, hi]).
float quantize_dequantize(float x, float scale, double zero_point, double lo, double hi) {
  double q = std::clamp(std::nearbyint(double(x / scale)) + zero_point, lo, hi);
  return float((q - zero_point) * double(scale));
}

}  // namespace

TEST_CASE("QDQ pairs around a conv fuse into its kernel and keep the pairs' values") {
  const int64_t C = 8, K = 16, H = 9, W = 9;
  NDArray w = small_ints({K, C, 3, 3}, 1, 2), b = small_ints({K}, 2, 5), xv = small_ints({1, C, H, W}, 3, 3);
  GraphBuilder gb("qdq");
  auto x = gb.input("x", dtype::float32, {1, C, H, W});
  auto qdq = [&](graph::Value v, double scale, DataType t, double zp, const std::string& name) {
    auto s = gb.constant(name + "_scale", scalar_of(dtype::float32, scale));
    auto z = gb.constant(name + "_zero_point", scalar_of(t, zp));
    return gb.op("dequantize_linear", {gb.op("quantize_linear", {v, s, z}, {}, name + "_q"), s, z}, {}, name + "_dq");
  };
  ops::Attrs pads;
  pads.set_ints("pads", {1, 1, 1, 1});
  // Scale 1.5 rounds most sums; uint8 around 128 and int8 around -3 saturate the largest.
  auto conv = gb.op("conv", {qdq(x, 0.5, dtype::int8, 0, "in"), gb.constant("w", w), gb.constant("b", b)}, pads, "conv");
  auto y = qdq(gb.op("relu", {qdq(conv, 1.5, dtype::uint8, 128, "mid")}, {}, "relu"), 0.75, dtype::int8, -3, "out");
  gb.output(y);
  graph::Graph g = gb.build();

  graph::Graph opt = graph::optimize(g, {.opt_level = 2});
  CHECK(count_ops(opt, "quantize_linear") == 0);
  CHECK(count_ops(opt, "dequantize_linear") == 0);
  CHECK(count_ops(opt, "fake_quantize") == 3);
  auto model = graph::compile(g);
  bool fused = false;
  for (auto& step : model.steps())
    if (step.label.find("conv") != std::string::npos)
      fused = step.label.find("fake_quantize") != std::string::npos && step.label.find("relu") != std::string::npos;
  CHECK_MESSAGE(fused, "the conv's kernel does not take the pairs and the relu as its epilogue");

  NDArray got = model.run({xv})[0];
  int64_t mismatches = 0;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < W; ++j) {
        double sum = b.data<float>()[k];
        for (int64_t c = 0; c < C; ++c)
          for (int64_t di = 0; di < 3; ++di)
            for (int64_t dj = 0; dj < 3; ++dj) {
              int64_t r = i + di - 1, s = j + dj - 1;
              if (r < 0 || r >= H || s < 0 || s >= W) continue;
              float in = quantize_dequantize(xv.data<float>()[(c * H + r) * W + s], 0.5f, 0, -128, 127);
              sum += double(in) * double(w.data<float>()[((k * C + c) * 3 + di) * 3 + dj]);
            }
        float mid = std::max(quantize_dequantize(float(sum), 1.5f, 128, 0, 255), 0.0f);
        float want = quantize_dequantize(mid, 0.75f, -3, -128, 127);
        mismatches += got.data<float>()[(k * H + i) * W + j] != want;
      }
  CHECK(mismatches == 0);
}

TEST_CASE("a per-axis pair and a pair whose quantized value is read elsewhere") {
  GraphBuilder gb("qdq_axis");
  auto x = gb.input("x", dtype::float32, {2, 3});
  NDArray scales(dtype::float32, {3});
  for (int i = 0; i < 3; ++i) scales.data<float>()[i] = 0.25f * float(i + 1);
  auto s = gb.constant("s", scales), z = gb.constant("z", NDArray(dtype::int8, {3}));
  auto q = gb.op("quantize_linear", {x, s, z}, {}, "q");
  gb.output(gb.op("dequantize_linear", {q, s, z}, {}, "dq"));
  auto s1 = gb.constant("s1", scalar_of(dtype::float32, 0.5)), z1 = gb.constant("z1", scalar_of(dtype::uint8, 7));
  auto q1 = gb.op("quantize_linear", {x, s1, z1}, {}, "q1");
  gb.output(gb.op("dequantize_linear", {q1, s1}, {}, "dq1"));  // no zero point on this side: ONNX's 0
  gb.output(q1);
  graph::Graph g = graph::fuse_qdq_pairs(gb.build());
  CHECK(count_ops(g, "fake_quantize") == 1);
  CHECK(count_ops(g, "quantize_linear") == 2);  // the per-axis one, and q1 for its own output
  CHECK(count_ops(g, "dequantize_linear") == 1);

  NDArray xv = nnvm_test::random_array(dtype::float32, {2, 3}, 9);
  for (int64_t i = 0; i < 6; ++i) xv.data<float>()[i] *= 9;
  auto outs = graph::compile(g).run({xv});
  for (int64_t i = 0; i < 6; ++i) {
    float v = xv.data<float>()[i];
    CHECK(outs[0].data<float>()[i] == quantize_dequantize(v, scales.data<float>()[i % 3], 0, -128, 127));
    // dq1 reads q1 with zero point 0 where q1 added 7.
    double q1v = std::clamp(std::nearbyint(double(v / 0.5f)) + 7, 0.0, 255.0);
    CHECK(outs[1].data<float>()[i] == float(q1v * 0.5));
    CHECK(double(outs[2].data<uint8_t>()[i]) == q1v);
  }
}

}  // namespace graph_quantized_pairs
