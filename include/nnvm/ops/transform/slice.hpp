// slice (ONNX Slice, opset 13+: starts, ends, axes and steps are value inputs). Per sliced axis
// of extent n: a negative start or end counts from the end, then both clamp as ONNX says
// (step > 0: [0, n]; step < 0: start to [0, n - 1], end to [-1, n - 1]), and the output takes
// ceil((end - start) / step) elements start, start + step, ... (possibly none: an empty result
// is valid, as in ONNX).
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;  // axes and steps may be empty (defaults)
};

inline te::Tensor slice(const te::Tensor& x, const SliceSpec& spec, std::string name = "slice") {
  using namespace transform_detail;
  size_t count = spec.starts.size();
  auto same_length = [&](const std::vector<int64_t>& v, const char* what) {
    if (v.size() != count)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", what, " has ", v.size(), " elements but starts has ", count),
                      {str_cat("input ", what)});
  };
  same_length(spec.ends, "ends");
  std::vector<int64_t> axes_in = spec.axes;
  if (axes_in.empty())
    for (size_t k = 0; k < count; ++k) axes_in.push_back(int64_t(k));
  same_length(axes_in, "axes");
  if (!spec.steps.empty()) same_length(spec.steps, "steps");
  std::vector<size_t> axes = normalize_axes(axes_in, x.rank(), "axes");
  std::vector<ir::Expr> shape = x.shape();
  std::vector<int64_t> first(x.rank(), 0), stride(x.rank(), 1);
  for (size_t k = 0; k < count; ++k) {
    size_t a = axes[k];
    int64_t step = spec.steps.empty() ? 1 : spec.steps[k];
    if (step == 0) throw UserError("nnvm.ops.attr", str_cat("steps[", k, "] is 0"), {"input steps"});
    int64_t n = const_extent(x.shape()[a], str_cat("sliced axis ", a, " of input data"));
    int64_t s = spec.starts[k], e = spec.ends[k];
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
    }
    int64_t len = step > 0 ? (e - s + step - 1) / step : (s - e + (-step) - 1) / (-step);
    check_output_extent(len, a, str_cat("slice from ", s, " to ", e, " by ", step));
    shape[a] = ir::Expr(len);
    first[a] = s;
    stride[a] = step;
  }
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < v.size(); ++d)
          idx.push_back(first[d] == 0 && stride[d] == 1 ? ir::Expr(v[d]) : v[d] * stride[d] + first[d]);
        return x(idx);
      },
      std::move(name));
}

inline OpDef slice_def() {
  return OpDef{
      .name = "slice",
      .importer_names = {"onnx:Slice"},
      .input_names = {"data", "starts", "ends", "axes", "steps"},
      .optional_inputs = 2,
      .value_inputs = {"starts", "ends", "axes", "steps"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            SliceSpec spec{attrs.get_ints("starts"), attrs.get_ints("ends"), {}, {}};
            if (transform_detail::given(in, 3)) spec.axes = attrs.get_ints("axes");
            if (transform_detail::given(in, 4)) spec.steps = attrs.get_ints("steps");
            return std::vector<te::Tensor>{slice(in[0], spec)};
          },
      .doc = "data[starts:ends:steps] along axes (value inputs; negative indices and steps, ONNX clamping)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
