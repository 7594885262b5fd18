// Tensor ops: arithmetic (elementwise, broadcast, with a scalar), shape manipulation (Reshape's
// special codes, transpose, slicing, concatenation, splitting), reductions and products.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "convert.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

namespace {

using Values = std::vector<graph::Value>;

Values binary(NodeContext& c, const std::string& op) { return {c.op(op, {c.input(0), c.input(1)})}; }

// x <op> scalar, or scalar <op> x when `reversed`.
Values with_scalar(NodeContext& c, const std::string& op, bool reversed) {
  graph::Value x = c.input(0);
  if (!c.has("scalar")) c.bad_attribute("scalar", "the attribute is required");
  graph::Value s = c.scalar_like(c.real("scalar", 0), x);
  return {c.op(op, reversed ? Values{s, x} : Values{x, s})};
}

Values unary(NodeContext& c, const std::string& op) { return {c.op(op, {c.input(0)})}; }

Values square(NodeContext& c) { return {c.op("mul", {c.input(0), c.input(0)})}; }

Values rsqrt(NodeContext& c) { return {c.op("reciprocal", {c.op("sqrt", {c.input(0)}, {}, "sqrt")})}; }

Values add_n(NodeContext& c) {
  if (c.num_inputs() == 1) return {c.op("identity", {c.input(0)})};
  return {c.op("sum", c.inputs())};
}

// MXNet's Reshape target with its special codes, applied to `in` (MXNet's InferReshapeShape):
//   0 copies the input's extent, -1 is inferred, -2 copies all remaining extents, -3 merges two
//   extents, -4 splits one extent into the next two codes (one of which may be -1).
// With `reverse` the codes are matched from the right.
std::vector<int64_t> reshape_target(const NodeContext& c, std::vector<int64_t> in, std::vector<int64_t> codes,
                                    bool reverse) {
  if (reverse) {
    std::reverse(in.begin(), in.end());
    std::reverse(codes.begin(), codes.end());
  }
  std::vector<int64_t> out;
  size_t src = 0;
  std::optional<size_t> inferred;
  auto next = [&]() {
    if (src >= in.size())
      c.bad_attribute("shape", str_cat("the codes consume more than the input's ", in.size(), " dimensions"));
    return in[src++];
  };
  for (size_t i = 0; i < codes.size(); ++i) {
    const int64_t code = codes[i];
    if (code == 0) {
      out.push_back(next());
    } else if (code == -1) {
      if (inferred) c.bad_attribute("shape", "more than one extent is -1");
      inferred = out.size();
      out.push_back(1);
      if (src < in.size()) ++src;
    } else if (code == -2) {
      while (src < in.size()) out.push_back(in[src++]);
    } else if (code == -3) {
      int64_t a = next(), b = next();
      out.push_back(a * b);
    } else if (code == -4) {
      if (i + 2 >= codes.size()) c.bad_attribute("shape", "-4 must be followed by two extents");
      int64_t whole = next(), a = codes[++i], b = codes[++i];
      if (a == -1 && b == -1) c.bad_attribute("shape", "-4 splits into two unknown extents");
      if (a == -1) a = b ? whole / b : 0;
      if (b == -1) b = a ? whole / a : 0;
      if (a < 0 || b < 0 || a * b != whole)
        c.bad_attribute("shape", str_cat("-4 cannot split extent ", whole, " into ", a, " x ", b));
      out.push_back(a);
      out.push_back(b);
    } else if (code > 0) {
      out.push_back(code);
      if (src < in.size()) ++src;
    } else {
      c.bad_attribute("shape", str_cat("code ", code, " is not an extent or one of 0, -1, -2, -3, -4"));
    }
  }
  const int64_t total = std::accumulate(in.begin(), in.end(), int64_t(1), std::multiplies<int64_t>());
  if (inferred) {
    int64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i)
      if (i != *inferred) known *= out[i];
    if (known == 0 || total % known != 0)
      c.bad_attribute("shape", str_cat("no extent makes ", total, " elements from the others (", known, ")"));
    out[*inferred] = total / known;
  }
  if (reverse) std::reverse(out.begin(), out.end());
  return out;
}

Values reshape(NodeContext& c) {
  graph::Value x = c.input(0);
  std::vector<int64_t> in = c.shape(x), out;
  if (c.has("shape") && !c.ints("shape", {}).empty()) {
    out = reshape_target(c, in, c.ints("shape", {}), c.flag("reverse", false));
  } else if (c.has("target_shape")) {
    // The pre-1.0 form: a 0 extent is inferred; keep_highest keeps the first input extent.
    std::vector<int64_t> codes = c.ints("target_shape", {});
    for (auto& e : codes) e = e == 0 ? -1 : e;
    if (c.flag("keep_highest", false)) codes.insert(codes.begin(), 0);
    out = reshape_target(c, in, codes, false);
  } else {
    c.bad_attribute("shape", "the attribute is required");
  }
  const int64_t before = std::accumulate(in.begin(), in.end(), int64_t(1), std::multiplies<int64_t>());
  const int64_t after = std::accumulate(out.begin(), out.end(), int64_t(1), std::multiplies<int64_t>());
  if (before != after)
    c.bad_attribute("shape", str_cat("the target holds ", after, " elements but the input ", before));
  return {c.op("reshape", {x, c.int64s(out, "shape")})};
}

Values flatten(NodeContext& c) { return {c.op("flatten", {c.input(0)}, ops::Attrs().set_int("axis", 1))}; }

Values transpose(NodeContext& c) {
  graph::Value x = c.input(0);
  std::vector<int64_t> axes = c.ints("axes", {});
  ops::Attrs a;
  if (!axes.empty()) a.set_ints("perm", axes);  // none: reverse the axes, as ONNX's default
  return {c.op("transpose", {x}, a)};
}

Values swap_axes(NodeContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = int64_t(c.type(x).shape.size());
  std::vector<int64_t> perm(static_cast<size_t>(rank));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[size_t(c.axis(c.integer("dim1", 0), rank, "dim1"))],
            perm[size_t(c.axis(c.integer("dim2", 0), rank, "dim2"))]);
  return {c.op("transpose", {x}, ops::Attrs().set_ints("perm", perm))};
}

Values expand_dims(NodeContext& c) {
  return {c.op("unsqueeze", {c.input(0), c.int64s({c.integer("axis")}, "axes")})};
}

Values squeeze(NodeContext& c) {
  std::vector<int64_t> axes = c.ints("axis", {});
  Values in{c.input(0)};
  if (!axes.empty()) in.push_back(c.int64s(axes, "axes"));
  return {c.op("squeeze", in)};
}

Values concat(NodeContext& c) {
  return {c.op("concat", c.inputs(), ops::Attrs().set_int("axis", c.integer("dim", 1)))};
}

Values stack(NodeContext& c) {
  const int64_t axis = c.integer("axis", 0);
  Values parts;
  for (size_t k = 0; k < c.num_inputs(); ++k)
    parts.push_back(c.op("unsqueeze", {c.input(k), c.int64s({axis}, "axes")}, {}, str_cat("expand", k)));
  return {c.op("concat", parts, ops::Attrs().set_int("axis", axis))};
}

Values clip(NodeContext& c) {
  graph::Value x = c.input(0);
  if (!c.has("a_min") || !c.has("a_max")) c.bad_attribute(c.has("a_min") ? "a_max" : "a_min", "the attribute is required");
  return {c.op("clip", {x, c.scalar_like(c.real("a_min", 0), x, "min"), c.scalar_like(c.real("a_max", 0), x, "max")})};
}

// slice_axis: [begin, end) on one axis; end None runs to the end.
Values slice_axis(NodeContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = int64_t(c.type(x).shape.size());
  const int64_t axis = c.axis(c.integer("axis"), rank, "axis");
  const int64_t begin = c.integer("begin");
  const int64_t end = c.optional_int("end").value_or(INT64_MAX);
  return {c.op("slice", {x, c.int64s({begin}, "starts"), c.int64s({end}, "ends"), c.int64s({axis}, "axes")})};
}

// slice: per-axis begin/end/step from the first axis on; None is the axis' whole range.
Values slice(NodeContext& c) {
  graph::Value x = c.input(0);
  auto begin = c.optional_ints("begin"), end = c.optional_ints("end"), step = c.optional_ints("step");
  if (begin.size() != end.size() || (!step.empty() && step.size() != begin.size()))
    c.bad_attribute("end", str_cat("begin has ", begin.size(), " entries, end ", end.size(), ", step ", step.size()));
  if (int64_t(begin.size()) > int64_t(c.type(x).shape.size()))
    c.bad_attribute("begin", "there are more entries than the input has dimensions");
  std::vector<int64_t> starts, ends, axes, steps;
  for (size_t i = 0; i < begin.size(); ++i) {
    const int64_t s = step.empty() || !step[i] ? 1 : *step[i];
    if (s == 0) c.bad_attribute("step", "a step is 0");
    starts.push_back(begin[i] ? *begin[i] : s > 0 ? 0 : -1);
    ends.push_back(end[i] ? *end[i] : s > 0 ? INT64_MAX : INT64_MIN);
    axes.push_back(int64_t(i));
    steps.push_back(s);
  }
  return {c.op("slice", {x, c.int64s(starts, "starts"), c.int64s(ends, "ends"), c.int64s(axes, "axes"),
                         c.int64s(steps, "steps")})};
}

// sum/mean/max/min/prod over `axis` (all when absent), or over all other axes with exclude.
Values reduce(NodeContext& c, const std::string& op) {
  graph::Value x = c.input(0);
  const int64_t rank = int64_t(c.type(x).shape.size());
  std::vector<int64_t> axes;
  if (c.text("axis", "None") != "None" && c.text("axis", "()") != "()")
    for (int64_t a : c.ints("axis", {})) axes.push_back(c.axis(a, rank, "axis"));
  if (c.flag("exclude", false)) {
    std::vector<int64_t> rest;
    for (int64_t a = 0; a < rank; ++a)
      if (std::find(axes.begin(), axes.end(), a) == axes.end()) rest.push_back(a);
    axes = rest;
    if (axes.empty()) return {c.op("identity", {x})};
  }
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  ops::Attrs a;
  a.set_int("keepdims", c.flag("keepdims", false));
  return {c.op(op, {x, c.int64s(axes, "axes")}, a)};
}

// Swaps the last two axes of `v` (for batch_dot's and dot's transpose flags).
graph::Value transpose_last_two(NodeContext& c, graph::Value v, const std::string& suffix) {
  const size_t rank = c.type(v).shape.size();
  if (rank < 2) c.bad_attribute(suffix, "transposing needs at least two dimensions");
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return c.op("transpose", {v}, ops::Attrs().set_ints("perm", perm), suffix);
}

Values batch_dot(NodeContext& c) {
  graph::Value a = c.input(0), b = c.input(1);
  if (c.flag("transpose_a", false)) a = transpose_last_two(c, a, "transpose_a");
  if (c.flag("transpose_b", false)) b = transpose_last_two(c, b, "transpose_b");
  return {c.op("matmul", {a, b})};
}

// dot of 1-D or 2-D operands (the N-D form contracts the last axis of a with the first of b,
// which matmul does not: refused).
Values dot(NodeContext& c) {
  graph::Value a = c.input(0), b = c.input(1);
  if (c.type(a).shape.size() > 2 || c.type(b).shape.size() > 2)
    c.unsupported("", "dot of operands with more than two dimensions is not supported (batch_dot is)");
  if (c.flag("transpose_a", false)) a = transpose_last_two(c, a, "transpose_a");
  if (c.flag("transpose_b", false)) b = transpose_last_two(c, b, "transpose_b");
  return {c.op("matmul", {a, b})};
}

// SliceChannel / split: num_outputs equal parts along `axis`, each squeezed with squeeze_axis.
Values split(NodeContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = int64_t(c.type(x).shape.size());
  const int64_t axis = c.axis(c.integer("axis", 1), rank, "axis");
  const int64_t parts = c.integer("num_outputs");
  const int64_t extent = c.shape(x)[size_t(axis)];
  if (parts <= 0 || extent % parts != 0)
    c.bad_attribute("num_outputs", str_cat("cannot split extent ", extent, " into ", parts, " equal parts"));
  Values outs = c.op_outputs("split", {x}, ops::Attrs().set_int("axis", axis).set_int("num_outputs", parts),
                             c.flag("squeeze_axis", false) ? "split" : "");
  if (!c.flag("squeeze_axis", false)) return outs;
  Values squeezed;
  for (size_t k = 0; k < outs.size(); ++k)
    squeezed.push_back(c.op("squeeze", {outs[k], c.int64s({axis}, "axes")}, {}, str_cat("squeeze", k)));
  return squeezed;
}

Values cast(NodeContext& c) {
  static const std::map<std::string, DataType> names = {
      {"float16", dtype::float16}, {"float32", dtype::float32}, {"float64", dtype::float64},
      {"uint8", dtype::uint8},     {"int8", dtype::int8},       {"int32", dtype::int32},
      {"int64", dtype::int64},     {"bool", dtype::boolean},    {"bfloat16", dtype::bfloat16}};
  const std::string to = c.text("dtype", "");
  auto it = names.find(to);
  if (it == names.end()) c.bad_attribute("dtype", str_cat("'", to, "' is not a type nnvm reads"));
  return {c.op("cast", {c.input(0)}, ops::Attrs().set_dtype("to", it->second))};
}

// Pad: pad_width lists (before, after) per axis; constant, edge and reflect modes.
Values pad(NodeContext& c) {
  graph::Value x = c.input(0);
  std::vector<int64_t> width = c.ints("pad_width", {});
  const size_t rank = c.type(x).shape.size();
  if (width.size() != 2 * rank)
    c.bad_attribute("pad_width", str_cat("has ", width.size(), " entries for a rank-", rank, " input"));
  std::vector<int64_t> pads(2 * rank);
  for (size_t i = 0; i < rank; ++i) pads[i] = width[2 * i], pads[rank + i] = width[2 * i + 1];
  const std::string mode = c.text("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect")
    c.bad_attribute("mode", str_cat("mode ", mode, " is not constant, edge or reflect"));
  Values in{x, c.int64s(pads, "pads")};
  if (mode == "constant") in.push_back(c.scalar_like(c.real("constant_value", 0), x, "value"));
  return {c.op("pad", in, ops::Attrs().set_string("mode", mode))};
}

// UpSampling with sample_type nearest: each pixel repeated `scale` times along H and W.
Values upsampling(NodeContext& c) {
  if (c.text("sample_type", "") != "nearest")
    c.unsupported("sample_type", "only nearest UpSampling is supported");
  if (c.num_inputs() != 1) c.unsupported("num_args", "UpSampling of several inputs is not supported");
  const double scale = double(c.integer("scale"));
  NDArray scales = NDArray::from(std::vector<float>{1, 1, float(scale), float(scale)}, {4});
  ops::Attrs a;
  a.set_string("mode", "nearest").set_string("nearest_mode", "floor").set_string("coordinate_transformation_mode",
                                                                                   "asymmetric");
  return {c.op("resize", {c.input(0), graph::Value{}, c.constant(std::move(scales), "scales")}, a)};
}

}  // namespace

void add_tensor_converters(std::map<std::string, Converter>& t) {
  auto bin = [](std::string op) { return Converter{[op](NodeContext& c) { return binary(c, op); }}; };
  auto scal = [](std::string op, bool reversed) {
    return Converter{[op, reversed](NodeContext& c) { return with_scalar(c, op, reversed); }};
  };
  auto un = [](std::string op) { return Converter{[op](NodeContext& c) { return unary(c, op); }}; };
  // Elementwise (same shapes) and broadcasting arithmetic, under every name MXNet versions used.
  for (auto [names, op] : std::vector<std::pair<std::vector<const char*>, const char*>>{
           {{"elemwise_add", "_plus", "_Plus", "_add", "broadcast_add", "broadcast_plus"}, "add"},
           {{"elemwise_sub", "_minus", "_Minus", "_sub", "broadcast_sub", "broadcast_minus"}, "sub"},
           {{"elemwise_mul", "_mul", "_Mul", "broadcast_mul"}, "mul"},
           {{"elemwise_div", "_div", "_Div", "broadcast_div"}, "div"},
           {{"_maximum", "_Maximum", "broadcast_maximum"}, "max"},
           {{"_minimum", "_Minimum", "broadcast_minimum"}, "min"},
           {{"_power", "_Power", "broadcast_power"}, "pow"}})
    for (const char* n : names) t[n] = bin(op);
  for (auto [names, op, reversed] : std::vector<std::tuple<std::vector<const char*>, const char*, bool>>{
           {{"_plus_scalar", "_PlusScalar"}, "add", false},
           {{"_minus_scalar", "_MinusScalar"}, "sub", false},
           {{"_rminus_scalar", "_RMinusScalar"}, "sub", true},
           {{"_mul_scalar", "_MulScalar"}, "mul", false},
           {{"_div_scalar", "_DivScalar"}, "div", false},
           {{"_rdiv_scalar", "_RDivScalar"}, "div", true},
           {{"_power_scalar", "_PowerScalar"}, "pow", false},
           {{"_rpower_scalar", "_RPowerScalar"}, "pow", true},
           {{"_maximum_scalar", "_MaximumScalar"}, "max", false},
           {{"_minimum_scalar", "_MinimumScalar"}, "min", false}})
    for (const char* n : names) t[n] = scal(op, reversed);
  for (auto [name, op] : std::vector<std::pair<const char*, const char*>>{
           {"exp", "exp"}, {"log", "log"}, {"sqrt", "sqrt"}, {"abs", "abs"}, {"negative", "neg"},
           {"reciprocal", "reciprocal"}, {"floor", "floor"}, {"ceil", "ceil"}, {"round", "round"},
           {"sin", "sin"}, {"cos", "cos"}, {"erf", "erf"}, {"sign", "sign"},
           {"_copy", "identity"}, {"identity", "identity"}, {"BlockGrad", "identity"},
           {"stop_gradient", "identity"}})
    t[name] = un(op);
  t["square"] = {square};
  t["rsqrt"] = {rsqrt};
  t["add_n"] = {add_n};
  t["ElementWiseSum"] = {add_n};
  t["Reshape"] = {reshape};
  t["reshape"] = {reshape};
  t["Flatten"] = {flatten};
  t["flatten"] = {flatten};
  t["transpose"] = {transpose};
  t["SwapAxis"] = {swap_axes};
  t["swapaxes"] = {swap_axes};
  t["expand_dims"] = {expand_dims};
  t["squeeze"] = {squeeze};
  t["Concat"] = {concat};
  t["concat"] = {concat};
  t["stack"] = {stack};
  t["clip"] = {clip};
  t["slice_axis"] = {slice_axis};
  t["slice"] = {slice};
  t["crop"] = {slice};
  for (auto [name, op] : std::vector<std::pair<const char*, const char*>>{
           {"sum", "reduce_sum"}, {"sum_axis", "reduce_sum"}, {"mean", "reduce_mean"}, {"max", "reduce_max"},
           {"max_axis", "reduce_max"}, {"min", "reduce_min"}, {"min_axis", "reduce_min"}, {"prod", "reduce_prod"}})
    t[name] = Converter{[op = std::string(op)](NodeContext& c) { return reduce(c, op); }};
  t["batch_dot"] = {batch_dot};
  t["dot"] = {dot};
  t["SliceChannel"] = {split};
  t["split"] = {split};
  t["Cast"] = {cast};
  t["cast"] = {cast};
  t["Pad"] = {pad};
  t["pad"] = {pad};
  t["UpSampling"] = {upsampling};
}

}  // namespace mxnet_import
NNVM_END_NAMESPACE
