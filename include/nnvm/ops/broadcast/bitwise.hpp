// Bitwise ops on integers with broadcasting: ONNX BitwiseAnd, BitwiseOr, BitwiseXor, BitShift.
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef bitwise_and_def() {
  return broadcast_binary_def(
      "bitwise_and", "onnx:BitwiseAnd", "A & B for integers, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return ir::call(ir::CallOp::bitwise_and, a, b); }, DtypeKind::integer);
}
inline OpDef bitwise_or_def() {
  return broadcast_binary_def(
      "bitwise_or", "onnx:BitwiseOr", "A | B for integers, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return ir::call(ir::CallOp::bitwise_or, a, b); }, DtypeKind::integer);
}
inline OpDef bitwise_xor_def() {
  return broadcast_binary_def(
      "bitwise_xor", "onnx:BitwiseXor", "A ^ B for integers, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return ir::call(ir::CallOp::bitwise_xor, a, b); }, DtypeKind::integer);
}

// ONNX BitShift (attribute direction, "LEFT" or "RIGHT", required). ONNX defines it for unsigned
// integers; signed ones are accepted too and shift right arithmetically. An amount of the bit
// width or more gives 0 (all sign bits for a negative signed value shifted right) instead of C's
// undefined behavior (ir::CallOp::shift_left/shift_right).
inline OpDef bit_shift_def() {
  return OpDef{
      .name = "bit_shift",
      .importer_names = {"onnx:BitShift"},
      .input_names = {"X", "Y"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const std::string& dir = attrs.get_string("direction");
            if (dir != "LEFT" && dir != "RIGHT")
              throw UserError("nnvm.ops.attr",
                              str_cat("attribute 'direction' is '", dir, "' but must be LEFT or RIGHT"),
                              {"attribute direction"});
            ir::CallOp op = dir == "LEFT" ? ir::CallOp::shift_left : ir::CallOp::shift_right;
            check_same_dtypes(in, {"X", "Y"}, DtypeKind::integer);
            return std::vector<te::Tensor>{broadcast_map(
                in, {"X", "Y"}, [op](const std::vector<ir::Expr>& x) { return ir::call(op, x[0], x[1]); },
                "bit_shift")};
          },
      .doc = "X << Y or X >> Y (attribute direction LEFT or RIGHT) for integers, with broadcasting",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
