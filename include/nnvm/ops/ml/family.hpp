// Classical machine-learning models as tensor computations (ONNX's ai.onnx.ml domain): tree
// ensembles, with their structure unrolled from the attributes.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/ml/tree_ensemble.hpp"
#include "nnvm/ops/op_def.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> ml_ops() {
  return {
      tree_ensemble_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
