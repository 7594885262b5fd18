// Operators whose output shape depends on input values (importers/onnx/constant_ops.cpp): taken
// when those values are constants, each result checked against the spec's formula written here;
// a run-time value is refused with the graph input it comes from.
#include "support/pch.hpp"

#include <cmath>
#include <numbers>

#include "onnx_test_util.hpp"

namespace onnx_constant_ops {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {

std::vector<NDArray> run(const Model& m, const std::string& name, const std::vector<NDArray>& inputs,
                         oi::ImportOptions options = {}) {
  return graph::compile(oi::import_model(m.save(scratch(name)), options)).run(inputs);
}

void int64_initializer(Model& m, const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
  auto* t = m.initializer(name, T::INT64, std::move(dims));
  for (int64_t v : values) t->add_int64_data(v);
}

}  // namespace

TEST_CASE("onnx window functions: periodic and symmetric, fixed size or a graph input fixed at import") {
  const double pi = std::numbers::pi;
  {
    Model m(17);
    int64_initializer(m, "size", {}, {10});
    m.node("HannWindow", {"size"}, {"y"});
    m.output("y");
    std::vector<NDArray> out = run(m, "hann", {});
    REQUIRE(out[0].dtype() == dtype::float32);
    REQUIRE(out[0].shape() == std::vector<int64_t>{10});
    for (int i = 0; i < 10; ++i) CHECK(out[0].values<float>()[size_t(i)] == doctest::Approx(std::pow(std::sin(pi * i / 10), 2)).epsilon(1e-6));
  }
  {
    Model m(17);
    m.input("x", T::INT64, {});
    attr_int(m.node("HammingWindow", {"x"}, {"y"}), "periodic", 0);
    m.output("y");
    auto [id, text] = error_of([&] { oi::import_model(m.save(scratch("hamming_runtime"))); });
    CHECK(id == "nnvm.graph.not_constant");
    CHECK(text.find("HammingWindow's input size decides the output's shape") != std::string::npos);
    CHECK(text.find("graph input x") != std::string::npos);
    oi::ImportOptions fixed;
    fixed.constant_inputs.emplace("x", NDArray::from(std::vector<int64_t>{7}, {}));
    std::vector<NDArray> out = run(m, "hamming", {}, fixed);
    REQUIRE(out[0].shape() == std::vector<int64_t>{7});
    for (int i = 0; i < 7; ++i)
      CHECK(out[0].values<float>()[size_t(i)] == doctest::Approx(0.54347826 - 0.45652174 * std::cos(2 * pi * i / 6)).epsilon(1e-6));
  }
  {
    Model m(17);
    int64_initializer(m, "size", {}, {5});
    attr_int(m.node("BlackmanWindow", {"size"}, {"y"}), "output_datatype", T::DOUBLE);
    m.output("y");
    std::vector<NDArray> out = run(m, "blackman", {});
    REQUIRE(out[0].dtype() == dtype::float64);
    for (int i = 0; i < 5; ++i)
      CHECK(out[0].values<double>()[size_t(i)] ==
            doctest::Approx(0.42 - 0.5 * std::cos(2 * pi * i / 5) + 0.08 * std::cos(4 * pi * i / 5)).epsilon(1e-12));
  }
}

TEST_CASE("onnx MelWeightMatrix: triangular filters between mel-spaced edges") {
  const int64_t bins = 4, dft = 16, rate = 8000;
  const float lo = 100, hi = 3000;
  Model m(17);
  int64_initializer(m, "num_mel_bins", {}, {bins});
  int64_initializer(m, "dft_length", {}, {dft});
  int64_initializer(m, "sample_rate", {}, {rate});
  m.initializer("lower", T::FLOAT, {})->add_float_data(lo);
  m.initializer("upper", T::FLOAT, {})->add_float_data(hi);
  m.node("MelWeightMatrix", {"num_mel_bins", "dft_length", "sample_rate", "lower", "upper"}, {"w"});
  m.output("w");
  NDArray w = run(m, "mel", {})[0];
  const int64_t spectrum = dft / 2 + 1;
  REQUIRE(w.shape() == std::vector<int64_t>{spectrum, bins});
  // Edges: mel = 2595 log10(1 + hz / 700), num_mel_bins + 2 points from mel(lo) in steps of
  // (mel(hi) - mel(lo)) / (num_mel_bins + 2), each mapped to bin floor((dft + 1) hz / rate).
  auto mel = [](double hz) { return 2595 * std::log10(1 + hz / 700); };
  std::vector<int64_t> edge;
  for (int64_t i = 0; i < bins + 2; ++i) {
    double m_i = mel(lo) + double(i) * (mel(hi) - mel(lo)) / double(bins + 2);
    double hz = 700 * (std::pow(10.0, m_i / 2595) - 1);
    edge.push_back(int64_t(std::floor(double(dft + 1) * hz / double(rate))));
  }
  for (int64_t i = 0; i < bins; ++i)
    for (int64_t j = 0; j < spectrum; ++j) {
      int64_t l = edge[size_t(i)], c = edge[size_t(i + 1)], r = edge[size_t(i + 2)];
      double want = 0;
      if (j >= l && j <= c) want = c == l ? 1.0 : double(j - l) / double(c - l);
      if (j >= c && j < r) want = double(r - j) / double(r - c);
      CAPTURE(i);
      CAPTURE(j);
      CHECK(w.values<float>()[size_t(j * bins + i)] == doctest::Approx(want).epsilon(1e-6));
    }
}

TEST_CASE("onnx NonZero of a constant, and Compress with a constant condition") {
  {
    Model m(13);
    auto* c = m.initializer("c", T::BOOL, {2, 3});
    for (int v : {1, 0, 1, 0, 1, 1}) c->add_int32_data(v);
    m.node("NonZero", {"c"}, {"idx"});
    m.output("idx");
    NDArray idx = run(m, "nonzero", {})[0];
    REQUIRE(idx.shape() == std::vector<int64_t>{2, 4});
    std::vector<int64_t> want{0, 0, 1, 1, 0, 2, 1, 2};
    CHECK(std::vector<int64_t>(idx.values<int64_t>().begin(), idx.values<int64_t>().end()) == want);
  }
  NDArray x = NDArray::from(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  {
    Model m(11);
    m.input("x", T::FLOAT, {2, 3});
    auto* c = m.initializer("c", T::BOOL, {2});
    for (int v : {0, 1}) c->add_int32_data(v);
    attr_int(m.node("Compress", {"x", "c"}, {"y"}), "axis", -1);
    m.output("y");
    NDArray y = run(m, "compress_axis", {x})[0];
    REQUIRE(y.shape() == std::vector<int64_t>{2, 1});
    CHECK(y.values<float>()[0] == 2);
    CHECK(y.values<float>()[1] == 5);
  }
  {
    Model m(11);
    m.input("x", T::FLOAT, {2, 3});
    m.input("c", T::BOOL, {5});
    m.node("Compress", {"x", "c"}, {"y"});
    m.output("y");
    auto [id, text] = error_of([&] { oi::import_model(m.save(scratch("compress_runtime"))); });
    CHECK(id == "nnvm.graph.not_constant");
    CHECK(text.find("graph input c") != std::string::npos);
    oi::ImportOptions fixed;
    NDArray c(dtype::boolean, {5});
    for (int i : {0, 3, 4}) c.values<bool>()[size_t(i)] = true;
    fixed.constant_inputs.emplace("c", c);
    NDArray y = run(m, "compress_flat", {x}, fixed)[0];
    REQUIRE(y.shape() == std::vector<int64_t>{3});
    CHECK(y.values<float>()[0] == 1);
    CHECK(y.values<float>()[1] == 4);
    CHECK(y.values<float>()[2] == 5);
  }
}

}  // namespace onnx_constant_ops
