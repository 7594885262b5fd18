// Elementwise negation of bools and integers: ONNX Not (logical) and BitwiseNot.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef not_def() {
  return unary_def(
      "not", "onnx:Not", "logical not of a bool X",
      [](const Attrs&) -> ScalarFn { return [](const ir::Expr& e) { return !e; }; }, DtypeKind::boolean);
}

inline OpDef bitwise_not_def() {
  return unary_def(
      "bitwise_not", "onnx:BitwiseNot", "~X for an integer X",
      [](const Attrs&) -> ScalarFn { return [](const ir::Expr& e) { return ir::call(ir::CallOp::bitwise_not, e); }; },
      DtypeKind::integer);
}

}  // namespace ops
NNVM_END_NAMESPACE
