// The GPU grid axes a loop can be bound to, as values: `s[C].bind(bx, gpu::block_x)`. The IR
// keeps CUDA's spelling of each ("blockIdx.x") as the loop's thread tag, which every GPU
// dialect maps to its own (get_group_id(0), threadgroup_position_in_grid.x).
#pragma once

#include <cstdint>
#include <string>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace schedule {

enum class ThreadAxis : uint8_t { block_x, block_y, block_z, thread_x, thread_y, thread_z, vthread };

inline const char* thread_tag(ThreadAxis a) {
  static const char* const tags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                     "threadIdx.y", "threadIdx.z", "vthread"};
  return tags[static_cast<int>(a)];
}

// The axis a thread tag names, for schedules read back from text (tuning logs); UserError
// "nnvm.schedule.bind_tag" for any other string.
inline ThreadAxis thread_axis_named(const std::string& tag) {
  for (int a = 0; a <= static_cast<int>(ThreadAxis::vthread); ++a)
    if (tag == thread_tag(static_cast<ThreadAxis>(a))) return static_cast<ThreadAxis>(a);
  throw UserError("nnvm.schedule.bind_tag",
                  "unknown thread axis '" + printable(tag) + "'; use blockIdx.x/y/z, threadIdx.x/y/z or vthread");
}

}  // namespace schedule

// Short names for kernel authors.
namespace gpu {
inline constexpr schedule::ThreadAxis block_x = schedule::ThreadAxis::block_x;
inline constexpr schedule::ThreadAxis block_y = schedule::ThreadAxis::block_y;
inline constexpr schedule::ThreadAxis block_z = schedule::ThreadAxis::block_z;
inline constexpr schedule::ThreadAxis thread_x = schedule::ThreadAxis::thread_x;
inline constexpr schedule::ThreadAxis thread_y = schedule::ThreadAxis::thread_y;
inline constexpr schedule::ThreadAxis thread_z = schedule::ThreadAxis::thread_z;
inline constexpr schedule::ThreadAxis vthread = schedule::ThreadAxis::vthread;
}  // namespace gpu
NNVM_END_NAMESPACE
