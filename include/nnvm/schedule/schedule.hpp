// A Schedule holds one Stage per compute operation that the outputs depend on, producers
// first. `s[C]` is the stage of tensor C.
#pragma once

#include "nnvm/schedule/stage.hpp"

NNVM_BEGIN_NAMESPACE
namespace schedule {

class Schedule {
 public:
  Schedule() = default;
  explicit Schedule(std::vector<te::Tensor> outputs) : outputs_(std::move(outputs)) {
    if (outputs_.empty()) throw UserError("nnvm.schedule.no_outputs", "a schedule needs at least one output tensor");
    for (auto& t : te::post_order(outputs_))
      if (t.op().kind == te::OpKind::compute) stages_.emplace_back(t);
  }

  const std::vector<te::Tensor>& outputs() const { return outputs_; }
  // Stages in producer-before-consumer order.
  const std::vector<Stage>& stages() const { return stages_; }

  Stage operator[](const te::Tensor& t) const {
    for (auto& s : stages_)
      if (s.tensor().same_as(t)) return s;
    throw UserError("nnvm.schedule.unknown_tensor",
                    str_cat("tensor ", t.name(), " is not computed by this schedule"
                                                 " (a placeholder, or not an input of its outputs)"));
  }

 private:
  std::vector<te::Tensor> outputs_;
  std::vector<Stage> stages_;
};

inline Schedule create_schedule(std::vector<te::Tensor> outputs) { return Schedule(std::move(outputs)); }
inline Schedule create_schedule(const te::Tensor& output) { return Schedule({output}); }

}  // namespace schedule
NNVM_END_NAMESPACE
