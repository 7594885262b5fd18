// A compiled kernel, whatever compiled it: the C JIT (target/c_jit.hpp), the LLVM JIT
// (codegen/llvm_jit.hpp) and the graph executor all hand out this one type. It is the lowered
// function, its entry points under the kernel ABI (runtime/kernel_abi.h) and the module that
// holds the code; calls go through target::call_kernel, so every back end checks arguments,
// lends workspace and threads, and reports failures the same way.
//
// The thread count is not part of a kernel: each call says how many threads its parallel loops
// may use (0: the pool's count, NNVM_NUM_THREADS or all cores).
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "nnvm/ir/function.hpp"
#include "nnvm/target/family.hpp"
#include "nnvm/target/kernel_call.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// The code one compiler call produced for a batch of kernels; it stays loaded while any of
// their Kernels exists.
struct KernelModule {
  Emitter emitter = Emitter::c;
  std::string code;          // what was compiled: the C source, or the optimized LLVM IR
  std::string library_path;  // the shared library the code was loaded from; empty when in memory
  double compile_ms = 0;     // building and compiling (or loading from the disk cache) the module
  std::shared_ptr<const void> keep_alive;  // the loaded library or JIT session
};

class Kernel {
 public:
  Kernel() = default;
  Kernel(std::shared_ptr<const KernelModule> module, ir::LoweredFunc fn, std::string symbol, nnvm_kernel_fn kernel,
         nnvm_workspace_bytes_fn workspace_bytes, bool from_cache = false)
      : module_(std::move(module)), fn_(std::move(fn)), symbol_(std::move(symbol)), kernel_(kernel),
        workspace_bytes_(workspace_bytes), from_cache_(from_cache) {}

  bool defined() const { return kernel_ != nullptr; }
  const ir::LoweredFunc& func() const { return fn_; }
  // The kernel's symbol in its module.
  const std::string& symbol() const { return symbol_; }
  const KernelModule& module() const {
    check_defined();
    return *module_;
  }
  Emitter emitter() const { return module().emitter; }
  const std::string& code() const { return module().code; }
  const std::string& library_path() const { return module().library_path; }
  double compile_ms() const { return module().compile_ms; }
  // Whether the JIT found the module in one of its caches instead of compiling it.
  bool from_cache() const { return from_cache_; }

  // The raw entry points, for callers that drive the kernel ABI themselves (the run loop).
  nnvm_kernel_fn raw_function() const { return kernel_; }
  nnvm_workspace_bytes_fn raw_workspace_bytes() const { return workspace_bytes_; }

  // Scratch bytes a call with these symbolic sizes (in func().size_vars order) needs.
  uint64_t workspace_bytes(std::span<const int64_t> sizes) const {
    check_defined();
    if (sizes.size() != fn_.size_vars.size())
      throw UserError("nnvm.call.size_count", str_cat("kernel ", fn_.name, " has ", fn_.size_vars.size(),
                                                      " symbolic sizes, got ", sizes.size()));
    return workspace_bytes_(sizes.data());
  }

  // Runs the kernel on `args` (one per func().params, checked by bind_arguments: a wrong buffer
  // is a UserError), its parallel loops on `num_threads` threads (0: the pool's count).
  void call(std::span<const BufferView> args, int num_threads = 0) const {
    check_defined();
    call_kernel(fn_, kernel_, workspace_bytes_, args, num_threads, "nnvm.call.kernel_status");
  }
  void operator()(std::span<const BufferView> args) const { call(args); }
  // kernel(a, b, c) with NDArrays or BufferViews.
  template <class... A>
    requires(std::is_constructible_v<BufferView, A&> && ...)
  void operator()(A&&... args) const {
    std::array<BufferView, sizeof...(A)> views{BufferView(args)...};
    call(std::span<const BufferView>(views.data(), views.size()));
  }

 private:
  void check_defined() const {
    if (!kernel_) throw UserError("nnvm.call.undefined_kernel", "called a default-constructed Kernel");
  }
  std::shared_ptr<const KernelModule> module_;
  ir::LoweredFunc fn_;
  std::string symbol_;
  nnvm_kernel_fn kernel_ = nullptr;
  nnvm_workspace_bytes_fn workspace_bytes_ = nullptr;
  bool from_cache_ = false;
};

}  // namespace target
NNVM_END_NAMESPACE
