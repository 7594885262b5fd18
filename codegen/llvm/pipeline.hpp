// Private to codegen/llvm: what the JIT and the object-file writer share once a target machine
// exists: building, verifying and optimizing a module, and reporting LLVM errors.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Target/TargetMachine.h>

#include "nnvm/error.hpp"
#include "nnvm/ir/function.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

std::string llvm_error(llvm::Error e);

template <class T>
T check(llvm::Expected<T> v, const char* what) {
  if (!v) throw BackendError("nnvm.codegen.llvm.jit", str_cat(what, ": ", llvm_error(v.takeError())));
  return std::move(*v);
}

struct Built {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
  std::vector<std::string> symbols;
};

// Builds, verifies and (when asked) optimizes the module of `fns` for `tm`.
Built build(const std::vector<ir::LoweredFunc>& fns, llvm::TargetMachine& tm, int opt_level, bool optimize);

std::string print(const llvm::Module& m);

// This machine's CPU features, "+avx2,-avx512f" style: what the JIT and a "native" object use.
std::string host_features();

}  // namespace codegen::detail
NNVM_END_NAMESPACE
