// NeuralNetwork element-wise and shape layers: unary functions, add / multiply / average / max /
// min of several blobs, the broadcastable binary layers, concat, flatten, reshape, transpose,
// squeeze / expand, constant padding, mean reduction, clip, scale and bias.
#include "nn.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

using Values = std::vector<graph::Value>;
namespace spec = nnvm_coreml_spec;

// f(scale * x + shift) for the unary function layer's functions.
Values unary(LayerContext& c) {
  using U = spec::UnaryFunctionLayerParams;
  const auto& p = c.layer().unary();
  graph::Value in = c.input(0);
  graph::Value x = c.affine(in, p.scale(), p.shift(), "input");
  auto plus_epsilon = [&] { return c.op("add", {x, c.scalar_like(p.epsilon(), x, "epsilon")}, {}, "plus_epsilon"); };
  switch (p.type()) {
    case U::SQRT: return {c.op("sqrt", {x})};
    case U::RSQRT: return {c.op("reciprocal", {c.op("sqrt", {plus_epsilon()}, {}, "sqrt")})};
    case U::INVERSE: return {c.op("reciprocal", {plus_epsilon()})};
    case U::POWER: return {c.op("pow", {x, c.scalar_like(p.alpha(), x, "alpha")})};
    case U::EXP: return {c.op("exp", {x})};
    case U::LOG: return {c.op("log", {plus_epsilon()})};
    case U::ABS: return {c.op("abs", {x})};
    case U::THRESHOLD: return {c.op("max", {x, c.scalar_like(p.alpha(), x, "alpha")})};
    default: break;
  }
  c.bad_attribute("type", str_cat("unknown unary function ", int(p.type())));
}

// add / multiply: the sum or product of the inputs, or of one input and alpha.
Values fold(LayerContext& c, const std::string& op, double alpha) {
  const Values& in = c.inputs();
  if (in.empty()) c.bad_attribute("input", "the layer has no inputs");
  if (in.size() == 1) return {c.op(op, {in[0], c.scalar_like(alpha, in[0], "alpha")})};
  graph::Value acc = in[0];
  for (size_t k = 1; k < in.size(); ++k)
    acc = c.op(op, {acc, in[k]}, {}, k + 1 == in.size() ? "" : str_cat("partial", k));
  return {acc};
}

// average / max / min of the inputs, broadcast.
Values variadic(LayerContext& c, const std::string& op) {
  if (c.inputs().empty()) c.bad_attribute("input", "the layer has no inputs");
  if (c.inputs().size() > 8) c.unsupported("input", "more than 8 inputs are not supported");
  return {c.op(op, c.inputs())};
}

Values binary(LayerContext& c, const std::string& op) {
  if (c.inputs().size() != 2) c.bad_attribute("input", str_cat("the layer needs 2 inputs, not ", c.inputs().size()));
  return {c.op(op, {c.input(0), c.input(1)})};
}

Values concat_at(LayerContext& c, int64_t axis) {
  if (c.inputs().empty()) c.bad_attribute("input", "the layer has no inputs");
  return {c.op("concat", c.inputs(), ops::Attrs().set_int("axis", axis))};
}

Values concat(LayerContext& c) {
  if (c.layer().concat().sequenceconcat()) c.unsupported("sequenceConcat", "sequence concatenation is not supported");
  return concat_at(c, c.channel_axis(c.input(0)));
}

Values concat_nd(LayerContext& c) {
  if (c.layer().concatnd().interleave()) c.unsupported("interleave", "interleaved concatenation is not supported");
  return concat_at(c, c.axis(c.layer().concatnd().axis(), c.rank(c.input(0)), "axis"));
}

// (…, C, H, W) -> (…, C*H*W, 1, 1), in C-H-W order or (CHANNEL_LAST) H-W-C order.
Values flatten(LayerContext& c) {
  graph::Value x = c.input(0);
  std::vector<int64_t> shape = c.shape(x);
  if (shape.size() < 3) return {c.op("identity", {x})};
  if (c.layer().flatten().mode() == spec::FlattenLayerParams::CHANNEL_LAST) {
    std::vector<int64_t> perm;
    for (size_t i = 0; i + 3 < shape.size(); ++i) perm.push_back(int64_t(i));
    const int64_t r = int64_t(shape.size());
    for (int64_t a : {r - 2, r - 1, r - 3}) perm.push_back(a);
    x = c.op("transpose", {x}, ops::Attrs().set_ints("perm", perm), "channels_last");
  }
  std::vector<int64_t> out(shape.begin(), shape.end() - 3);
  out.push_back(shape[shape.size() - 3] * shape[shape.size() - 2] * shape[shape.size() - 1]);
  out.push_back(1), out.push_back(1);
  return {c.reshape(x, out)};
}

// The legacy reshape: a target (C, H, W) or (Seq, C, H, W) for each item of the batch.
Values reshape(LayerContext& c) {
  const auto& p = c.layer().reshape();
  if (p.mode() != spec::ReshapeLayerParams::CHANNEL_FIRST)
    c.unsupported("mode", "CHANNEL_LAST reshape is not supported");
  graph::Value x = c.input(0);
  std::vector<int64_t> shape = c.shape(x);
  std::vector<int64_t> target(p.targetshape().begin(), p.targetshape().end());
  if (target.size() == 4) {
    if (target[0] != 1) c.unsupported("targetShape", "a sequence axis above 1 is not supported");
    target.erase(target.begin());
  }
  if (target.size() != 3) c.bad_attribute("targetShape", str_cat("has ", target.size(), " entries; 3 or 4 are needed"));
  if (shape.size() < 3) c.unsupported("", "reshape of an input of rank below 3");
  std::vector<int64_t> out(shape.begin(), shape.end() - 3);
  out.insert(out.end(), target.begin(), target.end());
  return {c.reshape(x, out)};
}

Values reshape_static(LayerContext& c) {
  const auto& t = c.layer().reshapestatic().targetshape();
  return {c.reshape(c.input(0), std::vector<int64_t>(t.begin(), t.end()))};
}

Values flatten_2d(LayerContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = c.rank(x);
  const int64_t a = c.layer().flattento2d().axis();
  if (a < -rank || a > rank) c.bad_attribute("axis", str_cat("axis ", a, " is outside [-", rank, ", ", rank, "]"));
  return {c.op("flatten", {x}, ops::Attrs().set_int("axis", a < 0 ? a + rank : a))};
}

Values transpose(LayerContext& c) {
  graph::Value x = c.input(0);
  const auto& axes = c.layer().transpose().axes();
  std::vector<int64_t> perm;
  for (uint64_t a : axes) {
    if (a >= uint64_t(c.rank(x))) c.bad_attribute("axes", str_cat("axis ", a, " is outside the input"));
    perm.push_back(int64_t(a));
  }
  return {c.op("transpose", {x}, ops::Attrs().set_ints("perm", perm))};
}

Values squeeze(LayerContext& c) {
  const auto& p = c.layer().squeeze();
  if (p.squeezeall()) return {c.op("squeeze", {c.input(0)})};
  return {c.op("squeeze", {c.input(0), c.int64s({p.axes().begin(), p.axes().end()}, "axes")})};
}

Values expand_dims(LayerContext& c) {
  const auto& a = c.layer().expanddims().axes();
  return {c.op("unsqueeze", {c.input(0), c.int64s({a.begin(), a.end()}, "axes")})};
}

// constantPad: (begin, end) amounts for the last axes, constant value.
Values constant_pad(LayerContext& c) {
  const auto& p = c.layer().constantpad();
  if (p.padtogivenoutputsizemode()) c.unsupported("padToGivenOutputSizeMode", "is not supported");
  graph::Value x = c.input(0);
  const int64_t rank = c.rank(x);
  const int64_t n = p.padamounts_size();
  if (n % 2 != 0 || n / 2 > rank) c.bad_attribute("padAmounts", str_cat("has ", n, " entries for a rank-", rank, " input"));
  std::vector<int64_t> pads(size_t(2 * rank), 0);
  for (int64_t i = 0; i < n / 2; ++i) {
    const int64_t axis = rank - n / 2 + i;
    if (p.padamounts(int(2 * i)) > (uint64_t(1) << 31) || p.padamounts(int(2 * i + 1)) > (uint64_t(1) << 31))
      c.bad_attribute("padAmounts", "an amount is out of range");
    pads[size_t(axis)] = int64_t(p.padamounts(int(2 * i)));
    pads[size_t(rank + axis)] = int64_t(p.padamounts(int(2 * i + 1)));
  }
  return {c.op("pad", {x, c.int64s(pads, "pads"), c.scalar_like(p.value(), x, "value")},
               ops::Attrs().set_string("mode", "constant"))};
}

Values reduce_mean(LayerContext& c) {
  const auto& p = c.layer().reducemean();
  ops::Attrs a;
  a.set_int("keepdims", p.keepdims() ? 1 : 0);
  if (p.reduceall() || p.axes().empty()) return {c.op("reduce_mean", {c.input(0)}, a)};
  return {c.op("reduce_mean", {c.input(0), c.int64s({p.axes().begin(), p.axes().end()}, "axes")}, a)};
}

Values clip(LayerContext& c) {
  graph::Value x = c.input(0);
  const auto& p = c.layer().clip();
  return {c.op("clip", {x, c.scalar_like(p.minval(), x, "min"), c.scalar_like(p.maxval(), x, "max")})};
}

// min(beta, x >= 0 ? x : alpha * x)
Values clamped_relu(LayerContext& c) {
  graph::Value x = c.input(0);
  const auto& p = c.layer().clampedrelu();
  graph::Value y = c.op("leaky_relu", {x}, ops::Attrs().set_float("alpha", p.alpha()), "leaky");
  return {c.op("min", {y, c.scalar_like(p.beta(), x, "beta")})};
}

// A stored array of `shape` (1, (C), (1, H, W) or (C, H, W)) that broadcasts over (…, C, H, W).
graph::Value stored(LayerContext& c, const google::protobuf::RepeatedField<uint64_t>& shape,
                    const nnvm_coreml_spec::WeightParams& w, const std::string& attribute, const std::string& shape_name) {
  std::vector<int64_t> s;
  for (uint64_t e : shape) {
    if (e == 0 || e > (uint64_t(1) << 31)) c.bad_attribute(shape_name, str_cat("extent ", e, " is out of range"));
    s.push_back(int64_t(e));
  }
  if (s.empty()) s = {weight_count(w)};
  if (s.size() == 1 && s[0] != 1) s = {s[0], 1, 1};  // per channel
  if (s.size() != 1 && s.size() != 3) c.bad_attribute(shape_name, str_cat("has ", s.size(), " entries; 1 or 3 are needed"));
  return c.weight(w, s, attribute);
}

Values scale(LayerContext& c) {
  const auto& p = c.layer().scale();
  graph::Value x = c.input(0);
  graph::Value s = stored(c, p.shapescale(), p.scale(), "scale", "shapeScale");
  if (!p.hasbias()) return {c.op("mul", {x, s})};
  graph::Value y = c.op("mul", {x, s}, {}, "scaled");
  return {c.op("add", {y, stored(c, p.shapebias(), p.bias(), "bias", "shapeBias")})};
}

Values bias(LayerContext& c) {
  const auto& p = c.layer().bias();
  return {c.op("add", {c.input(0), stored(c, p.shape(), p.bias(), "bias", "shape")})};
}

Values load_constant_nd(LayerContext& c) {
  const auto& p = c.layer().loadconstantnd();
  std::vector<int64_t> s;
  for (uint64_t e : p.shape()) {
    if (e > (uint64_t(1) << 31)) c.bad_attribute("shape", str_cat("extent ", e, " is out of range"));
    s.push_back(int64_t(e));
  }
  return {c.weight(p.data(), s, "data")};
}

}  // namespace

void add_tensor_layer_converters(std::map<int, LayerConverter>& t) {
  t[Layer::kUnary] = unary;
  t[Layer::kAdd] = [](LayerContext& c) { return fold(c, "add", c.layer().add().alpha()); };
  t[Layer::kMultiply] = [](LayerContext& c) { return fold(c, "mul", c.layer().multiply().alpha()); };
  t[Layer::kAverage] = [](LayerContext& c) { return variadic(c, "mean"); };
  t[Layer::kMax] = [](LayerContext& c) { return variadic(c, "max"); };
  t[Layer::kMin] = [](LayerContext& c) { return variadic(c, "min"); };
  t[Layer::kAddBroadcastable] = [](LayerContext& c) { return binary(c, "add"); };
  t[Layer::kSubtractBroadcastable] = [](LayerContext& c) { return binary(c, "sub"); };
  t[Layer::kMultiplyBroadcastable] = [](LayerContext& c) { return binary(c, "mul"); };
  t[Layer::kDivideBroadcastable] = [](LayerContext& c) { return binary(c, "div"); };
  t[Layer::kMaxBroadcastable] = [](LayerContext& c) { return binary(c, "max"); };
  t[Layer::kMinBroadcastable] = [](LayerContext& c) { return binary(c, "min"); };
  t[Layer::kConcat] = concat;
  t[Layer::kConcatND] = concat_nd;
  t[Layer::kFlatten] = flatten;
  t[Layer::kFlattenTo2D] = flatten_2d;
  t[Layer::kReshape] = reshape;
  t[Layer::kReshapeStatic] = reshape_static;
  t[Layer::kTranspose] = transpose;
  t[Layer::kSqueeze] = squeeze;
  t[Layer::kExpandDims] = expand_dims;
  t[Layer::kConstantPad] = constant_pad;
  t[Layer::kReduceMean] = reduce_mean;
  t[Layer::kClip] = clip;
  t[Layer::kClampedReLU] = clamped_relu;
  t[Layer::kScale] = scale;
  t[Layer::kBias] = bias;
  t[Layer::kLoadConstantND] = load_constant_nd;
  t[Layer::kCopy] = [](LayerContext& c) { return Values{c.op("identity", {c.input(0)})}; };
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
