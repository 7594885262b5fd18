// linear_attention: ONNX LinearAttention (opset 27), update rules "linear" and "gated". Query,
// key and value are (B, T, H * D) with the heads packed in the last axis (q_num_heads heads of
// d_k for the query, kv_num_heads of d_k for the key and of d_v for the value); grouped-query:
// query head h reads key/value head h / (q_num_heads / kv_num_heads). Per key/value head the
// op runs the recurrence, decay first, then the write, then the read:
//   S_t = exp(g_t) * S_{t-1} + k_t v_t^T        (S_0 = past_state, or zeros; g = 0 for "linear")
//   o_t = scale * q_t^T S_t                      (scale 0 or absent: 1 / sqrt(d_k))
// where g_t is decay's log-space gate, one per head (last axis kv_num_heads) or one per key
// dimension (last axis kv_num_heads * d_k). Outputs: output (B, T, q_num_heads * d_v) in the
// query's dtype and present_state = S_T (B, kv_num_heads, d_k, d_v) in past_state's dtype (the
// query's without one). chunk_size is a tuning hint and is ignored.
//
// No scan: the recurrence is unrolled into its closed form, with G_t = g_1 + ... + g_t,
//   S_t = exp(G_t) S_0 + sum_{s <= t} exp(G_t - G_s) k_s v_s^T,
// computed as a chain of reductions:
//   G  (B, Hkv, T, 1 or d_k)  running sum of decay over time             ("_cum_decay", gated)
//   A  (B, Hq, T, T)           scale * sum_j q_t k_s exp(G_t - G_s), s <= t ("_scores")
//   P  (B, T, Hq * d_v)        scale * q_t^T (exp(G_t) S_0)                ("_past", with past_state)
//   O  = P + sum_{s <= t} A_ts v_s                                         (the output)
//   S_T = exp(G_T) S_0 + sum_s exp(G_T - G_s) k_s v_s^T                    ("_present_state")
// Cost: O(T^2) per head (the cumulative sum and the scores), like causal softmax attention; a
// chunked or scan form would make it O(T). exp(G_t - G_s) is taken from the difference of two
// running sums, so very long, strongly decaying sequences lose some float32 precision to
// cancellation that the sequential form does not have.
//
// Refused: "delta" and "gated_delta" (the ONNX default): their update v_t <- beta_t (v_t - S^T k_t)
// reads the state the previous step wrote, which has no closed form here and needs a sequential
// scan that nnvm does not have yet. float16/bfloat16 compute in float32 and round the outputs.
#pragma once

#include <cmath>

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct LinearAttentionParams {
  int64_t q_num_heads = 0, kv_num_heads = 0;  // required
  double scale = 0.0;                          // 0: 1 / sqrt(d_k)
  std::string update_rule = "gated_delta";     // the ONNX default, refused
};

namespace detail {
inline int64_t linear_attention_const(const ir::Expr& e, const std::string& what) {
  std::optional<int64_t> c = ir::simplified_const_int(e);
  if (!c) throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent"));
  return *c;
}
}  // namespace detail

// `past_state`, `decay` and `beta` may be undefined (absent). Returns {output, present_state}.
inline std::vector<te::Tensor> linear_attention(const te::Tensor& query, const te::Tensor& key, const te::Tensor& value,
                                                const te::Tensor& past_state, const te::Tensor& decay,
                                                const te::Tensor& beta, const LinearAttentionParams& p,
                                                const std::string& name = "linear_attention") {
  const std::string& rule = p.update_rule;
  if (rule == "delta" || rule == "gated_delta")
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'update_rule' is '", rule, "'", rule == "gated_delta" ? " (the default)" : "",
                            ": the delta rules need a sequential scan over time, which nnvm does not have yet; "
                            "only 'linear' and 'gated' are supported"),
                    {"attribute update_rule"});
  if (rule != "linear" && rule != "gated")
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'update_rule' is '", rule, "', expected 'linear', 'gated', 'delta' or 'gated_delta'"),
                    {"attribute update_rule"});
  bool gated = rule == "gated";
  if (gated && !decay.defined())
    throw UserError("nnvm.ops.input_count", "update_rule 'gated' needs input decay", {"input decay"});
  if (!gated && decay.defined())
    throw UserError("nnvm.ops.input_count", "update_rule 'linear' takes no input decay", {"input decay"});
  if (beta.defined())
    throw UserError("nnvm.ops.input_count", str_cat("update_rule '", rule, "' takes no input beta (only the delta rules do)"),
                    {"input beta"});
  int64_t Hq = p.q_num_heads, Hkv = p.kv_num_heads;
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv != 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attributes q_num_heads (", Hq, ") and kv_num_heads (", Hkv,
                            ") must be positive, q_num_heads a multiple of kv_num_heads"),
                    {"attribute q_num_heads"});
  int64_t group = Hq / Hkv;

  check_rank(query, "query", 3);
  check_rank(key, "key", 3);
  check_rank(value, "value", 3);
  check_norm_float(query, "query");
  check_same_dtype(query, "query", key, "key");
  check_same_dtype(query, "query", value, "value");
  ir::Expr B = query.shape()[0], T = query.shape()[1];
  for (auto [x, input] : {std::pair{&key, "key"}, std::pair{&value, "value"}}) {
    check_same_extent(x->shape()[0], B, str_cat("the batch extents of ", input, " and query"));
    check_same_extent(x->shape()[1], T, str_cat("the sequence extents of ", input, " and query"));
  }
  int64_t qh = detail::linear_attention_const(query.shape()[2], "the last axis of query"),
          kh = detail::linear_attention_const(key.shape()[2], "the last axis of key"),
          vh = detail::linear_attention_const(value.shape()[2], "the last axis of value");
  if (qh % Hq || kh % Hkv || vh % Hkv || qh / Hq != kh / Hkv)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axes of query (", qh, "), key (", kh, ") and value (", vh,
                            ") must split into q_num_heads (", Hq, ") and kv_num_heads (", Hkv,
                            ") heads, query's and key's of one size"),
                    {"input query"});
  int64_t dk = qh / Hq, dv = vh / Hkv;

  int64_t dg = 0;  // decay values per head: 1 or d_k
  if (gated) {
    check_rank(decay, "decay", 3);
    check_same_dtype(query, "query", decay, "decay");
    check_same_extent(decay.shape()[0], B, "the batch extents of decay and query");
    check_same_extent(decay.shape()[1], T, "the sequence extents of decay and query");
    int64_t last = detail::linear_attention_const(decay.shape()[2], "the last axis of decay");
    if (last != Hkv && last != Hkv * dk)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axis of decay has extent ", last, ", expected kv_num_heads (", Hkv,
                              ") or kv_num_heads * d_k (", Hkv * dk, ")"),
                      {"input decay"});
    dg = last / Hkv;
  }
  if (past_state.defined()) {
    check_rank(past_state, "past_state", 4);
    check_norm_float(past_state, "past_state");
    const ir::Expr want[] = {B, ir::Expr(Hkv), ir::Expr(dk), ir::Expr(dv)};
    for (size_t d = 0; d < 4; ++d)
      check_same_extent(past_state.shape()[d], want[d],
                        str_cat("axis ", d, " of past_state and of (batch, kv_num_heads, d_k, d_v)"));
  }
  DataType t = query.dtype(), ct = norm_compute_type(t);
  DataType st = past_state.defined() ? past_state.dtype() : t;
  double scale = p.scale != 0.0 ? p.scale : 1.0 / std::sqrt(double(dk));
  ir::Expr Dk(dk), Dv(dv), Grp(group);
  auto load = [&](const te::Tensor& x, ir::Expr b, ir::Expr s, ir::Expr h, ir::Expr d, ir::Expr hd) {
    return ir::cast(ct, x(b, s, h * hd + d));
  };

  // G: running sum of decay over time, per batch, key/value head and (per-key decay) key dim.
  te::Tensor G;
  if (gated) {
    auto r = te::reduce_axis(T, "s");
    G = te::compute(
        {B, ir::Expr(Hkv), T, ir::Expr(dg)},
        [&](const std::vector<ir::Var>& v) {
          return ir::Reduce::make(ir::Combiner::sum, load(decay, v[0], r.var(), v[1], v[3], ir::Expr(dg)), {r}, ir::Expr(),
                                  r.var() <= v[2]);
        },
        name + "_cum_decay");
  }
  // exp(G[b, h, t, j] - G[b, h, s, j]) (exp(G[b, h, t, j]) when s is undefined) for key dim j.
  auto gate = [&](ir::Expr b, ir::Expr h, ir::Expr tt, ir::Expr s, ir::Expr j) {
    ir::Expr jg = dg == 1 ? ir::Expr(int64_t(0)) : j;
    ir::Expr e = G(b, h, tt, jg);
    if (s.defined()) e = e - G(b, h, s, jg);
    return ir::call(ir::CallOp::exp, e);
  };
  ir::Expr sc = ir::make_const(ct, scale);

  // A[b, hq, t, s] = scale * sum_j q_t[j] k_s[j] exp(G_t[j] - G_s[j]), zero for s > t.
  auto kj = te::reduce_axis(Dk, "j");
  te::Tensor A = te::compute(
      {B, ir::Expr(Hq), T, T},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], hq = v[1], hk = v[1] / Grp, j = kj.var();
        ir::Expr term = load(query, b, v[2], hq, j, Dk) * load(key, b, v[3], hk, j, Dk);
        if (gated) term = term * gate(b, hk, v[2], v[3], j);
        return ir::Reduce::make(ir::Combiner::sum, term * sc, {kj}, ir::Expr(), v[3] <= v[2]);
      },
      name + "_scores");

  std::vector<ir::Expr> out_shape = {B, T, ir::Expr(Hq * dv)};
  // P[b, t, hq * d_v + m] = scale * sum_j q_t[j] exp(G_t[j]) S_0[j, m].
  te::Tensor P;
  if (past_state.defined()) {
    auto pj = te::reduce_axis(Dk, "j");
    P = te::compute(
        out_shape,
        [&](const std::vector<ir::Var>& v) {
          ir::Expr b = v[0], hq = v[2] / Dv, m = v[2] % Dv, hk = hq / Grp, j = pj.var();
          ir::Expr term = load(query, b, v[1], hq, j, Dk) * ir::cast(ct, past_state(b, hk, j, m));
          if (gated) term = term * gate(b, hk, v[1], ir::Expr(), j);
          return te::sum(term * sc, {pj});
        },
        name + "_past");
  }
  auto os = te::reduce_axis(T, "s");
  bool cast_out = ct != t;
  te::Tensor O = te::compute(
      out_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], hq = v[2] / Dv, m = v[2] % Dv, s = os.var();
        ir::Expr init = P.defined() ? P(b, v[1], v[2]) : ir::Expr();
        return ir::Reduce::make(ir::Combiner::sum, A(b, hq, v[1], s) * load(value, b, s, hq / Grp, m, Dv), {os}, init,
                                s <= v[1]);
      },
      cast_out ? name + "_acc" : name);
  te::Tensor out = O;
  if (cast_out)
    out = te::compute(out_shape, [&](const std::vector<ir::Var>& v) { return ir::cast(t, O(v[0], v[1], v[2])); }, name);

  // S_T[b, h, j, m] = exp(G_T[j]) S_0[j, m] + sum_s exp(G_T[j] - G_s[j]) k_s[j] v_s[m].
  std::vector<ir::Expr> state_shape = {B, ir::Expr(Hkv), Dk, Dv};
  ir::Expr last = ir::simplify(T - int64_t(1));
  auto ss = te::reduce_axis(T, "s");
  bool cast_state = ct != st;
  te::Tensor S = te::compute(
      state_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], h = v[1], j = v[2], m = v[3], s = ss.var();
        ir::Expr term = load(key, b, s, h, j, Dk) * load(value, b, s, h, m, Dv);
        if (gated) term = term * gate(b, h, last, s, j);
        ir::Expr init;
        if (past_state.defined()) {
          init = ir::cast(ct, past_state(b, h, j, m));
          if (gated) init = init * gate(b, h, last, ir::Expr(), j);
        }
        return te::sum(term, {ss}, init);
      },
      cast_state ? name + "_present_state_acc" : name + "_present_state");
  te::Tensor present = S;
  if (cast_state)
    present = te::compute(
        state_shape, [&](const std::vector<ir::Var>& v) { return ir::cast(st, S(v[0], v[1], v[2], v[3])); },
        name + "_present_state");
  return {out, present};
}

inline OpDef linear_attention_def() {
  return OpDef{
      .name = "linear_attention",
      .importer_names = {"onnx:LinearAttention"},
      .input_names = {"query", "key", "value", "past_state", "decay", "beta"},
      .optional_inputs = 3,
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            LinearAttentionParams p;
            p.q_num_heads = attrs.get_int("q_num_heads", 0);
            p.kv_num_heads = attrs.get_int("kv_num_heads", 0);
            p.scale = attrs.get_float("scale", 0.0);
            p.update_rule = attrs.get_string("update_rule", "gated_delta");
            auto opt = [&](size_t i) { return i < in.size() ? in[i] : te::Tensor(); };
            return linear_attention(in[0], in[1], in[2], opt(3), opt(4), opt(5), p);
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                         const Target& t) { schedule_stages(s, out, t); },
      .doc = "linear attention, update rules linear and gated (closed form, O(T^2) per head), grouped-query heads, "
             "past_state; outputs output, present_state; the delta rules are refused",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
