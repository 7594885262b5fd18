// The few LLVM API differences between versions 14, 15 and 16 that nnvm's LLVM back end meets.
// Private to codegen/llvm: nothing under include/ sees LLVM headers.
#pragma once

#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/CodeGen.h>

#if LLVM_VERSION_MAJOR < 14 || LLVM_VERSION_MAJOR > 16
#error "nnvm's LLVM back end supports LLVM 14 to 16"
#endif

// Host CPU queries (sys::getHostCPUName, getProcessTriple) and Triple moved to TargetParser in
// 16; the old paths there only forward, with a deprecation note.
#if LLVM_VERSION_MAJOR >= 16
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#else
#include <llvm/ADT/Triple.h>
#include <llvm/Support/Host.h>
#endif

namespace nnvm_llvm_compat {

// An untyped pointer, the type of every buffer, handle and closure the emitter passes around:
// opaque pointers are the default from LLVM 15 (and the only kind from 17); LLVM 14 gets i8*.
// (LLVM 14 has opaque pointers behind a switch, but its optimizer crashes on them, e.g. in
// ArgumentPromotion.)
inline llvm::PointerType* ptr_type(llvm::LLVMContext& ctx) {
#if LLVM_VERSION_MAJOR >= 15
  return llvm::PointerType::getUnqual(ctx);
#else
  return llvm::Type::getInt8PtrTy(ctx);
#endif
}

// `p` as a pointer to `pointee`, for a GEP, load, store or call through it: nothing to do with
// opaque pointers; a pointer cast with LLVM 14's typed pointers.
inline llvm::Value* typed_ptr(llvm::IRBuilderBase& b, llvm::Value* p, llvm::Type* pointee) {
#if LLVM_VERSION_MAJOR >= 15
  (void)b;
  (void)pointee;
  return p;
#else
  return b.CreatePointerCast(p, pointee->getPointerTo());
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
