// linear_attention (include/nnvm/ops/nn/linear_attention.hpp) by registry name through every
// engine (op_check.hpp) against the recurrence as ONNX states it, run step by step over time in a
// plain loop (the op itself uses the closed form): update rules linear and gated (decay per head
// and per key dim), with and without past_state, grouped-query heads, T = 1 and T = 5, explicit
// scale, float16 activations and a float16 state; output and present_state both checked. Then
// the errors: the delta rules (refused, nnvm.ops.attr naming update_rule), inputs a rule forbids
// or needs, head counts and shapes.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_linear_attention {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::detail::element;

namespace {

using Dims = std::vector<int64_t>;

// Values in [lo, hi) from a small LCG, stored in dtype t.
NDArray random(DataType t, Dims shape, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  NDArray a(t, std::move(shape));
  uint32_t s = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < a.numel(); ++i) {
    s = s * 1664525u + 1013904223u;
    double v = lo + (hi - lo) * double(s >> 8) / double(1u << 24);
    if (t == dtype::float32) a.data<float>()[i] = float(v);
    else a.values<float16>()[i] = float16(float(v));
  }
  return a;
}

NDArray from(DataType t, Dims shape, const std::vector<double>& v) {
  NDArray a(t, std::move(shape));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(v[size_t(i)]);
    else a.values<float16>()[i] = float16(float(v[size_t(i)]));
  }
  return a;
}

struct Spec {
  std::string label;
  std::string rule = "linear";
  int decay = 0;  // 0: none, 1: per head, 2: per key dim
  bool past = false;
  int64_t B = 2, T = 5, Hq = 2, Hkv = 2, dk = 4, dv = 3;
  double scale = 0;  // 0: attribute absent (1 / sqrt(d_k))
  DataType t = dtype::float32, state_t = dtype::float32;
  uint32_t seed = 1;
};

// The reference: per batch and key/value head, S <- exp(g_t) S; S <- S + k_t v_t^T;
// o_t = scale q_t^T S for each query head of the group, one step at a time.
OpCheck linear_attention_case(const Spec& c) {
  int64_t B = c.B, T = c.T, Hq = c.Hq, Hkv = c.Hkv, dk = c.dk, dv = c.dv, g = Hq / Hkv;
  int64_t dg = c.decay == 1 ? 1 : dk;
  NDArray q = random(c.t, {B, T, Hq * dk}, c.seed), k = random(c.t, {B, T, Hkv * dk}, c.seed + 1),
          v = random(c.t, {B, T, Hkv * dv}, c.seed + 2);
  // A log-space gate: mostly decaying, a little growth now and then.
  NDArray decay = random(c.t, {B, T, Hkv * dg}, c.seed + 3, -0.8, 0.15);
  NDArray past = random(c.state_t, {B, Hkv, dk, dv}, c.seed + 4);
  double scale = c.scale != 0 ? c.scale : 1.0 / std::sqrt(double(dk));
  std::vector<double> out(size_t(B * T * Hq * dv)), state(size_t(B * Hkv * dk * dv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hkv; ++h) {
      std::vector<double> S(size_t(dk * dv), 0.0);
      if (c.past)
        for (int64_t i = 0; i < dk * dv; ++i) S[size_t(i)] = element(past, (b * Hkv + h) * dk * dv + i);
      for (int64_t t = 0; t < T; ++t) {
        if (c.decay)
          for (int64_t j = 0; j < dk; ++j) {
            double f = std::exp(element(decay, (b * T + t) * Hkv * dg + h * dg + (dg == 1 ? 0 : j)));
            for (int64_t m = 0; m < dv; ++m) S[size_t(j * dv + m)] *= f;
          }
        for (int64_t j = 0; j < dk; ++j)
          for (int64_t m = 0; m < dv; ++m)
            S[size_t(j * dv + m)] +=
                element(k, (b * T + t) * Hkv * dk + h * dk + j) * element(v, (b * T + t) * Hkv * dv + h * dv + m);
        for (int64_t hq = h * g; hq < (h + 1) * g; ++hq)
          for (int64_t m = 0; m < dv; ++m) {
            double o = 0;
            for (int64_t j = 0; j < dk; ++j) o += element(q, (b * T + t) * Hq * dk + hq * dk + j) * S[size_t(j * dv + m)];
            out[size_t((b * T + t) * Hq * dv + hq * dv + m)] = scale * o;
          }
      }
      for (int64_t i = 0; i < dk * dv; ++i) state[size_t((b * Hkv + h) * dk * dv + i)] = S[size_t(i)];
    }
  std::vector<std::optional<NDArray>> ins = {q, k, v};
  ins.push_back(c.past ? std::optional<NDArray>(past) : std::nullopt);
  if (c.decay) ins.push_back(decay);
  while (!ins.back()) ins.pop_back();
  ops::Attrs attrs;
  attrs.set_int("q_num_heads", Hq).set_int("kv_num_heads", Hkv).set_string("update_rule", c.rule);
  if (c.scale != 0) attrs.set_float("scale", c.scale);
  DataType present_t = c.past ? c.state_t : c.t;
  bool half = c.t == dtype::float16 || present_t == dtype::float16;
  return OpCheck{.label = c.label,
                 .op = "linear_attention",
                 .inputs = ins,
                 .attrs = attrs,
                 .want = {from(c.t, {B, T, Hq * dv}, out), from(present_t, {B, Hkv, dk, dv}, state)},
                 .rtol = half ? 4e-3 : 1e-4,
                 .atol = half ? 4e-3 : 1e-5};
}

}  // namespace

TEST_CASE("linear_attention: linear and gated rules against the step-by-step recurrence") {
  const DataType f16 = dtype::float16;
  std::vector<Spec> specs = {
      {.label = "linear"},
      {.label = "linear, past_state", .past = true, .seed = 2},
      {.label = "linear T = 1 (decode), no past", .T = 1, .seed = 3},
      {.label = "linear T = 1, past_state, GQA", .past = true, .T = 1, .Hq = 4, .Hkv = 2, .seed = 4},
      {.label = "linear GQA", .Hq = 4, .Hkv = 2, .seed = 5},
      {.label = "gated per-head decay", .rule = "gated", .decay = 1, .seed = 6},
      {.label = "gated per-key-dim decay", .rule = "gated", .decay = 2, .seed = 7},
      {.label = "gated per-head decay, past_state", .rule = "gated", .decay = 1, .past = true, .seed = 8},
      {.label = "gated per-key-dim decay, past_state", .rule = "gated", .decay = 2, .past = true, .seed = 9},
      {.label = "gated per-key-dim, past, GQA", .rule = "gated", .decay = 2, .past = true, .Hq = 4, .Hkv = 2, .seed = 10},
      {.label = "gated per-head, GQA, no past", .rule = "gated", .decay = 1, .Hq = 4, .Hkv = 2, .seed = 11},
      {.label = "gated T = 1 (decode step), past, per-key", .rule = "gated", .decay = 2, .past = true, .T = 1, .seed = 12},
      {.label = "gated T = 1, no past, per-head, GQA", .rule = "gated", .decay = 1, .T = 1, .Hq = 4, .Hkv = 2, .seed = 13},
      {.label = "gated multi-query, scale", .rule = "gated", .decay = 2, .past = true, .Hq = 3, .Hkv = 1, .dk = 5,
       .dv = 2, .scale = 0.3, .seed = 14},
      {.label = "float16 gated per-key, past", .rule = "gated", .decay = 2, .past = true, .B = 1, .t = f16,
       .state_t = f16, .seed = 15},
      {.label = "float16 linear, no past (float16 state)", .B = 1, .Hq = 4, .t = f16, .seed = 16},
      {.label = "float32 activations, float16 state", .rule = "gated", .decay = 1, .past = true, .state_t = f16,
       .seed = 17},
  };
  std::vector<OpCheck> cases;
  for (auto& s : specs) cases.push_back(linear_attention_case(s));
  nnvm_test::check_ops(cases, "linear_attention");
}

TEST_CASE("linear_attention: the delta rules are refused; inputs, heads and shapes checked") {
  using T = ops::TensorType;
  const DataType f32 = dtype::float32;
  T q(f32, {2, 5, 16}), kv(f32, {2, 5, 8}), past(f32, {2, 2, 4, 4}), per_head(f32, {2, 5, 2}), beta(f32, {2, 5, 2});
  auto heads = [](int64_t hq, int64_t hkv) { return ops::Attrs().set_int("q_num_heads", hq).set_int("kv_num_heads", hkv); };
  auto rule = [&](const char* r) { return heads(4, 2).set_string("update_rule", r); };
  auto err = [](const std::vector<T>& in, const ops::Attrs& a) {
    return nnvm_test::error_of([&] { ops::infer_types(ops::get_op("linear_attention"), in, a); });
  };

  // The delta rules, named or by default, are refused with a reason.
  for (auto* r : {"delta", "gated_delta"}) {
    auto [id, msg] = err({q, kv, kv, T::none(), per_head, beta}, rule(r));
    CHECK(id == "nnvm.ops.attr");
    CHECK(msg.find("update_rule") != std::string::npos);
    CHECK(msg.find("sequential scan") != std::string::npos);
  }
  auto [id, msg] = err({q, kv, kv, past, per_head, beta}, heads(4, 2));
  CHECK(id == "nnvm.ops.attr");
  CHECK(msg.find("gated_delta") != std::string::npos);
  CHECK(err({q, kv, kv}, rule("softmax")).first == "nnvm.ops.attr");

  // Supported rules: output shapes and dtypes.
  auto out = ops::infer_types(ops::get_op("linear_attention"), {q, kv, kv, past, T(f32, {2, 5, 8})}, rule("gated"));
  REQUIRE(out.size() == 2);
  CHECK(*ir::as_const_int(out[0].shape[2]) == 16);
  CHECK(*ir::as_const_int(out[1].shape[1]) == 2);
  CHECK(*ir::as_const_int(out[1].shape[3]) == 4);
  CHECK(err({q, kv, kv}, rule("linear")).first == "(no error)");

  // Inputs a rule needs or forbids.
  CHECK(err({q, kv, kv}, rule("gated")).first == "nnvm.ops.input_count");
  CHECK(err({q, kv, kv, T::none(), per_head}, rule("linear")).first == "nnvm.ops.input_count");
  CHECK(err({q, kv, kv, T::none(), per_head, beta}, rule("gated")).first == "nnvm.ops.input_count");
  // Heads.
  CHECK(err({q, kv, kv}, ops::Attrs().set_string("update_rule", "linear")).first == "nnvm.ops.attr");
  CHECK(err({q, kv, kv}, heads(3, 2).set_string("update_rule", "linear")).first == "nnvm.ops.attr");
  CHECK(err({q, kv, kv}, heads(2, 2).set_string("update_rule", "linear")).first == "nnvm.ops.input_shape");
  // Shapes and dtypes.
  CHECK(err({q, kv, kv, T::none(), T(f32, {2, 5, 3})}, rule("gated")).first == "nnvm.ops.input_shape");
  CHECK(err({q, kv, kv, T(f32, {2, 2, 4, 5})}, rule("linear")).first == "nnvm.ops.input_shape");
  CHECK(err({q, T(f32, {2, 4, 8}), kv}, rule("linear")).first == "nnvm.ops.input_shape");
  CHECK(err({T(f32, {2, 5, 4, 4}), kv, kv}, rule("linear")).first == "nnvm.ops.input_shape");
  CHECK(err({T(dtype::int32, {2, 5, 16}), T(dtype::int32, {2, 5, 8}), T(dtype::int32, {2, 5, 8})}, rule("linear")).first ==
        "nnvm.ops.input_dtype");
  CHECK(err({q, kv, T(dtype::float16, {2, 5, 8})}, rule("linear")).first == "nnvm.ops.input_dtype");
}

}  // namespace ops_linear_attention
