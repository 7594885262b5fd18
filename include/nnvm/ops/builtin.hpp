// The built-in operators: one list, sorted by op name. Adding an op is one file, one include
// and one line here.
#pragma once

#include "nnvm/ops/elementwise/relu.hpp"
#include "nnvm/ops/nn/dense.hpp"
#include "nnvm/ops/nn/softmax.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> builtin_ops() {
  return {
      dense_def(),
      relu_def(),
      softmax_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
