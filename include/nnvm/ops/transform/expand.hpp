// expand (ONNX Expand) and tile (ONNX Tile): the input repeated to a larger shape, by
// broadcasting or by whole copies.
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"
#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The broadcast of input's shape with `shape` (both ways: a 1 in `shape` keeps the input's
// extent, as ONNX Expand says). Broadcast failures are "nnvm.ops.input_shape".
inline te::Tensor expand(const te::Tensor& x, const std::vector<int64_t>& shape, std::string name = "expand") {
  std::vector<ir::Expr> want;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input shape[", d, "] is ", shape[d], "; extents must be positive"), {"input shape"});
    want.emplace_back(shape[d]);
  }
  std::vector<ir::Expr> out;
  try {
    out = broadcast_shape(x.shape(), want);
  } catch (const UserError& e) {
    throw UserError("nnvm.ops.input_shape", str_cat("input and shape do not broadcast: ", e.message()), {"input shape"});
  }
  return te::compute(
      out, [&](const std::vector<ir::Var>& v) { return x(broadcast_indices(x, v)); }, std::move(name));
}

// Output extent d is x's extent d times repeats[d]; element i reads i mod x's extent.
inline te::Tensor tile(const te::Tensor& x, const std::vector<int64_t>& repeats, std::string name = "tile") {
  if (repeats.size() != x.rank())
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input repeats has ", repeats.size(), " elements but input has rank ", x.rank()),
                    {"input repeats"});
  std::vector<ir::Expr> shape;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (repeats[d] <= 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input repeats[", d, "] is ", repeats[d], "; repeats must be positive"),
                      {"input repeats"});
    shape.push_back(ir::simplify(x.shape()[d] * repeats[d]));
  }
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < v.size(); ++d) idx.push_back(repeats[d] == 1 ? ir::Expr(v[d]) : v[d] % x.shape()[d]);
        return x(idx);
      },
      std::move(name));
}

inline OpDef expand_def() {
  return OpDef{
      .name = "expand",
      .importer_names = {"onnx:Expand"},
      .input_names = {"input", "shape"},
      .value_inputs = {"shape"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{expand(in[0], attrs.get_ints("shape"))};
          },
      .doc = "input broadcast with value input shape (both ways)",
  };
}

inline OpDef tile_def() {
  return OpDef{
      .name = "tile",
      .importer_names = {"onnx:Tile"},
      .input_names = {"input", "repeats"},
      .value_inputs = {"repeats"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{tile(in[0], attrs.get_ints("repeats"))};
          },
      .doc = "input repeated repeats[d] times along each axis d (value input repeats)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
