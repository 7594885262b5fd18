// lp_normalization: ONNX LpNormalization. X divided by its L1 (p = 1) or L2 (p = 2, default) norm
// along attribute axis (default -1): Y = X / (sum |X|^p)^(1/p). Where the norm is 0, Y is 0 (as the
// ONNX reference gives), not NaN. float16/bfloat16 compute in float32.
#pragma once

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor lp_normalization(const te::Tensor& x, int64_t axis, int64_t p,
                                   const std::string& name = "lp_normalization") {
  check_rank(x, "input", 1, 8);
  check_norm_float(x, "input");
  if (p != 1 && p != 2)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'p' is ", p, " but must be 1 or 2"), {"attribute p"});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  std::vector<ir::Expr> kept = x.shape();
  kept[a] = ir::Expr(int64_t(1));
  auto k = te::reduce_axis(x.shape()[a], "k");
  te::Tensor norm = te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        idx[a] = k.var();
        ir::Expr e = ir::cast(ct, x(idx));
        return te::sum(p == 1 ? ir::call(ir::CallOp::abs, e) : e * e, {k});
      },
      name + "_norm");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end()), at = idx;
        at[a] = ir::Expr(int64_t(0));
        ir::Expr n = p == 1 ? norm(at) : ir::call(ir::CallOp::sqrt, norm(at));
        ir::Expr zero = ir::make_zero(ct);
        // Dividing by 1 where the norm is 0 keeps the division finite; the select gives 0.
        ir::Expr y = ir::select(n == zero, zero, ir::cast(ct, x(idx)) / ir::select(n == zero, ir::make_const(ct, 1.0), n));
        return ir::cast(t, y);
      },
      name);
}

inline OpDef lp_normalization_def() {
  return OpDef{
      .name = "lp_normalization",
      .importer_names = {"onnx:LpNormalization"},
      .input_names = {"input"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{lp_normalization(in[0], attrs.get_int("axis", -1), attrs.get_int("p", 2))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "input / its L1 or L2 norm along attribute axis (default -1); 0 where the norm is 0",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
