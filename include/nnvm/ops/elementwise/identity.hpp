// Copies of the input: ONNX Identity, and Dropout in inference mode (where it is the identity).
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Y = X for any dtype (bool and the storage floats included).
inline OpDef identity_def() {
  return unary_def(
      "identity", "onnx:Identity", "Y = X, any dtype",
      [](const Attrs&) -> ScalarFn { return [](const ir::Expr& e) { return e; }; }, DtypeKind::any);
}

// ONNX Dropout (opset 22) without random dropping: output = data, and the optional mask output is
// all true. That is inference mode, and training mode with ratio 0 (nothing dropped, scale 1).
// ratio and training_mode are value inputs; training mode with a ratio above 0 draws random
// numbers, which nnvm does not do ("nnvm.ops.attr").
inline OpDef dropout_def() {
  return OpDef{
      .name = "dropout",
      .importer_names = {"onnx:Dropout"},
      .input_names = {"data", "ratio", "training_mode"},
      .optional_inputs = 2,
      .value_inputs = {"ratio", "training_mode"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const te::Tensor& x = in[0];
            check_input_kind(x, "data", DtypeKind::any);
            bool training = false;
            for (int64_t v : attrs.get_ints("training_mode", {})) training = training || v != 0;
            double ratio = 0.5;  // ONNX's default
            for (double r : attrs.get_floats("ratio", {})) ratio = r;
            if (training && ratio != 0)
              throw UserError("nnvm.ops.attr",
                              str_cat("training mode with ratio ", ratio,
                                      " drops random elements, which nnvm does not do (inference mode, or ratio 0, "
                                      "runs as the identity)"),
                              {"input training_mode"});
            te::Tensor out = unary_elementwise(
                x, [](const ir::Expr& e) { return e; }, DtypeKind::any, "dropout");
            te::Tensor mask = te::compute(
                x.shape(), [](const std::vector<ir::Var>&) { return ir::const_true(); }, "dropout_mask");
            return std::vector<te::Tensor>{out, mask};
          },
      .doc = "dropout that drops nothing: output = data, mask = all true (inference mode, or ratio 0)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
