// The built-in operators, joined from one sorted list per family (each family's family.hpp) and
// sorted by name.
// Adding an op is one file, one include and one line in its family's list.
#pragma once

#include "nnvm/ops/broadcast/family.hpp"
#include "nnvm/ops/conv/family.hpp"
#include "nnvm/ops/elementwise/family.hpp"
#include "nnvm/ops/ml/family.hpp"
#include "nnvm/ops/nn/family.hpp"
#include "nnvm/ops/quant/family.hpp"
#include "nnvm/ops/reduce/family.hpp"
#include "nnvm/ops/transform/family.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> builtin_ops() {
  std::vector<OpDef> all;
  for (auto family : {broadcast_ops, conv_ops, elementwise_ops, ml_ops, nn_ops, quant_ops, reduce_ops, transform_ops})
    for (auto& def : family()) all.push_back(std::move(def));
  std::sort(all.begin(), all.end(), [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
  return all;
}

}  // namespace ops
NNVM_END_NAMESPACE
