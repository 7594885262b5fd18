// softplus(X) = log(1 + e^X). ONNX Softplus.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Written as max(X, 0) + log1p(e^-|X|): the same value, but e^X cannot overflow for large X and
// small results keep their precision.
inline OpDef softplus_def() {
  return unary_def("softplus", "onnx:Softplus", "log(1 + e^X), elementwise, computed stably",
                   [](const Attrs&) -> ScalarFn {
                     return [](const ir::Expr& e) {
                       ir::Expr neg_abs = -ir::call(ir::CallOp::abs, e);
                       return ir::max(e, ir::make_zero(e.dtype())) +
                              ir::call(ir::CallOp::log1p, ir::call(ir::CallOp::exp, neg_abs));
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
