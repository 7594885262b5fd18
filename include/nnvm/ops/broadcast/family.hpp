// Broadcasting ops: elementwise after broadcasting the inputs to one shape (NumPy rules).
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/broadcast/binary.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> broadcast_ops() {
  return {
      add_def(),
      div_def(),
      max_def(),
      min_def(),
      mul_def(),
      pow_def(),
      sub_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
