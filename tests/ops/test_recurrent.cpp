// rnn, gru and lstm (include/nnvm/ops/nn/rnn.hpp, gru.hpp, lstm.hpp) through the interpreter,
// the C JIT and LLVM (when built), against a plain reference here: per direction and batch
// element, the sequence is walked in time order (or reversed within its own length), the gates
// computed with nested loops in double. Each op in each direction, sequence_lens shorter than T,
// layout 1, clip, non-default activations (with activation_alpha/beta, per direction),
// initial states, peepholes, input_forget, linear_before_reset, float64, float16; sequences of 600
// and 700 steps (one scan, no unrolling); the C JIT at 512, 256 and 128-bit vectors; the ONNX
// node tests read from the stored test data when the suite is present; the microcontroller and
// GPU recipes (the scan as one kernel of one block); then the error ids.
#include "support/pch.hpp"
#include "support/onnx_test_data.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <filesystem>
#include <functional>

namespace ops_recurrent {

using namespace nnvm;
using nnvm_test::infer_error;
using nnvm_test::OpCheck;

namespace {

using Dims = std::vector<int64_t>;
using T = ops::TensorType;
const DataType f32 = dtype::float32, f64 = dtype::float64;

double get(const NDArray& a, int64_t i) { return nnvm_test::detail::element(a, i); }
void put(NDArray& a, int64_t i, double v) {
  if (a.dtype() == f32)
    a.data<float>()[i] = float(v);
  else if (a.dtype() == f64)
    a.data<double>()[i] = v;
  else
    a.values<float16>()[i] = float16(float(v));
}
NDArray filled(DataType t, Dims s, int64_t seed, double scale = 1.0) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) put(a, i, (double((i * 37 + seed * 101 + 11) % 23) / 22.0 - 0.5) * scale);
  return a;
}
NDArray lens(Dims v) {
  std::vector<int32_t> x(v.begin(), v.end());
  return NDArray::from(x, {int64_t(x.size())});
}

// The reference's view of the attributes.
struct Spec {
  std::string op;  // rnn, gru, lstm
  std::string direction = "forward";
  int64_t layout = 0;
  double clip = 0;                  // 0: none
  std::vector<std::string> acts;    // empty: defaults; else per * D names
  std::vector<double> alpha, beta;  // consumed by the functions that take them
  bool lbr = false, input_forget = false;
};

using Fn = std::function<double(double)>;
Fn function(const std::string& n, double a, double b) {
  if (n == "Relu") return [](double x) { return x > 0 ? x : 0; };
  if (n == "Tanh") return [](double x) { return std::tanh(x); };
  if (n == "Sigmoid") return [](double x) { return 1 / (1 + std::exp(-x)); };
  if (n == "Affine") return [=](double x) { return a * x + b; };
  if (n == "LeakyRelu") return [=](double x) { return x >= 0 ? x : a * x; };
  if (n == "ThresholdedRelu") return [=](double x) { return x >= a ? x : 0; };
  if (n == "ScaledTanh") return [=](double x) { return a * std::tanh(b * x); };
  if (n == "HardSigmoid") return [=](double x) { return std::min(std::max(a * x + b, 0.0), 1.0); };
  if (n == "Elu") return [=](double x) { return x >= 0 ? x : a * (std::exp(x) - 1); };
  if (n == "Softsign") return [](double x) { return x / (1 + std::abs(x)); };
  if (n == "Softplus") return [](double x) { return std::log(1 + std::exp(x)); };
  throw std::runtime_error("no reference activation " + n);
}

// Inputs in ONNX order (nullopt where left out); returns Y, Y_h (and Y_c for lstm).
std::vector<NDArray> reference(const Spec& sp, const std::vector<std::optional<NDArray>>& in) {
  const NDArray &X = *in[0], &W = *in[1], &R = *in[2];
  auto opt = [&](size_t i) { return i < in.size() && in[i] ? &*in[i] : nullptr; };
  const NDArray *B = opt(3), *SL = opt(4), *H0 = opt(5), *C0 = opt(6), *P = opt(7);
  int64_t G = sp.op == "rnn" ? 1 : sp.op == "gru" ? 3 : 4, per = sp.op == "rnn" ? 1 : sp.op == "gru" ? 2 : 3;
  int64_t D = sp.direction == "bidirectional" ? 2 : 1;
  int64_t Tn = X.shape()[sp.layout ? 1 : 0], N = X.shape()[sp.layout ? 0 : 1], I = X.shape()[2], H = R.shape()[2];
  std::vector<std::string> names = sp.acts;
  if (names.empty()) {
    std::vector<std::string> defaults = sp.op == "rnn"   ? std::vector<std::string>{"Tanh"}
                                        : sp.op == "gru" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                         : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < D; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  std::vector<Fn> fns;
  size_t ai = 0, bi = 0;
  for (auto& n : names) {
    bool ua = n == "Affine" || n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" || n == "HardSigmoid" ||
              n == "Elu";
    bool ub = n == "Affine" || n == "ScaledTanh" || n == "HardSigmoid";
    double a = n == "LeakyRelu"     ? 0.01
               : n == "HardSigmoid" ? 0.2
                                    : 1.0,
           b = n == "HardSigmoid" ? 0.5
               : n == "Affine"    ? 0
                                  : 1.0;
    if (ua && ai < sp.alpha.size()) a = sp.alpha[ai++];
    if (ub && bi < sp.beta.size()) b = sp.beta[bi++];
    fns.push_back(function(n, a, b));
  }
  auto cl = [&](double x) { return sp.clip > 0 ? std::min(std::max(x, -sp.clip), sp.clip) : x; };
  auto x_at = [&](int64_t t, int64_t b, int64_t k) {
    return get(X, sp.layout ? (b * Tn + t) * I + k : (t * N + b) * I + k);
  };
  auto st_at = [&](int64_t d, int64_t b) { return sp.layout ? (b * D + d) * H : (d * N + b) * H; };
  NDArray Y(X.dtype(), sp.layout ? Dims{N, Tn, D, H} : Dims{Tn, D, N, H}),
      Yh(X.dtype(), sp.layout ? Dims{N, D, H} : Dims{D, N, H});
  NDArray Yc = Yh;
  for (int64_t i = 0; i < Y.numel(); ++i) put(Y, i, 0);
  for (int64_t d = 0; d < D; ++d) {
    bool rev = sp.direction == "reverse" || d == 1;
    const Fn &f = fns[size_t(d * per)], &g = fns[size_t(d * per + std::min<int64_t>(1, per - 1))],
             &hf = fns[size_t(d * per + per - 1)];
    for (int64_t b = 0; b < N; ++b) {
      int64_t L = SL ? int64_t(get(*SL, b)) : Tn;
      std::vector<double> h(size_t(H), 0), c(size_t(H), 0);
      for (int64_t j = 0; j < H; ++j) {
        if (H0) h[size_t(j)] = get(*H0, st_at(d, b) + j);
        if (C0) c[size_t(j)] = get(*C0, st_at(d, b) + j);
      }
      for (int64_t step = 0; step < L; ++step) {
        int64_t t = rev ? L - 1 - step : step;
        // xw[row] = X_t W^T + Wb; hr[row] = h R^T + Rb, row in [0, G*H).
        std::vector<double> xw(size_t(G * H)), hr(size_t(G * H));
        for (int64_t row = 0; row < G * H; ++row) {
          double s = B ? get(*B, d * 2 * G * H + row) : 0, q = B ? get(*B, d * 2 * G * H + G * H + row) : 0;
          for (int64_t k = 0; k < I; ++k) s += x_at(t, b, k) * get(W, (d * G * H + row) * I + k);
          for (int64_t k = 0; k < H; ++k) q += h[size_t(k)] * get(R, (d * G * H + row) * H + k);
          xw[size_t(row)] = s, hr[size_t(row)] = q;
        }
        std::vector<double> nh(static_cast<size_t>(H)), nc = c;
        for (int64_t j = 0; j < H; ++j) {
          size_t u = size_t(j);
          if (sp.op == "rnn") {
            nh[u] = f(cl(xw[u] + hr[u]));
          } else if (sp.op == "gru") {
            double z = f(cl(xw[u] + hr[u])), r = f(cl(xw[u + size_t(H)] + hr[u + size_t(H)]));
            double pre;
            if (sp.lbr) {
              pre = xw[u + 2 * size_t(H)] + r * hr[u + 2 * size_t(H)];
            } else {
              // (r . h) Rh^T + Rbh, with r per hidden unit k.
              double q = B ? get(*B, d * 6 * H + 5 * H + j) : 0;
              for (int64_t k = 0; k < H; ++k) {
                double rk = f(cl(xw[size_t(H + k)] + hr[size_t(H + k)]));
                q += rk * h[size_t(k)] * get(R, (d * 3 * H + 2 * H + j) * H + k);
              }
              pre = xw[u + 2 * size_t(H)] + q;
            }
            double hh = g(cl(pre));
            nh[u] = (1 - z) * hh + z * h[u];
          } else {
            auto pp = [&](int64_t k) { return P ? get(*P, d * 3 * H + k * H + j) : 0.0; };
            double i = f(cl(xw[u] + hr[u] + pp(0) * c[u]));
            double fg = sp.input_forget ? 1 - i : f(cl(xw[u + 2 * size_t(H)] + hr[u + 2 * size_t(H)] + pp(2) * c[u]));
            double cc = g(cl(xw[u + 3 * size_t(H)] + hr[u + 3 * size_t(H)]));
            nc[u] = fg * c[u] + i * cc;
            double o = f(cl(xw[u + size_t(H)] + hr[u + size_t(H)] + pp(1) * nc[u]));
            nh[u] = o * hf(nc[u]);
          }
        }
        h = nh, c = nc;
        for (int64_t j = 0; j < H; ++j)
          put(Y, (sp.layout ? ((b * Tn + t) * D + d) : ((t * D + d) * N + b)) * H + j, h[size_t(j)]);
      }
      for (int64_t j = 0; j < H; ++j) put(Yh, st_at(d, b) + j, h[size_t(j)]), put(Yc, st_at(d, b) + j, c[size_t(j)]);
    }
  }
  if (sp.op == "lstm") return {Y, Yh, Yc};
  return {Y, Yh};
}

ops::Attrs attrs_of(const Spec& sp, int64_t hidden) {
  ops::Attrs a;
  a.set_int("hidden_size", hidden);
  if (sp.direction != "forward") a.set_string("direction", sp.direction);
  if (sp.layout) a.set_int("layout", sp.layout);
  if (sp.clip > 0) a.set_float("clip", sp.clip);
  if (!sp.acts.empty()) {
    std::string s;
    for (auto& n : sp.acts) s += (s.empty() ? "" : ",") + n;
    a.set_string("activations", s);
  }
  if (!sp.alpha.empty()) a.set_floats("activation_alpha", sp.alpha);
  if (!sp.beta.empty()) a.set_floats("activation_beta", sp.beta);
  if (sp.lbr) a.set_int("linear_before_reset", 1);
  if (sp.input_forget) a.set_int("input_forget", 1);
  return a;
}

struct Sizes {
  int64_t T = 4, N = 3, I = 2, H = 3;
  DataType t = f32;
};
// Which optional inputs a case gives.
struct Given {
  bool B = false, seq = false, h0 = false, c0 = false, P = false;
  Dims seq_lens = {};
};

OpCheck make_case(std::string label, const Spec& sp, Sizes z, Given g) {
  int64_t G = sp.op == "rnn" ? 1 : sp.op == "gru" ? 3 : 4, D = sp.direction == "bidirectional" ? 2 : 1;
  std::vector<std::optional<NDArray>> in;
  in.push_back(filled(z.t, sp.layout ? Dims{z.N, z.T, z.I} : Dims{z.T, z.N, z.I}, 1, 2.0));
  in.push_back(filled(z.t, {D, G * z.H, z.I}, 2));
  in.push_back(filled(z.t, {D, G * z.H, z.H}, 3));
  Dims st = sp.layout ? Dims{z.N, D, z.H} : Dims{D, z.N, z.H};
  std::vector<std::optional<NDArray>> opt = {
      g.B ? std::optional(filled(z.t, {D, 2 * G * z.H}, 4)) : std::nullopt,
      g.seq ? std::optional(lens(g.seq_lens)) : std::nullopt,
      g.h0 ? std::optional(filled(z.t, st, 5)) : std::nullopt,
      g.c0 ? std::optional(filled(z.t, st, 6)) : std::nullopt,
      g.P ? std::optional(filled(z.t, {D, 3 * z.H}, 7)) : std::nullopt,
  };
  in.insert(in.end(), opt.begin(), opt.end());
  while (in.size() > 3 && !in.back()) in.pop_back();
  std::vector<NDArray> want = reference(sp, in);
  double tol = z.t == f64 ? 1e-10 : z.t == f32 ? 1e-4 : 3e-3;
  return {std::move(label), sp.op, in, attrs_of(sp, z.H), want, tol, tol};
}

}  // namespace

TEST_CASE("rnn: against the reference loop") {
  std::vector<OpCheck> cases;
  Spec fwd{.op = "rnn"}, rev{.op = "rnn", .direction = "reverse"}, bi{.op = "rnn", .direction = "bidirectional"};
  cases.push_back(make_case("forward, X W R only", fwd, {}, {}));
  cases.push_back(make_case("forward, B and initial_h", fwd, {}, {.B = true, .h0 = true}));
  cases.push_back(make_case("reverse, B", rev, {}, {.B = true}));
  cases.push_back(
      make_case("bidirectional, all inputs", bi, {}, {.B = true, .seq = true, .h0 = true, .seq_lens = {4, 2, 3}}));
  cases.push_back(make_case("forward, sequence_lens", fwd, {}, {.B = true, .seq = true, .seq_lens = {1, 4, 2}}));
  cases.push_back(
      make_case("reverse, sequence_lens and initial_h", rev, {}, {.seq = true, .h0 = true, .seq_lens = {3, 1, 4}}));
  Spec l1 = bi;
  l1.layout = 1;
  cases.push_back(make_case("layout 1, bidirectional, sequence_lens", l1, {},
                            {.B = true, .seq = true, .h0 = true, .seq_lens = {2, 4, 3}}));
  Spec relu{.op = "rnn", .clip = 0.3, .acts = {"Relu"}};
  cases.push_back(make_case("Relu, clip 0.3", relu, {}, {.B = true}));
  Spec two{.op = "rnn",
           .direction = "bidirectional",
           .acts = {"LeakyRelu", "ScaledTanh"},
           .alpha = {0.2, 0.7},
           .beta = {1.5}};
  cases.push_back(make_case("per-direction LeakyRelu / ScaledTanh with alpha, beta", two, {}, {.B = true, .h0 = true}));
  cases.push_back(make_case("T 1, batch 1", fwd, {.T = 1, .N = 1}, {.B = true}));
  cases.push_back(make_case("float64, 9 steps", rev, {.T = 9, .t = f64},
                            {.B = true, .seq = true, .h0 = true, .seq_lens = {9, 5, 0}}));
  nnvm_test::check_ops(cases, "rnn_ref");
}

TEST_CASE("gru: against the reference loop") {
  std::vector<OpCheck> cases;
  Spec fwd{.op = "gru"}, rev{.op = "gru", .direction = "reverse"}, bi{.op = "gru", .direction = "bidirectional"};
  Spec lbr = fwd;
  lbr.lbr = true;
  cases.push_back(make_case("forward, X W R only", fwd, {}, {}));
  cases.push_back(make_case("forward, B and initial_h", fwd, {}, {.B = true, .h0 = true}));
  cases.push_back(make_case("linear_before_reset", lbr, {}, {.B = true, .h0 = true}));
  cases.push_back(make_case("reverse, sequence_lens", rev, {}, {.B = true, .seq = true, .seq_lens = {2, 4, 1}}));
  Spec bl = bi;
  bl.lbr = true;
  cases.push_back(make_case("bidirectional, linear_before_reset, all inputs", bl, {},
                            {.B = true, .seq = true, .h0 = true, .seq_lens = {3, 4, 2}}));
  cases.push_back(make_case("bidirectional", bi, {.H = 4}, {.B = true, .h0 = true}));
  Spec l1 = fwd;
  l1.layout = 1;
  cases.push_back(
      make_case("layout 1, sequence_lens", l1, {}, {.B = true, .seq = true, .h0 = true, .seq_lens = {4, 3, 1}}));
  Spec acts{.op = "gru", .clip = 0.4, .acts = {"HardSigmoid", "Softsign"}, .alpha = {0.3}, .beta = {0.4}};
  cases.push_back(make_case("HardSigmoid / Softsign, clip 0.4", acts, {}, {.B = true, .h0 = true}));
  Spec acts2{
      .op = "gru", .direction = "bidirectional", .acts = {"Sigmoid", "Elu", "Sigmoid", "Softplus"}, .alpha = {0.5}};
  cases.push_back(make_case("per-direction Elu / Softplus", acts2, {}, {.B = true}));
  cases.push_back(make_case("float16 computes in float32", bi, {.t = dtype::float16},
                            {.B = true, .seq = true, .h0 = true, .seq_lens = {1, 3, 4}}));
  nnvm_test::check_ops(cases, "gru_ref");
}

TEST_CASE("lstm: against the reference loop") {
  std::vector<OpCheck> cases;
  Spec fwd{.op = "lstm"}, rev{.op = "lstm", .direction = "reverse"}, bi{.op = "lstm", .direction = "bidirectional"};
  cases.push_back(make_case("forward, X W R only", fwd, {}, {}));
  cases.push_back(make_case("forward, B, initial_h, initial_c", fwd, {}, {.B = true, .h0 = true, .c0 = true}));
  cases.push_back(make_case("peepholes", fwd, {}, {.B = true, .h0 = true, .c0 = true, .P = true}));
  cases.push_back(make_case("peepholes without sequence_lens or states", fwd, {}, {.P = true}));
  cases.push_back(
      make_case("reverse, sequence_lens", rev, {}, {.B = true, .seq = true, .c0 = true, .seq_lens = {3, 1, 4}}));
  cases.push_back(make_case("bidirectional, everything", bi, {},
                            {.B = true, .seq = true, .h0 = true, .c0 = true, .P = true, .seq_lens = {2, 4, 3}}));
  Spec l1 = bi;
  l1.layout = 1;
  cases.push_back(make_case("layout 1, bidirectional", l1, {},
                            {.B = true, .seq = true, .h0 = true, .c0 = true, .P = true, .seq_lens = {4, 1, 2}}));
  Spec fi = fwd;
  fi.input_forget = true;
  cases.push_back(make_case("input_forget", fi, {}, {.B = true, .c0 = true, .P = true}));
  Spec cl{.op = "lstm",
          .clip = 0.25,
          .acts = {"HardSigmoid", "Affine", "ThresholdedRelu"},
          .alpha = {0.3, 0.5, 0.1},
          .beta = {0.4, 0.2}};
  cases.push_back(
      make_case("HardSigmoid / Affine / ThresholdedRelu, clip", cl, {}, {.B = true, .h0 = true, .c0 = true}));
  Spec two{
      .op = "lstm", .direction = "bidirectional", .acts = {"Sigmoid", "Tanh", "Tanh", "Sigmoid", "Softsign", "Relu"}};
  cases.push_back(make_case("per-direction activations", two, {}, {.B = true, .h0 = true}));
  cases.push_back(make_case("float64, 7 steps, wide", rev, {.T = 7, .N = 2, .I = 5, .H = 6, .t = f64},
                            {.B = true, .seq = true, .P = true, .seq_lens = {7, 3}}));
  // On a GPU a step's 2 * 2 * 4 * 40 gate products are more than one block of threads.
  cases.push_back(make_case("bidirectional, H 40", bi, {.T = 5, .N = 2, .H = 40},
                            {.B = true, .seq = true, .h0 = true, .c0 = true, .P = true, .seq_lens = {5, 2}}));
  nnvm_test::check_ops(cases, "lstm_ref");
}

TEST_CASE("recurrent: long sequences, one loop over time") {
  // The time loop is a scan, so T is not bounded (the unrolled version stopped at 512).
  std::vector<OpCheck> cases;
  cases.push_back(make_case("rnn, T 600", {.op = "rnn", .direction = "bidirectional"}, {.T = 600, .N = 2, .H = 3},
                            {.B = true, .seq = true, .h0 = true, .seq_lens = {600, 431}}));
  cases.push_back(make_case("gru, T 600", {.op = "gru", .direction = "reverse"}, {.T = 600, .N = 2, .H = 3},
                            {.B = true, .seq = true, .seq_lens = {599, 17}}));
  cases.push_back(make_case("lstm, T 700, layout 1", {.op = "lstm", .layout = 1}, {.T = 700, .N = 2, .H = 4},
                            {.B = true, .seq = true, .h0 = true, .c0 = true, .P = true, .seq_lens = {700, 350}}));
  nnvm_test::check_ops(cases, "recurrent_long");
}

TEST_CASE("recurrent: the C JIT at every vector width") {
  // schedule_recurrent vectorizes the gate epilogue along H: H = 5 leaves a tail at every width.
  for (const char* cpu : {"x86-64-v4", "x86-64-v3", "x86-64-v2"}) {
    target::Target t = target::Target::for_cpu(target::Emitter::c, cpu);
    if (!t.runs_here()) {
      MESSAGE(cpu, " does not run on this machine; skipped");
      continue;
    }
    for (const char* op : {"rnn", "gru", "lstm"}) {
      CAPTURE(cpu);
      CAPTURE(op);
      Spec sp{.op = op, .direction = "bidirectional"};
      OpCheck c = make_case(cpu, sp, {.T = 6, .N = 2, .H = 5},
                            {.B = true, .seq = true, .h0 = true, .c0 = sp.op == "lstm", .seq_lens = {6, 3}});
      std::vector<T> types;
      for (auto& x : c.inputs) types.push_back(x ? T(x->dtype(), x->shape()) : T::none());
      ops::BuiltOp built = ops::build(ops::get_op(op), types, c.attrs, t);
      CHECK(ir::to_string(built.func).find("vectorized") != std::string::npos);
      target::CJitOptions options;
      options.cpu = t.cpu;
      auto kernel = target::jit_c(built.func, options);
      std::vector<NDArray> got;
      std::vector<BufferView> views;
      for (size_t i : built.kernel_inputs) views.push_back(c.inputs[i]->view());
      for (auto& w : c.want) got.emplace_back(w.dtype(), w.shape());
      for (auto& g : got) views.push_back(g.view());
      kernel(std::span<const BufferView>(views));
      for (size_t o = 0; o < got.size(); ++o) CHECK(nnvm_test::detail::compare_arrays(got[o], c.want[o], 1e-4, 1e-5) == "");
    }
  }
}

TEST_CASE("recurrent: the ONNX node tests") {
  std::filesystem::path suite = nnvm_test::onnx_node_suite();
  if (suite.empty()) {
    MESSAGE("ONNX node tests not found; skipped");
    return;
  }
  struct Node {
    const char* name;
    const char* op;
    int64_t layout;
    std::vector<int> outputs;  // which op outputs the stored outputs are (0 Y, 1 Y_h)
  };
  const Node nodes[] = {
      {"test_simple_rnn_batchwise", "rnn", 1, {0, 1}},
      {"test_simple_rnn_defaults", "rnn", 0, {1}},
      {"test_simple_rnn_with_initial_bias", "rnn", 0, {1}},
      {"test_rnn_seq_length", "rnn", 0, {1}},
      {"test_gru_batchwise", "gru", 1, {0, 1}},
      {"test_gru_defaults", "gru", 0, {1}},
      {"test_gru_seq_length", "gru", 0, {1}},
      {"test_gru_with_initial_bias", "gru", 0, {1}},
      {"test_lstm_batchwise", "lstm", 1, {0, 1}},
      {"test_lstm_defaults", "lstm", 0, {1}},
      {"test_lstm_with_initial_bias", "lstm", 0, {1}},
      {"test_lstm_with_peepholes", "lstm", 0, {1}},
  };
  std::vector<OpCheck> cases;
  for (const Node& n : nodes) {
    std::filesystem::path dir = suite / n.name / "test_data_set_0";
    REQUIRE(std::filesystem::is_directory(dir));
    std::vector<std::optional<NDArray>> in;
    for (int k = 0; std::filesystem::exists(dir / str_cat("input_", k, ".pb")); ++k)
      in.push_back(nnvm_test::read_tensor_proto(dir / str_cat("input_", k, ".pb")));
    Spec sp{.op = n.op, .layout = n.layout};
    std::vector<NDArray> want = reference(sp, in);
    // The reference agrees with the stored outputs; the stored ones are what the op must give.
    for (size_t o = 0; o < n.outputs.size(); ++o) {
      NDArray stored = nnvm_test::read_tensor_proto(dir / str_cat("output_", o, ".pb"));
      INFO(n.name, " output ", o);
      CHECK(nnvm_test::detail::compare_arrays(want[size_t(n.outputs[o])], stored, 1e-4, 1e-5) == "");
      want[size_t(n.outputs[o])] = stored;
    }
    ops::Attrs a;
    a.set_int("hidden_size", in[2]->shape()[2]);
    if (n.layout) a.set_int("layout", 1);
    cases.push_back({n.name, n.op, in, a, want, 1e-4, 1e-5});
  }
  nnvm_test::check_ops(cases, "recurrent_node");
}

TEST_CASE("recurrent: the microcontroller recipe keeps the states' buffers") {
  // Optimizing for size, call-free internal stages are computed where they are read; the states
  // are the scan's rows, so a state read twice by the next step is never recomputed.
  target::Target mcu = target::parse_target("c-standalone -mcpu=cortex-m4");
  mcu.opt_for = target::OptFor::size;
  Spec gru{.op = "gru", .acts = {"HardSigmoid", "Relu"}}, lstm{.op = "lstm", .acts = {"HardSigmoid", "Affine", "Relu"}},
      rnn{.op = "rnn", .direction = "bidirectional", .acts = {"Relu", "LeakyRelu"}};
  for (const Spec& sp : {gru, lstm, rnn}) {
    CAPTURE(sp.op);
    OpCheck c = make_case("mcu", sp, {.T = 24, .N = 2, .H = 2},
                          {.B = true, .seq = true, .P = sp.op == "lstm", .seq_lens = {24, 7}});
    std::vector<T> types;
    for (auto& x : c.inputs) types.push_back(x ? T(x->dtype(), x->shape()) : T::none());
    ops::BuiltOp built = ops::build(ops::get_op(sp.op), types, c.attrs, mcu);
    CHECK(ir::to_string(built.func).size() < 2000000);
    std::vector<NDArray> got;
    std::vector<BufferView> views;
    for (size_t i : built.kernel_inputs) views.push_back(c.inputs[i]->view());
    for (auto& w : c.want) got.emplace_back(w.dtype(), w.shape());
    for (auto& g : got) views.push_back(g.view());
    target::interpret(built.func, std::span<const BufferView>(views));
    for (size_t o = 0; o < got.size(); ++o)
      CHECK(nnvm_test::detail::compare_arrays(got[o], c.want[o], 1e-4, 1e-5) == "");
  }
}

TEST_CASE("recurrent: the GPU recipe") {
  // The generic GPU recipe binds every stage (the scan's to the threads of one block); the
  // interpreter runs the bound loops serially.
  Spec sp{.op = "lstm", .direction = "bidirectional"};
  OpCheck c =
      make_case("gpu", sp, {}, {.B = true, .seq = true, .h0 = true, .c0 = true, .P = true, .seq_lens = {2, 4, 3}});
  std::vector<T> types;
  for (auto& x : c.inputs) types.push_back(x ? T(x->dtype(), x->shape()) : T::none());
  ops::BuiltOp built = ops::build(ops::get_op("lstm"), types, c.attrs, target::parse_target("cuda -arch=sm_90"));
  std::vector<NDArray> got;
  std::vector<BufferView> views;
  for (size_t i : built.kernel_inputs) views.push_back(c.inputs[i]->view());
  for (auto& w : c.want) got.emplace_back(w.dtype(), w.shape());
  for (auto& g : got) views.push_back(g.view());
  target::interpret(built.func, std::span<const BufferView>(views));
  for (size_t o = 0; o < got.size(); ++o) CHECK(nnvm_test::detail::compare_arrays(got[o], c.want[o], 1e-4, 1e-5) == "");
  // The scan is one kernel of one block (ops::gpu_schedule_scan): the steps loop inside it, the
  // body in shared memory, barriers that fence global memory; T changes no kernel count.
  const target::Target opencl = target::parse_target("opencl");
  auto program = [&](int64_t steps) {
    OpCheck k = make_case("gpu", sp, {.T = steps}, {.B = true, .c0 = true});
    std::vector<T> ts;
    for (auto& x : k.inputs) ts.push_back(x ? T(x->dtype(), x->shape()) : T::none());
    return target::emit_gpu({ops::build(ops::get_op("lstm"), ts, k.attrs, opencl).func}, opencl);
  };
  target::GpuProgram p4 = program(4), p64 = program(64);
  CHECK(p4.modules[0].kernels.size() == p64.modules[0].kernels.size());
  int scans = 0;
  for (auto& k : p64.modules[0].kernels)
    if (k.shared_bytes > 0) {
      ++scans;
      CHECK(k.launch.blocks() == 1);
      CHECK(k.launch.threads_per_block() == 2 * 3 * 4 * 3);  // D N 4H: the recurrent product's row
    }
  CHECK(scans == 1);
  CHECK(p64.source.find("for (long lstm_h_t = 0; lstm_h_t < 64; ++lstm_h_t)") != std::string::npos);
  CHECK(p64.source.find("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);") != std::string::npos);
}

TEST_CASE("recurrent: shapes and error ids") {
  auto X = [](Dims s) { return T(f32, s); };
  ops::Attrs none;
  auto out = ops::infer_types(ops::get_op("lstm"), {X({5, 2, 3}), X({2, 16, 3}), X({2, 16, 4})},
                              ops::Attrs().set_string("direction", "bidirectional"));
  REQUIRE(out.size() == 3);
  CHECK(ir::to_string(out[0].shape[0]) == "5");
  CHECK(ir::to_string(out[0].shape[1]) == "2");
  CHECK(ir::to_string(out[2].shape[2]) == "4");
  out = ops::infer_types(ops::get_op("gru"), {X({2, 5, 3}), X({1, 12, 3}), X({1, 12, 4})},
                         ops::Attrs().set_int("layout", 1));
  REQUIRE(out.size() == 2);
  CHECK(ir::to_string(out[0].shape[0]) == "2");  // [N, T, D, H]
  CHECK(ir::to_string(out[0].shape[1]) == "5");
  CHECK(ops::get_op_by_importer_name("onnx:RNN").name == "rnn");
  CHECK(ops::get_op_by_importer_name("onnx:GRU").name == "gru");
  CHECK(ops::get_op_by_importer_name("onnx:LSTM").name == "lstm");

  auto rnn = [&](std::vector<T> in, ops::Attrs a = {}) { return infer_error("rnn", in, a); };
  std::vector<T> ok = {X({4, 2, 3}), X({1, 5, 3}), X({1, 5, 5})};
  CHECK(rnn(ok) == "(no error)");
  CHECK(rnn({X({4, 2, 3}), X({1, 5, 2}), X({1, 5, 5})}) == "nnvm.ops.input_shape");             // W's input size
  CHECK(rnn({X({4, 2, 3}), X({2, 5, 3}), X({1, 5, 5})}) == "nnvm.ops.input_shape");             // W's directions
  CHECK(rnn({X({4, 2, 3}), X({1, 5, 3}), X({1, 5, 4})}) == "nnvm.ops.input_shape");             // R
  CHECK(rnn({X({4, 2, 3}), X({1, 5, 3}), X({1, 5, 5}), X({1, 5})}) == "nnvm.ops.input_shape");  // B
  CHECK(rnn({X({4, 2, 3}), X({1, 5, 3}), X({1, 5, 5}), T::none(), T(dtype::int32, {3})}) == "nnvm.ops.input_shape");
  CHECK(rnn({X({4, 2, 3}), X({1, 5, 3}), X({1, 5, 5}), T::none(), T(f32, {2})}) == "nnvm.ops.input_dtype");
  CHECK(rnn({X({4, 2, 3}), X({1, 5, 3}), X({1, 5, 5}), T::none(), T::none(), X({1, 3, 5})}) == "nnvm.ops.input_shape");
  CHECK(rnn({T(dtype::int32, {4, 2, 3}), X({1, 5, 3}), X({1, 5, 5})}) == "nnvm.ops.input_dtype");
  CHECK(rnn({X({4, 2}), X({1, 5, 3}), X({1, 5, 5})}) == "nnvm.ops.input_shape");
  CHECK(rnn({X({513, 2, 3}), X({1, 5, 3}), X({1, 5, 5})}) == "(no error)");  // any length: one loop over time
  ir::Var tv("t"), nv("n");
  CHECK(rnn({T(f32, std::vector<ir::Expr>{tv, ir::Expr(int64_t(2)), ir::Expr(int64_t(3))}), X({1, 5, 3}),
             X({1, 5, 5})}) == "nnvm.ops.input_shape");  // T must be constant
  CHECK(rnn({T(f32, std::vector<ir::Expr>{ir::Expr(int64_t(4)), nv, ir::Expr(int64_t(3))}), X({1, 5, 3}),
             X({1, 5, 5})}) == "(no error)");  // a symbolic batch is fine
  CHECK(rnn(ok, ops::Attrs().set_string("activations", "Gelu")) == "nnvm.ops.attr");
  CHECK(rnn(ok, ops::Attrs().set_string("activations", "Tanh,Tanh")) == "nnvm.ops.attr");  // one per direction
  CHECK(rnn(ok, ops::Attrs().set_string("activations", "relu")) == "(no error)");          // case-insensitive
  CHECK(rnn(ok, ops::Attrs().set_string("direction", "sideways")) == "nnvm.ops.attr");
  CHECK(rnn(ok, ops::Attrs().set_int("layout", 2)) == "nnvm.ops.attr");
  CHECK(rnn(ok, ops::Attrs().set_int("hidden_size", 4)) == "nnvm.ops.attr");
  CHECK(rnn(ok, ops::Attrs().set_float("clip", -1)) == "nnvm.ops.attr");
  CHECK(rnn(ok, ops::Attrs().set_int("linear_before_reset", 1)) == "nnvm.ops.attr");
  CHECK(infer_error("lstm", {X({4, 2, 3}), X({1, 20, 3}), X({1, 20, 5})},
                    ops::Attrs().set_int("linear_before_reset", 1)) == "nnvm.ops.attr");
  CHECK(infer_error("lstm", {X({4, 2, 3}), X({1, 15, 3}), X({1, 15, 5})}) == "nnvm.ops.input_shape");  // 3 gates, not 4
  CHECK(infer_error("lstm", {X({4, 2, 3}), X({1, 20, 3}), X({1, 20, 5}), T::none(), T::none(), T::none(), T::none(),
                             X({1, 10})}) == "nnvm.ops.input_shape");  // P
  CHECK(infer_error("gru", {X({4, 2, 3}), X({1, 15, 3}), X({1, 15, 5})},
                    ops::Attrs().set_string("activations", "Sigmoid")) == "nnvm.ops.attr");
  CHECK(infer_error("gru", {X({4, 2, 3}), X({1, 15, 3}), X({1, 15, 5})}, ops::Attrs().set_int("input_forget", 1)) ==
        "nnvm.ops.attr");
  // The refusals name the input or attribute.
  auto context_of = [](auto&& f) {
    try {
      f();
    } catch (const UserError& e) {
      std::string all;
      for (auto& c : e.context()) all += c + ";";
      return all;
    }
    return std::string("(no error)");
  };
  CHECK(context_of([&] {
          ops::infer_types(ops::get_op("rnn"), {X({4, 2, 3}), X({1, 5, 2}), X({1, 5, 5})});
        }).find("input W") != std::string::npos);
  CHECK(context_of([&] {
          ops::infer_types(ops::get_op("rnn"), {X({4, 2}), X({1, 5, 3}), X({1, 5, 5})});
        }).find("input X") != std::string::npos);
  CHECK(context_of([&] {
          ops::infer_types(ops::get_op("rnn"), ok, ops::Attrs().set_string("activations", "Gelu"));
        }).find("attribute activations") != std::string::npos);
  (void)none;
}

}  // namespace ops_recurrent
