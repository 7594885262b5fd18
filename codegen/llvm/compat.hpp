// The few LLVM API differences between versions 14, 15 and 16 that nnvm's LLVM back end meets.
// Private to codegen/llvm: nothing under include/ sees LLVM headers.
#pragma once

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/CodeGen.h>

#if LLVM_VERSION_MAJOR < 14 || LLVM_VERSION_MAJOR > 16
#error "nnvm's LLVM back end supports LLVM 14 to 16"
#endif

namespace nnvm_llvm_compat {

// An untyped pointer: opaque pointers are the default from LLVM 15 (and the only kind from 17);
// LLVM 14 needs a typed i8*.
inline llvm::PointerType* ptr_type(llvm::LLVMContext& ctx) {
#if LLVM_VERSION_MAJOR >= 15
  return llvm::PointerType::getUnqual(ctx);
#else
  return llvm::Type::getInt8PtrTy(ctx);
#endif
}

// The address of a JIT symbol: ORC's lookup gives a JITEvaluatedSymbol in 14 and an
// ExecutorAddr from 15.
template <class Symbol>
inline void* symbol_address(const Symbol& s) {
#if LLVM_VERSION_MAJOR >= 15
  return s.template toPtr<void*>();
#else
  return reinterpret_cast<void*>(static_cast<uintptr_t>(s.getAddress()));
#endif
}

// Code generation optimization level (renamed to CodeGenOptLevel in 18; stable for 14..16).
inline llvm::CodeGenOpt::Level codegen_level(int opt) {
  return opt <= 0 ? llvm::CodeGenOpt::None : opt == 1 ? llvm::CodeGenOpt::Less
                                           : opt == 2 ? llvm::CodeGenOpt::Default
                                                      : llvm::CodeGenOpt::Aggressive;
}

}  // namespace nnvm_llvm_compat
