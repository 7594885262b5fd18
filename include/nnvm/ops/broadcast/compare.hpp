// Comparisons with broadcasting and a bool output: ONNX Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual. Operands: numbers or bools, both of one dtype; float16/bfloat16 compare as
// the float32 values they hold exactly.
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef compare_def(std::string name, std::string importer_name, std::string doc, BinaryFn f) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute =
          [op, f](const std::vector<te::Tensor>& in, const Attrs&) {
            check_same_dtypes(in, {"A", "B"}, DtypeKind::compare);
            DataType ct = arith_type(in[0].dtype());
            return std::vector<te::Tensor>{broadcast_map(
                in, {"A", "B"},
                [&](const std::vector<ir::Expr>& x) { return f(ir::cast(ct, x[0]), ir::cast(ct, x[1])); }, op)};
          },
      .doc = std::move(doc),
  };
}

inline OpDef equal_def() {
  return compare_def("equal", "onnx:Equal", "A == B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a == b; });
}
inline OpDef greater_def() {
  return compare_def("greater", "onnx:Greater", "A > B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a > b; });
}
inline OpDef greater_or_equal_def() {
  return compare_def("greater_or_equal", "onnx:GreaterOrEqual", "A >= B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a >= b; });
}
inline OpDef less_def() {
  return compare_def("less", "onnx:Less", "A < B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a < b; });
}
inline OpDef less_or_equal_def() {
  return compare_def("less_or_equal", "onnx:LessOrEqual", "A <= B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a <= b; });
}

}  // namespace ops
NNVM_END_NAMESPACE
