// The deploy artifact against the in-process JIT, on whole models: each model is compiled once
// in process (graph::compile with the chosen back end) and saved as a deploy artifact from those
// same kernels (nnvmc compile -o does the same), then the compiled model runs through
// CompiledModel::run_into and the artifact through the deploy runtime's API, interleaved, on the
// same inputs. Prints each one's median and minimum time, the ratios artifact/JIT (the deployed
// model should be as fast: 1.00; on a busy machine the minimum is the steadier), the largest
// difference between their outputs, and the ISA the kernels use.
//
//   bench_artifact [--reps N] [--threads N] [--backend llvm,c] [--cpu NAME] MODEL...
//   (--backend: one or more of llvm and c, default llvm when built, else c)
//   (MODEL: a model.onnx or a folder holding one, e.g. /work/models/resnet18)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>

#include "../common/bench_util.hpp"
#include "nnvm/graph/artifact.hpp"
#include "nnvm/onnx/importer.hpp"
#include "nnvm/graph/runtime_dtype.hpp"
#include "nnvm/runtime/runtime.hpp"
#ifdef NNVM_ARTIFACT_WITH_LLVM
#include "nnvm/codegen/llvm_artifact.hpp"
#include "nnvm/codegen/llvm_graph.hpp"
#endif

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int reps = 10, threads = 0;
  std::vector<std::string> backends;
  std::string cpu;
  std::vector<std::string> models;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--reps") o.reps = int(bench::parse_positive_ints(value(), a).at(0));
    else if (a == "--threads") o.threads = int(bench::parse_positive_ints(value(), a).at(0));
    else if (a == "--backend") o.backends = bench::split_list(value());
    else if (a == "--cpu") o.cpu = value();
    else if (a.rfind("--", 0) == 0) throw std::runtime_error("unknown option " + a);
    else o.models.push_back(a);
  }
  if (o.models.empty())
    throw std::runtime_error("usage: bench_artifact [--reps N] [--threads N] [--backend llvm,c] [--cpu NAME] MODEL...");
#ifdef NNVM_ARTIFACT_WITH_LLVM
  if (o.backends.empty()) o.backends = {"llvm"};
#else
  if (o.backends.empty()) o.backends = {"c"};
  for (auto& b : o.backends)
    if (b == "llvm") throw std::runtime_error("--backend llvm: this bench_artifact was built without LLVM");
#endif
  for (auto& b : o.backends)
    if (b != "c" && b != "llvm") throw std::runtime_error("--backend takes llvm and/or c, got " + b);
  return o;
}

// Deterministic inputs: uniform in [-1, 1) for floats, small non-negative integers (valid
// indices) for integers.
nnvm::NDArray make_input(nnvm::DataType t, const std::vector<int64_t>& shape, uint32_t seed) {
  nnvm::NDArray a(t, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == nnvm::dtype::float32) a.data<float>()[i] = unit(rng);
    else if (t == nnvm::dtype::int64) a.data<int64_t>()[i] = int64_t(rng() % 4);
    else if (t == nnvm::dtype::int32) a.data<int32_t>()[i] = int32_t(rng() % 4);
  }
  if (t != nnvm::dtype::float32 && t != nnvm::dtype::int64 && t != nnvm::dtype::int32)
    std::memset(a.raw(), 0, a.nbytes());
  return a;
}

nnvm::runtime::TensorRef ref_of(const nnvm::NDArray& a) {
  return {const_cast<void*>(a.raw()), nnvm::graph::runtime_dtype(a.dtype()), a.shape()};
}

double ms_of(const std::function<void()>& f) {
  auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Largest |a - b| over float32 outputs (integer outputs: 0 when equal, else infinity).
double max_difference(const std::vector<nnvm::NDArray>& a, const std::vector<nnvm::NDArray>& b) {
  double d = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].dtype() == nnvm::dtype::float32) {
      for (int64_t i = 0; i < a[k].numel(); ++i) {
        double x = std::abs(double(a[k].data<float>()[i]) - double(b[k].data<float>()[i]));
        d = std::isnan(x) ? x : std::max(d, x);
      }
    } else if (std::memcmp(a[k].raw(), b[k].raw(), a[k].nbytes()) != 0) {
      d = INFINITY;
    }
  }
  return d;
}

void bench_model(const std::string& path, const Options& o, const nnvm::target::Target& target) {
  std::string file = fs::is_directory(path) ? path + "/model.onnx" : path;
  std::string name = fs::path(file).parent_path().filename().string();
  nnvm::graph::CompileOptions co;
  co.target = target;
#ifdef NNVM_ARTIFACT_WITH_LLVM
  if (target.emitter == nnvm::target::Emitter::llvm) {
    nnvm::codegen::LlvmOptions lo;
    lo.cpu = target.cpu;
    co.compiler = nnvm::codegen::llvm_kernel_compiler(lo);
  }
#endif
  nnvm::graph::CompiledModel jit = nnvm::graph::compile(nnvm::onnx_import::import_model(file), co);
  bench::TempDir dir("bench_artifact");
  if (dir.path.empty()) throw std::runtime_error("cannot create a temporary folder for the artifact");
#ifdef NNVM_ARTIFACT_WITH_LLVM
  nnvm::graph::save_artifact(jit, dir.path, nnvm::codegen::artifact_builder_for(jit.target()));
#else
  nnvm::graph::save_artifact(jit, dir.path);
#endif
  auto deployed = nnvm::runtime::Model::load(dir.path);

  std::vector<nnvm::NDArray> inputs, jit_out, art_out;
  std::vector<nnvm::runtime::TensorRef> in_refs, out_refs;
  for (size_t i = 0; i < jit.input_slots().size(); ++i) {
    const auto& sl = jit.slots()[jit.input_slots()[i]];
    inputs.push_back(make_input(sl.dtype, sl.shape, uint32_t(i + 1)));
    in_refs.push_back(ref_of(inputs.back()));
  }
  for (size_t s : jit.output_slots()) {
    jit_out.emplace_back(jit.slots()[s].dtype, jit.slots()[s].shape);
    art_out.emplace_back(jit.slots()[s].dtype, jit.slots()[s].shape);
    out_refs.push_back(ref_of(art_out.back()));
  }
  auto run_jit = [&] { jit.run_into(inputs, jit_out, o.threads); };
  auto run_artifact = [&] { deployed.run(in_refs, out_refs, o.threads); };
  for (int w = 0; w < 2; ++w) {  // warm-up: arenas, page faults, pool threads
    run_jit();
    run_artifact();
  }
  std::vector<double> jit_ms, art_ms;
  // Interleaved, so load from elsewhere hits both alike, and each goes first every other time
  // (the first of a pair meets colder caches).
  for (int r = 0; r < o.reps; ++r) {
    if (r % 2) art_ms.push_back(ms_of(run_artifact));
    jit_ms.push_back(ms_of(run_jit));
    if (r % 2 == 0) art_ms.push_back(ms_of(run_artifact));
  }
  double j = bench::median(jit_ms), a = bench::median(art_ms), diff = max_difference(jit_out, art_out);
  double jmin = *std::min_element(jit_ms.begin(), jit_ms.end()), amin = *std::min_element(art_ms.begin(), art_ms.end());
  std::printf("%-16s %10.3f %12.3f %8.3f %10.3f %12.3f %8.3f %12.2g\n", name.c_str(), j, a, a / j, jmin, amin, amin / jmin,
              diff);
  std::fflush(stdout);
  // Same kernels, same inputs: the outputs agree (to rounding, should code generation differ).
  if (!(diff <= 1e-4)) throw std::runtime_error(name + ": the artifact's outputs differ from the JIT's");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options o = parse(argc, argv);
    std::printf("bench_artifact: deploy artifact (nnvm_runtime) vs in-process JIT, same kernels, same inputs\n");
    std::printf("  machine  %s, load average %s\n", bench::cpu_model().c_str(), bench::load_average().c_str());
    for (auto& backend : o.backends) {
      nnvm::target::Target target = nnvm::target::parse_target(backend + (o.cpu.empty() ? "" : " -mcpu=" + o.cpu));
      std::printf("  target   %s -mcpu=%s: ISA %s (%d-bit vectors); threads %s; medians of %d interleaved runs\n",
                  nnvm::target::emitter_name(target.emitter), target.cpu.empty() ? "native" : target.cpu.c_str(), target.isa_name().c_str(),
                  target.vector_bits, o.threads ? std::to_string(o.threads).c_str() : "default", o.reps);
      if (!target.runs_here()) throw std::runtime_error("kernels for CPU '" + o.cpu + "' cannot run on this machine");
      std::printf("%-16s %10s %12s %8s %10s %12s %8s %12s\n", "model", "JIT ms", "artifact ms", "ratio", "JIT min",
                  "artifact min", "ratio", "max |diff|");
      for (auto& m : o.models) bench_model(m, o, target);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "bench_artifact: " << e.what() << "\n";
    return 1;
  }
}
