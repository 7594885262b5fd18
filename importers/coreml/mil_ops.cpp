// MIL ops of CNNs and MLPs onto nnvm ops: conv, linear, matmul, batch_norm, pooling, the
// activations, element-wise binary and unary ops, reshape / transpose / concat, softmax,
// reduce_mean and cast. MIL is channels-first like nnvm's ops, so most are one op.
#include "mil.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

using Values = std::vector<graph::Value>;

// pad_type and pad as nnvm's window attributes. MIL's custom pad lists (begin, end) per spatial
// axis; ONNX-style pads list every begin, then every end.
void window_padding(const OpContext& c, ops::Attrs& a, size_t dims) {
  const std::string type = c.text("pad_type", "valid");
  if (type == "valid") {
    a.set_ints("pads", std::vector<int64_t>(2 * dims, 0));
  } else if (type == "same") {
    a.set_string("auto_pad", "SAME_UPPER");
  } else if (type == "same_lower") {
    a.set_string("auto_pad", "SAME_LOWER");
  } else if (type == "custom") {
    std::vector<int64_t> pad = c.ints("pad", std::vector<int64_t>(2 * dims, 0));
    if (pad.size() != 2 * dims) c.bad_attribute("pad", str_cat("has ", pad.size(), " entries for ", dims, " spatial axes"));
    std::vector<int64_t> pads(2 * dims);
    for (size_t i = 0; i < dims; ++i) pads[i] = pad[2 * i], pads[dims + i] = pad[2 * i + 1];
    a.set_ints("pads", pads);
  } else {
    c.bad_attribute("pad_type", str_cat("pad_type ", quote(type), " is not valid, same, same_lower or custom"));
  }
}

size_t spatial_dims(const OpContext& c, const graph::Value& x) {
  const int64_t r = c.rank(x);
  if (r < 3) c.bad_shape(str_cat("the input has rank ", r, "; (N, C, spatial...) is needed"));
  return size_t(r - 2);
}

Values conv(OpContext& c) {
  graph::Value x = c.tensor("x"), w = c.tensor("weight");
  const size_t dims = spatial_dims(c, x);
  ops::Attrs a;
  std::vector<int64_t> wshape = c.shape(w);
  if (wshape.size() != dims + 2) c.bad_shape(str_cat("the weight has rank ", wshape.size(), " for ", dims, " spatial axes"));
  a.set_ints("kernel_shape", std::vector<int64_t>(wshape.begin() + 2, wshape.end()))
      .set_ints("strides", c.ints("strides", std::vector<int64_t>(dims, 1)))
      .set_ints("dilations", c.ints("dilations", std::vector<int64_t>(dims, 1)))
      .set_int("group", c.integer("groups", 1));
  window_padding(c, a, dims);
  Values in{x, w};
  if (auto b = c.optional_tensor("bias")) in.push_back(*b);
  return {c.op("conv", in, a)};
}

Values pool(OpContext& c, const std::string& op) {
  graph::Value x = c.tensor("x");
  const size_t dims = spatial_dims(c, x);
  ops::Attrs a;
  a.set_ints("kernel_shape", c.ints("kernel_sizes"))
      .set_ints("strides", c.ints("strides", std::vector<int64_t>(dims, 1)))
      .set_int("ceil_mode", c.flag("ceil_mode", false) ? 1 : 0);
  window_padding(c, a, dims);
  if (op == "average_pool") a.set_int("count_include_pad", c.flag("exclude_padding_from_average", false) ? 0 : 1);
  return {c.op(op, {x}, a)};
}

// x W^T + b over x's last axis.
Values linear(OpContext& c) {
  graph::Value x = c.tensor("x"), w = c.tensor("weight");
  std::optional<graph::Value> b = c.optional_tensor("bias");
  if (c.rank(x) == 2) {
    Values in{x, w};
    if (b) in.push_back(*b);
    return {c.op("dense", in, ops::Attrs().set_int("transB", 1))};
  }
  graph::Value wt = c.op("transpose", {w}, ops::Attrs().set_ints("perm", {1, 0}), "weight_t");
  if (!b) return {c.op("matmul", {x, wt})};
  return {c.op("add", {c.op("matmul", {x, wt}, {}, "matmul"), *b})};
}

graph::Value swap_last(OpContext& c, graph::Value v, const std::string& suffix) {
  const int64_t r = c.rank(v);
  if (r < 2) return v;  // a vector is its own transpose
  std::vector<int64_t> perm(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) perm[size_t(i)] = i;
  std::swap(perm[size_t(r - 1)], perm[size_t(r - 2)]);
  return c.op("transpose", {v}, ops::Attrs().set_ints("perm", perm), suffix);
}

Values matmul(OpContext& c) {
  graph::Value x = c.tensor("x"), y = c.tensor("y");
  if (c.flag("transpose_x", false)) x = swap_last(c, x, "x_t");
  if (c.flag("transpose_y", false)) y = swap_last(c, y, "y_t");
  return {c.op("matmul", {x, y})};
}

// Channel parameters default to ones (gamma) and zeros (beta).
Values batch_norm(OpContext& c) {
  graph::Value x = c.tensor("x"), mean = c.tensor("mean"), var = c.tensor("variance");
  std::vector<int64_t> cshape = c.shape(mean);
  auto filled = [&](double v, const std::string& name) {
    if (auto t = c.optional_tensor(name)) return *t;
    return c.op("expand", {c.scalar_like(v, mean, name + "_value"), c.int64s(cshape, name + "_shape")}, {}, name);
  };
  graph::Value gamma = filled(1.0, "gamma"), beta = filled(0.0, "beta");
  return {c.op("batch_norm", {x, gamma, beta, mean, var}, ops::Attrs().set_float("epsilon", c.real("epsilon", 1e-5)))};
}

Values reshape(OpContext& c) {
  graph::Value x = c.tensor("x");
  return {c.op("reshape", {x, c.int64s(c.ints("shape"), "shape")})};
}

Values transpose(OpContext& c) {
  return {c.op("transpose", {c.tensor("x")}, ops::Attrs().set_ints("perm", c.ints("perm")))};
}

Values softmax(OpContext& c) {
  graph::Value x = c.tensor("x");
  return {c.op("softmax", {x}, ops::Attrs().set_int("axis", c.axis(c.integer("axis", -1), c.rank(x), "axis")))};
}

Values reduce(OpContext& c, const std::string& op) {
  graph::Value x = c.tensor("x");
  ops::Attrs a;
  a.set_int("keepdims", c.flag("keep_dims", false) ? 1 : 0);
  if (!c.has("axes")) return {c.op(op, {x}, a)};
  return {c.op(op, {x, c.int64s(c.ints("axes"), "axes")}, a)};
}

Values concat(OpContext& c) {
  if (c.flag("interleave", false)) c.unsupported("interleave", "interleaved concat is not supported");
  Values in = c.tensors("values");
  return {c.op("concat", in, ops::Attrs().set_int("axis", c.axis(c.integer("axis"), c.rank(in[0]), "axis")))};
}

// MIL's dtype names.
Values cast(OpContext& c) {
  static const std::map<std::string, DataType> names{
      {"fp16", dtype::float16}, {"fp32", dtype::float32}, {"fp64", dtype::float64}, {"int8", dtype::int8},
      {"uint8", dtype::uint8},  {"int16", dtype::int16},  {"int32", dtype::int32},  {"int64", dtype::int64},
      {"bool", dtype::boolean}};
  const std::string to = c.text("dtype");
  // float16 programs compute in float32 (mil_importer.cpp): a cast to fp16 keeps float32.
  auto it = names.find(to == "fp16" ? "fp32" : to);
  if (it == names.end()) c.unsupported("dtype", str_cat("cast to ", quote(to), " is not supported"));
  return {c.op("cast", {c.tensor("x")}, ops::Attrs().set_dtype("to", it->second))};
}

Values binary(OpContext& c, const std::string& op) { return {c.op(op, {c.tensor("x"), c.tensor("y")})}; }
Values unary(OpContext& c, const std::string& op) { return {c.op(op, {c.tensor("x")})}; }

Values with_alpha(OpContext& c, const std::string& op, double fallback) {
  return {c.op(op, {c.tensor("x")}, ops::Attrs().set_float("alpha", c.real("alpha", fallback)))};
}

Values clip(OpContext& c) {
  graph::Value x = c.tensor("x");
  return {c.op("clip", {x, c.tensor("alpha"), c.tensor("beta")})};
}

}  // namespace

const std::map<std::string, OpConverter>& op_converters() {
  static const std::map<std::string, OpConverter> table = [] {
    std::map<std::string, OpConverter> t;
    t["conv"] = conv;
    t["linear"] = linear;
    t["matmul"] = matmul;
    t["batch_norm"] = batch_norm;
    t["max_pool"] = [](OpContext& c) { return pool(c, "max_pool"); };
    t["avg_pool"] = [](OpContext& c) { return pool(c, "average_pool"); };
    t["reshape"] = reshape;
    t["transpose"] = transpose;
    t["softmax"] = softmax;
    t["reduce_mean"] = [](OpContext& c) { return reduce(c, "reduce_mean"); };
    t["reduce_sum"] = [](OpContext& c) { return reduce(c, "reduce_sum"); };
    t["reduce_max"] = [](OpContext& c) { return reduce(c, "reduce_max"); };
    t["concat"] = concat;
    t["cast"] = cast;
    t["clip"] = clip;
    for (auto [mil, op] : std::map<std::string, std::string>{{"add", "add"}, {"sub", "sub"}, {"mul", "mul"},
                                                            {"real_div", "div"}, {"maximum", "max"},
                                                            {"minimum", "min"}, {"pow", "pow"}})
      t[mil] = [op = op](OpContext& c) { return binary(c, op); };
    for (auto [mil, op] : std::map<std::string, std::string>{{"relu", "relu"}, {"sigmoid", "sigmoid"}, {"tanh", "tanh"},
                                                            {"softplus", "softplus"}, {"softsign", "softsign"},
                                                            {"exp", "exp"}, {"sqrt", "sqrt"}, {"abs", "abs"},
                                                            {"identity", "identity"}})
      t[mil] = [op = op](OpContext& c) { return unary(c, op); };
    t["leaky_relu"] = [](OpContext& c) { return with_alpha(c, "leaky_relu", 0.01); };
    t["elu"] = [](OpContext& c) { return with_alpha(c, "elu", 1.0); };
    return t;
  }();
  return table;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
