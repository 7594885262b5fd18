// hard_sigmoid(X) = max(0, min(1, alpha * X + beta)) (attributes alpha 0.2, beta 0.5).
// ONNX HardSigmoid.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef hard_sigmoid_def() {
  return unary_def("hard_sigmoid", "onnx:HardSigmoid",
                   "max(0, min(1, alpha * X + beta)) (attributes alpha, default 0.2, and beta, default 0.5)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 0.2), beta = attrs.get_float("beta", 0.5);
                     return [alpha, beta](const ir::Expr& e) {
                       DataType t = e.dtype();
                       return ir::max(ir::make_zero(t), ir::min(ir::make_const(t, 1.0), e * alpha + beta));
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
