// Losses: negative_log_likelihood_loss and softmax_cross_entropy_loss, by registry name through
// every engine (op_check.hpp) against plain loops: 2-D to 4-D, each reduction, weights,
// ignore_index (positive and negative), out-of-range targets (clamped), int32/int64 targets;
// shape, dtype and attribute errors.
#include "support/pch.hpp"
#include "support/op_check.hpp"

namespace ops_nn_loss {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;

namespace {

std::vector<double> values(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = 4.0 * double(s >> 8) / double(1u << 24) - 2.5;
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

NDArray make_ints(DataType t, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  NDArray a(t, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::int32) a.data<int32_t>()[i] = int32_t(v[size_t(i)]);
    else a.data<int64_t>()[i] = v[size_t(i)];
  }
  return a;
}

// Shape [N, C, d..]: N, C and the product of the spatial extents.
struct Dims {
  int64_t n, c, d;
  std::vector<int64_t> target_shape;
};
Dims dims(const std::vector<int64_t>& shape) {
  Dims r{shape[0], shape[1], count(shape) / (shape[0] * shape[1]), {shape[0]}};
  r.target_shape.insert(r.target_shape.end(), shape.begin() + 2, shape.end());
  return r;
}

// Class indices in [0, C), every fifth one replaced by `special` when given (an ignore_index or
// an out-of-range class).
std::vector<int64_t> targets(int64_t n, int64_t c, uint32_t seed, std::optional<int64_t> special) {
  std::vector<int64_t> t(static_cast<size_t>(n));
  uint32_t s = seed * 747796405u + 1u;
  for (size_t i = 0; i < t.size(); ++i) {
    s = s * 1664525u + 1013904223u;
    t[i] = (special && i % 5 == 1) ? *special : int64_t((s >> 8) % uint32_t(c));
  }
  return t;
}

// The NLL of log-probabilities `lp` (shape [N, C, d..]) as ONNX defines it, with targets clamped
// into [0, C) as the op documents.
std::vector<double> nll_ref(const std::vector<double>& lp, const Dims& s, const std::vector<int64_t>& tg,
                            const std::vector<double>* w, const std::string& reduction, std::optional<int64_t> ii) {
  std::vector<double> loss(size_t(s.n * s.d));
  double total = 0, wsum = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.d; ++k) {
      int64_t t = tg[size_t(n * s.d + k)];
      double l = 0, wt = 0;
      if (!ii || t != *ii) {
        int64_t c = std::clamp<int64_t>(t, 0, s.c - 1);
        wt = w ? (*w)[size_t(c)] : 1.0;
        l = -lp[size_t((n * s.c + c) * s.d + k)] * wt;
      }
      loss[size_t(n * s.d + k)] = l;
      total += l;
      wsum += wt;
    }
  if (reduction == "none") return loss;
  return {reduction == "sum" ? total : total / wsum};
}

std::vector<double> log_softmax_ref(const std::vector<double>& x, const Dims& s) {
  std::vector<double> y(x.size());
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t k = 0; k < s.d; ++k) {
      auto at = [&](int64_t c) { return size_t((n * s.c + c) * s.d + k); };
      double mx = x[at(0)], sum = 0;
      for (int64_t c = 1; c < s.c; ++c) mx = std::max(mx, x[at(c)]);
      for (int64_t c = 0; c < s.c; ++c) sum += std::exp(x[at(c)] - mx);
      for (int64_t c = 0; c < s.c; ++c) y[at(c)] = x[at(c)] - mx - std::log(sum);
    }
  return y;
}

struct LossCase {
  std::string label;
  DataType t = dtype::float32, target_t = dtype::int64;
  std::vector<int64_t> shape;
  std::string reduction;  // empty: attribute left out (mean)
  bool weighted = false;
  std::optional<int64_t> ignore_index;
  std::optional<int64_t> special;  // the value every fifth target takes
  uint32_t seed = 1;
};

OpCheck loss_case(const LossCase& lc, bool softmax) {
  Dims s = dims(lc.shape);
  auto x = values(count(lc.shape), lc.seed);
  auto tg = targets(s.n * s.d, s.c, lc.seed, lc.special);
  auto w = values(s.c, lc.seed + 100);
  for (auto& e : w) e = std::abs(e) + 0.25;
  std::string red = lc.reduction.empty() ? "mean" : lc.reduction;
  auto lp = softmax ? log_softmax_ref(x, s) : x;
  auto loss = nll_ref(lp, s, tg, lc.weighted ? &w : nullptr, red, lc.ignore_index);
  ops::Attrs attrs;
  if (!lc.reduction.empty()) attrs.set_string("reduction", lc.reduction);
  if (lc.ignore_index) attrs.set_int("ignore_index", *lc.ignore_index);
  std::vector<std::optional<NDArray>> in = {make(lc.t, lc.shape, x), make_ints(lc.target_t, s.target_shape, tg)};
  if (lc.weighted) in.push_back(make(lc.t, {s.c}, w));
  std::vector<NDArray> want = {make(lc.t, red == "none" ? s.target_shape : std::vector<int64_t>{}, loss)};
  if (softmax) want.push_back(make(lc.t, lc.shape, lp));
  return OpCheck{.label = lc.label,
                 .op = softmax ? "softmax_cross_entropy_loss" : "negative_log_likelihood_loss",
                 .inputs = in,
                 .attrs = attrs,
                 .want = want};
}

std::vector<ops::TensorType> types(std::vector<std::pair<DataType, std::vector<int64_t>>> ts) {
  std::vector<ops::TensorType> out;
  for (auto& [t, s] : ts) out.emplace_back(t, s);
  return out;
}

}  // namespace

TEST_CASE("losses: reductions, weights, ignore_index, clamped targets") {
  auto f64 = dtype::float64, i32 = dtype::int32, i64 = dtype::int64;
  nnvm_test::check_ops(
      {
          loss_case({.label = "nll 2-D default mean", .shape = {5, 7}, .seed = 1}, false),
          loss_case({.label = "nll 2-D sum weighted float64", .t = f64, .shape = {5, 7}, .reduction = "sum",
                     .weighted = true, .seed = 2},
                    false),
          loss_case({.label = "nll 4-D none weighted ignore 2 int32", .target_t = i32, .shape = {3, 5, 2, 3},
                     .reduction = "none", .weighted = true, .ignore_index = 2, .special = 2, .seed = 3},
                    false),
          loss_case({.label = "nll 4-D mean weighted ignore -1", .shape = {2, 5, 3, 3}, .reduction = "mean",
                     .weighted = true, .ignore_index = -1, .special = -1, .seed = 4},
                    false),
          loss_case({.label = "nll 3-D mean unweighted ignore 3", .target_t = i64, .shape = {3, 4, 5},
                     .ignore_index = 3, .special = 3, .seed = 5},
                    false),
          loss_case({.label = "nll 3-D none target above C clamped", .shape = {3, 4, 5}, .reduction = "none",
                     .weighted = true, .special = 9, .seed = 6},
                    false),
          loss_case({.label = "nll 2-D sum negative target clamped", .target_t = i32, .shape = {7, 3},
                     .reduction = "sum", .special = -4, .seed = 7},
                    false),
          loss_case({.label = "sce 2-D default mean", .shape = {5, 7}, .seed = 11}, true),
          loss_case({.label = "sce 4-D sum weighted ignore 1 int32", .target_t = i32, .shape = {2, 5, 3, 2},
                     .reduction = "sum", .weighted = true, .ignore_index = 1, .special = 1, .seed = 12},
                    true),
          loss_case({.label = "sce 3-D none weighted float64", .t = f64, .shape = {3, 4, 5}, .reduction = "none",
                     .weighted = true, .seed = 13},
                    true),
          loss_case({.label = "sce 4-D mean weighted ignore -5", .shape = {3, 3, 2, 3}, .reduction = "mean",
                     .weighted = true, .ignore_index = -5, .special = -5, .seed = 14},
                    true),
      },
      "nn_loss");
}

TEST_CASE("losses: errors") {
  auto f32 = dtype::float32, i64 = dtype::int64;
  auto nll = [](const std::vector<ops::TensorType>& in, ops::Attrs a = {}) {
    ops::infer_types(ops::default_registry().get("negative_log_likelihood_loss"), in, a);
  };
  auto sce = [](const std::vector<ops::TensorType>& in, ops::Attrs a = {}) {
    ops::infer_types(ops::default_registry().get("softmax_cross_entropy_loss"), in, a);
  };
  CHECK(ops::infer_types(ops::default_registry().get("softmax_cross_entropy_loss"),
                         types({{f32, {2, 3, 4}}, {i64, {2, 4}}}))
            .size() == 2);
  CHECK(error_id([&] { nll(types({{f32, {3, 5}}, {i64, {3}}}), ops::Attrs().set_string("reduction", "max")); }) ==
        "nnvm.ops.attr");
  CHECK(error_id([&] { nll(types({{f32, {3, 5}}, {f32, {3}}})); }) == "nnvm.ops.input_dtype");
  CHECK(error_id([&] { nll(types({{dtype::int32, {3, 5}}, {i64, {3}}})); }) == "nnvm.ops.input_dtype");
  CHECK(error_id([&] { nll(types({{f32, {3, 5, 2}}, {i64, {3, 5}}})); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { nll(types({{f32, {3, 5}}, {i64, {3, 1}}})); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { nll(types({{f32, {5}}, {i64, {}}})); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { nll(types({{f32, {3, 5}}, {i64, {3}}, {f32, {4}}})); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { nll(types({{f32, {3, 5}}, {i64, {3}}, {dtype::float64, {5}}})); }) ==
        "nnvm.ops.input_dtype");
  CHECK(error_id([&] { sce(types({{dtype::int64, {3, 5}}, {i64, {3}}})); }) == "nnvm.ops.input_dtype");
  CHECK(error_id([&] { sce(types({{f32, {3, 5}}, {i64, {3}}}), ops::Attrs().set_string("reduction", "avg")); }) ==
        "nnvm.ops.attr");
}

}  // namespace ops_nn_loss
