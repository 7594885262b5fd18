// attention: ONNX Attention (scaled dot-product attention, opset 23 with the later additions:
// nonpad_kv_seqlen, offset-aware causal masking, sliding windows, zero rows for fully masked
// queries). Q (B, Hq, Sq, D), K (B, Hkv, Skv, D), V (B, Hkv, Skv, Dv), or 3-D with the heads
// packed in the last axis (B, S, H * D) and attributes q_num_heads / kv_num_heads. Grouped-query:
// query head h reads key/value head h / (Hq / Hkv).
//
// A chain of computes over the present keys/values (past_key/past_value, when given, followed
// by K/V along the sequence axis; L = P + Skv keys):
//   S = (Q K^T) * scale                    (B, Hq, Sq, L), scale default 1/sqrt(D)
//   C = softcap * tanh(S / softcap)        when softcap > 0
//   Z = C + float attn_mask, or C where allowed and -inf elsewhere (bool attn_mask, is_causal,
//       nonpad_kv_seqlen, left/right_window_size)
//   P = softmax(Z) along L (in softmax_precision), a zero row where every key is masked
//   Y = P V
// Outputs: Y, present_key, present_value (the concatenations), qk_matmul_output (S, C, Z or P by
// qk_matmul_output_mode 0..3). float16/bfloat16 inputs compute in float32.
#pragma once

#include <cmath>

#include "nnvm/ops/nn/moments.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct AttentionParams {
  bool is_causal = false;
  std::optional<double> scale;       // default 1 / sqrt(head size)
  int64_t q_num_heads = 0, kv_num_heads = 0;  // 3-D inputs only
  double softcap = 0.0;
  int64_t qk_matmul_output_mode = 0;
  std::optional<DataType> softmax_precision;
  int64_t left_window_size = -1, right_window_size = -1;
};

namespace detail {
inline int64_t attention_const(const ir::Expr& e, const char* what) {
  std::optional<int64_t> c = ir::simplified_const_int(e);
  if (!c) throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent"));
  return *c;
}
}  // namespace detail

inline std::vector<te::Tensor> attention(const te::Tensor& Q, const te::Tensor& K, const te::Tensor& V,
                                         const te::Tensor& mask, const te::Tensor& past_key,
                                         const te::Tensor& past_value, const te::Tensor& nonpad,
                                         const AttentionParams& p, const std::string& name = "attention") {
  check_rank(Q, "Q", 3, 4);
  check_rank(K, "K", Q.rank());
  check_rank(V, "V", Q.rank());
  check_norm_float(Q, "Q");
  check_same_dtype(Q, "Q", K, "K");
  check_same_dtype(Q, "Q", V, "V");
  DataType t = Q.dtype(), ct = norm_compute_type(t);
  DataType st = p.softmax_precision ? norm_compute_type(*p.softmax_precision) : ct;
  bool packed = Q.rank() == 3;
  ir::Expr B = Q.shape()[0], Sq, Skv, D, Dv;
  int64_t Hq, Hkv;
  if (packed) {
    if (p.q_num_heads <= 0 || p.kv_num_heads <= 0)
      throw UserError("nnvm.ops.attr", "3-D Q, K and V need positive attributes q_num_heads and kv_num_heads",
                      {"attribute q_num_heads"});
    Hq = p.q_num_heads, Hkv = p.kv_num_heads;
    int64_t qh = detail::attention_const(Q.shape()[2], "the last axis of Q"),
            kh = detail::attention_const(K.shape()[2], "the last axis of K"),
            vh = detail::attention_const(V.shape()[2], "the last axis of V");
    if (qh % Hq || kh % Hkv || vh % Hkv || qh / Hq != kh / Hkv)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axes of Q (", qh, "), K (", kh, ") and V (", vh, ") must split into q_num_heads (",
                              Hq, ") and kv_num_heads (", Hkv, ") heads, Q's and K's of one size"),
                      {"input Q"});
    Sq = Q.shape()[1], Skv = K.shape()[1], D = ir::Expr(qh / Hq), Dv = ir::Expr(vh / Hkv);
  } else {
    Hq = detail::attention_const(Q.shape()[1], "the head axis of Q");
    Hkv = detail::attention_const(K.shape()[1], "the head axis of K");
    check_same_extent(K.shape()[1], V.shape()[1], "the head counts of K and V");
    check_same_extent(Q.shape()[3], K.shape()[3], "the head sizes of Q and K");
    Sq = Q.shape()[2], Skv = K.shape()[2], D = Q.shape()[3], Dv = V.shape()[3];
  }
  if (Hq % Hkv != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the ", Hq, " query heads must be a multiple of the ", Hkv, " key/value heads"), {"input K"});
  int64_t group = Hq / Hkv;
  for (auto* x : {&K, &V}) check_same_extent((*x).shape()[0], B, "the batch extents of Q, K and V");
  check_same_extent(K.shape()[packed ? 1 : 2], V.shape()[packed ? 1 : 2], "the sequence lengths of K and V");

  if (past_key.defined() != past_value.defined())
    throw UserError("nnvm.ops.input_count", "past_key and past_value must be given together",
                    {past_key.defined() ? "input past_value" : "input past_key"});
  ir::Expr P = ir::Expr(int64_t(0));
  if (past_key.defined()) {
    check_rank(past_key, "past_key", 4);
    check_rank(past_value, "past_value", 4);
    check_same_dtype(Q, "Q", past_key, "past_key");
    check_same_dtype(Q, "Q", past_value, "past_value");
    const ir::Expr want_k[] = {B, ir::Expr(Hkv), past_key.shape()[2], D}, want_v[] = {B, ir::Expr(Hkv), past_key.shape()[2], Dv};
    for (size_t d = 0; d < 4; ++d) {
      check_same_extent(past_key.shape()[d], want_k[d], str_cat("axis ", d, " of past_key and of the keys"));
      check_same_extent(past_value.shape()[d], want_v[d], str_cat("axis ", d, " of past_value and of the values"));
    }
    P = past_key.shape()[2];
  }
  ir::Expr L = ir::simplify(P + Skv);
  if (nonpad.defined()) {
    check_rank(nonpad, "nonpad_kv_seqlen", 1);
    if (nonpad.dtype() != dtype::int64)
      throw UserError("nnvm.ops.input_dtype", str_cat("input nonpad_kv_seqlen is ", nonpad.dtype(), ", expected int64"),
                      {"input nonpad_kv_seqlen"});
    check_same_extent(nonpad.shape()[0], B, "the extent of nonpad_kv_seqlen and the batch of Q");
  }
  // The mask broadcasts to (B, Hq, Sq, L) from the right; its key axis may be shorter than L
  // (keys past its end are masked: ONNX requires it to cover every non-padding key).
  ir::Expr mask_len;
  bool bool_mask = false;
  if (mask.defined()) {
    check_rank(mask, "attn_mask", 2, 4);
    bool_mask = mask.dtype().is_bool();
    if (!bool_mask) check_same_dtype(Q, "Q", mask, "attn_mask");
    const ir::Expr full[] = {B, ir::Expr(Hq), Sq, L};
    for (size_t d = 0; d + 1 < mask.rank(); ++d) {
      const ir::Expr& e = mask.shape()[d];
      if (!ir::is_const_int(ir::simplify(e), 1) && !same_extent(e, full[4 - mask.rank() + d]))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("attn_mask axis ", d, " has extent ", ir::to_string(e), "; it must be 1 or ",
                                ir::to_string(full[4 - mask.rank() + d])),
                        {"input attn_mask"});
    }
    mask_len = mask.shape().back();
    auto ml = ir::simplified_const_int(mask_len);
    auto* lc = ir::as_const_int(L);
    if (!same_extent(mask_len, L) && !(ml && lc && *ml <= *lc))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axis of attn_mask has extent ", ir::to_string(mask_len),
                              "; it must not exceed the ", ir::to_string(L), " keys"),
                      {"input attn_mask"});
  }
  if (p.qk_matmul_output_mode < 0 || p.qk_matmul_output_mode > 3)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'qk_matmul_output_mode' is ", p.qk_matmul_output_mode, " but must be 0, 1, 2 or 3"),
                    {"attribute qk_matmul_output_mode"});

  ir::Expr zero = ir::Expr(int64_t(0)), one = ir::Expr(int64_t(1));
  // Reads of the unpacked 4-D views of Q, K and V.
  auto head_read = [&](const te::Tensor& x, ir::Expr b, ir::Expr h, ir::Expr s, ir::Expr d, const ir::Expr& hd) {
    return packed ? x(b, s, h * hd + d) : x(b, h, s, d);
  };
  // present = past followed by new, along the sequence axis; the reads are clamped so the branch
  // not taken stays in bounds.
  auto present = [&](const te::Tensor& past, const te::Tensor& x, const ir::Expr& hd, const std::string& n) {
    return te::compute(
        {B, ir::Expr(Hkv), L, hd},
        [&](const std::vector<ir::Var>& v) {
          if (!past.defined()) return head_read(x, v[0], v[1], v[2], v[3], hd);
          ir::Expr from_x = head_read(x, v[0], v[1], ir::max(v[2] - P, zero), v[3], hd);
          return ir::select(v[2] < P, past(v[0], v[1], ir::min(ir::Expr(v[2]), P - one), v[3]), from_x);
        },
        n);
  };
  te::Tensor pk = present(past_key, K, D, name + "_present_key");
  te::Tensor pv = present(past_value, V, Dv, name + "_present_value");

  double scale = p.scale ? *p.scale : 1.0 / std::sqrt(double(detail::attention_const(D, "the head size of Q")));
  auto kd = te::reduce_axis(D, "d");
  std::vector<ir::Expr> scores_shape = {B, ir::Expr(Hq), Sq, L};
  auto all = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>(v.begin(), v.end()); };
  te::Tensor S = te::compute(
      scores_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr q = ir::cast(ct, head_read(Q, v[0], v[1], v[2], kd.var(), D));
        ir::Expr k = ir::cast(ct, pk(v[0], v[1] / ir::Expr(group), v[3], kd.var()));
        return te::sum(q * k * ir::make_const(ct, scale), {kd});
      },
      name + "_qk");
  te::Tensor C = S;
  if (p.softcap > 0.0)
    C = te::compute(
        scores_shape,
        [&](const std::vector<ir::Var>& v) {
          ir::Expr cap = ir::make_const(ct, p.softcap);
          return cap * ir::call(ir::CallOp::tanh, S(all(v)) / cap);
        },
        name + "_softcap");
  bool restricted = bool_mask || p.is_causal || nonpad.defined() || p.left_window_size >= 0 ||
                    p.right_window_size >= 0 || (mask.defined() && !same_extent(mask_len, L));
  te::Tensor Z = C;
  if (mask.defined() || restricted)
    Z = te::compute(
        scores_shape,
        [&](const std::vector<ir::Var>& v) {
          ir::Expr z = C(all(v));
          ir::Expr j = v[3], allowed;
          auto both = [&](ir::Expr c) { allowed = allowed.defined() ? (allowed && c) : c; };
          if (mask.defined()) {
            std::vector<ir::Expr> idx;
            for (size_t d = 0; d < mask.rank(); ++d)
              idx.push_back(ir::is_const_int(ir::simplify(mask.shape()[d]), 1) ? zero : ir::Expr(v[4 - mask.rank() + d]));
            if (!same_extent(mask_len, L)) {
              both(j < mask_len);
              idx.back() = ir::min(j, mask_len - one);
            }
            if (bool_mask) both(mask(idx));
            else z = z + ir::cast(ct, mask(idx));
          }
          // Offset of the query block: the past length, or the non-padding keys after the queries.
          ir::Expr offset = P;
          if (nonpad.defined()) {
            ir::Expr valid = ir::cast(dtype::index, nonpad(v[0]));
            both(j < valid);
            if (!past_key.defined()) offset = valid - Sq;
          }
          ir::Expr pos = v[2] + offset;
          if (p.is_causal) both(j <= pos);
          if (p.left_window_size >= 0) both(j >= pos - ir::Expr(p.left_window_size));
          if (p.right_window_size >= 0) both(j <= pos + ir::Expr(p.right_window_size));
          if (allowed.defined()) z = ir::select(allowed, z, ir::make_const(ct, -INFINITY));
          return z;
        },
        name + "_bias");

  // Softmax along the keys; a row whose every key is masked sums to 0 and becomes a zero row.
  auto km = te::reduce_axis(L, "j");
  std::vector<ir::Expr> row_shape = {B, ir::Expr(Hq), Sq, one};
  auto row = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>{v[0], v[1], v[2], int64_t(0)}; };
  te::Tensor mx = te::compute(
      row_shape, [&](const std::vector<ir::Var>& v) { return te::max_reduce(ir::cast(st, Z(v[0], v[1], v[2], km.var())), {km}); },
      name + "_max");
  te::Tensor ex = te::compute(
      scores_shape,
      [&](const std::vector<ir::Var>& v) { return ir::call(ir::CallOp::exp, ir::cast(st, Z(all(v))) - mx(row(v))); },
      name + "_exp");
  auto ks = te::reduce_axis(L, "j");
  te::Tensor sm = te::compute(
      row_shape, [&](const std::vector<ir::Var>& v) { return te::sum(ex(v[0], v[1], v[2], ks.var()), {ks}); },
      name + "_sum");
  te::Tensor prob = te::compute(
      scores_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr s = sm(row(v));
        return ir::select(s > ir::make_zero(st), ex(all(v)) / s, ir::make_zero(st));
      },
      name + "_softmax");

  auto kv = te::reduce_axis(L, "j");
  std::vector<ir::Expr> y_shape = packed ? std::vector<ir::Expr>{B, Sq, ir::simplify(ir::Expr(Hq) * Dv)}
                                         : std::vector<ir::Expr>{B, ir::Expr(Hq), Sq, Dv};
  te::Tensor Yacc = te::compute(
      y_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], h = packed ? v[2] / Dv : ir::Expr(v[1]), s = packed ? ir::Expr(v[1]) : ir::Expr(v[2]),
                 d = packed ? v[2] % Dv : ir::Expr(v[3]);
        ir::Expr pr = ir::cast(ct, prob(b, h, s, kv.var()));
        return te::sum(pr * ir::cast(ct, pv(b, h / ir::Expr(group), kv.var(), d)), {kv});
      },
      name + "_pv");
  te::Tensor Y = Yacc;
  if (ct != t)
    Y = te::compute(y_shape, [&](const std::vector<ir::Var>& v) { return ir::cast(t, Yacc(all(v))); }, name);
  const te::Tensor modes[] = {S, C, Z, prob};
  const te::Tensor& chosen = modes[p.qk_matmul_output_mode];
  te::Tensor qk = te::compute(
      scores_shape, [&](const std::vector<ir::Var>& v) { return ir::cast(t, chosen(all(v))); },
      name + "_qk_matmul_output");
  return {Y, pk, pv, qk};
}

inline OpDef attention_def() {
  return OpDef{
      .name = "attention",
      .importer_names = {"onnx:Attention"},
      .input_names = {"Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"},
      .optional_inputs = 4,
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            AttentionParams p;
            p.is_causal = attrs.get_int("is_causal", 0) != 0;
            if (attrs.has("scale")) p.scale = attrs.get_float("scale");
            p.q_num_heads = attrs.get_int("q_num_heads", 0);
            p.kv_num_heads = attrs.get_int("kv_num_heads", 0);
            p.softcap = attrs.get_float("softcap", 0.0);
            p.qk_matmul_output_mode = attrs.get_int("qk_matmul_output_mode", 0);
            if (attrs.has("softmax_precision")) {
              DataType sp = attrs.get_dtype("softmax_precision");
              if (!sp.is_float())
                throw UserError("nnvm.ops.attr", str_cat("attribute 'softmax_precision' is ", sp, ", expected a float type"),
                                {"attribute softmax_precision"});
              p.softmax_precision = sp;
            }
            p.left_window_size = attrs.get_int("left_window_size", -1);
            p.right_window_size = attrs.get_int("right_window_size", -1);
            auto opt = [&](size_t i) { return i < in.size() ? in[i] : te::Tensor(); };
            return attention(in[0], in[1], in[2], opt(3), opt(4), opt(5), opt(6), p);
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "softmax(Q K^T * scale + mask) V with grouped-query heads, KV cache, causal/window masks, softcap; "
             "outputs Y, present_key, present_value, qk_matmul_output",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
