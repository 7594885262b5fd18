// clip(X) = min(max(X, min), max). ONNX Clip: the bounds are the optional inputs min and max
// (opset 11 and later: tensors of one element, X's dtype) or, for older models, the float
// attributes min and max. A bound given neither way does not clamp.
#pragma once

#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// The one element of a bound input (rank 0, or every extent 1).
inline ir::Expr clip_bound(const te::Tensor& x, const te::Tensor& b, const char* input) {
  check_same_dtype(x, "input", b, input);
  for (auto& e : b.shape())
    if (!ir::is_const_int(ir::simplify(e), 1))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", input, " (tensor ", b.name(), ") must hold one element, its extent is ",
                              ir::to_string(e)),
                      {"input " + std::string(input)});
  return b(std::vector<ir::Expr>(b.rank(), ir::Expr(int64_t(0))));
}
}  // namespace detail

inline te::Tensor clip(const te::Tensor& x, const te::Tensor& lo, const te::Tensor& hi, const Attrs& attrs,
                       std::string name = "clip") {
  DataType t = x.dtype();
  if (t.is_bool() || t.is_handle() || !t.is_scalar())
    throw UserError("nnvm.ops.input_dtype", str_cat("input input (tensor ", x.name(), ") is ", t, ", expected a number"),
                    {"input input"});
  DataType ct = t.is_storage_only() ? dtype::float32 : t;
  auto bound = [&](const te::Tensor& b, const char* which) -> ir::Expr {
    if (b.defined()) return ir::cast(ct, detail::clip_bound(x, b, which));
    if (attrs.has(which)) return ir::make_const(ct, attrs.get_float(which));
    return {};
  };
  ir::Expr lo_e = bound(lo, "min"), hi_e = bound(hi, "max");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        if (lo_e.defined()) e = ir::max(e, lo_e);
        if (hi_e.defined()) e = ir::min(e, hi_e);
        return ct == t ? e : ir::cast(t, e);
      },
      std::move(name));
}

inline OpDef clip_def() {
  return OpDef{
      .name = "clip",
      .importer_names = {"onnx:Clip"},
      .input_names = {"input", "min", "max"},
      .optional_inputs = 2,
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            te::Tensor lo = in.size() > 1 ? in[1] : te::Tensor(), hi = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{clip(in[0], lo, hi, attrs)};
          },
      .doc = "min(max(input, min), max); bounds from the optional inputs min/max or the attributes min/max",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
