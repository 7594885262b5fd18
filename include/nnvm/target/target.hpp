// What code is generated for: the back-end kind and the few machine facts that default schedules
// need. Deliberately small; back ends add fields when a schedule needs to know more.
#pragma once

#include <algorithm>
#include <string>
#include <utility>

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

  // Elements of `t` in one SIMD register (at least 1).
  int vector_lanes(DataType t) const { return std::max(1, vector_bits / std::max(1, int(t.bits))); }
  bool is_cpu() const { return kind == "c" || kind == "llvm"; }
};

}  // namespace target
NNVM_END_NAMESPACE
