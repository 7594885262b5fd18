// hardmax along one axis: 1 where the first maximum of each row along `axis` is, 0 elsewhere.
// ONNX Hardmax with the opset-13 meaning (one axis, default -1).
#pragma once

#include "nnvm/ops/reduce/arg_reduce.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The first index of the maximum (arg_reduce, kept dimension), then a one-hot comparison.
inline te::Tensor hardmax(const te::Tensor& x, int64_t axis = -1, std::string name = "hardmax") {
  check_rank(x, "input", 1, 8);
  check_reduce_dtype(x, "input", {});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  te::Tensor index =
      arg_reduce(x, /*is_max=*/true, int64_t(a), /*keepdims=*/true, /*select_last=*/false, name + "_index");
  DataType t = x.dtype();
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr one = index(row_index(v, a)) == ir::Expr(v[a]);
        return ir::cast(t, ir::select(one, ir::make_const(dtype::float32, 1), ir::make_const(dtype::float32, 0)));
      },
      std::move(name));
}

inline OpDef hardmax_def() {
  return OpDef{
      .name = "hardmax",
      .importer_names = {"onnx:Hardmax"},
      .input_names = {"input"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{hardmax(in[0], attrs.get_int("axis", -1))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = "one-hot of the first maximum along attribute axis (default -1)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
