// Memory planning: the activations of one run share one arena. Each activation lives from the
// step that writes it to the last step that reads it; a greedy best-fit assignment (largest
// first) places values whose lifetimes do not overlap at the same offsets.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct BufferLifetime {
  uint64_t bytes = 0;
  size_t first = 0, last = 0;  // steps, inclusive
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per buffer, 64-byte aligned
  uint64_t arena_bytes = 0;       // planned peak
  uint64_t unplanned_bytes = 0;   // every buffer separately
};

inline MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  auto aligned = [](uint64_t b) { return (b + 63) / 64 * 64; };
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferLifetime& b = buffers[i];
    plan.unplanned_bytes += aligned(b.bytes);
    // Intervals taken by buffers alive at the same time, sorted by offset; take the smallest gap
    // that fits.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed)
      if (!(buffers[j].last < b.first || b.last < buffers[j].first))
        taken.push_back({plan.offsets[j], plan.offsets[j] + aligned(buffers[j].bytes)});
    std::sort(taken.begin(), taken.end());
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, cursor = 0;
    for (auto& [lo, hi] : taken) {
      if (lo >= cursor + aligned(b.bytes) && lo - cursor < best_gap) best = cursor, best_gap = lo - cursor;
      cursor = std::max(cursor, hi);
    }
    if (best == UINT64_MAX) best = cursor;
    plan.offsets[i] = best;
    plan.arena_bytes = std::max(plan.arena_bytes, best + aligned(b.bytes));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace graph
NNVM_END_NAMESPACE
