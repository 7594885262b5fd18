// swish(X) = X * sigmoid(alpha * X), ONNX Swish (opset 24); alpha = 1 is SiLU.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef swish_def() {
  return unary_def("swish", "onnx:Swish", "X * sigmoid(alpha * X) (attribute alpha, default 1; SiLU at 1)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.0);
                     return [alpha](const ir::Expr& e) {
                       ir::Expr scaled = alpha == 1.0 ? e : e * alpha;
                       return e * ir::call(ir::CallOp::sigmoid, scaled);
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
