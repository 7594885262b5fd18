// The LLVM back end: lowered kernels (docs/lowered_ir.md) become LLVM IR, optimized with the O3
// pipeline for the host CPU and compiled in process by ORC's LLJIT. It hands out the same
// target::Kernel as the C JIT: arguments checked by target::bind_arguments, workspace from the
// calling thread, parallel loops on nnvm's pool; Kernel::code() is the optimized LLVM IR.
//
// Part of the optional nnvm::llvm library (link it to use this header); no LLVM header leaks
// through it. Compiled modules are cached in memory by a hash of the printed IR and options,
// so each kernel compiles once per process.
#pragma once

#include <string>
#include <vector>

#include "nnvm/ir/function.hpp"
#include "nnvm/target/kernel.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen {

struct LlvmOptions {
  std::string cpu;        // empty: the host CPU (llvm::sys::getHostCPUName)
  std::string features;   // empty with an empty cpu: the host's features; "+avx2,-avx512f" style
  int opt_level = 3;      // 0..3, the PassBuilder pipeline level; from 2 on with LLVM's loop and
                          // SLP vectorizers, after lower::interchange_reductions has moved an
                          // unscheduled reduction nest's data-parallel loop innermost
};

// Compiles all `fns` into ONE LLVM module and JIT session, returning their kernels in order.
// Kernel symbols are the sanitized names, made unique within the module (add, add_1).
// Throws BackendError nnvm.codegen.thread_binding for GPU-bound loops and
// nnvm.codegen.allocate_size for allocations that fit neither workspace nor stack.
std::vector<target::Kernel> jit_llvm(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options = {});
target::Kernel jit_llvm(const ir::LoweredFunc& fn, const LlvmOptions& options = {});

// The LLVM IR of `fns` as one module, optimized (the IR the JIT compiles) or as emitted.
std::string emit_llvm_ir(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options = {},
                         bool optimized = true);
std::string emit_llvm_ir(const ir::LoweredFunc& fn, const LlvmOptions& options = {}, bool optimized = true);
// Assembly for the target CPU of `options` (the host by default).
std::string emit_asm(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options = {});
std::string emit_asm(const ir::LoweredFunc& fn, const LlvmOptions& options = {});

}  // namespace codegen
NNVM_END_NAMESPACE
