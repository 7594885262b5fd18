// Neural-network ops: dense/matmul, normalizations, attention.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/nn/dense.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> nn_ops() {
  return {
      dense_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
