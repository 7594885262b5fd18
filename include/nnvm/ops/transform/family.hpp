// Layout and indexing ops: reshape, transpose, slice, gather, concat, pad, casts and shape queries.
// One sorted list per family; builtin.hpp joins the families.
#pragma once

#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/transform/affine_grid.hpp"
#include "nnvm/ops/transform/cast.hpp"
#include "nnvm/ops/transform/center_crop_pad.hpp"
#include "nnvm/ops/transform/col2im.hpp"
#include "nnvm/ops/transform/concat.hpp"
#include "nnvm/ops/transform/depth_space.hpp"
#include "nnvm/ops/transform/expand.hpp"
#include "nnvm/ops/transform/gather.hpp"
#include "nnvm/ops/transform/generate.hpp"
#include "nnvm/ops/transform/grid_sample.hpp"
#include "nnvm/ops/transform/max_unpool.hpp"
#include "nnvm/ops/transform/one_hot.hpp"
#include "nnvm/ops/transform/pad.hpp"
#include "nnvm/ops/transform/reshape.hpp"
#include "nnvm/ops/transform/resize.hpp"
#include "nnvm/ops/transform/reverse_sequence.hpp"
#include "nnvm/ops/transform/scatter.hpp"
#include "nnvm/ops/transform/shape.hpp"
#include "nnvm/ops/transform/slice.hpp"
#include "nnvm/ops/transform/split.hpp"
#include "nnvm/ops/transform/squeeze.hpp"
#include "nnvm/ops/transform/tensor_scatter.hpp"
#include "nnvm/ops/transform/tfidf_vectorizer.hpp"
#include "nnvm/ops/transform/transpose.hpp"
#include "nnvm/ops/transform/trilu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> transform_ops() {
  return {
      affine_grid_def(),
      bit_cast_def(),
      cast_def(),
      cast_like_def(),
      center_crop_pad_def(),
      col2im_def(),
      concat_def(),
      constant_of_shape_def(),
      depth_to_space_def(),
      expand_def(),
      eye_like_def(),
      flatten_def(),
      gather_def(),
      gather_elements_def(),
      gather_nd_def(),
      grid_sample_def(),
      max_unpool_def(),
      one_hot_def(),
      pad_def(),
      range_def(),
      reshape_def(),
      resize_def(),
      reverse_sequence_def(),
      scatter_elements_def(),
      scatter_nd_def(),
      shape_def(),
      size_def(),
      slice_def(),
      space_to_depth_def(),
      split_def(),
      squeeze_def(),
      tensor_scatter_def(),
      tfidf_vectorizer_def(),
      tile_def(),
      transpose_def(),
      trilu_def(),
      unsqueeze_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
