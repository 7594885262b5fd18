// resize (ONNX Resize, opset 19; the importer rewrites Upsample and older Resize into it). roi,
// scales and sizes are value inputs over `axes` (default: every axis). Each output index maps to
// a source coordinate per resized axis (coordinate_transformation_mode); mode nearest rounds it
// (nearest_mode), linear is multilinear over the resized axes (2 taps per axis) and cubic is
// separable with 4 taps per axis (cubic_coeff_a, exclude_outside). Taps outside the input are
// clamped to the border, as the ONNX reference pads with edge values, so no read leaves the
// tensor; tf_crop_and_resize gives extrapolation_value where a coordinate falls outside.
// antialias = 1 (linear and cubic; nearest ignores it, as the spec says) stretches the kernel by
// 1/scale on each downsampled axis (scale < 1): 2 * ceil(support / scale) taps per axis, their
// weights normalized to sum 1, all unrolled into one expression (capped, see max_antialias_terms).
// Coordinates and weights are computed in float64.
#pragma once

#include <cmath>

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct ResizeSpec {
  std::vector<double> roi;      // starts then ends of the resized axes; tf_crop_and_resize only
  std::vector<double> scales;   // one per resized axis, or empty
  std::vector<int64_t> sizes;   // one per resized axis, or empty
  std::vector<int64_t> axes;    // empty: every axis
  std::string mode = "nearest";
  std::string coordinate_transformation_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
  std::string keep_aspect_ratio_policy = "stretch";
  bool antialias = false;  // linear and cubic only; applies on axes with scale < 1
};

namespace resize_detail {

inline void check_choice(const std::string& value, const char* attr, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw UserError("nnvm.ops.attr", str_cat("attribute '", attr, "' is '", value, "' but must be one of ", list),
                  {str_cat("attribute ", attr)});
}

// One resized axis: input extent n, output extent m, scale and the roi window.
struct Axis {
  int64_t n = 0, m = 0;
  double scale = 1, roi_start = 0, roi_end = 1;
};

// The source coordinate of output index `o` (float64), as the ONNX reference computes it.
inline ir::Expr source_coordinate(const ir::Expr& o, const Axis& a, const std::string& ctm) {
  ir::Expr x = ir::cast(dtype::float64, o);
  double n = double(a.n), out = a.scale * n;  // ONNX's float output width
  if (ctm == "asymmetric") return x / ir::Expr(a.scale);
  if (ctm == "align_corners")
    return out == 1 ? ir::Expr(0.0) : x * ir::Expr((n - 1) / (out - 1));
  if (ctm == "pytorch_half_pixel")
    return out == 1 ? ir::Expr(-0.5) : (x + 0.5) / ir::Expr(a.scale) - 0.5;
  if (ctm == "tf_crop_and_resize") {
    double w = (a.roi_end - a.roi_start) * (n - 1);
    ir::Expr base(a.roi_start * (n - 1));
    return out == 1 ? base + ir::Expr(w / 2) : base + x * ir::Expr(w / (out - 1));
  }
  if (ctm == "half_pixel_symmetric") {
    double offset = n / 2 * (1 - double(a.m) / out);
    return ir::Expr(offset) + (x + 0.5) / ir::Expr(a.scale) - 0.5;
  }
  return (x + 0.5) / ir::Expr(a.scale) - 0.5;  // half_pixel
}

inline ir::Expr clamp_index(const ir::Expr& i, int64_t n) {
  return ir::min(ir::max(i, ir::Expr(int64_t(0))), ir::Expr(n - 1));
}

// The cubic convolution kernel (coefficient a) at distance d >= 0: one piece for d <= 1, one for
// 1 < d < 2, zero beyond.
inline ir::Expr cubic_near(const ir::Expr& d, double a) { return ((ir::Expr(a + 2) * d - (a + 3)) * d) * d + 1.0; }
inline ir::Expr cubic_far(const ir::Expr& d, double a) { return ((ir::Expr(a) * d - 5 * a) * d + 8 * a) * d - 4 * a; }

// Cubic convolution weights of the taps at floor(x) - 1 .. floor(x) + 2, t = x - floor(x).
inline std::vector<ir::Expr> cubic_weights(const ir::Expr& t, double a) {
  ir::Expr u = ir::Expr(1.0) - t;
  return {cubic_far(t + 1.0, a), cubic_near(t, a), cubic_near(u, a), cubic_far(u + 1.0, a)};
}

// The taps of one resized axis (linear and cubic): input index floor(x) + first + q has weight
// weight[q]; where `norm` is defined the weights are not yet normalized and the sum over the
// taps must still be divided by it.
struct Taps {
  int64_t first = 0;
  std::vector<ir::Expr> weight;
  ir::Expr norm;
};

// Antialias unrolls prod(taps per axis) terms into one expression; past this many a model is
// refused rather than building an expression too large to compile (cubic downsampling by 1/16
// on two axes: 64 * 64 terms, right at the cap; linear needs half the taps per axis).
inline constexpr double max_antialias_terms = 4096;

// Antialias downsampling by scale s < 1 stretches the kernel (support 1 linear, 2 cubic) by 1/s:
// tap i, at floor(x) + i, is at distance |i - t| from x and gets kernel(|i - t| * s). As the ONNX
// reference does, the taps are i = first .. 1 - first with first = floor(-support / s) + 1,
// which covers every tap with a nonzero weight; the weights are normalized by their sum.
inline double antialias_first_tap(double support, double s) { return std::floor(-support / s) + 1; }

inline Taps antialias_taps(const ir::Expr& t, double s, bool cubic, double a) {
  Taps k;
  k.first = int64_t(antialias_first_tap(cubic ? 2 : 1, s));
  for (int64_t i = k.first; i <= 1 - k.first; ++i) {
    // t is in [0, 1), so the sign of i - t is known here: no abs needed.
    ir::Expr d = (i >= 1 ? ir::Expr(double(i)) - t : t - double(i)) * s;
    ir::Expr w = cubic ? ir::select(d <= 1.0, cubic_near(d, a),
                                    ir::select(d < 2.0, cubic_far(d, a), ir::Expr(0.0)))
                       : ir::max(ir::Expr(1.0) - d, ir::Expr(0.0));
    k.weight.push_back(w);
  }
  return k;
}

// Drops the taps that fall outside [0, n) (exclude_outside): their weight becomes 0.
inline void exclude_outside_taps(Taps& k, const ir::Expr& floor_i, int64_t n) {
  for (size_t q = 0; q < k.weight.size(); ++q) {
    ir::Expr p = floor_i + (k.first + int64_t(q));
    k.weight[q] = ir::select(p >= int64_t(0) && p < n, k.weight[q], ir::Expr(0.0));
  }
}

inline ir::Expr sum_of(const std::vector<ir::Expr>& w) {
  ir::Expr total = w[0];
  for (size_t q = 1; q < w.size(); ++q) total = total + w[q];
  return total;
}

}  // namespace resize_detail

inline te::Tensor resize(const te::Tensor& x, const ResizeSpec& spec, std::string name = "resize") {
  using namespace transform_detail;
  using resize_detail::Axis;
  resize_detail::check_choice(spec.mode, "mode", {"nearest", "linear", "cubic"});
  const std::string& ctm = spec.coordinate_transformation_mode;
  resize_detail::check_choice(ctm, "coordinate_transformation_mode",
                              {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                               "asymmetric", "tf_crop_and_resize"});
  resize_detail::check_choice(spec.nearest_mode, "nearest_mode",
                              {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  resize_detail::check_choice(spec.keep_aspect_ratio_policy, "keep_aspect_ratio_policy",
                              {"stretch", "not_larger", "not_smaller"});
  DataType t = x.dtype();
  if (spec.mode != "nearest" && !t.is_float())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input X (tensor ", x.name(), ") is ", t, "; mode ", spec.mode, " needs a float type"),
                    {"input X"});

  std::vector<int64_t> axes_in = spec.axes;
  if (axes_in.empty())
    for (size_t d = 0; d < x.rank(); ++d) axes_in.push_back(int64_t(d));
  std::vector<size_t> axes = normalize_axes(axes_in, x.rank(), "axes");
  size_t k = axes.size();
  bool by_sizes = !spec.sizes.empty();
  if (by_sizes == !spec.scales.empty())
    throw UserError("nnvm.ops.input_shape", "exactly one of the inputs scales and sizes must be given (non-empty)",
                    {"input scales"});
  if ((by_sizes ? spec.sizes.size() : spec.scales.size()) != k)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", by_sizes ? "sizes" : "scales", " has ",
                            by_sizes ? spec.sizes.size() : spec.scales.size(), " elements, expected ", k,
                            " (one per resized axis)"),
                    {by_sizes ? "input sizes" : "input scales"});
  if (ctm == "tf_crop_and_resize" && spec.roi.size() != 2 * k)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input roi has ", spec.roi.size(), " elements, expected ", 2 * k,
                            " (starts then ends of the resized axes)"),
                    {"input roi"});

  std::vector<Axis> info(k);
  for (size_t i = 0; i < k; ++i) info[i].n = const_extent(x.shape()[axes[i]], str_cat("resized axis ", axes[i], " of input X"));
  if (by_sizes && spec.keep_aspect_ratio_policy != "stretch") {
    // One scale for every resized axis, the largest (not_larger) or smallest (not_smaller) fit.
    bool smaller = spec.keep_aspect_ratio_policy == "not_larger";
    double s = smaller ? INFINITY : 0;
    for (size_t i = 0; i < k; ++i) {
      double r = double(spec.sizes[i]) / double(info[i].n);
      s = smaller ? std::min(s, r) : std::max(s, r);
    }
    for (auto& a : info) {
      a.scale = s;
      a.m = extent_from_double(std::floor(s * double(a.n) + 0.5), axes[&a - info.data()], "resize");
    }
  } else {
    for (size_t i = 0; i < k; ++i) {
      Axis& a = info[i];
      if (by_sizes) {
        a.m = spec.sizes[i];
        a.scale = double(a.m) / double(a.n);
      } else {
        a.scale = spec.scales[i];
        if (!(a.scale > 0))
          throw UserError("nnvm.ops.input_shape", str_cat("input scales has ", a.scale, " for axis ", axes[i], "; scales must be positive"),
                          {"input scales"});
        a.m = extent_from_double(std::floor(a.scale * double(a.n)), axes[i], "resize");
      }
    }
  }
  for (size_t i = 0; i < k; ++i) {
    check_output_extent(info[i].m, axes[i], "resize");
    if (info[i].n == 0 && info[i].m > 0)  // nothing to read from
      throw UserError("nnvm.ops.input_shape", str_cat("resized axis ", axes[i], " of input X is empty"), {"input X"});
    if (ctm == "tf_crop_and_resize") info[i].roi_start = spec.roi[i], info[i].roi_end = spec.roi[i + k];
  }

  // Axes whose output equals their input index need no taps (true for every mode but
  // tf_crop_and_resize when the extent and scale are unchanged).
  std::vector<size_t> active;
  std::vector<Axis> act;
  std::vector<ir::Expr> shape = x.shape();
  for (size_t i = 0; i < k; ++i) {
    shape[axes[i]] = ir::Expr(info[i].m);
    if (info[i].m == info[i].n && info[i].scale == 1 && ctm != "tf_crop_and_resize") continue;
    active.push_back(axes[i]);
    act.push_back(info[i]);
  }

  // Antialias widens the kernel on the downsampled axes only (scale >= 1 gives the plain kernel,
  // as the reference's min(scale, 1) does); nearest ignores it.
  // An empty output axis keeps the plain kernel: there is nothing to filter.
  auto antialias_axis = [&](const Axis& a) {
    return spec.antialias && spec.mode != "nearest" && a.m > 0 && a.scale < 1;
  };
  double terms = 1;
  for (const Axis& a : act)
    if (antialias_axis(a)) terms *= 2 - 2 * resize_detail::antialias_first_tap(spec.mode == "cubic" ? 2 : 1, a.scale);
  if (terms > resize_detail::max_antialias_terms)
    throw UserError("nnvm.ops.too_large",
                    str_cat("antialias ", spec.mode, " resize of input X (tensor ", x.name(), ") needs ", terms,
                            " taps per output element over its downsampled axes (the kernel widens by 1/scale); "
                            "nnvm unrolls at most ", resize_detail::max_antialias_terms),
                    {"attribute antialias"});

  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) -> ir::Expr {
        std::vector<ir::Expr> base = exprs(v);
        std::vector<ir::Expr> coord(act.size());
        ir::Expr outside;  // tf_crop_and_resize: some coordinate outside [0, n - 1]
        for (size_t j = 0; j < act.size(); ++j) {
          coord[j] = resize_detail::source_coordinate(v[active[j]], act[j], ctm);
          if (ctm == "tf_crop_and_resize") {
            ir::Expr o = coord[j] < 0.0 || coord[j] > double(act[j].n - 1);
            outside = outside.defined() ? (outside || o) : o;
          }
        }
        ir::Expr value;
        if (spec.mode == "nearest") {
          std::vector<ir::Expr> idx = base;
          for (size_t j = 0; j < act.size(); ++j) {
            const ir::Expr& c = coord[j];
            ir::Expr r;
            if (spec.nearest_mode == "floor") r = ir::call(ir::CallOp::floor, c);
            else if (spec.nearest_mode == "ceil") r = ir::call(ir::CallOp::ceil, c);
            else if (spec.nearest_mode == "round_prefer_ceil") r = ir::call(ir::CallOp::floor, c + 0.5);
            else r = ir::call(ir::CallOp::ceil, c - 0.5);
            idx[active[j]] = resize_detail::clamp_index(ir::cast(dtype::int64, r), act[j].n);
          }
          value = x(idx);
        } else {
          bool cubic = spec.mode == "cubic";
          std::vector<ir::Expr> floor_i(act.size());
          std::vector<resize_detail::Taps> taps(act.size());
          for (size_t j = 0; j < act.size(); ++j) {
            ir::Expr f = ir::call(ir::CallOp::floor, coord[j]);
            ir::Expr frac = coord[j] - f;
            floor_i[j] = ir::cast(dtype::int64, f);
            resize_detail::Taps& k = taps[j];
            if (antialias_axis(act[j])) {
              k = resize_detail::antialias_taps(frac, act[j].scale, cubic, spec.cubic_coeff_a);
              if (spec.exclude_outside) resize_detail::exclude_outside_taps(k, floor_i[j], act[j].n);
              k.norm = resize_detail::sum_of(k.weight);  // divided out once, after the sum
              continue;
            }
            k.first = cubic ? -1 : 0;
            k.weight = cubic ? resize_detail::cubic_weights(frac, spec.cubic_coeff_a)
                             : std::vector<ir::Expr>{ir::Expr(1.0) - frac, frac};
            if (spec.exclude_outside) {  // drop taps outside the input, renormalize the rest
              resize_detail::exclude_outside_taps(k, floor_i[j], act[j].n);
              ir::Expr total = resize_detail::sum_of(k.weight);
              for (auto& w : k.weight) w = w / total;
            }
          }
          // Sum over every combination of taps: prod(taps per axis) terms, the tap of axis j
          // being digit j of a mixed-radix count.
          size_t terms = 1;
          for (const auto& k : taps) terms *= k.weight.size();
          for (size_t c = 0; c < terms; ++c) {
            std::vector<ir::Expr> idx = base;
            ir::Expr w;
            size_t rest = c;
            for (size_t j = 0; j < act.size(); ++j) {
              size_t q = rest % taps[j].weight.size();
              rest /= taps[j].weight.size();
              idx[active[j]] = resize_detail::clamp_index(floor_i[j] + (taps[j].first + int64_t(q)), act[j].n);
              w = w.defined() ? w * taps[j].weight[q] : taps[j].weight[q];
            }
            ir::Expr term = ir::cast(dtype::float64, x(idx));
            if (w.defined()) term = term * w;
            value = value.defined() ? value + term : term;
          }
          ir::Expr norm;
          for (const auto& k : taps)
            if (k.norm.defined()) norm = norm.defined() ? norm * k.norm : k.norm;
          if (norm.defined()) value = value / norm;
          value = t.is_storage_only() ? ir::cast(t, ir::cast(dtype::float32, value)) : ir::cast(t, value);
        }
        if (outside.defined()) {
          ir::Expr fill = t.is_storage_only() ? ir::cast(t, ir::make_const(dtype::float32, spec.extrapolation_value))
                                              : ir::make_const(t, spec.extrapolation_value);
          value = ir::select(outside, fill, value);
        }
        return value;
      },
      std::move(name));
}

inline OpDef resize_def() {
  return OpDef{
      .name = "resize",
      .importer_names = {"onnx:Resize"},
      .input_names = {"X", "roi", "scales", "sizes"},
      .optional_inputs = 3,
      .value_inputs = {"roi", "scales", "sizes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            using transform_detail::given;
            ResizeSpec spec;
            spec.antialias = attrs.get_int("antialias", 0) != 0;
            if (given(in, 1)) spec.roi = attrs.get_floats("roi", {});
            if (given(in, 2)) spec.scales = attrs.get_floats("scales", {});
            if (given(in, 3)) spec.sizes = attrs.get_ints("sizes", {});
            spec.axes = attrs.get_ints("axes", {});
            spec.mode = attrs.get_string("mode", "nearest");
            spec.coordinate_transformation_mode = attrs.get_string("coordinate_transformation_mode", "half_pixel");
            spec.nearest_mode = attrs.get_string("nearest_mode", "round_prefer_floor");
            spec.cubic_coeff_a = attrs.get_float("cubic_coeff_a", -0.75);
            spec.exclude_outside = attrs.get_int("exclude_outside", 0) != 0;
            spec.extrapolation_value = attrs.get_float("extrapolation_value", 0.0);
            spec.keep_aspect_ratio_policy = attrs.get_string("keep_aspect_ratio_policy", "stretch");
            return std::vector<te::Tensor>{resize(in[0], spec)};
          },
      .doc = "X resized over axes to value input sizes or floor(extent * scales); mode nearest/linear/cubic",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
