// Unary elementwise ops that are one math call each (ONNX Exp, Log, Sqrt, ...). They differ only
// in the scalar function, so one generator makes their definitions; each op is still one named
// definition (exp_def, log_def, ...) in the sorted built-in list.
#pragma once

#include "nnvm/ops/elementwise/dtypes.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

using ScalarFn = std::function<ir::Expr(const ir::Expr&)>;

// Applies `f` to every element of `x`, whose dtype must be of `kind` ("nnvm.ops.input_dtype");
// float16/bfloat16 (storage types) compute in float32 and round back.
inline te::Tensor unary_elementwise(const te::Tensor& x, const ScalarFn& f, DtypeKind kind, std::string name) {
  check_input_kind(x, "X", kind);
  DataType t = x.dtype();
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(std::vector<ir::Expr>(v.begin(), v.end()));
        if (!t.is_storage_only()) return f(e);
        return ir::cast(t, f(ir::cast(dtype::float32, e)));
      },
      std::move(name));
}

// The definition of a one-input, one-output elementwise op with the injective default schedule.
// `f` reads the attributes once per build, so per-use parameters (alpha) become constants.
inline OpDef unary_def(std::string name, std::string importer_name, std::string doc,
                       std::function<ScalarFn(const Attrs&)> make_f, DtypeKind kind = DtypeKind::float_) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"X"},
      .pattern = OpPattern::elementwise,
      .compute =
          [op, make_f, kind](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{unary_elementwise(in[0], make_f(attrs), kind, op)};
          },
      .doc = std::move(doc),
  };
}

// A definition whose scalar function is a single math intrinsic and takes no attributes.
inline OpDef unary_call_def(std::string name, std::string importer_name, ir::CallOp call, std::string doc) {
  return unary_def(std::move(name), std::move(importer_name), std::move(doc), [call](const Attrs&) -> ScalarFn {
    return [call](const ir::Expr& e) { return ir::call(call, e); };
  });
}

// Any number; unsigned values are their own absolute value.
inline OpDef abs_def() {
  return unary_def("abs", "onnx:Abs", "|X|, elementwise", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return e.dtype().is_uint() ? e : ir::call(ir::CallOp::abs, e); };
  }, DtypeKind::number);
}
inline OpDef acos_def() { return unary_call_def("acos", "onnx:Acos", ir::CallOp::acos, "acos(X), elementwise"); }
inline OpDef acosh_def() { return unary_call_def("acosh", "onnx:Acosh", ir::CallOp::acosh, "acosh(X), elementwise"); }
inline OpDef asin_def() { return unary_call_def("asin", "onnx:Asin", ir::CallOp::asin, "asin(X), elementwise"); }
inline OpDef asinh_def() { return unary_call_def("asinh", "onnx:Asinh", ir::CallOp::asinh, "asinh(X), elementwise"); }
inline OpDef atan_def() { return unary_call_def("atan", "onnx:Atan", ir::CallOp::atan, "atan(X), elementwise"); }
inline OpDef atanh_def() { return unary_call_def("atanh", "onnx:Atanh", ir::CallOp::atanh, "atanh(X), elementwise"); }
inline OpDef ceil_def() { return unary_call_def("ceil", "onnx:Ceil", ir::CallOp::ceil, "ceil(X), elementwise"); }
inline OpDef cos_def() { return unary_call_def("cos", "onnx:Cos", ir::CallOp::cos, "cos(X), elementwise"); }
inline OpDef cosh_def() { return unary_call_def("cosh", "onnx:Cosh", ir::CallOp::cosh, "cosh(X), elementwise"); }
inline OpDef erf_def() { return unary_call_def("erf", "onnx:Erf", ir::CallOp::erf, "erf(X), elementwise"); }
inline OpDef exp_def() { return unary_call_def("exp", "onnx:Exp", ir::CallOp::exp, "e^X, elementwise"); }
inline OpDef floor_def() { return unary_call_def("floor", "onnx:Floor", ir::CallOp::floor, "floor(X), elementwise"); }
inline OpDef log_def() { return unary_call_def("log", "onnx:Log", ir::CallOp::log, "natural log of X, elementwise"); }
inline OpDef neg_def() {
  return unary_def("neg", "onnx:Neg", "-X, elementwise", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return -e; };
  }, DtypeKind::number);
}
inline OpDef reciprocal_def() {
  return unary_def("reciprocal", "onnx:Reciprocal", "1 / X, elementwise", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return 1.0 / e; };
  });
}
// Half-way cases round to even (ONNX Round): nearbyint in the default rounding mode.
inline OpDef round_def() {
  return unary_call_def("round", "onnx:Round", ir::CallOp::round, "X rounded to the nearest integer, ties to even");
}
inline OpDef sigmoid_def() {
  return unary_call_def("sigmoid", "onnx:Sigmoid", ir::CallOp::sigmoid, "1 / (1 + e^-X), elementwise");
}
inline OpDef sin_def() { return unary_call_def("sin", "onnx:Sin", ir::CallOp::sin, "sin(X), elementwise"); }
inline OpDef sinh_def() { return unary_call_def("sinh", "onnx:Sinh", ir::CallOp::sinh, "sinh(X), elementwise"); }
inline OpDef sqrt_def() { return unary_call_def("sqrt", "onnx:Sqrt", ir::CallOp::sqrt, "sqrt(X), elementwise"); }
inline OpDef tan_def() { return unary_call_def("tan", "onnx:Tan", ir::CallOp::tan, "tan(X), elementwise"); }
inline OpDef tanh_def() { return unary_call_def("tanh", "onnx:Tanh", ir::CallOp::tanh, "tanh(X), elementwise"); }

}  // namespace ops
NNVM_END_NAMESPACE
