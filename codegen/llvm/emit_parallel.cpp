// Parallel loops: the body is outlined into its own function over a closure and run on nnvm's
// thread pool through the kernel environment.
#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>

#include "compat.hpp"
#include "kernel_emitter.hpp"
#include "nnvm/runtime/kernel_abi.h"
#include "nnvm/target/storage_plan.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

using nnvm_llvm_compat::ptr_type;
using nnvm_llvm_compat::typed_ptr;

// The loop body becomes `int32_t body(int64_t begin, int64_t end, void* closure)` over a
// closure struct of what it captures, run through env->parallel_for (directly when env or
// its parallel_for is NULL); a non-zero status returns from the kernel.
void LlvmEmitter::parallel_loop(const ir::For* op) {
  target::LoopCaptures cap = target::loop_captures(op, [&](const auto* node) { return bound(node); });
  llvm::Type* ptr = ptr_type(ctx_);
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  std::vector<llvm::Value*> values;
  std::vector<llvm::Type*> fields;
  for (auto* v : cap.vars) values.push_back(var_value(v));
  for (auto& b : cap.buffers) values.push_back(buffers_[b.get()].back());
  for (auto* v : values) fields.push_back(v->getType());
  auto* closure_type = llvm::StructType::get(ctx_, fields);
  llvm::Value* extent = cast(expr(op->extent), op->extent.dtype(), dtype::int64);

  llvm::Value* closure = llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ptr));
  if (!fields.empty()) {
    closure = entry_alloca(closure_type, "closure", 8);
    for (size_t k = 0; k < values.size(); ++k)
      b_.CreateStore(values[k], b_.CreateStructGEP(closure_type, closure, unsigned(k)));
    closure = typed_ptr(b_, closure, b_.getInt8Ty());
  }

  // The outlined body takes the captured buffers as noalias parameters (distinct buffers never
  // overlap), so LLVM may keep values in registers across stores; a thin entry unpacks the
  // closure into them.
  llvm::Function* outer = func_;
  llvm::IRBuilderBase::InsertPoint saved = b_.saveIP();
  std::string name = str_cat(symbol_, "_parallel_", parallel_count_++);
  std::vector<llvm::Type*> params{i64, i64};
  params.insert(params.end(), fields.begin(), fields.end());
  auto* inner = new_function(llvm::FunctionType::get(i32, params, false), name + "_body",
                             llvm::GlobalValue::InternalLinkage);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", inner));
  in_parallel_ = true;
  for (size_t k = 0; k < values.size(); ++k) {
    llvm::Argument* x = inner->getArg(unsigned(k) + 2);
    if (k < cap.vars.size()) {
      x->setName(cap.vars[k]->name);
      vars_[cap.vars[k]].push_back(x);
    } else {
      const ir::BufferNode* bnode = cap.buffers[k - cap.vars.size()].get();
      x->setName(bnode->name);
      x->addAttr(llvm::Attribute::NoAlias);
      buffers_[bnode].push_back(x);
    }
  }
  DataType vt = op->loop_var.dtype();
  llvm::Value* first = cast(expr(op->min), op->min.dtype(), dtype::int64);
  serial_loop(ir::Var("iter"), inner->getArg(0), inner->getArg(1), [&](llvm::Value* it) {
    vars_[op->loop_var.get()].push_back(cast(b_.CreateAdd(first, it), dtype::int64, vt));
    stmt(op->body);
    vars_[op->loop_var.get()].pop_back();
  });
  b_.CreateRet(b_.getInt32(NNVM_STATUS_OK));
  for (size_t k = 0; k < values.size(); ++k) {
    if (k < cap.vars.size()) vars_[cap.vars[k]].pop_back();
    else buffers_[cap.buffers[k - cap.vars.size()].get()].pop_back();
  }
  in_parallel_ = false;

  auto* body_fn = new_function(llvm::FunctionType::get(i32, {i64, i64, ptr}, false), name,
                               llvm::GlobalValue::InternalLinkage);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body_fn));
  std::vector<llvm::Value*> inner_args{body_fn->getArg(0), body_fn->getArg(1)};
  llvm::Value* captured = typed_ptr(b_, body_fn->getArg(2), closure_type);
  for (size_t k = 0; k < values.size(); ++k)
    inner_args.push_back(b_.CreateLoad(fields[k], b_.CreateStructGEP(closure_type, captured, unsigned(k))));
  b_.CreateRet(b_.CreateCall(inner, inner_args));
  func_ = outer;
  b_.restoreIP(saved);

  // The launch.
  auto* env_type = llvm::StructType::get(ctx_, {ptr, ptr});
  auto* body_type = llvm::FunctionType::get(i32, {i64, i64, ptr}, false);
  auto* pfor_type = llvm::FunctionType::get(i32, {ptr, i64, ptr, ptr}, false);
  auto* check_fn = llvm::BasicBlock::Create(ctx_, "parallel.env", func_);
  auto* pool_bb = llvm::BasicBlock::Create(ctx_, "parallel.pool", func_);
  auto* direct_bb = llvm::BasicBlock::Create(ctx_, "parallel.direct", func_);
  auto* done = llvm::BasicBlock::Create(ctx_, "parallel.done", func_);
  b_.CreateCondBr(b_.CreateIsNull(env_), direct_bb, check_fn);
  b_.SetInsertPoint(check_fn);
  llvm::Value* pfor = b_.CreateLoad(ptr, b_.CreateStructGEP(env_type, typed_ptr(b_, env_, env_type), 1));
  b_.CreateCondBr(b_.CreateIsNull(pfor), direct_bb, pool_bb);
  b_.SetInsertPoint(pool_bb);
  llvm::Value* pool = b_.CreateLoad(ptr, b_.CreateStructGEP(env_type, typed_ptr(b_, env_, env_type), 0));
  llvm::Value* st_pool = b_.CreateCall(pfor_type, typed_ptr(b_, pfor, pfor_type),
                                       {pool, extent, typed_ptr(b_, body_fn, b_.getInt8Ty()), closure});
  b_.CreateBr(done);
  b_.SetInsertPoint(direct_bb);
  llvm::Value* st_direct = b_.CreateCall(body_type, body_fn, {b_.getInt64(0), extent, closure});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  auto* status = b_.CreatePHI(i32, 2, "status");
  status->addIncoming(st_pool, pool_bb);
  status->addIncoming(st_direct, direct_bb);
  auto* fail = llvm::BasicBlock::Create(ctx_, "parallel.failed", func_);
  auto* next = llvm::BasicBlock::Create(ctx_, "parallel.next", func_);
  b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(0)), fail, next);
  b_.SetInsertPoint(fail);
  b_.CreateRet(status);
  b_.SetInsertPoint(next);
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
