// attention (ONNX Attention) by registry name through every engine (op_check.hpp) against a
// plain-loop reference written here from the ONNX definition: 4-D and packed 3-D inputs,
// grouped-query heads, different value head size, scale, softcap, float/bool masks of rank 2..4,
// causal masking with and without a KV cache, nonpad_kv_seqlen, sliding windows, every
// qk_matmul_output_mode, fully masked rows; shape and attribute errors.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_nn_attention {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;

namespace {

std::vector<double> values(int64_t n, uint32_t seed) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = 2.0 * double(s >> 8) / double(1u << 24) - 1.0;
  }
  return v;
}

NDArray make(DataType t, std::vector<int64_t> shape, const std::vector<double>& v) {
  NDArray a(t, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(v[size_t(i)]);
    else if (t == dtype::float64) a.data<double>()[i] = v[size_t(i)];
    else if (t == dtype::int64) a.data<int64_t>()[i] = int64_t(v[size_t(i)]);
    else if (t == dtype::boolean) a.data<bool>()[i] = v[size_t(i)] != 0;
    else throw std::runtime_error("make: unsupported dtype");
  }
  return a;
}

struct Spec {
  std::string label;
  DataType t = dtype::float32;
  int64_t B = 2, Hq = 3, Hkv = 3, Sq = 4, Skv = 5, D = 8, Dv = 8, P = 0;
  bool packed = false;
  std::vector<int64_t> mask_shape;  // empty: no mask
  bool bool_mask = false;
  std::vector<double> mask_values;  // empty: random
  std::vector<int64_t> nonpad;  // empty: none
  bool causal = false;
  std::optional<double> scale;
  double softcap = 0;
  int64_t mode = 0, left = -1, right = -1;
  uint32_t seed = 1;
};

// The reference, on 4-D (b, h, s, d) arrays in row-major order.
OpCheck attention_case(const Spec& c) {
  int64_t L = c.P + c.Skv, g = c.Hq / c.Hkv;
  auto q = values(c.B * c.Hq * c.Sq * c.D, c.seed), k = values(c.B * c.Hkv * c.Skv * c.D, c.seed + 1),
       v = values(c.B * c.Hkv * c.Skv * c.Dv, c.seed + 2), pk = values(c.B * c.Hkv * c.P * c.D, c.seed + 3),
       pv = values(c.B * c.Hkv * c.P * c.Dv, c.seed + 4);
  int64_t mask_n = 1;
  for (auto e : c.mask_shape) mask_n *= e;
  auto mask = c.mask_values.empty() ? values(mask_n, c.seed + 5) : c.mask_values;
  if (c.bool_mask && c.mask_values.empty())
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = (mask[i] > -0.4) ? 1 : 0;
  // Present keys/values: past then new.
  std::vector<double> K(size_t(c.B * c.Hkv * L * c.D)), V(size_t(c.B * c.Hkv * L * c.Dv));
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.Hkv; ++h)
      for (int64_t j = 0; j < L; ++j) {
        for (int64_t d = 0; d < c.D; ++d)
          K[size_t(((b * c.Hkv + h) * L + j) * c.D + d)] =
              j < c.P ? pk[size_t(((b * c.Hkv + h) * c.P + j) * c.D + d)]
                      : k[size_t(((b * c.Hkv + h) * c.Skv + j - c.P) * c.D + d)];
        for (int64_t d = 0; d < c.Dv; ++d)
          V[size_t(((b * c.Hkv + h) * L + j) * c.Dv + d)] =
              j < c.P ? pv[size_t(((b * c.Hkv + h) * c.P + j) * c.Dv + d)]
                      : v[size_t(((b * c.Hkv + h) * c.Skv + j - c.P) * c.Dv + d)];
      }
  double scale = c.scale.value_or(1.0 / std::sqrt(double(c.D)));
  std::vector<double> Y(size_t(c.B * c.Hq * c.Sq * c.Dv), 0.0), QK(size_t(c.B * c.Hq * c.Sq * L));
  for (int64_t b = 0; b < c.B; ++b)
    for (int64_t h = 0; h < c.Hq; ++h)
      for (int64_t i = 0; i < c.Sq; ++i) {
        const size_t n = static_cast<size_t>(L);
        std::vector<double> raw(n), capped(n), biased(n), prob(n, 0.0);
        std::vector<bool> ok(n, true);
        for (int64_t j = 0; j < L; ++j) {
          double s = 0;
          for (int64_t d = 0; d < c.D; ++d)
            s += q[size_t(((b * c.Hq + h) * c.Sq + i) * c.D + d)] * K[size_t(((b * c.Hkv + h / g) * L + j) * c.D + d)];
          raw[size_t(j)] = s * scale;
          capped[size_t(j)] = c.softcap > 0 ? c.softcap * std::tanh(raw[size_t(j)] / c.softcap) : raw[size_t(j)];
          double bias = 0;
          if (!c.mask_shape.empty()) {
            // Broadcast from the right over (B, Hq, Sq, L); keys past the mask's end are masked.
            int64_t full[4] = {b, h, i, j}, off = 0;
            size_t r = c.mask_shape.size();
            for (size_t d = 0; d < r; ++d) {
              int64_t e = c.mask_shape[d], x = full[4 - r + d];
              off = off * e + (e == 1 ? 0 : std::min(x, e - 1));
            }
            if (j >= c.mask_shape.back()) ok[size_t(j)] = false;
            if (c.bool_mask) ok[size_t(j)] = ok[size_t(j)] && mask[size_t(off)] != 0;
            else bias = mask[size_t(off)];
          }
          int64_t offset = c.P;
          if (!c.nonpad.empty()) {
            if (j >= c.nonpad[size_t(b)]) ok[size_t(j)] = false;
            if (c.P == 0) offset = c.nonpad[size_t(b)] - c.Sq;
          }
          int64_t pos = i + offset;
          if (c.causal && j > pos) ok[size_t(j)] = false;
          if (c.left >= 0 && j < pos - c.left) ok[size_t(j)] = false;
          if (c.right >= 0 && j > pos + c.right) ok[size_t(j)] = false;
          biased[size_t(j)] = ok[size_t(j)] ? capped[size_t(j)] + bias : -INFINITY;
        }
        double mx = -INFINITY, sum = 0;
        for (double z : biased) mx = std::max(mx, z);
        if (mx > -INFINITY) {
          for (int64_t j = 0; j < L; ++j) sum += prob[size_t(j)] = std::exp(biased[size_t(j)] - mx);
          for (auto& pr : prob) pr /= sum;
        }
        for (int64_t j = 0; j < L; ++j) {
          const std::vector<double>* by_mode[] = {&raw, &capped, &biased, &prob};
          QK[size_t(((b * c.Hq + h) * c.Sq + i) * L + j)] = (*by_mode[c.mode])[size_t(j)];
          for (int64_t d = 0; d < c.Dv; ++d)
            Y[size_t(((b * c.Hq + h) * c.Sq + i) * c.Dv + d)] +=
                prob[size_t(j)] * V[size_t(((b * c.Hkv + h / g) * L + j) * c.Dv + d)];
        }
      }
  // Packed 3-D layout (b, s, h * d) of a 4-D (b, h, s, d) array.
  auto pack = [&](const std::vector<double>& x, int64_t H, int64_t S, int64_t Dh) {
    std::vector<double> out(x.size());
    for (int64_t b = 0; b < c.B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t s = 0; s < S; ++s)
          for (int64_t d = 0; d < Dh; ++d)
            out[size_t(((b * S + s) * H + h) * Dh + d)] = x[size_t(((b * H + h) * S + s) * Dh + d)];
    return out;
  };
  auto tensor = [&](const std::vector<double>& x, int64_t H, int64_t S, int64_t Dh) {
    return c.packed ? make(c.t, {c.B, S, H * Dh}, pack(x, H, S, Dh)) : make(c.t, {c.B, H, S, Dh}, x);
  };
  std::vector<std::optional<NDArray>> ins = {tensor(q, c.Hq, c.Sq, c.D), tensor(k, c.Hkv, c.Skv, c.D),
                                             tensor(v, c.Hkv, c.Skv, c.Dv)};
  ins.push_back(c.mask_shape.empty() ? std::nullopt
                                     : std::optional<NDArray>(make(c.bool_mask ? dtype::boolean : c.t, c.mask_shape, mask)));
  ins.push_back(c.P ? std::optional<NDArray>(make(c.t, {c.B, c.Hkv, c.P, c.D}, pk)) : std::nullopt);
  ins.push_back(c.P ? std::optional<NDArray>(make(c.t, {c.B, c.Hkv, c.P, c.Dv}, pv)) : std::nullopt);
  if (!c.nonpad.empty())
    ins.push_back(make(dtype::int64, {c.B}, std::vector<double>(c.nonpad.begin(), c.nonpad.end())));
  while (!ins.back()) ins.pop_back();
  ops::Attrs attrs;
  attrs.set_int("is_causal", c.causal).set_float("softcap", c.softcap).set_int("qk_matmul_output_mode", c.mode);
  if (c.scale) attrs.set_float("scale", *c.scale);
  if (c.packed) attrs.set_int("q_num_heads", c.Hq).set_int("kv_num_heads", c.Hkv);
  if (c.left >= 0) attrs.set_int("left_window_size", c.left);
  if (c.right >= 0) attrs.set_int("right_window_size", c.right);
  return OpCheck{.label = c.label,
                 .op = "attention",
                 .inputs = ins,
                 .attrs = attrs,
                 .want = {tensor(Y, c.Hq, c.Sq, c.Dv), make(c.t, {c.B, c.Hkv, L, c.D}, K),
                          make(c.t, {c.B, c.Hkv, L, c.Dv}, V), make(c.t, {c.B, c.Hq, c.Sq, L}, QK)}};
}

}  // namespace

TEST_CASE("attention: heads, masks, causal, KV cache, softcap, output modes") {
  std::vector<Spec> specs = {
      {.label = "4-D"},
      {.label = "3-D packed", .Hq = 3, .Hkv = 3, .Skv = 7, .packed = true, .seed = 2},
      {.label = "3-D grouped-query diff head sizes", .Hq = 6, .Hkv = 2, .Dv = 5, .packed = true, .seed = 3},
      {.label = "4-D grouped-query", .Hq = 6, .Hkv = 3, .Sq = 3, .seed = 4},
      {.label = "multi-query, scaled", .Hq = 4, .Hkv = 1, .D = 6, .Dv = 3, .scale = 0.3, .seed = 5},
      {.label = "softcap, mode 1", .softcap = 0.7, .mode = 1, .seed = 6},
      {.label = "float mask 2-D, mode 2", .mask_shape = {4, 5}, .mode = 2, .seed = 7},
      {.label = "float mask 4-D broadcast heads", .mask_shape = {2, 1, 4, 5}, .seed = 8},
      {.label = "bool mask 3-D, mode 3", .mask_shape = {3, 4, 5}, .bool_mask = true, .mode = 3, .seed = 9},
      {.label = "causal", .Sq = 5, .Skv = 5, .causal = true, .seed = 10},
      {.label = "causal cross (top-left)", .Sq = 3, .Skv = 6, .causal = true, .mode = 3, .seed = 11},
      {.label = "past and present, mask", .Sq = 3, .Skv = 2, .P = 4, .mask_shape = {3, 6}, .seed = 12},
      {.label = "past, causal offset, grouped 3-D", .Hq = 4, .Hkv = 2, .Sq = 2, .Skv = 2, .Dv = 3, .P = 3,
       .packed = true, .causal = true, .mode = 2, .seed = 13},
      {.label = "nonpad decode, causal", .Hq = 4, .Hkv = 2, .Sq = 1, .Skv = 6, .nonpad = {3, 6}, .causal = true,
       .seed = 14},
      {.label = "nonpad negative offset (empty rows)", .B = 1, .Hq = 2, .Hkv = 2, .Sq = 4, .Skv = 4, .nonpad = {2},
       .causal = true, .mode = 3, .seed = 15},
      {.label = "nonpad with short mask", .Skv = 6, .mask_shape = {2, 3, 4, 4}, .nonpad = {4, 3}, .seed = 16},
      {.label = "fully masked bool row", .B = 1, .Hq = 2, .Hkv = 2, .Sq = 2, .Skv = 2, .mask_shape = {2, 2},
       .bool_mask = true, .mask_values = {0, 0, 1, 0}, .mode = 3, .seed = 17},
      {.label = "-inf float mask row, softcap", .B = 1, .Hq = 1, .Hkv = 1, .Sq = 2, .Skv = 3, .mask_shape = {2, 3},
       .mask_values = {-INFINITY, -INFINITY, -INFINITY, 0.5, -INFINITY, -1.0}, .softcap = 0.5, .seed = 21},
      {.label = "sliding window", .Sq = 4, .Skv = 6, .left = 2, .right = 1, .seed = 18},
      {.label = "window + causal + softcap", .Sq = 5, .Skv = 5, .causal = true, .softcap = 2.0, .left = 1, .seed = 19},
      {.label = "float64", .t = dtype::float64, .Hq = 2, .Hkv = 1, .Sq = 3, .Skv = 4, .mask_shape = {1, 4}, .seed = 20},
  };
  std::vector<OpCheck> cases;
  for (auto& s : specs) cases.push_back(attention_case(s));
  nnvm_test::check_ops(cases, "nn_attention");
}

TEST_CASE("attention: errors") {
  auto f32 = dtype::float32;
  const auto& att = ops::default_registry().get("attention");
  auto ty = [](DataType t, std::vector<int64_t> s) { return ops::TensorType(t, s); };
  // 3-D without head counts.
  CHECK(error_id([&] { ops::infer_types(att, {ty(f32, {2, 4, 24}), ty(f32, {2, 6, 24}), ty(f32, {2, 6, 24})}); }) ==
        "nnvm.ops.attr");
  // Heads not a multiple.
  CHECK(error_id([&] { ops::infer_types(att, {ty(f32, {2, 4, 4, 8}), ty(f32, {2, 3, 6, 8}), ty(f32, {2, 3, 6, 8})}); }) ==
        "nnvm.ops.input_shape");
  // Head sizes of Q and K differ.
  CHECK(error_id([&] { ops::infer_types(att, {ty(f32, {2, 3, 4, 8}), ty(f32, {2, 3, 6, 7}), ty(f32, {2, 3, 6, 8})}); }) ==
        "nnvm.ops.input_shape");
  // Mask too long.
  CHECK(error_id([&] {
          ops::infer_types(att, {ty(f32, {2, 3, 4, 8}), ty(f32, {2, 3, 6, 8}), ty(f32, {2, 3, 6, 8}), ty(f32, {4, 7})});
        }) == "nnvm.ops.input_shape");
  // past_key without past_value.
  CHECK(error_id([&] {
          ops::infer_types(att, {ty(f32, {2, 3, 4, 8}), ty(f32, {2, 3, 6, 8}), ty(f32, {2, 3, 6, 8}),
                                 ops::TensorType::none(), ty(f32, {2, 3, 5, 8})});
        }) == "nnvm.ops.input_count");
  CHECK(error_id([&] {
          ops::infer_types(att, {ty(f32, {2, 3, 4, 8}), ty(f32, {2, 3, 6, 8}), ty(f32, {2, 3, 6, 8})},
                           ops::Attrs().set_int("qk_matmul_output_mode", 4));
        }) == "nnvm.ops.attr");
  CHECK(error_id([&] {
          ops::infer_types(att, {ty(dtype::int32, {2, 3, 4, 8}), ty(dtype::int32, {2, 3, 6, 8}),
                                 ty(dtype::int32, {2, 3, 6, 8})});
        }) == "nnvm.ops.input_dtype");
  auto out = ops::infer_types(att, {ty(f32, {2, 4, 72}), ty(f32, {2, 6, 24}), ty(f32, {2, 6, 30}),
                                    ops::TensorType::none(), ty(f32, {2, 3, 12, 8}), ty(f32, {2, 3, 12, 10})},
                              ops::Attrs().set_int("q_num_heads", 9).set_int("kv_num_heads", 3));
  REQUIRE(out.size() == 4);
  CHECK(*ir::as_const_int(out[0].shape[2]) == 90);
  CHECK(*ir::as_const_int(out[1].shape[2]) == 18);
  CHECK(*ir::as_const_int(out[3].shape[3]) == 18);
}

}  // namespace ops_nn_attention
