// The main job: a matmul written in the DSL, scheduled, printed, compiled to C, run, checked
// against a plain loop, and timed against the unscheduled kernel.
//
//   ./quickstart          n = 512
//   ./quickstart --quick  n = 128 (what CI runs)
#include <nnvm/tensor.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>

using namespace nnvm;

namespace {

constexpr int64_t N = 512;        // static extents: shape mistakes are compile errors
constexpr int64_t QUICK_N = 128;

template <int64_t n>
int run(int reps) {
  // 1. The algorithm: C(i, j) = sum over k of A(i, k) * B(k, j).
  auto A = placeholder<float, n, n>("A");
  auto B = placeholder<float, n, n>("B");
  auto k = reduce_axis<n>("k");
  auto C = compute<Shape<n, n>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");

  // 2. Two schedules: the plain loop nest, and a tiled, vectorized, parallel one.
  auto naive = schedule::create_schedule(C);
  auto fast = schedule::create_schedule(C);
  auto s = fast[C];
  auto [io, jo, ii, ji] = s.tile(s.axis(0), s.axis(1), 4, 16);
  auto [ko, ki] = s.split(s.reduce_axis(0), 4);
  s.reorder({io, jo, ko, ki, ii, ji});
  s.vectorize(ji);  // 16 floats: one AVX-512 or two AVX2 registers
  s.unroll(ii);     // 4 rows of C held in registers
  s.unroll(ki);
  s.parallel(io);

  auto f_naive = lower::lower(naive, {A, B, C}, "matmul_naive");
  auto f_fast = lower::lower(fast, {A, B, C}, "matmul_tiled");
  std::cout << "== schedule: " << f_fast.origin << "\n\n== loop nest\n" << ir::to_string(f_fast) << "\n";
  std::string c_source = target::emit_c(f_fast);
  std::cout << "== generated C (" << c_source.size() << " bytes; the kernel function)\n";
  std::cout << c_source.substr(c_source.find("int32_t matmul_tiled(")) << "\n";

  // 3. Compile both with the system C compiler in one call, run, check, time.
  auto kernels = target::jit_c(std::vector<ir::LoweredFunc>{f_naive, f_fast});
  NDArray a(dtype::float32, {n, n}), b(dtype::float32, {n, n}), c(dtype::float32, {n, n});
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (auto& v : a.values<float>()) v = dist(rng);
  for (auto& v : b.values<float>()) v = dist(rng);

  std::vector<double> want(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t kk = 0; kk < n; ++kk)
      for (int64_t j = 0; j < n; ++j) want[size_t(i * n + j)] += double(a.values<float>()[size_t(i * n + kk)]) * b.values<float>()[size_t(kk * n + j)];

  auto time_ms = [&](target::Kernel& kernel) {
    std::vector<double> ms;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      kernel(a, b, c);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
  };
  double gflop = 2.0 * double(n) * double(n) * double(n) * 1e-9;
  std::cout << "== results (n = " << n << ", median of " << reps << " runs)\n";
  int failures = 0;
  for (size_t v = 0; v < kernels.size(); ++v) {
    std::fill(c.values<float>().begin(), c.values<float>().end(), NAN);  // a skipped element shows
    double ms = time_ms(kernels[v]);
    double max_err = 0;
    for (size_t i = 0; i < want.size(); ++i) max_err = std::max(max_err, std::abs(c.values<float>()[i] - want[i]));
    bool ok = max_err <= 1e-3 * double(n) * 1e-2 + 1e-4;
    failures += !ok;
    std::cout << "  " << (v == 0 ? "naive" : "tiled") << ": " << ms << " ms, " << gflop / (ms * 1e-3)
              << " GFLOP/s, max |error| vs double loop = " << max_err << (ok ? " (ok)" : " (WRONG)") << "\n";
  }
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    return quick ? run<QUICK_N>(3) : run<N>(5);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
