// linear_attention (include/nnvm/ops/nn/linear_attention.hpp) by registry name through every
// engine (op_check.hpp) against the recurrence as ONNX states it, run step by step over time in a
// plain double loop (the op uses a closed form for linear and gated, a te::scan for the delta
// rules): all four update rules, decay per head and per key dim, beta per head and one for all
// heads, with and without past_state, grouped-query and multi-query heads, T = 1 and longer,
// explicit scale, float16 activations and a float16 state; output and present_state both
// checked; one gated_delta kernel over a symbolic sequence length run at several lengths. Then the ONNX node suite's delta-rule cases against their stored outputs, and the
// errors: inputs a rule forbids or needs, head counts, shapes and dtypes, by error id.
#include "support/pch.hpp"
#include "support/onnx_test_data.hpp"
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

// The op's inputs, as the test gives them; past_state, decay and beta may be absent.
struct Inputs {
  NDArray q, k, v;
  std::optional<NDArray> past, decay, beta;
};

// The recurrence as ONNX states it (its _expanded models' Scan body), in double, one step at a
// time: per batch and key/value head, S <- exp(g_t) S (decay given); then S <- S + k_t v_t^T, or
// with beta (the delta rules) S <- S + k_t (beta_t (v_t - S^T k_t))^T; then o_t = scale q_t^T S
// for each query head of the group. Returns {output, present_state} as flat vectors.
std::pair<std::vector<double>, std::vector<double>> recurrence(const Inputs& in, int64_t Hq, int64_t Hkv, double scale) {
  int64_t B = in.q.shape()[0], T = in.q.shape()[1], dk = in.q.shape()[2] / Hq, dv = in.v.shape()[2] / Hkv, g = Hq / Hkv;
  int64_t dg = in.decay ? in.decay->shape()[2] / Hkv : 0, nb = in.beta ? in.beta->shape()[2] : 0;
  if (scale == 0) scale = 1.0 / std::sqrt(double(dk));
  auto q = [&](int64_t b, int64_t t, int64_t hq, int64_t j) { return element(in.q, (b * T + t) * Hq * dk + hq * dk + j); };
  auto k = [&](int64_t b, int64_t t, int64_t h, int64_t j) { return element(in.k, (b * T + t) * Hkv * dk + h * dk + j); };
  auto v = [&](int64_t b, int64_t t, int64_t h, int64_t m) { return element(in.v, (b * T + t) * Hkv * dv + h * dv + m); };
  std::vector<double> out(size_t(B * T * Hq * dv)), state(size_t(B * Hkv * dk * dv));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hkv; ++h) {
      std::vector<double> S(size_t(dk * dv), 0.0), w(size_t(dv), 0.0);
      auto s = [&](int64_t j, int64_t m) -> double& { return S[size_t(j * dv + m)]; };
      if (in.past)
        for (int64_t i = 0; i < dk * dv; ++i) S[size_t(i)] = element(*in.past, (b * Hkv + h) * dk * dv + i);
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t j = 0; j < dk && dg; ++j) {
          double f = std::exp(element(*in.decay, (b * T + t) * Hkv * dg + h * dg + (dg == 1 ? 0 : j)));
          for (int64_t m = 0; m < dv; ++m) s(j, m) *= f;
        }
        for (int64_t m = 0; m < dv; ++m) {
          w[size_t(m)] = v(b, t, h, m);
          if (!nb) continue;
          double recall = 0;
          for (int64_t j = 0; j < dk; ++j) recall += s(j, m) * k(b, t, h, j);
          w[size_t(m)] = element(*in.beta, (b * T + t) * nb + (nb == 1 ? 0 : h)) * (w[size_t(m)] - recall);
        }
        for (int64_t j = 0; j < dk; ++j)
          for (int64_t m = 0; m < dv; ++m) s(j, m) += k(b, t, h, j) * w[size_t(m)];
        for (int64_t hq = h * g; hq < (h + 1) * g; ++hq)
          for (int64_t m = 0; m < dv; ++m) {
            double o = 0;
            for (int64_t j = 0; j < dk; ++j) o += q(b, t, hq, j) * s(j, m);
            out[size_t((b * T + t) * Hq * dv + hq * dv + m)] = scale * o;
          }
      }
      std::copy(S.begin(), S.end(), state.begin() + (b * Hkv + h) * dk * dv);
    }
  return {out, state};
}

// The op's inputs in order, an absent one in the middle as std::nullopt.
std::vector<std::optional<NDArray>> op_inputs(const Inputs& in) {
  std::vector<std::optional<NDArray>> ins = {in.q, in.k, in.v, in.past, in.decay, in.beta};
  while (!ins.back()) ins.pop_back();
  return ins;
}

struct Spec {
  std::string label;
  std::string rule = "linear";
  int decay = 0;  // 0: none, 1: per head, 2: per key dim
  int beta = 0;   // 0: none, 1: per head, 2: one for all heads (last axis 1)
  bool past = false;
  int64_t B = 2, T = 5, Hq = 2, Hkv = 2, dk = 4, dv = 3;
  double scale = 0;  // 0: attribute absent (1 / sqrt(d_k))
  DataType t = dtype::float32, state_t = dtype::float32;
  uint32_t seed = 1;
};

OpCheck linear_attention_case(const Spec& c) {
  int64_t B = c.B, T = c.T, Hq = c.Hq, Hkv = c.Hkv, dk = c.dk, dv = c.dv;
  Inputs in{random(c.t, {B, T, Hq * dk}, c.seed), random(c.t, {B, T, Hkv * dk}, c.seed + 1),
            random(c.t, {B, T, Hkv * dv}, c.seed + 2)};
  if (c.past) in.past = random(c.state_t, {B, Hkv, dk, dv}, c.seed + 4);
  // A log-space gate: mostly decaying, a little growth now and then.
  if (c.decay) in.decay = random(c.t, {B, T, Hkv * (c.decay == 1 ? 1 : dk)}, c.seed + 3, -0.8, 0.15);
  // The write strength, a sigmoid's range.
  if (c.beta) in.beta = random(c.t, {B, T, c.beta == 1 ? Hkv : 1}, c.seed + 5, 0.0, 1.0);
  auto [out, state] = recurrence(in, Hq, Hkv, c.scale);
  ops::Attrs attrs;
  attrs.set_int("q_num_heads", Hq).set_int("kv_num_heads", Hkv).set_string("update_rule", c.rule);
  if (c.scale != 0) attrs.set_float("scale", c.scale);
  DataType present_t = c.past ? c.state_t : c.t;
  bool half = c.t == dtype::float16 || present_t == dtype::float16;
  return OpCheck{.label = c.label,
                 .op = "linear_attention",
                 .inputs = op_inputs(in),
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

TEST_CASE("linear_attention: delta and gated_delta rules against the step-by-step recurrence") {
  const DataType f16 = dtype::float16;
  std::vector<Spec> specs = {
      {.label = "delta, beta per head", .rule = "delta", .beta = 1, .seed = 21},
      {.label = "delta, beta for all heads, past_state", .rule = "delta", .beta = 2, .past = true, .seed = 22},
      {.label = "delta GQA, past_state", .rule = "delta", .beta = 1, .past = true, .Hq = 4, .Hkv = 2, .seed = 23},
      {.label = "delta T = 1 (decode), past_state", .rule = "delta", .beta = 1, .past = true, .T = 1, .seed = 24},
      {.label = "gated_delta per-head decay, beta per head", .rule = "gated_delta", .decay = 1, .beta = 1, .seed = 25},
      {.label = "gated_delta per-key decay, beta per head, past", .rule = "gated_delta", .decay = 2, .beta = 1,
       .past = true, .seed = 26},
      {.label = "gated_delta per-key decay, beta for all heads", .rule = "gated_delta", .decay = 2, .beta = 2, .seed = 27},
      {.label = "gated_delta per-head decay, beta for all heads, past, GQA", .rule = "gated_delta", .decay = 1,
       .beta = 2, .past = true, .Hq = 6, .Hkv = 2, .seed = 28},
      {.label = "gated_delta multi-query, scale, d_k != d_v", .rule = "gated_delta", .decay = 2, .beta = 1,
       .past = true, .Hq = 3, .Hkv = 1, .dk = 5, .dv = 2, .scale = 0.3, .seed = 29},
      {.label = "gated_delta T = 1 (decode step), past, GQA", .rule = "gated_delta", .decay = 2, .beta = 1,
       .past = true, .T = 1, .Hq = 4, .Hkv = 2, .seed = 30},
      {.label = "gated_delta long sequence", .rule = "gated_delta", .decay = 2, .beta = 1, .past = true, .B = 1,
       .T = 40, .seed = 31},
      {.label = "float16 gated_delta, past", .rule = "gated_delta", .decay = 2, .beta = 1, .past = true, .B = 1,
       .t = f16, .state_t = f16, .seed = 32},
      {.label = "float16 delta, no past (float16 state)", .rule = "delta", .beta = 2, .B = 1, .Hq = 4, .t = f16,
       .seed = 33},
      {.label = "float32 activations, float16 state, gated_delta", .rule = "gated_delta", .decay = 1, .beta = 1,
       .past = true, .state_t = f16, .seed = 34},
  };
  std::vector<OpCheck> cases;
  for (auto& s : specs) cases.push_back(linear_attention_case(s));
  nnvm_test::check_ops(cases, "linear_attention_delta");
}

TEST_CASE("linear_attention: one gated_delta kernel over a symbolic sequence length runs at every length") {
  using T = ops::TensorType;
  const DataType f32 = dtype::float32;
  ir::Var steps("steps");
  int64_t B = 1, Hq = 4, Hkv = 2, dk = 3, dv = 2;
  auto attrs = ops::Attrs().set_int("q_num_heads", Hq).set_int("kv_num_heads", Hkv);
  auto seq = [&](int64_t last) { return T(f32, std::vector<ir::Expr>{ir::Expr(B), steps, ir::Expr(last)}); };
  ops::BuiltOp built = ops::build(ops::get_op("linear_attention"),
                                  {seq(Hq * dk), seq(Hkv * dk), seq(Hkv * dv), T(f32, {B, Hkv, dk, dv}), seq(Hkv * dk),
                                   seq(Hkv)},
                                  attrs);
  auto kernel = target::jit_c(built.func);
  for (int64_t len : {1, 2, 9}) {
    INFO("steps = ", len);
    Inputs in{random(f32, {B, len, Hq * dk}, 41), random(f32, {B, len, Hkv * dk}, 42), random(f32, {B, len, Hkv * dv}, 43),
              random(f32, {B, Hkv, dk, dv}, 44), random(f32, {B, len, Hkv * dk}, 45, -0.8, 0.15),
              random(f32, {B, len, Hkv}, 46, 0.0, 1.0)};
    auto [out, state] = recurrence(in, Hq, Hkv, 0);
    NDArray want_out = from(f32, {B, len, Hq * dv}, out), want_state = from(f32, {B, Hkv, dk, dv}, state);
    for (std::string engine : {"interpreter", "C JIT"}) {
      NDArray o(f32, {B, len, Hq * dv}), st(f32, {B, Hkv, dk, dv});
      if (engine == "C JIT") kernel(in.q, in.k, in.v, *in.past, *in.decay, *in.beta, o, st);
      else target::interpret(built.func, in.q, in.k, in.v, *in.past, *in.decay, *in.beta, o, st);
      INFO(engine);
      CHECK(nnvm_test::detail::compare_arrays(o, want_out, 1e-4, 1e-5) == "");
      CHECK(nnvm_test::detail::compare_arrays(st, want_state, 1e-4, 1e-5) == "");
    }
  }
}

TEST_CASE("linear_attention: the ONNX node suite's delta-rule cases give their stored outputs") {
  std::filesystem::path suite = nnvm_test::onnx_node_suite();
  if (suite.empty()) {
    MESSAGE("ONNX node suite not found; skipped");
    return;
  }
  // Read from each case's model.onnx: the inputs given (input_k.pb is the k-th of these) and the
  // attributes; gated_delta is the default update_rule.
  enum Slot { past = 3, decay = 4, beta = 5 };
  struct Node {
    const char* name;
    std::vector<int> slots;  // beyond query, key, value
    int64_t Hq = 4, Hkv = 4;
    const char* rule = nullptr;
    double scale = 0;
  };
  const Node nodes[] = {
      {"decode_step", {past, decay, beta}},
      {"delta", {beta}, 4, 4, "delta"},
      {"explicit_scale", {decay, beta}, 4, 4, nullptr, 0.25},
      {"fp16", {decay, beta}, 8, 4},
      {"gated_delta", {decay, beta}},
      {"gated_delta_beta_scalar", {decay, beta}},
      {"gated_delta_gqa", {decay, beta}, 8, 4},
      {"gated_delta_mqa", {decay, beta}, 8, 1},
      {"no_past_explicit_zeros", {past, decay, beta}},
      {"prefill_with_past", {past, decay, beta}},
  };
  std::vector<OpCheck> cases;
  for (const Node& n : nodes) {
    std::string name = str_cat("test_linear_attention_", n.name);
    std::filesystem::path dir = suite / name / "test_data_set_0";
    REQUIRE(std::filesystem::is_directory(dir));
    auto input = [&](size_t k) { return nnvm_test::read_tensor_proto(dir / str_cat("input_", k, ".pb")); };
    Inputs in{input(0), input(1), input(2)};
    for (size_t k = 0; k < n.slots.size(); ++k)
      (n.slots[k] == past ? in.past : n.slots[k] == decay ? in.decay : in.beta) = input(k + 3);
    REQUIRE(!std::filesystem::exists(dir / str_cat("input_", n.slots.size() + 3, ".pb")));
    std::vector<NDArray> stored = {nnvm_test::read_tensor_proto(dir / "output_0.pb"),
                                   nnvm_test::read_tensor_proto(dir / "output_1.pb")};
    bool half = in.q.dtype() == dtype::float16;
    double tol = half ? 4e-3 : 1e-4;
    // The reference loop agrees with the stored outputs (so with ONNX's own reference) too.
    auto [out, state] = recurrence(in, n.Hq, n.Hkv, n.scale);
    INFO(name);
    CHECK(nnvm_test::detail::compare_arrays(from(stored[0].dtype(), stored[0].shape(), out), stored[0], tol, tol) == "");
    CHECK(nnvm_test::detail::compare_arrays(from(stored[1].dtype(), stored[1].shape(), state), stored[1], tol, tol) == "");
    ops::Attrs a;
    a.set_int("q_num_heads", n.Hq).set_int("kv_num_heads", n.Hkv);
    if (n.rule) a.set_string("update_rule", n.rule);
    if (n.scale != 0) a.set_float("scale", n.scale);
    cases.push_back({name, "linear_attention", op_inputs(in), a, stored, tol, half ? tol : 1e-5});
  }
  nnvm_test::check_ops(cases, "linear_attention_node");
}

TEST_CASE("linear_attention: inputs each rule needs or forbids, heads, shapes and dtypes fail by id") {
  using T = ops::TensorType;
  const DataType f32 = dtype::float32;
  T q(f32, {2, 5, 16}), kv(f32, {2, 5, 8}), past(f32, {2, 2, 4, 4}), per_head(f32, {2, 5, 2}), beta(f32, {2, 5, 2});
  auto heads = [](int64_t hq, int64_t hkv) { return ops::Attrs().set_int("q_num_heads", hq).set_int("kv_num_heads", hkv); };
  auto rule = [&](const char* r) { return heads(4, 2).set_string("update_rule", r); };
  auto err = [](const std::vector<T>& in, const ops::Attrs& a) {
    return nnvm_test::error_of([&] { ops::infer_types(ops::get_op("linear_attention"), in, a); });
  };
  CHECK(err({q, kv, kv}, rule("softmax")).first == "nnvm.ops.attr");

  // Every rule: output shapes and dtypes; gated_delta is the default.
  for (auto& [r, in] : std::vector<std::pair<const char*, std::vector<T>>>{
           {"linear", {q, kv, kv, past}},
           {"gated", {q, kv, kv, past, T(f32, {2, 5, 8})}},
           {"delta", {q, kv, kv, past, T::none(), beta}},
           {"gated_delta", {q, kv, kv, past, per_head, T(f32, {2, 5, 1})}}}) {
    INFO(r);
    auto out = ops::infer_types(ops::get_op("linear_attention"), in, rule(r));
    REQUIRE(out.size() == 2);
    CHECK(*ir::as_const_int(out[0].shape[2]) == 16);
    CHECK(*ir::as_const_int(out[1].shape[1]) == 2);
    CHECK(*ir::as_const_int(out[1].shape[3]) == 4);
  }
  CHECK(err({q, kv, kv, T::none(), per_head, beta}, heads(4, 2)).first == "(no error)");

  // Inputs a rule needs or forbids, each named.
  auto count = [&](const std::vector<T>& in, const char* r, const char* input) {
    auto [id, msg] = err(in, rule(r));
    INFO(r, ": ", msg);
    CHECK(id == "nnvm.ops.input_count");
    CHECK(msg.find(str_cat("input ", input)) != std::string::npos);
  };
  count({q, kv, kv}, "gated", "decay");
  count({q, kv, kv, T::none(), per_head}, "linear", "decay");
  count({q, kv, kv, T::none(), per_head, beta}, "gated", "beta");
  count({q, kv, kv}, "delta", "beta");
  count({q, kv, kv, T::none(), per_head, beta}, "delta", "decay");
  count({q, kv, kv, T::none(), T::none(), beta}, "gated_delta", "decay");
  count({q, kv, kv, T::none(), per_head}, "gated_delta", "beta");
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
  // beta: (B, T, kv_num_heads or 1), the query's dtype.
  auto [id, msg] = err({q, kv, kv, T::none(), T::none(), T(f32, {2, 5, 3})}, rule("delta"));
  CHECK(id == "nnvm.ops.input_shape");
  CHECK_MESSAGE(msg.find("the last axis of beta has extent 3, expected kv_num_heads (2) or one for all heads (1)") != std::string::npos, msg);
  CHECK(err({q, kv, kv, T::none(), T::none(), T(f32, {2, 5})}, rule("delta")).first == "nnvm.ops.input_shape");
  CHECK(err({q, kv, kv, T::none(), T::none(), T(f32, {2, 4, 2})}, rule("delta")).first == "nnvm.ops.input_shape");
  CHECK(err({q, kv, kv, T::none(), T::none(), T(f32, {1, 5, 2})}, rule("delta")).first == "nnvm.ops.input_shape");
  CHECK(err({q, kv, kv, T::none(), per_head, T(dtype::float16, {2, 5, 2})}, rule("gated_delta")).first ==
        "nnvm.ops.input_dtype");
  CHECK(err({q, kv, kv, T::none(), T(f32, {2, 5, 4}), beta}, rule("gated_delta")).first == "nnvm.ops.input_shape");
}

}  // namespace ops_linear_attention
