// hard_swish(X) = X * max(0, min(1, X / 6 + 0.5)). ONNX HardSwish.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef hard_swish_def() {
  return unary_def("hard_swish", "onnx:HardSwish", "X * max(0, min(1, X / 6 + 0.5))", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) {
      DataType t = e.dtype();
      return e * ir::max(ir::make_zero(t), ir::min(ir::make_const(t, 1.0), e * (1.0 / 6.0) + 0.5));
    };
  });
}

}  // namespace ops
NNVM_END_NAMESPACE
