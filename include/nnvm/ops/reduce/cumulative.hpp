// cumsum / cumprod along one axis: ONNX CumSum (opset 14) and CumProd (opset 26). The axis is the
// value input "axis" (a scalar); attributes exclusive (default 0: element i is included in
// output i) and reverse (default 0: accumulate from the front).
//
// Cost: each output element is its own reduction over the whole axis, guarded to the elements
// before (or after) it, so a row of n elements costs O(n^2). Correct first; a scan primitive
// would make it O(n).
#pragma once

#include "nnvm/ops/reduce/reduce_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Arithmetic runs in compute_dtype(x); float16/bfloat16 get a cast back ("<name>_acc" -> name).
inline te::Tensor cumulative(const te::Tensor& x, ir::Combiner combiner, int64_t axis, bool exclusive, bool reverse,
                             std::string name) {
  check_rank(x, "x", 1, 8);
  check_reduce_dtype(x, "x", {.ints = true});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  DataType t = x.dtype(), ct = compute_dtype(t);
  auto r = te::reduce_axis(x.shape()[a], "r");
  bool cast_back = ct != t;
  te::Tensor acc = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx = as_index(v);
        idx[a] = r.var();
        ir::Expr k = r.var(), i = v[a];
        ir::Expr take = reverse ? (exclusive ? k > i : k >= i) : (exclusive ? k < i : k <= i);
        return ir::Reduce::make(combiner, load_compute(x, idx), {r}, ir::Expr(), take);
      },
      cast_back ? name + "_acc" : name);
  if (!cast_back) return acc;
  return te::compute(
      x.shape(), [&](const std::vector<ir::Var>& v) { return ir::cast(t, acc(as_index(v))); }, std::move(name));
}

namespace detail {
inline OpDef cumulative_def(std::string name, std::string importer_name, ir::Combiner combiner, std::string doc) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"x", "axis"},
      .value_inputs = {"axis"},
      .pattern = OpPattern::reduction,
      .compute =
          [op, combiner](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const std::vector<int64_t>& axis = attrs.get_ints("axis");
            if (axis.size() != 1)
              throw UserError("nnvm.ops.attr", str_cat("input axis holds ", axis.size(), " values, expected one"),
                              {"input axis"});
            return std::vector<te::Tensor>{cumulative(in[0], combiner, axis[0], flag_attr(attrs, "exclusive", false),
                                                      flag_attr(attrs, "reverse", false), op)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = std::move(doc),
  };
}
}  // namespace detail

inline OpDef cumprod_def() {
  return detail::cumulative_def("cumprod", "onnx:CumProd", ir::Combiner::prod,
                                "running product along input axis (exclusive, reverse); O(n^2) per row");
}
inline OpDef cumsum_def() {
  return detail::cumulative_def("cumsum", "onnx:CumSum", ir::Combiner::sum,
                                "running sum along input axis (exclusive, reverse); O(n^2) per row");
}

}  // namespace ops
NNVM_END_NAMESPACE
