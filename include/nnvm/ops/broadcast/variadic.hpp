// The ONNX ops that fold any number of inputs with broadcasting: Max, Min, Sum, Mean. They take
// 1 to 8 inputs (A..H); one input is copied.
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"
#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// f folded over the elements of `ins` from the left, in their arithmetic type; `finish` (when
// set) maps the folded value, before it converts back to the inputs' dtype.
inline te::Tensor broadcast_fold(const std::vector<te::Tensor>& ins, const BinaryFn& f, DtypeKind kind,
                                 const ScalarFn& finish, std::string name) {
  std::vector<std::string> names;
  for (size_t k = 0; k < ins.size(); ++k) names.push_back(std::string(1, char('A' + k)));
  check_same_dtypes(ins, names, kind);
  DataType t = ins[0].dtype(), ct = arith_type(t);
  return broadcast_map(
      ins, names,
      [&](const std::vector<ir::Expr>& x) {
        ir::Expr acc = ir::cast(ct, x[0]);
        for (size_t k = 1; k < x.size(); ++k) acc = f(acc, ir::cast(ct, x[k]));
        return ir::cast(t, finish ? finish(acc) : acc);
      },
      std::move(name));
}

inline OpDef variadic_def(std::string name, std::string importer_name, std::string doc, BinaryFn f,
                          DtypeKind kind = DtypeKind::number, std::function<ScalarFn(size_t inputs)> finish = {}) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"A", "B", "C", "D", "E", "F", "G", "H"},
      .optional_inputs = 7,
      .pattern = OpPattern::broadcast,
      .compute =
          [op, f, kind, finish](const std::vector<te::Tensor>& in, const Attrs&) {
            for (size_t k = 0; k < in.size(); ++k)
              if (!in[k].defined())
                throw UserError("nnvm.ops.input_count",
                                str_cat("input ", char('A' + k), " is absent; ", op, " takes its inputs without gaps"),
                                {"input " + std::string(1, char('A' + k))});
            return std::vector<te::Tensor>{broadcast_fold(in, f, kind, finish ? finish(in.size()) : ScalarFn(), op)};
          },
      .doc = std::move(doc),
  };
}

inline OpDef max_def() {
  return variadic_def("max", "onnx:Max", "elementwise max of 1 to 8 inputs with broadcasting",
                      [](const ir::Expr& a, const ir::Expr& b) { return ir::max(a, b); });
}
inline OpDef mean_def() {
  return variadic_def(
      "mean", "onnx:Mean", "elementwise mean of 1 to 8 float inputs with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a + b; }, DtypeKind::float_,
      [](size_t n) -> ScalarFn { return [n](const ir::Expr& s) { return s / double(n); }; });
}
inline OpDef min_def() {
  return variadic_def("min", "onnx:Min", "elementwise min of 1 to 8 inputs with broadcasting",
                      [](const ir::Expr& a, const ir::Expr& b) { return ir::min(a, b); });
}
inline OpDef sum_def() {
  return variadic_def("sum", "onnx:Sum", "elementwise sum of 1 to 8 inputs with broadcasting",
                      [](const ir::Expr& a, const ir::Expr& b) { return a + b; });
}

}  // namespace ops
NNVM_END_NAMESPACE
