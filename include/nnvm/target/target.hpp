// What code is generated for: the back-end kind and the few machine facts that default schedules
// need. Deliberately small; back ends add fields when a schedule needs to know more.
#pragma once

#include <algorithm>
#include <string>

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

  // Elements of `t` in one SIMD register (at least 1).
  int vector_lanes(DataType t) const { return std::max(1, vector_bits / std::max(1, int(t.bits))); }
  bool is_cpu() const { return kind == "c" || kind == "llvm"; }
};

}  // namespace target
NNVM_END_NAMESPACE
