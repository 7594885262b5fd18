// Core layers: dense, activations, merges, reshaping, normalization, embedding, and the
// training-only layers that are identities at inference.
#include <cmath>
#include <numeric>

#include "convert.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

namespace {

graph::Value transpose(LayerContext& c, const graph::Value& x, const std::vector<int64_t>& perm, const std::string& suffix) {
  return c.op("transpose", {x}, ops::Attrs().set_ints("perm", perm), suffix);
}

// The perm that moves `axis` to position 1 (batch stays first), and its inverse.
std::pair<std::vector<int64_t>, std::vector<int64_t>> axis_to_1(int64_t axis, int64_t rank) {
  std::vector<int64_t> perm{0, axis};
  for (int64_t d = 1; d < rank; ++d)
    if (d != axis) perm.push_back(d);
  std::vector<int64_t> inverse(size_t(rank), 0);
  for (size_t d = 0; d < perm.size(); ++d) inverse[size_t(perm[d])] = int64_t(d);
  return {perm, inverse};
}

// A Keras axis value: an int, or a one-element list (BatchNormalization writes [3]).
int64_t single_axis(const LayerContext& c, const std::string& key, int64_t fallback, int64_t rank) {
  if (!c.has(key)) return c.axis(fallback, rank, key);
  std::vector<int64_t> axes = c.int_list(key);
  if (axes.size() != 1) c.unsupported(key, "normalization over several axes is not supported here");
  return c.axis(axes[0], rank, key);
}

// A normalization's scale or offset: the stored weight, or `fill` everywhere when the layer has
// none (scale=False, center=False).
graph::Value weight_or_filled(LayerContext& c, const NDArray* weight, const std::vector<int64_t>& shape, float fill,
                              const char* name) {
  if (weight) return c.weight_constant(*weight, name);
  NDArray a(dtype::float32, shape);
  for (float& v : a.values<float>()) v = fill;
  return c.constant(std::move(a), name);
}

Values dense(LayerContext& c) {
  const bool bias = c.flag("use_bias", true);
  auto w = c.weights(bias ? 2 : 1);
  graph::Value x = c.input(0), kernel = c.weight_constant(w[0], "kernel");
  graph::Value y;
  if (c.rank(x) == 2) {
    Values in{x, kernel};
    if (bias) in.push_back(c.weight_constant(w[1], "bias"));
    y = c.op("dense", in, {}, "dense");
  } else {
    y = c.op("matmul", {x, kernel}, {}, "matmul");
    if (bias) y = c.op("add", {y, c.weight_constant(w[1], "bias")}, {}, "bias_add");
  }
  return {c.apply_activation(y)};
}

Values activation_layer(LayerContext& c) { return {c.apply_activation(c.input(0))}; }

// ReLU(max_value, negative_slope, threshold): x >= threshold ? x : slope * (x - threshold), then
// at most max_value.
Values relu_layer(LayerContext& c) {
  graph::Value x = c.input(0);
  const double slope = c.real("negative_slope", 0.0), threshold = c.real("threshold", 0.0);
  const bool capped = c.has("max_value");
  const double cap = c.real("max_value", 0.0);
  graph::Value y;
  if (slope == 0.0 && threshold == 0.0) {
    y = capped ? c.op("clip", {x, c.scalar_like(0.0, x, "min"), c.scalar_like(cap, x, "max")}, {}, "clip")
               : c.op("relu", {x}, {}, "relu");
    return {y};
  }
  graph::Value t = c.scalar_like(threshold, x, "threshold");
  graph::Value below = c.op("mul", {c.op("sub", {x, t}, {}, "shifted"), c.scalar_like(slope, x, "slope")}, {}, "below");
  y = c.op("where", {c.op("greater_or_equal", {x, t}, {}, "active"), x, below}, {}, "select");
  if (capped) y = c.op("min", {y, c.scalar_like(cap, x, "max")}, {}, "cap");
  return {y};
}

Values leaky_relu_layer(LayerContext& c) {
  // Keras 3 calls the slope negative_slope (default 0.3 in the layer), Keras 2 alpha.
  const double slope = c.has("negative_slope") ? c.real("negative_slope", 0.3) : c.real("alpha", 0.3);
  return {c.op("leaky_relu", {c.input(0)}, ops::Attrs().set_float("alpha", slope))};
}

Values elu_layer(LayerContext& c) { return {c.op("elu", {c.input(0)}, ops::Attrs().set_float("alpha", c.real("alpha", 1.0)))}; }

Values prelu_layer(LayerContext& c) {
  auto w = c.weights(1);
  return {c.op("prelu", {c.input(0), c.weight_constant(w[0], "alpha")})};
}

Values softmax_layer(LayerContext& c) {
  graph::Value x = c.input(0);
  if (c.num_inputs() > 1 || c.tensor_kwarg("mask")) c.unsupported("", "a softmax with a mask is not supported");
  return {c.op("softmax", {x}, ops::Attrs().set_int("axis", single_axis(c, "axis", -1, c.rank(x))))};
}

Values identity_layer(LayerContext& c) { return {c.input(0)}; }

// Add, Subtract, Multiply, Maximum, Minimum, Average over the call's inputs.
Converter merge(const char* op, bool average = false) {
  return [op, average](LayerContext& c) -> Values {
    if (c.num_inputs() < 2) c.bad_attribute("inputs", "a merge layer needs at least two inputs");
    graph::Value y = c.input(0);
    for (size_t k = 1; k < c.num_inputs(); ++k)
      y = c.op(op, {y, c.input(k)}, {}, str_cat(op, "_", k));
    if (average) y = c.op("div", {y, c.scalar_like(double(c.num_inputs()), y, "count")}, {}, "mean");
    return {y};
  };
}

Values subtract(LayerContext& c) {
  if (c.num_inputs() != 2) c.bad_attribute("inputs", "Subtract takes exactly two inputs");
  return {c.op("sub", {c.input(0), c.input(1)})};
}

Values concatenate(LayerContext& c) {
  graph::Value x = c.input(0);
  return {c.op("concat", c.inputs(), ops::Attrs().set_int("axis", c.axis(c.integer("axis", -1), c.rank(x), "axis")))};
}

Values flatten(LayerContext& c) {
  graph::Value x = c.input(0);
  // Keras flattens in channels-last order; a channels_first Flatten permutes first.
  if (!c.channels_last() && c.rank(x) > 2) x = c.to_channels_last(x);
  return {c.op("flatten", {x}, ops::Attrs().set_int("axis", 1))};
}

Values reshape(LayerContext& c) {
  graph::Value x = c.input(0);
  std::vector<int64_t> target{c.shape(x).at(0)};
  for (int64_t e : c.int_list("target_shape")) {
    if (e == 0 || e < -1) c.bad_attribute("target_shape", str_cat("extent ", e, " is invalid"));
    target.push_back(e);
  }
  return {c.op("reshape", {x, c.int64s(target, "shape")})};
}

Values permute(LayerContext& c) {
  std::vector<int64_t> perm{0};
  for (int64_t d : c.int_list("dims")) perm.push_back(d);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < sorted.size(); ++d)
    if (sorted[d] != int64_t(d) || int64_t(perm.size()) != c.rank(c.input(0)))
      c.bad_attribute("dims", "is not a permutation of the non-batch axes (numbered from 1)");
  return {c.op("transpose", {c.input(0)}, ops::Attrs().set_ints("perm", perm))};
}

Values batch_normalization(LayerContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = c.rank(x), axis = single_axis(c, "axis", -1, rank);
  const bool scale = c.flag("scale", true), center = c.flag("center", true);
  auto w = c.weights(2 + size_t(scale) + size_t(center));
  const std::vector<int64_t> channels{c.shape(x).at(size_t(axis))};
  size_t k = 0;
  graph::Value gamma = weight_or_filled(c, scale ? &w[k++] : nullptr, channels, 1.0f, "gamma");
  graph::Value beta = weight_or_filled(c, center ? &w[k++] : nullptr, channels, 0.0f, "beta");
  graph::Value mean = c.weight_constant(w[k], "moving_mean"), var = c.weight_constant(w[k + 1], "moving_variance");
  ops::Attrs a = ops::Attrs().set_float("epsilon", c.real("epsilon", 1e-3));
  if (axis == 1) return {c.op("batch_norm", {x, gamma, beta, mean, var}, a)};
  auto [perm, inverse] = axis_to_1(axis, rank);
  graph::Value y = c.op("batch_norm", {transpose(c, x, perm, "to_nchw"), gamma, beta, mean, var}, a, "batch_norm");
  return {transpose(c, y, inverse, "")};
}

Values layer_normalization(LayerContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = c.rank(x);
  std::vector<int64_t> axes = c.has("axis") ? c.int_list("axis") : std::vector<int64_t>{-1};
  for (auto& a : axes) a = c.axis(a, rank, "axis");
  std::sort(axes.begin(), axes.end());
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] != rank - int64_t(axes.size()) + int64_t(i))
      c.unsupported("axis", "layer normalization over axes other than the trailing ones is not supported");
  const bool scale = c.flag("scale", true), center = c.flag("center", true);
  if (c.flag("rms_scaling", false)) c.unsupported("rms_scaling", "RMS scaling is not supported");
  auto w = c.weights(size_t(scale) + size_t(center));
  std::vector<int64_t> shape = c.shape(x), normalized(shape.begin() + axes.front(), shape.end());
  size_t k = 0;
  graph::Value gamma = weight_or_filled(c, scale ? &w[k++] : nullptr, normalized, 1.0f, "gamma");
  graph::Value beta = weight_or_filled(c, center ? &w[k++] : nullptr, normalized, 0.0f, "beta");
  return {c.op("layer_norm", {x, gamma, beta},
               ops::Attrs().set_int("axis", axes.front()).set_float("epsilon", c.real("epsilon", 1e-3)))};
}

Values embedding(LayerContext& c) {
  if (c.flag("mask_zero", false)) c.unsupported("mask_zero", "masking is not supported");
  auto w = c.weights(1);
  graph::Value ids = c.input(0);
  if (c.type(ids).dtype != dtype::int64) ids = c.op("cast", {ids}, ops::Attrs().set_string("to", "int64"), "ids");
  return {c.op("gather", {c.weight_constant(w[0], "embeddings"), ids}, ops::Attrs().set_int("axis", 0))};
}

Values rescaling(LayerContext& c) {
  graph::Value x = c.input(0);
  if (c.has("scale") && !c.raw("scale").is_number()) c.unsupported("scale", "a per-channel scale is not supported");
  if (c.has("offset") && !c.raw("offset").is_number()) c.unsupported("offset", "a per-channel offset is not supported");
  graph::Value y = c.op("mul", {x, c.scalar_like(c.real("scale", 1.0), x, "scale")}, {}, "scaled");
  return {c.op("add", {y, c.scalar_like(c.real("offset", 0.0), x, "offset")})};
}

// A per-channel statistic of Normalization: the configuration's literal (a number or a list) when
// it has one, else the stored (adapted) weight.
std::vector<double> statistic(LayerContext& c, const std::string& key, const NDArray& stored) {
  std::vector<double> out;
  if (c.has(key)) {
    const Json& v = c.raw(key);
    if (v.is_number()) return {v.get<double>()};
    if (!v.is_array()) c.bad_attribute(key, "is neither a number nor a list of numbers");
    for (auto& e : v) {
      if (!e.is_number()) c.bad_attribute(key, "is not a list of numbers");
      out.push_back(e.get<double>());
    }
    return out;
  }
  if (stored.dtype() != dtype::float32) c.unsupported(key, "a stored statistic other than float32 is not supported");
  for (float f : stored.values<float>()) out.push_back(f);
  return out;
}

// Normalization (the preprocessing layer): (x - mean) / max(sqrt(variance), 1e-7) per channel
// along `axis` (Keras' epsilon), or x * sqrt(variance) + mean with invert. The statistics come
// from the configuration or from the adapted weights (mean, variance, count).
Values normalization(LayerContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = c.rank(x);
  std::vector<int64_t> axes = c.has("axis") ? c.int_list("axis") : std::vector<int64_t>{-1};
  if (axes.size() != 1) c.unsupported("axis", "normalization over several axes is not supported");
  const int64_t axis = c.axis(axes[0], rank, "axis");
  const int64_t channels = c.shape(x).at(size_t(axis));
  std::vector<NDArray> w;
  if (!c.has("mean") || !c.has("variance")) w = c.weights(2);
  std::vector<double> mean = statistic(c, "mean", w.empty() ? NDArray() : w[0]);
  std::vector<double> variance = statistic(c, "variance", w.size() < 2 ? NDArray() : w[1]);
  std::vector<int64_t> shape(size_t(rank), 1);
  shape[size_t(axis)] = channels;
  NDArray shift(dtype::float32, shape), scale(dtype::float32, shape);
  for (int64_t k = 0; k < channels; ++k) {
    auto pick = [&](const std::vector<double>& v, const char* key) {
      if (v.size() != 1 && int64_t(v.size()) != channels)
        c.bad_attribute(key, str_cat("has ", v.size(), " values for ", channels, " channels"));
      return v.size() == 1 ? v[0] : v[size_t(k)];
    };
    const double std_dev = std::max(std::sqrt(std::max(pick(variance, "variance"), 0.0)), 1e-7);
    const bool invert = c.flag("invert", false);
    shift.values<float>()[size_t(k)] = float(invert ? pick(mean, "mean") : -pick(mean, "mean"));
    scale.values<float>()[size_t(k)] = float(invert ? std_dev : 1.0 / std_dev);
  }
  if (c.flag("invert", false))
    return {c.op("add", {c.op("mul", {x, c.constant(std::move(scale), "std")}, {}, "scaled"), c.constant(std::move(shift), "mean")})};
  return {c.op("mul", {c.op("add", {x, c.constant(std::move(shift), "minus_mean")}, {}, "centered"),
                       c.constant(std::move(scale), "inv_std")})};
}

// GlobalAveragePooling1D/2D/3D and GlobalMaxPooling*: channels-first global pool, then (N, C)
// or, with keepdims, the pooled map back in the layer's layout.
Converter global_pool(const char* op) {
  return [op](LayerContext& c) -> Values {
    graph::Value x = c.input(0);
    const bool last = c.channels_last();
    graph::Value y = c.op(op, {last ? c.to_channels_first(x) : x}, {}, "pool");
    if (c.flag("keepdims", false)) return {last ? c.to_channels_last(y, "") : y};
    return {c.op("flatten", {y}, ops::Attrs().set_int("axis", 1))};
  };
}

}  // namespace

void add_core_converters(std::map<std::string, Converter>& t) {
  t["Dense"] = dense;
  t["Activation"] = activation_layer;
  t["ReLU"] = relu_layer;
  t["LeakyReLU"] = leaky_relu_layer;
  t["ELU"] = elu_layer;
  t["PReLU"] = prelu_layer;
  t["Softmax"] = softmax_layer;
  // Identities at inference.
  for (const char* name : {"Dropout", "SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianNoise",
                           "GaussianDropout", "AlphaDropout", "ActivityRegularization", "Identity"})
    t[name] = identity_layer;
  t["Add"] = merge("add");
  t["Multiply"] = merge("mul");
  t["Maximum"] = merge("max");
  t["Minimum"] = merge("min");
  t["Average"] = merge("add", true);
  t["Subtract"] = subtract;
  t["Concatenate"] = concatenate;
  t["Flatten"] = flatten;
  t["Reshape"] = reshape;
  t["Permute"] = permute;
  t["BatchNormalization"] = batch_normalization;
  t["LayerNormalization"] = layer_normalization;
  t["Embedding"] = embedding;
  t["Rescaling"] = rescaling;
  t["Normalization"] = normalization;
  for (const char* dims : {"1D", "2D", "3D"}) {
    t[str_cat("GlobalAveragePooling", dims)] = global_pool("global_average_pool");
    t[str_cat("GlobalMaxPooling", dims)] = global_pool("global_max_pool");
  }
}

}  // namespace keras_import
NNVM_END_NAMESPACE
