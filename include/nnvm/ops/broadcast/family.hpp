// Broadcasting ops: elementwise after broadcasting the inputs to one shape (NumPy rules).
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/broadcast/binary.hpp"
#include "nnvm/ops/broadcast/bitwise.hpp"
#include "nnvm/ops/broadcast/compare.hpp"
#include "nnvm/ops/broadcast/logical.hpp"
#include "nnvm/ops/broadcast/mod.hpp"
#include "nnvm/ops/broadcast/prelu.hpp"
#include "nnvm/ops/broadcast/variadic.hpp"
#include "nnvm/ops/broadcast/where.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> broadcast_ops() {
  return {
      add_def(),
      and_def(),
      bit_shift_def(),
      bitwise_and_def(),
      bitwise_or_def(),
      bitwise_xor_def(),
      div_def(),
      equal_def(),
      greater_def(),
      greater_or_equal_def(),
      less_def(),
      less_or_equal_def(),
      max_def(),
      mean_def(),
      min_def(),
      mod_def(),
      mul_def(),
      or_def(),
      pow_def(),
      prelu_def(),
      sub_def(),
      sum_def(),
      where_def(),
      xor_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
