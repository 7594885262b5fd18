// Transpose sinking: a channels-last model written as channels-first convs wrapped in layout
// transposes keeps only the transposes at its edges, and its results equal plain NHWC loops
// written here; transposes that cancel disappear, and a transpose shared with a consumer that
// needs it is not duplicated.
#include "support/pch.hpp"
#include "support/check.hpp"

namespace graph_sink_transposes {

using namespace nnvm;
using graph::GraphBuilder;

namespace {

using Ints = std::vector<int64_t>;
const Ints to_nchw{0, 3, 1, 2}, to_nhwc{0, 2, 3, 1};

using nnvm_test::count_ops;

graph::Value transpose(GraphBuilder& gb, graph::Value x, const Ints& perm) {
  return gb.op("transpose", {x}, ops::Attrs().set_ints("perm", perm));
}

// A 1x1 convolution of an NHWC map: y[p, m] = b[m] + sum_c x[p, c] w[m, c], p over N*H*W.
std::vector<double> conv1x1_nhwc(const std::vector<double>& x, int64_t cin, const NDArray& w, const NDArray& b) {
  int64_t cout = w.shape()[0], pixels = int64_t(x.size()) / cin;
  std::vector<double> y(size_t(pixels * cout));
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t m = 0; m < cout; ++m) {
      double acc = b.values<float>()[size_t(m)];
      for (int64_t c = 0; c < cin; ++c) acc += x[size_t(p * cin + c)] * double(w.values<float>()[size_t(m * cin + c)]);
      y[size_t(p * cout + m)] = acc;
    }
  return y;
}

}  // namespace

TEST_CASE("a channels-last conv chain keeps only the transposes at its edges and computes the NHWC result") {
  const int64_t H = 5, W = 6, C = 3, M = 4;
  NDArray w1 = nnvm_test::random_array(dtype::float32, {M, C, 1, 1}, 1), b1 = nnvm_test::random_array(dtype::float32, {M}, 2);
  NDArray w2 = nnvm_test::random_array(dtype::float32, {M, M, 1, 1}, 3), b2 = nnvm_test::random_array(dtype::float32, {M}, 4);
  NDArray bias = nnvm_test::random_array(dtype::float32, {M}, 5);
  GraphBuilder gb("nhwc_chain");
  auto x = gb.input("x", dtype::float32, {1, H, W, C});
  auto c1 = gb.op("conv", {transpose(gb, x, to_nchw), gb.constant("w1", w1), gb.constant("b1", b1)},
                  ops::Attrs().set_ints("kernel_shape", {1, 1}), "conv1");
  auto r1 = gb.op("relu", {gb.op("add", {transpose(gb, c1, to_nhwc), gb.constant("bias", bias)})}, {}, "relu1");
  auto c2 = gb.op("conv", {transpose(gb, r1, to_nchw), gb.constant("w2", w2), gb.constant("b2", b2)},
                  ops::Attrs().set_ints("kernel_shape", {1, 1}), "conv2");
  auto sum = gb.op("add", {transpose(gb, c2, to_nhwc), r1}, {}, "residual");
  gb.output(gb.op("concat", {sum, r1}, ops::Attrs().set_int("axis", -1), "features"));
  graph::Graph g = gb.build();
  REQUIRE(count_ops(g, "transpose") == 4);

  graph::Graph sunk = graph::fold_constants(graph::sink_transposes(g));
  graph::validate(sunk);
  CHECK(count_ops(sunk, "transpose") == 2);  // the input's and the output's
  CHECK(count_ops(sunk, "conv") == 2);

  NDArray xv = nnvm_test::random_array(dtype::float32, {1, H, W, C}, 6);
  std::vector<double> xd(xv.values<float>().begin(), xv.values<float>().end());
  std::vector<double> r = conv1x1_nhwc(xd, C, w1, b1);
  for (size_t i = 0; i < r.size(); ++i) r[i] = std::max(r[i] + bias.values<float>()[i % M], 0.0);
  std::vector<double> s = conv1x1_nhwc(r, M, w2, b2);
  for (size_t i = 0; i < s.size(); ++i) s[i] += r[i];
  for (int opt_level : {1, 2}) {
    CAPTURE(opt_level);
    graph::CompileOptions options;
    options.opt_level = opt_level;
    NDArray out = graph::compile(g, options).run({xv})[0];
    REQUIRE(out.shape() == Ints{1, H, W, 2 * M});
    auto y = out.values<float>();
    for (int64_t p = 0; p < H * W; ++p)
      for (int64_t m = 0; m < 2 * M; ++m) {
        double expect = m < M ? s[size_t(p * M + m)] : r[size_t(p * M + m - M)];
        CHECK(y[size_t(p * 2 * M + m)] == doctest::Approx(expect).epsilon(1e-5));
      }
  }
}

TEST_CASE("a transpose followed by its inverse disappears") {
  GraphBuilder gb("inverse");
  auto x = gb.input("x", dtype::float32, {2, 3, 4});
  auto t = transpose(gb, transpose(gb, x, {2, 0, 1}), {1, 2, 0});
  gb.output(gb.op("neg", {t}, {}, "y"));
  graph::Graph g = graph::sink_transposes(gb.build());
  CHECK(count_ops(g, "transpose") == 0);
  NDArray xv = nnvm_test::random_array(dtype::float32, {2, 3, 4}, 7);
  NDArray y = graph::compile(g).run({xv})[0];
  REQUIRE(y.shape() == Ints{2, 3, 4});
  for (size_t i = 0; i < 24; ++i) CHECK(y.values<float>()[i] == -xv.values<float>()[i]);
}

TEST_CASE("two transposes compose into one, and a transpose another consumer needs is made once") {
  GraphBuilder gb("shared");
  auto x = gb.input("x", dtype::float32, {2, 3, 4});
  auto t = transpose(gb, transpose(gb, x, {1, 0, 2}), {0, 2, 1});  // (3, 4, 2): y[i,j,k] = x[k,i,j]
  gb.output(gb.op("relu", {t}, {}, "r"));
  gb.output(gb.op("flatten", {t}, ops::Attrs().set_int("axis", 1), "f"));
  graph::Graph g = graph::sink_transposes(gb.build());
  CHECK(count_ops(g, "transpose") == 1);
  NDArray xv = nnvm_test::random_array(dtype::float32, {2, 3, 4}, 8);
  auto out = graph::compile(g).run({xv});
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].shape() == Ints{3, 4, 2});
  REQUIRE(out[1].shape() == Ints{3, 8});
  auto xs = xv.values<float>();
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 2; ++k) {
        float v = xs[size_t((k * 3 + i) * 4 + j)];
        CHECK(out[0].values<float>()[size_t((i * 4 + j) * 2 + k)] == std::max(v, 0.0f));
        CHECK(out[1].values<float>()[size_t(i * 8 + j * 2 + k)] == v);
      }
}

TEST_CASE("an operand that cannot follow the transpose leaves it in place") {
  GraphBuilder gb("mixed");
  auto x = gb.input("x", dtype::float32, {2, 3});
  auto y = gb.input("y", dtype::float32, {3, 2});
  gb.output(gb.op("add", {transpose(gb, x, {1, 0}), y}, {}, "sum"));
  graph::Graph g = graph::sink_transposes(gb.build());
  CHECK(count_ops(g, "transpose") == 1);
  NDArray xv = nnvm_test::random_array(dtype::float32, {2, 3}, 9), yv = nnvm_test::random_array(dtype::float32, {3, 2}, 10);
  NDArray s = graph::compile(g).run({xv, yv})[0];
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j)
      CHECK(s.values<float>()[size_t(i * 2 + j)] ==
            xv.values<float>()[size_t(j * 3 + i)] + yv.values<float>()[size_t(i * 2 + j)]);
}

}  // namespace graph_sink_transposes
