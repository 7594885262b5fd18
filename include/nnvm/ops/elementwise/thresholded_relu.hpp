// thresholded_relu(X) = X if X > alpha else 0 (attribute alpha, default 1). ONNX ThresholdedRelu.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef thresholded_relu_def() {
  return unary_def("thresholded_relu", "onnx:ThresholdedRelu", "X if X > alpha else 0 (attribute alpha, default 1)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.0);
                     return [alpha](const ir::Expr& e) { return ir::select(e > alpha, e, ir::make_zero(e.dtype())); };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
