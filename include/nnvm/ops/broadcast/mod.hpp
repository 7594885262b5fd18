// ONNX Mod with broadcasting. Attribute fmod: 0 (default) gives the remainder with the sign of
// the divisor (Python's %, NumPy's mod), 1 the remainder with the sign of the dividend (C's fmod
// and integer %). Any number type.
#pragma once

#include "nnvm/ops/broadcast/binary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// ONNX requires fmod=1 for floats; fmod=0 on floats is taken as NumPy's mod rather than refused.
// A zero integer divisor gives 0 (int_div_mod).
inline ir::Expr mod_expr(const ir::Expr& a, const ir::Expr& b, bool c_fmod) {
  DataType t = a.dtype();
  ir::Expr r = t.is_float() ? ir::call(ir::CallOp::fmod, a, b) : int_div_mod(a, b, /*mod=*/true);
  if (c_fmod || t.is_uint()) return r;
  // A non-zero remainder whose sign differs from the divisor's moves by one divisor.
  ir::Expr zero = ir::make_zero(t);
  return ir::select(r != zero && ((r < zero) != (b < zero)), r + b, r);
}

inline OpDef mod_def() {
  return OpDef{
      .name = "mod",
      .importer_names = {"onnx:Mod"},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            int64_t fmod = attrs.get_int("fmod", 0);
            if (fmod != 0 && fmod != 1)
              throw UserError("nnvm.ops.attr", str_cat("attribute 'fmod' is ", fmod, " but must be 0 or 1"),
                              {"attribute fmod"});
            return std::vector<te::Tensor>{broadcast_binary(
                in[0], in[1], [fmod](const ir::Expr& a, const ir::Expr& b) { return mod_expr(a, b, fmod == 1); },
                DtypeKind::number, "mod")};
          },
      .doc = "A mod B with broadcasting; attribute fmod 0: sign of B (Python), 1: sign of A (C fmod)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
