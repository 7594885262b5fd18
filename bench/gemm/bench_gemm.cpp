// bench_gemm: square float32 matmul C = A * B, nnvm's DSL-scheduled kernel (C emitter, JIT)
// beside OpenBLAS (cblas_sgemm) and Eigen in the same run, at 1 and 2 threads.
//
//   bench_gemm                       n = 256 512 1000 1023 1024 2048, threads 1 and 2
//   bench_gemm --sizes 1024 --reps 11 --threads 1
//                                    reps: 7 by default, more below n = 1024 (see reps_for)
//   bench_gemm --tiling 12,16,128    rows, width, k_block of the nnvm schedule
//   bench_gemm --quick               tiny sizes, 3 reps: what CI runs (checks, not speed)
//   bench_gemm --show-ir ...         also print each nnvm kernel's loop nest
//
// Every rep runs each contender once (in a rotating order), so background noise hits all of
// them alike; the table shows medians. Each contender's C is checked against OpenBLAS's; the
// exit status is non-zero if any check fails.
#include "nnvm_gemm.hpp"

#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

#include <cblas.h>

// OpenBLAS extensions; declared here too, in case <cblas.h> is another vendor's.
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" char* openblas_get_config(void);

namespace {

struct Options {
  std::vector<int64_t> sizes{256, 512, 1000, 1023, 1024, 2048};
  std::vector<int> threads{1, 2};
  int reps = 0;  // 0: reps_for(n)
  bench::GemmTiling tiling;
  bool show_ir = false;
};

std::vector<int64_t> parse_list(const std::string& s, const char* flag) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0)
      throw std::runtime_error(nnvm::str_cat(flag, " takes positive integers separated by commas, got '", s, "'"));
    out.push_back(v);
  }
  return out;
}

// Calls under ~10 ms are at the mercy of the other processes on the cores (the speed of both
// OpenBLAS and nnvm at n = 512 flips between two levels from one call to the next on a shared
// 2-core machine), so small sizes get more reps: about 7 * (1024 / n)^2, from 7 to 41.
int reps_for(int64_t n, const Options& o) {
  if (o.reps > 0) return o.reps;
  double r = 7.0 * (1024.0 / double(n)) * (1024.0 / double(n));
  return int(std::clamp(r, 7.0, 41.0));
}

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    auto value = [&]() -> std::string {
      if (a + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++a];
    };
    if (arg == "--quick") {
      o.sizes = {64, 100};  // 100: not a multiple of any tile size, so every tail path runs
      o.reps = 3;
    } else if (arg == "--show-ir") {
      o.show_ir = true;
    } else if (arg == "--sizes") {
      o.sizes = parse_list(value(), "--sizes");
    } else if (arg == "--reps") {
      o.reps = int(parse_list(value(), "--reps").at(0));
    } else if (arg == "--threads") {
      o.threads.clear();
      for (auto t : parse_list(value(), "--threads")) o.threads.push_back(int(t));
    } else if (arg == "--tiling") {
      auto v = parse_list(value(), "--tiling");
      if (v.size() != 3 || v[0] <= 0 || v[1] <= 0 || v[2] <= 0)
        throw std::runtime_error("--tiling takes rows,width,k_block (positive integers)");
      o.tiling = {v[0], v[1], v[2]};
    } else {
      throw std::runtime_error("unknown argument '" + arg + "' (see the comment at the top of bench_gemm.cpp)");
    }
  }
  return o;
}

// The OpenMP runtime (Eigen) and OpenBLAS read their settings when they are loaded, before
// main runs, so the settings go in the environment and the program runs itself again.
// Passive waiting and a short OpenBLAS spin keep idle workers of one library off the cores
// while the next contender runs.
void set_environment_and_reexec(char** argv) {
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  if (wait && std::strcmp(wait, "passive") == 0 && std::getenv("OPENBLAS_THREAD_TIMEOUT")) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);  // 2^4 cycles of spinning, OpenBLAS's minimum
  execv("/proc/self/exe", argv);
  std::cerr << "note: could not re-execute with OMP_WAIT_POLICY=passive (" << std::strerror(errno)
            << "); idle library threads may spin\n";
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// max |x - ref| / max |ref|; NaN (an element never written) makes it NaN.
double max_rel_error(const float* x, const float* ref, size_t count) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < count; ++i) {
    double d = std::abs(double(x[i]) - double(ref[i]));
    if (std::isnan(d)) return NAN;
    err = std::max(err, d);
    scale = std::max(scale, std::abs(double(ref[i])));
  }
  return err / std::max(scale, 1e-30);
}

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

int main(int argc, char** argv) {
  set_environment_and_reexec(argv);
  Options opt;
  try {
    opt = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_gemm: " << e.what() << "\n";
    return 2;
  }
#ifdef _OPENMP
  const bool eigen_parallel = true;
#else
  const bool eigen_parallel = false;
#endif
  std::printf("bench_gemm: C = A * B, float32, square n x n, row-major; GFLOP/s = 2 n^3 / median time\n");
  std::printf("  cpu      %s, %ld online cores\n", cpu_model().c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("  openblas %s (cblas_sgemm, openblas_set_num_threads)\n", openblas_get_config());
  std::printf("  eigen    %d.%d.%d, %s\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
              eigen_parallel ? "OpenMP on (Eigen::setNbThreads)"
                             : "built WITHOUT OpenMP: single-threaded in every row (marked *)");
  std::printf("  nnvm     DSL schedule %s, packing stages inside the kernel, C emitter + system cc\n",
              bench::describe(opt.tiling).c_str());
  std::printf("  env      OMP_WAIT_POLICY=%s OPENBLAS_THREAD_TIMEOUT=%s; reps interleaved, medians shown\n",
              std::getenv("OMP_WAIT_POLICY"), std::getenv("OPENBLAS_THREAD_TIMEOUT"));

  std::vector<nnvm::ir::LoweredFunc> fns;
  try {
    for (auto n : opt.sizes) fns.push_back(bench::gemm_kernel(n, n, n, opt.tiling, nnvm::str_cat("gemm_", n)));
  } catch (const std::exception& e) {
    std::cerr << "bench_gemm: building the nnvm kernel failed: " << e.what() << "\n";
    return 1;
  }
  if (opt.show_ir)
    for (auto& fn : fns) std::printf("\n%s", nnvm::ir::to_string(fn).c_str());
  auto c0 = std::chrono::steady_clock::now();
  std::vector<nnvm::target::CKernel> kernels;
  try {
    kernels = nnvm::target::jit_c(fns);
  } catch (const std::exception& e) {
    std::cerr << "bench_gemm: compiling the nnvm kernels failed: " << e.what() << "\n";
    return 1;
  }
  std::printf("  jit      %zu kernels in one compiler call: %.2f s (0 if cached)\n\n", kernels.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count());

  const double tolerance = 1e-4;  // normwise; fp32 rounding at n = 2048 stays below ~1e-5
  const char* header = "%6s %3s %4s | %9s | %9s %6s | %9s %6s | %9s %9s\n";
  std::printf(header, "n", "thr", "reps", "OpenBLAS", "Eigen", "ratio", "nnvm", "ratio", "err Eigen", "err nnvm");
  std::printf(header, "", "", "", "GFLOP/s", "GFLOP/s", "vs OB", "GFLOP/s", "vs OB", "(rel)", "(rel)");
  int failures = 0;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (size_t s = 0; s < opt.sizes.size(); ++s) {
    const int64_t n = opt.sizes[s];
    const size_t count = size_t(n * n);
    nnvm::NDArray a(nnvm::dtype::float32, {n, n}), b(nnvm::dtype::float32, {n, n}), c(nnvm::dtype::float32, {n, n});
    for (auto& v : a.values<float>()) v = dist(rng);
    for (auto& v : b.values<float>()) v = dist(rng);
    std::vector<float> c_blas(count), c_eigen(count);
    const float* pa = a.values<float>().data();
    const float* pb = b.values<float>().data();
    float* pc = c.values<float>().data();
    Eigen::Map<const RowMajor> ea(pa, n, n), eb(pb, n, n);
    Eigen::Map<RowMajor> ec(c_eigen.data(), n, n);
    std::array<nnvm::BufferView, 3> views{nnvm::BufferView(a), nnvm::BufferView(b), nnvm::BufferView(c)};

    for (int threads : opt.threads) {
      openblas_set_num_threads(threads);
      Eigen::setNbThreads(threads);
      std::fill(pc, pc + count, NAN);  // an element the kernel skips shows as NaN
      std::fill(c_eigen.begin(), c_eigen.end(), NAN);
      auto run = [&](int who) {
        switch (who) {
          case 0:
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, pa, int(n), pb,
                        int(n), 0.0f, c_blas.data(), int(n));
            break;
          case 1: ec.noalias() = ea * eb; break;
          default: kernels[s].call(views, threads);
        }
      };
      std::vector<double> ms[3];
      for (int who = 0; who < 3; ++who) run(who);  // warm-up: page faults, thread start-up, caches
      const int reps = reps_for(n, opt);
      for (int r = 0; r < reps; ++r) {
        for (int p = 0; p < 3; ++p) {
          int who = (p + r) % 3;
          auto t0 = std::chrono::steady_clock::now();
          run(who);
          ms[who].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
      }
      double gflop = 2.0 * double(n) * double(n) * double(n) * 1e-9;
      double g[3];
      for (int who = 0; who < 3; ++who) g[who] = gflop / (median(ms[who]) * 1e-3);
      double err_eigen = max_rel_error(c_eigen.data(), c_blas.data(), count);
      double err_nnvm = max_rel_error(pc, c_blas.data(), count);
      bool ok_eigen = err_eigen <= tolerance, ok_nnvm = err_nnvm <= tolerance;
      failures += !ok_eigen + !ok_nnvm;
      std::printf("%6lld %3d %4d | %9.1f | %8.1f%s %6.2f | %9.1f %6.2f | %9.1e%s %8.1e%s\n",
                  static_cast<long long>(n), threads, reps, g[0], g[1], eigen_parallel || threads == 1 ? " " : "*",
                  g[1] / g[0], g[2], g[2] / g[0], err_eigen, ok_eigen ? " " : "!", err_nnvm, ok_nnvm ? " " : "!");
      std::fflush(stdout);
    }
  }
  std::printf("\nratio = contender GFLOP/s / OpenBLAS GFLOP/s; err = max |C - C_OpenBLAS| / max |C_OpenBLAS|, "
              "limit %.0e\n",
              tolerance);
  if (failures) {
    std::printf("FAILED: %d result check(s) exceeded the limit (marked !)\n", failures);
    return 1;
  }
  std::printf("all result checks passed\n");
  return 0;
}
