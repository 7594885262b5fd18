// Elementwise ops: one input element makes one output element.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/elementwise/clip.hpp"
#include "nnvm/ops/elementwise/gelu.hpp"
#include "nnvm/ops/elementwise/hard_sigmoid.hpp"
#include "nnvm/ops/elementwise/leaky_relu.hpp"
#include "nnvm/ops/elementwise/relu.hpp"
#include "nnvm/ops/elementwise/softplus.hpp"
#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> elementwise_ops() {
  return {
      abs_def(),
      ceil_def(),
      clip_def(),
      cos_def(),
      erf_def(),
      exp_def(),
      floor_def(),
      gelu_def(),
      hard_sigmoid_def(),
      leaky_relu_def(),
      log_def(),
      neg_def(),
      reciprocal_def(),
      relu_def(),
      sigmoid_def(),
      sin_def(),
      softplus_def(),
      sqrt_def(),
      tanh_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
