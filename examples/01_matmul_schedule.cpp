// Lesson 1: scheduling a matmul, one step at a time.
//
// The algorithm, C(i, j) = sum over k of A(i, k) * B(k, j), is written once. Each step below
// only changes the *schedule*: the order, shape and kind of the loops that compute it. For
// every step the program prints the loop nest the schedule produces, runs the kernel, checks
// it against a plain C++ loop, and reports its time and speed-up against the previous step
// and against the naive loop nest. Read it top to bottom with its output beside it.
//
//   ./01_matmul_schedule          n = 1024
//   ./01_matmul_schedule --quick  n = 128 (what CI runs)
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
  // The algorithm, with static extents: a shape mistake is a compile error.
  auto A = placeholder<float, n, n>("A");
  auto B = placeholder<float, n, n>("B");
  auto k = reduce_axis<n>("k");
  auto C = compute<Shape<n, n>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");

  // The same product over B repacked into panels of 32 columns (two AVX-512 registers, two
  // cache lines): Bp(jo, k, ji) = B(k, jo * 32 + ji). Packing is a new *stage*, so it is
  // written as a compute; the product's schedule does not change because of it.
  constexpr int64_t P = 32;
  auto Bp = compute<Shape<n / P, n, P>>([&](auto jo, auto kk, auto ji) { return B(kk, jo * P + ji); }, "Bp",
                                        {"jo", "k", "ji"});
  auto k2 = reduce_axis<n>("k");
  auto Cp = compute<Shape<n, n>>([&](auto i, auto j) { return sum(A(i, k2) * Bp(j / P, k2, j % P), k2); }, "C");

  // The register tile of the last two steps, for C = A * B or for C = A * Bp, sized from this
  // machine's vector registers (Target::host()): each of `rows` rows holds P / lanes vector
  // accumulators, and 4 registers stay free for the B vectors and the broadcast of A. AVX-512
  // (32 registers of 16 floats): 8 rows x 2 vectors; AVX2 (16 of 8): 3 rows x 4 vectors.
  const target::Target host = target::Target::host();
  const int64_t lanes = host.vector_lanes(dtype::float32), registers = host.vector_registers;
  const int64_t rows = std::clamp<int64_t>((registers - 4) / (P / lanes), 1, 8);
  auto register_tile = [&](schedule::Schedule& s, const te::Tensor& out) {
    te::Tensor CL = s.cache_write(out, MemoryScope::local);  // before other primitives on out
    auto c = s[out];
    auto [io, ii] = c.split(c.axis(0), rows);
    auto [jo, ji] = c.split(c.axis(1), P);
    c.reorder({jo, io, ii, ji});
    c.vectorize(ji);
    c.parallel(jo);
    auto cl = s[CL];
    cl.compute_at(c, io);
    auto [jv, jl] = cl.split(cl.axis(1), lanes);
    auto [ko, ki] = cl.split(cl.reduce_axis(0), 4);
    cl.reorder({ko, ki, cl.axis(0), jv, jl});
    cl.unroll(ki);
    cl.unroll(cl.axis(0));
    cl.unroll(jv);
    cl.vectorize(jl);
  };

  std::vector<Step> steps = {
      {"naive",
       "The loops in the order the math is written: i, j, then k. The innermost loop reads\n"
       "B(k, j) down a column, n floats apart: every load touches a new cache line, and each\n"
       "C(i, j) walks all n rows of B. (gcc -O3 vectorizes this nest across 8 j's by itself,\n"
       "which softens the column walk; it does not tile.)",
       {A, B, C}, [](schedule::Schedule&) {}},

      {"tiled",
       "Walk C in 32 x 32 tiles, and inside a tile run k in blocks of 8 inside each row. The\n"
       "8 x 32 block of B that a k block needs (16 cache lines) is reused by all 32 rows while\n"
       "it sits in L1, and the row of C being summed stays put across the 8 products.",
       {A, B, C},
       [&](schedule::Schedule& s) {
         auto c = s[C];
         auto [io, jo, ii, ji] = c.tile(c.axis(0), c.axis(1), 32, P);
         auto [ko, ki] = c.split(c.reduce_axis(0), 8);
         c.reorder({io, jo, ko, ii, ki, ji});
       }},

      {"vectorized",
       "The 32 columns of a tile become one vector of 32 floats (the C compiler splits it into\n"
       "register-sized pieces): per k, one load of B, one broadcast of A, one fused multiply-add.\n"
       "Unrolling the 8 k's of a block removes the loop overhead and lets the compiler keep the\n"
       "C row in registers across them.",
       {A, B, C},
       [&](schedule::Schedule& s) {
         auto c = s[C];
         auto [io, jo, ii, ji] = c.tile(c.axis(0), c.axis(1), 32, P);
         auto [ko, ki] = c.split(c.reduce_axis(0), 8);
         c.reorder({io, jo, ko, ii, ki, ji});
         c.vectorize(ji);
         c.unroll(ki);
       }},

      {"parallel",
       "Rows of tiles are independent: run them on the thread pool (all cores). The gain is at\n"
       "most the number of cores, and less while the loop waits on memory rather than on\n"
       "arithmetic, as this one still does (the next two steps fix that).",
       {A, B, C},
       [&](schedule::Schedule& s) {
         auto c = s[C];
         auto [io, jo, ii, ji] = c.tile(c.axis(0), c.axis(1), 32, P);
         auto [ko, ki] = c.split(c.reduce_axis(0), 8);
         c.reorder({io, jo, ko, ii, ki, ji});
         c.vectorize(ji);
         c.unroll(ki);
         c.parallel(io);
       }},

      {"packed",
       "Copy B once into panels Bp(jo, k, ji): the 32 columns a tile needs become one contiguous\n"
       "n x 32 strip instead of n pieces of 128 bytes spread n * 4 bytes apart (4 KB at\n"
       "n = 1024: every k is a new page, a TLB miss, and lines 4 KB apart compete for the same\n"
       "few cache sets). The strip streams through the prefetcher and stays in cache. The copy\n"
       "is n^2 work against n^3 for the product. This loop nest is still limited by its loads\n"
       "and stores of C; the register tile next is where fast loads of B pay (see the last step).",
       {A, B, Cp},
       [&](schedule::Schedule& s) {
         auto c = s[Cp];
         auto [io, jo, ii, ji] = c.tile(c.axis(0), c.axis(1), 32, P);
         auto [ko, ki] = c.split(c.reduce_axis(0), 8);
         c.reorder({io, jo, ko, ii, ki, ji});
         c.vectorize(ji);
         c.unroll(ki);
         c.parallel(io);
         s[Bp].vectorize(s[Bp].axis(2));
         s[Bp].parallel(s[Bp].axis(0));
       }},

      {"register tile",
       "Until now each row of C was loaded and stored again for every block of k.\n"
       "cache_write(C, local) makes a stage C.local that accumulates a block of C over all of k\n"
       "(AVX-512: 8 rows x 2 vectors, 16 of its 32 registers; AVX2: 3 rows x 4 vectors, 12 of\n"
       "16), then copies it out once.\n"
       "compute_at puts it inside C's loop over row blocks, so the block is all the storage it\n"
       "needs; unrolling rows and vectors turns it into registers. Per k: 2 loads of Bp, 8\n"
       "broadcasts of A, 16 independent FMAs. The panel loop jo goes outside the row loop (and\n"
       "in parallel), so the panel a thread works on stays in its L2 while it walks all rows.",
       {A, B, Cp},
       [&](schedule::Schedule& s) {
         register_tile(s, Cp);
         s[Bp].vectorize(s[Bp].axis(2));
         s[Bp].parallel(s[Bp].axis(0));
       }},

      {"register tile, B not packed (control)",
       "The same register tile reading B where it is, to measure what packing buys: each k now\n"
       "loads from a different row of B, n * 4 bytes after the previous one.",
       {A, B, C}, [&](schedule::Schedule& s) { register_tile(s, C); }},
  };

  std::vector<NDArray> buffers;  // A, B, C
  for (int a = 0; a < 3; ++a) buffers.emplace_back(dtype::float32, std::vector<int64_t>{n, n});
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int a = 0; a < 2; ++a)
    for (auto& v : buffers[size_t(a)].values<float>()) v = dist(rng);
  auto a = buffers[0].values<float>(), b = buffers[1].values<float>();
  std::vector<double> want(size_t(n * n), 0.0);  // the plain loop, in double
  for (int64_t i = 0; i < n; ++i)
    for (int64_t kk = 0; kk < n; ++kk)
      for (int64_t j = 0; j < n; ++j) want[size_t(i * n + j)] += double(a[size_t(i * n + kk)]) * b[size_t(kk * n + j)];

  std::cout << "Lesson 1: C = A * B with n = " << n << " (float32)\n";
  // Each of the n products rounds once in float: allow 1e-5 per term of the sum.
  int wrong = run_lesson(steps, buffers, want, 1e-5 * double(n), 1e-3, 2.0 * double(n * n * n) * 1e-9, reps);
  if (wrong) std::cout << "\n" << wrong << " step(s) computed a wrong result\n";
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    return quick ? run<128>(5) : run<1024>(15);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
