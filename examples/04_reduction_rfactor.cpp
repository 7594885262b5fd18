// Lesson 4: a reduction, made parallel and vectorized with rfactor.
//
// A dot product is one long sum. Its loop carries a dependence from each addition to the
// next, so neither vectorize nor parallel may touch it directly; rfactor rewrites the sum as
// a sum of independent partial sums, whose axis is data-parallel and takes both. Same format
// as lesson 1: loop nest, time, speed-ups and a check for every step.
//
//   ./04_reduction_rfactor          2^18 elements (2 MB of data: stays in the L2 caches)
//   ./04_reduction_rfactor --quick  2^14 elements (what CI runs)
#include <nnvm/tensor.hpp>

#include "lesson.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>

using namespace nnvm;
using ir::MemoryScope;

namespace {

using lesson::Step;
using lesson::run_lesson;

template <int64_t n>
int run(int reps) {
  static_assert(n % (16 * 64) == 0, "the schedules split n into 16 chunks of 64-element blocks");
  static_assert(4 * n <= (1 << 24), "beyond this the integer-valued sums below are no longer exact in float");
  auto a = placeholder<float, n>("a");
  auto b = placeholder<float, n>("b");
  auto k = reduce_axis<n>("k");
  auto D = compute<Shape<1>>([&](auto) { return sum(a(k) * b(k), k); }, "dot", {"i"});

  // What the schedule checker says when we ask for the obvious thing.
  std::string refused;
  {
    auto s = schedule::create_schedule(D);
    auto [ko, ki] = s[D].split(s[D].reduce_axis(0), 16);
    try {
      s[D].vectorize(ki);
    } catch (const UserError& e) {
      refused = e.what();
    }
    if (refused.empty()) {
      std::cout << "vectorize accepted a reduction axis: this lesson's premise no longer holds\n";
      return 1;
    }
  }

  std::vector<te::Tensor> args{a, b, D};
  std::vector<Step> steps = {
      {"naive",
       "One accumulator: each addition waits for the one before (4 cycles of FP latency), and\n"
       "the C compiler may not reorder float additions (no -ffast-math), so it stays scalar.",
       args, [](schedule::Schedule&) {}},

      {"split reduction",
       "Splitting k into k.outer x k.inner (16) keeps the same additions in the same order: the\n"
       "same chain, the same speed. Vectorizing k.inner would reorder them, so it is refused:\n  " + refused,
       args, [&](schedule::Schedule& s) { s[D].split(s[D].reduce_axis(0), 16); }},

      {"rfactor, vectorized",
       "rfactor(dot, k.inner) makes a new stage dot.rf(k.inner) of 64 partial sums, each over\n"
       "k.outer; dot becomes the sum of those 64. In dot.rf, k.inner is a data-parallel axis:\n"
       "put it innermost, vectorize it by 16 and unroll the 4 vectors, so 4 independent FMA\n"
       "chains hide the latency. dot.rf lives in `local` scope: 64 floats, i.e. 4 registers.\n"
       "The additions happen in a different order, so with general data the result differs\n"
       "in rounding (usually for the better: 64 short chains instead of one long one).",
       args,
       [&](schedule::Schedule& s) {
         auto d = s[D];
         auto [ko, ki] = d.split(d.reduce_axis(0), 64);
         te::Tensor R = s.rfactor(D, ki);
         auto r = s[R];
         r.set_scope(MemoryScope::local);
         auto [vo, vi] = r.split(r.axis(0), 16);
         r.reorder({r.reduce_axis(0), vo, vi});
         r.unroll(vo);
         r.vectorize(vi);
       }},

      {"parallel over rfactor",
       "Two levels of rfactor: split_nparts cuts k into 16 contiguous chunks and rfactor on the\n"
       "chunk axis gives dot.rf(chunk), one partial sum per chunk, a data-parallel axis that\n"
       "runs on the thread pool. Inside a chunk, the previous step's vectorized rfactor, now\n"
       "computed at the chunk loop so its 64 partials are private to each chunk. Threads pay\n"
       "only when a thread's share takes well longer than waking it and the threads do not\n"
       "share the bottleneck: after vectorizing, this sum reads 8 bytes per 2 flops and waits\n"
       "on the caches, and the whole sum takes tens of microseconds. Compare the times.",
       args,
       [&](schedule::Schedule& s) {
         auto d = s[D];
         auto [chunk, within] = d.split_nparts(d.reduce_axis(0), 16);
         te::Tensor C = s.rfactor(D, chunk);
         auto c = s[C];
         c.parallel(c.axis(0));
         auto [wo, wi] = c.split(c.reduce_axis(0), 64);
         te::Tensor R = s.rfactor(C, wi);
         auto r = s[R];
         r.set_scope(MemoryScope::local);
         r.compute_at(c, c.axis(0));
         auto [vo, vi] = r.split(r.axis(0), 16);
         r.reorder({r.reduce_axis(0), vo, vi});
         r.unroll(vo);
         r.vectorize(vi);
       }},
  };

  std::vector<NDArray> buffers;
  buffers.emplace_back(dtype::float32, std::vector<int64_t>{n});
  buffers.emplace_back(dtype::float32, std::vector<int64_t>{n});
  buffers.emplace_back(dtype::float32, std::vector<int64_t>{1});
  std::mt19937 rng(3);
  // Small integers: every product and partial sum (at most 4 * 2^18 in magnitude) is exact in
  // float, so every order of summation gives exactly the double result. The check can then be
  // exact, and any lost or repeated element shows.
  std::uniform_int_distribution<int> dist(-2, 2);
  for (int v = 0; v < 2; ++v)
    for (auto& x : buffers[size_t(v)].values<float>()) x = float(dist(rng));
  auto av = buffers[0].values<float>(), bv = buffers[1].values<float>();
  std::vector<double> want(1, 0.0);
  for (int64_t e = 0; e < n; ++e) want[0] += double(av[size_t(e)]) * bv[size_t(e)];

  std::cout << "Lesson 4: dot product of two float32 vectors of " << n << " elements\n";
  int wrong = run_lesson(steps, buffers, want, 0.0, 0.0, 2.0 * double(n) * 1e-9, reps);
  if (wrong) std::cout << "\n" << wrong << " step(s) computed a wrong result\n";
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    return quick ? run<(1 << 14)>(5) : run<(1 << 18)>(51);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
