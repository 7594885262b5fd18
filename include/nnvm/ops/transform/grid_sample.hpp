// grid_sample: ONNX GridSample (opset 22), for any number r >= 1 of spatial axes (2-D images and
// 3-D volumes). X is (N, C, D1..Dr) and grid (N, H1..Hr, r) holds normalized coordinates in
// [-1, 1], last spatial axis first (grid[..., 0] indexes Dr). Y is (N, C, H1..Hr).
//
// Per spatial axis, as the ONNX reference (after PyTorch's grid_sampler): the coordinate is
// denormalized (align_corners: -1 and 1 are the centers of the corner pixels; else their outer
// edges), rounded half to even for mode nearest, and, when outside the border ([0, D - 1] with
// align_corners, else [-0.5, D - 0.5]), clamped to [0, D - 1] (padding_mode border) or reflected
// back inside (reflection). Mode linear weights 2 taps per axis, cubic 4 (Keys, a = -0.75). A
// tap outside the input reads 0 (zeros), the nearest edge pixel (border) or its reflection; every
// read index is clamped into the input, so no kernel read leaves X whatever the grid holds.
// Coordinates are clamped to [-(D + 4), D + 4] before becoming integers, and a NaN coordinate
// counts as -(D + 4) (ONNX leaves it undefined): with zeros padding it reads 0. Coordinates are computed in the grid's arithmetic type (float32 unless float64), the
// reflection in float64, the weighted sum in float32 (float64 for float64 X or grid).
#pragma once

#include <cmath>

#include "nnvm/ops/elementwise/dtypes.hpp"
#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct GridSampleSpec {
  std::string mode = "linear";  // linear, nearest, cubic (opset 16's bilinear/bicubic accepted)
  std::string padding_mode = "zeros";
  bool align_corners = false;
};

namespace grid_sample_detail {

// Reflects x (float64) into [lo, hi] by repeated mirroring at the nearer border.
inline ir::Expr reflect(const ir::Expr& x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return ir::select(x < lo || x > hi, ir::Expr(lo), x);
  auto fold = [&](const ir::Expr& dx, double near, double far) {
    ir::Expr n = ir::call(ir::CallOp::trunc, dx / range);
    ir::Expr rest = dx - n * range;
    ir::Expr even = ir::call(ir::CallOp::fmod, n, ir::Expr(2.0)) == 0.0;
    return ir::select(even, near < far ? ir::Expr(near) + rest : ir::Expr(near) - rest,
                      near < far ? ir::Expr(far) - rest : ir::Expr(far) + rest);
  };
  return ir::select(x < lo, fold(ir::Expr(lo) - x, lo, hi), ir::select(x > hi, fold(x - hi, hi, lo), x));
}

// One Keys cubic weight for a tap at distance d (|d| < 2), a = -0.75.
inline ir::Expr cubic_weight(const ir::Expr& d, bool near) {
  const double a = -0.75;
  DataType t = d.dtype();
  return near ? ((ir::make_const(t, a + 2) * d - (a + 3)) * d) * d + 1.0
              : ((ir::make_const(t, a) * d - 5 * a) * d + 8 * a) * d - 4 * a;
}

}  // namespace grid_sample_detail

inline te::Tensor grid_sample(const te::Tensor& x, const te::Tensor& grid, const GridSampleSpec& spec,
                              std::string name = "grid_sample") {
  using namespace transform_detail;
  namespace gd = grid_sample_detail;
  std::string mode = spec.mode == "bilinear" ? "linear" : spec.mode == "bicubic" ? "cubic" : spec.mode;
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    throw UserError("nnvm.ops.attr", str_cat("attribute 'mode' is '", spec.mode, "' but must be linear, nearest or cubic"),
                    {"attribute mode"});
  const std::string& pm = spec.padding_mode;
  if (pm != "zeros" && pm != "border" && pm != "reflection")
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'padding_mode' is '", pm, "' but must be zeros, border or reflection"),
                    {"attribute padding_mode"});
  check_rank(x, "X", 3, 8);
  size_t r = x.rank() - 2;
  check_rank(grid, "grid", r + 2);
  for (auto [t, input] : {std::pair{x, "X"}, std::pair{grid, "grid"}})
    if (!t.dtype().is_float() || !t.dtype().is_scalar())
      throw UserError("nnvm.ops.input_dtype",
                      str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected a float type"),
                      {str_cat("input ", input)});
  check_same_extent(grid.shape()[0], x.shape()[0], "the batch extents of grid and X (axis 0)");
  if (const_extent(grid.shape()[r + 1], "the last axis of grid") != int64_t(r))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axis of grid has extent ", ir::to_string(grid.shape()[r + 1]), ", expected ", r,
                            " (one coordinate per spatial axis of X)"),
                    {"input grid"});
  std::vector<int64_t> dims(r);
  for (size_t i = 0; i < r; ++i) {
    dims[i] = const_extent(x.shape()[2 + i], str_cat("spatial axis ", 2 + i, " of input X"));
    if (dims[i] == 0) throw UserError("nnvm.ops.input_shape", str_cat("spatial axis ", 2 + i, " of input X is empty"), {"input X"});
  }
  DataType t = x.dtype();
  DataType gt = arith_type(grid.dtype());
  DataType ct = t == dtype::float64 || gt == dtype::float64 ? dtype::float64 : dtype::float32;
  std::vector<ir::Expr> shape{x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < r; ++i) shape.push_back(grid.shape()[1 + i]);

  // The source coordinate along each spatial axis, one stage per axis computed ahead of the
  // sampling: the sampling reads it 2-4 times per axis, and an expression (not a stage) would be
  // copied into every tap, the reflections nested in each copy.
  std::vector<double> lo(r), hi(r);
  std::vector<te::Tensor> coords(r);
  std::vector<ir::Expr> grid_shape{grid.shape()[0]};
  for (size_t i = 0; i < r; ++i) grid_shape.push_back(grid.shape()[1 + i]);
  for (size_t i = 0; i < r; ++i) {
    double d = double(dims[i]);
    lo[i] = spec.align_corners ? 0 : -0.5;
    hi[i] = spec.align_corners ? d - 1 : d - 0.5;
    coords[i] = te::compute(
        grid_shape,
        [&](const std::vector<ir::Var>& v) -> ir::Expr {
          std::vector<ir::Expr> gi(v.begin(), v.end());
          gi.push_back(ir::Expr(int64_t(r - 1 - i)));
          ir::Expr n = ir::cast(gt, grid(gi));
          ir::Expr c = spec.align_corners ? (n + 1.0) / 2.0 * (d - 1) : ((n + 1.0) * d - 1.0) / 2.0;
          if (mode == "nearest") c = ir::call(ir::CallOp::round, c);
          if (pm == "border")
            c = ir::select(c < lo[i] || c > hi[i], ir::min(ir::max(c, ir::make_zero(gt)), ir::make_const(gt, d - 1)), c);
          else if (pm == "reflection")
            c = ir::cast(gt, gd::reflect(ir::cast(dtype::float64, c), lo[i], hi[i]));
          // Past D + 4 pixels every tap reads padding (or is already clamped or reflected), so
          // clamping there (and sending NaN there) changes no result and keeps the integer casts
          // below in range.
          ir::Expr far = ir::make_const(gt, d + 4);
          c = ir::select(ir::call(ir::CallOp::isnan, c), -far, c);
          return ir::min(ir::max(c, -far), far);
        },
        str_cat(name, "_coord", i));
  }

  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) -> ir::Expr {
        std::vector<ir::Expr> coord(r), at_point{v[0]};
        for (size_t j = 0; j < r; ++j) at_point.push_back(v[2 + j]);
        for (size_t i = 0; i < r; ++i) coord[i] = coords[i](at_point);
        // The value of X at integer source index idx[i] per axis, after padding.
        auto pixel = [&](const std::vector<ir::Expr>& idx) {
          std::vector<ir::Expr> at{v[0], v[1]};
          ir::Expr inside;
          for (size_t i = 0; i < r; ++i) {
            ir::Expr k = idx[i];
            if (pm == "zeros") {
              ir::Expr in = k >= int64_t(0) && k < dims[i];
              inside = inside.defined() ? (inside && in) : in;
            } else if (pm == "reflection") {
              k = ir::cast(dtype::int64, gd::reflect(ir::cast(dtype::float64, k), lo[i], hi[i]));
            }
            at.push_back(ir::min(ir::max(k, ir::Expr(int64_t(0))), ir::Expr(dims[i] - 1)));
          }
          ir::Expr value = ir::cast(ct, x(at));
          return inside.defined() ? ir::select(inside, value, ir::make_zero(ct)) : value;
        };
        ir::Expr value;
        if (mode == "nearest") {
          std::vector<ir::Expr> idx;
          for (auto& c : coord) idx.push_back(ir::cast(dtype::int64, c));
          value = pixel(idx);
        } else {
          bool cubic = mode == "cubic";
          int64_t taps = cubic ? 4 : 2, first = cubic ? -1 : 0;
          std::vector<ir::Expr> base(r);
          std::vector<std::vector<ir::Expr>> weight(r);
          for (size_t i = 0; i < r; ++i) {
            ir::Expr f = ir::call(ir::CallOp::floor, coord[i]);
            ir::Expr frac = ir::cast(ct, coord[i] - f);
            base[i] = ir::cast(dtype::int64, f);
            ir::Expr one = ir::make_const(ct, 1.0);
            weight[i] = cubic ? std::vector<ir::Expr>{gd::cubic_weight(frac + one, false), gd::cubic_weight(frac, true),
                                                      gd::cubic_weight(one - frac, true),
                                                      gd::cubic_weight(one - frac + one, false)}
                              : std::vector<ir::Expr>{one - frac, frac};
          }
          size_t terms = 1;
          for (size_t i = 0; i < r; ++i) terms *= size_t(taps);
          for (size_t c = 0; c < terms; ++c) {
            std::vector<ir::Expr> idx(r);
            ir::Expr w;
            size_t rest = c;
            for (size_t i = r; i-- > 0;) {  // last axis varies fastest
              int64_t q = int64_t(rest % size_t(taps));
              rest /= size_t(taps);
              idx[i] = base[i] + (first + q);
              w = w.defined() ? w * weight[i][q] : weight[i][q];
            }
            ir::Expr term = w * pixel(idx);
            value = value.defined() ? value + term : term;
          }
        }
        return t.is_storage_only() && ct != dtype::float32 ? ir::cast(t, ir::cast(dtype::float32, value)) : ir::cast(t, value);
      },
      std::move(name));
}

inline OpDef grid_sample_def() {
  return OpDef{
      .name = "grid_sample",
      .importer_names = {"onnx:GridSample"},
      .input_names = {"X", "grid"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            GridSampleSpec spec;
            spec.mode = attrs.get_string("mode", "linear");
            spec.padding_mode = attrs.get_string("padding_mode", "zeros");
            spec.align_corners = attrs.get_int("align_corners", 0) != 0;
            return std::vector<te::Tensor>{grid_sample(in[0], in[1], spec)};
          },
      .doc = "X sampled at the normalized coordinates of grid; mode linear/nearest/cubic, padding zeros/border/reflection",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
