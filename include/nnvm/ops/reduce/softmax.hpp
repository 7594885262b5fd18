// softmax along one axis: Y = exp(X - max(X)) / sum(exp(X - max(X))). ONNX Softmax with the
// opset-13 meaning (normalize along `axis`, default -1); the importer rewrites opset < 13
// models (which flatten to 2-D at `axis`) before they reach this op.
#pragma once

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"
#include "nnvm/ops/schedule_gpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Four stages, as TOPI: the maximum and the sum keep the normalized axis with extent 1.
// Subtracting the maximum keeps exp from overflowing.
inline te::Tensor softmax(const te::Tensor& x, int64_t axis = -1, std::string name = "softmax") {
  check_rank(x, "X", 1, 8);
  check_float(x, "X");
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<ir::Expr> kept = x.shape();
  kept[a] = ir::Expr(int64_t(1));
  auto at = [a](const std::vector<ir::Var>& v, ir::Expr e) {
    std::vector<ir::Expr> idx(v.begin(), v.end());
    idx[a] = std::move(e);
    return idx;
  };
  auto all = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>(v.begin(), v.end()); };
  auto k1 = te::reduce_axis(x.shape()[a], "k");
  te::Tensor mx = te::compute(kept, [&](auto& v) { return te::max_reduce(x(at(v, k1.var())), {k1}); }, name + "_max");
  te::Tensor ex = te::compute(
      x.shape(), [&](auto& v) { return ir::call(ir::CallOp::exp, x(all(v)) - mx(at(v, int64_t(0)))); }, name + "_exp");
  auto k2 = te::reduce_axis(x.shape()[a], "k");
  te::Tensor sm = te::compute(kept, [&](auto& v) { return te::sum(ex(at(v, k2.var())), {k2}); }, name + "_sum");
  return te::compute(x.shape(), [&](auto& v) { return ex(all(v)) / sm(at(v, int64_t(0))); }, std::move(name));
}

// Reductions parallel over their rows; the elementwise stages vectorized along the last axis.
inline void schedule_softmax(schedule::Schedule& s, const te::Tensor& y, const Target& target) {
  // The stages softmax() made, found from its output so no other op's stage is touched.
  te::Tensor ex(y.op().inputs.at(0)), sm(y.op().inputs.at(1)), mx(ex.op().inputs.at(1));
  schedule_reduction(s[mx], target);
  schedule_injective(s[ex], target);
  schedule_reduction(s[sm], target);
  schedule_injective(s[y], target);
}

// GPUs: one kernel, a block per row whose threads reduce the row's maximum and sum together
// (exp recomputed where read); else the generic recipe, stage by stage.
inline void gpu_schedule_softmax(schedule::Schedule& s, const te::Tensor& y, const Target& target) {
  te::Tensor ex(y.op().inputs.at(0)), sm(y.op().inputs.at(1)), mx(ex.op().inputs.at(1));
  if (!gpu_schedule_rows(s, y, {mx, sm}, {ex}, target))
    for (auto& t : {mx, ex, sm, y}) gpu_schedule_stage(s[t], target);
}

inline OpDef softmax_def() {
  return OpDef{
      .name = "softmax",
      .importer_names = {"onnx:Softmax"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{softmax(in[0], attrs.get_int("axis", -1))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_softmax(s, out[0], t); },
      .gpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                         const Target& t) { gpu_schedule_softmax(s, out[0], t); },
      .doc = "exp(X) / sum(exp(X)) along attribute axis (default -1), computed stably",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
