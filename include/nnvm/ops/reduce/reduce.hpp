// The ONNX Reduce* ops (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp) at their newest versions: the axes
// are the optional value input "axes"; attributes keepdims (default 1) and noop_with_empty_axes
// (default 0). They differ only in a per-element map, a combiner and a map of the result, so one
// generator makes their definitions.
//
// Reducing over no axes (noop_with_empty_axes with empty axes, or a rank-0 input) still applies
// the maps, as ONNX's reference does: ReduceSumSquare gives X², ReduceL1 |X|, ReduceLogSum log(X).
// Zero-size inputs cannot be expressed (tensor extents are positive), so ONNX's empty-set results
// (ReduceMax of nothing = -inf, ReduceSum = 0) never arise here.
#pragma once

#include "nnvm/ops/reduce/reduce_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct ReduceRule {
  ir::Combiner combiner;
  DtypeRule dtypes;
  // Applied to each element before combining; null: the element itself.
  std::function<ir::Expr(const ir::Expr&)> pre;
  // Applied to the combined value; `count` is how many elements were combined (index type).
  // Null: the combined value itself.
  std::function<ir::Expr(const ir::Expr& acc, const ir::Expr& count)> post;
};

// Reduces `x` over the dimensions flagged in `mask` by `rule`. Arithmetic runs in
// compute_dtype(x) and the result is cast back to x's type. One reduction stage, plus an
// elementwise stage "<name>_red" -> name when there is a post map or a cast back.
inline te::Tensor reduce_over(const te::Tensor& x, const std::vector<bool>& mask, bool keepdims, const ReduceRule& rule,
                              std::string name) {
  DataType t = x.dtype(), ct = compute_dtype(t);
  std::vector<ir::Expr> shape = reduced_shape(x.shape(), mask, keepdims);
  std::vector<ir::IterVar> axes;
  std::vector<ir::Expr> rvars;
  ir::Expr count(int64_t(1));
  for (size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) continue;
    axes.push_back(te::reduce_axis(x.shape()[d], str_cat("r", d)));
    rvars.emplace_back(axes.back().var());
    count = ir::simplify(count * x.shape()[d]);
  }
  auto element = [&](std::vector<ir::Expr> idx) {
    ir::Expr e = load_compute(x, std::move(idx));
    return rule.pre ? rule.pre(e) : e;
  };
  auto finish = [&](const ir::Expr& acc) { return ir::cast(t, rule.post ? rule.post(acc, count) : acc); };
  if (axes.empty())
    return te::compute(
        shape, [&](const std::vector<ir::Var>& v) { return finish(element(as_index(v))); }, std::move(name));
  ir::Expr init;
  if (rule.combiner == ir::Combiner::max) init = lowest_value(ct);
  if (rule.combiner == ir::Combiner::min) init = highest_value(ct);
  bool direct = !rule.post && ct == t;
  te::Tensor red = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        return ir::Reduce::make(rule.combiner, element(unreduced_index(v, mask, keepdims, rvars)), axes, init);
      },
      direct ? name : name + "_red");
  if (direct) return red;
  return te::compute(
      shape, [&](const std::vector<ir::Var>& v) { return finish(red(as_index(v))); }, std::move(name));
}

// log(sum(exp(X))) over `mask`, as m + log(sum(exp(X - m))) with m the maximum, so exp cannot
// overflow. An infinite maximum is not subtracted (m = 0 then): all -inf gives -inf, any +inf
// gives +inf. Three stages: "<name>_max", "<name>_sum", name.
inline te::Tensor reduce_log_sum_exp(const te::Tensor& x, const std::vector<bool>& mask, bool keepdims,
                                     std::string name = "reduce_log_sum_exp") {
  check_reduce_dtype(x, "data", {});
  DataType t = x.dtype(), ct = compute_dtype(t);
  if (std::find(mask.begin(), mask.end(), true) == mask.end())  // the log-sum-exp of one element is itself
    return te::compute(
        x.shape(), [&](const std::vector<ir::Var>& v) { return x(as_index(v)); }, std::move(name));
  std::vector<ir::Expr> shape = reduced_shape(x.shape(), mask, keepdims);
  auto axes_for = [&](const char* prefix) {
    std::vector<ir::IterVar> axes;
    std::vector<ir::Expr> vars;
    for (size_t d = 0; d < mask.size(); ++d)
      if (mask[d]) {
        axes.push_back(te::reduce_axis(x.shape()[d], str_cat(prefix, d)));
        vars.emplace_back(axes.back().var());
      }
    return std::pair{axes, vars};
  };
  auto [max_axes, max_vars] = axes_for("r");
  te::Tensor mx = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        return te::max_reduce(load_compute(x, unreduced_index(v, mask, keepdims, max_vars)), max_axes,
                              lowest_value(ct));
      },
      name + "_max");
  auto shift = [&](const std::vector<ir::Var>& v) {
    ir::Expr m = mx(as_index(v));
    return ir::select(ir::call(ir::CallOp::isinf, m), ir::make_zero(ct), m);
  };
  auto [sum_axes, sum_vars] = axes_for("s");
  te::Tensor sm = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = load_compute(x, unreduced_index(v, mask, keepdims, sum_vars));
        return te::sum(ir::call(ir::CallOp::exp, e - shift(v)), sum_axes);
      },
      name + "_sum");
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) { return ir::cast(t, ir::call(ir::CallOp::log, sm(as_index(v))) + shift(v)); },
      std::move(name));
}

namespace detail {
using ReduceFn = std::function<te::Tensor(const te::Tensor& x, const std::vector<bool>& mask, bool keepdims)>;

inline OpDef reduce_def_from(std::string name, std::string importer_name, std::string doc, ReduceFn fn) {
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"data", "axes"},
      .optional_inputs = 1,
      .value_inputs = {"axes"},
      .pattern = OpPattern::reduction,
      .compute =
          [fn](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            check_rank(in[0], "data", 0, 8);
            bool keepdims = flag_attr(attrs, "keepdims", true);
            return std::vector<te::Tensor>{fn(in[0], reduce_axes_mask(in[0].rank(), attrs), keepdims)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = std::move(doc),
  };
}

inline OpDef reduce_def(std::string name, std::string importer_name, std::string doc, ReduceRule rule) {
  std::string op = name;
  return reduce_def_from(std::move(name), std::move(importer_name), std::move(doc),
                         [op, rule](const te::Tensor& x, const std::vector<bool>& mask, bool keepdims) {
                           check_reduce_dtype(x, "data", rule.dtypes);
                           return reduce_over(x, mask, keepdims, rule, op);
                         });
}

inline ir::Expr square(const ir::Expr& e) { return e * e; }
inline ir::Expr magnitude(const ir::Expr& e) { return e.dtype().is_uint() ? e : ir::call(ir::CallOp::abs, e); }
constexpr DtypeRule arithmetic_types{.ints = true};
}  // namespace detail

inline OpDef reduce_l1_def() {
  return detail::reduce_def(
      "reduce_l1", "onnx:ReduceL1", "sum(|data|) over axes",
      {.combiner = ir::Combiner::sum, .dtypes = detail::arithmetic_types, .pre = detail::magnitude});
}
inline OpDef reduce_l2_def() {
  return detail::reduce_def(
      "reduce_l2", "onnx:ReduceL2", "sqrt(sum(data^2)) over axes",
      {.combiner = ir::Combiner::sum, .pre = detail::square, .post = [](const ir::Expr& acc, const ir::Expr&) {
         return ir::call(ir::CallOp::sqrt, acc);
       }});
}
inline OpDef reduce_log_sum_def() {
  return detail::reduce_def("reduce_log_sum", "onnx:ReduceLogSum", "log(sum(data)) over axes",
                            {.combiner = ir::Combiner::sum, .post = [](const ir::Expr& acc, const ir::Expr&) {
                               return ir::call(ir::CallOp::log, acc);
                             }});
}
inline OpDef reduce_log_sum_exp_def() {
  return detail::reduce_def_from("reduce_log_sum_exp", "onnx:ReduceLogSumExp",
                                 "log(sum(exp(data))) over axes, computed stably",
                                 [](const te::Tensor& x, const std::vector<bool>& mask, bool keepdims) {
                                   return reduce_log_sum_exp(x, mask, keepdims);
                                 });
}
inline OpDef reduce_max_def() {
  return detail::reduce_def("reduce_max", "onnx:ReduceMax", "max(data) over axes (any number type or bool)",
                            {.combiner = ir::Combiner::max, .dtypes = {.ints = true, .int_bits = 8, .bools = true}});
}
inline OpDef reduce_mean_def() {
  return detail::reduce_def(
      "reduce_mean", "onnx:ReduceMean", "sum(data) / count over axes (integers: the quotient truncated toward zero)",
      {.combiner = ir::Combiner::sum,
       .dtypes = detail::arithmetic_types,
       .post = [](const ir::Expr& acc, const ir::Expr& count) { return acc / ir::cast(acc.dtype(), count); }});
}
inline OpDef reduce_min_def() {
  return detail::reduce_def("reduce_min", "onnx:ReduceMin", "min(data) over axes (any number type or bool)",
                            {.combiner = ir::Combiner::min, .dtypes = {.ints = true, .int_bits = 8, .bools = true}});
}
inline OpDef reduce_prod_def() {
  return detail::reduce_def("reduce_prod", "onnx:ReduceProd", "product of data over axes",
                            {.combiner = ir::Combiner::prod, .dtypes = detail::arithmetic_types});
}
inline OpDef reduce_sum_def() {
  return detail::reduce_def("reduce_sum", "onnx:ReduceSum", "sum of data over axes",
                            {.combiner = ir::Combiner::sum, .dtypes = detail::arithmetic_types});
}
inline OpDef reduce_sum_square_def() {
  return detail::reduce_def("reduce_sum_square", "onnx:ReduceSumSquare", "sum(data^2) over axes",
                            {.combiner = ir::Combiner::sum, .dtypes = detail::arithmetic_types, .pre = detail::square});
}

}  // namespace ops
NNVM_END_NAMESPACE
