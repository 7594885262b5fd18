// negative_log_likelihood_loss: ONNX NegativeLogLikelihoodLoss (opset 22). input is [N, C] or
// [N, C, d1..dk] (log-probabilities), target [N] or [N, d1..dk] holds class indices; each
// element's loss is -input[n, target, d..] * weight[target] (weight defaults to 1). A target
// equal to attribute ignore_index contributes 0 and, for reduction "mean", no weight.
// Reduction "none" keeps target's shape; "sum" and "mean" (the default, sum / sum of the
// weights used) give a scalar. Kernels cannot fail, so a target outside [0, C) that is not
// ignore_index is clamped to the nearest class (ONNX leaves it undefined; its reference clips
// the weight gather the same way).
#pragma once

#include <optional>

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The ONNX reduction attribute: "none", "sum" or "mean" (default); "nnvm.ops.attr" otherwise.
inline std::string loss_reduction(const Attrs& attrs) {
  std::string r = attrs.get_string("reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean")
    throw UserError("nnvm.ops.attr", str_cat("attribute 'reduction' is '", r, "' but must be none, sum or mean"),
                    {"attribute reduction"});
  return r;
}

inline std::optional<int64_t> loss_ignore_index(const Attrs& attrs) {
  if (!attrs.has("ignore_index")) return std::nullopt;
  return attrs.get_int("ignore_index");
}

// `input` is read as log-probabilities; `weight` may be undefined (no weights). Shared by
// softmax_cross_entropy_loss, which passes its log_softmax.
inline te::Tensor nll_loss(const te::Tensor& input, const te::Tensor& target, const te::Tensor& weight,
                           const std::string& reduction, std::optional<int64_t> ignore_index,
                           const std::string& name = "nll_loss", const char* input_name = "input",
                           const char* target_name = "target", const char* weight_name = "weight") {
  check_rank(input, input_name, 2, 8);
  check_norm_float(input, input_name);
  check_rank(target, target_name, input.rank() - 1);
  if (target.dtype() != dtype::int32 && target.dtype() != dtype::int64)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", target_name, " (tensor ", target.name(), ") is ", target.dtype(),
                            ", expected int32 or int64"),
                    {"input " + std::string(target_name)});
  for (size_t d = 0; d < target.rank(); ++d)
    check_same_extent(target.shape()[d], input.shape()[d == 0 ? 0 : d + 1],
                      str_cat("extent ", d, " of input ", target_name, " and extent ", d == 0 ? 0 : d + 1,
                              " of input ", input_name));
  const ir::Expr& classes = input.shape()[1];
  if (weight.defined()) {
    check_same_dtype(weight, weight_name, input, input_name);
    check_channel_param(weight, weight_name, classes);
  }
  DataType t = input.dtype(), ct = norm_compute_type(t);

  // The ignore test, the clamped class and the weight used at target index i.
  auto kept = [&](const ir::Expr& cls) {
    return ignore_index ? cls != ir::Expr(*ignore_index) : ir::const_true();
  };
  auto element = [&](const std::vector<ir::Expr>& i, bool want_weight) {
    ir::Expr cls = ir::cast(dtype::index, target(i));
    ir::Expr c = ir::min(ir::max(cls, ir::Expr(int64_t(0))), classes - int64_t(1));
    ir::Expr w = weight.defined() ? ir::cast(ct, weight({c})) : ir::make_const(ct, 1.0);
    if (want_weight) return ir::select(kept(cls), w, ir::make_zero(ct));
    std::vector<ir::Expr> at = {i[0], c};
    at.insert(at.end(), i.begin() + 1, i.end());
    // A select, not a multiply by 0: an ignored element may point at -inf.
    return ir::select(kept(cls), -(ir::cast(ct, input(at)) * w), ir::make_zero(ct));
  };

  if (reduction == "none")
    return te::compute(
        target.shape(), [&](const std::vector<ir::Var>& v) { return ir::cast(t, element({v.begin(), v.end()}, false)); },
        name);

  auto total = [&](bool want_weight, const std::string& stage) {
    std::vector<ir::IterVar> axes;
    std::vector<ir::Expr> idx;
    for (size_t d = 0; d < target.rank(); ++d) {
      axes.push_back(te::reduce_axis(target.shape()[d], str_cat("r", d)));
      idx.push_back(axes.back().var());
    }
    return te::compute({}, [&](const std::vector<ir::Var>&) { return te::sum(element(idx, want_weight), axes); },
                       stage);
  };
  te::Tensor loss_sum = total(false, name + "_sum");
  if (reduction == "sum")
    return te::compute({}, [&](const std::vector<ir::Var>&) { return ir::cast(t, loss_sum({})); }, name);
  te::Tensor weight_sum = total(true, name + "_weight_sum");
  // Every element ignored gives 0 / 0 = NaN, as the ONNX reference does.
  return te::compute(
      {}, [&](const std::vector<ir::Var>&) { return ir::cast(t, loss_sum({}) / weight_sum({})); }, name);
}

inline OpDef negative_log_likelihood_loss_def() {
  return OpDef{
      .name = "negative_log_likelihood_loss",
      .importer_names = {"onnx:NegativeLogLikelihoodLoss"},
      .input_names = {"input", "target", "weight"},
      .optional_inputs = 1,
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            te::Tensor w = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{
                nll_loss(in[0], in[1], w, loss_reduction(attrs), loss_ignore_index(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_stages(s, out, t);
          },
      .doc = "-input[n, target, d..] * weight[target], reduced by attribute reduction (none/sum/mean); "
             "ignore_index skipped; out-of-range targets clamped",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
