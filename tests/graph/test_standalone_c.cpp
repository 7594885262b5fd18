// Standalone C (graph/standalone_c.hpp): a small CNN built in code is emitted for a
// microcontroller target, compiled by the host's C compiler with the strict flags and the
// sanitizers, run, and checked against plain loops; the MCU recipes shrink the arena.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <unistd.h>

#include <filesystem>

#include "nnvm/graph/standalone_c.hpp"

namespace graph_standalone_c {

using namespace nnvm;

namespace {

constexpr int64_t H = 6, W = 5, F = 3, N = 4;

struct Net {
  graph::Graph graph;
  std::vector<float> x, w, b, dw, db;
};

// spectrogram [1,1,H,W] -> conv 3x3 pad 1 (F filters) + relu -> flatten -> dense N -> softmax;
// outputs: the probabilities, the relu'd features, and the input itself (a copied output).
Net net() {
  Net n;
  auto fill = [](int64_t count, int64_t seed) {
    std::vector<float> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) v[size_t(i)] = float(std::sin(double(i + 100 * seed) * 1.7));
    return v;
  };
  n.x = fill(H * W, 1), n.w = fill(F * 9, 2), n.b = fill(F, 3), n.dw = fill(F * H * W * N, 4), n.db = fill(N, 5);
  graph::GraphBuilder g("tiny net");
  ops::Attrs conv;
  conv.set("kernel_shape", std::vector<int64_t>{3, 3});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto x = g.input("x", dtype::float32, {1, 1, H, W});
  auto feat = g.op("relu", {g.op("conv", {x, g.constant("w", NDArray::from(n.w, {F, 1, 3, 3})),
                                          g.constant("b", NDArray::from(n.b, {F}))},
                                 conv)});
  auto logits = g.op("dense", {g.op("flatten", {feat}), g.constant("dw", NDArray::from(n.dw, {F * H * W, N})),
                               g.constant("db", NDArray::from(n.db, {N}))});
  g.output(g.op("softmax", {logits}));
  g.output(feat);
  g.output(x);
  n.graph = g.build();
  return n;
}

std::vector<std::vector<float>> reference(const Net& n) {
  std::vector<float> feat(static_cast<size_t>(F * H * W)), prob(static_cast<size_t>(N));
  for (int64_t f = 0; f < F; ++f)
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < W; ++j) {
        float acc = n.b[size_t(f)];
        for (int64_t di = 0; di < 3; ++di)
          for (int64_t dj = 0; dj < 3; ++dj) {
            int64_t y = i + di - 1, z = j + dj - 1;
            if (y >= 0 && y < H && z >= 0 && z < W) acc += n.x[size_t(y * W + z)] * n.w[size_t((f * 3 + di) * 3 + dj)];
          }
        feat[size_t((f * H + i) * W + j)] = std::max(acc, 0.0f);
      }
  float mx = -INFINITY, sum = 0;
  for (int64_t o = 0; o < N; ++o) {
    float acc = n.db[size_t(o)];
    for (int64_t k = 0; k < F * H * W; ++k) acc += feat[size_t(k)] * n.dw[size_t(k * N + o)];
    prob[size_t(o)] = acc;
    mx = std::max(mx, acc);
  }
  for (auto& p : prob) sum += p = std::exp(p - mx);
  for (auto& p : prob) p /= sum;
  return {prob, feat, n.x};
}

// A main() that runs the model once on `x` and prints every output element as float bits.
std::string harness(const graph::StandaloneC& c, const std::vector<float>& x) {
  std::string s = "#include <stdio.h>\n#include <string.h>\n#include \"model.h\"\nstatic const float x[] = {";
  char buf[40];
  for (size_t i = 0; i < x.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%af", i ? ", " : "", double(x[i]));
    s += buf;
  }
  s += "};\nstatic uint8_t arena[NNVM_TINY_NET_ARENA_BYTES] __attribute__((aligned(16)));\n";
  std::string args = "x, ";
  for (size_t k = 0; k < c.outputs.size(); ++k) {
    s += str_cat("static float out", k, "[NNVM_TINY_NET_OUTPUT_", k, "_ELEMENTS];\n");
    args += str_cat("out", k, ", ");
  }
  s += str_cat("int main(void) {\n  unsigned i, bits;\n  if (tiny_net_run(", args, "arena) != NNVM_TINY_NET_OK) return 1;\n");
  for (size_t k = 0; k < c.outputs.size(); ++k)
    s += str_cat("  for (i = 0; i < NNVM_TINY_NET_OUTPUT_", k, "_ELEMENTS; ++i) {\n    memcpy(&bits, &out", k,
                 "[i], 4);\n    printf(\"", k, " %x\\n\", bits);\n  }\n");
  return s + "  return 0;\n}\n";
}

// Builds and runs the generated files with the harness; returns each output's values.
std::vector<std::vector<float>> build_and_run(const graph::StandaloneC& c, const std::vector<float>& x,
                                              const std::string& tag) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / str_cat("nnvm-standalone-test-", getpid(), "-", tag);
  fs::create_directories(dir);
  for (auto& [file, text] : {std::pair{"model.h", &c.model_h}, {"model.c", &c.model_c}, {"weights.c", &c.weights_c}})
    std::ofstream(dir / file) << *text;
  std::ofstream(dir / "main.c") << harness(c, x);
  const char* cc = std::getenv("CC");
  auto [status, output] = target::detail::run_command(
      str_cat("cd '", dir.string(), "' && ", cc && *cc ? cc : "cc",
              " -std=c99 -Wall -Wextra -Werror -pedantic -O1 -fsanitize=address,undefined -fno-sanitize-recover=all"
              " main.c model.c weights.c -lm -o run && ./run"));
  fs::remove_all(dir);
  INFO(output);
  REQUIRE(status == 0);
  std::vector<std::vector<float>> outs(c.outputs.size());
  std::istringstream in(output);
  size_t k;
  unsigned bits;
  while (in >> k >> std::hex >> bits >> std::dec) {
    REQUIRE(k < outs.size());
    float f;
    std::memcpy(&f, &bits, 4);
    outs[k].push_back(f);
  }
  return outs;
}

}  // namespace

TEST_CASE("standalone C for a microcontroller builds with the strict flags, runs clean under the sanitizers and matches plain loops") {
  Net n = net();
  auto want = reference(n);
  uint64_t arena_of[2] = {0, 0};
  for (auto opt_for : {target::OptFor::size, target::OptFor::speed}) {
    CAPTURE(int(opt_for));
    target::Target t = target::parse_target("c-standalone -mcpu=cortex-m4");
    t.opt_for = opt_for;
    graph::StandaloneC c = graph::emit_standalone_c(graph::prepare(n.graph, {.target = t}), "tiny net");
    CHECK(c.name == "tiny_net");
    CHECK(c.model_h.find(str_cat("#define NNVM_TINY_NET_ARENA_BYTES ", c.footprint.arena_bytes, "\n")) != std::string::npos);
    CHECK(c.model_h.find("int32_t tiny_net_run(const float* x, float* softmax") != std::string::npos);
    // No runtime, threads, allocation or I/O in what the model ships.
    for (const std::string* text : {&c.model_c, &c.weights_c})
      for (const char* banned : {"malloc", "pthread", "stdio", "fopen", "parallel_launch"})
        CHECK_MESSAGE(text->find(banned) == std::string::npos, banned);
    CHECK(c.footprint.weights_bytes == uint64_t(F * 9 + F + F * H * W * N + N) * 4);
    auto got = build_and_run(c, n.x, opt_for == target::OptFor::size ? "size" : "speed");
    REQUIRE(got.size() == 3);
    for (size_t k = 0; k < 3; ++k) CHECK(nnvm_test::compare<float>(got[k], want[k]) == "");
    arena_of[int(opt_for)] = c.footprint.arena_bytes;
  }
  // Optimizing for size reads the conv's padding in place instead of copying the input padded.
  CHECK(arena_of[int(target::OptFor::size)] < arena_of[int(target::OptFor::speed)]);
}

TEST_CASE("the MCU recipe computes a conv inside its epilogue, so the conv's result needs no tensor-sized buffer") {
  Net n = net();
  target::Target t = target::parse_target("c-standalone -mcpu=cortex-m4");
  t.opt_for = target::OptFor::size;  // the padded input is read in place too, so it needs no scratch
  graph::PreparedModel p = graph::prepare(n.graph, {.target = t});
  bool found = false;
  for (auto& fn : p.funcs) {
    if (fn.origin.rfind("fused conv+relu:", 0) != 0) continue;
    found = true;
    CAPTURE(fn.origin);
    // One float of scratch for the accumulator (64-byte aligned), not F*H*W floats.
    CHECK(target::constant_workspace_bytes(fn) == 64);
  }
  CHECK(found);
}

TEST_CASE("an elementwise step writes over the input it reads last: a smaller arena, the same results") {
  // h = dense(x) [1,16]; d = dense(h) [1,16]; m = sigmoid(h) * d; y = dense(m) [1,4]. The
  // sigmoid(*mul) step is h's last reader, so its output can take h's bytes.
  constexpr int64_t K = 8, M = 16, O = 4;
  auto fill = [](int64_t count, int64_t seed) {
    std::vector<float> v(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) v[size_t(i)] = float(std::cos(double(i + 31 * seed) * 0.9)) * 0.5f;
    return v;
  };
  std::vector<float> x = fill(K, 1), w1 = fill(K * M, 2), b1 = fill(M, 3), w2 = fill(M * M, 4), b2 = fill(M, 5),
                     w3 = fill(M * O, 6), b3 = fill(O, 7);
  graph::GraphBuilder g("tiny net");
  auto in = g.input("x", dtype::float32, {1, K});
  auto h = g.op("dense", {in, g.constant("w1", NDArray::from(w1, {K, M})), g.constant("b1", NDArray::from(b1, {M}))});
  auto d = g.op("dense", {h, g.constant("w2", NDArray::from(w2, {M, M})), g.constant("b2", NDArray::from(b2, {M}))});
  auto m = g.op("mul", {g.op("sigmoid", {h}), d});
  g.output(g.op("dense", {m, g.constant("w3", NDArray::from(w3, {M, O})), g.constant("b3", NDArray::from(b3, {O}))}));
  graph::Graph graph = g.build();

  auto dense = [](const std::vector<float>& a, const std::vector<float>& w, const std::vector<float>& b, int64_t k,
                  int64_t n) {
    std::vector<float> r(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      float acc = b[size_t(j)];
      for (int64_t i = 0; i < k; ++i) acc += a[size_t(i)] * w[size_t(i * n + j)];
      r[size_t(j)] = acc;
    }
    return r;
  };
  std::vector<float> hv = dense(x, w1, b1, K, M), dv = dense(hv, w2, b2, M, M), mv(static_cast<size_t>(M));
  for (int64_t i = 0; i < M; ++i) mv[size_t(i)] = 1.0f / (1.0f + std::exp(-hv[size_t(i)])) * dv[size_t(i)];
  std::vector<float> want = dense(mv, w3, b3, M, O);

  for (const char* spec : {"c-standalone -mcpu=cortex-m4", "c-standalone"}) {
    CAPTURE(spec);
    graph::PreparedModel p = graph::prepare(graph, {.target = target::parse_target(spec)});
    graph::StandaloneC c = graph::emit_standalone_c(p, "tiny net");
    CHECK(c.footprint.in_place_steps >= 1);
    CHECK(c.footprint.activation_bytes < p.model.memory().arena_bytes);
    auto got = build_and_run(c, x, "in_place");  // under ASan/UBSan
    REQUIRE(got.size() == 1);
    CHECK(nnvm_test::compare<float>(got[0], want) == "");
  }
}

}  // namespace graph_standalone_c
