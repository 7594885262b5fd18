// quantize_linear: ONNX QuantizeLinear (opset 25). Y = saturate(round(X / y_scale) + y_zero_point),
// rounding half to even and saturating to the range of Y's integer type, with the scale and zero
// point per tensor, per axis or per block (quant_params.hpp). Y's type is the zero point's, else
// attribute output_dtype, else uint8: int8, uint8, int16, uint16, int4, uint4, int2, uint2, or a
// float8/float4 type, for which Y = X / y_scale + y_zero_point converted as Cast converts
// (rounding to nearest even; attribute `saturate`, default 1, clamps to the largest finite value).
// The division runs in attribute precision's type when given, else in float32 (float64 when X or
// the scale is float64). A NaN element quantizes to the lowest value of an integer Y's type, as
// the ONNX reference does.
#pragma once

#include "nnvm/ops/elementwise/dtypes.hpp"
#include "nnvm/ops/quant/quant_params.hpp"
#include "nnvm/ops/transform/cast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct QuantizeSpec {
  QuantLayout layout;
  std::optional<DataType> output_dtype;  // attribute output_dtype, when given
  std::optional<DataType> precision;     // attribute precision, when given
  bool saturate = true;                  // attribute saturate (float8/float4 Y only)
};

// QuantizeLinear's integer step before the conversion: round_half_even(quotient) + zero_point,
// saturated to the range of integer type `out`, NaN to the lowest value first, as a value of
// `quotient`'s float type (with `zero_point`, undefined: none). The result is an integer of
// `out`'s range and never -0 when a zero point is added, so converting it to `out` is exact.
// The rounded value is a Let: the NaN test and the clamp read it without computing it twice, and
// the select has no load on a side, so a vectorized epilogue stays vectorized (vectorize.hpp
// keeps a select that guards a load serial).
inline ir::Expr round_saturate_float(ir::Expr quotient, ir::Expr zero_point, DataType out) {
  DataType ct = quotient.dtype();
  ir::Expr lo = ir::cast(ct, ir::min_value(out)), hi = ir::cast(ct, ir::max_value(out));
  ir::Expr rounded = ir::call(ir::CallOp::round, quotient);
  if (zero_point.defined()) rounded = rounded + zero_point;
  ir::Var q("rounded", ct);
  return ir::Let::make(q, rounded, ir::min(ir::max(ir::select(ir::call(ir::CallOp::isnan, q), lo, q), lo), hi));
}

// The same, converted to `out`: QuantizeLinear's integer result.
inline ir::Expr round_saturate(ir::Expr quotient, ir::Expr zero_point, DataType out) {
  return ir::cast(out, round_saturate_float(std::move(quotient), std::move(zero_point), out));
}

// `zero_point` may be undefined (absent).
inline te::Tensor quantize_linear(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& zero_point,
                                  const QuantizeSpec& spec, std::string name = "quantize_linear") {
  for (auto [t, input] : {std::pair{x, "x"}, std::pair{scale, "y_scale"}})
    if (!t.dtype().is_float() || !t.dtype().is_scalar())
      throw UserError("nnvm.ops.input_dtype",
                      str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected a float type"),
                      {str_cat("input ", input)});
  DataType out = spec.output_dtype.value_or(dtype::uint8);
  if (zero_point.defined()) {
    if (spec.output_dtype && *spec.output_dtype != zero_point.dtype())
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute 'output_dtype' is ", *spec.output_dtype, " but input y_zero_point is ",
                              zero_point.dtype(), "; they must agree"),
                      {"attribute output_dtype"});
    out = zero_point.dtype();
  }
  if (!quant_integer(out, false) && !quant_narrow(out))
    throw UserError(zero_point.defined() ? "nnvm.ops.input_dtype" : "nnvm.ops.attr",
                    str_cat("quantizing to ", out, " is not supported; Y must be int8, uint8, int16, uint16, int4, uint4, ",
                            "int2, uint2 or a float8/float4 type other than float8e8m0"),
                    {zero_point.defined() ? "input y_zero_point" : "attribute output_dtype"});
  DataType prec = spec.precision.value_or(x.dtype() == dtype::float64 || scale.dtype() == dtype::float64
                                              ? dtype::float64 : dtype::float32);
  if (!prec.is_float())
    throw UserError("nnvm.ops.attr", str_cat("attribute 'precision' is ", prec, " but must be a float type"),
                    {"attribute precision"});
  check_quant_param(scale, "y_scale", x, spec.layout);
  if (zero_point.defined()) check_quant_param(zero_point, "y_zero_point", x, spec.layout);
  // float16/bfloat16 precision: round the operands and the quotient to it, divide in float32.
  DataType ct = arith_type(prec);
  auto in_prec = [&](ir::Expr e) { return prec.is_storage_only() ? ir::cast(ct, ir::cast(prec, ir::cast(ct, e))) : ir::cast(ct, e); };
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr q = in_prec(in_prec(x(std::vector<ir::Expr>(v.begin(), v.end()))) /
                             in_prec(read_quant_param(scale, spec.layout, v)));
        if (out.is_small_float()) {  // no rounding step: the conversion rounds
          if (zero_point.defined()) q = q + ir::cast(ct, read_quant_param(zero_point, spec.layout, v));
          if (q.dtype() != dtype::float32) q = ir::cast(dtype::float32, q);
          return cast_detail::to_small_float(q, out, CastSpec{.saturate = spec.saturate});
        }
        return round_saturate(q, zero_point.defined() ? ir::cast(ct, read_quant_param(zero_point, spec.layout, v)) : ir::Expr(),
                              out);
      },
      std::move(name));
}

inline OpDef quantize_linear_def() {
  return OpDef{
      .name = "quantize_linear",
      .importer_names = {"onnx:QuantizeLinear"},
      .input_names = {"x", "y_scale", "y_zero_point"},
      .optional_inputs = 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            QuantizeSpec spec;
            spec.layout = quant_layout(in[0], attrs);
            if (attrs.has("output_dtype")) spec.output_dtype = attrs.get_dtype("output_dtype");
            if (attrs.has("precision")) spec.precision = attrs.get_dtype("precision");
            spec.saturate = attrs.get_int("saturate", 1) != 0;
            te::Tensor zp = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{quantize_linear(in[0], in[1], zp, spec)};
          },
      .doc = "saturate(round_half_even(x / y_scale) + y_zero_point) to an integer type, or x / y_scale + y_zero_point "
             "converted to a float8/float4 type",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
