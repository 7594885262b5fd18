// Private to codegen/llvm: builds lowered kernels into an LLVM module.
#pragma once

#include <string>
#include <vector>

#include <llvm/IR/Module.h>

#include "nnvm/ir/function.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

// Each kernel's exported symbol: the sanitized name, unique among `fns` and clear of the C
// math library (the JIT, the object files and their C headers all use these).
std::vector<std::string> kernel_symbols(const std::vector<ir::LoweredFunc>& fns);

// Adds to `m` every kernel of `fns` with the kernel ABI (docs/lowered_ir.md): `symbol` and
// `symbol_workspace_bytes`, plus internal outlined parallel bodies. Functions carry the given
// target-cpu / target-features attributes. Returns each kernel's symbol (the sanitized name,
// unique in the module). Throws BackendError for what a CPU cannot run.
std::vector<std::string> build_module(llvm::Module& m, const std::vector<ir::LoweredFunc>& fns,
                                      const std::string& cpu, const std::string& features);

}  // namespace codegen::detail
NNVM_END_NAMESPACE
