// Reductions over axes, and ops built on them (softmax, argmax, cumulative sums, top-k).
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/reduce/softmax.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> reduce_ops() {
  return {
      softmax_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
