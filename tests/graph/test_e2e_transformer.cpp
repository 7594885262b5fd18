// End to end: one transformer encoder block (sequence 7, d_model 12, 2 heads of 6, FFN 20)
// written with the GraphBuilder: Q/K/V projections, heads split by reshape + transpose, scaled
// dot-product attention with softmax, heads merged, output projection, residual + layer norm,
// FFN (matmul, gelu, matmul), residual + layer norm. It compiles at opt levels 0 and 2 for the C
// JIT and LLVM when built, and matches the same block written below as plain loops in double.
#include "support/pch.hpp"
#include "support/check.hpp"

#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_graph.hpp"
#endif

namespace graph_e2e_transformer {

using namespace nnvm;
using graph::GraphBuilder;

namespace {

constexpr int64_t S = 7, D = 12, H = 2, Dh = D / H, F = 20;
constexpr double kEpsilon = 1e-5;

struct BlockWeights {
  NDArray wq, bq, wk, bk, wv, bv, wo, bo, g1, be1, w1, b1, w2, b2, g2, be2;
};

BlockWeights make_weights() {
  auto r = [](std::vector<int64_t> shape, uint32_t seed, double lo = -0.5, double hi = 0.5) {
    return nnvm_test::random_array(dtype::float32, std::move(shape), seed, lo, hi);
  };
  return {r({D, D}, 201), r({D}, 202), r({D, D}, 203), r({D}, 204), r({D, D}, 205), r({D}, 206),
          r({D, D}, 207), r({D}, 208), r({D}, 209, 0.5, 1.5), r({D}, 210), r({D, F}, 211), r({F}, 212),
          r({F, D}, 213), r({D}, 214), r({D}, 215, 0.5, 1.5), r({D}, 216)};
}

NDArray int64s(std::vector<int64_t> v) {
  int64_t n = int64_t(v.size());
  return NDArray::from(v, {n});
}

graph::Graph make_block(const BlockWeights& w) {
  GraphBuilder b("encoder");
  auto x = b.input("x", dtype::float32, {S, D});
  auto c = [&](const std::string& name, const NDArray& a) { return b.constant(name, a); };
  auto linear = [&](const std::string& name, graph::Value in, const NDArray& wt, const NDArray& bias) {
    return b.op("add", {b.op("matmul", {in, c(name + "_w", wt)}, {}, name + "_mm"), c(name + "_b", bias)}, {}, name);
  };
  auto perm = [](std::vector<int64_t> p) { return ops::Attrs().set_ints("perm", std::move(p)); };
  // (S, D) → (S, H, Dh) → heads first: (H, S, Dh), or (H, Dh, S) for the keys.
  auto split_heads = [&](graph::Value v, const std::string& name, std::vector<int64_t> p) {
    auto r = b.op("reshape", {v, c(name + "_shape", int64s({-1, H, Dh}))}, {}, name + "_split");
    return b.op("transpose", {r}, perm(std::move(p)), name + "_heads");
  };
  auto q = split_heads(linear("q", x, w.wq, w.bq), "q", {1, 0, 2});
  auto kt = split_heads(linear("k", x, w.wk, w.bk), "k", {1, 2, 0});
  auto v = split_heads(linear("v", x, w.wv, w.bv), "v", {1, 0, 2});
  auto scale = c("scale", NDArray::from(std::vector<float>{float(1.0 / std::sqrt(double(Dh)))}, {1}));
  auto scores = b.op("mul", {b.op("matmul", {q, kt}, {}, "qk"), scale}, {}, "scores");
  auto attn = b.op("softmax", {scores}, ops::Attrs().set_int("axis", -1), "attn");
  auto ctx = b.op("matmul", {attn, v}, {}, "ctx");
  auto merged = b.op("reshape", {b.op("transpose", {ctx}, perm({1, 0, 2}), "ctx_t"), c("merge_shape", int64s({S, D}))},
                     {}, "merged");
  auto ln = [&](graph::Value in, const NDArray& gamma, const NDArray& beta, const std::string& name) {
    return b.op("layer_norm", {in, c(name + "_g", gamma), c(name + "_b", beta)},
                ops::Attrs().set_int("axis", -1).set_float("epsilon", kEpsilon), name);
  };
  auto h1 = ln(b.op("add", {x, linear("o", merged, w.wo, w.bo)}, {}, "res1"), w.g1, w.be1, "ln1");
  auto ffn = b.op("gelu", {linear("ff1", h1, w.w1, w.b1)}, {}, "act");
  auto y = ln(b.op("add", {h1, linear("ff2", ffn, w.w2, w.b2)}, {}, "res2"), w.g2, w.be2, "ln2");
  b.output(y);
  return b.build();
}

using Mat = std::vector<double>;  // row-major

Mat to_mat(const NDArray& a) {
  Mat m;
  for (float f : a.values<float>()) m.push_back(double(f));
  return m;
}

// (rows x k) * (k x cols) + bias[cols].
Mat linear_ref(const Mat& x, int64_t rows, int64_t k, const NDArray& w, const NDArray& bias, int64_t cols) {
  Mat wm = to_mat(w), bm = to_mat(bias), y(size_t(rows * cols));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double acc = bm[size_t(j)];
      for (int64_t t = 0; t < k; ++t) acc += x[size_t(i * k + t)] * wm[size_t(t * cols + j)];
      y[size_t(i * cols + j)] = acc;
    }
  return y;
}

// Each row of (S x D) normalized, then * gamma + beta.
Mat layer_norm_ref(const Mat& x, const NDArray& gamma, const NDArray& beta) {
  Mat g = to_mat(gamma), bt = to_mat(beta), y(x.size());
  for (int64_t i = 0; i < S; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < D; ++j) mean += x[size_t(i * D + j)];
    mean /= D;
    for (int64_t j = 0; j < D; ++j) var += (x[size_t(i * D + j)] - mean) * (x[size_t(i * D + j)] - mean);
    var /= D;
    for (int64_t j = 0; j < D; ++j)
      y[size_t(i * D + j)] = (x[size_t(i * D + j)] - mean) / std::sqrt(var + kEpsilon) * g[size_t(j)] + bt[size_t(j)];
  }
  return y;
}

std::vector<float> block_reference(const BlockWeights& w, const NDArray& x_arr) {
  Mat x = to_mat(x_arr);
  Mat q = linear_ref(x, S, D, w.wq, w.bq, D), k = linear_ref(x, S, D, w.wk, w.bk, D), v = linear_ref(x, S, D, w.wv, w.bv, D);
  // Head h owns columns [h * Dh, (h + 1) * Dh) of the projections.
  Mat merged(size_t(S * D), 0.0);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < S; ++i) {
      std::vector<double> p(S);
      double mx = -INFINITY, total = 0;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t t = 0; t < Dh; ++t) dot += q[size_t(i * D + h * Dh + t)] * k[size_t(j * D + h * Dh + t)];
        p[size_t(j)] = dot / std::sqrt(double(Dh));
        mx = std::max(mx, p[size_t(j)]);
      }
      for (double& e : p) total += (e = std::exp(e - mx));
      for (int64_t t = 0; t < Dh; ++t) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += p[size_t(j)] / total * v[size_t(j * D + h * Dh + t)];
        merged[size_t(i * D + h * Dh + t)] = acc;
      }
    }
  Mat o = linear_ref(merged, S, D, w.wo, w.bo, D);
  for (size_t i = 0; i < o.size(); ++i) o[i] += x[i];
  Mat h1 = layer_norm_ref(o, w.g1, w.be1);
  Mat f = linear_ref(h1, S, D, w.w1, w.b1, F);
  for (double& e : f) e = 0.5 * e * (1.0 + std::erf(e / std::sqrt(2.0)));
  Mat f2 = linear_ref(f, S, F, w.w2, w.b2, D);
  for (size_t i = 0; i < f2.size(); ++i) f2[i] += h1[i];
  Mat y = layer_norm_ref(f2, w.g2, w.be2);
  return std::vector<float>(y.begin(), y.end());
}

}  // namespace

TEST_CASE("a transformer encoder block matches plain loops at opt levels 0 and 2, on every back end") {
  BlockWeights w = make_weights();
  graph::Graph g = make_block(w);
  NDArray x = nnvm_test::random_array(dtype::float32, {S, D}, 9);
  std::vector<float> want = block_reference(w, x);
  std::vector<std::pair<std::string, graph::KernelCompiler>> compilers{{"C", {}}};
#if NNVM_TEST_WITH_LLVM
  compilers.push_back({"LLVM", codegen::llvm_kernel_compiler()});
#endif
  for (auto& [name, compiler] : compilers) {
    CAPTURE(name);
    // Both opt levels in one compiler batch.
    std::vector<graph::PreparedModel> prepared;
    prepared.push_back(graph::prepare(g, {.opt_level = 0}));
    prepared.push_back(graph::prepare(g));
    auto models = graph::link(std::move(prepared), compiler);
    REQUIRE(models.size() == 2);
    // Fused: e.g. matmul+add+reshape+transpose per projection.
    CHECK(models[1].steps().size() < models[0].steps().size());
    for (size_t m = 0; m < 2; ++m) {
      CAPTURE(m);
      auto out = models[m].run({x});
      REQUIRE(out.size() == 1);
      CHECK(out[0].shape() == std::vector<int64_t>{S, D});
      std::string diff = nnvm_test::compare<float>(out[0].values<float>(), want, 1e-4, 1e-5);
      CHECK_MESSAGE(diff.empty(), diff);
    }
  }
}

}  // namespace graph_e2e_transformer
