// Operators whose output shape depends on input values, which nnvm's static-shape plans cannot
// take at run time: they are evaluated here, when the importer sees those values as constants
// (initializers, folded subgraphs, or inputs the user fixed with ImportOptions::constant_inputs).
//   - HannWindow, HammingWindow, BlackmanWindow and MelWeightMatrix depend only on their scalar
//     inputs, so the whole result is a constant;
//   - NonZero of a constant is a constant;
//   - Compress with a constant condition is a Gather of the kept positions (the data may vary).
// Otherwise "nnvm.graph.not_constant" names the graph input the value comes from.
#include "adapters.hpp"

#include <cmath>
#include <numbers>

#include "nnvm/ir/small_float.hpp"
#include "nnvm/onnx/dtype_codes.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

namespace {

using graph::Value;

// The data of input `k`, which must be a constant.
const NDArray& constant_input(const NodeBuild& n, BuildContext& ctx, size_t k, const std::string& what) {
  const NDArray* d = k < n.inputs.size() && n.inputs[k].defined() ? ctx.data(n.inputs[k]) : nullptr;
  if (d) return *d;
  if (k >= n.inputs.size() || !n.inputs[k].defined())
    throw UserError("nnvm.onnx.graph", str_cat(n.op_type, " needs its input ", what));
  std::string from = ctx.input_behind(n.inputs[k]);
  throw UserError("nnvm.graph.not_constant",
                  str_cat(n.op_type, "'s input ", what, " decides the output's shape, so it must be known at compile "
                                                        "time, but it is ",
                          from.empty() ? "computed at run time" : "computed from graph input " + from));
}

// Element i of a numeric constant, as a double (bool as 0/1, the storage floats decoded).
double element(const NDArray& a, int64_t i) {
  DataType t = a.dtype();
  const void* p = a.raw();
  if (t.is_storage_only()) {
    uint16_t bits = 0;
    std::memcpy(&bits, static_cast<const std::byte*>(p) + i * int64_t(t.bytes()), size_t(t.bytes()));
    return storage_decode(t, bits);
  }
  auto at = [&](auto tag) { return double(static_cast<const decltype(tag)*>(p)[i]); };
  if (t == dtype::float32) return at(float{});
  if (t == dtype::float64) return at(double{});
  if (t == dtype::int64) return at(int64_t{});
  if (t == dtype::int32) return at(int32_t{});
  if (t == dtype::int16) return at(int16_t{});
  if (t == dtype::int8) return at(int8_t{});
  if (t == dtype::uint64) return at(uint64_t{});
  if (t == dtype::uint32) return at(uint32_t{});
  if (t == dtype::uint16) return at(uint16_t{});
  if (t == dtype::uint8 || t == dtype::boolean) return at(uint8_t{});
  throw UserError("nnvm.onnx.dtype", str_cat("a constant of type ", t, " cannot be read as a number here"));
}

double scalar_input(const NodeBuild& n, BuildContext& ctx, size_t k, const std::string& what) {
  const NDArray& d = constant_input(n, ctx, k, what);
  if (d.numel() != 1) throw UserError("nnvm.onnx.shape", str_cat(n.op_type, "'s input ", what, " must hold one value, it holds ", d.numel()));
  return element(d, 0);
}

// `values` as a 1-D or 2-D constant of the ONNX type code `code` (a float type).
NDArray float_constant(const std::vector<double>& values, std::vector<int64_t> shape, int64_t code,
                       const std::string& op_type) {
  std::optional<DataType> t = dtype_of_code(code);
  if (!t || !t->is_float())
    throw UserError("nnvm.onnx.attribute", str_cat(op_type, "'s output_datatype ", code, " is not a float type nnvm has"),
                    {"attribute output_datatype"});
  NDArray out(*t, std::move(shape));
  auto* bytes = static_cast<std::byte*>(out.raw());
  for (size_t i = 0; i < values.size(); ++i) {
    if (*t == dtype::float32) reinterpret_cast<float*>(bytes)[i] = float(values[i]);
    else if (*t == dtype::float64) reinterpret_cast<double*>(bytes)[i] = values[i];
    else {
      uint16_t bits = uint16_t(storage_encode(*t, values[i]));
      std::memcpy(bytes + i * size_t(t->bytes()), &bits, size_t(t->bytes()));
    }
  }
  return out;
}

// A cosine-sum window of `size` points: sum_k (-1)^k a_k cos(2 pi k n / N), N = size when periodic
// (the default), size - 1 when symmetric.
VersionAdapter window(const char* op, std::vector<double> a) {
  return {.op_type = op, .below = always, .builds = true, .rewrite = [a, op = std::string(op)](NodeBuild& n, BuildContext& ctx) {
            double size_v = scalar_input(n, ctx, 0, "size");
            if (size_v < 1 || size_v > double(int64_t(1) << 31) || size_v != std::floor(size_v))
              throw UserError("nnvm.onnx.shape", str_cat(op, "'s size is ", size_v, "; it must be a positive count"));
            int64_t size = int64_t(size_v);
            double N = double(n.attrs.get_int("periodic", 1) ? size : size - 1);
            std::vector<double> w(static_cast<size_t>(size));
            for (int64_t i = 0; i < size; ++i) {
              double v = 0, sign = 1;
              for (size_t k = 0; k < a.size(); ++k, sign = -sign)
                v += sign * a[k] * (N == 0 ? 1.0 : std::cos(2 * std::numbers::pi * double(k) * double(i) / N));
              w[size_t(i)] = v;
            }
            return std::vector<Value>{ctx.constant(
                "window", float_constant(w, {size}, n.attrs.get_int("output_datatype", 1), op))};
          }};
}

// The triangular mel filters of ONNX's reference (op_mel_weight_matrix.py), step by step:
// num_mel_bins + 2 edges evenly spaced in mel, mapped to spectrogram bins.
std::vector<Value> mel_weight_matrix(NodeBuild& n, BuildContext& ctx) {
  double bins_v = scalar_input(n, ctx, 0, "num_mel_bins"), dft_v = scalar_input(n, ctx, 1, "dft_length");
  double rate = scalar_input(n, ctx, 2, "sample_rate");
  double lower = scalar_input(n, ctx, 3, "lower_edge_hertz"), upper = scalar_input(n, ctx, 4, "upper_edge_hertz");
  if (bins_v < 1 || dft_v < 1 || rate <= 0 || bins_v > 65536 || dft_v > double(1 << 24))
    throw UserError("nnvm.onnx.shape", str_cat("MelWeightMatrix takes num_mel_bins (", bins_v, ") and dft_length (",
                                              dft_v, ") of at least 1 and a positive sample_rate (", rate, ")"));
  int64_t bins = int64_t(bins_v), dft = int64_t(dft_v), spectrum = dft / 2 + 1;
  auto mel = [](double hz) { return 2595 * std::log1p(hz / 700) / std::log(10.0); };
  double low = mel(lower), step = (mel(upper) - low) / double(bins + 2);
  std::vector<int64_t> edge(size_t(bins + 2));
  for (int64_t i = 0; i < bins + 2; ++i) {
    double hz = 700 * std::expm1((double(i) * step + low) / 2595 * std::log(10.0));
    edge[size_t(i)] = int64_t(std::floor(double(dft + 1) * hz / rate));
  }
  std::vector<double> w(size_t(spectrum * bins), 0.0);
  auto set = [&](int64_t j, int64_t i, double v) {
    if (j < 0 || j >= spectrum)
      throw UserError("nnvm.onnx.shape", str_cat("MelWeightMatrix's filter ", i, " reaches spectrogram bin ", j,
                                                " of ", spectrum, " (upper_edge_hertz above sample_rate / 2?)"));
    w[size_t(j * bins + i)] = v;
  };
  for (int64_t i = 0; i < bins; ++i) {
    int64_t left = edge[size_t(i)], center = edge[size_t(i + 1)], right = edge[size_t(i + 2)];
    if (center == left) set(center, i, 1);
    else
      for (int64_t j = left; j <= center; ++j) set(j, i, double(j - left) / double(center - left));
    if (right > center)
      for (int64_t j = center; j < right; ++j) set(j, i, double(right - j) / double(right - center));
  }
  return {ctx.constant("mel_weights", float_constant(w, {spectrum, bins}, n.attrs.get_int("output_datatype", 1),
                                                     "MelWeightMatrix"))};
}

// NonZero: the indices of the non-zero elements, one row per axis (row-major order).
std::vector<Value> non_zero(NodeBuild& n, BuildContext& ctx) {
  const NDArray& x = constant_input(n, ctx, 0, "X");
  std::vector<int64_t> hits;
  for (int64_t i = 0; i < x.numel(); ++i)
    if (element(x, i) != 0) hits.push_back(i);
  int64_t rank = int64_t(x.shape().size()), count = int64_t(hits.size());
  NDArray out(dtype::int64, {rank, count});
  auto idx = out.values<int64_t>();
  for (int64_t h = 0; h < count; ++h) {
    int64_t rest = hits[size_t(h)];
    for (int64_t d = rank; d-- > 0;) {
      idx[size_t(d * count + h)] = rest % x.shape()[size_t(d)];
      rest /= x.shape()[size_t(d)];
    }
  }
  return {ctx.constant("indices", std::move(out))};
}

// Compress(input, condition, axis): the slices of `input` along `axis` (of the flattened input
// without one) whose condition is true; condition may be shorter than the axis.
std::vector<Value> compress(NodeBuild& n, BuildContext& ctx) {
  const NDArray& cond = constant_input(n, ctx, 1, "condition");
  Value x = n.inputs.at(0);
  std::vector<ir::Expr> shape = ctx.type(x).shape;
  bool has_axis = n.attrs.has("axis");
  if (!has_axis) {
    int64_t total = 1;
    for (auto& e : shape) {
      const int64_t* c = ir::as_const_int(e);
      if (!c) throw UserError("nnvm.onnx.shape", "Compress without axis flattens its input, which needs a static shape");
      total *= *c;
    }
    x = ctx.op("Reshape", {x, ctx.constant("flat", NDArray::from(std::vector<int64_t>{total}, {1}))}, {}, "flat").at(0);
    shape = {ir::Expr(total)};
  }
  int64_t rank = int64_t(shape.size()), axis = has_axis ? n.attrs.get_int("axis") : 0;
  if (axis < -rank || axis >= rank)
    throw UserError("nnvm.onnx.attribute", str_cat("axis ", axis, " is out of range for a rank-", rank, " input"),
                    {"attribute axis"});
  if (axis < 0) axis += rank;
  const int64_t* extent = ir::as_const_int(shape[size_t(axis)]);
  if (cond.shape().size() != 1 || (extent && cond.numel() > *extent))
    throw UserError("nnvm.onnx.shape", str_cat("Compress's condition must be 1-D and no longer than the axis; it has ",
                                              cond.numel(), " values"));
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (element(cond, i) != 0) keep.push_back(i);
  if (keep.empty())
    throw UserError("nnvm.onnx.shape", "Compress's condition keeps nothing; the result would be an empty tensor, "
                                       "which nnvm tensors cannot be");
  Value indices = ctx.constant("kept", NDArray::from(keep, {int64_t(keep.size())}));
  return ctx.op("Gather", {x, indices}, ops::Attrs().set_int("axis", axis), "gathered");
}

}  // namespace

std::vector<VersionAdapter> constant_ops() {
  std::vector<VersionAdapter> t;
  t.push_back(window("BlackmanWindow", {0.42, 0.5, 0.08}));
  t.push_back(window("HammingWindow", {25.0 / 46.0, 21.0 / 46.0}));
  t.push_back(window("HannWindow", {0.5, 0.5}));
  t.push_back({.op_type = "Compress", .below = always, .builds = true, .also_needs = {"Gather", "Reshape"},
               .rewrite = compress});
  t.push_back({.op_type = "MelWeightMatrix", .below = always, .builds = true, .rewrite = mel_weight_matrix});
  t.push_back({.op_type = "NonZero", .below = always, .builds = true, .rewrite = non_zero});
  return t;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
