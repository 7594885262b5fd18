// max_unpool (ONNX MaxUnpool): the partial inverse of max_pool. X (N, C, D1..Dr) holds pooled
// values and I (X's shape) their flat positions in the unpooled tensor (N, C, U1..Ur), as
// MaxPool's Indices output gives them, with Ud = (Dd - 1) * strides - pads_begin - pads_end +
// kernel_shape. Every other element is 0. Given output_shape (a value input, no smaller than
// (N, C, U..)), the result is that unpooled tensor padded with zeros at the end of each spatial
// axis: the indices still address (N, C, U..), as in the ONNX reference and its tests.
//
// Written as a compute over the output, bounded by the pooling windows: element p takes the
// input whose index equals p's flat position among the at most ceil(kernel / stride) windows
// per axis that contain p; an index that points outside its own window is dropped. When several
// inputs hit p (overlapping windows picking one maximum), the last in X's order wins, as in the
// reference: a first stage finds its position (max over the hits), the second reads it.
#pragma once

#include "nnvm/ops/conv/window.hpp"
#include "nnvm/ops/transform/scatter.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct MaxUnpoolSpec {
  std::vector<int64_t> kernel_shape;  // required
  std::vector<int64_t> strides, pads;  // empty: ONNX's defaults (1, 0)
  std::vector<int64_t> output_shape;   // empty: the unpooled shape
};

inline te::Tensor max_unpool(const te::Tensor& x, const te::Tensor& indices, const MaxUnpoolSpec& spec,
                             std::string name = "max_unpool") {
  using namespace transform_detail;
  check_rank(x, "X", 3, 8);
  check_rank(indices, "I", x.rank());
  check_index_dtype(indices, "I");
  for (size_t d = 0; d < x.rank(); ++d)
    check_same_extent(indices.shape()[d], x.shape()[d], str_cat("axis ", d, " of I and X"));
  size_t r = x.rank() - 2;
  if (spec.kernel_shape.empty())
    detail::bad_window_attr("kernel_shape", "attribute 'kernel_shape' is required");
  std::vector<int64_t> kernel = spatial_ints(spec.kernel_shape, "kernel_shape", r, 1, 1);
  std::vector<int64_t> strides = spatial_ints(spec.strides, "strides", r, 1, 1);
  auto [pad_begin, pad_end] = split_window_pads(spec.pads, r);
  std::vector<int64_t> in = spatial_extents(x, "X"), unpooled(r), windows(r);
  std::vector<ir::Expr> shape{x.shape()[0], x.shape()[1]};
  for (size_t d = 0; d < r; ++d) {
    // Hostile attributes must not overflow: an overflow is out of range too.
    int64_t& u = unpooled[d];
    bool over = __builtin_mul_overflow(in[d] - 1, strides[d], &u) || __builtin_sub_overflow(u, pad_begin[d], &u) ||
                __builtin_sub_overflow(u, pad_end[d], &u) || __builtin_add_overflow(u, kernel[d], &u);
    if (over || u < 1 || uint64_t(u) > max_tensor_bytes)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("spatial axis ", 2 + d, ": the unpooled extent (X extent - 1) * strides - pads + ",
                              "kernel_shape is outside [1, 2^48]"),
                      {"input X"});
    // Windows containing one point: ceil(kernel / stride), and no more than there are windows.
    windows[d] = std::min(in[d], kernel[d] / strides[d] + (kernel[d] % strides[d] != 0));
    shape.emplace_back(unpooled[d]);
  }
  std::vector<ir::Expr> out_shape = shape;
  bool padded = false;
  if (!spec.output_shape.empty()) {
    const auto& os = spec.output_shape;
    auto bad = [&](const std::string& why) {
      throw UserError("nnvm.ops.input_shape", str_cat("input output_shape is ", list_string(os), "; ", why),
                      {"input output_shape"});
    };
    if (os.size() != x.rank()) bad(str_cat("it needs ", x.rank(), " values, one per axis of X"));
    for (size_t d = 0; d < 2; ++d)
      if (auto c = ir::simplified_const_int(x.shape()[d]); c && *c != os[d])
        bad(str_cat("axis ", d, " must equal X's ", *c));
    for (size_t d = 0; d < r; ++d) {
      if (os[2 + d] < unpooled[d] || uint64_t(os[2 + d]) > max_tensor_bytes)
        bad(str_cat("spatial axis ", 2 + d, " must lie in [", unpooled[d], ", 2^48], from the unpooled extent"));
      padded = padded || os[2 + d] != unpooled[d];
      out_shape[2 + d] = ir::Expr(os[2 + d]);
    }
  }
  std::vector<ir::Expr> in_extents(in.begin(), in.end());

  te::Tensor last = te::compute(
      shape,
      [&](const std::vector<ir::Var>& p) {
        std::vector<ir::IterVar> w;
        std::vector<ir::Expr> o, at{p[0], p[1]};
        ir::Expr cond;
        for (size_t d = 0; d < r; ++d) {
          w.push_back(te::reduce_axis(ir::Expr(windows[d]), str_cat("w", d)));
          // The windows containing p start at or before it (o * stride - pad_begin <= p) and end after
          // it; counting down from the last such window that exists, at most `windows` of them.
          ir::Expr first = ir::min((p[2 + d] + pad_begin[d]) / strides[d], ir::Expr(in[d] - 1));
          o.push_back(first - w.back()->var);
          ir::Expr covers = o[d] >= int64_t(0) && o[d] * strides[d] - pad_begin[d] + kernel[d] > p[2 + d];
          cond = cond.defined() ? (cond && covers) : covers;
          // Clamped, so the read stays inside I wherever the condition is evaluated.
          at.push_back(ir::min(ir::max(o[d], ir::Expr(int64_t(0))), ir::Expr(in[d] - 1)));
        }
        cond = cond && ir::cast(dtype::int64, indices(at)) == ravel(exprs(p), shape);
        return ir::Reduce::make(ir::Combiner::max, ravel(o, in_extents), w, ir::Expr(int64_t(-1)), cond);
      },
      name + "_last");
  return te::compute(
      out_shape,
      [&](const std::vector<ir::Var>& p) {
        std::vector<ir::Expr> at = exprs(p);
        ir::Expr inside;
        if (padded)
          for (size_t d = 0; d < r; ++d) {
            ir::Expr in_d = p[2 + d] < unpooled[d];
            inside = inside.defined() ? (inside && in_d) : in_d;
            at[2 + d] = ir::min(ir::Expr(p[2 + d]), ir::Expr(unpooled[d] - 1));
          }
        ir::Expr l = last(at);
        std::vector<ir::Expr> src{p[0], p[1]};
        for (auto& e : unravel(ir::max(l, ir::Expr(int64_t(0))), in_extents)) src.push_back(e);
        ir::Expr hit = inside.defined() ? (inside && l >= int64_t(0)) : (l >= int64_t(0));
        return ir::select(hit, x(src), ir::make_zero(x.dtype()));
      },
      std::move(name));
}

inline OpDef max_unpool_def() {
  return OpDef{
      .name = "max_unpool",
      .importer_names = {"onnx:MaxUnpool"},
      .input_names = {"X", "I", "output_shape"},
      .optional_inputs = 1,
      .value_inputs = {"output_shape"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            MaxUnpoolSpec spec{attrs.get_ints("kernel_shape", {}), attrs.get_ints("strides", {}),
                               attrs.get_ints("pads", {}), attrs.get_ints("output_shape", {})};
            return std::vector<te::Tensor>{max_unpool(in[0], in[1], spec)};
          },
      .cpu_schedule = transform_detail::schedule_scatter,
      .doc = "X written at the flat positions I into zeros (attributes kernel_shape, strides, pads; value input "
             "output_shape)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
