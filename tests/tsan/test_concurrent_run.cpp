// Built with -fsanitize=thread: one compiled CNN runs from 4 threads at once, many iterations
// each with its own input, and every result must equal a single-threaded run of that input; then
// the same with each run asking the executor's thread pool for several threads, so concurrent
// callers contend for the pool. ThreadSanitizer checks the host side (executor, kernel call,
// workspace, thread pool); the JIT-compiled kernels themselves are not instrumented.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <thread>

using namespace nnvm;

namespace {

constexpr int kThreads = 4, kIterations = 25;

// conv 3x3 (16 channels over 33x35, big enough that its loops go parallel) → relu → max pool
// 2x2 → conv 3x3 stride 2 group 2, residual through a 1x1 stride-2 projection → global average
// pool → flatten → dense → softmax.
graph::Graph make_cnn() {
  graph::GraphBuilder b("tsan_cnn");
  auto x = b.input("x", dtype::float32, {1, 3, 33, 35});
  auto c = [&](const char* name, std::vector<int64_t> shape, uint32_t seed) {
    return b.constant(name, nnvm_test::random_array(dtype::float32, std::move(shape), seed));
  };
  auto h = b.op("relu", {b.op("conv", {x, c("w1", {16, 3, 3, 3}, 1), c("b1", {16}, 2)},
                              ops::Attrs().set_ints("pads", {1, 1, 1, 1}))});
  auto pool = b.op("max_pool", {h}, ops::Attrs().set_ints("kernel_shape", {2, 2}).set_ints("strides", {2, 2}));
  auto proj = b.op("conv", {pool, c("wp", {8, 16, 1, 1}, 3)}, ops::Attrs().set_ints("strides", {2, 2}));
  auto conv2 = b.op("conv", {pool, c("w2", {8, 8, 3, 3}, 4), c("b2", {8}, 5)},
                    ops::Attrs().set_ints("strides", {2, 2}).set_ints("pads", {1, 1, 1, 1}).set_int("group", 2));
  auto sum = b.op("add", {b.op("relu", {conv2}), proj});
  auto flat = b.op("flatten", {b.op("global_average_pool", {sum})});
  auto logits = b.op("dense", {flat, c("wd", {8, 5}, 6), c("bd", {5}, 7)});
  b.output(b.op("softmax", {logits}, ops::Attrs().set_int("axis", -1)));
  return b.build();
}

// Runs `model` from kThreads threads at once (thread t on inputs[t], `num_threads` per run) and
// returns, per thread, the first mismatch against want[t] (empty when all matched).
std::vector<std::string> hammer(const graph::CompiledModel& model, const std::vector<NDArray>& inputs,
                                const std::vector<NDArray>& want, int num_threads) {
  std::vector<std::string> diffs(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int it = 0; it < kIterations && diffs[size_t(t)].empty(); ++it) {
        auto out = model.run({inputs[size_t(t)]}, num_threads);
        diffs[size_t(t)] =
            nnvm_test::compare<float>(out.at(0).values<float>(), want[size_t(t)].values<float>(), 1e-5, 1e-7);
      }
    });
  for (auto& th : threads) th.join();
  return diffs;
}

}  // namespace

TEST_CASE("one compiled CNN runs from 4 threads at once, with and without the pool's threads") {
  const graph::Graph g = make_cnn();
  const auto model = graph::compile(g);
  // The first conv's loops must go parallel, or the pool would never be exercised.
  bool parallel = false;
  for (auto& k : model.kernels()) parallel |= ir::to_string(k.func().body).find("parallel") != std::string::npos;
  CHECK(parallel);
  std::vector<NDArray> inputs, want;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(nnvm_test::random_array(dtype::float32, {1, 3, 33, 35}, 100 + uint32_t(t)));
    want.push_back(model.run({inputs.back()}, 1).at(0));
  }
  // Different inputs must give different outputs, or a run reading another thread's data would pass.
  for (int t = 1; t < kThreads; ++t)
    REQUIRE_FALSE(nnvm_test::compare<float>(want[size_t(t)].values<float>(), want[0].values<float>(), 1e-5, 1e-7).empty());

  for (int num_threads : {1, 0, 3}) {
    CAPTURE(num_threads);
    for (auto& d : hammer(model, inputs, want, num_threads)) CHECK_MESSAGE(d.empty(), d);
  }
  // One caller alone, fanning out over the pool's workers many times.
  for (int it = 0; it < 2 * kIterations; ++it) {
    auto out = model.run({inputs[size_t(it % kThreads)]}, 4);
    std::string d = nnvm_test::compare<float>(out.at(0).values<float>(), want[size_t(it % kThreads)].values<float>(),
                                              1e-5, 1e-7);
    REQUIRE_MESSAGE(d.empty(), d);
  }
}
