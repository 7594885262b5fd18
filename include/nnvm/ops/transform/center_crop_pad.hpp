// center_crop_pad: ONNX CenterCropPad (opset 18). Each axis in attribute `axes` (default: all) is
// cropped or zero-padded to the extent in value input `shape`, keeping the center: a crop drops
// floor(diff / 2) elements at the start and the rest at the end; a pad adds floor(diff / 2) zeros
// at the start and the rest at the end. Any element type.
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor center_crop_pad(const te::Tensor& x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes_in,
                                  std::string name = "center_crop_pad") {
  using namespace transform_detail;
  std::vector<int64_t> all;
  for (size_t d = 0; d < x.rank(); ++d) all.push_back(int64_t(d));
  std::vector<size_t> axes = normalize_axes(axes_in.empty() ? all : axes_in, x.rank(), "axes");
  if (shape.size() != axes.size())
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input shape has ", shape.size(), " elements, expected ", axes.size(), " (one per axis in axes)"),
                    {"input shape"});
  // Per axis: the offset added to an output index to get the input index (negative: padding).
  std::vector<int64_t> offset(x.rank(), 0), extent(x.rank(), 0);
  std::vector<bool> padded(x.rank(), false);
  std::vector<ir::Expr> out = x.shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = axes[i];
    if (shape[i] < 0)
      throw UserError("nnvm.ops.input_shape", str_cat("input shape asks extent ", shape[i], " for axis ", a), {"input shape"});
    int64_t n = const_extent(x.shape()[a], str_cat("axis ", a, " of input input_data"));
    extent[a] = n;
    out[a] = ir::Expr(shape[i]);
    if (shape[i] < n) offset[a] = (n - shape[i]) / 2;
    if (shape[i] > n) offset[a] = -((shape[i] - n) / 2), padded[a] = true;
  }
  return te::compute(
      out,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr inside;
        for (size_t d = 0; d < x.rank(); ++d) {
          if (offset[d] != 0) idx[d] = idx[d] + offset[d];
          if (!padded[d]) continue;
          ir::Expr in = idx[d] >= int64_t(0) && idx[d] < extent[d];
          inside = inside.defined() ? (inside && in) : in;
          idx[d] = ir::min(ir::max(idx[d], ir::Expr(int64_t(0))), ir::Expr(extent[d] - 1));
        }
        ir::Expr value = x(idx);
        return inside.defined() ? ir::select(inside, value, ir::make_zero(x.dtype())) : value;
      },
      std::move(name));
}

inline OpDef center_crop_pad_def() {
  return OpDef{
      .name = "center_crop_pad",
      .importer_names = {"onnx:CenterCropPad"},
      .input_names = {"input_data", "shape"},
      .value_inputs = {"shape"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{center_crop_pad(in[0], attrs.get_ints("shape"), attrs.get_ints("axes", {}))};
          },
      .doc = "input_data center-cropped or zero-padded to value input shape over attribute axes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
