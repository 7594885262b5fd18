// The kernel ABI (docs/lowered_ir.md) in LLVM IR: each kernel's exported entry point and
// workspace-size function, their symbols, and the module of a batch of kernels.
#include "emitter.hpp"

#include <cctype>
#include <set>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Function.h>

#include "compat.hpp"
#include "kernel_emitter.hpp"
#include "nnvm/target/reserved_names.hpp"
#include "nnvm/runtime/kernel_abi.h"
#include "nnvm/target/kernel_signature.hpp"
#include "nnvm/target/storage_plan.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

using nnvm_llvm_compat::ptr_type;
using nnvm_llvm_compat::typed_ptr;

// Declares a kernel's two exported functions before any kernel is emitted, so no internal
// function of an earlier kernel can take (and LLVM rename) a later kernel's symbol.
void LlvmEmitter::declare(const std::string& symbol) {
  llvm::Type* ptr = ptr_type(ctx_);
  new_function(llvm::FunctionType::get(b_.getInt64Ty(), {ptr}, false), symbol + "_workspace_bytes",
               llvm::GlobalValue::ExternalLinkage);
  new_function(llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr, b_.getInt64Ty(), ptr}, false), symbol,
               llvm::GlobalValue::ExternalLinkage);
}

void LlvmEmitter::emit_kernel(const ir::LoweredFunc& fn, const std::string& symbol) {
  fn_ = &fn;
  symbol_ = symbol;
  parallel_count_ = 0;
  vars_.clear();
  buffers_.clear();
  workspace_offsets_.clear();
  if (!fn.body.defined()) throw InternalError("nnvm.codegen.empty_kernel", "kernel has no body", context());
  const std::vector<const ir::Allocate*> workspace_allocs = target::workspace_allocations(fn.body);
  check_layout(workspace_allocs);

  llvm::Type* ptr = ptr_type(ctx_);
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i32 = b_.getInt32Ty();

  // symbol_workspace_bytes(sizes)
  func_ = mod_.getFunction(symbol + "_workspace_bytes");
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", func_));
  bind_sizes(func_->getArg(0));
  b_.CreateRet(layout(workspace_allocs, nullptr));
  vars_.clear();

  // The kernel body takes the arguments as noalias parameters (kernel arguments never overlap:
  // bind_arguments checks it), so LLVM may keep values in registers across stores, e.g. an
  // accumulator in the output buffer; the exported entry point unpacks `args` into them.
  std::vector<llvm::Type*> params(fn.params.size(), ptr);
  params.insert(params.end(), {ptr, ptr, i64, ptr});
  auto* body = new_function(llvm::FunctionType::get(i32, params, false), symbol + "_body",
                            llvm::GlobalValue::InternalLinkage);
  const size_t np = fn.params.size();
  for (size_t i = 0; i < np; ++i) {
    llvm::Argument* a = body->getArg(unsigned(i));
    a->setName(fn.params[i]->name);
    a->addAttr(llvm::Attribute::NoAlias);
    buffers_[fn.params[i].get()].push_back(a);
  }
  const char* arg_names[] = {"sizes", "workspace", "workspace_bytes", "env"};
  for (unsigned k = 0; k < 4; ++k) body->getArg(unsigned(np) + k)->setName(arg_names[k]);
  llvm::Argument* workspace = body->getArg(unsigned(np) + 1);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body));
  env_ = body->getArg(unsigned(np) + 3);
  bind_sizes(body->getArg(unsigned(np)));
  if (!workspace_allocs.empty()) {
    std::vector<llvm::Value*> offsets;
    llvm::Value* total = layout(workspace_allocs, &offsets);
    for (size_t k = 0; k < offsets.size(); ++k)
      workspace_offsets_[workspace_allocs[k]] = b_.CreateInBoundsGEP(b_.getInt8Ty(), workspace, offsets[k]);
    auto* small = llvm::BasicBlock::Create(ctx_, "workspace_too_small", body);
    auto* ok = llvm::BasicBlock::Create(ctx_, "body", body);
    b_.CreateCondBr(b_.CreateICmpULT(body->getArg(unsigned(np) + 2), total), small, ok);
    b_.SetInsertPoint(small);
    b_.CreateRet(b_.getInt32(NNVM_STATUS_WORKSPACE_TOO_SMALL));
    b_.SetInsertPoint(ok);
  }
  stmt(fn.body);
  b_.CreateRet(b_.getInt32(NNVM_STATUS_OK));

  // The kernel itself.
  func_ = mod_.getFunction(symbol);
  const char* entry_names[] = {"args", "sizes", "workspace", "workspace_bytes", "env"};
  for (unsigned k = 0; k < 5; ++k) func_->getArg(k)->setName(entry_names[k]);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", func_));
  std::vector<llvm::Value*> call_args;
  for (size_t i = 0; i < np; ++i) {
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, typed_ptr(b_, func_->getArg(0), ptr), i);
    call_args.push_back(b_.CreateAlignedLoad(ptr, slot, llvm::Align(8), fn.params[i]->name));
  }
  for (unsigned k = 1; k < 5; ++k) call_args.push_back(func_->getArg(k));
  b_.CreateRet(b_.CreateCall(body, call_args));
}

std::vector<std::string> LlvmEmitter::context() const { return {"kernel " + (fn_ ? fn_->name : std::string("?"))}; }

llvm::Function* LlvmEmitter::new_function(llvm::FunctionType* type, const std::string& name, llvm::GlobalValue::LinkageTypes l) {
  auto* f = llvm::Function::Create(type, l, name, mod_);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  if (!cpu_.empty()) f->addFnAttr("target-cpu", cpu_);
  if (!features_.empty()) f->addFnAttr("target-features", features_);
  func_ = f;
  return f;
}

std::vector<std::string> kernel_symbols(const std::vector<ir::LoweredFunc>& fns) {
  // Symbols avoid each other, C's keywords and the C library's names (an object file's C header
  // must compile, and an exported `expf` would capture the library's own calls to expf) ...
  std::set<std::string> taken(target::reserved_c_names().begin(), target::reserved_c_names().end());
  // ... and the names of the math functions the code may call.
  for (int op = 0; op <= int(ir::CallOp::copysign); ++op) {
    taken.insert(ir::call_op_name(ir::CallOp(op)));
    taken.insert(std::string(ir::call_op_name(ir::CallOp(op))) + "f");
  }
  std::vector<std::string> symbols;
  for (auto& fn : fns) {
    std::string base;
    for (char c : fn.name.empty() ? std::string("kernel") : fn.name)
      base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (std::isdigit(static_cast<unsigned char>(base[0])) || base[0] == '_' || base.rfind("nnvm_", 0) == 0) base = "v" + base;
    std::string name = base;
    // name, name_workspace_bytes and, in a deploy artifact, name_signature (kernel_signature.hpp).
    auto clashes = [&](const std::string& n) {
      return taken.count(n) || taken.count(n + "_workspace_bytes") || taken.count(n + target::kSignatureSuffix);
    };
    for (int k = 1; clashes(name); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    taken.insert(name + "_workspace_bytes");
    taken.insert(name + target::kSignatureSuffix);
    symbols.push_back(name);
  }
  return symbols;
}

std::vector<std::string> build_module(llvm::Module& m, const std::vector<ir::LoweredFunc>& fns,
                                      const std::string& cpu, const std::string& features) {
  std::vector<std::string> symbols = kernel_symbols(fns);
  LlvmEmitter e(m, cpu, features);
  for (auto& s : symbols) e.declare(s);
  for (size_t i = 0; i < fns.size(); ++i) e.emit_kernel(fns[i], symbols[i]);
  return symbols;
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
