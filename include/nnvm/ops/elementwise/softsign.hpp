// softsign(X) = X / (1 + |X|). ONNX Softsign.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef softsign_def() {
  return unary_def("softsign", "onnx:Softsign", "X / (1 + |X|)", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return e / (ir::call(ir::CallOp::abs, e) + 1.0); };
  });
}

}  // namespace ops
NNVM_END_NAMESPACE
