// Lesson 6: a network for a microcontroller, as plain C with no runtime.
//
// A tiny keyword spotter (a 12x8 spectrogram -> 3x3 conv with 4 filters + ReLU -> dense ->
// softmax over 3 words) is built in C++ with the graph builder, compiled for a Cortex-M4F
// (target "c-standalone -mcpu=cortex-m4": one thread, no SIMD, plain loops), and written out as
//   model.h    kws_run(input, probabilities, arena) and NNVM_KWS_ARENA_BYTES,
//   model.c    the kernels and the call sequence,
//   weights.c  the weights as const arrays (flash),
// plus expected.h: one input and the probabilities computed here by plain loops, the reference
// board_main.c checks the microcontroller's result against. run.sh builds all of it for the
// Cortex-M4F and runs it under QEMU; docs/tutorial.md walks through the generated files.
//
//   ./06_microcontroller OUT_DIR
#include <nnvm/graph/standalone_c.hpp>
#include <nnvm/nnvm.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace nnvm;

namespace {

constexpr int64_t H = 12, W = 8, F = 4, K = 3, WORDS = 3;

// Deterministic "random" numbers in [-0.5, 0.5): no generator state to reproduce.
float value(int64_t i, float scale) { return float(std::sin(double(i) * 12.9898) * 0.5) * scale; }

std::vector<float> values(int64_t n, float scale, int64_t seed) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = value(i + seed * 1000, scale);
  return v;
}

// The same network as plain loops: the reference (conv with zero padding 1, ReLU, dense, softmax).
std::vector<float> reference(const std::vector<float>& x, const std::vector<float>& w, const std::vector<float>& b,
                             const std::vector<float>& dw, const std::vector<float>& db) {
  std::vector<float> feat(static_cast<size_t>(F * H * W));
  for (int64_t f = 0; f < F; ++f)
    for (int64_t i = 0; i < H; ++i)
      for (int64_t j = 0; j < W; ++j) {
        float acc = b[size_t(f)];
        for (int64_t di = 0; di < K; ++di)
          for (int64_t dj = 0; dj < K; ++dj) {
            int64_t y = i + di - 1, z = j + dj - 1;
            if (y >= 0 && y < H && z >= 0 && z < W) acc += x[size_t(y * W + z)] * w[size_t((f * K + di) * K + dj)];
          }
        feat[size_t((f * H + i) * W + j)] = std::max(acc, 0.0f);
      }
  std::vector<float> logits(WORDS), prob(WORDS);
  for (int64_t o = 0; o < WORDS; ++o) {
    float acc = db[size_t(o)];
    for (int64_t k = 0; k < F * H * W; ++k) acc += feat[size_t(k)] * dw[size_t(k * WORDS + o)];
    logits[size_t(o)] = acc;
  }
  float mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
  for (int64_t o = 0; o < WORDS; ++o) sum += prob[size_t(o)] = std::exp(logits[size_t(o)] - mx);
  for (auto& p : prob) p /= sum;
  return prob;
}

std::string c_array(const char* name, const std::vector<float>& v) {
  std::string s = std::string("static const float ") + name + "[" + std::to_string(v.size()) + "] = {";
  char buf[48];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.9gf", i ? ", " : "", double(v[i]));
    s += buf;
  }
  return s + "};\n";
}

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 && std::string(argv[1]) != "--quick" ? argv[1] : "06_microcontroller_out";
  std::filesystem::create_directories(out);

  // 1. The network, with its weights as constants.
  auto x = values(H * W, 2.0f, 1), w = values(F * K * K, 1.0f, 2), b = values(F, 0.2f, 3);
  auto dw = values(F * H * W * WORDS, 0.2f, 4), db = values(WORDS, 0.2f, 5);
  graph::GraphBuilder g("kws");
  ops::Attrs conv;
  conv.set("kernel_shape", std::vector<int64_t>{K, K});
  conv.set("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto input = g.input("spectrogram", dtype::float32, {1, 1, H, W});
  auto feat = g.op("relu", {g.op("conv", {input, g.constant("conv_w", NDArray::from(w, {F, 1, K, K})),
                                          g.constant("conv_b", NDArray::from(b, {F}))},
                                 conv)});
  auto logits = g.op("dense", {g.op("flatten", {feat}), g.constant("dense_w", NDArray::from(dw, {F * H * W, WORDS})),
                               g.constant("dense_b", NDArray::from(db, {WORDS}))});
  g.output(g.op("softmax", {logits}));

  // 2. Compiled for a Cortex-M4F, favouring RAM and code size: the conv's padding is read in
  //    place, and each conv output is computed inside the ReLU's loop, so it needs no buffer.
  target::Target t = target::parse_target("c-standalone -mcpu=cortex-m4");
  t.opt_for = target::OptFor::size;
  graph::PreparedModel prepared = graph::prepare(g.build(), {.target = t});
  graph::StandaloneC c = graph::emit_standalone_c(prepared, "kws");
  write(out + "/model.h", c.model_h);
  write(out + "/model.c", c.model_c);
  write(out + "/weights.c", c.weights_c);

  // 3. The reference the board checks against.
  write(out + "/expected.h", "/* One input and the probabilities plain loops compute for it (06_microcontroller.cpp). */\n" +
                                 c_array("example_input", x) + c_array("expected_output", reference(x, w, b, dw, db)));

  const auto& fp = c.footprint;
  std::cout << "wrote " << out << "/model.h, model.c, weights.c, expected.h\n"
            << "arena " << fp.arena_bytes << " B (every intermediate tensor added up: " << fp.intermediate_bytes
            << " B), weights " << fp.weights_bytes << " B\n";
  return 0;
}
