// affine_grid (ONNX AffineGrid, PyTorch's affine_grid): the sampling grid grid_sample reads.
// theta is (N, 2, 3) for 2-D or (N, 3, 4) for 3-D; size (a value input) is (N, C, H, W) or
// (N, C, D, H, W). Output (N, H, W, 2) or (N, D, H, W, 3): at each point the affine map theta
// applied to the point's normalized coordinates (x, y[, z], 1), x along the last axis (W).
// A coordinate along an axis of extent n runs over [-1, 1]: with align_corners, -1 and 1 are the
// centers of the corner pixels (-1 + 2i / (n - 1), and -1 when n is 1); without, their outer
// edges (-1 + (2i + 1) / n). Arithmetic in theta's type (float32 for float16 and bfloat16).
#pragma once

#include "nnvm/ops/elementwise/dtypes.hpp"
#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor affine_grid(const te::Tensor& theta, const std::vector<int64_t>& size, bool align_corners = false,
                              std::string name = "affine_grid") {
  using namespace transform_detail;
  check_rank(theta, "theta", 3);
  check_input_kind(theta, "theta", DtypeKind::float_);
  if (size.size() != 4 && size.size() != 5)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input size has ", size.size(), " values, expected 4 (N, C, H, W) or 5 (N, C, D, H, W)"),
                    {"input size"});
  for (int64_t e : size)
    if (e < 1 || uint64_t(e) > max_tensor_bytes)
      throw UserError("nnvm.ops.input_shape", str_cat("input size holds ", e, "; extents must lie in [1, 2^48]"),
                      {"input size"});
  size_t r = size.size() - 2;
  // A symbolic batch extent of theta is taken as size's; a constant one must equal it.
  if (auto n = ir::simplified_const_int(theta.shape()[0]); n && *n != size[0])
    throw UserError("nnvm.ops.input_shape", str_cat("input theta has batch extent ", *n, " but size says ", size[0]),
                    {"input theta"});
  int64_t rows = const_extent(theta.shape()[1], "axis 1 of theta");
  int64_t cols = const_extent(theta.shape()[2], "axis 2 of theta");
  if (rows != int64_t(r) || cols != int64_t(r + 1))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input theta is (N, ", rows, ", ", cols, "), expected (N, ", r, ", ", r + 1, ") for ", r,
                            "-D size"),
                    {"input theta"});
  std::vector<ir::Expr> shape{theta.shape()[0]};
  for (size_t d = 0; d < r; ++d) shape.emplace_back(size[2 + d]);
  shape.emplace_back(int64_t(r));
  DataType t = theta.dtype(), at = arith_type(t);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr n = v[0], j = v[r + 1];
        auto weight = [&](int64_t k) { return ir::cast(at, theta({n, j, ir::Expr(k)})); };
        ir::Expr value = weight(int64_t(r));
        // Coordinate k (x, y, z) runs along spatial axis r - 1 - k of the output.
        for (size_t k = 0; k < r; ++k) {
          size_t axis = r - 1 - k;
          double extent = double(size[2 + axis]);
          ir::Expr i = ir::cast(at, v[1 + axis]), c;
          if (!align_corners) c = (i * 2.0 + 1.0) / extent - 1.0;
          else if (extent > 1) c = i * (2.0 / (extent - 1)) - 1.0;
          else c = ir::make_const(at, -1.0);
          value = value + weight(int64_t(k)) * c;
        }
        return ir::cast(t, value);
      },
      std::move(name));
}

inline OpDef affine_grid_def() {
  return OpDef{
      .name = "affine_grid",
      .importer_names = {"onnx:AffineGrid"},
      .input_names = {"theta", "size"},
      .value_inputs = {"size"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                affine_grid(in[0], attrs.get_ints("size"), attrs.get_int("align_corners", 0) != 0)};
          },
      .doc = "the sampling grid of the affine maps theta over a 2-D or 3-D size (value input; attribute align_corners)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
