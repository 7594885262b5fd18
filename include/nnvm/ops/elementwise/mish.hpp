// mish(X) = X * tanh(softplus(X)). ONNX Mish.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// softplus as in softplus.hpp: max(X, 0) + log1p(e^-|X|), which cannot overflow.
inline OpDef mish_def() {
  return unary_def("mish", "onnx:Mish", "X * tanh(log(1 + e^X))", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) {
      ir::Expr sp = ir::max(e, ir::make_zero(e.dtype())) +
                    ir::call(ir::CallOp::log1p, ir::call(ir::CallOp::exp, -ir::call(ir::CallOp::abs, e)));
      return e * ir::call(ir::CallOp::tanh, sp);
    };
  });
}

}  // namespace ops
NNVM_END_NAMESPACE
