// The LLVM JIT as the graph executor's kernel compiler: graph::CompileOptions::compiler =
// codegen::llvm_kernel_compiler(). Each compiled kernel keeps its LLVM module alive through the
// CompiledKernel's owner. Part of the optional nnvm::llvm library, like llvm_jit.hpp.
#pragma once

#include <memory>
#include <vector>

#include "nnvm/codegen/llvm_jit.hpp"
#include "nnvm/graph/executor.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen {

inline graph::KernelCompiler llvm_kernel_compiler(LlvmOptions options = {}) {
  return [options](const std::vector<ir::LoweredFunc>& fns) {
    std::vector<graph::CompiledKernel> out;
    for (auto& k : jit_llvm(fns, options)) {
      auto owner = std::make_shared<const LlvmKernel>(k);
      out.push_back({k.func(), k.raw_function(), k.raw_workspace_bytes(), owner});
    }
    return out;
  };
}

}  // namespace codegen
NNVM_END_NAMESPACE
