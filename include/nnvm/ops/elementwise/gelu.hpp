// gelu(X) = 0.5 * X * (1 + erf(X / sqrt(2))). ONNX Gelu (opset 20): attribute approximate
// "none" (default) or "tanh", which uses 0.5 * X * (1 + tanh(sqrt(2/pi) * (X + 0.044715 X^3))).
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef gelu_def() {
  return unary_def("gelu", "onnx:Gelu", "0.5 * X * (1 + erf(X / sqrt(2))) (attribute approximate: none or tanh)",
                   [](const Attrs& attrs) -> ScalarFn {
                     std::string approximate = attrs.get_string("approximate", "none");
                     if (approximate == "tanh")
                       return [](const ir::Expr& e) {
                         ir::Expr inner = (e + e * e * e * 0.044715) * 0.7978845608028654;  // sqrt(2/pi)
                         return e * 0.5 * (ir::call(ir::CallOp::tanh, inner) + 1.0);
                       };
                     if (approximate != "none")
                       throw UserError("nnvm.ops.attr",
                                       str_cat("attribute 'approximate' is '", approximate, "' but must be none or tanh"),
                                       {"attribute approximate"});
                     return [](const ir::Expr& e) {
                       return e * 0.5 * (ir::call(ir::CallOp::erf, e * 0.7071067811865476) + 1.0);  // 1/sqrt(2)
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
