// argmax / argmin along one axis: the int64 index of the largest / smallest element. ONNX ArgMax
// and ArgMin (opset 13): attributes axis (default 0), keepdims (default 1), select_last_index
// (default 0: the first of equal extremes).
#pragma once

#include "nnvm/ops/reduce/reduce_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Two reductions: the extreme value ("<name>_best"), then the first (or last) index holding it.
// The index search starts from the last (or first) index, so even when no element equals the
// extreme (NaN inputs) the result is a valid index.
inline te::Tensor arg_reduce(const te::Tensor& x, bool is_max, int64_t axis, bool keepdims, bool select_last,
                             std::string name) {
  check_rank(x, "data", 1, 8);
  check_reduce_dtype(x, "data", {.ints = true, .int_bits = 8});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<bool> mask(x.rank(), false);
  mask[a] = true;
  DataType ct = compute_dtype(x.dtype());
  std::vector<ir::Expr> shape = reduced_shape(x.shape(), mask, keepdims);
  ir::Expr n = x.shape()[a];
  auto r = te::reduce_axis(n, "r");
  te::Tensor best = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        return ir::Reduce::make(is_max ? ir::Combiner::max : ir::Combiner::min,
                                load_compute(x, unreduced_index(v, mask, keepdims, {r.var()})), {r},
                                is_max ? lowest_value(ct) : highest_value(ct));
      },
      name + "_best");
  auto s = te::reduce_axis(n, "s");
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr hit = load_compute(x, unreduced_index(v, mask, keepdims, {s.var()})) == best(as_index(v));
        ir::Expr k = s.var();
        return select_last ? ir::Reduce::make(ir::Combiner::max, k, {s}, ir::make_zero(dtype::index), hit)
                           : ir::Reduce::make(ir::Combiner::min, k, {s}, ir::simplify(n - int64_t(1)), hit);
      },
      std::move(name));
}

namespace detail {
inline OpDef arg_reduce_def(std::string name, std::string importer_name, bool is_max, std::string doc) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"data"},
      .pattern = OpPattern::reduction,
      .compute =
          [op, is_max](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{arg_reduce(in[0], is_max, attrs.get_int("axis", 0),
                                                      flag_attr(attrs, "keepdims", true),
                                                      flag_attr(attrs, "select_last_index", false), op)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = std::move(doc),
  };
}
}  // namespace detail

inline OpDef argmax_def() {
  return detail::arg_reduce_def("argmax", "onnx:ArgMax", true, "int64 index of the largest element along axis");
}
inline OpDef argmin_def() {
  return detail::arg_reduce_def("argmin", "onnx:ArgMin", false, "int64 index of the smallest element along axis");
}

}  // namespace ops
NNVM_END_NAMESPACE
