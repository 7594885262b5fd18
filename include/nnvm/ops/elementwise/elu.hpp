// The exponential linear units: ONNX Elu, Selu and Celu. Each is X for X > 0 and a scaled
// e^X - 1 below (expm1, which keeps small negative inputs precise).
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// elu(X) = X if X > 0 else alpha * (e^X - 1); attribute alpha, default 1.
inline OpDef elu_def() {
  return unary_def("elu", "onnx:Elu", "X if X > 0 else alpha * (e^X - 1) (attribute alpha, default 1)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.0);
                     return [alpha](const ir::Expr& e) {
                       return ir::select(e > 0.0, e, ir::call(ir::CallOp::expm1, e) * alpha);
                     };
                   });
}

// selu(X) = gamma * (X if X > 0 else alpha * (e^X - 1)); ONNX's defaults are float32 constants.
inline OpDef selu_def() {
  return unary_def("selu", "onnx:Selu",
                   "gamma * (X if X > 0 else alpha * (e^X - 1)) (attributes alpha ~1.6733, gamma ~1.0507)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.67326319217681884765625);
                     double gamma = attrs.get_float("gamma", 1.05070102214813232421875);
                     return [alpha, gamma](const ir::Expr& e) {
                       return ir::select(e > 0.0, e * gamma, ir::call(ir::CallOp::expm1, e) * (alpha * gamma));
                     };
                   });
}

// celu(X) = max(0, X) + min(0, alpha * (e^(X / alpha) - 1)); attribute alpha, default 1.
inline OpDef celu_def() {
  return unary_def("celu", "onnx:Celu", "max(0, X) + min(0, alpha * (e^(X / alpha) - 1)) (attribute alpha, default 1)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.0);
                     if (alpha == 0.0)
                       throw UserError("nnvm.ops.attr", "attribute 'alpha' must not be 0 (Celu divides by it)",
                                       {"attribute alpha"});
                     return [alpha](const ir::Expr& e) {
                       ir::Expr zero = ir::make_zero(e.dtype());
                       return ir::max(zero, e) + ir::min(zero, ir::call(ir::CallOp::expm1, e * (1.0 / alpha)) * alpha);
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
