// pad (ONNX Pad, opset 19+: pads, constant_value and axes are value inputs). pads holds the
// begin amounts of the padded axes, then their end amounts; a negative amount crops. Modes:
// constant (constant_value, default 0), edge (repeat the border element), reflect (mirror
// without repeating the border; an extent-1 axis repeats its one element) and wrap (periodic).
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct PadSpec {
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;  // empty: every axis
  std::string mode = "constant";
  double value = 0;  // constant mode
};

inline te::Tensor pad(const te::Tensor& x, const PadSpec& spec, std::string name = "pad") {
  using namespace transform_detail;
  const std::string& mode = spec.mode;
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'mode' is '", mode, "' but must be constant, edge, reflect or wrap"),
                    {"attribute mode"});
  std::vector<int64_t> axes_in = spec.axes;
  if (axes_in.empty())
    for (size_t d = 0; d < x.rank(); ++d) axes_in.push_back(int64_t(d));
  std::vector<size_t> axes = normalize_axes(axes_in, x.rank(), "axes");
  if (spec.pads.size() != 2 * axes.size())
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input pads has ", spec.pads.size(), " elements; expected 2 per padded axis (",
                            2 * axes.size(), ")"),
                    {"input pads"});
  std::vector<int64_t> before(x.rank(), 0), extent(x.rank(), 0);
  std::vector<ir::Expr> shape = x.shape();
  for (size_t k = 0; k < axes.size(); ++k) {
    size_t a = axes[k];
    int64_t b = spec.pads[k], e = spec.pads[k + axes.size()];
    if (b == 0 && e == 0) continue;
    int64_t n = const_extent(x.shape()[a], str_cat("padded axis ", a, " of input data"));
    check_output_extent(n + b + e, a, str_cat("extent ", n, " padded by ", b, " and ", e));
    before[a] = b;
    extent[a] = n;
    shape[a] = ir::Expr(n + b + e);
  }
  DataType t = x.dtype();
  ir::Expr fill = t.is_storage_only() ? ir::cast(t, ir::make_const(dtype::float32, spec.value))
                                      : ir::make_const(t, spec.value);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        ir::Expr inside;
        for (size_t d = 0; d < v.size(); ++d) {
          int64_t n = extent[d];
          if (n == 0) {  // not padded
            idx.push_back(v[d]);
            continue;
          }
          ir::Expr j = v[d] - before[d];
          if (mode == "constant") {
            ir::Expr in = j >= int64_t(0) && j < n;
            inside = inside.defined() ? (inside && in) : in;
          } else if (mode == "edge") {
            j = ir::min(ir::max(j, ir::Expr(int64_t(0))), ir::Expr(n - 1));
          } else if (mode == "wrap") {
            j = (j % n + n) % n;
          } else if (n == 1) {
            j = ir::Expr(int64_t(0));
          } else {  // reflect: fold into one period of 2(n - 1), then mirror its second half
            int64_t m = 2 * (n - 1);
            j = (j % m + m) % m;
            j = ir::select(j >= n, m - j, j);
          }
          idx.push_back(j);
        }
        return inside.defined() ? ir::select(inside, x(idx), fill) : x(idx);
      },
      std::move(name));
}

inline OpDef pad_def() {
  return OpDef{
      .name = "pad",
      .importer_names = {"onnx:Pad"},
      .input_names = {"data", "pads", "constant_value", "axes"},
      .optional_inputs = 2,
      .value_inputs = {"pads", "constant_value", "axes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            PadSpec spec{attrs.get_ints("pads"), {}, attrs.get_string("mode", "constant"), 0.0};
            if (transform_detail::given(in, 2)) {
              std::vector<double> c = attrs.get_floats("constant_value");
              if (c.size() != 1)
                throw UserError("nnvm.ops.input_shape",
                                str_cat("input constant_value has ", c.size(), " elements, expected one"),
                                {"input constant_value"});
              spec.value = c[0];
            }
            if (transform_detail::given(in, 3)) spec.axes = attrs.get_ints("axes");
            return std::vector<te::Tensor>{pad(in[0], spec)};
          },
      .doc = "data padded by value input pads (begins, then ends) over axes; attribute mode constant/edge/reflect/wrap",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
