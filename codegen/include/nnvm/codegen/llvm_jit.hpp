// The LLVM back end: lowered kernels (docs/lowered_ir.md) become LLVM IR, optimized with the O3
// pipeline for the host CPU and compiled in process by ORC's LLJIT. The kernels follow the same
// calling convention and host-side behaviour as the C JIT (target::CKernel): arguments checked
// by target::bind_arguments, workspace from the calling thread, parallel loops on nnvm's pool.
//
// Part of the optional nnvm::llvm library (link it to use this header); no LLVM header leaks
// through it. Compiled modules are cached in memory by a hash of the printed IR and options,
// so each kernel compiles once per process.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nnvm/ir/function.hpp"
#include "nnvm/ndarray.hpp"
#include "nnvm/runtime/kernel_abi.h"

NNVM_BEGIN_NAMESPACE
namespace codegen {

struct LlvmOptions {
  std::string cpu;        // empty: the host CPU (llvm::sys::getHostCPUName)
  std::string features;   // empty with an empty cpu: the host's features; "+avx2,-avx512f" style
  int opt_level = 3;      // 0..3, the PassBuilder pipeline level
  int num_threads = 0;    // threads for parallel loops; 0: NNVM_NUM_THREADS or all
};

namespace detail {
struct LlvmModule;  // the JIT session that owns a module's code (defined in the library)
}

// A compiled kernel. Copies share the compiled module, which lives while any copy exists.
class LlvmKernel {
 public:
  LlvmKernel() = default;
  LlvmKernel(std::shared_ptr<const detail::LlvmModule> module, ir::LoweredFunc fn, std::string symbol,
             nnvm_kernel_fn kernel, nnvm_workspace_bytes_fn workspace_bytes, int num_threads);

  bool defined() const { return kernel_ != nullptr; }
  const ir::LoweredFunc& func() const { return fn_; }
  const std::string& symbol() const { return symbol_; }
  // The optimized LLVM IR of the module this kernel was compiled in.
  const std::string& llvm_ir() const;
  // Milliseconds spent building, optimizing and compiling this kernel's module (shared by all
  // kernels of one batch); the first compile's time when the module came from the cache.
  double compile_ms() const;
  // Whether jit_llvm found the module in the in-memory cache instead of compiling it.
  bool from_cache() const { return from_cache_; }
  nnvm_kernel_fn raw_function() const { return kernel_; }
  nnvm_workspace_bytes_fn raw_workspace_bytes() const { return workspace_bytes_; }
  int num_threads() const { return num_threads_; }
  void set_num_threads(int n) { num_threads_ = n > 0 ? n : 0; }

  // Scratch bytes a call with these symbolic sizes (in func().size_vars order) needs.
  uint64_t workspace_bytes(std::span<const int64_t> sizes) const;

  // Runs the kernel on `args` (one per func().params; a wrong buffer is a UserError).
  // num_threads overrides the kernel's setting for this call when positive.
  void call(std::span<const BufferView> args, int num_threads = 0) const;
  void operator()(std::span<const BufferView> args) const { call(args); }
  template <class... A>
    requires(std::is_constructible_v<BufferView, A&> && ...)
  void operator()(A&&... args) const {
    std::array<BufferView, sizeof...(A)> views{BufferView(args)...};
    call(std::span<const BufferView>(views.data(), views.size()));
  }

 private:
  friend std::vector<LlvmKernel> jit_llvm(const std::vector<ir::LoweredFunc>&, const LlvmOptions&);
  void check_defined() const;
  std::shared_ptr<const detail::LlvmModule> module_;
  ir::LoweredFunc fn_;
  std::string symbol_;
  nnvm_kernel_fn kernel_ = nullptr;
  nnvm_workspace_bytes_fn workspace_bytes_ = nullptr;
  int num_threads_ = 0;
  bool from_cache_ = false;
};

// Compiles all `fns` into ONE LLVM module and JIT session, returning their kernels in order.
// Kernel symbols are the sanitized names, made unique within the module (add, add_1).
// Throws BackendError nnvm.codegen.thread_binding for GPU-bound loops and
// nnvm.codegen.allocate_size for allocations that fit neither workspace nor stack.
std::vector<LlvmKernel> jit_llvm(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options = {});
LlvmKernel jit_llvm(const ir::LoweredFunc& fn, const LlvmOptions& options = {});

// The LLVM IR of `fns` as one module, optimized (the IR the JIT compiles) or as emitted.
std::string emit_llvm_ir(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options = {},
                         bool optimized = true);
std::string emit_llvm_ir(const ir::LoweredFunc& fn, const LlvmOptions& options = {}, bool optimized = true);
// Assembly for the target CPU of `options` (the host by default).
std::string emit_asm(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options = {});
std::string emit_asm(const ir::LoweredFunc& fn, const LlvmOptions& options = {});

}  // namespace codegen
NNVM_END_NAMESPACE
