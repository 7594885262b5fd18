// Reductions over axes, and ops built on them (softmax, argmax, cumulative sums, top-k).
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/reduce/arg_reduce.hpp"
#include "nnvm/ops/reduce/cumulative.hpp"
#include "nnvm/ops/reduce/hardmax.hpp"
#include "nnvm/ops/reduce/log_softmax.hpp"
#include "nnvm/ops/reduce/reduce.hpp"
#include "nnvm/ops/reduce/softmax.hpp"
#include "nnvm/ops/reduce/top_k.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> reduce_ops() {
  return {
      argmax_def(),
      argmin_def(),
      cumprod_def(),
      cumsum_def(),
      hardmax_def(),
      log_softmax_def(),
      reduce_l1_def(),
      reduce_l2_def(),
      reduce_log_sum_def(),
      reduce_log_sum_exp_def(),
      reduce_max_def(),
      reduce_mean_def(),
      reduce_min_def(),
      reduce_prod_def(),
      reduce_sum_def(),
      reduce_sum_square_def(),
      softmax_def(),
      top_k_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
