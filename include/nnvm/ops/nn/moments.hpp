// Means over a set of axes, shared by the normalization ops (layer_norm, instance_norm,
// rms_norm, mean_variance_normalization, batch_norm's parameter reads). Results keep the reduced
// axes with extent 1 so a consumer reads them at the same rank as the input.
#pragma once

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The type a normalization computes in: float16/bfloat16 inputs compute in float32.
inline DataType norm_compute_type(DataType t) { return t.is_storage_only() ? dtype::float32 : t; }

// The statistics type named by attribute stash_type (a data type name, default float32):
// "nnvm.ops.attr" unless it is float32 or float64.
inline DataType stash_dtype(const Attrs& attrs) {
  DataType t = attrs.get_dtype("stash_type", dtype::float32);
  if (t != dtype::float32 && t != dtype::float64)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'stash_type' is ", t, " but must be float32 or float64"),
                    {"attribute stash_type"});
  return t;
}

// "nnvm.ops.input_dtype" unless `t` is a float (float16/bfloat16 included: they compute in float32).
inline void check_norm_float(const te::Tensor& t, const char* input) {
  DataType d = t.dtype();
  if (!d.is_float() || !d.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", d, ", expected a float type"),
                    {"input " + std::string(input)});
}

// Index into a kept-axes result at input position v: reduced axes read 0.
inline std::vector<ir::Expr> kept_index(const std::vector<ir::Var>& v, const std::vector<bool>& reduced) {
  std::vector<ir::Expr> idx;
  for (size_t d = 0; d < v.size(); ++d) idx.push_back(reduced[d] ? ir::Expr(int64_t(0)) : ir::Expr(v[d]));
  return idx;
}

// The mean of value(i) over the axes marked in `reduced` of `shape`, in type `t`; the result has
// `shape` with reduced axes set to 1. `value` gets the full index (kept axes from the output,
// reduced ones from reduce axes).
inline te::Tensor mean_over(const std::vector<ir::Expr>& shape, const std::vector<bool>& reduced, DataType t,
                            const std::function<ir::Expr(const std::vector<ir::Expr>&)>& value, std::string name) {
  std::vector<ir::Expr> kept = shape;
  std::vector<ir::IterVar> axes;
  ir::Expr count = ir::Expr(int64_t(1));
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) {
      kept[d] = ir::Expr(int64_t(1));
      axes.push_back(te::reduce_axis(shape[d], str_cat("r", d)));
      count = count * shape[d];
    }
  // Scaling each term keeps the reduction the top of the body (te::compute's rule).
  ir::Expr inv_count = ir::simplify(ir::make_const(t, 1.0) / ir::cast(t, count));
  return te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0, r = 0; d < shape.size(); ++d)
          idx.push_back(reduced[d] ? ir::Expr(axes[r++].var()) : ir::Expr(v[d]));
        ir::Expr term = value(idx) * inv_count;
        return axes.empty() ? term : te::sum(term, axes);
      },
      std::move(name));
}

// Mean and (biased) variance of x over the reduced axes, in type `t`: two passes, the variance
// as the mean of squared deviations (stabler than E[x^2] - E[x]^2).
inline std::pair<te::Tensor, te::Tensor> moments(const te::Tensor& x, const std::vector<bool>& reduced, DataType t,
                                                 const std::string& name) {
  te::Tensor mean = mean_over(x.shape(), reduced, t, [&](const std::vector<ir::Expr>& i) { return ir::cast(t, x(i)); }, name + "_mean");
  te::Tensor var = mean_over(
      x.shape(), reduced, t,
      [&](const std::vector<ir::Expr>& i) {
        std::vector<ir::Expr> m = i;
        for (size_t d = 0; d < m.size(); ++d)
          if (reduced[d]) m[d] = ir::Expr(int64_t(0));
        ir::Expr dev = ir::cast(t, x(i)) - mean(m);
        return dev * dev;
      },
      name + "_var");
  return {mean, var};
}

// "nnvm.ops.input_shape" unless `p` broadcasts to `shape` from the right without growing it
// (ONNX unidirectional broadcasting: each of its axes is 1 or the matching extent).
inline void check_unidirectional(const te::Tensor& p, const char* input, const std::vector<ir::Expr>& shape) {
  bool ok = p.rank() <= shape.size();
  for (size_t d = 0; ok && d < p.rank(); ++d) {
    const ir::Expr& e = p.shape()[d];
    ok = ir::is_const_int(ir::simplify(e), 1) || same_extent(e, shape[shape.size() - p.rank() + d]);
  }
  if (!ok) {
    std::string want = "(";
    for (size_t d = 0; d < shape.size(); ++d) want += (d ? ", " : "") + ir::to_string(shape[d]);
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " (tensor ", p.name(), ") must broadcast to ", want, ")"),
                    {"input " + std::string(input)});
  }
}
// Reads `p` (checked by check_unidirectional) at position v of the shape it broadcasts to.
inline ir::Expr read_broadcast(const te::Tensor& p, const std::vector<ir::Var>& v) {
  std::vector<ir::Expr> idx;
  for (size_t d = 0; d < p.rank(); ++d)
    idx.push_back(ir::is_const_int(ir::simplify(p.shape()[d]), 1) ? ir::Expr(int64_t(0))
                                                                   : ir::Expr(v[v.size() - p.rank() + d]));
  return p(idx);
}

// "nnvm.ops.input_shape" unless `p` is 1-D with the channel count `c` (axis 1 of the input X).
inline void check_channel_param(const te::Tensor& p, const char* input, const ir::Expr& c) {
  check_rank(p, input, 1);
  check_same_extent(p.shape()[0], c, str_cat("the extent of input ", input, " and the channel count of X (axis 1)"));
}

// Schedules every stage an op made between its inputs and `outputs` (normalizations, attention):
// reductions parallel over their rows, the rest vectorized along the last axis.
inline void schedule_stages(schedule::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  for (auto& t : te::post_order(outputs)) {
    if (t.op().kind != te::OpKind::compute) continue;
    if (!t.op().reduce_axes.empty()) schedule_reduction(s[t], target);
    else schedule_injective(s[t], target);
  }
}

}  // namespace ops
NNVM_END_NAMESPACE
