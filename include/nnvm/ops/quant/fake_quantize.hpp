// fake_quantize: DequantizeLinear(QuantizeLinear(x, y_scale, y_zero_point), x_scale,
// x_zero_point) with one scale and zero point each (per tensor), as one elementwise op:
//   y = (saturate(round_half_even(x / y_scale) + y_zero_point) - x_zero_point) * x_scale,
// the integer step in the zero points' type (int8, uint8, int16, uint16), the arithmetic in
// float32. Bit for bit what the two ONNX ops give.
//
// Quantized ONNX models in QDQ form (what ONNX Runtime's quantization tool, PyTorch's and
// TensorFlow's exporters write) put such a pair on every activation. As two injective ops with
// scale inputs the pair would stop a convolution's epilogue fusion and its blocked layout; this
// op, with its scalar parameters broadcast, fuses into the producer's epilogue like a ReLU
// (passes/quantized_pairs.hpp makes it from the pairs).
#pragma once

#include "nnvm/ops/quant/quantize_linear.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor fake_quantize(const te::Tensor& x, const te::Tensor& y_scale, const te::Tensor& y_zero_point,
                                const te::Tensor& x_scale, const te::Tensor& x_zero_point,
                                std::string name = "fake_quantize") {
  const std::pair<const te::Tensor*, const char*> params[] = {
      {&y_scale, "y_scale"}, {&y_zero_point, "y_zero_point"}, {&x_scale, "x_scale"}, {&x_zero_point, "x_zero_point"}};
  for (auto [t, input] : params)
    if (!t->defined() || !quant_detail::one_element(*t) || t->rank() > 1)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", input, " must be a scalar or a one-element 1-D tensor (fake_quantize is per tensor)"),
                      {str_cat("input ", input)});
  for (auto [t, input] : {std::pair{x, "x"}, std::pair{y_scale, "y_scale"}, std::pair{x_scale, "x_scale"}})
    if (t.dtype() != dtype::float32)
      throw UserError("nnvm.ops.input_dtype", str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected float32"),
                      {str_cat("input ", input)});
  DataType q = y_zero_point.dtype();
  if (!quant_integer(q, false))
    throw UserError("nnvm.ops.input_dtype", str_cat("input y_zero_point is ", q, ", expected int8, uint8, int16 or uint16"),
                    {"input y_zero_point"});
  check_same_dtype(y_zero_point, "y_zero_point", x_zero_point, "x_zero_point");
  const DataType f = dtype::float32;
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        // Every parameter is one element, so any layout reads its only value.
        auto first = [&](const te::Tensor& p) { return read_quant_param(p, QuantLayout{}, v); };
        // The integer step stays in float32: converting it to the integer type and back is
        // exact (an integer of that range, not -0 since the zero point was added), and vector
        // conversions between float and 8-bit integers cost more than the rest of the epilogue.
        ir::Expr quantized = round_saturate_float(x(std::vector<ir::Expr>(v.begin(), v.end())) / first(y_scale),
                                                  ir::cast(f, first(y_zero_point)), q);
        return (quantized - ir::cast(f, first(x_zero_point))) * first(x_scale);
      },
      std::move(name));
}

inline OpDef fake_quantize_def() {
  return OpDef{
      .name = "fake_quantize",
      .input_names = {"x", "y_scale", "y_zero_point", "x_scale", "x_zero_point"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            return std::vector<te::Tensor>{fake_quantize(in[0], in[1], in[2], in[3], in[4])};
          },
      .doc = "DequantizeLinear(QuantizeLinear(x)) per tensor, as one elementwise op: a QDQ pair on an activation",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
