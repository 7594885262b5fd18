// relu(X) = max(X, 0), elementwise. ONNX Relu.
#pragma once

#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Any numeric dtype; float16/bfloat16 (storage types) compute in float32 and round back.
inline te::Tensor relu(const te::Tensor& x, std::string name = "relu") {
  DataType t = x.dtype();
  if (t.is_bool() || t.is_handle())
    throw UserError("nnvm.ops.input_dtype", str_cat("input X (tensor ", x.name(), ") is ", t, ", expected a number"),
                    {"input X"});
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(std::vector<ir::Expr>(v.begin(), v.end()));
        if (!t.is_storage_only()) return ir::max(e, ir::make_zero(t));
        return ir::cast(t, ir::max(ir::cast(dtype::float32, e), ir::make_zero(dtype::float32)));
      },
      std::move(name));
}

inline OpDef relu_def() {
  return OpDef{
      .name = "relu",
      .importer_names = {"onnx:Relu"},
      .input_names = {"X"},
      .pattern = OpPattern::elementwise,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs&) { return std::vector<te::Tensor>{relu(in[0])}; },
      .doc = "max(X, 0), elementwise",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
