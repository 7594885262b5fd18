// The arithmetic broadcast ops (ONNX Add, Sub, Mul, Div, Pow): each one named definition over
// the shared broadcasting compute in broadcast.hpp. Any number type; integer arithmetic wraps
// for types narrower than 32 bits and, as in C, int32/int64 overflow is undefined.
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// -a in the unsigned type of a's width, converted back: defined even for the most negative value.
inline ir::Expr wrapping_neg(const ir::Expr& a) {
  DataType u = DataType::uint(a.dtype().bits, a.dtype().lanes);
  return ir::cast(a.dtype(), ir::make_zero(u) - ir::cast(u, a));
}
}  // namespace detail

// Integer a / b truncated toward zero (C, ONNX Div), or a % b with the dividend's sign. Kernels
// cannot fail, so the cases C leaves undefined get values: a zero divisor gives 0 (as NumPy), and
// a signed divisor of -1 negates (wrapping: INT_MIN / -1 is INT_MIN) or gives remainder 0.
inline ir::Expr int_div_mod(const ir::Expr& a, const ir::Expr& b, bool mod) {
  DataType t = a.dtype();
  ir::Expr zero = ir::make_zero(t), one = ir::make_int_const(t, 1);
  ir::Expr is_zero = b == zero;
  if (!t.is_int()) {
    ir::Expr safe = ir::select(is_zero, one, b);
    return ir::select(is_zero, zero, mod ? a % safe : a / safe);
  }
  ir::Expr minus_one = b == ir::make_int_const(t, -1);
  ir::Expr safe = ir::select(is_zero || minus_one, one, b);
  ir::Expr special = mod ? zero : ir::select(is_zero, zero, detail::wrapping_neg(a));
  return ir::select(is_zero || minus_one, special, mod ? a % safe : a / safe);
}

inline OpDef add_def() {
  return broadcast_binary_def("add", "onnx:Add", "A + B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a + b; });
}
inline OpDef div_def() {
  return broadcast_binary_def("div", "onnx:Div", "A / B with broadcasting (integers truncate toward zero)",
                              [](const ir::Expr& a, const ir::Expr& b) {
                                return a.dtype().is_float() ? a / b : int_div_mod(a, b, /*mod=*/false);
                              });
}
inline OpDef mul_def() {
  return broadcast_binary_def("mul", "onnx:Mul", "A * B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a * b; });
}
inline OpDef sub_def() {
  return broadcast_binary_def("sub", "onnx:Sub", "A - B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a - b; });
}

// ONNX Pow: the exponent B may have another number type than the base A; the output has A's.
// The exponent converts to the base's arithmetic type; an integer base computes in float64 and
// converts back (exact while the result fits in 53 bits).
inline te::Tensor power(const te::Tensor& a, const te::Tensor& b, std::string name = "pow") {
  check_input_kind(a, "A", DtypeKind::number);
  check_input_kind(b, "B", DtypeKind::number);
  DataType t = a.dtype(), ct = t.is_float() ? arith_type(t) : dtype::float64;
  return broadcast_map(
      {a, b}, {"A", "B"},
      [&](const std::vector<ir::Expr>& x) {
        return ir::cast(t, ir::call(ir::CallOp::pow, ir::cast(ct, x[0]), ir::cast(ct, x[1])));
      },
      std::move(name));
}

inline OpDef pow_def() {
  return OpDef{
      .name = "pow",
      .importer_names = {"onnx:Pow"},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute = [](const std::vector<te::Tensor>& in,
                    const Attrs&) { return std::vector<te::Tensor>{power(in[0], in[1])}; },
      .doc = "A ^ B with broadcasting; B may have another number type, the output has A's",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
