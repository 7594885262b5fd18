// layer_norm: ONNX LayerNormalization. X is normalized over its axes from `axis` (default -1)
// to the end: Y = (X - Mean) * InvStdDev * Scale + B, InvStdDev = 1 / sqrt(Var + epsilon), with
// the statistics computed in stash_type (default float32). Scale and B broadcast to X's shape
// from the right. Outputs Y (X's type), Mean and InvStdDev (stash_type, X's shape with the
// normalized axes set to 1).
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<te::Tensor> layer_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                                          int64_t axis, double epsilon, DataType st,
                                          const std::string& name = "layer_norm") {
  check_rank(x, "X", 1, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "Scale");
  check_unidirectional(scale, "Scale", x.shape());
  if (bias.defined()) {
    check_norm_float(bias, "B");
    check_unidirectional(bias, "B", x.shape());
  }
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<bool> reduced(x.rank(), false);
  for (size_t d = a; d < x.rank(); ++d) reduced[d] = true;
  auto [mean, var] = moments(x, reduced, st, name);
  te::Tensor inv = te::compute(
      mean.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> i(v.begin(), v.end());
        return ir::make_const(st, 1.0) / ir::call(ir::CallOp::sqrt, var(i) + ir::make_const(st, epsilon));
      },
      name + "_inv_std_dev");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  te::Tensor y = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> k = kept_index(v, reduced);
        ir::Expr n = (ir::cast(st, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(k)) * inv(k);
        ir::Expr y = ir::cast(ct, n) * ir::cast(ct, read_broadcast(scale, v));
        if (bias.defined()) y = y + ir::cast(ct, read_broadcast(bias, v));
        return ir::cast(t, y);
      },
      name);
  return {y, mean, inv};
}

inline OpDef layer_norm_def() {
  return OpDef{
      .name = "layer_norm",
      .importer_names = {"onnx:LayerNormalization"},
      .input_names = {"X", "Scale", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return layer_norm(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), attrs.get_int("axis", -1),
                              attrs.get_float("epsilon", 1e-5), stash_dtype(attrs));
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "normalize X over axes [axis, rank) then * Scale + B; outputs Y, Mean, InvStdDev",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
