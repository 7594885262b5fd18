// mean_variance_normalization: ONNX MeanVarianceNormalization. X is normalized over `axes`
// (default [0, 2, 3]): Y = (X - mean) / (sqrt(var) + 1e-9), the constant ONNX's function body
// adds to the standard deviation.
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor mean_variance_normalization(const te::Tensor& x, const std::vector<int64_t>& axes,
                                              const std::string& name = "mean_variance_normalization") {
  check_rank(x, "X", 1, 8);
  check_norm_float(x, "X");
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t a : axes) {
    size_t d = normalize_axis(a, x.rank(), "axes");
    if (reduced[d])
      throw UserError("nnvm.ops.attr", str_cat("attribute 'axes' names axis ", d, " twice"), {"attribute axes"});
    reduced[d] = true;
  }
  DataType t = x.dtype(), ct = norm_compute_type(t);
  auto [mean, var] = moments(x, reduced, ct, name);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> k = kept_index(v, reduced);
        ir::Expr sd = ir::call(ir::CallOp::sqrt, var(k)) + ir::make_const(ct, 1e-9);
        return ir::cast(t, (ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(k)) / sd);
      },
      name);
}

inline OpDef mean_variance_normalization_def() {
  return OpDef{
      .name = "mean_variance_normalization",
      .importer_names = {"onnx:MeanVarianceNormalization"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                mean_variance_normalization(in[0], attrs.get_ints("axes", {0, 2, 3}))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_stages(s, out, t);
          },
      .doc = "(X - mean) / (std + 1e-9) over attribute axes (default [0, 2, 3])",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
