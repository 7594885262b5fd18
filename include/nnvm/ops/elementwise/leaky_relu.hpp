// leaky_relu(X) = X for X >= 0, alpha * X otherwise (attribute alpha, default 0.01). ONNX LeakyRelu.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef leaky_relu_def() {
  return unary_def("leaky_relu", "onnx:LeakyRelu", "X if X >= 0 else alpha * X (attribute alpha, default 0.01)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 0.01);
                     return [alpha](const ir::Expr& e) {
                       return ir::select(e >= 0.0, e, e * alpha);
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
