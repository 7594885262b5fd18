// instance_norm: ONNX InstanceNormalization. Each (n, c) slice of X (N, C, D1, ...) is
// normalized over its spatial axes: Y = (X - mean) / sqrt(var + epsilon) * scale[c] + B[c].
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor instance_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias, double epsilon,
                                const std::string& name = "instance_norm") {
  check_rank(x, "X", 3, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "scale");
  check_norm_float(bias, "B");
  check_channel_param(scale, "scale", x.shape()[1]);
  check_channel_param(bias, "B", x.shape()[1]);
  DataType t = x.dtype(), ct = norm_compute_type(t);
  std::vector<bool> reduced(x.rank(), true);
  reduced[0] = reduced[1] = false;
  auto [mean, var] = moments(x, reduced, ct, name);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> k = kept_index(v, reduced);
        ir::Expr inv = ir::make_const(ct, 1.0) / ir::call(ir::CallOp::sqrt, var(k) + ir::make_const(ct, epsilon));
        ir::Expr n = (ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(k)) * inv;
        return ir::cast(t, n * ir::cast(ct, scale(v[1])) + ir::cast(ct, bias(v[1])));
      },
      name);
}

inline OpDef instance_norm_def() {
  return OpDef{
      .name = "instance_norm",
      .importer_names = {"onnx:InstanceNormalization"},
      .input_names = {"input", "scale", "B"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{instance_norm(in[0], in[1], in[2], attrs.get_float("epsilon", 1e-5))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "normalize each (n, c) slice over its spatial axes, then * scale[c] + B[c]",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
