// LLVM types of nnvm dtypes, constants, and casts (interp/value.hpp: cast_lane), including the
// float16/bfloat16 storage types' conversions.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include "kernel_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

llvm::Type* LlvmEmitter::scalar_type(DataType t) {
  switch (t.code) {
    case DataType::Code::Bool: return b_.getInt1Ty();
    case DataType::Code::Int:
    case DataType::Code::UInt: return b_.getIntNTy(t.bits);
    case DataType::Code::Float:
      if (t.bits == 32) return b_.getFloatTy();
      if (t.bits == 64) return b_.getDoubleTy();
      if (t.bits == 16) return b_.getInt16Ty();
      break;
    case DataType::Code::BFloat:
      if (t.bits == 16) return b_.getInt16Ty();
      break;
    case DataType::Code::Handle: break;
    default: return b_.getInt8Ty();  // the float8/float4 types: their bits
  }
  throw BackendError("nnvm.codegen.llvm.dtype", str_cat("the LLVM back end cannot represent ", t), context());
}

llvm::Type* LlvmEmitter::reg_type(DataType t) {
  llvm::Type* s = scalar_type(t.element_of());
  return t.is_vector() ? llvm::FixedVectorType::get(s, t.lanes) : s;
}

// The in-memory element type: bool is a byte.
llvm::Type* LlvmEmitter::mem_elem(DataType t) {
  return t.is_bool() || t.is_sub_byte_int() ? b_.getInt8Ty() : scalar_type(t.element_of());
}

llvm::Type* LlvmEmitter::mem_type(DataType t) {
  llvm::Type* s = mem_elem(t);
  return t.is_vector() ? llvm::FixedVectorType::get(s, t.lanes) : s;
}

llvm::Align LlvmEmitter::elem_align(DataType t) { return llvm::Align(uint64_t(t.bytes())); }

llvm::Value* LlvmEmitter::splat_if(DataType t, llvm::Value* v) {
  return t.is_vector() && !v->getType()->isVectorTy() ? b_.CreateVectorSplat(t.lanes, v) : v;
}

llvm::Value* LlvmEmitter::constant(DataType t, const ir::ExprNode* n) {
  llvm::Type* s = scalar_type(t.element_of());
  llvm::Value* c = nullptr;
  if (n->kind == ir::ExprKind::IntImm) {
    int64_t v = static_cast<const ir::IntImm*>(n)->value;
    c = t.is_float() ? float_constant(t, double(v)) : llvm::ConstantInt::get(s, t.is_bool() ? uint64_t(v != 0) : uint64_t(v), true);
  } else if (n->kind == ir::ExprKind::UIntImm) {
    uint64_t v = static_cast<const ir::UIntImm*>(n)->value;
    c = t.is_float() ? float_constant(t, double(v)) : llvm::ConstantInt::get(s, t.is_bool() ? uint64_t(v != 0) : v);
  } else {
    double v = static_cast<const ir::FloatImm*>(n)->value;
    c = t.is_float() ? float_constant(t, v) : llvm::ConstantInt::get(s, uint64_t(int64_t(v)), true);
  }
  return splat_if(t, c);
}

llvm::Value* LlvmEmitter::float_constant(DataType t, double v) {
  if (t.is_small_float()) return b_.getInt8(uint8_t(storage_encode(t, float(v))));
  if (is_f16(t)) return b_.getInt16(float16::from_float(float(v)));
  if (is_bf16(t)) return b_.getInt16(bfloat16::from_float(float(v)));
  return llvm::ConstantFP::get(scalar_type(t.element_of()), t.bits == 32 ? double(float(v)) : v);
}

llvm::Value* LlvmEmitter::cast(llvm::Value* v, DataType from, DataType to) {
  to = to.with_lanes(from.lanes);
  if (from == to) return v;
  int lanes = from.lanes;
  auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
  DataType f32 = dtype::float32.with_lanes(lanes);
  // int4/int2 are plain i4/i2 integers in registers; the float storage types go through float32.
  if (from.is_storage_only() && from.is_float()) return cast(storage_to_f32(v, from), f32, to);
  if (to.is_storage_only() && to.is_float()) {
    llvm::Value* x = cast(v, from, f32);
    if (to.is_small_float()) return f32_to_small_float(x, to);
    return is_bf16(to) ? f32_to_bf16(x, lanes) : f32_to_f16(x, lanes);
  }
  llvm::Type* tt = reg_type(to);
  if (to.is_bool()) {
    if (from.is_float()) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (from.is_float() && to.is_float()) return b_.CreateFPCast(v, tt);
  if (!from.is_float() && to.is_float()) return is_signed(from) ? b_.CreateSIToFP(v, tt) : b_.CreateUIToFP(v, tt);
  if (!from.is_float()) return b_.CreateIntCast(v, tt, is_signed(from));
  // Float to integer saturates to int64 (NaN gives 0) and wraps to the target's width, which
  // agrees with C wherever C is defined (the interpreter's rule).
  if (lanes > 1 && to.bits <= 32) return b_.CreateTrunc(float_vector_to_low32(v, lanes), tt);
  llvm::Type* i64 = vec(b_.getInt64Ty());
  llvm::Value* r = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {i64, v->getType()}, {v});
  if (to.is_uint() && to.bits == 64) {
    llvm::Value* u = b_.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {i64, v->getType()}, {v});
    r = b_.CreateSelect(b_.CreateFCmpOGE(v, llvm::Constant::getNullValue(v->getType())), u, r);
  }
  return to.bits == 64 ? r : b_.CreateTrunc(r, tt);
}

// The low 32 bits of float vector `v` saturated to int64 (NaN: 0), in vector instructions. LLVM
// expands fptosi.sat to <N x i64> one lane at a time on x86 (a compare, a scalar conversion and
// two cmovs per lane), which made an int8 model's requantizing epilogues cost more than their
// convolutions. When every lane is a number inside int32 (the usual case) one vector conversion
// gives the answer; otherwise t = trunc(v) is an integer, |t| mod 2^32 is exact in floating
// point (its bits are |t|'s own below 2^32), and so is moving it into [-2^31, 2^31), where a
// plain conversion is defined; negating in i32 then gives t's low bits. t >= 2^63 saturates to
// INT64_MAX, whose low bits are all ones; t <= -2^63 to INT64_MIN, whose low bits, like those
// of |t| mod 2^32 there, are 0.
llvm::Value* LlvmEmitter::float_vector_to_low32(llvm::Value* v, int lanes) {
  llvm::Type* ft = v->getType();
  llvm::Type* i32 = llvm::FixedVectorType::get(b_.getInt32Ty(), lanes);
  auto c = [&](double x) { return llvm::ConstantFP::get(ft, x); };
  auto* fast_bb = llvm::BasicBlock::Create(ctx_, "cvt.fast", func_);
  auto* slow_bb = llvm::BasicBlock::Create(ctx_, "cvt.wide", func_);
  auto* merge = llvm::BasicBlock::Create(ctx_, "cvt.end", func_);
  llvm::Value* abs = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
  // False for NaN lanes: they take the slow path.
  llvm::Value* in_range = b_.CreateAndReduce(b_.CreateFCmpOLT(abs, c(0x1p31)));
  b_.CreateCondBr(in_range, fast_bb, slow_bb);

  b_.SetInsertPoint(fast_bb);
  llvm::Value* fast = b_.CreateFPToSI(v, i32);
  b_.CreateBr(merge);

  b_.SetInsertPoint(slow_bb);
  llvm::Value* t = b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, v);
  t = b_.CreateSelect(b_.CreateFCmpUNO(t, t), c(0), t);
  // min(|t|, 2^63): -inf and everything past -2^63 have low bits 0.
  llvm::Value* a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, t);
  a = b_.CreateSelect(b_.CreateFCmpOLT(a, c(0x1p63)), a, c(0x1p63));
  llvm::Value* wraps = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFMul(a, c(0x1p-32)));
  llvm::Value* low = b_.CreateFSub(a, b_.CreateFMul(wraps, c(0x1p32)));  // [0, 2^32)
  low = b_.CreateSelect(b_.CreateFCmpOGE(low, c(0x1p31)), b_.CreateFSub(low, c(0x1p32)), low);
  llvm::Value* bits = b_.CreateFPToSI(low, i32);
  bits = b_.CreateSelect(b_.CreateFCmpOLT(t, c(0)), b_.CreateNeg(bits), bits);
  llvm::Value* slow = b_.CreateSelect(b_.CreateFCmpOGE(t, c(0x1p63)), llvm::Constant::getAllOnesValue(i32), bits);
  llvm::BasicBlock* slow_end = b_.GetInsertBlock();
  b_.CreateBr(merge);

  b_.SetInsertPoint(merge);
  auto* phi = b_.CreatePHI(i32, 2);
  phi->addIncoming(fast, fast_bb);
  phi->addIncoming(slow, slow_end);
  return phi;
}

llvm::Value* LlvmEmitter::storage_to_f32(llvm::Value* bits, DataType from) {
  int lanes = from.lanes;
  auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
  if (from.is_small_float()) return small_float_to_f32(bits, from);
  if (is_f16(from)) return b_.CreateFPExt(b_.CreateBitCast(bits, vec(b_.getHalfTy())), vec(b_.getFloatTy()));
  llvm::Value* w = b_.CreateShl(b_.CreateZExt(bits, vec(b_.getInt32Ty())), splat(lanes, b_.getInt32(16)));
  return b_.CreateBitCast(w, vec(b_.getFloatTy()));
}

llvm::Value* LlvmEmitter::splat(int lanes, llvm::Constant* c) { return lanes > 1 ? b_.CreateVectorSplat(lanes, c) : c; }

// Round to nearest even; NaN becomes a quiet NaN with its sign (float16::from_float).
llvm::Value* LlvmEmitter::f32_to_f16(llvm::Value* x, int lanes) {
  auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
  llvm::Value* h = b_.CreateBitCast(b_.CreateFPTrunc(x, vec(b_.getHalfTy())), vec(b_.getInt16Ty()));
  llvm::Value* u = b_.CreateBitCast(x, vec(b_.getInt32Ty()));
  llvm::Value* sign = b_.CreateTrunc(b_.CreateAnd(b_.CreateLShr(u, splat(lanes, b_.getInt32(16))),
                                                  splat(lanes, b_.getInt32(0x8000))),
                                     vec(b_.getInt16Ty()));
  llvm::Value* nan = b_.CreateOr(sign, splat(lanes, b_.getInt16(0x7e00)));
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), nan, h);
}

// bfloat16::from_float in integer arithmetic.
llvm::Value* LlvmEmitter::f32_to_bf16(llvm::Value* x, int lanes) {
  auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
  auto c32 = [&](uint32_t v) { return splat(lanes, b_.getInt32(v)); };
  llvm::Value* u = b_.CreateBitCast(x, vec(b_.getInt32Ty()));
  llvm::Value* hi = b_.CreateLShr(u, c32(16));
  llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(u, c32(0x7fffffffu)), c32(0x7f800000u));
  llvm::Value* nan = b_.CreateOr(hi, c32(0x40));
  llvm::Value* rounded =
      b_.CreateLShr(b_.CreateAdd(u, b_.CreateAdd(c32(0x7fffu), b_.CreateAnd(hi, c32(1)))), c32(16));
  return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), vec(b_.getInt16Ty()));
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
