// Normalizations: batch_norm, layer_norm, instance_norm, group_norm, rms_norm, lrn and
// mean_variance_normalization, by registry name through every engine (op_check.hpp) on odd
// shapes against plain loops; shape, dtype and attribute errors.
#include "support/pch.hpp"
#include "support/op_check.hpp"

namespace ops_nn_norm {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;

namespace {

std::vector<double> values(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = 4.0 * double(s >> 8) / double(1u << 24) - 1.5;
  }
  return v;
}

int64_t count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

NDArray make(DataType t, std::vector<int64_t> shape, const std::vector<double>& v) {
  NDArray a(t, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(v[size_t(i)]);
    else if (t == dtype::float64) a.data<double>()[i] = v[size_t(i)];
    else throw std::runtime_error("make: unsupported dtype");
  }
  return a;
}

std::vector<int64_t> unravel(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

// Mean and biased variance of x over the marked axes, per element of x, and per group in
// row-major order of the kept axes (the layout of ONNX's kept-dims Mean output).
struct Stats {
  std::vector<double> mean, var;  // per element of x
  std::vector<double> group_mean, group_var;
};
Stats stats(const std::vector<double>& x, const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  auto group_of = [&](int64_t f) {
    auto idx = unravel(shape, f);
    int64_t g = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d]) g = g * shape[d] + idx[d];
    return g;
  };
  int64_t groups = 1, per = 1;
  for (size_t d = 0; d < shape.size(); ++d) (reduced[d] ? per : groups) *= shape[d];
  Stats s;
  s.group_mean.assign(size_t(groups), 0.0);
  s.group_var.assign(size_t(groups), 0.0);
  for (int64_t f = 0; f < count(shape); ++f) s.group_mean[size_t(group_of(f))] += x[size_t(f)] / double(per);
  for (int64_t f = 0; f < count(shape); ++f) {
    double d = x[size_t(f)] - s.group_mean[size_t(group_of(f))];
    s.group_var[size_t(group_of(f))] += d * d / double(per);
  }
  for (int64_t f = 0; f < count(shape); ++f) {
    s.mean.push_back(s.group_mean[size_t(group_of(f))]);
    s.var.push_back(s.group_var[size_t(group_of(f))]);
  }
  return s;
}

OpCheck batch_norm_case(const std::string& label, DataType t, std::vector<int64_t> shape, double eps, uint32_t seed) {
  int64_t C = shape[1], inner = 1;
  for (size_t d = 2; d < shape.size(); ++d) inner *= shape[d];
  auto x = values(count(shape), seed), sc = values(C, seed + 1), b = values(C, seed + 2), m = values(C, seed + 3),
       v = values(C, seed + 4);
  for (auto& e : v) e = std::abs(e) + 0.1;
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    size_t c = size_t((int64_t(i) / inner) % C);
    y[i] = (x[i] - m[c]) / std::sqrt(v[c] + eps) * sc[c] + b[c];
  }
  return OpCheck{.label = label,
                 .op = "batch_norm",
                 .inputs = {make(t, shape, x), make(t, {C}, sc), make(t, {C}, b), make(t, {C}, m), make(t, {C}, v)},
                 .attrs = ops::Attrs().set_float("epsilon", eps),
                 .want = {make(t, shape, y)}};
}

// LayerNormalization over [axis, rank); Scale and B have the normalized shape.
OpCheck layer_norm_case(const std::string& label, DataType t, std::vector<int64_t> shape, int64_t axis, bool with_b,
                        uint32_t seed) {
  size_t a = size_t(axis < 0 ? axis + int64_t(shape.size()) : axis);
  std::vector<bool> reduced(shape.size(), false);
  std::vector<int64_t> norm_shape(shape.begin() + long(a), shape.end()), kept = shape;
  for (size_t d = a; d < shape.size(); ++d) reduced[d] = true, kept[d] = 1;
  int64_t inner = count(norm_shape);
  auto x = values(count(shape), seed), sc = values(inner, seed + 1), b = values(inner, seed + 2);
  Stats s = stats(x, shape, reduced);
  const double eps = 1e-5;
  std::vector<double> y(x.size()), inv;
  for (size_t i = 0; i < x.size(); ++i) {
    size_t j = i % size_t(inner);
    y[i] = (x[i] - s.mean[i]) / std::sqrt(s.var[i] + eps) * sc[j] + (with_b ? b[j] : 0.0);
  }
  for (double v : s.group_var) inv.push_back(1.0 / std::sqrt(v + eps));
  std::vector<std::optional<NDArray>> ins = {make(t, shape, x), make(t, norm_shape, sc)};
  if (with_b) ins.push_back(make(t, norm_shape, b));
  return OpCheck{.label = label,
                 .op = "layer_norm",
                 .inputs = ins,
                 .attrs = ops::Attrs().set_int("axis", axis),
                 .want = {make(t, shape, y), make(dtype::float32, kept, s.group_mean), make(dtype::float32, kept, inv)}};
}

OpCheck instance_norm_case(const std::string& label, DataType t, std::vector<int64_t> shape, uint32_t seed) {
  int64_t C = shape[1], inner = count(shape) / (shape[0] * C);
  std::vector<bool> reduced(shape.size(), true);
  reduced[0] = reduced[1] = false;
  auto x = values(count(shape), seed), sc = values(C, seed + 1), b = values(C, seed + 2);
  Stats s = stats(x, shape, reduced);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    size_t c = size_t((int64_t(i) / inner) % C);
    y[i] = (x[i] - s.mean[i]) / std::sqrt(s.var[i] + 1e-5) * sc[c] + b[c];
  }
  return OpCheck{.label = label,
                 .op = "instance_norm",
                 .inputs = {make(t, shape, x), make(t, {C}, sc), make(t, {C}, b)},
                 .want = {make(t, shape, y)}};
}

// GroupNormalization: statistics over (channels of one group, spatial) per (n, group).
OpCheck group_norm_case(const std::string& label, DataType t, std::vector<int64_t> shape, int64_t groups,
                        uint32_t seed) {
  int64_t N = shape[0], C = shape[1], inner = count(shape) / (N * C), per = C / groups * inner;
  auto x = values(count(shape), seed), sc = values(C, seed + 1), b = values(C, seed + 2);
  // (n, group) blocks are contiguous in row-major X.
  std::vector<double> y(x.size());
  for (int64_t g = 0; g < N * groups; ++g) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < per; ++i) mean += x[size_t(g * per + i)] / double(per);
    for (int64_t i = 0; i < per; ++i) var += (x[size_t(g * per + i)] - mean) * (x[size_t(g * per + i)] - mean) / double(per);
    for (int64_t i = 0; i < per; ++i) {
      size_t f = size_t(g * per + i), c = size_t((int64_t(f) / inner) % C);
      y[f] = (x[f] - mean) / std::sqrt(var + 1e-5) * sc[c] + b[c];
    }
  }
  return OpCheck{.label = label,
                 .op = "group_norm",
                 .inputs = {make(t, shape, x), make(t, {C}, sc), make(t, {C}, b)},
                 .attrs = ops::Attrs().set_int("num_groups", groups),
                 .want = {make(t, shape, y)}};
}

OpCheck rms_norm_case(const std::string& label, DataType t, std::vector<int64_t> shape, int64_t axis, double eps,
                      uint32_t seed) {
  size_t a = size_t(axis < 0 ? axis + int64_t(shape.size()) : axis);
  std::vector<int64_t> norm_shape(shape.begin() + long(a), shape.end());
  int64_t inner = count(norm_shape);
  auto x = values(count(shape), seed), sc = values(inner, seed + 1);
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < count(shape) / inner; ++r) {
    double ms = 0;
    for (int64_t j = 0; j < inner; ++j) ms += x[size_t(r * inner + j)] * x[size_t(r * inner + j)] / double(inner);
    for (int64_t j = 0; j < inner; ++j) y[size_t(r * inner + j)] = x[size_t(r * inner + j)] / std::sqrt(ms + eps) * sc[size_t(j)];
  }
  return OpCheck{.label = label,
                 .op = "rms_norm",
                 .inputs = {make(t, shape, x), make(t, norm_shape, sc)},
                 .attrs = ops::Attrs().set_int("axis", axis).set_float("epsilon", eps),
                 .want = {make(t, shape, y)}};
}

OpCheck lrn_case(const std::string& label, DataType t, std::vector<int64_t> shape, int64_t size, uint32_t seed) {
  const double alpha = 0.002, beta = 0.6, bias = 1.5;
  int64_t C = shape[1], inner = count(shape) / (shape[0] * C);
  auto x = values(count(shape), seed);
  std::vector<double> y(x.size());
  for (int64_t f = 0; f < count(shape); ++f) {
    int64_t n = f / (C * inner), c = (f / inner) % C, s = f % inner;
    double sum = 0;
    for (int64_t cc = std::max<int64_t>(0, c - (size - 1) / 2); cc <= std::min(C - 1, c + size / 2); ++cc) {
      double v = x[size_t((n * C + cc) * inner + s)];
      sum += v * v;
    }
    y[size_t(f)] = x[size_t(f)] / std::pow(bias + alpha / double(size) * sum, beta);
  }
  return OpCheck{.label = label,
                 .op = "lrn",
                 .inputs = {make(t, shape, x)},
                 .attrs = ops::Attrs().set_int("size", size).set_float("alpha", alpha).set_float("beta", beta).set_float(
                     "bias", bias),
                 .want = {make(t, shape, y)}};
}

OpCheck mvn_case(const std::string& label, DataType t, std::vector<int64_t> shape, std::optional<std::vector<int64_t>> axes,
                 uint32_t seed) {
  std::vector<bool> reduced(shape.size(), false);
  for (int64_t a : axes.value_or(std::vector<int64_t>{0, 2, 3})) reduced[size_t(a < 0 ? a + int64_t(shape.size()) : a)] = true;
  auto x = values(count(shape), seed);
  Stats s = stats(x, shape, reduced);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - s.mean[i]) / (std::sqrt(s.var[i]) + 1e-9);
  ops::Attrs attrs;
  if (axes) attrs.set_ints("axes", *axes);
  return OpCheck{.label = label, .op = "mean_variance_normalization", .inputs = {make(t, shape, x)}, .attrs = attrs,
                 .want = {make(t, shape, y)}};
}

std::vector<ops::TensorType> types(std::vector<std::pair<DataType, std::vector<int64_t>>> ts) {
  std::vector<ops::TensorType> out;
  for (auto& [t, s] : ts) out.emplace_back(t, s);
  return out;
}

}  // namespace

TEST_CASE("normalizations: odd shapes, axes, dtypes") {
  auto f32 = dtype::float32, f64 = dtype::float64;
  OpCheck ln64 = layer_norm_case("layer_norm float64 input, float32 statistics", f64, {3, 7}, -1, true, 14);
  nnvm_test::check_ops(
      {
          batch_norm_case("batch_norm 4-D", f32, {2, 3, 5, 3}, 1e-5, 1),
          batch_norm_case("batch_norm 2-D float64", f64, {5, 7}, 1e-2, 2),
          layer_norm_case("layer_norm last axis", f32, {3, 5, 7}, -1, true, 10),
          layer_norm_case("layer_norm axis 1 no B", f32, {3, 5, 7}, 1, false, 11),
          layer_norm_case("layer_norm axis -2", f32, {2, 3, 5, 3}, -2, true, 12),
          ln64,
          instance_norm_case("instance_norm", f32, {2, 3, 5, 7}, 20),
          instance_norm_case("instance_norm 1-D spatial float64", f64, {3, 2, 9}, 21),
          group_norm_case("group_norm 3 groups", f32, {2, 6, 5, 3}, 3, 30),
          group_norm_case("group_norm 1 group 3-D", f32, {3, 4, 7}, 1, 31),
          group_norm_case("group_norm groups = channels", f32, {2, 5, 3, 3}, 5, 32),
          rms_norm_case("rms_norm last axis", f32, {3, 5, 7}, -1, 1e-5, 40),
          rms_norm_case("rms_norm axis 1", f32, {3, 5, 7}, 1, 1e-3, 41),
          lrn_case("lrn size 3", f32, {2, 5, 3, 3}, 3, 50),
          lrn_case("lrn size 4 (even)", f32, {1, 7, 5}, 4, 51),
          lrn_case("lrn size larger than C", f64, {2, 3, 2}, 7, 52),
          mvn_case("mvn default axes", f32, {3, 5, 3, 2}, std::nullopt, 60),
          mvn_case("mvn axes [1, -1]", f32, {3, 5, 7}, std::vector<int64_t>{1, -1}, 61),
      },
      "nn_norm");
}

TEST_CASE("normalizations: errors") {
  auto f32 = dtype::float32;
  auto get = [](const char* n) -> const ops::OpDef& { return ops::default_registry().get(n); };
  auto c5 = std::vector<int64_t>{5};
  auto bn_in = types({{f32, {2, 5, 3}}, {f32, c5}, {f32, c5}, {f32, c5}, {f32, c5}});
  CHECK(error_id([&] { ops::infer_types(get("batch_norm"), bn_in, ops::Attrs().set_int("training_mode", 1)); }) ==
        "nnvm.ops.attr");
  CHECK(ops::infer_types(get("batch_norm"), bn_in).size() == 1);
  CHECK(error_id([&] {
          ops::infer_types(get("batch_norm"), types({{f32, {2, 4, 3}}, {f32, c5}, {f32, c5}, {f32, c5}, {f32, c5}}));
        }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { ops::infer_types(get("layer_norm"), types({{f32, {3, 5}}, {f32, {4}}})); }) ==
        "nnvm.ops.input_shape");
  CHECK(error_id([&] {
          ops::infer_types(get("layer_norm"), types({{f32, {3, 5}}, {f32, {5}}}), ops::Attrs().set_int("axis", 2));
        }) == "nnvm.ops.attr");
  CHECK(error_id([&] {
          ops::infer_types(get("layer_norm"), types({{f32, {3, 5}}, {f32, {5}}}), ops::Attrs().set_dtype("stash_type", dtype::int64));
        }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(get("layer_norm"), types({{dtype::int32, {3, 5}}, {dtype::int32, {5}}})); }) ==
        "nnvm.ops.input_dtype");
  auto ln = ops::infer_types(get("layer_norm"), types({{f32, {3, 5, 7}}, {f32, {5, 7}}}), ops::Attrs().set_int("axis", 1));
  REQUIRE(ln.size() == 3);
  CHECK(ir::is_const_int(ln[1].shape[2], 1));
  CHECK(error_id([&] {
          ops::infer_types(get("group_norm"), types({{f32, {2, 6, 3}}, {f32, {6}}, {f32, {6}}}),
                           ops::Attrs().set_int("num_groups", 4));
        }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(get("group_norm"), types({{f32, {2, 6, 3}}, {f32, {6}}, {f32, {6}}})); }) ==
        "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(get("instance_norm"), types({{f32, {2, 6, 3}}, {f32, {5}}, {f32, {6}}})); }) ==
        "nnvm.ops.input_shape");
  CHECK(error_id([&] { ops::infer_types(get("lrn"), types({{f32, {2, 6, 3}}}), ops::Attrs().set_int("size", 0)); }) ==
        "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(get("lrn"), types({{f32, {2, 6, 3}}})); }) == "nnvm.ops.attr");
  CHECK(error_id([&] {
          ops::infer_types(get("mean_variance_normalization"), types({{f32, {2, 6, 3}}}),
                           ops::Attrs().set_ints("axes", {0, 3}));
        }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::infer_types(get("rms_norm"), types({{f32, {3, 5}}, {f32, {3}}})); }) ==
        "nnvm.ops.input_shape");
}

}  // namespace ops_nn_norm
