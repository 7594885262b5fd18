// roi_align: ONNX RoiAlign (opset 16). X is (N, C, H, W), rois (R, 4) holds boxes [x1, y1, x2, y2]
// in input coordinates (scaled by spatial_scale), batch_indices (R, int64) the image of each box.
// Y is (R, C, output_height, output_width): each output bin pools a grid of bilinear samples of
// its box, mode avg (their mean) or max (as the ONNX reference and onnxruntime: the largest of the
// four weighted corner terms of each sample, not of the interpolated values).
//
// rois and batch_indices are data, read inside the kernel as grid_sample reads its grid. A sample
// more than one pixel outside X counts 0; a batch index out of [0, N) is clamped (ONNX leaves it
// undefined), so no kernel read leaves X whatever the boxes hold. NaN box coordinates give 0.
#pragma once

#include <cmath>

#include "nnvm/ops/conv/window.hpp"
#include "nnvm/ops/op_def.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct RoiAlignSpec {
  std::string mode = "avg";                                    // avg or max
  std::string coordinate_transformation_mode = "half_pixel";  // or output_half_pixel (opset 10)
  int64_t output_height = 1, output_width = 1;
  int64_t sampling_ratio = 0;  // samples per bin and axis; 0: ceil(box extent / output extent)
  double spatial_scale = 1.0;
};

inline te::Tensor roi_align(const te::Tensor& X, const te::Tensor& rois, const te::Tensor& batch_indices,
                            const RoiAlignSpec& spec, std::string name = "roi_align") {
  if (spec.mode != "avg" && spec.mode != "max")
    detail::bad_window_attr("mode", str_cat("attribute 'mode' is '", spec.mode, "' but must be avg or max"));
  const std::string& ctm = spec.coordinate_transformation_mode;
  if (ctm != "half_pixel" && ctm != "output_half_pixel")
    detail::bad_window_attr("coordinate_transformation_mode",
                            str_cat("attribute 'coordinate_transformation_mode' is '", ctm,
                                    "' but must be half_pixel or output_half_pixel"));
  for (auto [attr, v] : {std::pair{"output_height", spec.output_height}, std::pair{"output_width", spec.output_width}})
    if (v < 1) detail::bad_window_attr(attr, str_cat("attribute '", attr, "' is ", v, "; it must be at least 1"));
  if (spec.sampling_ratio < 0)
    detail::bad_window_attr("sampling_ratio",
                            str_cat("attribute 'sampling_ratio' is ", spec.sampling_ratio, "; it must be >= 0"));
  if (!std::isfinite(spec.spatial_scale))
    detail::bad_window_attr("spatial_scale",
                            str_cat("attribute 'spatial_scale' is ", spec.spatial_scale, "; it must be finite"));
  check_rank(X, "X", 4);
  check_float(X, "X");
  check_rank(rois, "rois", 2);
  check_same_dtype(X, "X", rois, "rois");
  check_rank(batch_indices, "batch_indices", 1);
  if (batch_indices.dtype() != dtype::int64)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input batch_indices (tensor ", batch_indices.name(), ") is ", batch_indices.dtype(),
                            ", expected int64"),
                    {"input batch_indices"});
  if (!same_extent(rois.shape()[1], ir::Expr(int64_t(4))))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input rois has ", ir::to_string(rois.shape()[1]), " columns, expected 4 (x1, y1, x2, y2)"),
                    {"input rois"});
  if (!same_extent(rois.shape()[0], batch_indices.shape()[0]))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("inputs rois and batch_indices hold ", ir::to_string(rois.shape()[0]), " and ",
                            ir::to_string(batch_indices.shape()[0]), " boxes; they must match"),
                    {"input batch_indices"});
  std::vector<int64_t> spatial = spatial_extents(X, "X");
  const int64_t H = spatial[0], W = spatial[1];
  const int64_t oh = spec.output_height, ow = spec.output_width;
  DataType t = X.dtype();
  auto num = [&](double v) { return ir::make_const(t, v); };
  // With sampling_ratio 0 a bin's sample grid is ceil(bin extent), which depends on the box. The
  // reduction runs over a fixed bound per axis and a predicate keeps the first ceil(...) samples.
  // The bound, ceil((extent + 1) / output extent), is exact for every box no larger than the
  // region where samples can be nonzero ([-1, extent], extent + 1 pixels); a larger box gets that
  // many samples per bin and axis (fewer than ONNX, still spread over the whole bin): a
  // deviation, for boxes that mostly pool padding anyway.
  int64_t fixed = spec.sampling_ratio;
  int64_t grid_h = fixed > 0 ? fixed : (H + oh) / oh, grid_w = fixed > 0 ? fixed : (W + ow) / ow;

  // Per box: start y, start x, bin height, bin width, samples per bin along y and along x.
  te::Tensor box = te::compute(
      {rois.shape()[0], ir::Expr(int64_t(6))},
      [&](const std::vector<ir::Var>& v) -> ir::Expr {
        ir::Expr r = v[0];
        double shift = ctm == "half_pixel" ? 0.5 : 0.0;
        auto coord = [&](int64_t k) { return rois({r, ir::Expr(k)}) * num(spec.spatial_scale) - num(shift); };
        ir::Expr x1 = coord(0), y1 = coord(1), rw = coord(2) - x1, rh = coord(3) - y1;
        // output_half_pixel (the opset-10 behaviour) forces malformed boxes to 1 x 1.
        if (ctm == "output_half_pixel") rw = ir::max(rw, num(1)), rh = ir::max(rh, num(1));
        ir::Expr bh = rh / num(double(oh)), bw = rw / num(double(ow));
        auto samples = [&](const ir::Expr& bin, int64_t bound) -> ir::Expr {
          if (fixed > 0) return num(double(fixed));
          ir::Expr g = ir::call(ir::CallOp::ceil, bin);
          // A box of non-positive extent (or NaN) samples nothing, as the reference's empty loop.
          return ir::select(g >= num(1), ir::min(g, num(double(bound))), num(0));
        };
        std::vector<ir::Expr> fields{y1, x1, bh, bw, samples(bh, grid_h), samples(bw, grid_w)};
        ir::Expr value = fields.back();
        for (int64_t k = 4; k >= 0; --k) value = ir::select(v[1] == k, fields[size_t(k)], value);
        return value;
      },
      name + "_box");

  ir::IterVar iy = te::reduce_axis(ir::Expr(grid_h), "iy"), ix = te::reduce_axis(ir::Expr(grid_w), "ix");
  return te::compute(
      {rois.shape()[0], X.shape()[1], ir::Expr(oh), ir::Expr(ow)},
      [&](const std::vector<ir::Var>& v) -> ir::Expr {
        ir::Expr r = v[0];
        auto at = [&](int64_t k) { return box({r, ir::Expr(k)}); };
        ir::Expr gh = at(4), gw = at(5);
        ir::Expr b = ir::min(ir::max(batch_indices(r), ir::Expr(int64_t(0))), X.shape()[0] - ir::Expr(int64_t(1)));
        // One axis of a sample at `pos` (extent n): the two source indices, their weights, and
        // whether the sample lies within one pixel of X. As the reference: clamp below at 0, and
        // at the last pixel both taps are that pixel. Indices stay in [0, n) even for NaN.
        struct Taps {
          ir::Expr lo, hi, wlo, whi, inside;
        };
        auto taps = [&](const ir::Expr& pos, int64_t n) {
          ir::Expr inside = pos >= num(-1) && pos <= num(double(n));
          ir::Expr p = ir::select(pos >= num(0), ir::min(pos, num(double(n))), num(0));
          ir::Expr i0 = ir::cast(dtype::int64, p);
          ir::Expr edge = i0 >= n - 1;
          ir::Expr last(int64_t(n - 1));
          ir::Expr l = ir::select(edge, num(0), p - ir::cast(t, i0));
          return Taps{ir::select(edge, last, i0), ir::select(edge, last, i0 + int64_t(1)), num(1) - l, l, inside};
        };
        Taps y = taps(at(0) + ir::cast(t, v[2]) * at(2) + (ir::cast(t, iy->var) + num(0.5)) * at(2) / gh, H);
        Taps x = taps(at(1) + ir::cast(t, v[3]) * at(3) + (ir::cast(t, ix->var) + num(0.5)) * at(3) / gw, W);
        auto term = [&](const ir::Expr& wy, const ir::Expr& yi, const ir::Expr& wx, const ir::Expr& xi) {
          return wy * wx * X({b, v[1], yi, xi});
        };
        ir::Expr t1 = term(y.wlo, y.lo, x.wlo, x.lo), t2 = term(y.wlo, y.lo, x.whi, x.hi);
        ir::Expr t3 = term(y.whi, y.hi, x.wlo, x.lo), t4 = term(y.whi, y.hi, x.whi, x.hi);
        ir::Expr in_grid = ir::cast(t, iy->var) < gh && ir::cast(t, ix->var) < gw;
        if (spec.mode == "avg") {
          ir::Expr count = ir::max(gh * gw, num(1));
          ir::Expr value = ir::select(y.inside && x.inside, t1 + t2 + t3 + t4, num(0)) / count;
          return ir::Reduce::make(ir::Combiner::sum, value, {iy, ix}, ir::Expr(), in_grid);
        }
        // A bin without samples is 0 in the reference: its first (iy, ix) then contributes 0.
        ir::Expr empty = gh < num(1) || gw < num(1);
        ir::Expr value = ir::select(y.inside && x.inside && !empty, ir::max(ir::max(t1, t2), ir::max(t3, t4)), num(0));
        ir::Expr first = iy->var == int64_t(0) && ix->var == int64_t(0);
        return ir::Reduce::make(ir::Combiner::max, value, {iy, ix}, ir::Expr(), in_grid || (empty && first));
      },
      std::move(name));
}

inline OpDef roi_align_def() {
  return OpDef{
      .name = "roi_align",
      .importer_names = {"onnx:RoiAlign"},
      .input_names = {"X", "rois", "batch_indices"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            RoiAlignSpec spec;
            spec.mode = attrs.get_string("mode", "avg");
            spec.coordinate_transformation_mode = attrs.get_string("coordinate_transformation_mode", "half_pixel");
            spec.output_height = attrs.get_int("output_height", 1);
            spec.output_width = attrs.get_int("output_width", 1);
            spec.sampling_ratio = attrs.get_int("sampling_ratio", 0);
            spec.spatial_scale = attrs.get_float("spatial_scale", 1.0);
            return std::vector<te::Tensor>{roi_align(in[0], in[1], in[2], spec)};
          },
      .doc = "bins of boxes rois (R, 4) of images batch_indices in X pooled from bilinear samples (RoiAlign; "
             "mode avg/max, sampling_ratio, spatial_scale, coordinate_transformation_mode)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
