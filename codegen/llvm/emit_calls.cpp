// ir::CallOp calls: LLVM intrinsics where LLVM has one, guarded bitwise shifts, and the C math
// library for the rest.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "kernel_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

llvm::Value* LlvmEmitter::call(const ir::Call* op) {
  using O = ir::CallOp;
  DataType t = op->args[0].dtype();
  std::vector<llvm::Value*> a;
  for (auto& x : op->args) a.push_back(expr(x));
  llvm::Type* ty = a[0]->getType();
  auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_.CreateIntrinsic(id, {ty}, a); };
  auto one = [&] { return llvm::ConstantFP::get(ty, 1.0); };
  if (ir::is_bitwise(op->op)) return bitwise(op->op, t, a);
  if (!t.is_float()) {  // abs is the only other integer call
    if (!is_signed(t)) return a[0];
    llvm::Value* zero = llvm::Constant::getNullValue(ty);
    return b_.CreateSelect(b_.CreateICmpSLT(a[0], zero), b_.CreateSub(zero, a[0]), a[0]);
  }
  switch (op->op) {
    case O::exp: return intrinsic(llvm::Intrinsic::exp);
    case O::exp2: return intrinsic(llvm::Intrinsic::exp2);
    case O::log: return intrinsic(llvm::Intrinsic::log);
    case O::log2: return intrinsic(llvm::Intrinsic::log2);
    case O::sqrt: return intrinsic(llvm::Intrinsic::sqrt);
    case O::floor: return intrinsic(llvm::Intrinsic::floor);
    case O::ceil: return intrinsic(llvm::Intrinsic::ceil);
    case O::trunc: return intrinsic(llvm::Intrinsic::trunc);
    case O::abs: return intrinsic(llvm::Intrinsic::fabs);
    case O::round: return intrinsic(llvm::Intrinsic::nearbyint);
    case O::pow: return intrinsic(llvm::Intrinsic::pow);
    case O::sin: return intrinsic(llvm::Intrinsic::sin);
    case O::cos: return intrinsic(llvm::Intrinsic::cos);
    case O::copysign: return intrinsic(llvm::Intrinsic::copysign);
    case O::fmod: return b_.CreateFRem(a[0], a[1]);
    case O::rsqrt: return b_.CreateFDiv(one(), b_.CreateIntrinsic(llvm::Intrinsic::sqrt, {ty}, {a[0]}));
    case O::sigmoid: {
      llvm::Value* e = b_.CreateIntrinsic(llvm::Intrinsic::exp, {ty}, {b_.CreateFNeg(a[0])});
      return b_.CreateFDiv(one(), b_.CreateFAdd(one(), e));
    }
    case O::isnan: return b_.CreateFCmpUNO(a[0], a[0]);
    case O::isinf: {
      llvm::Value* m = b_.CreateIntrinsic(llvm::Intrinsic::fabs, {ty}, {a[0]});
      return b_.CreateFCmpOEQ(m, llvm::ConstantFP::getInfinity(ty));
    }
    default: return libm_call(op->op, t, a);
  }
}

// ir::CallOp's bitwise ops; shift amounts outside [0, bits) never reach shl/lshr/ashr (whose
// result would be poison): they give 0, or the sign bits for a signed right shift.
llvm::Value* LlvmEmitter::bitwise(ir::CallOp op, DataType t, const std::vector<llvm::Value*>& a) {
  using O = ir::CallOp;
  switch (op) {
    case O::bitwise_and: return b_.CreateAnd(a[0], a[1]);
    case O::bitwise_or: return b_.CreateOr(a[0], a[1]);
    case O::bitwise_xor: return b_.CreateXor(a[0], a[1]);
    case O::bitwise_not: return b_.CreateNot(a[0]);
    default: break;
  }
  llvm::Type* ty = a[0]->getType();
  llvm::Value* zero = llvm::Constant::getNullValue(ty);
  llvm::Value* in_range = b_.CreateICmpULT(a[1], llvm::ConstantInt::get(ty, uint64_t(t.bits)));
  if (op == O::shift_right && is_signed(t))
    return b_.CreateAShr(a[0], b_.CreateSelect(in_range, a[1], llvm::ConstantInt::get(ty, uint64_t(t.bits - 1))));
  llvm::Value* amount = b_.CreateSelect(in_range, a[1], zero);
  llvm::Value* r = op == O::shift_left ? b_.CreateShl(a[0], amount) : b_.CreateLShr(a[0], amount);
  return b_.CreateSelect(in_range, r, zero);
}

// The C math library function in the argument's precision (tanhf for float32), lane by
// lane for vectors; the JIT resolves it from the process.
llvm::Value* LlvmEmitter::libm_call(ir::CallOp op, DataType t, const std::vector<llvm::Value*>& a) {
  llvm::Type* s = scalar_type(t.element_of());
  std::string name = std::string(ir::call_op_name(op)) + (t.bits == 32 ? "f" : "");
  std::vector<llvm::Type*> params(a.size(), s);
  llvm::FunctionCallee f = mod_.getOrInsertFunction(name, llvm::FunctionType::get(s, params, false));
  // nnvm never reads errno, so a libm call is a pure function to the optimizer: it may be
  // hoisted out of loops, merged with an equal call, or dropped when its result is unused.
  if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    fn->addFnAttr(llvm::Attribute::WillReturn);
    fn->setDoesNotAccessMemory();
  }
  if (t.is_scalar()) return b_.CreateCall(f, a);
  llvm::Value* out = llvm::UndefValue::get(a[0]->getType());
  for (int k = 0; k < t.lanes; ++k) {
    std::vector<llvm::Value*> lane;
    for (auto* x : a) lane.push_back(b_.CreateExtractElement(x, uint64_t(k)));
    out = b_.CreateInsertElement(out, b_.CreateCall(f, lane), uint64_t(k));
  }
  return out;
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
