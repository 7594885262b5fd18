// lrn: ONNX LRN, local response normalization across channels (axis 1 of X (N, C, D1, ...)):
// Y = X / (bias + alpha / size * square_sum) ^ beta, where square_sum at channel c sums X^2 over
// channels [c - floor((size-1)/2), c + ceil((size-1)/2)] that exist.
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor lrn(const te::Tensor& x, int64_t size, double alpha, double beta, double bias,
                      const std::string& name = "lrn") {
  check_rank(x, "X", 2, 8);
  check_norm_float(x, "X");
  if (size <= 0)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'size' is ", size, " but must be positive"), {"attribute size"});
  DataType t = x.dtype(), ct = norm_compute_type(t);
  ir::Expr channels = x.shape()[1];
  auto r = te::reduce_axis(ir::Expr(size), "r");
  te::Tensor sq = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr c = v[1] - ir::Expr((size - 1) / 2) + r.var();
        // Channels outside [0, C) add nothing; the read index is clamped so it stays in bounds.
        idx[1] = ir::max(ir::Expr(int64_t(0)), ir::min(c, channels - ir::Expr(int64_t(1))));
        ir::Expr e = ir::cast(ct, x(idx));
        ir::Expr inside = c >= ir::Expr(int64_t(0)) && c < channels;
        return te::sum(ir::select(inside, e * e, ir::make_zero(ct)), {r});
      },
      name + "_square_sum");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr den = ir::make_const(ct, bias) + ir::make_const(ct, alpha / double(size)) * sq(idx);
        return ir::cast(t, ir::cast(ct, x(idx)) / ir::call(ir::CallOp::pow, den, ir::make_const(ct, beta)));
      },
      name);
}

inline OpDef lrn_def() {
  return OpDef{
      .name = "lrn",
      .importer_names = {"onnx:LRN"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{lrn(in[0], attrs.get_int("size"), attrs.get_float("alpha", 1e-4),
                                               attrs.get_float("beta", 0.75), attrs.get_float("bias", 1.0))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "X / (bias + alpha / size * sum of X^2 over `size` neighbouring channels) ^ beta",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
