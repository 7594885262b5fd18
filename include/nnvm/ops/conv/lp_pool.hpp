// lp_pool: the p-norm of each window, (sum |x|^p)^(1/p) (ONNX LpPool, p default 2). Padding adds
// nothing to the sum.
#pragma once

#include "nnvm/ops/conv/pooling.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The window sums of |x|^p, then the root (one stage when p is 1). p = 2 squares and takes
// sqrt, exactly; other p use pow.
inline te::Tensor lp_pool(const te::Tensor& X, const Window& w, int64_t p, const std::string& name = "lp_pool") {
  check_pool_dtype(X, false);
  if (p < 1) detail::bad_window_attr("p", str_cat("attribute 'p' is ", p, "; it must be at least 1"));
  DataType t = X.dtype();
  auto power = [&](ir::Expr x) {
    if (p == 2) return x * x;
    ir::Expr a = ir::call(ir::CallOp::abs, x);
    return p == 1 ? a : ir::call(ir::CallOp::pow, a, ir::make_const(t, double(p)));
  };
  te::Tensor sum = window_reduce(X, w, ir::Combiner::sum, power, p == 1 ? name : name + "_sum");
  if (p == 1) return sum;
  return te::compute(
      sum.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr s = sum(std::vector<ir::Expr>(v.begin(), v.end()));
        return p == 2 ? ir::call(ir::CallOp::sqrt, s)
                      : ir::call(ir::CallOp::pow, s, ir::make_const(t, 1.0 / double(p)));
      },
      name);
}

inline OpDef lp_pool_def() {
  return OpDef{
      .name = "lp_pool",
      .importer_names = {"onnx:LpPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            Window w = pool_window(in[0], WindowParams::from(attrs));
            return std::vector<te::Tensor>{lp_pool(in[0], w, attrs.get_int("p", 2))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc =
          "p-norm of each window (LpPool; attributes p, kernel_shape, strides, dilations, pads, auto_pad, "
          "ceil_mode)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
