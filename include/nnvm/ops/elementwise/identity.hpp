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

// ONNX Dropout (opset 22) for inference: output = data, and the optional mask output is all true.
// ratio is not read (it scales nothing when no element is dropped). training_mode is a value
// input; true asks for random dropping, which nnvm does not do ("nnvm.ops.attr").
inline OpDef dropout_def() {
  return OpDef{
      .name = "dropout",
      .importer_names = {"onnx:Dropout"},
      .input_names = {"data", "ratio", "training_mode"},
      .optional_inputs = 2,
      .value_inputs = {"training_mode"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const te::Tensor& x = in[0];
            check_input_kind(x, "data", DtypeKind::any);
            for (int64_t v : attrs.get_ints("training_mode", {}))
              if (v != 0)
                throw UserError("nnvm.ops.attr", "training mode is not supported: Dropout runs as the identity",
                                {"input training_mode"});
            te::Tensor out = unary_elementwise(
                x, [](const ir::Expr& e) { return e; }, DtypeKind::any, "dropout");
            te::Tensor mask = te::compute(
                x.shape(), [](const std::vector<ir::Var>&) { return ir::const_true(); }, "dropout_mask");
            return std::vector<te::Tensor>{out, mask};
          },
      .doc = "inference-mode dropout: output = data, mask = all true (training_mode must be false)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
