// top_k along one axis: the K largest (or smallest) elements and their int64 indices, in order.
// ONNX TopK (opset 11): K is the value input "K" (one integer); attributes axis (default -1),
// largest (default 1), sorted (default 1). Equal values keep their input order (the lower index
// first), as ONNX says. The output is always sorted, which sorted = 0 allows.
//
// Cost: without a sort primitive each element's rank along the axis is counted (O(n^2) per row
// of n), then output position p finds the element of rank p (O(K n)).
#pragma once

#include "nnvm/ops/reduce/reduce_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Returns {values, indices}. Stages: "<name>_rank" (how many elements come before each one),
// "<name>_indices" (the element of rank p; it starts from the last index, so ranks that NaN inputs
// leave unmatched still give a valid index), and name (the values, gathered at those indices).
inline std::vector<te::Tensor> top_k(const te::Tensor& x, int64_t k, int64_t axis = -1, bool largest = true,
                                     std::string name = "top_k") {
  check_rank(x, "X", 1, 8);
  check_reduce_dtype(x, "X", {.ints = true, .int_bits = 8});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  ir::Expr n = x.shape()[a];
  std::optional<int64_t> known = ir::simplified_const_int(n);
  if (k < 1 || (known && k > *known))
    throw UserError("nnvm.ops.attr",
                    str_cat("input K is ", k, " but must lie in [1, ",
                            known ? str_cat(*known) : std::string("axis extent"), "] (the extent of axis ", a, ")"),
                    {"input K"});
  auto at = [a](const std::vector<ir::Var>& v, ir::Expr e) {
    std::vector<ir::Expr> idx = as_index(v);
    idx[a] = std::move(e);
    return idx;
  };
  auto j = te::reduce_axis(n, "r");
  te::Tensor rank = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr xi = load_compute(x, as_index(v)), xj = load_compute(x, at(v, j.var()));
        ir::Expr ahead = largest ? xj > xi : xj < xi;
        ir::Expr before = ahead || (xj == xi && ir::Expr(j.var()) < ir::Expr(v[a]));
        return ir::Reduce::make(ir::Combiner::sum, ir::make_const(dtype::index, 1), {j}, ir::Expr(), before);
      },
      name + "_rank");
  std::vector<ir::Expr> out_shape = x.shape();
  out_shape[a] = ir::Expr(k);
  auto i = te::reduce_axis(n, "s");
  te::Tensor indices = te::compute(
      out_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr hit = rank(at(v, i.var())) == ir::Expr(v[a]);
        return ir::Reduce::make(ir::Combiner::min, i.var(), {i}, ir::simplify(n - int64_t(1)), hit);
      },
      name + "_indices");
  te::Tensor values = te::compute(
      out_shape, [&](const std::vector<ir::Var>& v) { return x(at(v, indices(as_index(v)))); }, std::move(name));
  return {values, indices};
}

// All three stages parallel over their rows and not vectorized: the values stage is a gather
// (its index differs per lane), the others are reductions.
inline void schedule_top_k(schedule::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  const te::Tensor& values = outs.at(0);
  const te::Tensor& indices = outs.at(1);
  schedule_reduction(s[values], target);
  schedule_reduction(s[indices], target);
  schedule_reduction(s[stage_read_by(indices, values.name() + "_rank")], target);
}

inline OpDef top_k_def() {
  return OpDef{
      .name = "top_k",
      .importer_names = {"onnx:TopK"},
      .input_names = {"X", "K"},
      .value_inputs = {"K"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const std::vector<int64_t>& k = attrs.get_ints("K");
            if (k.size() != 1)
              throw UserError("nnvm.ops.attr", str_cat("input K holds ", k.size(), " values, expected one"),
                              {"input K"});
            flag_attr(attrs, "sorted", true);  // validated only: the output is always sorted
            return top_k(in[0], k[0], attrs.get_int("axis", -1), flag_attr(attrs, "largest", true));
          },
      .cpu_schedule = schedule_top_k,
      .doc = "the K largest (or smallest) elements along axis and their int64 indices, sorted; O(n^2) per row",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
