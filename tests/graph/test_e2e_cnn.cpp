// End to end: a small CNN written with the GraphBuilder (conv → batch norm → relu → max pool →
// grouped strided conv → relu → residual add through a 1x1 projection → global average pool →
// flatten → gemm → softmax) compiles at opt level 0 (one kernel per op) and at the default level
// (batch norm folded into the conv, ops fused), for the C JIT and LLVM when built, and matches
// the same network written below as plain loops in double precision. Odd spatial extents (17x19)
// make the pool and the strided convs drop edges; a symbolic batch is bound at compile time.
#include "support/pch.hpp"
#include "support/check.hpp"
#include "support/conv_reference.hpp"

#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_graph.hpp"
#endif

namespace graph_e2e_cnn {

using namespace nnvm;
using graph::GraphBuilder;

namespace {
using nnvm_test::conv_ref;
using nnvm_test::Ref;
using nnvm_test::to_ref;

struct CnnWeights {
  NDArray w1, b1, scale, shift, mean, var, w2, wp, bp, wd, bd;
};

// Channels: 3 → 4 (conv1) → 6 (conv2, 2 groups of 2 → 3; projection 1x1 stride 2) → 5 classes.
CnnWeights make_weights() {
  CnnWeights w;
  w.w1 = nnvm_test::random_array(dtype::float32, {4, 3, 3, 3}, 101);
  w.b1 = nnvm_test::random_array(dtype::float32, {4}, 102);
  w.scale = nnvm_test::random_array(dtype::float32, {4}, 103, 0.5, 1.5);
  w.shift = nnvm_test::random_array(dtype::float32, {4}, 104);
  w.mean = nnvm_test::random_array(dtype::float32, {4}, 105, -0.5, 0.5);
  w.var = nnvm_test::random_array(dtype::float32, {4}, 106, 0.3, 2.0);
  w.w2 = nnvm_test::random_array(dtype::float32, {6, 2, 3, 3}, 107);
  w.wp = nnvm_test::random_array(dtype::float32, {6, 4, 1, 1}, 108);
  w.bp = nnvm_test::random_array(dtype::float32, {6}, 109);
  w.wd = nnvm_test::random_array(dtype::float32, {5, 6}, 110);  // Gemm with transB = 1
  w.bd = nnvm_test::random_array(dtype::float32, {5}, 111);
  return w;
}

constexpr double kEpsilon = 1e-3;

graph::Graph make_cnn(const CnnWeights& w, ir::Expr batch) {
  GraphBuilder b("cnn");
  auto x = b.input("x", dtype::float32, {batch, 3, 17, 19});
  auto c = [&](const char* name, const NDArray& a) { return b.constant(name, a); };
  auto conv1 = b.op("conv", {x, c("w1", w.w1), c("b1", w.b1)},
                    ops::Attrs().set_ints("kernel_shape", {3, 3}).set_ints("pads", {1, 1, 1, 1}), "conv1");
  auto bn = b.op("batch_norm", {conv1, c("scale", w.scale), c("shift", w.shift), c("mean", w.mean), c("var", w.var)},
                 ops::Attrs().set_float("epsilon", kEpsilon), "bn1");
  auto pool = b.op("max_pool", {b.op("relu", {bn}, {}, "relu1")},
                   ops::Attrs().set_ints("kernel_shape", {2, 2}).set_ints("strides", {2, 2}), "pool1");
  // The projection comes first in node order, so the add can join conv2's fused group.
  auto proj = b.op("conv", {pool, c("wp", w.wp), c("bp", w.bp)}, ops::Attrs().set_ints("strides", {2, 2}), "proj");
  auto conv2 = b.op("conv", {pool, c("w2", w.w2)},
                    ops::Attrs().set_ints("strides", {2, 2}).set_ints("pads", {1, 1, 1, 1}).set_int("group", 2),
                    "conv2");
  auto sum = b.op("add", {b.op("relu", {conv2}, {}, "relu2"), proj}, {}, "residual");
  auto flat = b.op("flatten", {b.op("global_average_pool", {sum}, {}, "gap")}, {}, "flat");
  auto logits = b.op("dense", {flat, c("wd", w.wd), c("bd", w.bd)}, ops::Attrs().set_int("transB", 1), "fc");
  b.output(b.op("softmax", {logits}, ops::Attrs().set_int("axis", -1), "prob"));
  return b.build();
}

// The same network by plain loops, accumulating in double; returns (N, 5) probabilities.
std::vector<float> cnn_reference(const CnnWeights& w, const NDArray& x_arr) {
  Ref h = conv_ref(to_ref(x_arr), w.w1, &w.b1, 1, 1, 1);
  int64_t N = h.shape[0];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < 4; ++ch) {
      double s = double(w.scale.values<float>()[size_t(ch)]) / std::sqrt(double(w.var.values<float>()[size_t(ch)]) + kEpsilon);
      double mu = w.mean.values<float>()[size_t(ch)], beta = w.shift.values<float>()[size_t(ch)];
      for (int64_t i = 0; i < h.shape[2]; ++i)
        for (int64_t j = 0; j < h.shape[3]; ++j) {
          double& e = h.at(n, ch, i, j);
          e = std::max((e - mu) * s + beta, 0.0);
        }
    }
  Ref p{{N, 4, h.shape[2] / 2, h.shape[3] / 2}, {}};
  p.v.resize(size_t(N * 4 * p.shape[2] * p.shape[3]));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < 4; ++ch)
      for (int64_t i = 0; i < p.shape[2]; ++i)
        for (int64_t j = 0; j < p.shape[3]; ++j)
          p.at(n, ch, i, j) = std::max({h.at(n, ch, 2 * i, 2 * j), h.at(n, ch, 2 * i, 2 * j + 1),
                                        h.at(n, ch, 2 * i + 1, 2 * j), h.at(n, ch, 2 * i + 1, 2 * j + 1)});
  Ref c2 = conv_ref(p, w.w2, nullptr, 2, 1, 2);
  Ref pr = conv_ref(p, w.wp, &w.bp, 2, 0, 1);
  REQUIRE(c2.shape == pr.shape);
  std::vector<float> out;
  for (int64_t n = 0; n < N; ++n) {
    std::vector<double> pooled(6, 0.0);
    for (int64_t ch = 0; ch < 6; ++ch) {
      for (int64_t i = 0; i < c2.shape[2]; ++i)
        for (int64_t j = 0; j < c2.shape[3]; ++j)
          pooled[size_t(ch)] += std::max(c2.at(n, ch, i, j), 0.0) + pr.at(n, ch, i, j);
      pooled[size_t(ch)] /= double(c2.shape[2] * c2.shape[3]);
    }
    std::vector<double> logits(5);
    double mx = -INFINITY, total = 0;
    for (int64_t k = 0; k < 5; ++k) {
      double acc = w.bd.values<float>()[size_t(k)];
      for (int64_t ch = 0; ch < 6; ++ch) acc += pooled[size_t(ch)] * double(w.wd.values<float>()[size_t(k * 6 + ch)]);
      logits[size_t(k)] = acc;
      mx = std::max(mx, acc);
    }
    for (double& l : logits) total += (l = std::exp(l - mx));
    for (double l : logits) out.push_back(float(l / total));
  }
  return out;
}

struct Backend {
  std::string name;
  graph::KernelCompiler compiler;
};

std::vector<Backend> backends() {
  std::vector<Backend> out{{"C", {}}};
#if NNVM_TEST_WITH_LLVM
  out.push_back({"LLVM", codegen::llvm_kernel_compiler()});
#endif
  return out;
}

bool has_step(const graph::CompiledModel& m, std::string_view op) {
  for (auto& st : m.steps())
    if (st.label.find(op) != std::string::npos) return true;
  return false;
}

}  // namespace

// The three models (opt level 0, the default level, the symbolic batch bound to 2) are prepared
// separately and linked in one compiler batch per back end, so each back end compiles once.
TEST_CASE("a small CNN matches plain loops at opt levels 0 and 2 and with a symbolic batch, on every back end") {
  CnnWeights w = make_weights();
  graph::Graph g = make_cnn(w, 1), batched = make_cnn(w, ir::Var("n"));
  CHECK(graph::symbolic_dims(batched) == std::vector<std::string>{"n"});
  NDArray x = nnvm_test::random_array(dtype::float32, {1, 3, 17, 19}, 7);
  NDArray x2 = nnvm_test::random_array(dtype::float32, {2, 3, 17, 19}, 8);
  std::vector<float> want = cnn_reference(w, x), want2 = cnn_reference(w, x2);
  for (const Backend& be : backends()) {
    CAPTURE(be.name);
    std::vector<graph::PreparedModel> prepared;
    prepared.push_back(graph::prepare(g, {.opt_level = 0}));
    prepared.push_back(graph::prepare(g));
    prepared.push_back(graph::prepare(batched, {.symbols = {{"n", 2}}}));
    auto models = graph::link(std::move(prepared), be.compiler);
    REQUIRE(models.size() == 3);

    const graph::CompiledModel& unfused = models[0];
    CHECK(unfused.steps().size() == 12);  // one kernel per op
    CHECK(has_step(unfused, "batch_norm"));
    const graph::CompiledModel& fused = models[1];
    // Batch norm folded into conv1's weights; conv1+relu, conv2+relu+add and gap+flatten fuse.
    CHECK_FALSE(has_step(fused, "batch_norm"));
    CHECK(has_step(fused, "conv+relu"));
    CHECK(has_step(fused, "conv+relu+add"));
    CHECK(has_step(fused, "global_average_pool+flatten"));
    CHECK(fused.steps().size() < 12);
    for (size_t m = 0; m < 2; ++m) {
      CAPTURE(m);
      auto out = models[m].run({x});
      REQUIRE(out.size() == 1);
      CHECK(out[0].shape() == std::vector<int64_t>{1, 5});
      std::string diff = nnvm_test::compare<float>(out[0].values<float>(), want, 1e-4, 1e-6);
      CHECK_MESSAGE(diff.empty(), diff);
    }

    auto out = models[2].run({x2});
    CHECK(out[0].shape() == std::vector<int64_t>{2, 5});
    std::string diff = nnvm_test::compare<float>(out[0].values<float>(), want2, 1e-4, 1e-6);
    CHECK_MESSAGE(diff.empty(), diff);
    // The two samples are different inputs, so their probabilities must differ too.
    CHECK(out[0].values<float>()[0] != out[0].values<float>()[5]);
  }
}

}  // namespace graph_e2e_cnn
