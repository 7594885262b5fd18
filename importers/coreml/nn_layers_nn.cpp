// NeuralNetwork layers of CNNs and MLPs: convolution, inner product, batch norm, activations,
// pooling, softmax, padding and upsampling.
#include <cmath>

#include "nn.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

using Values = std::vector<graph::Value>;
namespace spec = nnvm_coreml_spec;

// A 2-D window attribute with the specification's default when absent.
std::vector<int64_t> window_pair(const LayerContext& c, const google::protobuf::RepeatedField<uint64_t>& v,
                                 const std::string& name, int64_t fallback) {
  if (v.empty()) return {fallback, fallback};
  if (v.size() != 2) c.bad_attribute(name, str_cat("has ", v.size(), " entries; a 2-D window needs 2"));
  for (uint64_t e : v)
    if (e == 0 || e > (uint64_t(1) << 31)) c.bad_attribute(name, str_cat("entry ", e, " is out of range"));
  return {int64_t(v[0]), int64_t(v[1])};
}

// ONNX-style pads (top, left, bottom, right) from BorderAmounts (height first, then width).
std::vector<int64_t> border_pads(const LayerContext& c, const spec::BorderAmounts& b, const std::string& name) {
  if (b.borderamounts_size() == 0) return {0, 0, 0, 0};
  if (b.borderamounts_size() != 2)
    c.bad_attribute(name, str_cat("has ", b.borderamounts_size(), " edges; height and width need 2"));
  for (auto& e : b.borderamounts())
    if (e.startedgesize() > (uint64_t(1) << 31) || e.endedgesize() > (uint64_t(1) << 31))
      c.bad_attribute(name, "a padding amount is out of range");
  return {int64_t(b.borderamounts(0).startedgesize()), int64_t(b.borderamounts(1).startedgesize()),
          int64_t(b.borderamounts(0).endedgesize()), int64_t(b.borderamounts(1).endedgesize())};
}

// Core ML's spatial layers read (…, C, H, W); nnvm's read (N, C, H, W).
void require_rank4(const LayerContext& c, const graph::Value& x) {
  if (c.rank(x) != 4)
    c.unsupported("", str_cat("the layer's input has rank ", c.rank(x), "; nnvm reads (N, C, H, W) here"));
}

std::string same_mode(const spec::SamePadding& s) {
  return s.asymmetrymode() == spec::SamePadding::TOP_LEFT_HEAVY ? "SAME_LOWER" : "SAME_UPPER";
}

Values convolution(LayerContext& c) {
  const auto& p = c.layer().convolution();
  graph::Value x = c.input(0);
  require_rank4(c, x);
  if (c.inputs().size() > 1) c.unsupported("", "convolution with its weights as a second input is not supported");
  const int64_t groups = p.ngroups() == 0 ? 1 : int64_t(p.ngroups());
  const int64_t out = int64_t(p.outputchannels()), kc = int64_t(p.kernelchannels());
  if (out <= 0 || kc <= 0 || groups <= 0 || out > (int64_t(1) << 31) || kc > (int64_t(1) << 31) || groups > out)
    c.bad_attribute("outputChannels", "outputChannels, kernelChannels and nGroups must be positive");
  const std::vector<int64_t> kernel = window_pair(c, p.kernelsize(), "kernelSize", 3);
  ops::Attrs a;
  a.set_ints("kernel_shape", kernel)
      .set_ints("strides", window_pair(c, p.stride(), "stride", 1))
      .set_ints("dilations", window_pair(c, p.dilationfactor(), "dilationFactor", 1))
      .set_int("group", groups);
  if (p.has_same()) a.set_string("auto_pad", same_mode(p.same()));
  else a.set_ints("pads", border_pads(c, p.valid().paddingamounts(), "valid.paddingAmounts"));
  // Weights: (out, kernelChannels, kH, kW) for a convolution; (kernelChannels, out / groups,
  // kH, kW) for a deconvolution (nnvm's conv_transpose reads the same layout).
  std::vector<int64_t> wshape = p.isdeconvolution() ? std::vector<int64_t>{kc, out / groups, kernel[0], kernel[1]}
                                                    : std::vector<int64_t>{out, kc, kernel[0], kernel[1]};
  if (p.isdeconvolution() && out % groups != 0)
    c.bad_attribute("nGroups", "outputChannels is not a multiple of nGroups");
  Values in{x, c.weight(p.weights(), wshape, "weights")};
  if (p.hasbias()) in.push_back(c.weight(p.bias(), {out}, "bias"));
  if (!p.isdeconvolution()) return {c.op("conv", in, a)};
  if (p.outputshape_size() != 0) {
    if (p.outputshape_size() != 2) c.bad_attribute("outputShape", "needs 2 entries (height, width)");
    a.set_ints("output_shape", {int64_t(p.outputshape(0)), int64_t(p.outputshape(1))});
  }
  return {c.op("conv_transpose", in, a)};
}

// (…, C_in) or (…, C_in, 1, 1) -> (…, C_out) or (…, C_out, 1, 1): X W^T + b over C.
Values inner_product(LayerContext& c) {
  const auto& p = c.layer().innerproduct();
  if (p.int8dynamicquantize()) c.unsupported("int8DynamicQuantize", "int8 dynamic quantization is not supported");
  const int64_t in_c = int64_t(p.inputchannels()), out_c = int64_t(p.outputchannels());
  if (in_c <= 0 || out_c <= 0 || in_c > (int64_t(1) << 31) || out_c > (int64_t(1) << 31))
    c.bad_attribute("inputChannels", "inputChannels and outputChannels must be positive");
  graph::Value x = c.input(0);
  std::vector<int64_t> shape = c.shape(x);
  graph::Value w = c.weight(p.weights(), {out_c, in_c}, "weights");
  // The rank-4/5 form holds C in front of two unit axes; the rest hold it last.
  const bool spatial = shape.size() >= 4;
  if (spatial && (shape[shape.size() - 1] != 1 || shape[shape.size() - 2] != 1))
    c.unsupported("", "inner product of an input whose H and W are not 1 is not supported (flatten it first)");
  const size_t c_axis = spatial ? shape.size() - 3 : shape.size() - 1;
  if (shape[c_axis] != in_c)
    c.bad_shape(str_cat("the input has ", shape[c_axis], " channels; inputChannels is ", in_c));
  int64_t rows = 1;
  for (size_t i = 0; i < c_axis; ++i) rows *= shape[i];
  Values in{c.reshape(x, {rows, in_c}, "rows"), w};
  if (p.hasbias()) in.push_back(c.weight(p.bias(), {out_c}, "bias"));
  graph::Value y = c.op("dense", in, ops::Attrs().set_int("transB", 1), "dense");
  std::vector<int64_t> out_shape = shape;
  out_shape[c_axis] = out_c;
  return {c.reshape(y, out_shape)};
}

// Batch normalization with stored statistics; with computeMeanVar the statistics are the
// input's own (instance normalization when instanceNormalization is set).
Values batchnorm(LayerContext& c) {
  const auto& p = c.layer().batchnorm();
  graph::Value x = c.input(0);
  const int64_t ch = int64_t(p.channels());
  if (ch <= 0 || ch > (int64_t(1) << 31)) c.bad_attribute("channels", "must be positive");
  std::vector<int64_t> shape = c.shape(x);
  if (shape.size() < 3) c.unsupported("", "batch norm of an input of rank below 3 is not supported");
  const int64_t axis = c.channel_axis(x);
  if (shape[size_t(axis)] != ch) c.bad_shape(str_cat("the input has ", shape[size_t(axis)], " channels; channels is ", ch));
  // nnvm's batch_norm normalizes axis 1: fold the axes before C into N.
  int64_t rows = 1;
  for (int64_t i = 0; i < axis; ++i) rows *= shape[size_t(i)];
  std::vector<int64_t> nchw{rows, ch, shape[shape.size() - 2], shape[shape.size() - 1]};
  graph::Value x4 = nchw == shape ? x : c.reshape(x, nchw, "nchw");
  const double eps = p.epsilon() == 0 ? 1e-5 : p.epsilon();
  graph::Value gamma = c.weight(p.gamma(), {ch}, "gamma"), beta = c.weight(p.beta(), {ch}, "beta");
  graph::Value y;
  const bool reshaped = nchw != shape;
  if (p.computemeanvar()) {
    if (!p.instancenormalization())
      c.unsupported("computeMeanVar", "batch statistics over the batch (computeMeanVar without "
                                      "instanceNormalization) are not supported");
    y = c.op("instance_norm", {x4, gamma, beta}, ops::Attrs().set_float("epsilon", eps), reshaped ? "norm" : "");
  } else {
    y = c.op("batch_norm", {x4, gamma, beta, c.weight(p.mean(), {ch}, "mean"), c.weight(p.variance(), {ch}, "variance")},
             ops::Attrs().set_float("epsilon", eps), reshaped ? "norm" : "");
  }
  return {reshaped ? c.reshape(y, shape) : y};
}

Values activation(LayerContext& c) {
  using A = spec::ActivationParams;
  const auto& p = c.layer().activation();
  graph::Value x = c.input(0);
  switch (p.NonlinearityType_case()) {
    case A::kLinear: {
      // alpha * x + beta, with every value kept (alpha 0 gives the constant beta).
      graph::Value y = c.op("mul", {x, c.scalar_like(p.linear().alpha(), x, "alpha")}, {}, "scaled");
      return {c.op("add", {y, c.scalar_like(p.linear().beta(), x, "beta")})};
    }
    case A::kReLU: return {c.op("relu", {x})};
    case A::kLeakyReLU: return {c.op("leaky_relu", {x}, ops::Attrs().set_float("alpha", p.leakyrelu().alpha()))};
    case A::kThresholdedReLU:
      return {c.op("thresholded_relu", {x}, ops::Attrs().set_float("alpha", p.thresholdedrelu().alpha()))};
    case A::kPReLU: return {c.op("prelu", {x, c.channel_weight(p.prelu().alpha(), x, "PReLU.alpha")})};
    case A::kTanh: return {c.op("tanh", {x})};
    case A::kScaledTanh: {  // alpha * tanh(beta * x)
      graph::Value t = c.op("tanh", {c.affine(x, p.scaledtanh().beta(), 0, "beta")}, {}, "tanh");
      return {c.op("mul", {t, c.scalar_like(p.scaledtanh().alpha(), x, "alpha")})};
    }
    case A::kSigmoid: return {c.op("sigmoid", {x})};
    case A::kSigmoidHard:  // min(max(alpha * x + beta, 0), 1)
      return {c.op("hard_sigmoid", {x}, ops::Attrs().set_float("alpha", p.sigmoidhard().alpha()).set_float("beta", p.sigmoidhard().beta()))};
    case A::kELU: return {c.op("elu", {x}, ops::Attrs().set_float("alpha", p.elu().alpha()))};
    case A::kSoftsign: return {c.op("softsign", {x})};
    case A::kSoftplus: return {c.op("softplus", {x})};
    case A::kParametricSoftplus: {  // alpha * log(1 + exp(beta * x)), per channel
      graph::Value alpha = c.channel_weight(p.parametricsoftplus().alpha(), x, "parametricSoftplus.alpha");
      graph::Value beta = c.channel_weight(p.parametricsoftplus().beta(), x, "parametricSoftplus.beta");
      graph::Value sp = c.op("softplus", {c.op("mul", {x, beta}, {}, "beta")}, {}, "softplus");
      return {c.op("mul", {sp, alpha})};
    }
    case A::NONLINEARITYTYPE_NOT_SET: break;
  }
  c.bad_attribute("NonlinearityType", "the activation names no nonlinearity");
}

Values pooling(LayerContext& c) {
  using P = spec::PoolingLayerParams;
  const auto& p = c.layer().pooling();
  graph::Value x = c.input(0);
  require_rank4(c, x);
  if (p.type() == P::L2) c.unsupported("type", "L2 pooling is not supported");
  if (p.type() != P::MAX && p.type() != P::AVERAGE) c.bad_attribute("type", str_cat("unknown pooling type ", p.type()));
  const bool max = p.type() == P::MAX;
  if (p.globalpooling()) return {c.op(max ? "global_max_pool" : "global_average_pool", {x})};
  ops::Attrs a;
  a.set_ints("kernel_shape", window_pair(c, p.kernelsize(), "kernelSize", 3))
      .set_ints("strides", window_pair(c, p.stride(), "stride", 1));
  switch (p.PoolingPaddingType_case()) {
    case P::kSame: a.set_string("auto_pad", same_mode(p.same())); break;
    case P::kIncludeLastPixel: {
      // Caffe's pooling: symmetric padding, the output extent rounded up.
      const auto& pads = p.includelastpixel().paddingamounts();
      std::vector<int64_t> hw{0, 0};
      if (!pads.empty()) {
        if (pads.size() != 2) c.bad_attribute("includeLastPixel.paddingAmounts", "needs 2 entries");
        for (int i = 0; i < 2; ++i) {
          if (pads[i] > (uint64_t(1) << 31)) c.bad_attribute("includeLastPixel.paddingAmounts", "out of range");
          hw[size_t(i)] = int64_t(pads[i]);
        }
      }
      a.set_ints("pads", {hw[0], hw[1], hw[0], hw[1]}).set_int("ceil_mode", 1);
      break;
    }
    default: a.set_ints("pads", border_pads(c, p.valid().paddingamounts(), "valid.paddingAmounts"));
  }
  if (max) return {c.op("max_pool", {x}, a)};
  return {c.op("average_pool", {x}, a.set_int("count_include_pad", p.avgpoolexcludepadding() ? 0 : 1))};
}

// The legacy softmax: over C (axis -3, or axis 1 under the rank-5 mapping).
Values softmax(LayerContext& c) {
  graph::Value x = c.input(0);
  return {c.op("softmax", {x}, ops::Attrs().set_int("axis", c.channel_axis(x)))};
}

Values softmax_nd(LayerContext& c) {
  graph::Value x = c.input(0);
  return {c.op("softmax", {x}, ops::Attrs().set_int("axis", c.axis(c.layer().softmaxnd().axis(), c.rank(x), "axis")))};
}

// Padding of H and W: constant, reflection, or replication (nnvm's "edge").
Values padding(LayerContext& c) {
  using P = spec::PaddingLayerParams;
  const auto& p = c.layer().padding();
  graph::Value x = c.input(0);
  const int64_t rank = c.rank(x);
  if (rank < 2) c.unsupported("", "padding needs an input of rank 2 or more");
  std::vector<int64_t> tlbr = border_pads(c, p.paddingamounts(), "paddingAmounts");
  std::vector<int64_t> pads(size_t(2 * rank), 0);
  pads[size_t(rank - 2)] = tlbr[0], pads[size_t(rank - 1)] = tlbr[1];
  pads[size_t(2 * rank - 2)] = tlbr[2], pads[size_t(2 * rank - 1)] = tlbr[3];
  Values in{x, c.int64s(pads, "pads")};
  std::string mode = "constant";
  if (p.PaddingType_case() == P::kReflection) mode = "reflect";
  else if (p.PaddingType_case() == P::kReplication) mode = "edge";
  else in.push_back(c.scalar_like(p.constant().value(), x, "value"));
  return {c.op("pad", in, ops::Attrs().set_string("mode", mode))};
}

// Upsampling of H and W by integer (or, bilinear only, fractional) factors: nearest neighbour,
// or bilinear on the grid the linear mode names (DEFAULT is align-corners).
Values upsample(LayerContext& c) {
  using U = spec::UpsampleLayerParams;
  const auto& p = c.layer().upsample();
  graph::Value x = c.input(0);
  const int64_t rank = c.rank(x);
  if (rank < 3) c.unsupported("", "upsampling needs an input of rank 3 or more");
  double sh = 1, sw = 1;
  if (p.fractionalscalingfactor_size() > 0) {
    if (p.fractionalscalingfactor_size() != 2) c.bad_attribute("fractionalScalingFactor", "needs 2 entries");
    sh = p.fractionalscalingfactor(0), sw = p.fractionalscalingfactor(1);
  } else if (p.scalingfactor_size() > 0) {
    if (p.scalingfactor_size() != 2) c.bad_attribute("scalingFactor", "needs 2 entries");
    sh = double(p.scalingfactor(0)), sw = double(p.scalingfactor(1));
  }
  if (!(sh >= 1 && sw >= 1 && sh <= 4096 && sw <= 4096)) c.bad_attribute("scalingFactor", "factors must lie in [1, 4096]");
  std::vector<float> scales(size_t(rank), 1.0f);
  scales[size_t(rank - 2)] = float(sh), scales[size_t(rank - 1)] = float(sw);
  ops::Attrs a;
  if (p.mode() == U::NN) {
    if (sh != std::floor(sh) || sw != std::floor(sw)) c.bad_attribute("scalingFactor", "nearest needs integer factors");
    a.set_string("mode", "nearest").set_string("nearest_mode", "floor").set_string("coordinate_transformation_mode", "asymmetric");
  } else if (p.mode() == U::BILINEAR) {
    a.set_string("mode", "linear")
        .set_string("coordinate_transformation_mode",
                    p.linearupsamplemode() == U::ALIGN_CORNERS_FALSE ? "half_pixel" : "align_corners");
  } else {
    c.bad_attribute("mode", str_cat("unknown interpolation mode ", p.mode()));
  }
  graph::Value s = c.constant(NDArray::from(scales, {rank}), "scales");
  return {c.op("resize", {x, graph::Value{}, s}, a)};
}

// Batched matrix product: two inputs (with transposes), or one input and a stored weight.
Values batched_matmul(LayerContext& c) {
  const auto& p = c.layer().batchedmatmul();
  if (p.int8dynamicquantize()) c.unsupported("int8DynamicQuantize", "int8 dynamic quantization is not supported");
  graph::Value a = c.input(0);
  auto transposed = [&](graph::Value v, const std::string& suffix) {
    const int64_t r = c.rank(v);
    if (r < 2) c.unsupported("", "transposing an input of rank below 2");
    std::vector<int64_t> perm(static_cast<size_t>(r));
    for (int64_t i = 0; i < r; ++i) perm[size_t(i)] = i;
    std::swap(perm[size_t(r - 1)], perm[size_t(r - 2)]);
    return c.op("transpose", {v}, ops::Attrs().set_ints("perm", perm), suffix);
  };
  if (p.transposea()) a = transposed(a, "a_t");
  if (c.inputs().size() >= 2) {
    graph::Value b = c.input(1);
    if (p.transposeb()) b = transposed(b, "b_t");
    return {c.op("matmul", {a, b})};
  }
  const int64_t k = int64_t(p.weightmatrixfirstdimension()), n = int64_t(p.weightmatrixseconddimension());
  if (k <= 0 || n <= 0 || k > (int64_t(1) << 31) || n > (int64_t(1) << 31))
    c.bad_attribute("weightMatrixFirstDimension", "the weight's dimensions must be positive");
  // Stored as (second, first), like innerProduct's (out, in): A W is A times its transpose.
  graph::Value w = c.op("transpose", {c.weight(p.weights(), {n, k}, "weights")}, ops::Attrs().set_ints("perm", {1, 0}),
                        "weights_t");
  if (!p.hasbias()) return {c.op("matmul", {a, w})};
  graph::Value y = c.op("matmul", {a, w}, {}, "matmul");
  return {c.op("add", {y, c.weight(p.bias(), {n}, "bias")})};
}

}  // namespace

void add_nn_layer_converters(std::map<int, LayerConverter>& t) {
  t[Layer::kConvolution] = convolution;
  t[Layer::kInnerProduct] = inner_product;
  t[Layer::kBatchnorm] = batchnorm;
  t[Layer::kActivation] = activation;
  t[Layer::kPooling] = pooling;
  t[Layer::kSoftmax] = softmax;
  t[Layer::kSoftmaxND] = softmax_nd;
  t[Layer::kPadding] = padding;
  t[Layer::kUpsample] = upsample;
  t[Layer::kBatchedMatmul] = batched_matmul;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
