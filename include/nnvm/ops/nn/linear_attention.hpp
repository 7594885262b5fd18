// linear_attention: ONNX LinearAttention (opset 27), all four update rules. Query, key and value
// are (B, T, H * D) with the heads packed in the last axis (q_num_heads heads of d_k for the
// query, kv_num_heads of d_k for the key and of d_v for the value); grouped-query: query head h
// reads key/value head h / (q_num_heads / kv_num_heads). Per key/value head the op runs, step by
// step over t, decay first, then the write, then the read:
//   S'  = exp(g_t) * S_{t-1}                     (g = 0 for "linear" and "delta")
//   S_t = S' + k_t v_t^T                         ("linear", "gated")
//   S_t = S' + k_t (beta_t (v_t - S'^T k_t))^T   ("delta", "gated_delta": the ONNX default)
//   o_t = scale * q_t^T S_t                      (scale 0 or absent: 1 / sqrt(d_k))
// with S_0 = past_state, or zeros. g_t is decay's log-space gate, one per head (last axis
// kv_num_heads) or one per key dimension (last axis kv_num_heads * d_k); beta_t, the delta
// rules' write strength, is one per head (last axis kv_num_heads) or one for all heads (last
// axis 1). Outputs: output (B, T, q_num_heads * d_v) in the query's dtype and present_state =
// S_T (B, kv_num_heads, d_k, d_v) in past_state's dtype (the query's without one). chunk_size
// is a tuning hint and is ignored. float16/bfloat16 compute in float32 and round the outputs.
//
// "linear" and "gated" need no scan: the recurrence is unrolled into its closed form, with
// G_t = g_1 + ... + g_t,
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
// The delta rules' write reads the state the previous step wrote, so they run as a te::scan
// (te/scan.hpp) over the state, one serial loop over t in one kernel:
//   "_states"   (T + 1, B, Hkv, d_k, d_v)  the scan: row 0 is S_0, row t is S_t
//   "_decayed"  S' = exp(g_t) S_{t-1}        (gated_delta)              per-step body stages,
//   "_recall"   (T + 1, B, Hkv, d_v) S'^T k_t                           each reading row t - 1
//   "_delta"    (T + 1, B, Hkv, d_v) beta_t (v_t - S'^T k_t)            of the state
//   "_update"   S' + k_t delta_t^T, row t of the scan
// and after the scan, over all t at once, o_t = scale q_t^T S_t from rows 1..T ("_out") and
// present_state = row T. Cost: O(T) steps of O(B Hkv d_k d_v) each, but the scan keeps every
// state, T * B * Hkv * d_k * d_v float32 values (4 MiB at T = 512, B = 1, Hkv = 8, d_k = d_v = 16)
// where the recurrence needs one: a ring buffer of two rows (a scan storage optimization not
// built yet), or computing o_t inside the step, would avoid it. GPU targets have no scan recipe
// yet: the generic GPU recipe leaves the scan unscheduled, so its whole step loop runs as one
// kernel on a single GPU thread (right, but serial; the op test runs it on OpenCL).
#pragma once

#include <cmath>

#include "nnvm/ops/nn/moments.hpp"
#include "nnvm/te/scan.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct LinearAttentionParams {
  int64_t q_num_heads = 0, kv_num_heads = 0;  // required
  double scale = 0.0;                          // 0: 1 / sqrt(d_k)
  std::string update_rule = "gated_delta";     // the ONNX default
};

namespace detail {
inline int64_t linear_attention_const(const ir::Expr& e, const std::string& what) {
  std::optional<int64_t> c = ir::simplified_const_int(e);
  if (!c) throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent"));
  return *c;
}

// The inputs of one linear_attention call, checked, with the extents and types both forms use.
struct LinearAttention {
  te::Tensor query, key, value, past_state, decay, beta;  // past_state, decay, beta may be undefined
  std::string name;
  ir::Expr B{}, T{};
  int64_t Hq = 0, Hkv = 0, group = 0, dk = 0, dv = 0;
  int64_t dg = 0;            // decay values per head: 0 (no decay), 1 or d_k
  int64_t betas = 0;         // beta values per (b, t): 0 (no beta), 1 or kv_num_heads
  DataType t{}, ct{}, st{};  // query's dtype, the compute dtype, present_state's dtype
  double scale = 0.0;

  // x(b, s, h * hd + d) in the compute dtype.
  ir::Expr load(const te::Tensor& x, ir::Expr b, ir::Expr s, ir::Expr h, ir::Expr d, int64_t hd) const {
    return ir::cast(ct, x(b, s, h * ir::Expr(hd) + d));
  }
  // `x` in dtype `to` (itself when it already is), the rounding of an output computed in ct.
  static te::Tensor rounded(const te::Tensor& x, DataType to, const std::string& name) {
    if (x.dtype() == to) return x;
    return te::compute(
        x.shape(),
        [&](const std::vector<ir::Var>& v) { return ir::cast(to, x(std::vector<ir::Expr>(v.begin(), v.end()))); },
        name);
  }
};

inline LinearAttention linear_attention_checked(const te::Tensor& query, const te::Tensor& key, const te::Tensor& value,
                                                const te::Tensor& past_state, const te::Tensor& decay,
                                                const te::Tensor& beta, const LinearAttentionParams& p,
                                                const std::string& name) {
  const std::string& rule = p.update_rule;
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'update_rule' is '", rule, "', expected 'linear', 'gated', 'delta' or 'gated_delta'"),
                    {"attribute update_rule"});
  bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  auto needs = [&](const te::Tensor& x, bool need, const char* input, const char* rules) {
    if (x.defined() != need)
      throw UserError("nnvm.ops.input_count",
                      need ? str_cat("update_rule '", rule, "' needs input ", input)
                           : str_cat("update_rule '", rule, "' takes no input ", input, " (only ", rules, " do)"),
                      {str_cat("input ", input)});
  };
  needs(decay, gated, "decay", "the gated rules");
  needs(beta, delta, "beta", "the delta rules");
  LinearAttention la{.query = query, .key = key, .value = value, .past_state = past_state, .decay = decay,
                     .beta = beta, .name = name};
  int64_t Hq = la.Hq = p.q_num_heads, Hkv = la.Hkv = p.kv_num_heads;
  if (Hq <= 0 || Hkv <= 0 || Hq % Hkv != 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attributes q_num_heads (", Hq, ") and kv_num_heads (", Hkv,
                            ") must be positive, q_num_heads a multiple of kv_num_heads"),
                    {"attribute q_num_heads"});
  la.group = Hq / Hkv;

  check_rank(query, "query", 3);
  check_rank(key, "key", 3);
  check_rank(value, "value", 3);
  check_norm_float(query, "query");
  check_same_dtype(query, "query", key, "key");
  check_same_dtype(query, "query", value, "value");
  ir::Expr B = la.B = query.shape()[0], T = la.T = query.shape()[1];
  for (auto [x, input] : {std::pair{&key, "key"}, std::pair{&value, "value"}}) {
    check_same_extent(x->shape()[0], B, str_cat("the batch extents of ", input, " and query"));
    check_same_extent(x->shape()[1], T, str_cat("the sequence extents of ", input, " and query"));
  }
  int64_t qh = linear_attention_const(query.shape()[2], "the last axis of query"),
          kh = linear_attention_const(key.shape()[2], "the last axis of key"),
          vh = linear_attention_const(value.shape()[2], "the last axis of value");
  if (qh % Hq || kh % Hkv || vh % Hkv || qh / Hq != kh / Hkv)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axes of query (", qh, "), key (", kh, ") and value (", vh,
                            ") must split into q_num_heads (", Hq, ") and kv_num_heads (", Hkv,
                            ") heads, query's and key's of one size"),
                    {"input query"});
  int64_t dk = la.dk = qh / Hq, dv = la.dv = vh / Hkv;

  // decay and beta: (B, T, per-head count), the count one of two choices; returns it.
  auto per_step = [&](const te::Tensor& x, const char* input, int64_t one, const char* one_is, int64_t other,
                      const char* other_is) {
    check_rank(x, input, 3);
    check_same_dtype(query, "query", x, input);
    check_same_extent(x.shape()[0], B, str_cat("the batch extents of ", input, " and query"));
    check_same_extent(x.shape()[1], T, str_cat("the sequence extents of ", input, " and query"));
    int64_t last = linear_attention_const(x.shape()[2], str_cat("the last axis of ", input));
    if (last != one && last != other)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axis of ", input, " has extent ", last, ", expected ", one_is, " (", one, ") or ",
                              other_is, " (", other, ")"),
                      {str_cat("input ", input)});
    return last;
  };
  if (gated) la.dg = per_step(decay, "decay", Hkv, "kv_num_heads", Hkv * dk, "kv_num_heads * d_k") / Hkv;
  if (delta) la.betas = per_step(beta, "beta", Hkv, "kv_num_heads", 1, "one for all heads");
  if (past_state.defined()) {
    check_rank(past_state, "past_state", 4);
    check_norm_float(past_state, "past_state");
    const ir::Expr want[] = {B, ir::Expr(Hkv), ir::Expr(dk), ir::Expr(dv)};
    for (size_t d = 0; d < 4; ++d)
      check_same_extent(past_state.shape()[d], want[d],
                        str_cat("axis ", d, " of past_state and of (batch, kv_num_heads, d_k, d_v)"));
  }
  la.t = query.dtype();
  la.ct = norm_compute_type(la.t);
  la.st = past_state.defined() ? past_state.dtype() : la.t;
  la.scale = p.scale != 0.0 ? p.scale : 1.0 / std::sqrt(double(dk));
  return la;
}

// "linear" and "gated" in closed form (see the file comment). Returns {output, present_state}.
inline std::vector<te::Tensor> linear_attention_closed(const LinearAttention& la) {
  const te::Tensor &query = la.query, &key = la.key, &value = la.value, &past_state = la.past_state;
  const std::string& name = la.name;
  ir::Expr B = la.B, T = la.T;
  int64_t Hq = la.Hq, Hkv = la.Hkv, dk = la.dk, dv = la.dv, dg = la.dg;
  bool gated = dg > 0;
  ir::Expr Dk(dk), Dv(dv), Grp(la.group);
  auto load = [&](const te::Tensor& x, ir::Expr b, ir::Expr s, ir::Expr h, ir::Expr d, int64_t hd) {
    return la.load(x, b, s, h, d, hd);
  };

  // G: running sum of decay over time, per batch, key/value head and (per-key decay) key dim.
  te::Tensor G;
  if (gated) {
    auto r = te::reduce_axis(T, "s");
    G = te::compute(
        {B, ir::Expr(Hkv), T, ir::Expr(dg)},
        [&](const std::vector<ir::Var>& v) {
          return ir::Reduce::make(ir::Combiner::sum, load(la.decay, v[0], r.var(), v[1], v[3], dg), {r}, ir::Expr(),
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
  ir::Expr sc = ir::make_const(la.ct, la.scale);

  // A[b, hq, t, s] = scale * sum_j q_t[j] k_s[j] exp(G_t[j] - G_s[j]), zero for s > t.
  auto kj = te::reduce_axis(Dk, "j");
  te::Tensor A = te::compute(
      {B, ir::Expr(Hq), T, T},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], hq = v[1], hk = v[1] / Grp, j = kj.var();
        ir::Expr term = load(query, b, v[2], hq, j, dk) * load(key, b, v[3], hk, j, dk);
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
          ir::Expr term = load(query, b, v[1], hq, j, dk) * ir::cast(la.ct, past_state(b, hk, j, m));
          if (gated) term = term * gate(b, hk, v[1], ir::Expr(), j);
          return te::sum(term * sc, {pj});
        },
        name + "_past");
  }
  auto os = te::reduce_axis(T, "s");
  bool cast_out = la.ct != la.t;
  te::Tensor O = te::compute(
      out_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], hq = v[2] / Dv, m = v[2] % Dv, s = os.var();
        ir::Expr init = P.defined() ? P(b, v[1], v[2]) : ir::Expr();
        return ir::Reduce::make(ir::Combiner::sum, A(b, hq, v[1], s) * load(value, b, s, hq / Grp, m, dv), {os}, init,
                                s <= v[1]);
      },
      cast_out ? name + "_acc" : name);

  // S_T[b, h, j, m] = exp(G_T[j]) S_0[j, m] + sum_s exp(G_T[j] - G_s[j]) k_s[j] v_s[m].
  ir::Expr last = ir::simplify(T - int64_t(1));
  auto ss = te::reduce_axis(T, "s");
  bool cast_state = la.ct != la.st;
  te::Tensor S = te::compute(
      {B, ir::Expr(Hkv), Dk, Dv},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], h = v[1], j = v[2], m = v[3], s = ss.var();
        ir::Expr term = load(key, b, s, h, j, dk) * load(value, b, s, h, m, dv);
        if (gated) term = term * gate(b, h, last, s, j);
        ir::Expr init;
        if (past_state.defined()) {
          init = ir::cast(la.ct, past_state(b, h, j, m));
          if (gated) init = init * gate(b, h, last, ir::Expr(), j);
        }
        return te::sum(term, {ss}, init);
      },
      cast_state ? name + "_present_state_acc" : name + "_present_state");
  return {LinearAttention::rounded(O, la.t, name), LinearAttention::rounded(S, la.st, name + "_present_state")};
}

// "delta" and "gated_delta" as a te::scan over the state (see the file comment). Step t of the
// scan (rows 1..T) consumes input row t - 1. Returns {output, present_state}.
inline std::vector<te::Tensor> linear_attention_scan(const LinearAttention& la) {
  const std::string& name = la.name;
  using V = const std::vector<ir::Var>&;
  ir::Expr B = la.B, T = la.T, steps = ir::simplify(la.T + int64_t(1));
  ir::Expr H(la.Hkv), Dk(la.dk), Dv(la.dv), Grp(la.group), zero(int64_t(0));
  int64_t dk = la.dk, dv = la.dv, dg = la.dg;

  te::Tensor init = te::compute(
      {ir::Expr(int64_t(1)), B, H, Dk, Dv},
      [&](V v) {
        return la.past_state.defined() ? ir::cast(la.ct, la.past_state(v[1], v[2], v[3], v[4])) : ir::make_const(la.ct, 0.0);
      },
      name + "_initial_state");
  te::Tensor state = te::scan_state({steps, B, H, Dk, Dv}, la.ct, name + "_states.state");
  // S' = exp(g_t) S_{t-1} (gated_delta), else S_{t-1}.
  te::Tensor decayed;
  if (dg)
    decayed = te::compute(
        {steps, B, H, Dk, Dv},
        [&](V v) {
          ir::Expr g = la.load(la.decay, v[1], v[0] - 1, v[2], dg == 1 ? zero : ir::Expr(v[3]), dg);
          return state(v[0] - 1, v[1], v[2], v[3], v[4]) * ir::call(ir::CallOp::exp, g);
        },
        name + "_decayed");
  auto prev = [&](ir::Expr t, ir::Expr b, ir::Expr h, ir::Expr j, ir::Expr m) {
    return decayed.defined() ? decayed(t, b, h, j, m) : state(t - 1, b, h, j, m);
  };
  auto rj = te::reduce_axis(Dk, "j");
  te::Tensor recall = te::compute(
      {steps, B, H, Dv},
      [&](V v) {
        return te::sum(prev(v[0], v[1], v[2], rj.var(), v[3]) * la.load(la.key, v[1], v[0] - 1, v[2], rj.var(), dk), {rj});
      },
      name + "_recall");
  te::Tensor delta = te::compute(
      {steps, B, H, Dv},
      [&](V v) {
        ir::Expr beta = la.load(la.beta, v[1], v[0] - 1, la.betas == 1 ? zero : ir::Expr(v[2]), zero, 1);
        return beta * (la.load(la.value, v[1], v[0] - 1, v[2], v[3], dv) - recall(v[0], v[1], v[2], v[3]));
      },
      name + "_delta");
  te::Tensor update = te::compute(
      {steps, B, H, Dk, Dv},
      [&](V v) {
        return prev(v[0], v[1], v[2], v[3], v[4]) +
               la.load(la.key, v[1], v[0] - 1, v[2], v[3], dk) * delta(v[0], v[1], v[2], v[4]);
      },
      name + "_update");
  te::Tensor states = te::scan(init, update, state, name + "_states");

  // o_t = scale q_t^T S_t for every t at once, from rows 1..T.
  auto oj = te::reduce_axis(Dk, "j");
  ir::Expr sc = ir::make_const(la.ct, la.scale);
  te::Tensor O = te::compute(
      {B, T, ir::Expr(la.Hq * dv)},
      [&](V v) {
        ir::Expr hq = v[2] / Dv, m = v[2] % Dv, j = oj.var();
        return te::sum(la.load(la.query, v[0], v[1], hq, j, dk) * states(v[1] + 1, v[0], hq / Grp, j, m) * sc, {oj});
      },
      la.ct != la.t ? name + "_acc" : name);
  te::Tensor present = te::compute(
      {B, H, Dk, Dv}, [&](V v) { return ir::cast(la.st, states(T, v[0], v[1], v[2], v[3])); }, name + "_present_state");
  return {LinearAttention::rounded(O, la.t, name), present};
}
}  // namespace detail

// `past_state`, `decay` and `beta` may be undefined (absent). Returns {output, present_state}.
inline std::vector<te::Tensor> linear_attention(const te::Tensor& query, const te::Tensor& key, const te::Tensor& value,
                                                const te::Tensor& past_state, const te::Tensor& decay,
                                                const te::Tensor& beta, const LinearAttentionParams& p,
                                                const std::string& name = "linear_attention") {
  detail::LinearAttention la = detail::linear_attention_checked(query, key, value, past_state, decay, beta, p, name);
  return la.betas ? detail::linear_attention_scan(la) : detail::linear_attention_closed(la);
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
      .doc = "linear attention, update rules linear and gated (closed form, O(T^2) per head) and delta and gated_delta "
             "(a scan over time), grouped-query heads, past_state; outputs output, present_state",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
