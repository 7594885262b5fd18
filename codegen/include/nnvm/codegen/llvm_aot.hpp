// Ahead-of-time compilation with the LLVM back end: lowered kernels become a relocatable object
// file for a named target (x86-64 or AArch64; Linux is what the tests run), plus a C header
// declaring what the object exports, so a plain C program (or a cross toolchain) can link and
// call the kernels with no nnvm at run time.
//
// Each kernel exports the kernel ABI of nnvm/runtime/kernel_abi.h (see docs/lowered_ir.md):
//   int32_t name(void* const* args, const int64_t* sizes, void* workspace,
//                uint64_t workspace_bytes, const nnvm_kernel_env* env);
//   uint64_t name_workspace_bytes(const int64_t* sizes);
// Parallel loops call env->parallel_for as in the JIT; with env NULL they run serially. The
// code may call the C math library (link with -lm). Part of the optional nnvm::llvm library;
// no LLVM header leaks through this one.
#pragma once

#include <string>
#include <vector>

#include "nnvm/ir/function.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen {

struct AotOptions {
  std::string triple;    // e.g. "aarch64-linux-gnu", "x86_64-linux-gnu"; empty: the host's
  std::string cpu;       // e.g. "cortex-a72", "skylake"; empty: the triple's generic CPU;
                         // "native": this machine's CPU (with an empty triple), as jit_llvm uses
  std::string features;  // "+neon,-sve" style; empty: the CPU's own (for "native", this machine's)
  int opt_level = 3;     // 0..3, the PassBuilder pipeline and code generation level
};

// Writes one object file holding every kernel of `fns`, with the symbols emit_c_header names.
// Throws BackendError nnvm.codegen.llvm.triple for a triple LLVM does not know or whose
// architecture nnvm cannot target, nnvm.codegen.llvm.cpu for a CPU the target does not know,
// nnvm.codegen.llvm.object_file when the file cannot be written, and what jit_llvm throws for
// kernels a CPU cannot run.
void emit_object(const std::vector<ir::LoweredFunc>& fns, const std::string& object_path,
                 const AotOptions& options = {});

// The symbols emit_object exports for `fns`, in order: each kernel S, with S_workspace_bytes.
std::vector<std::string> object_symbols(const std::vector<ir::LoweredFunc>& fns);

// A self-contained C header (C and C++) for the object of `fns`: the kernel ABI typedefs and,
// per kernel, a comment giving each argument's name, dtype and shape and the order of the
// symbolic sizes, then the declarations of the kernel and its workspace-size function.
std::string emit_c_header(const std::vector<ir::LoweredFunc>& fns);

}  // namespace codegen
NNVM_END_NAMESPACE
