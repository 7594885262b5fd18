// where(condition, X, Y) = X where condition holds, else Y; the three broadcast together. ONNX
// Where: condition is bool, X and Y share any dtype.
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef where_def() {
  return OpDef{
      .name = "where",
      .importer_names = {"onnx:Where"},
      .input_names = {"condition", "X", "Y"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            check_input_kind(in[0], "condition", DtypeKind::boolean);
            check_same_dtypes({in[1], in[2]}, {"X", "Y"}, DtypeKind::any);
            return std::vector<te::Tensor>{broadcast_map(
                in, {"condition", "X", "Y"},
                [](const std::vector<ir::Expr>& x) { return ir::select(x[0], x[1], x[2]); }, "where")};
          },
      .doc = "X where condition else Y, the three broadcast together",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
