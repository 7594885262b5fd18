// The built-in operators: one list, sorted by op name. Adding an op is one file, one include
// and one line here.
#pragma once

#include "nnvm/ops/broadcast/binary.hpp"
#include "nnvm/ops/elementwise/clip.hpp"
#include "nnvm/ops/elementwise/gelu.hpp"
#include "nnvm/ops/elementwise/hard_sigmoid.hpp"
#include "nnvm/ops/elementwise/leaky_relu.hpp"
#include "nnvm/ops/elementwise/relu.hpp"
#include "nnvm/ops/elementwise/softplus.hpp"
#include "nnvm/ops/elementwise/unary.hpp"
#include "nnvm/ops/nn/dense.hpp"
#include "nnvm/ops/nn/softmax.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> builtin_ops() {
  return {
      abs_def(),
      add_def(),
      ceil_def(),
      clip_def(),
      cos_def(),
      dense_def(),
      div_def(),
      erf_def(),
      exp_def(),
      floor_def(),
      gelu_def(),
      hard_sigmoid_def(),
      leaky_relu_def(),
      log_def(),
      max_def(),
      min_def(),
      mul_def(),
      neg_def(),
      pow_def(),
      reciprocal_def(),
      relu_def(),
      sigmoid_def(),
      sin_def(),
      softmax_def(),
      softplus_def(),
      sqrt_def(),
      sub_def(),
      tanh_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
