// Convolutions and pooling: conv1d/2d/3d, depthwise, conv-transpose, max/avg/lp/global pools.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/op_def.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> conv_ops() {
  return {
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
