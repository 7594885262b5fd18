// log_softmax along one axis: Y = X - max(X) - log(sum(exp(X - max(X)))). ONNX LogSoftmax with
// the opset-13 meaning (one axis, default -1).
#pragma once

#include "nnvm/ops/reduce/reduce_common.hpp"
#include "nnvm/ops/schedule_gpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Three stages: the maximum and the sum of exponentials keep the axis with extent 1. Subtracting
// the maximum keeps exp from overflowing, and the log of a sum of at least exp(0) = 1 never
// underflows to log(0).
inline te::Tensor log_softmax(const te::Tensor& x, int64_t axis = -1, std::string name = "log_softmax") {
  check_rank(x, "input", 1, 8);
  check_float(x, "input");
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<ir::Expr> kept = x.shape();
  kept[a] = ir::Expr(int64_t(1));
  auto along = [a](const std::vector<ir::Var>& v, const ir::IterVar& k) {
    std::vector<ir::Expr> idx = as_index(v);
    idx[a] = k.var();
    return idx;
  };
  auto k1 = te::reduce_axis(x.shape()[a], "r");
  te::Tensor mx = te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) { return te::max_reduce(x(along(v, k1)), {k1}, lowest_value(x.dtype())); },
      name + "_max");
  auto k2 = te::reduce_axis(x.shape()[a], "s");
  te::Tensor sm = te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) {
        return te::sum(ir::call(ir::CallOp::exp, x(along(v, k2)) - mx(as_index(v))), {k2});
      },
      name + "_sum");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        auto row = row_index(v, a);
        return x(as_index(v)) - mx(row) - ir::call(ir::CallOp::log, sm(row));
      },
      std::move(name));
}

// GPUs: one kernel, a block per row whose threads reduce the row's maximum and sum of
// exponentials together; else the generic recipe, stage by stage.
inline void gpu_schedule_log_softmax(schedule::Schedule& s, const te::Tensor& y, const Target& target) {
  te::Tensor mx(y.op().inputs.at(1)), sm(y.op().inputs.at(2));
  if (!gpu_schedule_rows(s, y, {mx, sm}, {}, target))
    for (auto& t : {mx, sm, y}) gpu_schedule_stage(s[t], target);
}

inline OpDef log_softmax_def() {
  return OpDef{
      .name = "log_softmax",
      .importer_names = {"onnx:LogSoftmax"},
      .input_names = {"input"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{log_softmax(in[0], attrs.get_int("axis", -1))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .gpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                         const Target& t) { gpu_schedule_log_softmax(s, out[0], t); },
      .doc = "X - log(sum(exp(X))) along attribute axis (default -1), computed stably",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
