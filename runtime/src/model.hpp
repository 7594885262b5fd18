// The loaded model behind the C API's opaque nnvm_model: the plan of model.json, checked once at
// load (load.cpp) so that running it (run.cpp) needs no further checks beyond the caller's
// tensors.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "nnvm/runtime/kernel_abi.h"
#include "nnvm/runtime/plan.hpp"
#include "types.hpp"

NNVM_BEGIN_NAMESPACE
namespace runtime {

struct TensorType {
  int32_t dtype = 0;  // nnvm_dtype
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
};

inline std::string type_text(const TensorType& t) { return type_text(t.dtype, t.shape.data(), t.shape.size()); }

// What a plan slot holds (where it lives during a run: Plan::slots), for checks and messages.
struct SlotInfo {
  TensorType type;
  std::string name;
};

// A kernel as model.json declares it (its entry point: Plan::kernels).
struct KernelInfo {
  std::string symbol;
  nnvm_workspace_bytes_fn workspace_bytes = nullptr;
  std::vector<TensorType> params;
};

// Where a plan step comes from, for messages.
struct StepInfo {
  std::string node, op;
};

}  // namespace runtime
NNVM_END_NAMESPACE

struct nnvm_model {
  std::string name;
  nnvm::runtime::Plan plan;                      // what runs (plan.hpp's run loop)
  std::vector<nnvm::runtime::SlotInfo> slots;    // per plan slot
  std::vector<nnvm::runtime::KernelInfo> kernels;  // per plan kernel
  std::vector<nnvm::runtime::StepInfo> steps;    // per plan step
  std::vector<nnvm_tensor_info> input_info, output_info;
  void* library = nullptr;       // dlopen handle of kernels.so
  const char* weights = nullptr; // weights.bin, mapped read-only
  size_t weights_size = 0;
  // Arenas (plan.run_bytes() each) of finished runs, for the next runs: one run
  // takes one, so concurrent runs never share one, and none is allocated (and page-faulted in)
  // per run once there are as many as runs at once. Freed with the model.
  mutable std::mutex spare_mutex;
  mutable std::vector<void*> spare_arenas;

  nnvm_model() = default;
  nnvm_model(const nnvm_model&) = delete;
  nnvm_model& operator=(const nnvm_model&) = delete;
  ~nnvm_model();
};

NNVM_BEGIN_NAMESPACE
namespace runtime {

// Loads and checks the artifact in `dir` (load.cpp); throws Failure.
nnvm_model* load(const std::string& dir);
// Runs `m` on data checked by the caller (run.cpp); throws Failure.
void run(const nnvm_model& m, const void* const* inputs, void* const* outputs, int num_threads);
// Checks the caller's tensors against the model's inputs or outputs (run.cpp); throws Failure.
void check_tensors(const nnvm_model& m, const nnvm_tensor* tensors, int count, bool inputs);

}  // namespace runtime
NNVM_END_NAMESPACE
