// shrink(X) = X + bias if X < -lambd, X - bias if X > lambd, else 0 (attributes bias, default 0,
// and lambd, default 0.5). ONNX Shrink; any number.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Integers compute in float64 and convert back, truncating, as ONNX's reference does (the
// comparison with a fractional lambd must not round lambd to an integer first).
inline OpDef shrink_def() {
  return unary_def(
      "shrink", "onnx:Shrink", "X + bias if X < -lambd, X - bias if X > lambd, else 0 (attributes bias 0, lambd 0.5)",
      [](const Attrs& attrs) -> ScalarFn {
        double bias = attrs.get_float("bias", 0.0), lambd = attrs.get_float("lambd", 0.5);
        return [bias, lambd](const ir::Expr& x) {
          DataType t = x.dtype();
          ir::Expr e = t.is_float() ? x : ir::cast(dtype::float64, x);
          ir::Expr r = ir::select(e < -lambd, e + bias, ir::select(e > lambd, e - bias, ir::make_zero(e.dtype())));
          return ir::cast(t, r);
        };
      },
      DtypeKind::number);
}

}  // namespace ops
NNVM_END_NAMESPACE
