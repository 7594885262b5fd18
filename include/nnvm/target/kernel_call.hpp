// The host side of calling a compiled kernel through the kernel ABI (docs/lowered_ir.md), shared
// by every JIT (C, LLVM) so that all validate arguments, lend workspace and threads, and report
// failures the same way.
#pragma once

#include <cstdlib>
#include <memory>
#include <new>
#include <span>

#include "nnvm/runtime/thread_pool.hpp"
#include "nnvm/target/arguments.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {

// A 64-byte aligned scratch buffer per calling thread that only grows.
inline void* thread_workspace(uint64_t bytes) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> buf;
  thread_local uint64_t capacity = 0;
  if (bytes == 0) return nullptr;
  if (bytes > capacity) {
    uint64_t cap = (std::max(bytes, capacity * 2) + 63) / 64 * 64;
    buf.reset(std::aligned_alloc(64, size_t(cap)));
    if (!buf) {
      capacity = 0;
      throw std::bad_alloc();
    }
    capacity = cap;
  }
  return buf.get();
}

}  // namespace detail

// Runs `kernel` (compiled from `fn`) on `args`: bind_arguments checks them (a wrong buffer is a
// UserError), the calling thread's workspace supplies name_workspace_bytes(sizes) bytes, and
// parallel loops use the global pool with `num_threads` threads (0: the pool's count). A
// non-zero status becomes a BackendError; `status_id` is the id for statuses other than a
// thread pool failure (each back end names its own).
inline void call_kernel(const ir::LoweredFunc& fn, nnvm_kernel_fn kernel, nnvm_workspace_bytes_fn workspace_bytes,
                        std::span<const BufferView> args, int num_threads, const char* status_id) {
  std::vector<int64_t> sizes = bind_arguments(fn, args);
  std::vector<void*> data;
  data.reserve(args.size());
  for (auto& a : args) data.push_back(a.data);
  uint64_t need = workspace_bytes(sizes.data());
  void* ws = detail::thread_workspace(need);
  runtime::PoolRef pool{&runtime::ThreadPool::global(), num_threads};
  nnvm_kernel_env env{&pool, &nnvm_pool_parallel_for};
  int32_t status = kernel(data.data(), sizes.data(), ws, need, &env);
  if (status == NNVM_STATUS_OK) return;
  if (status == NNVM_STATUS_RUNTIME_FAILURE)
    throw BackendError("nnvm.runtime.parallel_failure",
                       str_cat("kernel ", fn.name, ": the thread pool could not run a parallel loop"));
  throw BackendError(status_id, str_cat("kernel ", fn.name, " returned status ", status,
                                        status == NNVM_STATUS_WORKSPACE_TOO_SMALL ? " (workspace too small)" : ""));
}

}  // namespace target
NNVM_END_NAMESPACE
