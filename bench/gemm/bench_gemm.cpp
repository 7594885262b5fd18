// bench_gemm: square float32 matmul C = A * B, nnvm's DSL-scheduled kernel compiled by both
// back ends (C emitter + system cc, and LLVM in process) beside OpenBLAS (cblas_sgemm), oneDNN
// (dnnl_sgemm) and Eigen in the same run, at 1 and 2 threads.
//
//   bench_gemm                       n = 256 512 1000 1023 1024 2048, threads 1 and 2
//   bench_gemm --sizes 1024 --reps 11 --threads 1
//                                    reps: 7 by default, more below n = 1024 (see reps_for)
//   bench_gemm --tiling 12,16,128    rows, width, k_block of the nnvm schedule, both back ends
//   bench_gemm --llvm-tiling 12,32,128   the same for nnvm-LLVM only (after --tiling); by default
//                                    nnvm-LLVM picks 12,32,128 or 8,48,128 per size (llvm_tiling_for)
//   bench_gemm --quick               tiny sizes, 3 reps: what CI runs (checks, not speed)
//   bench_gemm --naive 512           the unscheduled nest (no schedule at all) at this n through
//                                    both back ends, 1 thread (default 512; 0 skips it)
//   bench_gemm --show-ir ...         also print each nnvm kernel's loop nest
//   bench_gemm --show-asm ...        also print the LLVM back end's assembly of each kernel
//
// Every rep runs each contender once (in a rotating order), so background noise hits all of
// them alike; the table shows medians. Each contender's C is checked against OpenBLAS's; the
// exit status is non-zero if any check fails. Each nnvm kernel is compiled on its own (the C
// JIT into a fresh cache directory, so nothing comes from an earlier run) and its compile time
// is printed. oneDNN and nnvm-LLVM columns appear when the build found them.
#include "nnvm_gemm.hpp"
#include "../common/bench_util.hpp"

#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include <cblas.h>

#ifdef NNVM_GEMM_WITH_LLVM
#include <nnvm/codegen/llvm_jit.hpp>
#endif
#ifdef NNVM_GEMM_WITH_DNNL
#include <dnnl.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#include <filesystem>

// OpenBLAS extensions; declared here too, in case <cblas.h> is another vendor's.
extern "C" void openblas_set_num_threads(int num_threads);
extern "C" char* openblas_get_config(void);

namespace {

struct Options {
  std::vector<int64_t> sizes{256, 512, 1000, 1023, 1024, 2048};
  std::vector<int> threads{1, 2};
  int reps = 0;  // 0: reps_for(n)
  bench::GemmTiling tiling;  // nnvm-C
  // nnvm-LLVM: two vectors per row of the micro-tile (24 accumulators). With one vector (12 x 16)
  // each FMA also reads a broadcast of A, 13 loads per 12 FMAs, so the load ports cap it near
  // 0.8-0.85 of OpenBLAS; 12 x 32 needs 14 loads per 24 FMAs and measured 0.90-0.98. The C path
  // stays at 12 x 16: the system cc makes slow code for 32-lane vectors (about 20 GFLOP/s).
  // Unset: bench::llvm_tiling_for(n, n), per size.
  std::optional<bench::GemmTiling> llvm_tiling;
  bool show_ir = false;
  bool show_llvm = false;  // print the LLVM kernels' assembly
  int64_t naive = 512;     // n of the unscheduled-nest comparison; 0: none
};

// Calls under ~10 ms are at the mercy of the other processes on the cores (the speed of both
// OpenBLAS and nnvm at n = 512 flips between two levels from one call to the next on a shared
// 2-core machine), so small sizes get more reps: about 7 * (1024 / n)^2, from 7 to 41.
int reps_for(int64_t n, const Options& o) {
  if (o.reps > 0) return o.reps;
  double r = 7.0 * (1024.0 / double(n)) * (1024.0 / double(n));
  return int(std::clamp(r, 7.0, 41.0));
}

// The kernel a newcomer writes first: C = A * B with no schedule. GCC vectorizes its outer j loop
// itself; LLVM vectorizes innermost loops only, which lower::interchange_reductions gives it.
// Both back ends run it (1 thread, interleaved reps) and are checked against a plain loop.
// Returns false when a result is wrong.
bool naive_section(int64_t n, const Options& o) {
  auto A = nnvm::te::placeholder({n, n}, nnvm::dtype::float32, "A");
  auto B = nnvm::te::placeholder({n, n}, nnvm::dtype::float32, "B");
  auto k = nnvm::te::reduce_axis(n, "k");
  auto C = nnvm::te::compute({n, n}, [&](auto& v) { return nnvm::te::sum(A(v[0], k.var()) * B(k.var(), v[1]), {k}); },
                             "C");
  auto fn = nnvm::lower::lower(nnvm::schedule::create_schedule(C), {A, B, C}, nnvm::str_cat("naive_", n));
  std::vector<std::pair<std::string, nnvm::target::Kernel>> kernels;
  kernels.emplace_back("nnvm-C", nnvm::target::jit_c(fn));
#ifdef NNVM_GEMM_WITH_LLVM
  kernels.emplace_back("nnvm-LLVM", nnvm::codegen::jit_llvm(fn));
#endif
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  nnvm::NDArray a(nnvm::dtype::float32, {n, n}), b(nnvm::dtype::float32, {n, n});
  for (auto& v : a.values<float>()) v = dist(rng);
  for (auto& v : b.values<float>()) v = dist(rng);
  std::vector<float> want(size_t(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t p = 0; p < n; ++p)
      for (int64_t j = 0; j < n; ++j)
        want[size_t(i * n + j)] += a.values<float>()[size_t(i * n + p)] * b.values<float>()[size_t(p * n + j)];
  std::vector<nnvm::NDArray> out;
  std::vector<std::vector<double>> ms(kernels.size());
  for (size_t w = 0; w < kernels.size(); ++w) out.emplace_back(nnvm::dtype::float32, std::vector<int64_t>{n, n});
  const int reps = o.reps > 0 ? o.reps : 5;
  for (int r = -1; r < reps; ++r)  // r = -1 warms up
    for (size_t p = 0; p < kernels.size(); ++p) {
      size_t w = (p + size_t(r + 1)) % kernels.size();
      std::array<nnvm::BufferView, 3> views{nnvm::BufferView(a), nnvm::BufferView(b), nnvm::BufferView(out[w])};
      auto t0 = std::chrono::steady_clock::now();
      kernels[w].second.call(views, 1);
      if (r >= 0) ms[w].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  std::printf("\nunscheduled nest, n = %lld, 1 thread, %d reps (median GFLOP/s, max err):",
              static_cast<long long>(n), reps);
  bool ok = true;
  std::vector<double> g;
  for (size_t w = 0; w < kernels.size(); ++w) {
    g.push_back(2.0 * double(n) * double(n) * double(n) * 1e-9 / (bench::median(ms[w]) * 1e-3));
    double err = bench::max_rel_error(out[w].values<float>().data(), want.data(), want.size());
    ok = ok && err <= 1e-4;
    std::printf("  %s %.2f (%.1e)", kernels[w].first.c_str(), g.back(), err);
  }
  if (g.size() == 2) std::printf("  LLVM/C %.2f", g[1] / g[0]);
  std::printf("%s\n", ok ? "" : "  ! wrong result");
  return ok;
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
      o.naive = 64;
    } else if (arg == "--show-ir") {
      o.show_ir = true;
    } else if (arg == "--show-asm") {
      o.show_llvm = true;
    } else if (arg == "--naive") {
      std::string v = value();
      o.naive = v == "0" ? 0 : bench::parse_positive_ints(v, "--naive").at(0);
    } else if (arg == "--sizes") {
      o.sizes = bench::parse_positive_ints(value(), "--sizes");
    } else if (arg == "--reps") {
      o.reps = int(bench::parse_positive_ints(value(), "--reps").at(0));
    } else if (arg == "--threads") {
      o.threads.clear();
      for (auto t : bench::parse_positive_ints(value(), "--threads")) o.threads.push_back(int(t));
    } else if (arg == "--tiling" || arg == "--llvm-tiling") {
      auto v = bench::parse_positive_ints(value(), arg.c_str());
      if (v.size() != 3) throw std::runtime_error(arg + " takes rows,width,k_block (positive integers)");
      o.llvm_tiling = bench::GemmTiling{v[0], v[1], v[2]};
      if (arg == "--tiling") o.tiling = *o.llvm_tiling;
    } else {
      throw std::runtime_error("unknown argument '" + arg + "' (see the comment at the top of bench_gemm.cpp)");
    }
  }
  return o;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// One column of the table: a name and how it computes C = A * B into its own output.
struct Contender {
  std::string name;
  std::function<void(int threads)> run;
  float* result = nullptr;
  bool single_threaded = false;  // ignores the thread count (marked *)
};

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace

int main(int argc, char** argv) {
  bench::set_environment_and_reexec(argv);
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
  std::printf("  cpu      %s, %ld online cores; load average %s\n", bench::cpu_model().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), bench::load_average().c_str());
  std::printf("  openblas %s (cblas_sgemm, openblas_set_num_threads)\n", openblas_get_config());
#ifdef NNVM_GEMM_WITH_DNNL
  const dnnl_version_t* dv = dnnl_version();
  std::printf("  onednn   %d.%d.%d (dnnl_sgemm, %s)\n", dv->major, dv->minor, dv->patch,
              dv->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP, omp_set_num_threads" : "its own threading");
#else
  std::printf("  onednn   not built in (needs libdnnl-dev)\n");
#endif
  std::printf("  eigen    %d.%d.%d, %s\n", EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION,
              eigen_parallel ? "OpenMP on (Eigen::setNbThreads)"
                             : "built WITHOUT OpenMP: single-threaded in every row (marked *)");
  std::printf("  nnvm     DSL schedule of nnvm_gemm.hpp, packing stages inside the kernel\n");
  std::printf("           nnvm-C:    %s; C emitter + system cc\n", bench::describe(opt.tiling).c_str());
#ifdef NNVM_GEMM_WITH_LLVM
  std::printf("           nnvm-LLVM: %s; LLVM emitter, O3, host CPU, in-process JIT\n",
              opt.llvm_tiling ? bench::describe(*opt.llvm_tiling).c_str() : "tiling per size (below)");
#else
  std::printf("           nnvm-LLVM: not built in (needs LLVM 15)\n");
#endif
  std::printf("  env      OMP_WAIT_POLICY=%s OPENBLAS_THREAD_TIMEOUT=%s; reps interleaved, medians shown\n",
              std::getenv("OMP_WAIT_POLICY"), std::getenv("OPENBLAS_THREAD_TIMEOUT"));

  // Each kernel compiles on its own, so each gets its own compile time.
  bench::TempDir c_cache("bench_gemm");
  nnvm::target::CJitOptions c_options;
  c_options.cache_dir = c_cache.path;
  if (c_cache.path.empty())
    std::printf("  note     no temporary directory for the C JIT: its times below may come from its cache\n");
  std::vector<nnvm::target::Kernel> c_kernels;
#ifdef NNVM_GEMM_WITH_LLVM
  std::vector<nnvm::target::Kernel> llvm_kernels;
#endif
  std::printf("\n%6s | %11s | %11s   (JIT compile time per kernel) | nnvm-LLVM tiling\n", "n", "nnvm-C s",
              "nnvm-LLVM s");
  try {
    for (auto n : opt.sizes) {
      auto fn = bench::gemm_kernel(n, n, n, opt.tiling, nnvm::str_cat("gemm_", n));
      if (opt.show_ir) std::printf("\n%s", nnvm::ir::to_string(fn).c_str());
      auto t0 = std::chrono::steady_clock::now();
      c_kernels.push_back(nnvm::target::jit_c(fn, c_options));
      double c_s = seconds_since(t0);
#ifdef NNVM_GEMM_WITH_LLVM
      const bench::GemmTiling llvm_tiling = opt.llvm_tiling ? *opt.llvm_tiling : bench::llvm_tiling_for(n, n);
      auto llvm_fn = bench::gemm_kernel(n, n, n, llvm_tiling, nnvm::str_cat("gemm_", n));
      if (opt.show_ir && !(llvm_tiling == opt.tiling)) std::printf("\n%s", nnvm::ir::to_string(llvm_fn).c_str());
      llvm_kernels.push_back(nnvm::codegen::jit_llvm(llvm_fn));
      double llvm_s = llvm_kernels.back().compile_ms() * 1e-3;
      if (opt.show_llvm) std::printf("\n%s", nnvm::codegen::emit_asm(llvm_fn).c_str());
#else
      double llvm_s = NAN;
      const bench::GemmTiling llvm_tiling;
#endif
      std::printf("%6lld | %11.2f | %11.2f %31s | %s\n", static_cast<long long>(n), c_s, llvm_s, "",
                  bench::describe(llvm_tiling).c_str());
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_gemm: building or compiling the nnvm kernel failed: " << e.what() << "\n";
    return 1;
  }

  const double tolerance = 1e-4;  // normwise; fp32 rounding at n = 2048 stays below ~1e-5
  int failures = 0;
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  bool header_done = false;
  for (size_t s = 0; s < opt.sizes.size(); ++s) {
    const int64_t n = opt.sizes[s];
    const size_t count = size_t(n * n);
    nnvm::NDArray a(nnvm::dtype::float32, {n, n}), b(nnvm::dtype::float32, {n, n});
    nnvm::NDArray c_c(nnvm::dtype::float32, {n, n}), c_llvm(nnvm::dtype::float32, {n, n});
    for (auto& v : a.values<float>()) v = dist(rng);
    for (auto& v : b.values<float>()) v = dist(rng);
    std::vector<float> c_blas(count), c_dnnl(count), c_eigen(count);
    const float* pa = a.values<float>().data();
    const float* pb = b.values<float>().data();
    Eigen::Map<const RowMajor> ea(pa, n, n), eb(pb, n, n);
    Eigen::Map<RowMajor> ec(c_eigen.data(), n, n);
    std::array<nnvm::BufferView, 3> c_views{nnvm::BufferView(a), nnvm::BufferView(b), nnvm::BufferView(c_c)};
    std::array<nnvm::BufferView, 3> llvm_views{nnvm::BufferView(a), nnvm::BufferView(b), nnvm::BufferView(c_llvm)};

    // The reference is column 0; every other column is checked against it.
    std::vector<Contender> who;
    who.push_back({"OpenBLAS", [&](int) {
                     cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, pa, int(n),
                                 pb, int(n), 0.0f, c_blas.data(), int(n));
                   }, c_blas.data()});
#ifdef NNVM_GEMM_WITH_DNNL
    who.push_back({"oneDNN", [&](int) {
                     if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, pa, n, pb, n, 0.0f, c_dnnl.data(), n) != dnnl_success)
                       std::fill(c_dnnl.begin(), c_dnnl.end(), NAN);
                   }, c_dnnl.data()});
#endif
    who.push_back({"Eigen", [&](int) { ec.noalias() = ea * eb; }, c_eigen.data(), !eigen_parallel});
    who.push_back({"nnvm-C", [&](int t) { c_kernels[s].call(c_views, t); }, c_c.values<float>().data()});
#ifdef NNVM_GEMM_WITH_LLVM
    who.push_back({"nnvm-LLVM", [&](int t) { llvm_kernels[s].call(llvm_views, t); }, c_llvm.values<float>().data()});
#endif
    const size_t k = who.size();
    if (!header_done) {
      std::printf("\n%6s %3s %4s |", "n", "thr", "reps");
      for (auto& w : who) std::printf(" %9s", w.name.c_str());
      std::printf(" | %8s %9s %8s | %8s\n", "LLVM/OB", "LLVM/best", "LLVM/C", "max err");
      std::printf("%6s %3s %4s |", "", "", "");
      for (size_t w = 0; w < k; ++w) std::printf(" %9s", "GFLOP/s");
      std::printf(" | %8s %9s %8s | %8s\n", "", "", "", "(rel)");
      header_done = true;
    }

    for (int threads : opt.threads) {
      openblas_set_num_threads(threads);
      Eigen::setNbThreads(threads);
#ifdef _OPENMP
      omp_set_num_threads(threads);  // oneDNN's OpenMP runtime
#endif
      for (auto& w : who) std::fill(w.result, w.result + count, NAN);
      std::vector<std::vector<double>> ms(k);
      for (auto& w : who) w.run(threads);  // warm-up: page faults, thread start-up, caches
      const int reps = reps_for(n, opt);
      for (int r = 0; r < reps; ++r) {
        for (size_t p = 0; p < k; ++p) {
          size_t w = (p + size_t(r)) % k;
          auto t0 = std::chrono::steady_clock::now();
          who[w].run(threads);
          ms[w].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
      }
      const double gflop = 2.0 * double(n) * double(n) * double(n) * 1e-9;
      std::vector<double> g(k);
      double worst = 0;
      bool ok = true;
      std::string bad;
      for (size_t w = 0; w < k; ++w) {
        g[w] = gflop / (bench::median(ms[w]) * 1e-3);
        if (w == 0) continue;
        double err = bench::max_rel_error(who[w].result, c_blas.data(), count);
        if (!(err <= tolerance)) {
          ok = false;
          bad += " " + who[w].name;
        }
        worst = std::isnan(err) || std::isnan(worst) ? NAN : std::max(worst, err);
      }
      failures += !ok;
      std::printf("%6lld %3d %4d |", static_cast<long long>(n), threads, reps);
      for (size_t w = 0; w < k; ++w)
        std::printf(" %8.1f%s", g[w], who[w].single_threaded && threads > 1 ? "*" : " ");
#ifdef NNVM_GEMM_WITH_LLVM
      // The libraries nnvm-LLVM is held to: OpenBLAS and, when built in, oneDNN (column 1).
      double best = g[0];
#ifdef NNVM_GEMM_WITH_DNNL
      best = std::max(best, g[1]);
#endif
      std::printf(" | %8.2f %9.2f %8.2f |", g[k - 1] / g[0], g[k - 1] / best, g[k - 1] / g[k - 2]);
#else
      std::printf(" | %8s %9s %8s |", "-", "-", "-");
#endif
      std::printf(" %8.1e%s%s\n", worst, ok ? "" : " ! wrong:", bad.c_str());
      std::fflush(stdout);
    }
  }
  std::printf("\nLLVM/OB = nnvm-LLVM GFLOP/s / OpenBLAS GFLOP/s, LLVM/best = nnvm-LLVM / the faster of OpenBLAS and "
              "oneDNN, LLVM/C = nnvm-LLVM / nnvm-C;\nmax err = max over columns of max |C - C_OpenBLAS| / "
              "max |C_OpenBLAS|, limit %.0e; * = ignores the thread count\n",
              tolerance);
  if (opt.naive > 0 && !naive_section(opt.naive, opt)) ++failures;
  std::printf("load average at the end: %s\n", bench::load_average().c_str());
  if (failures) {
    std::printf("FAILED: %d row(s) with a result over the limit (marked !)\n", failures);
    return 1;
  }
  std::printf("all result checks passed\n");
  return 0;
}
