// rms_norm: ONNX RMSNormalization (opset 23). X is scaled over its axes from `axis` (default -1)
// to the end: Y = X / sqrt(mean(X^2) + epsilon) * scale, the mean computed in stash_type
// (default float32); scale broadcasts to X's shape from the right.
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor rms_norm(const te::Tensor& x, const te::Tensor& scale, int64_t axis, double epsilon, DataType st,
                           const std::string& name = "rms_norm") {
  check_rank(x, "X", 1, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "scale");
  check_unidirectional(scale, "scale", x.shape());
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<bool> reduced(x.rank(), false);
  for (size_t d = a; d < x.rank(); ++d) reduced[d] = true;
  te::Tensor ms = mean_over(
      x.shape(), reduced, st,
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr e = ir::cast(st, x(i));
        return e * e;
      },
      name + "_mean_square");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr inv = ir::make_const(st, 1.0) / ir::call(ir::CallOp::sqrt, ms(kept_index(v, reduced)) +
                                                                                 ir::make_const(st, epsilon));
        ir::Expr n = ir::cast(st, x(std::vector<ir::Expr>(v.begin(), v.end()))) * inv;
        return ir::cast(t, ir::cast(ct, n) * ir::cast(ct, read_broadcast(scale, v)));
      },
      name);
}

inline OpDef rms_norm_def() {
  return OpDef{
      .name = "rms_norm",
      .importer_names = {"onnx:RMSNormalization"},
      .input_names = {"X", "scale"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{rms_norm(in[0], in[1], attrs.get_int("axis", -1),
                                                    attrs.get_float("epsilon", 1e-5), stash_dtype(attrs))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "X / sqrt(mean(X^2) + epsilon) * scale over axes [axis, rank)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
