// Elementwise ops: one input element makes one output element.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/elementwise/clip.hpp"
#include "nnvm/ops/elementwise/elu.hpp"
#include "nnvm/ops/elementwise/gelu.hpp"
#include "nnvm/ops/elementwise/hard_sigmoid.hpp"
#include "nnvm/ops/elementwise/hard_swish.hpp"
#include "nnvm/ops/elementwise/identity.hpp"
#include "nnvm/ops/elementwise/is_nan_inf.hpp"
#include "nnvm/ops/elementwise/leaky_relu.hpp"
#include "nnvm/ops/elementwise/mish.hpp"
#include "nnvm/ops/elementwise/not.hpp"
#include "nnvm/ops/elementwise/relu.hpp"
#include "nnvm/ops/elementwise/shrink.hpp"
#include "nnvm/ops/elementwise/sign.hpp"
#include "nnvm/ops/elementwise/softplus.hpp"
#include "nnvm/ops/elementwise/softsign.hpp"
#include "nnvm/ops/elementwise/swish.hpp"
#include "nnvm/ops/elementwise/thresholded_relu.hpp"
#include "nnvm/ops/elementwise/unary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> elementwise_ops() {
  return {
      abs_def(),
      acos_def(),
      acosh_def(),
      asin_def(),
      asinh_def(),
      atan_def(),
      atanh_def(),
      bitwise_not_def(),
      ceil_def(),
      celu_def(),
      clip_def(),
      cos_def(),
      cosh_def(),
      dropout_def(),
      elu_def(),
      erf_def(),
      exp_def(),
      floor_def(),
      gelu_def(),
      hard_sigmoid_def(),
      hard_swish_def(),
      identity_def(),
      isinf_def(),
      isnan_def(),
      leaky_relu_def(),
      log_def(),
      mish_def(),
      neg_def(),
      not_def(),
      reciprocal_def(),
      relu_def(),
      round_def(),
      selu_def(),
      shrink_def(),
      sigmoid_def(),
      sign_def(),
      sin_def(),
      sinh_def(),
      softplus_def(),
      softsign_def(),
      sqrt_def(),
      swish_def(),
      tan_def(),
      tanh_def(),
      thresholded_relu_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
