// A compiled model's plan and the one loop that runs it. The deploy runtime (runtime/src/run.cpp,
// from a loaded artifact) and the in-process executor (graph/compiled_model.hpp, from compile())
// both run their models here, so both bind tensors, lend workspace and threads, and write outputs
// in place the same way. Static shapes only: kernels are called with no symbolic sizes.
//
// Part of the runtime layer: it uses the kernel ABI and the thread pool, nothing of the compiler,
// and compiles as C++17 (the runtime's public standard).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nnvm/config.hpp"
#include "nnvm/runtime/kernel_abi.h"
#include "nnvm/runtime/thread_pool.hpp"

NNVM_BEGIN_NAMESPACE
namespace runtime {

// Where a value's data lives during a run.
struct PlanSlot {
  enum class Kind : uint8_t { input, constant, activation } kind = Kind::activation;
  uint64_t bytes = 0;
  size_t index = 0;     // input: position in the run's inputs; constant: in Plan::constants
  uint64_t offset = 0;  // activation: in the run's arena
};

// A step the host runs itself instead of a kernel: a control node (if, loop, scan) that runs
// plans of its own (graph/control_runner.hpp). Called with the step's arguments as a kernel is.
struct HostStep {
  int32_t (*run)(const void* self, void* const* args, const nnvm_kernel_env* env) = nullptr;
  const void* self = nullptr;
};

// One kernel call (or one host step).
struct PlanStep {
  size_t kernel = 0;         // in Plan::kernels
  std::vector<size_t> args;  // slots: the kernel's inputs, then its outputs
  HostStep host;             // when host.run is set, it runs instead of the kernel
};

struct Plan {
  std::vector<nnvm_kernel_fn> kernels;
  std::vector<PlanSlot> slots;
  std::vector<PlanStep> steps;
  std::vector<size_t> inputs, outputs;  // slots, in the model's order
  std::vector<const void*> constants;   // the constant slots' data, read-only
  // Every activation has arena space, the model outputs included (after the shared part), so an
  // output that cannot be written in place still has somewhere to go.
  uint64_t arena_bytes = 0;
  uint64_t workspace_bytes = 0;  // the largest step's scratch, lent after the activations
  size_t max_args = 0;

  // What a run's arena must hold (64-byte aligned).
  uint64_t run_bytes() const { return arena_bytes + workspace_bytes; }
};

// Measures kernel calls for a profile; run_plan calls it around each step.
class StepObserver {
 public:
  virtual void before_step(size_t step) = 0;
  virtual void after_step(size_t step) = 0;

 protected:
  ~StepObserver() = default;
};

// A step whose kernel returned a non-zero status (none: step == SIZE_MAX).
struct StepFailure {
  size_t step = SIZE_MAX;
  int32_t status = NNVM_STATUS_OK;
  explicit operator bool() const { return step != SIZE_MAX; }
};

namespace detail {
inline bool overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}
}  // namespace detail

// Whether output `o` can be computed straight into the caller's buffer: a kernel computes it
// (not an input or a constant), it is no other output too, and the caller's buffer overlaps no
// input and no other output buffer (a kernel still reading an input must not see it change).
inline bool output_in_place(const Plan& p, size_t o, const void* const* inputs, void* const* outputs) {
  const size_t slot = p.outputs[o];
  const uint64_t bytes = p.slots[slot].bytes;
  if (p.slots[slot].kind != PlanSlot::Kind::activation || bytes == 0) return false;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (detail::overlap(outputs[o], bytes, inputs[i], p.slots[p.inputs[i]].bytes)) return false;
  for (size_t q = 0; q < p.outputs.size(); ++q)
    if (q != o && (p.outputs[q] == slot || detail::overlap(outputs[o], bytes, outputs[q], p.slots[p.outputs[q]].bytes)))
      return false;
  return true;
}

// Runs the plan on the caller's checked buffers (inputs and outputs in the plan's order), with
// `arena` (run_bytes(), 64-byte aligned) holding the activations and the workspace. Parallel
// loops use the global pool with `num_threads` threads (0: the pool's count). Stops at the first
// kernel that fails and returns it; outputs are then unspecified.
inline StepFailure run_plan(const Plan& p, const void* const* inputs, void* const* outputs, char* arena,
                            int num_threads, StepObserver* observer = nullptr) {
  std::vector<void*> data(p.slots.size());
  for (size_t s = 0; s < p.slots.size(); ++s) {
    const PlanSlot& sl = p.slots[s];
    data[s] = sl.kind == PlanSlot::Kind::input      ? const_cast<void*>(inputs[sl.index])
              : sl.kind == PlanSlot::Kind::constant ? const_cast<void*>(p.constants[sl.index])
                                                    : arena + sl.offset;
  }
  // Outputs have arena space of their own, so pointing one at the caller's buffer takes nothing
  // from another tensor.
  for (size_t o = 0; o < p.outputs.size(); ++o)
    if (output_in_place(p, o, inputs, outputs)) data[p.outputs[o]] = outputs[o];

  PoolRef pool{&ThreadPool::global(), num_threads > 0 ? num_threads : 0};
  nnvm_kernel_env env{&pool, &nnvm_pool_parallel_for};
  std::vector<void*> args(p.max_args);
  const int64_t no_sizes = 0;
  void* workspace = p.workspace_bytes ? arena + p.arena_bytes : nullptr;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const PlanStep& st = p.steps[i];
    for (size_t a = 0; a < st.args.size(); ++a) args[a] = data[st.args[a]];
    if (observer) observer->before_step(i);
    int32_t status = st.host.run ? st.host.run(st.host.self, args.data(), &env)
                                 : p.kernels[st.kernel](args.data(), &no_sizes, workspace, p.workspace_bytes, &env);
    if (observer) observer->after_step(i);
    if (status != NNVM_STATUS_OK) return {i, status};
  }
  // The rest: outputs that are inputs or constants, or shown twice, or whose buffers overlap
  // (memmove).
  for (size_t o = 0; o < p.outputs.size(); ++o)
    if (uint64_t bytes = p.slots[p.outputs[o]].bytes; bytes && data[p.outputs[o]] != outputs[o])
      std::memmove(outputs[o], data[p.outputs[o]], size_t(bytes));
  return {};
}

}  // namespace runtime
NNVM_END_NAMESPACE
