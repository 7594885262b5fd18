// Operators the importer builds from others (importers/onnx/composite_ops.cpp) and If with a
// condition known at import (run-time control flow: test_control_flow.cpp): models built here, imported, compiled and run, each result checked
// against a plain loop in the test written from the ONNX spec.
#include "support/pch.hpp"

#include <cmath>

#include "onnx_test_util.hpp"

namespace onnx_composite_ops {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {

std::vector<NDArray> run(const Model& m, const std::string& name, const std::vector<NDArray>& inputs) {
  return graph::compile(oi::import_model(m.save(scratch(name)))).run(inputs);
}

template <class E>
NDArray array(std::vector<int64_t> shape, std::vector<E> values) {
  return NDArray::from(values, std::move(shape));
}


// A deterministic spread of values in [lo, hi] for 8-bit operands.
template <class E>
std::vector<E> spread(size_t n, int lo, int hi, int phase) {
  std::vector<E> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = E(lo + int((i * 37 + size_t(phase) * 11) % size_t(hi - lo + 1)));
  return v;
}

// ONNX requantization: round half to even, then saturate to the output type.
template <class E>
E saturate_rint(double v) {
  double r = std::nearbyint(v);
  return E(std::clamp(r, double(std::numeric_limits<E>::min()), double(std::numeric_limits<E>::max())));
}


}  // namespace

TEST_CASE("onnx If: a condition known at import takes its branch inline, nested Ifs too") {
  // cond = Size(x) == 4 (true for a 2x2 x). then: y = x + 1, then a nested If on a false
  // constant whose else branch gives z = y * 2. The untaken else branch splits x into 5 pieces,
  // which could not be imported: it must not be.
  Model m(18);
  m.input("x", T::FLOAT, {2, 2});
  m.node("Size", {"x"}, {"n"});
  auto* four = m.initializer("four", T::INT64, {});
  four->add_int64_data(4);
  m.node("Equal", {"n", "four"}, {"cond"});
  auto* node = m.node("If", {"cond"}, {"out"}, "if");
  auto* then_g = attr_graph(node, "then_branch")->mutable_g();
  auto* one = then_g->add_initializer();
  one->set_name("one");
  one->set_data_type(T::FLOAT);
  one->add_float_data(1.0f);
  sub_node(then_g, "Add", {"x", "one"}, {"y"});
  auto* inner = sub_node(then_g, "If", {"never"}, {"z"});
  auto* inner_then = attr_graph(inner, "then_branch")->mutable_g();
  sub_node(inner_then, "Neg", {"y"}, {"z_then"});
  inner_then->add_output()->set_name("z_then");
  auto* inner_else = attr_graph(inner, "else_branch")->mutable_g();
  auto* two = inner_else->add_initializer();
  two->set_name("two");
  two->set_data_type(T::FLOAT);
  two->add_float_data(2.0f);
  sub_node(inner_else, "Mul", {"y", "two"}, {"z_else"});
  inner_else->add_output()->set_name("z_else");
  then_g->add_output()->set_name("z");
  auto* else_g = attr_graph(node, "else_branch")->mutable_g();
  attr_int(sub_node(else_g, "Split", {"x"}, {"a", "b", "c", "d", "e"}), "num_outputs", 5);
  else_g->add_output()->set_name("a");
  auto* never = m.initializer("never", T::BOOL, {});
  never->add_int32_data(0);
  m.output("out");

  NDArray x = array<float>({2, 2}, {1.5f, -2.0f, 0.25f, 3.0f});
  std::vector<float> got = elements<float>(run(m, "if_inline", {x})[0]);
  std::vector<float> want;
  for (float v : elements<float>(x)) want.push_back((v + 1.0f) * 2.0f);
  CHECK(got == want);
}

TEST_CASE("onnx MatMulInteger and QLinearMatMul: int32 products with zero points, requantized as ONNX rounds") {
  const int64_t M = 3, K = 5, N = 4;
  std::vector<uint8_t> a = spread<uint8_t>(M * K, 0, 255, 1), b = spread<uint8_t>(K * N, 0, 255, 2);
  std::vector<uint8_t> a_zp{7, 130, 255};  // per row of A
  uint8_t b_zp = 128;
  auto product = [&](int64_t i, int64_t j) {
    int32_t s = 0;
    for (int64_t k = 0; k < K; ++k) s += (int32_t(a[size_t(i * K + k)]) - a_zp[size_t(i)]) * (int32_t(b[size_t(k * N + j)]) - b_zp);
    return s;
  };
  {
    Model m(10);
    m.input("A", T::UINT8, {M, K});
    m.input("B", T::UINT8, {K, N});
    m.input("a_zp", T::UINT8, {M});
    m.input("b_zp", T::UINT8, {});
    m.node("MatMulInteger", {"A", "B", "a_zp", "b_zp"}, {"Y"});
    m.output("Y");
    NDArray y = run(m, "matmulinteger", {array<uint8_t>({M, K}, a), array<uint8_t>({K, N}, b),
                                         array<uint8_t>({M}, a_zp), array<uint8_t>({}, {b_zp})})[0];
    REQUIRE(y.dtype() == dtype::int32);
    std::vector<int32_t> want;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) want.push_back(product(i, j));
    CHECK(elements<int32_t>(y) == want);
  }
  for (bool signed_out : {false, true}) {
    CAPTURE(signed_out);
    std::vector<uint8_t> one_zp{a_zp[1]};
    float a_scale = 0.02f, b_scale = 0.015f, y_scale = 0.5f;
    Model m(21);
    m.input("a", T::UINT8, {M, K});
    m.input("a_scale", T::FLOAT, {});
    m.input("a_zp", T::UINT8, {});
    m.input("b", T::UINT8, {K, N});
    m.input("b_scale", T::FLOAT, {});
    m.input("b_zp", T::UINT8, {});
    m.input("y_scale", T::FLOAT, {});
    m.input("y_zp", signed_out ? T::INT8 : T::UINT8, {});
    m.node("QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"}, {"y"});
    m.output("y");
    NDArray y_zp = signed_out ? array<int8_t>({}, {int8_t(-3)}) : array<uint8_t>({}, {uint8_t(120)});
    NDArray y = run(m, signed_out ? "qlinearmatmul_s8" : "qlinearmatmul_u8",
                    {array<uint8_t>({M, K}, a), array<float>({}, {a_scale}), array<uint8_t>({}, one_zp),
                     array<uint8_t>({K, N}, b), array<float>({}, {b_scale}), array<uint8_t>({}, {b_zp}),
                     array<float>({}, {y_scale}), y_zp})[0];
    float ratio = a_scale * b_scale / y_scale;  // in float32, as ONNX's reference
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        int32_t s = 0;
        for (int64_t k = 0; k < K; ++k) s += (int32_t(a[size_t(i * K + k)]) - one_zp[0]) * (int32_t(b[size_t(k * N + j)]) - b_zp);
        double v = double(s) * double(ratio);
        size_t at = size_t(i * N + j);
        if (signed_out) CHECK(y.values<int8_t>()[at] == saturate_rint<int8_t>(v - 3));
        else CHECK(y.values<uint8_t>()[at] == saturate_rint<uint8_t>(v + 120));
      }
  }
}

TEST_CASE("onnx ConvInteger and QLinearConv: per-channel weight zero points and scales, bias, padding") {
  // x (1, 2, 4, 4) uint8, w (3, 2, 3, 3) int8 with one zero point per output channel, pads 1.
  const int64_t C = 2, H = 4, W = 4, M = 3, R = 3;
  std::vector<uint8_t> x = spread<uint8_t>(C * H * W, 0, 255, 3);
  std::vector<int8_t> w = spread<int8_t>(M * C * R * R, -128, 127, 4);
  uint8_t x_zp = 100;
  std::vector<int8_t> w_zp{0, -5, 9};
  auto conv = [&](int64_t m, int64_t i, int64_t j) {
    int32_t s = 0;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t q = 0; q < R; ++q) {
          int64_t yi = i + r - 1, xj = j + q - 1;
          if (yi < 0 || yi >= H || xj < 0 || xj >= W) continue;  // padding holds the zero point: 0 after centering
          s += (int32_t(x[size_t((c * H + yi) * W + xj)]) - x_zp) *
               (int32_t(w[size_t(((m * C + c) * R + r) * R + q)]) - w_zp[size_t(m)]);
        }
    return s;
  };
  NDArray xa = array<uint8_t>({1, C, H, W}, x), wa = array<int8_t>({M, C, R, R}, w);
  {
    Model m(10);
    m.input("x", T::UINT8, {1, C, H, W});
    m.input("w", T::INT8, {M, C, R, R});
    m.input("x_zp", T::UINT8, {});
    m.input("w_zp", T::INT8, {M});
    attr_ints(m.node("ConvInteger", {"x", "w", "x_zp", "w_zp"}, {"y"}), "pads", {1, 1, 1, 1});
    m.output("y");
    NDArray y = run(m, "convinteger", {xa, wa, array<uint8_t>({}, {x_zp}), array<int8_t>({M}, w_zp)})[0];
    REQUIRE(y.dtype() == dtype::int32);
    std::vector<int32_t> want;
    for (int64_t o = 0; o < M; ++o)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j) want.push_back(conv(o, i, j));
    CHECK(elements<int32_t>(y) == want);
  }
  {
    float x_scale = 0.05f, y_scale = 0.8f;
    std::vector<float> w_scale{0.01f, 0.02f, 0.005f};
    std::vector<int32_t> bias{100, -2000, 35};
    Model m(10);
    m.input("x", T::UINT8, {1, C, H, W});
    m.input("x_scale", T::FLOAT, {});
    m.input("x_zp", T::UINT8, {});
    m.input("w", T::INT8, {M, C, R, R});
    m.input("w_scale", T::FLOAT, {M});
    m.input("w_zp", T::INT8, {M});
    m.input("y_scale", T::FLOAT, {});
    m.input("y_zp", T::UINT8, {});
    m.input("B", T::INT32, {M});
    attr_ints(m.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "B"}, {"y"}),
              "pads", {1, 1, 1, 1});
    m.output("y");
    NDArray y = run(m, "qlinearconv",
                    {xa, array<float>({}, {x_scale}), array<uint8_t>({}, {x_zp}), wa, array<float>({M}, w_scale),
                     array<int8_t>({M}, w_zp), array<float>({}, {y_scale}), array<uint8_t>({}, {uint8_t(128)}),
                     array<int32_t>({M}, bias)})[0];
    REQUIRE(y.dtype() == dtype::uint8);
    size_t at = 0;
    for (int64_t o = 0; o < M; ++o)
      for (int64_t i = 0; i < H; ++i)
        for (int64_t j = 0; j < W; ++j, ++at) {
          float ratio = x_scale * w_scale[size_t(o)] / y_scale;
          double v = double(conv(o, i, j) + bias[size_t(o)]) * double(ratio) + 128;
          CHECK(y.values<uint8_t>()[at] == saturate_rint<uint8_t>(v));
        }
  }
}

TEST_CASE("onnx DynamicQuantizeLinear: scale and zero point from the data's range (0 included)") {
  std::vector<float> x{-1.5f, 0.25f, 3.0f, 2.75f, -0.5f, 1.0f};
  Model m(11);
  m.input("x", T::FLOAT, {6});
  m.node("DynamicQuantizeLinear", {"x"}, {"y", "y_scale", "y_zero_point"});
  m.output("y");
  m.output("y_scale");
  m.output("y_zero_point");
  std::vector<NDArray> out = run(m, "dynamicquantizelinear", {array<float>({6}, x)});
  float lo = std::min(0.0f, *std::min_element(x.begin(), x.end()));
  float hi = std::max(0.0f, *std::max_element(x.begin(), x.end()));
  float scale = (hi - lo) / 255.0f;
  uint8_t zp = uint8_t(std::nearbyint(std::clamp(0.0f - lo / scale, 0.0f, 255.0f)));
  CHECK(out[1].values<float>()[0] == scale);
  CHECK(out[2].values<uint8_t>()[0] == zp);
  for (size_t i = 0; i < x.size(); ++i) CHECK(out[0].values<uint8_t>()[i] == saturate_rint<uint8_t>(x[i] / scale + zp));
}

TEST_CASE("onnx SwiGLU, Swish and CausalConvWithState") {
  std::vector<float> a{-3.0f, -0.5f, 0.0f, 0.75f, 2.0f, 6.0f}, b{1.0f, -2.0f, 0.5f, 3.0f, -1.0f, 0.25f};
  {
    Model m(24);
    m.input("a", T::FLOAT, {2, 3});
    m.input("b", T::FLOAT, {2, 3});
    attr_float(m.node("SwiGLU", {"a", "b"}, {"y"}), "alpha", 0.5f);
    m.output("y");
    std::vector<float> got = elements<float>(run(m, "swiglu", {array<float>({2, 3}, a), array<float>({2, 3}, b)})[0]);
    for (size_t i = 0; i < a.size(); ++i) CHECK(got[i] == doctest::Approx(a[i] / (1 + std::exp(-0.5 * a[i])) * b[i]).epsilon(1e-5));

    Model bad(24);
    bad.input("a", T::FLOAT, {2, 3});
    bad.input("b", T::FLOAT, {3});
    bad.node("SwiGLU", {"a", "b"}, {"y"});
    bad.output("y");
    auto [id, text] = error_of([&] { oi::import_model(bad.save(scratch("swiglu_bad"))); });
    CHECK(id == "nnvm.onnx.shape");
    CHECK(text.find("SwiGLU takes A and B of one shape") != std::string::npos);
  }
  {
    // Depthwise causal conv, k = 3, with past state, bias and SiLU: output[c][t] =
    // silu(bias[c] + sum_j w[c][j] * padded[c][t + j]), padded = past ++ input.
    const int64_t Bn = 1, C = 2, L = 4, Kk = 3;
    std::vector<float> in{1, 2, 3, 4, -1, -2, 0.5f, 0.25f}, w{0.5f, -1, 2, 1, 1, -0.5f}, bias{0.1f, -0.2f},
        past{9, 8, -7, 6};
    Model m(27);
    m.input("input", T::FLOAT, {Bn, C, L});
    m.input("weight", T::FLOAT, {C, 1, Kk});
    m.input("bias", T::FLOAT, {C});
    m.input("past_state", T::FLOAT, {Bn, C, Kk - 1});
    attr_string(m.node("CausalConvWithState", {"input", "weight", "bias", "past_state"}, {"output", "present_state"}),
                "activation", "silu");
    m.output("output");
    m.output("present_state");
    std::vector<NDArray> out = run(m, "causal_conv", {array<float>({Bn, C, L}, in), array<float>({C, 1, Kk}, w),
                                                      array<float>({C}, bias), array<float>({Bn, C, Kk - 1}, past)});
    for (int64_t c = 0; c < C; ++c) {
      std::vector<float> padded{past[size_t(c * 2)], past[size_t(c * 2 + 1)]};
      for (int64_t t = 0; t < L; ++t) padded.push_back(in[size_t(c * L + t)]);
      for (int64_t t = 0; t < L; ++t) {
        double s = bias[size_t(c)];
        for (int64_t j = 0; j < Kk; ++j) s += w[size_t(c * Kk + j)] * padded[size_t(t + j)];
        CHECK(out[0].values<float>()[size_t(c * L + t)] == doctest::Approx(s / (1 + std::exp(-s))).epsilon(1e-5));
      }
      CHECK(out[1].values<float>()[size_t(c * 2)] == padded[size_t(L)]);
      CHECK(out[1].values<float>()[size_t(c * 2 + 1)] == padded[size_t(L + 1)]);
    }
  }
}

TEST_CASE("onnx BatchNormalization in training mode: batch statistics and running statistics") {
  const int64_t N = 2, C = 3, S = 4;
  std::vector<float> x(size_t(N * C * S));
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(int((i * 7) % 11) - 5) * 0.3f + 0.1f * float(i % 3);
  std::vector<float> scale{0.5f, -1.0f, 2.0f}, bias{0.0f, 0.25f, -1.0f}, mean{0.1f, -0.2f, 0.3f}, var{1.0f, 0.5f, 2.0f};
  const float eps = 0.01f, momentum = 0.8f;
  Model m(15);
  m.input("x", T::FLOAT, {N, C, S});
  for (const char* p : {"s", "b", "mean", "var"}) m.input(p, T::FLOAT, {C});
  auto* bn = m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y", "running_mean", "running_var"});
  attr_int(bn, "training_mode", 1);
  attr_float(bn, "epsilon", eps);
  attr_float(bn, "momentum", momentum);
  m.output("y");
  m.output("running_mean");
  m.output("running_var");
  std::vector<NDArray> out = run(m, "batchnorm_training",
                                 {array<float>({N, C, S}, x), array<float>({C}, scale), array<float>({C}, bias),
                                  array<float>({C}, mean), array<float>({C}, var)});
  for (int64_t c = 0; c < C; ++c) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) sum += x[size_t((n * C + c) * S + i)];
    double bm = sum / double(N * S);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) sq += (x[size_t((n * C + c) * S + i)] - bm) * (x[size_t((n * C + c) * S + i)] - bm);
    double bv = sq / double(N * S);
    CHECK(out[1].values<float>()[size_t(c)] == doctest::Approx(mean[size_t(c)] * momentum + bm * (1 - momentum)).epsilon(1e-5));
    CHECK(out[2].values<float>()[size_t(c)] == doctest::Approx(var[size_t(c)] * momentum + bv * (1 - momentum)).epsilon(1e-5));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < S; ++i) {
        size_t at = size_t((n * C + c) * S + i);
        double want = (x[at] - bm) / std::sqrt(bv + eps) * scale[size_t(c)] + bias[size_t(c)];
        CHECK(out[0].values<float>()[at] == doctest::Approx(want).epsilon(1e-4));
      }
  }
}

TEST_CASE("onnx MatMul on float16 runs in float32 and rounds the result once") {
  const int64_t M = 2, K = 3, N = 2;
  std::vector<float> a{0.1f, -2.5f, 3.0f, 1.25f, 0.333f, -0.75f}, b{1.5f, -0.2f, 2.0f, 0.7f, -1.1f, 0.05f};
  auto half = [](const std::vector<float>& v) {
    std::vector<float16> h;
    for (float f : v) h.push_back(float16(f));
    return h;
  };
  Model m(18);
  m.input("A", T::FLOAT16, {M, K});
  m.input("B", T::FLOAT16, {K, N});
  m.node("MatMul", {"A", "B"}, {"Y"});
  m.output("Y");
  std::vector<float16> ah = half(a), bh = half(b);
  NDArray y = run(m, "matmul_f16", {array<float16>({M, K}, ah), array<float16>({K, N}, bh)})[0];
  REQUIRE(y.dtype() == dtype::float16);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0;
      for (int64_t k = 0; k < K; ++k) s += float(ah[size_t(i * K + k)]) * float(bh[size_t(k * N + j)]);
      CHECK(y.values<float16>()[size_t(i * N + j)].bits == float16(s).bits);
    }
}

}  // namespace onnx_composite_ops
