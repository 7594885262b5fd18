// softmax_cross_entropy_loss: ONNX SoftmaxCrossEntropyLoss (opset 13). scores [N, C] or
// [N, C, d1..dk] become log_prob = log_softmax(scores) over the class axis 1, and the loss is
// negative_log_likelihood_loss(log_prob, labels, weights) with the same reduction and
// ignore_index (out-of-range labels clamped, see nll_loss.hpp). Both outputs are always
// returned: output, and log_prob (ONNX's optional second output, shaped like scores).
#pragma once

#include "nnvm/ops/nn/nll_loss.hpp"
#include "nnvm/ops/reduce/log_softmax.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<te::Tensor> softmax_cross_entropy_loss(const te::Tensor& scores, const te::Tensor& labels,
                                                          const te::Tensor& weights, const std::string& reduction,
                                                          std::optional<int64_t> ignore_index) {
  check_rank(scores, "scores", 2, 8);
  check_float(scores, "scores");
  te::Tensor log_prob = log_softmax(scores, 1, "log_prob");
  te::Tensor loss = nll_loss(log_prob, labels, weights, reduction, ignore_index, "softmax_cross_entropy_loss",
                             "scores", "labels", "weights");
  return {loss, log_prob};
}

inline OpDef softmax_cross_entropy_loss_def() {
  return OpDef{
      .name = "softmax_cross_entropy_loss",
      .importer_names = {"onnx:SoftmaxCrossEntropyLoss"},
      .input_names = {"scores", "labels", "weights"},
      .optional_inputs = 1,
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            te::Tensor w = in.size() > 2 ? in[2] : te::Tensor();
            return softmax_cross_entropy_loss(in[0], in[1], w, loss_reduction(attrs), loss_ignore_index(attrs));
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_stages(s, out, t);
          },
      .doc = "negative_log_likelihood_loss of log_softmax(scores) over axis 1 (reduction none/sum/mean, "
             "ignore_index); outputs the loss and log_prob",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
