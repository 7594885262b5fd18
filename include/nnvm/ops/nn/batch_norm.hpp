// batch_norm: ONNX BatchNormalization in inference mode, per channel c (axis 1 of X):
// Y = (X - input_mean[c]) / sqrt(input_var[c] + epsilon) * scale[c] + B[c]. Training mode
// (running statistics as extra outputs) is not supported: training_mode=1 is refused.
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor batch_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                             const te::Tensor& mean, const te::Tensor& var, double epsilon,
                             std::string name = "batch_norm") {
  check_rank(x, "X", 2, 8);
  check_norm_float(x, "X");
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  const te::Tensor* params[] = {&scale, &bias, &mean, &var};
  for (int i = 0; i < 4; ++i) {
    check_norm_float(*params[i], names[i]);
    check_channel_param(*params[i], names[i], x.shape()[1]);
  }
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        auto p = [&](const te::Tensor& q) { return ir::cast(ct, q(v[1])); };
        ir::Expr xv = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        ir::Expr inv = ir::make_const(ct, 1.0) / ir::call(ir::CallOp::sqrt, p(var) + ir::make_const(ct, epsilon));
        return ir::cast(t, (xv - p(mean)) * inv * p(scale) + p(bias));
      },
      std::move(name));
}

inline OpDef batch_norm_def() {
  return OpDef{
      .name = "batch_norm",
      .importer_names = {"onnx:BatchNormalization"},
      .input_names = {"X", "scale", "B", "input_mean", "input_var"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            if (attrs.get_int("training_mode", 0) != 0)
              throw UserError("nnvm.ops.attr",
                              "attribute 'training_mode' is 1 but only inference (training_mode=0) is supported",
                              {"attribute training_mode"});
            return std::vector<te::Tensor>{
                batch_norm(in[0], in[1], in[2], in[3], in[4], attrs.get_float("epsilon", 1e-5))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "(X - input_mean) / sqrt(input_var + epsilon) * scale + B per channel (inference)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
