// Quantization ops: conversions between float tensors and integer tensors with a scale and zero
// point (ONNX QuantizeLinear / DequantizeLinear), and the pair of them as one op.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/quant/dequantize_linear.hpp"
#include "nnvm/ops/quant/fake_quantize.hpp"
#include "nnvm/ops/quant/quantize_linear.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> quant_ops() {
  return {
      dequantize_linear_def(),
      fake_quantize_def(),
      quantize_linear_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
