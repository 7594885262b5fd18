// Expressions: arithmetic and comparisons with C's integer rules, select, vectors, let.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "kernel_emitter.hpp"
#include "nnvm/ir/functor.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

llvm::Value* LlvmEmitter::expr(const ir::Expr& e) {
  using K = ir::ExprKind;
  if (!e.defined()) throw InternalError("nnvm.codegen.undefined_expr", "undefined expression", context());
  const DataType t = e.dtype();
  switch (e.kind()) {
    case K::IntImm:
    case K::UIntImm:
    case K::FloatImm: return constant(t, e.get());
    case K::Var: return var_value(e.as<ir::VarNode>());
#define NNVM_LLVM_BINARY(N) \
  case K::N: return binary(K::N, e.as<ir::N>()->a, e.as<ir::N>()->b);
      NNVM_FOR_EACH_BINARY(NNVM_LLVM_BINARY)
#undef NNVM_LLVM_BINARY
    case K::Not: return b_.CreateNot(expr(e.as<ir::Not>()->a));
    case K::Select: return select(e.as<ir::Select>());
    case K::Cast: {
      auto* op = e.as<ir::Cast>();
      return cast(expr(op->value), op->value.dtype(), t);
    }
    case K::BitCast: return b_.CreateBitCast(expr(e.as<ir::BitCast>()->value), reg_type(t));
    case K::Call: return call(e.as<ir::Call>());
    case K::Load: return load(e.as<ir::Load>());
    case K::Ramp: {
      auto* op = e.as<ir::Ramp>();
      llvm::Value* base = b_.CreateVectorSplat(op->lanes, expr(op->base));
      llvm::Value* stride = b_.CreateVectorSplat(op->lanes, expr(op->stride));
      std::vector<llvm::Constant*> steps;
      for (int k = 0; k < op->lanes; ++k) steps.push_back(llvm::ConstantInt::get(scalar_type(op->base.dtype()), k));
      return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps)));
    }
    case K::Broadcast: {
      auto* op = e.as<ir::Broadcast>();
      return b_.CreateVectorSplat(op->lanes, expr(op->value));
    }
    case K::Let: {
      auto* op = e.as<ir::Let>();
      llvm::Value* v = expr(op->value);
      vars_[op->var.get()].push_back(v);
      llvm::Value* r = expr(op->body);
      vars_[op->var.get()].pop_back();
      return r;
    }
    case K::Reduce: not_lowered("Reduce");
    case K::ProducerLoad: not_lowered("ProducerLoad");
  }
  throw InternalError("nnvm.codegen.unknown_node", "unknown expression node", context());
}

void LlvmEmitter::not_lowered(const char* node) const {
  throw InternalError("nnvm.codegen.not_lowered",
                      str_cat(node, " reached the emitter; lower() removes it (see docs/lowered_ir.md)"), context());
}

llvm::Value* LlvmEmitter::binary(ir::ExprKind k, const ir::Expr& ea, const ir::Expr& eb) {
  using K = ir::ExprKind;
  const DataType t = ea.dtype();
  // a*b + c and a*b - c may fuse (llvm.fmuladd), as the C JIT's -ffp-contract=fast allows.
  if (is_real(t) && (k == K::Add || k == K::Sub)) {
    if (auto* m = ea.as<ir::Mul>()) {
      llvm::Value* c = expr(eb);
      if (k == K::Sub) c = b_.CreateFNeg(c);
      return fmuladd(expr(m->a), expr(m->b), c);
    }
    if (auto* m = eb.as<ir::Mul>(); m && k == K::Add) {
      llvm::Value* c = expr(ea);
      return fmuladd(expr(m->a), expr(m->b), c);
    }
  }
  llvm::Value* a = expr(ea);
  llvm::Value* b = expr(eb);
  if (is_real(t)) {
    switch (k) {
      case K::Add: return b_.CreateFAdd(a, b);
      case K::Sub: return b_.CreateFSub(a, b);
      case K::Mul: return b_.CreateFMul(a, b);
      case K::Div: return b_.CreateFDiv(a, b);
      case K::Mod: return b_.CreateFRem(a, b);
      // A NaN on either side gives NaN (IEEE 754-2019 minimum/maximum; docs/lowered_ir.md).
      case K::Min: return b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOLT(a, b), b_.CreateFCmpUNO(a, a)), a, b);
      case K::Max: return b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOGT(a, b), b_.CreateFCmpUNO(a, a)), a, b);
      case K::EQ: return b_.CreateFCmpOEQ(a, b);
      case K::NE: return b_.CreateFCmpUNE(a, b);
      case K::LT: return b_.CreateFCmpOLT(a, b);
      case K::LE: return b_.CreateFCmpOLE(a, b);
      case K::GT: return b_.CreateFCmpOGT(a, b);
      case K::GE: return b_.CreateFCmpOGE(a, b);
      default: break;
    }
    throw InternalError("nnvm.codegen.bad_operands", "logical operator on floats", context());
  }
  if (k == K::And) return b_.CreateAnd(a, b);
  if (k == K::Or) return b_.CreateOr(a, b);
  bool s = is_signed(t);
  switch (k) {
    case K::EQ: return b_.CreateICmpEQ(a, b);
    case K::NE: return b_.CreateICmpNE(a, b);
    case K::LT: return s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
    case K::LE: return s ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
    case K::GT: return s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
    case K::GE: return s ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
    case K::Min: return b_.CreateSelect(s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
    case K::Max: return b_.CreateSelect(s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b), a, b);
    default: break;
  }
  // Arithmetic on bool computes on 0/1 bytes and turns the result back into a bool, as the
  // interpreter does.
  if (t.is_bool()) {
    llvm::Type* byte = reg_type(dtype::uint8.with_lanes(t.lanes));
    llvm::Value* r = int_arith(k, b_.CreateZExt(a, byte), b_.CreateZExt(b, byte), dtype::uint8.with_lanes(t.lanes));
    return b_.CreateICmpNE(r, llvm::Constant::getNullValue(byte));
  }
  return int_arith(k, a, b, t);
}

llvm::Value* LlvmEmitter::int_arith(ir::ExprKind k, llvm::Value* a, llvm::Value* b, DataType t) {
  using K = ir::ExprKind;
  bool s = is_signed(t);
  // Narrow types wrap (no nsw); int32/int64 overflow is undefined, as in C.
  bool nsw = s && t.bits >= 32;
  switch (k) {
    case K::Add: return b_.CreateAdd(a, b, "", false, nsw);
    case K::Sub: return b_.CreateSub(a, b, "", false, nsw);
    case K::Mul: return b_.CreateMul(a, b, "", false, nsw);
    case K::Div:
    case K::Mod: {
      if (t.bits < 32) {
        // C computes narrow types in int, where INT8_MIN / -1 is defined and wraps back.
        llvm::Type* wide = reg_type(DataType::int_(32, t.lanes));
        llvm::Value* wa = s ? b_.CreateSExt(a, wide) : b_.CreateZExt(a, wide);
        llvm::Value* wb = s ? b_.CreateSExt(b, wide) : b_.CreateZExt(b, wide);
        llvm::Value* r = k == K::Div ? b_.CreateSDiv(wa, wb) : b_.CreateSRem(wa, wb);
        return b_.CreateTrunc(r, a->getType());
      }
      if (k == K::Div) return s ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
      return s ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
    }
    default: break;
  }
  throw InternalError("nnvm.codegen.bad_operands", "unexpected integer operator", context());
}

llvm::Value* LlvmEmitter::fmuladd(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
  return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, b, c});
}

// A scalar select runs only the chosen branch (the other may be a guarded out-of-bounds
// load); LLVM turns the branches back into a select when speculation is safe.
llvm::Value* LlvmEmitter::select(const ir::Select* op) {
  if (op->dtype.is_vector())
    return b_.CreateSelect(expr(op->condition), expr(op->true_value), expr(op->false_value));
  llvm::Value* c = expr(op->condition);
  auto* then_bb = llvm::BasicBlock::Create(ctx_, "select.true", func_);
  auto* else_bb = llvm::BasicBlock::Create(ctx_, "select.false", func_);
  auto* merge = llvm::BasicBlock::Create(ctx_, "select.end", func_);
  b_.CreateCondBr(c, then_bb, else_bb);
  b_.SetInsertPoint(then_bb);
  llvm::Value* tv = expr(op->true_value);
  llvm::BasicBlock* then_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(else_bb);
  llvm::Value* fv = expr(op->false_value);
  llvm::BasicBlock* else_end = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  auto* phi = b_.CreatePHI(tv->getType(), 2);
  phi->addIncoming(tv, then_end);
  phi->addIncoming(fv, else_end);
  return phi;
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
