// squeeze and unsqueeze (ONNX Squeeze/Unsqueeze, opset 13+: axes is an input): remove or insert
// axes of extent 1. Each is an index mapping, with no division.
#pragma once

#include <optional>

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Without `axes`, removes every axis whose extent is the constant 1 (a symbolic extent stays).
// A listed axis whose extent is not 1 is "nnvm.ops.input_shape".
inline te::Tensor squeeze(const te::Tensor& x, const std::optional<std::vector<int64_t>>& axes,
                          std::string name = "squeeze") {
  using namespace transform_detail;
  std::vector<bool> drop(x.rank(), false);
  if (axes) {
    for (size_t a : normalize_axes(*axes, x.rank(), "axes")) {
      if (!ir::is_const_int(ir::simplify(x.shape()[a]), 1))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("axes names axis ", a, " of input data, whose extent is ",
                                ir::to_string(x.shape()[a]), ", not 1"),
                        {"input axes"});
      drop[a] = true;
    }
  } else {
    for (size_t d = 0; d < x.rank(); ++d) drop[d] = ir::is_const_int(ir::simplify(x.shape()[d]), 1);
  }
  std::vector<ir::Expr> shape;
  for (size_t d = 0; d < x.rank(); ++d)
    if (!drop[d]) shape.push_back(x.shape()[d]);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        size_t k = 0;
        for (size_t d = 0; d < x.rank(); ++d) idx.push_back(drop[d] ? ir::Expr(int64_t(0)) : ir::Expr(v[k++]));
        return x(idx);
      },
      std::move(name));
}

// Inserts extent-1 axes at the positions `axes` name in the output (rank + axes.size()).
inline te::Tensor unsqueeze(const te::Tensor& x, const std::vector<int64_t>& axes, std::string name = "unsqueeze") {
  using namespace transform_detail;
  size_t rank = x.rank() + axes.size();
  std::vector<bool> added(rank, false);
  for (size_t a : normalize_axes(axes, rank, "axes")) added[a] = true;
  std::vector<ir::Expr> shape;
  for (size_t d = 0, k = 0; d < rank; ++d) shape.push_back(added[d] ? ir::Expr(int64_t(1)) : x.shape()[k++]);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < rank; ++d)
          if (!added[d]) idx.push_back(v[d]);
        return x(idx);
      },
      std::move(name));
}

inline OpDef squeeze_def() {
  return OpDef{
      .name = "squeeze",
      .importer_names = {"onnx:Squeeze"},
      .input_names = {"data", "axes"},
      .optional_inputs = 1,
      .value_inputs = {"axes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::optional<std::vector<int64_t>> axes;
            if (transform_detail::given(in, 1)) axes = attrs.get_ints("axes");
            return std::vector<te::Tensor>{squeeze(in[0], axes)};
          },
      .doc = "data without the extent-1 axes named by value input axes (without axes: every constant 1)",
  };
}

inline OpDef unsqueeze_def() {
  return OpDef{
      .name = "unsqueeze",
      .importer_names = {"onnx:Unsqueeze"},
      .input_names = {"data", "axes"},
      .value_inputs = {"axes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{unsqueeze(in[0], attrs.get_ints("axes"))};
          },
      .doc = "data with extent-1 axes inserted at the output positions named by value input axes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
