// Convolutions and pooling: conv1d/2d/3d, depthwise, conv-transpose, max/avg/lp/global pools,
// deformable convolution, RoiAlign, and the blocked NCHW[x]c convolutions with their layout
// transform.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/conv/average_pool.hpp"
#include "nnvm/ops/conv/conv.hpp"
#include "nnvm/ops/conv/conv_nchwc.hpp"
#include "nnvm/ops/conv/conv_transpose.hpp"
#include "nnvm/ops/conv/deform_conv.hpp"
#include "nnvm/ops/conv/depthwise_conv_nchwc.hpp"
#include "nnvm/ops/conv/global_pool.hpp"
#include "nnvm/ops/conv/layout_transform.hpp"
#include "nnvm/ops/conv/lp_pool.hpp"
#include "nnvm/ops/conv/max_pool.hpp"
#include "nnvm/ops/conv/roi_align.hpp"
#include "nnvm/ops/op_def.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> conv_ops() {
  return {
      average_pool_def(),
      conv_def(),
      conv_nchwc_def(),
      conv_transpose_def(),
      deform_conv_def(),
      depthwise_conv_nchwc_def(),
      global_average_pool_def(),
      global_lp_pool_def(),
      global_max_pool_def(),
      layout_transform_def(),
      lp_pool_def(),
      max_pool_def(),
      roi_align_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
