// sign(X) = -1, 0 or 1 by the sign of X, in X's dtype (ONNX Sign). Any number; NaN stays NaN.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef sign_def() {
  return unary_def(
      "sign", "onnx:Sign", "-1, 0 or 1 by the sign of X (any number; NaN stays NaN)",
      [](const Attrs&) -> ScalarFn {
        return [](const ir::Expr& e) {
          DataType t = e.dtype();
          ir::Expr zero = ir::make_zero(t), one = ir::make_const(t, 1.0);
          if (t.is_uint()) return ir::select(e > zero, one, zero);
          ir::Expr rest = t.is_float() ? ir::select(e != e, e, zero) : zero;
          return ir::select(e > zero, one, ir::select(e < zero, ir::make_const(t, -1.0), rest));
        };
      },
      DtypeKind::number);
}

}  // namespace ops
NNVM_END_NAMESPACE
