// The float8/float4 storage types' conversions from and to float32 in LLVM IR: the steps of
// SmallFloatFormat::decode/encode and small_float::e8m0_* (ir/small_float.hpp) in integer
// arithmetic on float32's bits, branch-free (selects), so scalars and vectors share the code.
#include "kernel_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

llvm::Value* LlvmEmitter::small_float_to_f32(llvm::Value* bits, DataType from) {
  int lanes = from.lanes;
  auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
  auto c32 = [&](uint32_t v) { return splat(lanes, b_.getInt32(v)); };
  auto as_float = [&](llvm::Value* u) { return b_.CreateBitCast(u, vec(b_.getFloatTy())); };
  llvm::Value* c = b_.CreateZExt(bits, vec(b_.getInt32Ty()));
  const SmallFloatFormat* f = small_float_format(from);
  if (!f) {  // FLOAT8E8M0
    llvm::Value* out = b_.CreateSelect(b_.CreateICmpEQ(c, c32(0)), c32(0x00400000u), b_.CreateShl(c, c32(23)));
    return as_float(b_.CreateSelect(b_.CreateICmpEQ(c, c32(0xffu)), c32(0x7fc00000u), out));
  }
  uint32_t mag_mask = f->sign_bit() - 1u, man_mask = (1u << f->man_bits) - 1u;
  llvm::Value* mag = b_.CreateAnd(c, c32(mag_mask));
  llvm::Value* e = b_.CreateLShr(mag, c32(uint32_t(f->man_bits)));
  llvm::Value* m = b_.CreateAnd(mag, c32(man_mask));
  llvm::Value* sign = b_.CreateShl(b_.CreateAnd(c, c32(f->sign_bit())), c32(uint32_t(31 - f->exp_bits - f->man_bits)));
  llvm::Value* normal = b_.CreateOr(b_.CreateOr(b_.CreateShl(b_.CreateAdd(e, c32(uint32_t(127 - f->bias))), c32(23)),
                                                b_.CreateShl(m, c32(uint32_t(23 - f->man_bits)))),
                                    sign);
  // Subnormals: m * 2^(1 - bias - man_bits), exact in float32, then the sign.
  llvm::Value* scale = splat(lanes, llvm::ConstantFP::get(b_.getFloatTy(), double(std::ldexp(1.0f, 1 - f->bias - f->man_bits))));
  llvm::Value* sub = b_.CreateOr(b_.CreateBitCast(b_.CreateFMul(b_.CreateUIToFP(m, vec(b_.getFloatTy())), scale), vec(b_.getInt32Ty())), sign);
  llvm::Value* out = b_.CreateSelect(b_.CreateICmpEQ(e, c32(0)), sub, normal);
  if (f->has_inf())
    out = b_.CreateSelect(b_.CreateICmpEQ(mag, c32(f->exp_all_ones() << f->man_bits)), b_.CreateOr(c32(0x7f800000u), sign), out);
  llvm::Value* is_nan = nullptr;
  switch (f->nan) {
    case SmallFloatFormat::Nan::ieee:
      is_nan = b_.CreateAnd(b_.CreateICmpEQ(e, c32(f->exp_all_ones())), b_.CreateICmpNE(m, c32(0)));
      break;
    case SmallFloatFormat::Nan::all_ones: is_nan = b_.CreateICmpEQ(mag, c32(mag_mask)); break;
    case SmallFloatFormat::Nan::neg_zero: is_nan = b_.CreateICmpEQ(c, c32(f->sign_bit())); break;
    case SmallFloatFormat::Nan::none: break;
  }
  if (is_nan) out = b_.CreateSelect(is_nan, b_.CreateOr(c32(0x7fc00000u), sign), out);
  return as_float(out);
}

llvm::Value* LlvmEmitter::f32_to_small_float(llvm::Value* x, DataType to) {
  int lanes = to.lanes;
  auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
  auto c32 = [&](uint32_t v) { return splat(lanes, b_.getInt32(v)); };
  llvm::Value* u = b_.CreateBitCast(x, vec(b_.getInt32Ty()));
  llvm::Type* i8 = vec(b_.getInt8Ty());
  const SmallFloatFormat* f = small_float_format(to);
  if (!f) {  // FLOAT8E8M0: NaN for NaN, infinity and negative numbers (not -0); ties round up
    llvm::Value* e = b_.CreateAnd(b_.CreateLShr(u, c32(23)), c32(0xffu));
    llvm::Value* code = b_.CreateAdd(e, b_.CreateZExt(b_.CreateICmpNE(b_.CreateAnd(u, c32(0x400000u)), c32(0)), vec(b_.getInt32Ty())));
    code = b_.CreateSelect(b_.CreateICmpUGT(code, c32(0xfeu)), c32(0xffu), code);
    code = b_.CreateSelect(b_.CreateICmpEQ(e, c32(0)), c32(0), code);
    llvm::Value* nan = b_.CreateAnd(b_.CreateICmpUGT(u, c32(0x7f800000u)), b_.CreateICmpNE(u, c32(0x80000000u)));
    return b_.CreateTrunc(b_.CreateSelect(nan, c32(0xffu), code), i8);
  }
  llvm::Value* negative = b_.CreateICmpNE(b_.CreateLShr(u, c32(31)), c32(0));
  auto by_sign = [&](uint32_t (SmallFloatFormat::*code)(uint32_t) const) {
    return b_.CreateSelect(negative, c32((f->*code)(1)), c32((f->*code)(0)));
  };
  llvm::Value* a = b_.CreateAnd(u, c32(0x7fffffffu));
  llvm::Value* e32 = b_.CreateLShr(a, c32(23));
  llvm::Value* sig = b_.CreateOr(b_.CreateAnd(a, c32(0x7fffffu)), c32(0x800000u));
  llvm::Value* te = b_.CreateSub(e32, c32(uint32_t(127 - f->bias)));  // signed: may be <= 0
  llvm::Value* subnormal = b_.CreateICmpSLT(te, c32(1));
  llvm::Value* shift = b_.CreateAdd(c32(uint32_t(23 - f->man_bits)), b_.CreateSelect(subnormal, b_.CreateSub(c32(1), te), c32(0)));
  // Past 25 every bit is shifted out anyway; the clamp keeps LLVM's shifts defined.
  shift = b_.CreateSelect(b_.CreateICmpSGT(shift, c32(25)), c32(25), shift);
  llvm::Value* q = b_.CreateLShr(sig, shift);
  llvm::Value* rem = b_.CreateAnd(sig, b_.CreateSub(b_.CreateShl(c32(1), shift), c32(1)));
  llvm::Value* half = b_.CreateShl(c32(1), b_.CreateSub(shift, c32(1)));
  llvm::Value* mag = b_.CreateAdd(b_.CreateSelect(subnormal, c32(0), b_.CreateShl(b_.CreateSub(te, c32(1)), c32(uint32_t(f->man_bits)))), q);
  llvm::Value* up = b_.CreateOr(b_.CreateICmpUGT(rem, half),
                                b_.CreateAnd(b_.CreateICmpEQ(rem, half), b_.CreateICmpNE(b_.CreateAnd(mag, c32(1)), c32(0))));
  mag = b_.CreateAdd(mag, b_.CreateZExt(up, vec(b_.getInt32Ty())));
  llvm::Value* zero = by_sign(&SmallFloatFormat::zero_code);
  llvm::Value* overflow = by_sign(&SmallFloatFormat::overflow_code);
  llvm::Value* out = b_.CreateOr(b_.CreateSelect(negative, c32(f->sign_bit()), c32(0)), mag);
  out = b_.CreateSelect(b_.CreateICmpEQ(mag, c32(0)), zero, out);
  out = b_.CreateSelect(b_.CreateICmpUGT(mag, c32(f->max_mag)), overflow, out);
  out = b_.CreateSelect(b_.CreateICmpEQ(e32, c32(0)), zero, out);  // float32 zero and subnormals
  out = b_.CreateSelect(b_.CreateICmpEQ(a, c32(0x7f800000u)), overflow, out);
  out = b_.CreateSelect(b_.CreateICmpUGT(a, c32(0x7f800000u)), by_sign(&SmallFloatFormat::nan_code), out);
  return b_.CreateTrunc(out, i8);
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
