// Spatial layers: convolutions (plain, depthwise, separable, transposed), pooling, padding,
// cropping and upsampling. Each runs as nnvm's channels-first op; a channels_last layer (Keras'
// default) is wrapped in layout transposes that graph::sink_transposes cancels between layers.
#include <algorithm>

#include "convert.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

namespace {

// The spatial rank a layer class works on: "Conv2D" -> 2.
size_t spatial_dims(const LayerContext& c) {
  const std::string& k = c.layer().class_name;
  for (size_t d = 1; d <= 3; ++d)
    if (k.find(str_cat(d, "D")) != std::string::npos) return d;
  c.unsupported("", "the layer's spatial rank is not 1, 2 or 3");
}

// The input in channels-first order, and whether the result must go back to channels-last.
struct Layout {
  graph::Value x;
  bool last;
};

Layout channels_first_input(LayerContext& c, size_t dims) {
  graph::Value x = c.input(0);
  if (c.rank(x) != int64_t(dims) + 2)
    c.bad_attribute("inputs", str_cat("a ", dims, "-D layer needs a rank-", dims + 2, " input, not rank ", c.rank(x)));
  const bool last = c.channels_last();
  return {last ? c.to_channels_first(x) : x, last};
}

// The layer's result: back to channels-last when its input was, under the layer's name.
graph::Value finish(LayerContext& c, const Layout& l, const graph::Value& y) {
  return l.last ? c.to_channels_last(y, "") : y;
}

// ONNX-style pads (all begins, then all ends) for Keras' padding on channels-first input `x`:
// "valid" none, "same" as TensorFlow (the odd pixel at the end), "causal" (Conv1D) all at the
// start.
std::vector<int64_t> window_pads(LayerContext& c, const graph::Value& x, const std::vector<int64_t>& kernel,
                                 const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  const std::string padding = c.text("padding", "valid");
  const size_t dims = kernel.size();
  std::vector<int64_t> begin(dims, 0), end(dims, 0);
  if (padding == "valid") return std::vector<int64_t>(2 * dims, 0);
  std::vector<int64_t> shape = c.shape(x);
  for (size_t i = 0; i < dims; ++i) {
    const int64_t in = shape[2 + i], extent = (kernel[i] - 1) * dilations[i] + 1;
    if (padding == "same") {
      const int64_t out = (in + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>((out - 1) * strides[i] + extent - in, 0);
      begin[i] = total / 2;
      end[i] = total - begin[i];
    } else if (padding == "causal" && dims == 1) {
      begin[i] = extent - 1;
    } else {
      c.bad_attribute("padding", str_cat("'", printable(padding), "' is not valid, same or causal (1-D only)"));
    }
  }
  begin.insert(begin.end(), end.begin(), end.end());
  return begin;
}

// Keras kernel (k..., in, out) as ONNX's (out, in, k...).
graph::Value conv_kernel(LayerContext& c, const NDArray& w, const std::string& suffix) {
  const int64_t r = int64_t(w.shape().size());
  std::vector<int64_t> perm{r - 1, r - 2};
  for (int64_t d = 0; d < r - 2; ++d) perm.push_back(d);
  return c.op("transpose", {c.weight_constant(w, suffix)}, ops::Attrs().set_ints("perm", perm), suffix + "_oihw");
}

// A depthwise kernel (k..., in, multiplier) as ONNX's grouped (in * multiplier, 1, k...): output
// channel c * multiplier + m, as Keras orders them.
graph::Value depthwise_kernel(LayerContext& c, const NDArray& w, const std::string& suffix) {
  std::vector<int64_t> s = w.shape();
  const size_t r = s.size();
  std::vector<int64_t> flat(s.begin(), s.end() - 2);
  flat.push_back(1);
  flat.push_back(s[r - 2] * s[r - 1]);
  graph::Value k = c.op("reshape", {c.weight_constant(w, suffix), c.int64s(flat, suffix + "_shape")}, {}, suffix + "_flat");
  std::vector<int64_t> perm{int64_t(r) - 1, int64_t(r) - 2};
  for (int64_t d = 0; d < int64_t(r) - 2; ++d) perm.push_back(d);
  return c.op("transpose", {k}, ops::Attrs().set_ints("perm", perm), suffix + "_oihw");
}

ops::Attrs conv_attrs(LayerContext& c, const graph::Value& x, const std::vector<int64_t>& kernel, int64_t group) {
  const size_t dims = kernel.size();
  std::vector<int64_t> strides = c.ints("strides", dims, 1), dilations = c.ints("dilation_rate", dims, 1);
  return ops::Attrs()
      .set_ints("kernel_shape", kernel)
      .set_ints("strides", strides)
      .set_ints("dilations", dilations)
      .set_ints("pads", window_pads(c, x, kernel, strides, dilations))
      .set_int("group", group);
}

// Conv* (groups from the configuration) and DepthwiseConv* (one group per input channel).
Converter conv(bool depthwise) {
  return [depthwise](LayerContext& c) -> Values {
    const size_t dims = spatial_dims(c);
    Layout l = channels_first_input(c, dims);
    const bool bias = c.flag("use_bias", true);
    auto w = c.weights(bias ? 2 : 1);
    std::vector<int64_t> kernel = c.ints("kernel_size", dims, 1);
    Values in{l.x, depthwise ? depthwise_kernel(c, w[0], "depthwise_kernel") : conv_kernel(c, w[0], "kernel")};
    if (bias) in.push_back(c.weight_constant(w[1], "bias"));
    const int64_t groups = depthwise ? c.shape(l.x).at(1) : c.integer("groups", 1);
    graph::Value y = c.op("conv", in, conv_attrs(c, l.x, kernel, groups), "conv");
    return {finish(c, l, c.apply_activation(y))};
  };
}

// SeparableConv: a depthwise conv (strides, padding, dilation), then a 1x1 conv with the bias.
Values separable_conv(LayerContext& c) {
  const size_t dims = spatial_dims(c);
  Layout l = channels_first_input(c, dims);
  const bool bias = c.flag("use_bias", true);
  auto w = c.weights(bias ? 3 : 2);
  std::vector<int64_t> kernel = c.ints("kernel_size", dims, 1);
  const int64_t channels = c.shape(l.x).at(1);
  graph::Value d = c.op("conv", {l.x, depthwise_kernel(c, w[0], "depthwise_kernel")},
                        conv_attrs(c, l.x, kernel, channels), "depthwise");
  Values in{d, conv_kernel(c, w[1], "pointwise_kernel")};
  if (bias) in.push_back(c.weight_constant(w[2], "bias"));
  ops::Attrs pointwise = ops::Attrs().set_ints("kernel_shape", std::vector<int64_t>(dims, 1));
  graph::Value y = c.op("conv", in, pointwise, "pointwise");
  return {finish(c, l, c.apply_activation(y))};
}

// Conv*DTranspose: Keras' kernel (k..., out, in) is ONNX's (in, out, k...). The padding is the
// one Keras' JAX backend gives the equivalent stride-dilated convolution (left/right pads of
// the full correlation), translated into ConvTranspose's pads and output_padding.
Values conv_transpose(LayerContext& c) {
  const size_t dims = spatial_dims(c);
  Layout l = channels_first_input(c, dims);
  const bool bias = c.flag("use_bias", true);
  auto w = c.weights(bias ? 2 : 1);
  std::vector<int64_t> kernel = c.ints("kernel_size", dims, 1), strides = c.ints("strides", dims, 1),
                       dilations = c.ints("dilation_rate", dims, 1);
  const std::string padding = c.text("padding", "valid");
  const bool explicit_output_padding = c.has("output_padding");
  std::vector<int64_t> requested = c.ints("output_padding", dims, 0);
  std::vector<int64_t> begin(dims), end(dims), output_padding(dims);
  for (size_t i = 0; i < dims; ++i) {
    const int64_t k = (kernel[i] - 1) * dilations[i] + 1, s = strides[i];
    int64_t left, right;
    if (padding == "valid") {
      const int64_t op = explicit_output_padding ? requested[i] : std::max(k, s) - k;
      left = k - 1;
      right = k - 1 + op;
    } else if (padding == "same") {
      const int64_t len = explicit_output_padding ? k + k % 2 - 2 + requested[i] : s + k - 2;
      left = std::min(len / 2 + len % 2, k - 1);
      right = len - left;
    } else {
      c.bad_attribute("padding", str_cat("'", printable(padding), "' is neither valid nor same"));
    }
    begin[i] = k - 1 - left;
    end[i] = std::max<int64_t>(k - 1 - right, 0);
    output_padding[i] = std::max<int64_t>(right - (k - 1), 0);
  }
  begin.insert(begin.end(), end.begin(), end.end());
  const int64_t r = int64_t(w[0].shape().size());
  std::vector<int64_t> perm{r - 1, r - 2};
  for (int64_t d = 0; d < r - 2; ++d) perm.push_back(d);
  graph::Value k = c.op("transpose", {c.weight_constant(w[0], "kernel")}, ops::Attrs().set_ints("perm", perm), "kernel_iohw");
  Values in{l.x, k};
  if (bias) in.push_back(c.weight_constant(w[1], "bias"));
  ops::Attrs a;
  a.set_ints("kernel_shape", kernel)
      .set_ints("strides", strides)
      .set_ints("dilations", dilations)
      .set_ints("pads", begin)
      .set_ints("output_padding", output_padding);
  graph::Value y = c.op("conv_transpose", in, a, "conv_transpose");
  return {finish(c, l, c.apply_activation(y))};
}

// MaxPooling / AveragePooling: strides default to the pool size; "same" average pooling counts
// only the pixels inside the input, as Keras does.
Converter pool(const char* op) {
  return [op](LayerContext& c) -> Values {
    const size_t dims = spatial_dims(c);
    Layout l = channels_first_input(c, dims);
    std::vector<int64_t> size = c.ints("pool_size", dims, 2);
    std::vector<int64_t> strides = c.has("strides") ? c.ints("strides", dims, 1) : size;
    ops::Attrs a;
    a.set_ints("kernel_shape", size)
        .set_ints("strides", strides)
        .set_ints("pads", window_pads(c, l.x, size, strides, std::vector<int64_t>(dims, 1)));
    if (std::string(op) == "average_pool") a.set_int("count_include_pad", 0);
    return {finish(c, l, c.op(op, {l.x}, a, "pool"))};
  };
}

// A (before, after) pair per spatial axis from an int, a pair per axis, or per-axis pairs.
std::vector<std::pair<int64_t, int64_t>> pairs(LayerContext& c, const std::string& key, size_t dims) {
  const Json& v = c.raw(key);
  std::vector<std::pair<int64_t, int64_t>> out;
  auto num = [&](const Json& e) {
    if (!e.is_number_integer() || e.get<int64_t>() < 0) c.bad_attribute(key, "entries must be non-negative integers");
    return e.get<int64_t>();
  };
  if (v.is_number_integer()) return std::vector<std::pair<int64_t, int64_t>>(dims, {num(v), num(v)});
  if (!v.is_array()) c.bad_attribute(key, "is neither an integer nor a list");
  if (dims == 1 && v.size() == 2 && v[0].is_number_integer()) return {{num(v[0]), num(v[1])}};
  if (v.size() != dims) c.bad_attribute(key, str_cat("has ", v.size(), " entries for ", dims, " spatial axes"));
  for (auto& e : v) {
    if (e.is_number_integer()) out.emplace_back(num(e), num(e));
    else if (e.is_array() && e.size() == 2) out.emplace_back(num(e[0]), num(e[1]));
    else c.bad_attribute(key, "entries must be integers or (before, after) pairs");
  }
  return out;
}

Values zero_padding(LayerContext& c) {
  const size_t dims = spatial_dims(c);
  Layout l = channels_first_input(c, dims);
  std::vector<int64_t> begin{0, 0}, end{0, 0};
  for (auto [b, e] : pairs(c, "padding", dims)) {
    begin.push_back(b);
    end.push_back(e);
  }
  begin.insert(begin.end(), end.begin(), end.end());
  graph::Value y = c.op("pad", {l.x, c.int64s(begin, "pads")}, ops::Attrs().set_string("mode", "constant"), "pad");
  return {finish(c, l, y)};
}

Values cropping(LayerContext& c) {
  const size_t dims = spatial_dims(c);
  Layout l = channels_first_input(c, dims);
  std::vector<int64_t> shape = c.shape(l.x), starts, ends, axes;
  auto crop = pairs(c, "cropping", dims);
  for (size_t i = 0; i < dims; ++i) {
    if (crop[i].first + crop[i].second >= shape[2 + i])
      c.bad_attribute("cropping", str_cat("crops all of spatial axis ", i, " (extent ", shape[2 + i], ")"));
    starts.push_back(crop[i].first);
    ends.push_back(shape[2 + i] - crop[i].second);
    axes.push_back(int64_t(2 + i));
  }
  graph::Value y = c.op("slice", {l.x, c.int64s(starts, "starts"), c.int64s(ends, "ends"), c.int64s(axes, "axes")}, {},
                        "crop");
  return {finish(c, l, y)};
}

// UpSampling: nearest repeats each pixel; bilinear is half-pixel linear interpolation (Keras
// resizes without corner alignment).
Values upsampling(LayerContext& c) {
  const size_t dims = spatial_dims(c);
  Layout l = channels_first_input(c, dims);
  std::vector<int64_t> size = c.ints("size", dims, 2);
  NDArray scales(dtype::float32, {int64_t(dims) + 2});
  auto s = scales.values<float>();
  s[0] = s[1] = 1.0f;
  for (size_t i = 0; i < dims; ++i) s[2 + i] = float(size[i]);
  const std::string interpolation = c.text("interpolation", "nearest");
  ops::Attrs a;
  if (interpolation == "nearest")
    a.set_string("mode", "nearest").set_string("nearest_mode", "floor").set_string("coordinate_transformation_mode", "asymmetric");
  else if (interpolation == "bilinear")
    a.set_string("mode", "linear").set_string("coordinate_transformation_mode", "half_pixel");
  else
    c.unsupported("interpolation", str_cat("interpolation '", printable(interpolation), "' is not supported"));
  graph::Value y = c.op("resize", {l.x, graph::Value{}, c.constant(std::move(scales), "scales")}, a, "resize");
  return {finish(c, l, y)};
}

}  // namespace

void add_conv_converters(std::map<std::string, Converter>& t) {
  for (const char* dims : {"1D", "2D", "3D"}) {
    t[str_cat("Conv", dims)] = conv(false);
    t[str_cat("Convolution", dims)] = conv(false);  // Keras 1/2 alias
    t[str_cat("MaxPooling", dims)] = pool("max_pool");
    t[str_cat("AveragePooling", dims)] = pool("average_pool");
    t[str_cat("ZeroPadding", dims)] = zero_padding;
    t[str_cat("Cropping", dims)] = cropping;
    t[str_cat("UpSampling", dims)] = upsampling;
  }
  for (const char* dims : {"1D", "2D"}) {
    t[str_cat("DepthwiseConv", dims)] = conv(true);
    t[str_cat("SeparableConv", dims)] = separable_conv;
  }
  for (const char* dims : {"1D", "2D", "3D"}) t[str_cat("Conv", dims, "Transpose")] = conv_transpose;
}

}  // namespace keras_import
NNVM_END_NAMESPACE
