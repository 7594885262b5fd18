// Operators ONNX defines as a composition of others (most are ONNX functions), built here from
// the ops nnvm has, so the graph passes fuse them like any other subgraph:
//   - the integer products (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv) and
//     DynamicQuantizeLinear, following ONNX's reference step by step: inputs widened to int32,
//     zero points subtracted, the product accumulated exactly, then requantized;
//   - SwiGLU and CausalConvWithState, as their ONNX function bodies, and BatchNormalization in
//     training mode (batch statistics, running statistics as extra outputs);
//   - MatMul, Gemm, Conv, Softmax and LogSoftmax on float16/bfloat16, which run in float32
//     (nnvm's kernels for these compute in float32 or float64 only) and round the result back
//     once.
#include "adapters.hpp"

#include "nnvm/ir/op.hpp"
#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

namespace {

using graph::Value;

Value one(BuildContext& ctx, const std::string& op_type, std::vector<Value> inputs, const std::string& suffix,
          ops::Attrs attrs = {}) {
  return ctx.op(op_type, std::move(inputs), std::move(attrs), suffix).at(0);
}

Value cast(BuildContext& ctx, Value v, DataType to, const std::string& suffix) {
  if (ctx.type(v).dtype == to) return v;
  return one(ctx, "Cast", {v}, suffix, ops::Attrs().set_dtype("to", to));
}

Value input_or_none(const NodeBuild& n, size_t k) { return k < n.inputs.size() ? n.inputs[k] : Value{}; }

// The constant extents of `v`, or UserError "nnvm.onnx.shape" naming `what`.
std::vector<int64_t> static_shape(BuildContext& ctx, const Value& v, const std::string& what) {
  std::vector<int64_t> out;
  for (auto& e : ctx.type(v).shape) {
    const int64_t* c = ir::as_const_int(e);
    if (!c) throw UserError("nnvm.onnx.shape", str_cat(what, " needs a static shape; its shape is ",
                                                          ops::detail::shape_string(ctx.type(v).shape)));
    out.push_back(*c);
  }
  return out;
}

Value reshape(BuildContext& ctx, Value v, std::vector<int64_t> shape, const std::string& suffix) {
  int64_t rank = int64_t(shape.size());
  return one(ctx, "Reshape", {v, ctx.constant(suffix + "_shape", NDArray::from(shape, {rank}))}, suffix);
}

// A per-axis quantization parameter (1-D, one value per index of the operand's axis `axis` of
// `rank`) reshaped so that it broadcasts along that axis; a scalar or one-element one is left as is.
Value along_axis(BuildContext& ctx, Value param, int64_t axis, size_t rank, const std::string& suffix) {
  std::vector<int64_t> s = static_shape(ctx, param, suffix);
  int64_t count = 1;
  for (int64_t e : s) count *= e;
  if (s.size() != 1 || count == 1) return param;
  std::vector<int64_t> shape(rank - size_t(axis), 1);
  shape[0] = count;
  return reshape(ctx, param, shape, suffix);
}

// int32(x) - int32(zero_point) (the zero point already shaped to broadcast), or int32(x) without one.
Value centered(BuildContext& ctx, Value x, Value zero_point, const std::string& suffix) {
  Value wide = cast(ctx, x, dtype::int32, suffix + "_int32");
  if (!zero_point.defined()) return wide;
  return one(ctx, "Sub", {wide, cast(ctx, zero_point, dtype::int32, suffix + "_zp_int32")}, suffix + "_centered");
}

// MatMul on int32 operands with their zero points removed. A's zero point may be per row (1-D of
// A's row count), B's per column (1-D of B's column count), as the spec says.
Value integer_matmul(BuildContext& ctx, Value a, Value a_zp, Value b, Value b_zp) {
  size_t a_rank = ctx.type(a).shape.size();
  if (a_zp.defined() && a_rank >= 2) a_zp = along_axis(ctx, a_zp, int64_t(a_rank) - 2, a_rank, "a_zero_point_rows");
  return one(ctx, "MatMul", {centered(ctx, a, a_zp, "a"), centered(ctx, b, b_zp, "b")}, "int32_product");
}

// Conv of int32 operands (zero points removed; W's may be per output channel). nnvm's conv
// kernels compute in float32 or float64; float64 holds every partial sum of 8-bit products
// exactly (each is below 2^16, so up to 2^37 of them), so the int32 result is exact.
Value integer_conv(BuildContext& ctx, const NodeBuild& n, Value x, Value x_zp, Value w, Value w_zp, Value bias) {
  size_t w_rank = ctx.type(w).shape.size();
  if (w_zp.defined()) w_zp = along_axis(ctx, w_zp, 0, w_rank, "w_zero_point_channels");
  std::vector<Value> in{cast(ctx, centered(ctx, x, x_zp, "x"), dtype::float64, "x_float64"),
                        cast(ctx, centered(ctx, w, w_zp, "w"), dtype::float64, "w_float64")};
  if (bias.defined()) in.push_back(cast(ctx, bias, dtype::float64, "bias_float64"));
  return cast(ctx, one(ctx, "Conv", in, "conv_float64", n.attrs), dtype::int32, "int32_product");
}

// ONNX's requantization of an int32 product: round(product * (scale_a * scale_b / y_scale)
// + y_zero_point) clamped to y's type. The scale ratio is computed in the scales' type, the rest
// in float64, as ONNX's reference does.
Value requantize(BuildContext& ctx, Value product, Value ratio, Value y_zp) {
  DataType out = ctx.type(y_zp).dtype;
  if (out != dtype::int8 && out != dtype::uint8)
    throw UserError("nnvm.onnx.dtype", str_cat("y_zero_point is ", out, "; nnvm's quantized products output int8 or uint8"));
  Value y = one(ctx, "Mul", {cast(ctx, product, dtype::float64, "product_float64"),
                             cast(ctx, ratio, dtype::float64, "ratio_float64")},
                "scaled");
  y = one(ctx, "Add", {y, cast(ctx, y_zp, dtype::float64, "y_zero_point_float64")}, "shifted");
  y = one(ctx, "Round", {y}, "rounded");
  double lo = out == dtype::int8 ? -128 : 0, hi = out == dtype::int8 ? 127 : 255;
  y = one(ctx, "Clip", {y, ctx.constant("qmin", scalar(dtype::float64, lo)), ctx.constant("qmax", scalar(dtype::float64, hi))},
          "clipped");
  return cast(ctx, y, out, "quantized");
}

VersionAdapter widened(const char* op) {
  return {.op_type = op, .below = always, .also_needs = {"Cast"},
          .rewrite = [op = std::string(op)](NodeBuild& n, BuildContext& ctx) { return in_float32(n, ctx, op); }};
}

}  // namespace

std::vector<Value> in_float32(NodeBuild& n, BuildContext& ctx, const std::string& op_type) {
  DataType t = ctx.type(n.inputs.at(0)).dtype;
  if (!t.is_storage_only() || !t.is_float()) return {};
  std::vector<Value> in;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    Value v = n.inputs[k];
    if (v.defined() && ctx.type(v).dtype == t) v = cast(ctx, v, dtype::float32, str_cat("input", k, "_float32"));
    in.push_back(v);
  }
  while (!in.empty() && !in.back().defined()) in.pop_back();
  return {cast(ctx, one(ctx, op_type, in, "float32", n.attrs), t, str_cat("to_", t))};
}

std::vector<VersionAdapter> composite_ops() {
  std::vector<VersionAdapter> t;
  for (const char* op : {"Conv", "Gemm", "LogSoftmax", "MatMul", "Softmax"}) t.push_back(widened(op));

  // Training mode normalizes with the batch's own per-channel mean and (biased) variance and
  // also returns the running statistics: input_mean * momentum + batch_mean * (1 - momentum),
  // likewise for the variance (ONNX's reference).
  t.push_back({.op_type = "BatchNormalization", .below = always,
               .also_needs = {"ReduceMean", "Reshape", "Sub", "Mul", "Add"},
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 if (n.attrs.get_int("training_mode", 0) == 0) return std::vector<Value>{};
                 Value x = n.inputs.at(0);
                 size_t rank = ctx.type(x).shape.size();
                 if (rank < 2) throw UserError("nnvm.onnx.shape", "BatchNormalization's X needs a channel axis (rank 2 or more)");
                 std::vector<int64_t> axes{0};
                 for (size_t d = 2; d < rank; ++d) axes.push_back(int64_t(d));
                 Value axes_v = ctx.constant("axes", NDArray::from(axes, {int64_t(axes.size())}));
                 ops::Attrs flat = ops::Attrs().set_int("keepdims", 0), kept = ops::Attrs().set_int("keepdims", 1);
                 Value mean_kept = one(ctx, "ReduceMean", {x, axes_v}, "batch_mean_kept", kept);
                 Value dev = one(ctx, "Sub", {x, mean_kept}, "deviation");
                 Value batch_var = one(ctx, "ReduceMean", {one(ctx, "Mul", {dev, dev}, "deviation_squared"), axes_v},
                                       "batch_var", flat);
                 Value batch_mean = one(ctx, "ReduceMean", {x, axes_v}, "batch_mean", flat);
                 ops::Attrs attrs = without(n.attrs, "training_mode");
                 double momentum = attrs.get_float("momentum", 0.9);
                 attrs = without(attrs, "momentum");
                 Value y = one(ctx, "BatchNormalization", {x, n.inputs.at(1), n.inputs.at(2), batch_mean, batch_var},
                               "normalized", attrs);
                 auto running = [&](Value input_stat, Value batch_stat, const std::string& what) {
                   DataType st = ctx.type(input_stat).dtype;
                   Value keep = one(ctx, "Mul", {input_stat, ctx.constant(what + "_momentum", scalar(st, momentum))},
                                    what + "_kept");
                   Value add = one(ctx, "Mul", {cast(ctx, batch_stat, st, what + "_batch"),
                                                ctx.constant(what + "_rate", scalar(st, 1.0 - momentum))},
                                   what + "_added");
                   return one(ctx, "Add", {keep, add}, "running_" + what);
                 };
                 return std::vector<Value>{y, running(n.inputs.at(3), batch_mean, "mean"),
                                           running(n.inputs.at(4), batch_var, "var")};
               }});

  // y = swish(a, alpha) * b, a and b of one shape (no broadcasting).
  t.push_back({.op_type = "SwiGLU", .below = always, .builds = true, .also_needs = {"Swish", "Mul"},
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 require_equal_shapes(n, ctx, "SwiGLU takes A and B of one shape");
                 ops::Attrs swish;
                 if (n.attrs.has("alpha")) swish.set_float("alpha", n.attrs.get_float("alpha"));
                 Value gate = one(ctx, "Swish", {n.inputs.at(0)}, "gate", swish);
                 return std::vector<Value>{one(ctx, "Mul", {gate, n.inputs.at(1)}, "gated")};
               }});

  // Depthwise causal conv over (batch, channels, length) with a rolling state: the input is
  // prefixed by past_state (or k - 1 zeros), convolved with group = channels and no padding,
  // optionally followed by SiLU; present_state is the last k - 1 positions of the prefixed input.
  t.push_back({.op_type = "CausalConvWithState", .below = always, .builds = true,
               .also_needs = {"Conv", "Concat", "Slice", "Swish", "Cast"},
               .unsupported =
                   [](const ::onnx::NodeProto& node) -> std::string {
                     for (auto& a : node.attribute())
                       if (a.name() == "activation" && a.s() != "none" && a.s() != "silu" && a.s() != "swish")
                         return str_cat("attribute 'activation' is '", a.s(), "'; CausalConvWithState takes none, silu or swish");
                     return "";
                   },
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 Value input = n.inputs.at(0), weight = n.inputs.at(1);
                 Value bias = input_or_none(n, 2), past = input_or_none(n, 3);
                 std::vector<int64_t> in_shape = static_shape(ctx, input, "CausalConvWithState's input");
                 std::vector<int64_t> w_shape = static_shape(ctx, weight, "CausalConvWithState's weight");
                 if (in_shape.size() != 3 || w_shape.size() != 3)
                   throw UserError("nnvm.onnx.shape", "CausalConvWithState takes a rank-3 input (batch, channels, "
                                                      "length) and a rank-3 weight (channels, 1, k)");
                 int64_t k = w_shape[2];
                 Value padded = input;
                 if (past.defined() || k > 1) {
                   if (!past.defined()) {
                     // NDArray starts zero-filled.
                     past = ctx.constant("zero_state", NDArray(ctx.type(input).dtype, {in_shape[0], in_shape[1], k - 1}));
                   }
                   padded = one(ctx, "Concat", {past, input}, "padded", ops::Attrs().set_int("axis", 2));
                 }
                 int64_t padded_length = static_shape(ctx, padded, "the prefixed input")[2];
                 NodeBuild conv{.op_type = "Conv", .inputs = {padded, weight},
                                .attrs = ops::Attrs().set_int("group", in_shape[1])};
                 if (bias.defined()) conv.inputs.push_back(bias);
                 std::vector<Value> y = in_float32(conv, ctx, "Conv");
                 Value out = y.empty() ? one(ctx, "Conv", conv.inputs, "conv", conv.attrs) : y[0];
                 std::string act = n.attrs.get_string("activation", "none");
                 if (act == "silu" || act == "swish") out = one(ctx, "Swish", {out}, "silu");
                 auto ints = [&](const std::string& s, int64_t v) { return ctx.constant(s, NDArray::from(std::vector<int64_t>{v}, {1})); };
                 Value state = one(ctx, "Slice", {padded, ints("state_start", padded_length - (k - 1)),
                                                  ints("state_end", padded_length), ints("state_axis", 2)},
                                   "present_state");
                 return std::vector<Value>{out, state};
               }});

  // y_scale = (max(x, 0) - min(x, 0)) / 255, y_zero_point = saturate(round(-min / y_scale)),
  // y = QuantizeLinear(x, y_scale, y_zero_point): ONNX's function body.
  t.push_back({.op_type = "DynamicQuantizeLinear", .below = always, .builds = true,
               .also_needs = {"QuantizeLinear", "ReduceMin", "ReduceMax", "Min", "Max", "Sub", "Div", "Clip", "Round", "Cast"},
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 Value x = n.inputs.at(0);
                 Value q_min = ctx.constant("q_min", scalar(dtype::float32, 0)),
                       q_max = ctx.constant("q_max", scalar(dtype::float32, 255));
                 ops::Attrs flat = ops::Attrs().set_int("keepdims", 0);
                 Value lo = one(ctx, "Min", {one(ctx, "ReduceMin", {x}, "x_min", flat), q_min}, "x_min_adjusted");
                 Value hi = one(ctx, "Max", {one(ctx, "ReduceMax", {x}, "x_max", flat), q_min}, "x_max_adjusted");
                 Value scale = one(ctx, "Div", {one(ctx, "Sub", {hi, lo}, "x_range"), q_max}, "scale");
                 Value zp = one(ctx, "Sub", {q_min, one(ctx, "Div", {lo, scale}, "min_scaled")}, "zero_point_fp");
                 zp = one(ctx, "Round", {one(ctx, "Clip", {zp, q_min, q_max}, "zero_point_clipped")}, "zero_point_rounded");
                 zp = cast(ctx, zp, dtype::uint8, "zero_point");
                 return std::vector<Value>{one(ctx, "QuantizeLinear", {x, scale, zp}, "quantized"), scale, zp};
               }});

  t.push_back({.op_type = "MatMulInteger", .below = always, .builds = true,
               .also_needs = {"MatMul", "Cast", "Sub", "Reshape"},
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 return std::vector<Value>{
                     integer_matmul(ctx, n.inputs.at(0), input_or_none(n, 2), n.inputs.at(1), input_or_none(n, 3))};
               }});
  t.push_back({.op_type = "ConvInteger", .below = always, .builds = true,
               .also_needs = {"Conv", "Cast", "Sub", "Reshape"},
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 return std::vector<Value>{integer_conv(ctx, n, n.inputs.at(0), input_or_none(n, 2), n.inputs.at(1),
                                                        input_or_none(n, 3), Value{})};
               }});
  // Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.
  t.push_back({.op_type = "QLinearMatMul", .below = always, .builds = true,
               .also_needs = {"MatMul", "Cast", "Sub", "Reshape", "Mul", "Div", "Add", "Round", "Clip"},
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 Value a = n.inputs.at(0), b = n.inputs.at(3);
                 Value product = integer_matmul(ctx, a, n.inputs.at(2), b, n.inputs.at(5));
                 size_t a_rank = ctx.type(a).shape.size();
                 Value a_scale = n.inputs.at(1);
                 if (a_rank >= 2) a_scale = along_axis(ctx, a_scale, int64_t(a_rank) - 2, a_rank, "a_scale_rows");
                 Value ratio = one(ctx, "Div", {one(ctx, "Mul", {a_scale, n.inputs.at(4)}, "input_scale"), n.inputs.at(6)},
                                   "scale_ratio");
                 return std::vector<Value>{requantize(ctx, product, ratio, n.inputs.at(7))};
               }});
  // Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B (int32).
  t.push_back({.op_type = "QLinearConv", .below = always, .builds = true,
               .also_needs = {"Conv", "Cast", "Sub", "Reshape", "Mul", "Div", "Add", "Round", "Clip"},
               .rewrite = [](NodeBuild& n, BuildContext& ctx) {
                 Value w = n.inputs.at(3);
                 Value product = integer_conv(ctx, n, n.inputs.at(0), n.inputs.at(2), w, n.inputs.at(5),
                                              input_or_none(n, 8));
                 Value w_scale = along_axis(ctx, n.inputs.at(4), 1, ctx.type(w).shape.size(), "w_scale_channels");
                 Value ratio = one(ctx, "Div", {one(ctx, "Mul", {n.inputs.at(1), w_scale}, "input_scale"), n.inputs.at(6)},
                                   "scale_ratio");
                 return std::vector<Value>{requantize(ctx, product, ratio, n.inputs.at(7))};
               }});
  return t;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
