// What code is generated for: the back-end kind and the few machine facts that default schedules
// need. Deliberately small; back ends add fields when a schedule needs to know more.
#pragma once

#include <algorithm>
#include <string>
#include <utility>

#include "nnvm/error.hpp"

#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

struct Target {
  // "c": host CPU through the C emitter (JIT or source). Later kinds: "llvm", "cuda", ...
  std::string kind = "c";
  // Width of one SIMD register in bits: 128 (SSE, NEON), 256 (AVX2), 512 (AVX-512).
  int vector_bits = 256;
  // Threads for parallel loops; 0 means the thread pool's default (NNVM_NUM_THREADS or all).
  int num_threads = 0;
  // The CPU the code is for, in GCC's -march / LLVM's -mcpu spelling ("x86-64-v3", "znver3",
  // "skylake-avx512"); empty means this machine ("native"). Emitters pass it to the compiler, and
  // for_cpu() derives vector_bits from it, so schedules and instructions agree.
  std::string cpu;

  // This machine, for code JIT-compiled to run here: `kind` with the widest SIMD registers the
  // CPU has (x86: 512 with AVX-512F, 256 with AVX2, else 128; Arm: 128). A default-constructed
  // Target instead assumes 256, whatever the machine.
  static Target host(std::string kind = "c") {
    Target t;
    t.kind = std::move(kind);
    t.vector_bits = host_vector_bits();
    return t;
  }
  static int host_vector_bits() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 512;
    return __builtin_cpu_supports("avx2") ? 256 : 128;
#elif defined(__aarch64__) || defined(__arm__)
    return 128;
#else
    return 256;
#endif
  }

  // Code for `cpu` (empty or "native": this machine) through the emitter `kind`: vector_bits
  // is the widest SIMD register that CPU has, so default schedules pick its lanes and register
  // tiles. An unknown CPU name is an error that lists the known ones.
  static Target for_cpu(std::string kind, const std::string& cpu) {
    if (cpu.empty() || cpu == "native") return host(std::move(kind));
    Target t;
    t.kind = std::move(kind);
    t.cpu = cpu;
    t.vector_bits = cpu_vector_bits(cpu);
    return t;
  }
  // SIMD register width of a named CPU; throws for a name not in the table.
  static int cpu_vector_bits(const std::string& cpu) {
    struct Row { const char* name; int bits; };
    static constexpr Row rows[] = {
        {"x86-64", 128},          {"x86-64-v2", 128},      {"nehalem", 128},        {"westmere", 128},
        {"sandybridge", 128},     {"ivybridge", 128},      {"btver2", 128},         {"x86-64-v3", 256},
        {"haswell", 256},         {"broadwell", 256},      {"skylake", 256},        {"alderlake", 256},
        {"znver1", 256},          {"znver2", 256},         {"znver3", 256},         {"x86-64-v4", 512},
        {"skylake-avx512", 512},  {"cascadelake", 512},    {"cooperlake", 512},     {"icelake-client", 512},
        {"icelake-server", 512},  {"tigerlake", 512},      {"sapphirerapids", 512}, {"znver4", 512},
        {"generic", 128},         {"armv8-a", 128},        {"neoverse-n1", 128},    {"cortex-a72", 128},
        {"apple-m1", 128}};
    std::string known;
    for (auto& r : rows) {
      if (cpu == r.name) return r.bits;
      known += (known.empty() ? "" : ", ") + std::string(r.name);
    }
    throw UserError("nnvm.target.cpu", "unknown CPU '" + cpu + "'; known: native, " + known);
  }
  // Whether code for this target can run on this machine (its registers are no wider than
  // this CPU's); tests use it to skip running what they can only compile.
  bool runs_here() const { return vector_bits <= host_vector_bits(); }
  // The instruction-set level code for this target uses, as benchmarks print it.
  std::string isa_name() const {
#if defined(__x86_64__) || defined(__i386__)
    return vector_bits >= 512 ? "AVX-512" : vector_bits >= 256 ? "AVX2" : "SSE4.2";
#else
    return vector_bits >= 128 ? "NEON" : "scalar";
#endif
  }

  // Elements of `t` in one SIMD register (at least 1).
  int vector_lanes(DataType t) const { return std::max(1, vector_bits / std::max(1, int(t.bits))); }
  bool is_cpu() const { return kind == "c" || kind == "llvm"; }
};

}  // namespace target
NNVM_END_NAMESPACE
