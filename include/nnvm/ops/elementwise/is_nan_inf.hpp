// Float classification with a bool output: ONNX IsNaN and IsInf.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The bool tensor of pred(X) for a float X; float16/bfloat16 widen to float32 exactly first.
inline te::Tensor float_predicate(const te::Tensor& x, const ScalarFn& pred, std::string name) {
  check_input_kind(x, "X", DtypeKind::float_);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        return pred(ir::cast(arith_type(x.dtype()), x(std::vector<ir::Expr>(v.begin(), v.end()))));
      },
      std::move(name));
}

inline OpDef float_predicate_def(std::string name, std::string importer_name, std::string doc,
                                 std::function<ScalarFn(const Attrs&)> make_pred) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"X"},
      .pattern = OpPattern::elementwise,
      .compute =
          [op, make_pred](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{float_predicate(in[0], make_pred(attrs), op)};
          },
      .doc = std::move(doc),
  };
}

inline OpDef isnan_def() {
  return float_predicate_def("isnan", "onnx:IsNaN", "true where X is NaN (bool output)", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return ir::call(ir::CallOp::isnan, e); };
  });
}

// Attributes detect_positive and detect_negative (default 1 each) choose which infinities count.
inline OpDef isinf_def() {
  return float_predicate_def("isinf", "onnx:IsInf",
                             "true where X is infinite (bool output; attributes detect_positive, detect_negative)",
                             [](const Attrs& attrs) -> ScalarFn {
                               bool pos = attrs.get_int("detect_positive", 1) != 0;
                               bool neg = attrs.get_int("detect_negative", 1) != 0;
                               return [pos, neg](const ir::Expr& e) -> ir::Expr {
                                 if (pos && neg) return ir::call(ir::CallOp::isinf, e);
                                 if (!pos && !neg) return ir::const_false();
                                 ir::Expr inf = ir::make_const(e.dtype(), pos ? HUGE_VAL : -HUGE_VAL);
                                 return e == inf;
                               };
                             });
}

}  // namespace ops
NNVM_END_NAMESPACE
