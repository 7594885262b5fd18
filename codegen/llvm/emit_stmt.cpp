// Statements: control flow, let scopes and serial loops (parallel ones: emit_parallel.cpp).
#include <llvm/IR/BasicBlock.h>

#include "kernel_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

void LlvmEmitter::stmt(const ir::Stmt& s) {
  using K = ir::StmtKind;
  if (!s.defined()) return;
  switch (s.kind()) {
    case K::For: return loop(s.as<ir::For>());
    case K::Store: return store(s.as<ir::Store>());
    case K::Allocate: return allocate(s.as<ir::Allocate>());
    case K::IfThenElse: {
      auto* op = s.as<ir::IfThenElse>();
      llvm::Value* c = expr(op->condition);
      auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", func_);
      auto* merge = llvm::BasicBlock::Create(ctx_, "if.end", func_);
      auto* else_bb = op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", func_) : merge;
      b_.CreateCondBr(c, then_bb, else_bb);
      b_.SetInsertPoint(then_bb);
      stmt(op->then_case);
      b_.CreateBr(merge);
      if (op->else_case.defined()) {
        b_.SetInsertPoint(else_bb);
        stmt(op->else_case);
        b_.CreateBr(merge);
      }
      b_.SetInsertPoint(merge);
      return;
    }
    case K::Seq:
      for (auto& x : s.as<ir::Seq>()->seq) stmt(x);
      return;
    case K::LetStmt: {
      auto* op = s.as<ir::LetStmt>();
      llvm::Value* v = expr(op->value);
      vars_[op->var.get()].push_back(v);
      stmt(op->body);
      vars_[op->var.get()].pop_back();
      return;
    }
    case K::Evaluate: {
      auto* op = s.as<ir::Evaluate>();
      if (!ir::is_const(op->value)) expr(op->value);
      return;
    }
    case K::Barrier: return;  // one CPU thread per iteration: nothing to wait for
    case K::ProducerStore: not_lowered("ProducerStore");
    case K::ProducerRealize: not_lowered("ProducerRealize");
  }
}

void LlvmEmitter::loop(const ir::For* op) {
  if (op->for_kind == ir::ForKind::thread_binding)
    throw BackendError("nnvm.codegen.thread_binding",
                       str_cat("loop ", op->loop_var.name(), " is bound to GPU axis '", op->thread_tag,
                               "', which this CPU back end cannot run; build the kernel for a GPU target"),
                       context());
  if (op->for_kind == ir::ForKind::parallel && !in_parallel_) return parallel_loop(op);
  DataType vt = op->loop_var.dtype();
  llvm::Value* begin = cast(expr(op->min), op->min.dtype(), vt);
  llvm::Value* end = b_.CreateAdd(begin, cast(expr(op->extent), op->extent.dtype(), vt));
  serial_loop(op->loop_var, begin, end, [&](llvm::Value* i) {
    vars_[op->loop_var.get()].push_back(i);
    stmt(op->body);
    vars_[op->loop_var.get()].pop_back();
  });
}

// for (i = begin; i < end; ++i) body(i), with i of begin's type.
void LlvmEmitter::serial_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end,
                              llvm::function_ref<void(llvm::Value*)> body) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* head = llvm::BasicBlock::Create(ctx_, var.name() + ".head", func_);
  auto* body_bb = llvm::BasicBlock::Create(ctx_, var.name() + ".body", func_);
  auto* exit = llvm::BasicBlock::Create(ctx_, var.name() + ".end", func_);
  b_.CreateBr(head);
  b_.SetInsertPoint(head);
  auto* i = b_.CreatePHI(begin->getType(), 2, var.name());
  i->addIncoming(begin, pre);
  b_.CreateCondBr(b_.CreateICmpSLT(i, end), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  body(i);
  llvm::Value* next = b_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1), "", false, true);
  i->addIncoming(next, b_.GetInsertBlock());
  b_.CreateBr(head);
  b_.SetInsertPoint(exit);
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
