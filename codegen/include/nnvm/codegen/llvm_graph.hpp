// The LLVM JIT as the graph executor's kernel compiler: graph::CompileOptions::compiler =
// codegen::llvm_kernel_compiler(). Part of the optional nnvm::llvm library, like llvm_jit.hpp.
#pragma once

#include <memory>
#include <vector>

#include "nnvm/codegen/llvm_jit.hpp"
#include "nnvm/graph/executor.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen {

inline graph::KernelCompiler llvm_kernel_compiler(LlvmOptions options = {}) {
  return [options](const std::vector<ir::LoweredFunc>& fns) { return jit_llvm(fns, options); };
}

}  // namespace codegen
NNVM_END_NAMESPACE
