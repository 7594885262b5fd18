// Neural-network layers: convolutions, dense layers, normalization, activations, pooling,
// softmax and the training heads (*Output), onto nnvm's ONNX-shaped ops.
#include <algorithm>
#include <cmath>

#include "convert.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

namespace {

using Values = std::vector<graph::Value>;

// MXNet's spatial layouts are NCW/NCHW/NCDHW unless `layout` says otherwise; nnvm's convolution
// and pooling ops read channels first, and channels-last layouts are not translated yet.
void require_channels_first(const NodeContext& c) {
  const std::string layout = c.text("layout", "None");
  if (layout != "None" && layout != "NCW" && layout != "NCHW" && layout != "NCDHW")
    c.unsupported("layout", str_cat("layout ", layout, " is not supported; only channels-first (NCHW) layouts are"));
}

// MXNet's `pad` is symmetric: ONNX-style pads list the begins, then the ends.
std::vector<int64_t> symmetric_pads(const std::vector<int64_t>& pad) {
  std::vector<int64_t> pads = pad;
  pads.insert(pads.end(), pad.begin(), pad.end());
  return pads;
}

// A per-dimension window attribute (stride, dilate, pad) with MXNet's default filled in.
std::vector<int64_t> window_attr(const NodeContext& c, const std::string& name, size_t dims, int64_t fallback) {
  std::vector<int64_t> v = c.ints(name, {});
  if (v.empty()) v.assign(dims, fallback);
  if (v.size() != dims)
    c.bad_attribute(name, str_cat("has ", v.size(), " entries for a ", dims, "-dimensional kernel"));
  return v;
}

// kernel_shape, strides and pads from MXNet's kernel, stride and pad; `missing` says why a
// kernel is needed when there is none.
ops::Attrs window_attrs(const NodeContext& c, const std::string& missing) {
  const std::vector<int64_t> kernel = c.ints("kernel", {});
  if (kernel.empty()) c.bad_attribute("kernel", missing);
  ops::Attrs a;
  a.set_ints("kernel_shape", kernel)
      .set_ints("strides", window_attr(c, "stride", kernel.size(), 1))
      .set_ints("pads", symmetric_pads(window_attr(c, "pad", kernel.size(), 0)));
  return a;
}

Values convolution(NodeContext& c) {
  require_channels_first(c);
  ops::Attrs a = window_attrs(c, "the attribute is required");
  a.set_ints("dilations", window_attr(c, "dilate", a.get_ints("kernel_shape").size(), 1))
      .set_int("group", c.integer("num_group", 1));
  Values in{c.input(0), c.input(1)};
  if (!c.flag("no_bias", false)) in.push_back(c.input(2));
  return {c.op("conv", in, a)};
}

Values deconvolution(NodeContext& c) {
  require_channels_first(c);
  const std::vector<int64_t> kernel = c.ints("kernel", {});
  if (kernel.empty()) c.bad_attribute("kernel", "the attribute is required");
  const size_t dims = kernel.size();
  std::vector<int64_t> stride = window_attr(c, "stride", dims, 1), dilate = window_attr(c, "dilate", dims, 1);
  std::vector<int64_t> pad = window_attr(c, "pad", dims, 0), adj = window_attr(c, "adj", dims, 0);
  // target_shape fixes the output's spatial size: MXNet then derives pad and adj from it
  // (total = stride*(in-1) + dilated kernel - target; pad = ceil(total/2), adj = total % 2).
  std::vector<int64_t> target = c.ints("target_shape", {});
  if (!target.empty() && std::any_of(target.begin(), target.end(), [](int64_t t) { return t != 0; })) {
    if (target.size() != dims) c.bad_attribute("target_shape", str_cat("has ", target.size(), " entries"));
    std::vector<int64_t> in = c.shape(c.input(0));
    if (in.size() != dims + 2) c.bad_attribute("kernel", "the kernel's rank does not match the input's");
    for (size_t i = 0; i < dims; ++i) {
      int64_t total = stride[i] * (in[2 + i] - 1) + dilate[i] * (kernel[i] - 1) + 1 - target[i];
      if (total < 0) c.bad_attribute("target_shape", str_cat("target extent ", target[i], " is too large"));
      adj[i] = total % 2;
      pad[i] = (total + 1) / 2;
    }
  }
  ops::Attrs a;
  a.set_ints("kernel_shape", kernel)
      .set_ints("strides", stride)
      .set_ints("dilations", dilate)
      .set_ints("pads", symmetric_pads(pad))
      .set_ints("output_padding", adj)
      .set_int("group", c.integer("num_group", 1));
  Values in{c.input(0), c.input(1)};
  if (!c.flag("no_bias", true)) in.push_back(c.input(2));  // Deconvolution has no bias by default
  return {c.op("conv_transpose", in, a)};
}

Values fully_connected(NodeContext& c) {
  const bool bias = !c.flag("no_bias", false);
  graph::Value x = c.input(0), w = c.input(1);
  if (c.flag("flatten", true)) {
    // (N, d1, d2, ...) -> (N, d1*d2*...), then X W^T + b.
    if (c.type(x).shape.size() != 2) x = c.op("flatten", {x}, ops::Attrs().set_int("axis", 1), "flatten");
    Values in{x, w};
    if (bias) in.push_back(c.input(2));
    return {c.op("dense", in, ops::Attrs().set_int("transB", 1))};
  }
  // Applied to the last axis: X W^T (+ b) with X of any rank.
  graph::Value wt = c.op("transpose", {w}, ops::Attrs().set_ints("perm", {1, 0}), "weight_t");
  if (!bias) return {c.op("matmul", {x, wt})};
  graph::Value y = c.op("matmul", {x, wt}, {}, "matmul");
  return {c.op("add", {y, c.input(2)})};
}

Values batch_norm(NodeContext& c) {
  graph::Value x = c.input(0);
  const int64_t rank = int64_t(c.type(x).shape.size());
  if (c.axis(c.integer("axis", 1), rank, "axis") != 1)
    c.unsupported("axis", "batch normalization over an axis other than 1 (channels) is not supported");
  graph::Value gamma = c.input(1);
  // fix_gamma (MXNet's default) ignores the stored gamma: the scale is one.
  if (c.flag("fix_gamma", true)) {
    NDArray ones(c.type(gamma).dtype, c.shape(gamma));
    if (ones.dtype() != dtype::float32) c.unsupported("fix_gamma", "fix_gamma is supported for float32 weights");
    for (float& v : ones.values<float>()) v = 1.0f;
    gamma = c.constant(std::move(ones), "gamma_one");
  }
  ops::Attrs a;
  a.set_float("epsilon", c.real("eps", 1e-3));
  return {c.op("batch_norm", {x, gamma, c.input(2), c.input(3), c.input(4)}, a)};
}

// The one-input activations MXNet's Activation and LeakyReLU name.
Values unary(NodeContext& c, const std::string& kind, const std::string& attribute) {
  graph::Value x = c.input(0);
  if (kind == "relu") return {c.op("relu", {x})};
  if (kind == "sigmoid") return {c.op("sigmoid", {x})};
  if (kind == "tanh") return {c.op("tanh", {x})};
  if (kind == "softrelu") return {c.op("softplus", {x})};
  if (kind == "softsign") return {c.op("softsign", {x})};
  if (kind == "mish") return {c.op("mish", {x})};
  if (kind == "log_sigmoid") {  // log(sigmoid(x)) = -softplus(-x)
    graph::Value sp = c.op("softplus", {c.op("neg", {x}, {}, "neg")}, {}, "softplus");
    return {c.op("neg", {sp})};
  }
  c.unsupported(attribute, str_cat("act_type ", kind, " is not supported"));
}

Values activation(NodeContext& c) { return unary(c, c.text("act_type", ""), "act_type"); }

Values leaky_relu(NodeContext& c) {
  const std::string kind = c.text("act_type", "leaky");
  graph::Value x = c.input(0);
  const double slope = c.real("slope", 0.25);
  if (kind == "leaky") return {c.op("leaky_relu", {x}, ops::Attrs().set_float("alpha", slope))};
  if (kind == "elu") return {c.op("elu", {x}, ops::Attrs().set_float("alpha", slope))};
  if (kind == "selu") return {c.op("selu", {x})};  // MXNet's and ONNX's constants agree
  if (kind == "gelu") return {c.op("gelu", {x})};  // the erf form
  if (kind == "rrelu") {  // at inference the slope is the middle of its range
    double mid = (c.real("lower_bound", 0.125) + c.real("upper_bound", 0.334)) / 2;
    return {c.op("leaky_relu", {x}, ops::Attrs().set_float("alpha", mid))};
  }
  if (kind == "prelu") {
    // gamma has one slope per channel (axis 1): shape it (C, 1, ..., 1) to broadcast.
    graph::Value gamma = c.input(1);
    const size_t rank = c.type(x).shape.size();
    std::vector<int64_t> gshape = c.shape(gamma);
    if (rank >= 2 && gshape.size() == 1 && gshape[0] != 1) {
      std::vector<int64_t> to(rank - 1, 1);
      to[0] = gshape[0];
      gamma = c.op("reshape", {gamma, c.int64s(to, "gamma_shape")}, {}, "gamma");
    }
    return {c.op("prelu", {x, gamma})};
  }
  c.unsupported("act_type", str_cat("act_type ", kind, " is not supported"));
}

Values pooling(NodeContext& c) {
  require_channels_first(c);
  graph::Value x = c.input(0);
  const std::string type = c.text("pool_type", "max");
  if (c.flag("global_pool", false)) {
    if (type == "max") return {c.op("global_max_pool", {x})};
    if (type == "avg") return {c.op("global_average_pool", {x})};
    if (type == "lp")
      return {c.op("global_lp_pool", {x}, ops::Attrs().set_int("p", c.integer("p_value", 2)))};
    c.unsupported("pool_type", str_cat("global pool_type ", type, " is not supported"));
  }
  ops::Attrs a = window_attrs(c, "the attribute is required unless global_pool is set");
  const std::vector<int64_t> kernel = a.get_ints("kernel_shape");
  const std::string convention = c.text("pooling_convention", "valid");
  if (convention == "full") a.set_int("ceil_mode", 1);
  else if (convention != "valid")
    c.unsupported("pooling_convention", str_cat("pooling_convention ", convention, " is not supported"));
  if (type == "max") return {c.op("max_pool", {x}, a)};
  if (type == "avg") {
    // count_include_pad is optional in MXNet; absent means the padding counts.
    const std::string include = c.text("count_include_pad", "None");
    a.set_int("count_include_pad", include == "None" ? 1 : c.flag("count_include_pad", true));
    return {c.op("average_pool", {x}, a)};
  }
  if (type == "sum") {  // the average times the window's size, with padding counted
    a.set_int("count_include_pad", 1);
    graph::Value avg = c.op("average_pool", {x}, a, "average");
    double size = 1;
    for (int64_t k : kernel) size *= double(k);
    return {c.op("mul", {avg, c.scalar_like(size, x, "window")})};
  }
  if (type == "lp") return {c.op("lp_pool", {x}, a.set_int("p", c.integer("p_value", 2)))};
  c.unsupported("pool_type", str_cat("pool_type ", type, " is not supported"));
}

// softmax over `axis` of x / temperature.
graph::Value softmax_of(NodeContext& c, graph::Value x, int64_t axis, const std::string& op, const std::string& suffix) {
  if (auto t = c.text("temperature", "None"); t != "None") {
    double temperature = c.real("temperature", 1.0);
    if (temperature != 1.0) x = c.op("div", {x, c.scalar_like(temperature, x, "temperature")}, {}, "scaled");
  }
  return c.op(op, {x}, ops::Attrs().set_int("axis", axis), suffix);
}

Values softmax(NodeContext& c, const std::string& op) {
  if (c.flag("use_length", false)) c.unsupported("use_length", "softmax with use_length is not supported");
  return {softmax_of(c, c.input(0), c.integer("axis", -1), op, "")};
}

// The softmax over each instance's flattened values (axis 1 of (N, -1)), in the input's shape.
graph::Value instance_softmax(NodeContext& c, graph::Value x) {
  std::vector<int64_t> shape = c.shape(x);
  if (shape.size() <= 2) return c.op("softmax", {x}, ops::Attrs().set_int("axis", shape.size() == 2 ? 1 : 0));
  graph::Value flat = c.op("flatten", {x}, ops::Attrs().set_int("axis", 1), "flatten");
  graph::Value y = c.op("softmax", {flat}, ops::Attrs().set_int("axis", 1), "softmax");
  return c.op("reshape", {y, c.int64s(shape, "shape")});
}

// SoftmaxOutput at inference: the softmax alone; the label is for training.
Values softmax_output(NodeContext& c) {
  graph::Value x = c.input(0);
  if (c.flag("multi_output", false)) return {c.op("softmax", {x}, ops::Attrs().set_int("axis", 1))};
  if (c.flag("preserve_shape", false)) return {c.op("softmax", {x}, ops::Attrs().set_int("axis", -1))};
  return {instance_softmax(c, x)};
}

Values softmax_activation(NodeContext& c) {
  const std::string mode = c.text("mode", "instance");
  if (mode == "channel") return {c.op("softmax", {c.input(0)}, ops::Attrs().set_int("axis", 1))};
  if (mode != "instance") c.bad_attribute("mode", str_cat("mode ", mode, " is neither instance nor channel"));
  return {instance_softmax(c, c.input(0))};
}

Values layer_norm(NodeContext& c) {
  if (c.flag("output_mean_var", false))
    c.unsupported("output_mean_var", "LayerNorm's mean and variance outputs are not supported");
  ops::Attrs a;
  a.set_int("axis", c.integer("axis", -1)).set_float("epsilon", c.real("eps", 1e-5));
  graph::Value x = c.input(0);
  // MXNet normalizes over one axis; nnvm's layer_norm (ONNX's) over all axes from `axis` on.
  const int64_t rank = int64_t(c.type(x).shape.size());
  if (c.axis(c.integer("axis", -1), rank, "axis") != rank - 1)
    c.unsupported("axis", "LayerNorm over an axis other than the last is not supported");
  return {c.op("layer_norm", {x, c.input(1), c.input(2)}, a)};
}

Values instance_norm(NodeContext& c) {
  return {c.op("instance_norm", {c.input(0), c.input(1), c.input(2)},
               ops::Attrs().set_float("epsilon", c.real("eps", 1e-3)))};
}

// Embedding: rows of the weight picked by (float) indices, clipped into range as MXNet does.
Values embedding(NodeContext& c) {
  graph::Value ids = c.input(0), weight = c.input(1);
  const int64_t rows = c.shape(weight).at(0);
  if (c.type(ids).dtype.is_float()) {
    graph::Value lo = c.scalar_like(0, ids, "lo"), hi = c.scalar_like(double(rows - 1), ids, "hi");
    ids = c.op("clip", {ids, lo, hi}, {}, "clip");
  }
  ids = c.op("cast", {ids}, ops::Attrs().set_dtype("to", dtype::int64), "ids");
  return {c.op("gather", {weight, ids}, ops::Attrs().set_int("axis", 0))};
}

Values identity(NodeContext& c) { return {c.op("identity", {c.input(0)})}; }

// Dropout is the identity at inference, unless mode "always" asks for it there too.
Values dropout(NodeContext& c) {
  if (c.text("mode", "training") == "always")
    c.unsupported("mode", "Dropout with mode always (random at inference) is not supported");
  return identity(c);
}

}  // namespace

void add_nn_converters(std::map<std::string, Converter>& t) {
  t["Convolution"] = {convolution};
  t["Deconvolution"] = {deconvolution};
  t["FullyConnected"] = {fully_connected};
  t["BatchNorm"] = {batch_norm};
  t["Activation"] = {activation};
  t["LeakyReLU"] = {leaky_relu};
  t["Pooling"] = {pooling};
  t["softmax"] = {[](NodeContext& c) { return softmax(c, "softmax"); }};
  t["log_softmax"] = {[](NodeContext& c) { return softmax(c, "log_softmax"); }};
  t["SoftmaxActivation"] = {softmax_activation};
  t["SoftmaxOutput"] = {softmax_output, 1};
  t["Softmax"] = {softmax_output, 1};  // SoftmaxOutput's older name
  t["LinearRegressionOutput"] = {identity, 1};
  t["MAERegressionOutput"] = {identity, 1};
  t["LogisticRegressionOutput"] = {[](NodeContext& c) { return Values{c.op("sigmoid", {c.input(0)})}; }, 1};
  t["LayerNorm"] = {layer_norm};
  t["InstanceNorm"] = {instance_norm};
  t["Embedding"] = {embedding};
  t["Dropout"] = {dropout};
  for (const char* kind : {"relu", "sigmoid", "tanh", "softsign"})
    t[kind] = {[k = std::string(kind)](NodeContext& c) { return unary(c, k, ""); }};
}

}  // namespace mxnet_import
NNVM_END_NAMESPACE
