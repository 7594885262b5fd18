// What ONNX's recurrent ops RNN, GRU and LSTM (rnn.hpp, gru.hpp, lstm.hpp) share: the attributes
// (direction, layout, hidden_size, clip, activations with activation_alpha/beta), the input
// checks, the activation functions, the scan's scaffolding and their CPU schedule.
//
// Shapes (ONNX; G gates: RNN 1, GRU 3, LSTM 4; D directions: 2 when bidirectional, else 1):
//   X [T, N, I] (layout 1: [N, T, I]), W [D, G*H, I], R [D, G*H, H], B [D, 2*G*H] (Wb then Rb),
//   sequence_lens [N] int32/int64, initial_h (and LSTM's initial_c) [D, N, H] (layout 1: [N, D, H])
//   Y [T, D, N, H] (layout 1: [N, T, D, H]), Y_h (Y_c) [D, N, H] (layout 1: [N, D, H]).
//
// The time loop is one te::scan (te/scan.hpp) over the states [T + 1, D, N, H] (h, and c for
// LSTM, in one scan): row 0 is the initial state, row u the state after step u - 1. X W^T for
// every step is one stage at the root ("<name>_xw", [D, T, N, G*H]); the scan's body, run once
// per step, is the recurrent product h_{u-1} R^T (a reduction over H) and the gate epilogue that
// writes row u. Both directions of a bidirectional op are one scan: direction d of step s reads
// time s (forward) or T-1-s (reverse). With sequence_lens, batch b is active at time t <
// sequence_lens[b]: at other times its state does not change and its Y is 0. For the reverse
// direction this is the same as reversing each sequence within its own length (what onnxruntime
// does): the state stays the initial one until time sequence_lens[b] - 1 is reached. So row T is
// the state after each batch's last valid step: Y_h (and Y_c). T is a constant of any size.
//
// Activations: the attribute `activations` is the ONNX list of names joined with ',' (the ONNX
// importer joins a STRINGS attribute so), e.g. "Sigmoid,Tanh,Tanh", one set per direction (or one
// set for both). activation_alpha / activation_beta are consumed in order by the activations that
// take them (onnxruntime's rule); a function past the end of a list gets its default (LeakyRelu
// 0.01, ThresholdedRelu 1, ScaledTanh 1 1, HardSigmoid 0.2 0.5, Elu 1, Affine 1 0). `clip` bounds
// the gates' pre-activations (not the cell state that LSTM's h reads).
#pragma once

#include <cmath>

#include "nnvm/ops/nn/moments.hpp"
#include "nnvm/ops/schedule_cpu.hpp"
#include "nnvm/te/scan.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct RecurrentActivation {
  std::string name;  // canonical ONNX spelling
  double alpha = 0, beta = 0;
};

struct RecurrentParams {
  std::string direction = "forward";
  int64_t layout = 0;
  std::optional<int64_t> hidden_size;
  std::optional<double> clip;
  std::string activations;  // names joined with ','; empty: the op's defaults
  std::vector<double> activation_alpha, activation_beta;
  bool linear_before_reset = false;  // GRU
  bool input_forget = false;         // LSTM
};

inline RecurrentParams recurrent_params(const Attrs& attrs) {
  RecurrentParams p;
  p.direction = attrs.get_string("direction", "forward");
  p.layout = attrs.get_int("layout", 0);
  if (attrs.has("hidden_size")) p.hidden_size = attrs.get_int("hidden_size");
  if (attrs.has("clip")) p.clip = attrs.get_float("clip");
  p.activations = attrs.get_string("activations", "");
  p.activation_alpha = attrs.get_floats("activation_alpha", {});
  p.activation_beta = attrs.get_floats("activation_beta", {});
  p.linear_before_reset = attrs.get_int("linear_before_reset", 0) != 0;
  p.input_forget = attrs.get_int("input_forget", 0) != 0;
  return p;
}

namespace recurrent_detail {

[[noreturn]] inline void bad_attr(const char* attr, const std::string& why) {
  throw UserError("nnvm.ops.attr", str_cat("attribute '", attr, "' ", why), {str_cat("attribute ", attr)});
}
[[noreturn]] inline void bad_shape(const char* input, const std::string& why) {
  throw UserError("nnvm.ops.input_shape", str_cat("input ", input, " ", why), {str_cat("input ", input)});
}

// The activations of every direction, `per` per direction: parsed, checked, alpha/beta filled.
inline std::vector<RecurrentActivation> parse_activations(const RecurrentParams& p, size_t per, size_t dirs,
                                                          const std::vector<std::string>& defaults) {
  std::vector<std::string> names;
  if (p.activations.empty()) {
    for (size_t d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else {
    for (size_t at = 0;;) {
      size_t comma = p.activations.find(',', at);
      names.push_back(p.activations.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
    if (dirs == 2 && names.size() == per) names.insert(names.end(), names.begin(), names.end());
    if (names.size() != per * dirs)
      bad_attr("activations",
               str_cat("lists ", names.size(), " functions, expected ", per * dirs, " (", per, " per direction)"));
  }
  static const char* const known[] = {
      "Relu",       "Tanh",        "Sigmoid", "Affine",   "LeakyRelu", "ThresholdedRelu",
      "ScaledTanh", "HardSigmoid", "Elu",     "Softsign", "Softplus"};
  auto lower = [](std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::vector<RecurrentActivation> out;
  size_t ai = 0, bi = 0;
  for (auto& n : names) {
    RecurrentActivation a;
    for (const char* k : known)
      if (lower(n) == lower(k)) a.name = k;
    if (a.name.empty())
      bad_attr("activations", str_cat("names '", n,
                                      "', which is not one of Relu, Tanh, Sigmoid, Affine, LeakyRelu, "
                                      "ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus"));
    bool uses_alpha = a.name == "Affine" || a.name == "LeakyRelu" || a.name == "ThresholdedRelu" ||
                      a.name == "ScaledTanh" || a.name == "HardSigmoid" || a.name == "Elu";
    bool uses_beta = a.name == "Affine" || a.name == "ScaledTanh" || a.name == "HardSigmoid";
    a.alpha = a.name == "LeakyRelu" ? 0.01 : a.name == "HardSigmoid" ? 0.2 : 1.0;
    a.beta = a.name == "HardSigmoid" ? 0.5 : a.name == "Affine" ? 0.0 : 1.0;
    if (uses_alpha && ai < p.activation_alpha.size()) a.alpha = p.activation_alpha[ai++];
    if (uses_beta && bi < p.activation_beta.size()) a.beta = p.activation_beta[bi++];
    out.push_back(std::move(a));
  }
  return out;
}

inline ir::Expr apply_activation(const RecurrentActivation& a, const ir::Expr& x) {
  DataType t = x.dtype();
  auto c = [&](double v) { return ir::make_const(t, v); };
  const std::string& n = a.name;
  if (n == "Relu") return ir::max(x, c(0));
  if (n == "Tanh") return ir::call(ir::CallOp::tanh, x);
  if (n == "Sigmoid") return ir::call(ir::CallOp::sigmoid, x);
  if (n == "Affine") return c(a.alpha) * x + c(a.beta);
  if (n == "LeakyRelu") return ir::select(x >= c(0), x, c(a.alpha) * x);
  if (n == "ThresholdedRelu") return ir::select(x >= c(a.alpha), x, c(0));  // ">=" as the RNN spec writes it
  if (n == "ScaledTanh") return c(a.alpha) * ir::call(ir::CallOp::tanh, c(a.beta) * x);
  if (n == "HardSigmoid") return ir::min(ir::max(c(a.alpha) * x + c(a.beta), c(0)), c(1));
  if (n == "Elu") return ir::select(x >= c(0), x, c(a.alpha) * ir::call(ir::CallOp::expm1, x));
  if (n == "Softsign") return x / (c(1) + ir::call(ir::CallOp::abs, x));
  // Softplus: log(1 + e^x) without overflow for large x.
  return ir::max(x, c(0)) + ir::call(ir::CallOp::log1p, ir::call(ir::CallOp::exp, -ir::call(ir::CallOp::abs, x)));
}

inline bool same_activation(const RecurrentActivation& a, const RecurrentActivation& b) {
  return a.name == b.name && a.alpha == b.alpha && a.beta == b.beta;
}

}  // namespace recurrent_detail

// The checked inputs and the scan helpers of one recurrent op. Index conventions: d the
// direction, s the step, u = s + 1 the row of the states a step writes, b the batch, j the
// hidden unit; gate g's rows of W/R/B start at g * H.
struct Recurrence {
  te::Tensor X, W, R, B, seq_lens, initial_h;
  RecurrentParams p;
  std::string name;
  DataType t, ct;  // input type, compute type
  int64_t T = 0, D = 1, G = 1;
  ir::Expr N, I, H;
  bool reverse = false, bidirectional = false;
  std::vector<RecurrentActivation> acts;  // per * D
  size_t per = 1;
  te::Tensor xw;  // [D, T, N, G*H]: X at step s's time times W^T

  Recurrence(const std::vector<te::Tensor>& in, const Attrs& attrs, int64_t gates,
             const std::vector<std::string>& default_acts, std::string op_name)
      : p(recurrent_params(attrs)), name(std::move(op_name)), G(gates) {
    using namespace recurrent_detail;
    auto opt = [&](size_t i) { return i < in.size() ? in[i] : te::Tensor(); };
    X = in[0], W = in[1], R = in[2], B = opt(3), seq_lens = opt(4), initial_h = opt(5);
    if (p.direction == "reverse")
      reverse = true;
    else if (p.direction == "bidirectional")
      bidirectional = true, D = 2;
    else if (p.direction != "forward")
      bad_attr("direction", str_cat("is '", p.direction, "' but must be forward, reverse or bidirectional"));
    if (p.layout != 0 && p.layout != 1) bad_attr("layout", str_cat("is ", p.layout, " but must be 0 or 1"));
    if (p.clip && !(*p.clip > 0)) bad_attr("clip", str_cat("is ", *p.clip, " but must be positive"));
    per = default_acts.size();
    acts = parse_activations(p, per, size_t(D), default_acts);

    check_rank(X, "X", 3);
    check_rank(W, "W", 3);
    check_rank(R, "R", 3);
    t = X.dtype();
    if (t != dtype::float16 && t != dtype::bfloat16 && t != dtype::float32 && t != dtype::float64)
      throw UserError(
          "nnvm.ops.input_dtype",
          str_cat("input X (tensor ", X.name(), ") is ", t, ", expected float16, bfloat16, float32 or float64"),
          {"input X"});
    ct = norm_compute_type(t);
    check_same_dtype(X, "X", W, "W");
    check_same_dtype(X, "X", R, "R");
    ir::Expr Te = X.shape()[p.layout == 0 ? 0 : 1];
    N = X.shape()[p.layout == 0 ? 1 : 0];
    I = X.shape()[2];
    std::optional<int64_t> tc = ir::simplified_const_int(Te);
    if (!tc) bad_shape("X", str_cat("(tensor ", X.name(), ") has sequence length ", ir::to_string(Te), "; it must be a constant"));
    T = *tc;
    H = R.shape()[2];
    if (p.hidden_size && !same_extent(H, ir::Expr(*p.hidden_size)))
      bad_attr("hidden_size", str_cat("is ", *p.hidden_size, " but R has hidden size ", ir::to_string(H)));
    ir::Expr GH = ir::simplify(ir::Expr(G) * H);
    auto want = [&](const te::Tensor& x, const char* input, std::vector<ir::Expr> shape) {
      bool ok = x.rank() == shape.size();
      for (size_t k = 0; ok && k < shape.size(); ++k) ok = same_extent(x.shape()[k], shape[k]);
      if (ok) return;
      std::string got, exp;
      for (auto& e : x.shape()) got += (got.empty() ? "" : ", ") + ir::to_string(e);
      for (auto& e : shape) exp += (exp.empty() ? "" : ", ") + ir::to_string(ir::simplify(e));
      bad_shape(input, str_cat("(tensor ", x.name(), ") has shape [", got, "], expected [", exp, "]"));
    };
    want(W, "W", {ir::Expr(D), GH, I});
    want(R, "R", {ir::Expr(D), GH, H});
    if (B.defined()) {
      check_same_dtype(X, "X", B, "B");
      want(B, "B", {ir::Expr(D), ir::simplify(GH * int64_t(2))});
    }
    if (seq_lens.defined()) {
      if (seq_lens.dtype() != dtype::int32 && seq_lens.dtype() != dtype::int64)
        throw UserError("nnvm.ops.input_dtype",
                        str_cat("input sequence_lens is ", seq_lens.dtype(), ", expected int32"),
                        {"input sequence_lens"});
      want(seq_lens, "sequence_lens", {N});
    }
    check_state(initial_h, "initial_h");

    auto k = te::reduce_axis(I, "k");
    xw = te::compute(
        {ir::Expr(D), ir::Expr(T), N, GH},
        [&](const std::vector<ir::Var>& v) {
          ir::Expr x = ir::cast(ct, x_at(time(v[0], v[1]), v[2], k.var()));
          return te::sum(x * ir::cast(ct, W(v[0], v[3], k.var())), {k});
        },
        name + "_xw");
  }

  // "nnvm.ops.input_shape" unless `x` (if given) is a [D, N, H] state ([N, D, H] in layout 1).
  void check_state(const te::Tensor& x, const char* input) const {
    if (!x.defined()) return;
    check_same_dtype(X, "X", x, input);
    std::vector<ir::Expr> s =
        p.layout == 0 ? std::vector<ir::Expr>{ir::Expr(D), N, H} : std::vector<ir::Expr>{N, ir::Expr(D), H};
    bool ok = x.rank() == 3;
    for (size_t k = 0; ok && k < 3; ++k) ok = same_extent(x.shape()[k], s[k]);
    if (!ok)
      recurrent_detail::bad_shape(input, str_cat("(tensor ", x.name(), ") must have shape [", ir::to_string(s[0]), ", ",
                                                 ir::to_string(s[1]), ", ", ir::to_string(s[2]), "]"));
  }

  // 1 for a direction that runs backwards in time, else 0 (an index expression).
  ir::Expr rev(const ir::Expr& d) const {
    if (bidirectional) return d;
    return ir::Expr(int64_t(reverse ? 1 : 0));
  }
  // The time step s of direction d reads.
  ir::Expr time(const ir::Expr& d, const ir::Expr& s) const {
    return ir::simplify(s + rev(d) * (ir::Expr(T - 1) - s * int64_t(2)));
  }
  ir::Expr x_at(const ir::Expr& time, const ir::Expr& b, const ir::Expr& k) const {
    return p.layout == 0 ? X(time, b, k) : X(b, time, k);
  }
  // Whether batch b takes part at `time`; undefined without sequence_lens.
  ir::Expr active(const ir::Expr& time, const ir::Expr& b) const {
    if (!seq_lens.defined()) return {};
    return time < ir::cast(dtype::index, seq_lens(b));
  }
  // Wb + Rb of gate row `row` (in [0, G*H)), or 0.
  ir::Expr bias(const ir::Expr& d, const ir::Expr& row) const {
    if (!B.defined()) return ir::make_zero(ct);
    return ir::cast(ct, B(d, row)) + ir::cast(ct, B(d, row + G * H));
  }
  ir::Expr bias_w(const ir::Expr& d, const ir::Expr& row) const {
    return B.defined() ? ir::cast(ct, B(d, row)) : ir::make_zero(ct);
  }
  ir::Expr bias_r(const ir::Expr& d, const ir::Expr& row) const {
    return B.defined() ? ir::cast(ct, B(d, row + G * H)) : ir::make_zero(ct);
  }
  ir::Expr clip(const ir::Expr& x) const {
    if (!p.clip) return x;
    return ir::min(ir::max(x, ir::make_const(ct, -*p.clip)), ir::make_const(ct, *p.clip));
  }
  // Activation `which` (0 = f, 1 = g, 2 = h) of direction d applied to the clipped-or-not x.
  ir::Expr act(size_t which, const ir::Expr& d, const ir::Expr& x) const {
    const RecurrentActivation& a0 = acts[which];
    if (D == 1 || recurrent_detail::same_activation(a0, acts[per + which]))
      return recurrent_detail::apply_activation(a0, x);
    return ir::select(d == int64_t(0), recurrent_detail::apply_activation(a0, x),
                      recurrent_detail::apply_activation(acts[per + which], x));
  }
  // An initial state in [D, N, H] order, in the compute type; 0 when not given.
  ir::Expr initial(const te::Tensor& x, const ir::Expr& d, const ir::Expr& b, const ir::Expr& j) const {
    if (!x.defined()) return ir::make_zero(ct);
    return ir::cast(ct, p.layout == 0 ? x(d, b, j) : x(b, d, j));
  }
  // The scan's states: [T + 1, D, N, H] (rows 0..T), and its per-step stages over [T + 1, D, N, cols].
  std::vector<ir::Expr> scan_shape(const ir::Expr& cols) const { return {ir::Expr(T + 1), ir::Expr(D), N, cols}; }
  te::Tensor state(const std::string& n) const { return te::scan_state(scan_shape(H), ct, n); }
  // Row 0 of a state: `x` in [D, N, H] order (zeros when not given), [1, D, N, H].
  te::Tensor initial_state(const te::Tensor& x, const std::string& n) const {
    return te::compute(
        {ir::Expr(int64_t(1)), ir::Expr(D), N, H},
        [&](const std::vector<ir::Var>& v) { return initial(x, v[1], v[2], v[3]); }, n);
  }
  // X_t W^T of gate row `row` at the time the step writing row u reads.
  ir::Expr xw_at(const ir::Expr& d, const ir::Expr& u, const ir::Expr& b, const ir::Expr& row) const {
    return xw(d, u - int64_t(1), b, row);
  }
  // [T + 1, D, N, gates * H], row u: sum_k h(u - back, d, b, k) R[d, first_gate * H + j, k]. With
  // h a state and back 1 it is h_{u-1} R^T; with a per-step stage and back 0, that stage's row.
  te::Tensor recurrent_product(const te::Tensor& h, int64_t back, int64_t first_gate, int64_t gates,
                               const std::string& n) const {
    auto k = te::reduce_axis(H, "k");
    return te::compute(
        scan_shape(ir::simplify(ir::Expr(gates) * H)),
        [&](const std::vector<ir::Var>& v) {
          ir::Expr row = ir::Expr(v[3]) + ir::Expr(first_gate) * H;
          return te::sum(h(v[0] - back, v[1], v[2], k.var()) * ir::cast(ct, R(v[1], row, k.var())), {k});
        },
        n);
  }
  // A state's row u: `next` where batch b is active at the time step u - 1 reads, else `prev`.
  ir::Expr keep(const ir::Expr& d, const ir::Expr& u, const ir::Expr& b, ir::Expr next, ir::Expr prev) const {
    ir::Expr on = active(time(d, u - int64_t(1)), b);
    return on.defined() ? ir::select(on, std::move(next), std::move(prev)) : std::move(next);
  }

  // Y from the scan hs ([T + 1, D, N, H]): Y at time t of direction d is the state its step at
  // that time wrote (row time(d, t) + 1), 0 where inactive.
  te::Tensor output_y(const te::Tensor& hs) const {
    std::vector<ir::Expr> shape = p.layout == 0 ? std::vector<ir::Expr>{ir::Expr(T), ir::Expr(D), N, H}
                                                : std::vector<ir::Expr>{N, ir::Expr(T), ir::Expr(D), H};
    return te::compute(
        shape,
        [&](const std::vector<ir::Var>& v) {
          ir::Expr tm = p.layout == 0 ? v[0] : v[1], d = p.layout == 0 ? v[1] : v[2], b = p.layout == 0 ? v[2] : v[0];
          ir::Expr y = hs(time(d, tm) + int64_t(1), d, b, v[3]), on = active(tm, b);  // time() is its own inverse
          if (on.defined()) y = ir::select(on, y, ir::make_zero(ct));
          return ir::cast(t, y);
        },
        name + "_Y");
  }
  // Y_h / Y_c: the last row of the scan hs, in the layout's order.
  te::Tensor output_state(const te::Tensor& hs, const std::string& n) const {
    std::vector<ir::Expr> shape = p.layout == 0 ? std::vector<ir::Expr>{ir::Expr(D), N, H} : std::vector<ir::Expr>{N, ir::Expr(D), H};
    return te::compute(
        shape,
        [&](const std::vector<ir::Var>& v) {
          ir::Expr last(T);
          return p.layout == 0 ? ir::cast(t, hs(last, v[0], v[1], v[2])) : ir::cast(t, hs(last, v[1], v[0], v[2]));
        },
        n);
  }
};

// The CPU schedule of the recurrent ops: the stages at the root (X W^T, Y, Y_h) as
// schedule_stages does; the scan's per-step body stays on one thread (a step of a small batch is
// too little work to hand to the thread pool T times), its gate epilogue vectorized along the
// hidden units.
inline void schedule_recurrent(schedule::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  for (auto& t : te::post_order(outputs)) {
    if (t.op().kind != te::OpKind::compute) continue;
    schedule::Stage st = s[t];
    if (!st.node().scan_body) {
      if (!t.op().reduce_axes.empty()) schedule_reduction(st, target);
      else schedule_injective(st, target);
      continue;
    }
    int lanes = target.vector_lanes(t.dtype());
    if (t.op().reduce_axes.empty() && lanes > 1) st.vectorize(st.split(t.op().axis.back(), lanes).second);
  }
}

}  // namespace ops
NNVM_END_NAMESPACE
