// The bounds every layer applies to what a model, possibly a hostile one, can cost. One size
// bound per tensor: the importer (initializers, declared input shapes), shape inference,
// NDArray, nnvmc's --input-shape and .npy reader, and the deploy runtime's loader all check it,
// so a byte or element count that passed can be multiplied by a dtype size or used as an int64
// offset without wrapping. And one budget for constant folding (FoldBudget).
//
// Only the standard library and config.hpp: the deploy runtime includes it too.
#pragma once

#include <cstdint>
#include <optional>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE

// 2^48 bytes (256 TiB): far above any real tensor, far below where int64 byte offsets wrap.
inline constexpr uint64_t max_tensor_bytes = uint64_t(1) << 48;

// The byte size of a compact tensor with `extents` and `elem_bytes` bytes per element, or
// nullopt when an extent is negative or the size exceeds max_tensor_bytes (overflow included).
// A zero extent makes the tensor empty whatever the other extents are.
template <class Extents>
std::optional<uint64_t> checked_tensor_bytes(const Extents& extents, uint64_t elem_bytes) {
  bool empty = false;
  for (auto e : extents) {
    if (e < 0) return std::nullopt;
    if (e == 0) empty = true;
  }
  if (empty) return 0;
  uint64_t bytes = elem_bytes;
  for (auto e : extents)
    if (__builtin_mul_overflow(bytes, uint64_t(e), &bytes) || bytes > max_tensor_bytes) return std::nullopt;
  return bytes;
}

// Folding turns work into memory, so a small hostile file (a chain of ConstantOfShape + Add)
// could make an import hold gigabytes of folded constants and spend minutes computing them. A
// budget of folded bytes per import (and per compile) bounds both; nodes past it stay ops, which
// compute the same values at run time. Results of at most `always_bytes` fold regardless and are
// not counted: shape arithmetic (Shape -> Gather -> Concat) must fold for Reshape's shape to be
// known, and it is tiny.
struct FoldBudget {
  static constexpr uint64_t default_bytes = uint64_t(256) << 20;
  static constexpr uint64_t always_bytes = 8192;
  uint64_t left = default_bytes;

  // True (and the bytes are taken) when a result of `bytes` bytes may be folded.
  bool take(uint64_t bytes) {
    if (bytes <= always_bytes) return true;
    if (bytes > left) return false;
    left -= bytes;
    return true;
  }
};

NNVM_END_NAMESPACE
