// dequantize_linear: ONNX DequantizeLinear (opset 25). Y = (X - x_zero_point) * x_scale, with the
// scale and zero point per tensor, per axis or per block (quant_params.hpp). X is int8, uint8,
// int16, uint16, int32, int4, uint4, int2, uint2 or a float8/float4 type, and the zero point
// (default 0) has X's type. Y has the type of attribute output_dtype when given, else x_scale's;
// float16/bfloat16 are stored, the arithmetic runs in float32 (float64 when the scale or output
// is float64).
#pragma once

#include "nnvm/ops/quant/quant_params.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// `zero_point` may be undefined (absent).
inline te::Tensor dequantize_linear(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& zero_point,
                                    const QuantLayout& layout, std::optional<DataType> output_dtype = std::nullopt,
                                    std::string name = "dequantize_linear") {
  if (!quant_integer(x.dtype(), true) && !quant_narrow(x.dtype()))
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input x (tensor ", x.name(), ") is ", x.dtype(),
                            ", expected int8, uint8, int16, uint16, int32, a 4- or 2-bit integer or a float8/float4 type"),
                    {"input x"});
  DataType st = scale.dtype();
  if (!st.is_float() || !st.is_scalar())
    throw UserError("nnvm.ops.input_dtype", str_cat("input x_scale (tensor ", scale.name(), ") is ", st, ", expected a float type"),
                    {"input x_scale"});
  DataType out = output_dtype.value_or(st);
  if (!out.is_float())
    throw UserError("nnvm.ops.attr", str_cat("attribute 'output_dtype' is ", out, " but must be a float type"),
                    {"attribute output_dtype"});
  check_quant_param(scale, "x_scale", x, layout);
  if (zero_point.defined()) {
    check_same_dtype(x, "x", zero_point, "x_zero_point");
    check_quant_param(zero_point, "x_zero_point", x, layout);
  }
  DataType ct = st == dtype::float64 || out == dtype::float64 ? dtype::float64 : dtype::float32;
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr q = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        if (zero_point.defined()) q = q - ir::cast(ct, read_quant_param(zero_point, layout, v));
        ir::Expr y = q * ir::cast(ct, read_quant_param(scale, layout, v));
        return out.is_storage_only() && ct != dtype::float32 ? ir::cast(out, ir::cast(dtype::float32, y)) : ir::cast(out, y);
      },
      std::move(name));
}

inline OpDef dequantize_linear_def() {
  return OpDef{
      .name = "dequantize_linear",
      .importer_names = {"onnx:DequantizeLinear"},
      .input_names = {"x", "x_scale", "x_zero_point"},
      .optional_inputs = 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::optional<DataType> out;
            if (attrs.has("output_dtype")) out = attrs.get_dtype("output_dtype");
            te::Tensor zp = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{dequantize_linear(in[0], in[1], zp, quant_layout(in[0], attrs), out)};
          },
      .doc = "(x - x_zero_point) * x_scale, per tensor, per axis or per block",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
