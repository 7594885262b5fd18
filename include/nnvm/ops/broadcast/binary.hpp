// The arithmetic broadcast ops (ONNX Add, Sub, Mul, Div, Pow, Min, Max): each one named
// definition over the shared broadcasting compute in broadcast.hpp. ONNX Min and Max take any
// number of inputs; these take two (an importer folds longer lists pairwise).
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef add_def() {
  return broadcast_binary_def("add", "onnx:Add", "A + B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a + b; });
}
inline OpDef div_def() {
  return broadcast_binary_def("div", "onnx:Div", "A / B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a / b; });
}
inline OpDef max_def() {
  return broadcast_binary_def("max", "onnx:Max", "max(A, B) with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return ir::max(a, b); });
}
inline OpDef min_def() {
  return broadcast_binary_def("min", "onnx:Min", "min(A, B) with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return ir::min(a, b); });
}
inline OpDef mul_def() {
  return broadcast_binary_def("mul", "onnx:Mul", "A * B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a * b; });
}
// Floats only: the exponent shares A's dtype (ONNX also allows a different one).
inline OpDef pow_def() {
  return broadcast_binary_def(
      "pow", "onnx:Pow", "A ^ B with broadcasting (floats)",
      [](const ir::Expr& a, const ir::Expr& b) { return ir::call(ir::CallOp::pow, a, b); }, /*float_only=*/true);
}
inline OpDef sub_def() {
  return broadcast_binary_def("sub", "onnx:Sub", "A - B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a - b; });
}

}  // namespace ops
NNVM_END_NAMESPACE
