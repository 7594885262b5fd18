// Layout and indexing ops: reshape, transpose, slice, gather, concat, pad, casts and shape queries.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/op_def.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> transform_ops() {
  return {
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
