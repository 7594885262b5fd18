// te::scan: recurrences lowered as one serial loop over the steps, checked against plain loops
// on the interpreter and the C JIT (and the LLVM JIT when it is built), under several schedules
// of the per-step body; bad reads of the state and bad schedules of the step axis fail by id.
// Scans of several states (one step loop, one output per state): two states that read each
// other, states of different shapes, an LSTM cell (c's new row read by h's update), each output
// alone or both as the kernel's outputs, and mismatched states by id.
#include "support/pch.hpp"
#include "support/schedule_harness.hpp"

namespace te_scan {

using namespace nnvm;
using nnvm_test::OpCase;
using nnvm_test::ScheduleVariant;
using schedule::Schedule;
using ir::Expr;

namespace {

template <class F>
std::string expect_error(const std::string& id, F&& f) {
  auto [got, message] = nnvm_test::error_of(f);
  CHECK_MESSAGE(got == id, got, ": ", message);
  return message;
}

const ScheduleVariant unscheduled{"default", [](Schedule&) {}};

// out[t, j] = sum over s <= t of X[s, j]: init is row 0 of X, each step adds row t.
struct Cumsum {
  int64_t T = 6, N = 5;
  te::Tensor X = te::placeholder({T, N}, dtype::float32, "X");
  te::Tensor state = te::scan_state({T, N}, dtype::float32, "cs.state");
  te::Tensor init = te::compute({1, N}, [&](auto& v) { return X(v[0], v[1]); }, "first");
  te::Tensor update = te::compute({T, N}, [&](auto& v) { return state(v[0] - 1, v[1]) + X(v[0], v[1]); }, "next");
  te::Tensor out = te::scan(init, update, state, "cs");

  OpCase op_case() const {
    return {"cumsum", {X}, out, [this](const std::vector<NDArray>& in) {
              auto x = in[0].values<float>();
              std::vector<float> want(size_t(T * N));
              for (int64_t t = 0; t < T; ++t)
                for (int64_t j = 0; j < N; ++j) want[size_t(t * N + j)] = x[size_t(t * N + j)] + (t ? want[size_t((t - 1) * N + j)] : 0.f);
              return want;
            }};
  }
};

// A one-layer tanh RNN, h_t = tanh(x_t W^T + h_{t-1} R^T + b): the input projection xw for all
// steps at the root, the recurrent matvec rec and the activation step per step.
struct Rnn {
  int64_t T = 7, B = 2, I = 3, H = 5;
  te::Tensor X = te::placeholder({T, B, I}, dtype::float32, "X");
  te::Tensor W = te::placeholder({H, I}, dtype::float32, "W");
  te::Tensor R = te::placeholder({H, H}, dtype::float32, "R");
  te::Tensor bias = te::placeholder({H}, dtype::float32, "bias");
  te::Tensor h0 = te::placeholder({1, B, H}, dtype::float32, "h0");
  ir::IterVar i = te::reduce_axis(I, "i"), r = te::reduce_axis(H, "r");
  te::Tensor xw = te::compute(
      {T, B, H}, [&](auto& v) { return te::sum(X(v[0], v[1], i.var()) * W(v[2], i.var()), {i}); }, "xw", {"t", "b", "h"});
  te::Tensor state = te::scan_state({T, B, H}, dtype::float32, "h.state");
  te::Tensor rec = te::compute(
      {T, B, H}, [&](auto& v) { return te::sum(state(v[0] - 1, v[1], r.var()) * R(v[2], r.var()), {r}); }, "rec",
      {"t", "b", "h"});
  te::Tensor step = te::compute(
      {T, B, H}, [&](auto& v) { return ir::call(ir::CallOp::tanh, xw(v[0], v[1], v[2]) + rec(v[0], v[1], v[2]) + bias(v[2])); },
      "step", {"t", "b", "h"});
  te::Tensor out = te::scan(h0, step, state, "h");

  OpCase op_case() const {
    OpCase c{"rnn", {X, W, R, bias, h0}, out, [this](const std::vector<NDArray>& in) {
               auto x = in[0].values<float>(), w = in[1].values<float>(), rr = in[2].values<float>();
               auto b = in[3].values<float>(), h = in[4].values<float>();
               std::vector<float> want(size_t(T * B * H));
               for (int64_t n = 0; n < B * H; ++n) want[size_t(n)] = h[size_t(n)];
               for (int64_t t = 1; t < T; ++t)
                 for (int64_t bb = 0; bb < B; ++bb)
                   for (int64_t hh = 0; hh < H; ++hh) {
                     float acc = 0.f, racc = 0.f;
                     for (int64_t ii = 0; ii < I; ++ii) acc += x[size_t((t * B + bb) * I + ii)] * w[size_t(hh * I + ii)];
                     for (int64_t k = 0; k < H; ++k)
                       racc += want[size_t(((t - 1) * B + bb) * H + k)] * rr[size_t(hh * H + k)];
                     want[size_t((t * B + bb) * H + hh)] = std::tanh(acc + racc + b[size_t(hh)]);
                   }
               return want;
             }};
    c.rtol = 1e-5;
    return c;
  }
};

// k = 2 initial rows: s_t = s_{t-1} + s_{t-2}, the second term read through a body stage
// `prev` (prev_t = s_{t-1}, read at t-1), so the dependence check adds offsets along a path.
struct Fibonacci {
  int64_t T = 10, N = 3;
  te::Tensor init = te::placeholder({2, N}, dtype::float32, "s01");
  te::Tensor state = te::scan_state({T, N}, dtype::float32, "s.state");
  te::Tensor prev = te::compute({T, N}, [&](auto& v) { return state(v[0] - 1, v[1]); }, "prev");
  te::Tensor update = te::compute({T, N}, [&](auto& v) { return state(v[0] - 1, v[1]) + prev(v[0] - 1, v[1]); }, "fib");
  te::Tensor out = te::scan(init, update, state, "s");

  OpCase op_case() const {
    return {"fibonacci", {init}, out, [this](const std::vector<NDArray>& in) {
              auto s01 = in[0].values<float>();
              std::vector<float> want(size_t(T * N));
              for (int64_t t = 0; t < T; ++t)
                for (int64_t j = 0; j < N; ++j)
                  want[size_t(t * N + j)] =
                      t < 2 ? s01[size_t(t * N + j)] : want[size_t((t - 1) * N + j)] + want[size_t((t - 2) * N + j)];
              return want;
            }};
  }
};

// Two states that read each other: a_t = 0.5 a_{t-1} + b_{t-1} x_t, b_t = 0.8 b_{t-1} - 0.3 a_{t-1}.
// `both` [T, 2, N] holds a (row 0) and b (row 1), so one kernel output checks both scans.
struct Coupled {
  int64_t T = 9, N = 6;
  te::Tensor X = te::placeholder({T, N}, dtype::float32, "X");
  te::Tensor a0 = te::placeholder({1, N}, dtype::float32, "a0");
  te::Tensor b0 = te::placeholder({1, N}, dtype::float32, "b0");
  te::Tensor sa = te::scan_state({T, N}, dtype::float32, "a.state");
  te::Tensor sb = te::scan_state({T, N}, dtype::float32, "b.state");
  te::Tensor na = te::compute({T, N}, [&](auto& v) { return sa(v[0] - 1, v[1]) * 0.5f + sb(v[0] - 1, v[1]) * X(v[0], v[1]); }, "na");
  te::Tensor nb = te::compute({T, N}, [&](auto& v) { return sb(v[0] - 1, v[1]) * 0.8f - sa(v[0] - 1, v[1]) * 0.3f; }, "nb");
  std::vector<te::Tensor> ab = te::scan({a0, b0}, {na, nb}, {sa, sb}, {"a", "b"});
  te::Tensor both = te::compute({T, 2, N}, [&](auto& v) { return ir::select(v[1] == int64_t(0), ab[0](v[0], v[2]), ab[1](v[0], v[2])); }, "both");

  std::vector<float> reference(const std::vector<NDArray>& in) const {
    auto x = in[0].values<float>(), a = in[1].values<float>(), b = in[2].values<float>();
    std::vector<float> want(size_t(T * 2 * N));
    auto at = [&](int64_t t, int64_t s, int64_t j) -> float& { return want[size_t((t * 2 + s) * N + j)]; };
    for (int64_t j = 0; j < N; ++j) at(0, 0, j) = a[size_t(j)], at(0, 1, j) = b[size_t(j)];
    for (int64_t t = 1; t < T; ++t)
      for (int64_t j = 0; j < N; ++j) {
        at(t, 0, j) = at(t - 1, 0, j) * 0.5f + at(t - 1, 1, j) * x[size_t(t * N + j)];
        at(t, 1, j) = at(t - 1, 1, j) * 0.8f - at(t - 1, 0, j) * 0.3f;
      }
    return want;
  }
  OpCase op_case() const {
    return {"coupled", {X, a0, b0}, both, [this](const std::vector<NDArray>& in) { return reference(in); }};
  }
};

// An LSTM cell, states h and c [T, B, H]: gates = x_t W^T + h_{t-1} R^T (xw at the root), then
// c_t = f c_{t-1} + i g and h_t = o tanh(c_t), which reads c's new row t (a body stage).
struct LstmCell {
  int64_t T = 8, B = 2, I = 3, H = 5;
  te::Tensor X = te::placeholder({T, B, I}, dtype::float32, "X");
  te::Tensor W = te::placeholder({4 * H, I}, dtype::float32, "W");
  te::Tensor R = te::placeholder({4 * H, H}, dtype::float32, "R");
  te::Tensor h0 = te::placeholder({1, B, H}, dtype::float32, "h0");
  te::Tensor c0 = te::placeholder({1, B, H}, dtype::float32, "c0");
  ir::IterVar i = te::reduce_axis(I, "i"), r = te::reduce_axis(H, "r");
  te::Tensor xw = te::compute(
      {T, B, 4 * H}, [&](auto& v) { return te::sum(X(v[0], v[1], i.var()) * W(v[2], i.var()), {i}); }, "xw");
  te::Tensor sh = te::scan_state({T, B, H}, dtype::float32, "h.state");
  te::Tensor sc = te::scan_state({T, B, H}, dtype::float32, "c.state");
  te::Tensor rec = te::compute(
      {T, B, 4 * H}, [&](auto& v) { return te::sum(sh(v[0] - 1, v[1], r.var()) * R(v[2], r.var()), {r}); }, "rec");
  Expr gate(int64_t g, const std::vector<ir::Var>& v) const {
    Expr row = Expr(v[2]) + g * H;
    return xw(v[0], v[1], row) + rec(v[0], v[1], row);
  }
  te::Tensor cn = te::compute({T, B, H}, [&](auto& v) {
    Expr in = ir::call(ir::CallOp::sigmoid, gate(0, v)), f = ir::call(ir::CallOp::sigmoid, gate(2, v));
    return f * sc(v[0] - 1, v[1], v[2]) + in * ir::call(ir::CallOp::tanh, gate(3, v));
  }, "cn");
  te::Tensor hn = te::compute({T, B, H}, [&](auto& v) {
    return ir::call(ir::CallOp::sigmoid, gate(1, v)) * ir::call(ir::CallOp::tanh, cn(v[0], v[1], v[2]));
  }, "hn");
  std::vector<te::Tensor> hc = te::scan({h0, c0}, {hn, cn}, {sh, sc}, {"h", "c"});

  // Rows of h (which = 0) or c (which = 1), [T, B, H].
  std::vector<float> reference(const std::vector<NDArray>& in, int which) const {
    auto x = in[0].values<float>(), w = in[1].values<float>(), rr = in[2].values<float>();
    auto hi = in[3].values<float>(), ci = in[4].values<float>();
    std::vector<float> h(size_t(T * B * H)), c(h.size());
    for (int64_t n = 0; n < B * H; ++n) h[size_t(n)] = hi[size_t(n)], c[size_t(n)] = ci[size_t(n)];
    auto sig = [](float v) { return 1.f / (1.f + std::exp(-v)); };
    for (int64_t t = 1; t < T; ++t)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t j = 0; j < H; ++j) {
          float g[4];
          for (int64_t q = 0; q < 4; ++q) {
            float acc = 0.f;
            for (int64_t k = 0; k < I; ++k) acc += x[size_t((t * B + b) * I + k)] * w[size_t((q * H + j) * I + k)];
            for (int64_t k = 0; k < H; ++k) acc += h[size_t(((t - 1) * B + b) * H + k)] * rr[size_t((q * H + j) * H + k)];
            g[q] = acc;
          }
          size_t at = size_t((t * B + b) * H + j), prev = size_t(((t - 1) * B + b) * H + j);
          c[at] = sig(g[2]) * c[prev] + sig(g[0]) * std::tanh(g[3]);
          h[at] = sig(g[1]) * std::tanh(c[at]);
        }
    return which ? c : h;
  }
  OpCase op_case(int which) const {
    OpCase oc{which ? "lstm_c" : "lstm_h", {X, W, R, h0, c0}, hc[size_t(which)],
              [this, which](const std::vector<NDArray>& in) { return reference(in, which); }};
    oc.rtol = 1e-4;
    return oc;
  }
};

}  // namespace

TEST_CASE("scan: cumulative sum over axis 0 is init's row, then one serial loop of steps") {
  Cumsum c;
  CHECK(ir::to_string(c.out) == "cs(cs.t, i) = next(cs.t, i) for cs.t in [1, 6), rows [0, 1) from first, state cs.state");
  nnvm_test::check_schedules(c.op_case(), {unscheduled,
                                           {"init inlined", [&](Schedule& s) { s[c.init].compute_inline(); }},
                                           {"columns vectorized", [&](Schedule& s) {
                                              s[c.out].vectorize(s[c.out].axis(1));
                                              s[c.update].compute_inline();
                                            }}});
  // The state is the scan's own buffer: the lowered kernel reads cs at row t, where t + 1 is written.
  Schedule s = schedule::create_schedule(c.out);
  std::string text = ir::to_string(lower::lower(s, {c.X, c.out}, "cumsum"));
  INFO(text);
  CHECK(text.find("cs[i.init] = first[i.init]") < text.find("for (cs.t, 0, 5)"));
  CHECK(text.find("cs.state") == std::string::npos);
}

TEST_CASE("scan: the typed DSL spells the same cumulative sum") {
  Cumsum c;
  auto X = Tensor<float, 6, 5>(c.X);
  auto state = scan_state<float, 6, 5>("cs.state");
  auto first = compute<Shape<1, 5>>([&](auto t, auto j) { return X(as_dynamic(t), j); }, "first");
  auto next = compute<Shape<6, 5>>([&](auto t, auto j) { return state(t - 1, j) + X(t, j); }, "next");
  Tensor<float, 6, 5> cs = scan(first, next, state, "cs");
  OpCase op = c.op_case();
  op.output = cs;
  nnvm_test::check_schedules(op, {unscheduled});
}

TEST_CASE("scan: one kernel over a symbolic number of steps runs at every length") {
  ir::Var steps("steps");
  int64_t N = 4;
  auto X = te::placeholder({steps, N}, dtype::float32, "X");
  auto state = te::scan_state({steps, N}, dtype::float32, "cs.state");
  auto first = te::placeholder({1, N}, dtype::float32, "first");
  auto next = te::compute({steps, N}, [&](auto& v) { return state(v[0] - 1, v[1]) * 0.5f + X(v[0], v[1]); }, "next");
  auto cs = te::scan(first, next, state, "cs");
  auto s = schedule::create_schedule(cs);
  s[cs].vectorize(s[cs].axis(1));
  auto fn = lower::lower(s, {X, first, cs}, "decay_sum");
  auto kernel = target::jit_c(fn);
  NDArray x0 = nnvm_test::random_array(dtype::float32, {1, N}, 8);
  for (int64_t T : {0, 1, 2, 9}) {  // 0: fewer steps than initial rows, so nothing is written
    NDArray x = nnvm_test::random_array(dtype::float32, {T, N}, 7);
    std::vector<float> want(size_t(T * N));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t j = 0; j < N; ++j)
        want[size_t(t * N + j)] = t ? want[size_t((t - 1) * N + j)] * 0.5f + x.values<float>()[size_t(t * N + j)]
                                    : x0.values<float>()[size_t(j)];
    NDArray a(dtype::float32, {T, N}), b(dtype::float32, {T, N});
    target::interpret(fn, x, x0, a);
    kernel(x, x0, b);
    INFO("steps = ", T);
    CHECK(nnvm_test::compare<float>(a.values<float>(), want) == "");
    CHECK(nnvm_test::compare<float>(b.values<float>(), want) == "");
  }
}

TEST_CASE("scan: a tanh RNN computes the input projection for all steps, the recurrence per step") {
  Rnn m;
  Schedule s = schedule::create_schedule(m.out);
  CHECK(s[m.xw].node().attach == schedule::AttachKind::root);
  for (auto& t : {m.rec, m.step}) {
    CHECK(s[t].node().attach == schedule::AttachKind::at);
    CHECK(s[t].node().attach_iv.same_as(s[m.out].axis(0)));
  }
  std::string text = ir::to_string(lower::lower(s, {m.X, m.W, m.R, m.bias, m.h0, m.out}, "rnn"));
  INFO(text);
  // xw is one root nest before the scan; rec and step are realized one row at a time inside it.
  CHECK(text.find("allocate xw[float32 * 7 * 2 * 5]") < text.find("for (h.t, 0, 6)"));
  CHECK(text.find("for (h.t, 0, 6)") < text.find("allocate rec[float32 * 1 * 2 * 5]"));
  nnvm_test::check_schedules(m.op_case(), {unscheduled});
  // Only the last state as the kernel's output (ONNX's Y_h): the scan is an intermediate buffer.
  auto last = te::compute({m.B, m.H}, [&](auto& v) { return m.out(m.T - 1, v[0], v[1]); }, "h_last");
  OpCase c = m.op_case();
  auto all_rows = c.reference;
  c.name = "rnn_last";
  c.output = last;
  c.reference = [&, all_rows](const std::vector<NDArray>& in) {
    auto rows = all_rows(in);
    return std::vector<float>(rows.end() - m.B * m.H, rows.end());
  };
  nnvm_test::check_schedules(c, {unscheduled});
}

TEST_CASE("scan: two initial rows, and a state read through a body stage at an offset") {
  Fibonacci f;
  nnvm_test::check_schedules(f.op_case(), {unscheduled, {"prev inlined", [&](Schedule& s) { s[f.prev].compute_inline(); }}});
}

TEST_CASE("scan: schedules of the per-step body stages give the same results") {
  Rnn m;
  nnvm_test::check_schedules(
      m.op_case(),
      {unscheduled,
       {"step split and vectorized", [&](Schedule& s) {
          auto [ho, hi] = s[m.step].split(s[m.step].axis(2), 4);
          s[m.step].vectorize(hi);
        }},
       {"rec tiled, inner h vectorized", [&](Schedule& s) {
          auto [ho, hi] = s[m.rec].split(s[m.rec].axis(2), 2);
          s[m.rec].reorder({ho, s[m.rec].reduce_axis(0), hi});
          s[m.rec].vectorize(hi);
        }},
       {"rec at step's batch loop", [&](Schedule& s) { s[m.rec].compute_at(s[m.step], s[m.step].axis(1)); }},
       {"scan rows parallel over batch", [&](Schedule& s) { s[m.out].parallel(s[m.out].axis(1)); }},
       {"xw per step", [&](Schedule& s) { s[m.xw].compute_at(s[m.out], s[m.out].axis(0)); }}});
}

TEST_CASE("scan: reads of the state at or after the step, bad shapes and bad schedules fail by id") {
  int64_t T = 4, N = 3;
  auto X = te::placeholder({T, N}, dtype::float32, "X");
  auto init = te::placeholder({1, N}, dtype::float32, "init");
  auto state = te::scan_state({T, N}, dtype::float32, "s.state");
  auto reads_at = [&](int64_t back, const std::string& name) {
    return te::compute({T, N}, [&](auto& v) { return state(back ? ir::Expr(v[0] - back) : ir::Expr(v[0]), v[1]) + X(v[0], v[1]); }, name);
  };
  std::string msg = expect_error("nnvm.te.scan_dependence", [&] { te::scan(init, reads_at(0, "same"), state, "s"); });
  CHECK_MESSAGE(msg.find("s.state(i, j) in same reads the state at its own step") != std::string::npos, msg);
  msg = expect_error("nnvm.te.scan_dependence", [&] { te::scan(init, reads_at(-1, "ahead"), state, "s"); });
  CHECK_MESSAGE(msg.find("reads the state 1 step ahead") != std::string::npos, msg);
  // Two rows back needs two initial rows; through a body stage the offsets add up.
  expect_error("nnvm.te.scan_dependence", [&] { te::scan(init, reads_at(2, "two_back"), state, "s"); });
  auto mid = te::compute({T, N}, [&](auto& v) { return state(v[0] - 1, v[1]); }, "mid");
  auto via = te::compute({T, N}, [&](auto& v) { return mid(v[0] + 1, v[1]); }, "via");
  expect_error("nnvm.te.scan_dependence", [&] { te::scan(init, via, state, "s"); });
  auto any_row = te::compute({T, N}, [&](auto& v) { return state(v[1], v[1]); }, "any_row");
  expect_error("nnvm.te.scan_dependence", [&] { te::scan(init, any_row, state, "s"); });

  auto good = reads_at(1, "good");
  expect_error("nnvm.te.scan_shape", [&] { te::scan(te::placeholder({1, N + 1}, dtype::float32, "wide"), good, state, "s"); });
  expect_error("nnvm.te.scan_shape", [&] { te::scan(init, good, te::scan_state({T + 1, N}, dtype::float32, "long"), "s"); });
  expect_error("nnvm.te.scan_dtype", [&] { te::scan(te::placeholder({1, N}, dtype::float64, "init64"), good, state, "s"); });

  auto out = te::scan(init, good, state, "s");
  Schedule s = schedule::create_schedule(out);
  auto t = s[out].axis(0), j = s[out].axis(1);
  try {
    s[out].split(t, 2);
    FAIL("splitting the step axis must fail");
  } catch (const UserError& e) {
    CHECK(e.id() == "nnvm.schedule.scan_axis");
    CHECK_MESSAGE(std::string(e.what()).find("stage s \u203a axis s.t") != std::string::npos, e.what());
  }
  expect_error("nnvm.schedule.scan_axis", [&] { s[out].parallel(t); });
  expect_error("nnvm.schedule.scan_axis", [&] { s[out].vectorize(t); });
  expect_error("nnvm.schedule.scan_axis", [&] { s[out].fuse(t, j); });
  expect_error("nnvm.schedule.scan_axis", [&] { s[out].reorder({j, t}); });
  expect_error("nnvm.schedule.scan_body_root", [&] { s[good].compute_root(); });
  expect_error("nnvm.schedule.scan_state", [&] { s.cache_read(state, ir::MemoryScope::local, {good}); });
  expect_error("nnvm.schedule.scan_body_output", [&] { schedule::create_schedule(std::vector<te::Tensor>{out, good}); });
  // The inner axes schedule as usual.
  auto [jo, ji] = s[out].split(j, 2);
  s[out].parallel(jo);
  CHECK(s[out].leaf_iter_vars().front().same_as(t));
}

}  // namespace te_scan

namespace te_scan {

TEST_CASE("scan: two states that read each other step in one loop") {
  Coupled m;
  CHECK(ir::to_string(m.ab[1]) == "b(a.t, i) = nb(a.t, i) for a.t in [1, 9), rows [0, 1) from b0, state b.state");
  Schedule s = schedule::create_schedule(m.both);
  std::string text = ir::to_string(lower::lower(s, {m.X, m.a0, m.b0, m.both}, "coupled"));
  INFO(text);
  // Both init copies, then one step loop that stores a's row and then b's.
  CHECK(text.find("] = b0[") < text.find("for (a.t, 0, 8)"));
  size_t loop = text.find("for (a.t, 0, 8)");
  CHECK(text.find("for (a.t", loop + 1) == std::string::npos);
  CHECK(text.find("a[") != std::string::npos);
  CHECK(text.find(".state") == std::string::npos);
  nnvm_test::check_schedules(
      m.op_case(), {unscheduled,
                    {"updates inlined", [&](Schedule& sc) {
                       sc[m.na].compute_inline();
                       sc[m.nb].compute_inline();
                     }},
                    {"b's row vectorized, a's parallel", [&](Schedule& sc) {
                       auto [jo, ji] = sc[m.ab[1]].split(sc[m.ab[1]].axis(1), 4);
                       sc[m.ab[1]].vectorize(ji);
                       sc[m.ab[0]].parallel(sc[m.ab[0]].axis(1));
                     }},
                    {"nb split, inner vectorized", [&](Schedule& sc) {
                       auto [jo, ji] = sc[m.nb].split(sc[m.nb].axis(1), 2);
                       sc[m.nb].vectorize(ji);
                     }}});
}

TEST_CASE("scan: states of different shapes") {
  // a [T, N], b [T, M]: a_t[j] = a_{t-1}[j] + sum_m b_{t-1}[m], b_t[m] = 0.5 b_{t-1}[m] + a_{t-1}[m % N].
  int64_t T = 6, N = 3, M = 5;
  auto a0 = te::placeholder({1, N}, dtype::float32, "a0");
  auto b0 = te::placeholder({1, M}, dtype::float32, "b0");
  auto sa = te::scan_state({T, N}, dtype::float32, "a.state");
  auto sb = te::scan_state({T, M}, dtype::float32, "b.state");
  auto m = te::reduce_axis(M, "m");
  auto bsum = te::compute({T}, [&](auto& v) { return te::sum(sb(v[0] - 1, m.var()), {m}); }, "bsum");
  auto na = te::compute({T, N}, [&](auto& v) { return sa(v[0] - 1, v[1]) + bsum(v[0]); }, "na");
  auto nb = te::compute({T, M}, [&](auto& v) { return sb(v[0] - 1, v[1]) * 0.5f + sa(v[0] - 1, v[1] % N); }, "nb");
  auto ab = te::scan({a0, b0}, {na, nb}, {sa, sb}, {"a", "b"});
  auto out = te::compute({T, N + M}, [&](auto& v) {
    return ir::select(v[1] < N, ab[0](v[0], ir::min(v[1], Expr(N - 1))), ab[1](v[0], ir::max(v[1] - N, Expr(int64_t(0)))));
  }, "out");
  OpCase c{"shapes", {a0, b0}, out, [&](const std::vector<NDArray>& in) {
             std::vector<float> a(in[0].values<float>().begin(), in[0].values<float>().end());
             std::vector<float> b(in[1].values<float>().begin(), in[1].values<float>().end());
             std::vector<float> want;
             for (int64_t t = 0; t < T; ++t) {
               if (t) {
                 float sum = 0.f;
                 for (float x : b) sum += x;
                 std::vector<float> na2(a), nb2(b);
                 for (int64_t j = 0; j < N; ++j) na2[size_t(j)] = a[size_t(j)] + sum;
                 for (int64_t q = 0; q < M; ++q) nb2[size_t(q)] = b[size_t(q)] * 0.5f + a[size_t(q % N)];
                 a = na2, b = nb2;
               }
               want.insert(want.end(), a.begin(), a.end());
               want.insert(want.end(), b.begin(), b.end());
             }
             return want;
           }};
  nnvm_test::check_schedules(c, {unscheduled, {"b's row vectorized", [&](Schedule& s) { s[ab[1]].vectorize(s[ab[1]].axis(1)); }}});
}

TEST_CASE("scan: an LSTM cell, h and c in one scan, each output alone and both together") {
  LstmCell m;
  Schedule s = schedule::create_schedule(m.hc[0]);
  CHECK(s[m.xw].node().attach == schedule::AttachKind::root);
  for (auto& t : {m.rec, m.cn, m.hn}) CHECK(s[t].node().attach_iv.same_as(s[m.hc[0]].axis(0)));
  std::vector<ScheduleVariant> variants{
      unscheduled,
      {"rec tiled, gates vectorized", [&](Schedule& sc) {
         auto [ho, hi] = sc[m.rec].split(sc[m.rec].axis(2), 4);
         sc[m.rec].reorder({ho, sc[m.rec].reduce_axis(0), hi});
         sc[m.rec].vectorize(hi);
         sc[m.hn].vectorize(sc[m.hn].axis(2));
       }},
      {"c's rows parallel over batch", [&](Schedule& sc) { sc[m.hc[1]].parallel(sc[m.hc[1]].axis(1)); }},
      {"hn inlined", [&](Schedule& sc) { sc[m.hn].compute_inline(); }}};
  nnvm_test::check_schedules(m.op_case(0), variants);
  nnvm_test::check_schedules(m.op_case(1), variants);
  // Both outputs as kernel arguments; every emitter.
  Schedule both = schedule::create_schedule(m.hc);
  auto fn = lower::lower(both, {m.X, m.W, m.R, m.h0, m.c0, m.hc[0], m.hc[1]}, "lstm_cell");
  std::vector<NDArray> in;
  for (size_t k = 0; k < 5; ++k) {
    std::vector<int64_t> shape;
    for (auto& e : m.op_case(0).inputs[k].shape()) shape.push_back(*ir::as_const_int(e));
    in.push_back(nnvm_test::random_array(dtype::float32, shape, uint32_t(3 + k)));
  }
  auto want_h = m.reference(in, 0), want_c = m.reference(in, 1);
  NDArray h(dtype::float32, {m.T, m.B, m.H}), c(dtype::float32, {m.T, m.B, m.H});
  NDArray hj(dtype::float32, {m.T, m.B, m.H}), cj(dtype::float32, {m.T, m.B, m.H});
  target::interpret(fn, in[0], in[1], in[2], in[3], in[4], h, c);
  target::jit_c(fn)(in[0], in[1], in[2], in[3], in[4], hj, cj);
  CHECK(nnvm_test::compare<float>(h.values<float>(), want_h, 1e-4) == "");
  CHECK(nnvm_test::compare<float>(c.values<float>(), want_c, 1e-4) == "");
  CHECK(nnvm_test::compare<float>(hj.values<float>(), want_h, 1e-4) == "");
  CHECK(nnvm_test::compare<float>(cj.values<float>(), want_c, 1e-4) == "");
#if NNVM_TEST_WITH_LLVM
  NDArray hl(dtype::float32, {m.T, m.B, m.H}), cl(dtype::float32, {m.T, m.B, m.H});
  codegen::jit_llvm(fn)(in[0], in[1], in[2], in[3], in[4], hl, cl);
  CHECK(nnvm_test::compare<float>(hl.values<float>(), want_h, 1e-4) == "");
  CHECK(nnvm_test::compare<float>(cl.values<float>(), want_c, 1e-4) == "");
#endif
}

TEST_CASE("scan: mismatched states fail by id") {
  int64_t T = 4, N = 3;
  auto X = te::placeholder({T, N}, dtype::float32, "X");
  auto i1 = te::placeholder({1, N}, dtype::float32, "i1");
  auto sa = te::scan_state({T, N}, dtype::float32, "a.state");
  auto sb = te::scan_state({T, N}, dtype::float32, "b.state");
  auto ua = te::compute({T, N}, [&](auto& v) { return sa(v[0] - 1, v[1]) + sb(v[0] - 1, v[1]); }, "ua");
  auto ub = te::compute({T, N}, [&](auto& v) { return sb(v[0] - 1, v[1]) * X(v[0], v[1]); }, "ub");
  expect_error("nnvm.te.scan_states", [&] { te::scan({i1, i1}, {ua}, {sa, sb}, {"a", "b"}); });
  expect_error("nnvm.te.scan_states", [&] { te::scan({i1, i1}, {ua, ub}, {sa, sb}, {"a"}); });
  expect_error("nnvm.te.scan_states", [&] { te::scan(std::vector<te::Tensor>{}, {}, {}); });
  expect_error("nnvm.te.scan_state", [&] { te::scan({i1, i1}, {ua, ub}, {sa, sa}, {"a", "b"}); });
  // Every state steps over the same T, from the same number of initial rows.
  auto longer = te::scan_state({T + 1, N}, dtype::float32, "long.state");
  auto ul = te::compute({T + 1, N}, [&](auto& v) { return longer(v[0] - 1, v[1]); }, "ul");
  std::string msg = expect_error("nnvm.te.scan_shape", [&] { te::scan({i1, i1}, {ua, ul}, {sa, longer}, {"a", "l"}); });
  CHECK_MESSAGE(msg.find("step together") != std::string::npos, msg);
  auto i2 = te::placeholder({2, N}, dtype::float32, "i2");
  expect_error("nnvm.te.scan_shape", [&] { te::scan({i1, i2}, {ua, ub}, {sa, sb}, {"a", "b"}); });
  // One state's update may not read another state at its own step.
  auto now = te::compute({T, N}, [&](auto& v) { return sa(v[0], v[1]); }, "now");
  msg = expect_error("nnvm.te.scan_dependence", [&] { te::scan({i1, i1}, {ua, now}, {sa, sb}, {"a", "b"}); });
  CHECK_MESSAGE(msg.find("a.state(i, j) in now reads the state at its own step") != std::string::npos, msg);
  auto from_state = te::compute({1, N}, [&](auto& v) { return sb(v[0], v[1]); }, "from_state");
  expect_error("nnvm.te.scan_dependence", [&] { te::scan({i1, from_state}, {ua, ub}, {sa, sb}, {"a", "b"}); });
  // The other outputs' step axis is the same serial loop.
  auto ab = te::scan({i1, i1}, {ua, ub}, {sa, sb}, {"a", "b"});
  Schedule s = schedule::create_schedule(ab[1]);
  expect_error("nnvm.schedule.scan_axis", [&] { s[ab[1]].split(s[ab[1]].axis(0), 2); });
  expect_error("nnvm.schedule.scan_axis", [&] { s[ab[0]].parallel(s[ab[0]].axis(0)); });
  expect_error("nnvm.schedule.scan_stage", [&] { s[ab[0]].compute_inline(); });
  // On a GPU a scan is one block: its steps meet at barriers, which no other block waits at.
  std::string block = expect_error("nnvm.schedule.scan_block", [&] { s[ab[1]].bind(s[ab[1]].axis(1), gpu::block_x); });
  CHECK_MESSAGE(block.find("scan a") != std::string::npos, block);
  expect_error("nnvm.schedule.scan_block", [&] { s[ua].bind(s[ua].axis(1), gpu::block_y); });
  s[ub].bind(s[ub].axis(1), gpu::thread_x);  // the threads of the one block are fine
  // Only b is the output: a is still a stage (b's updates read it), and b's stage steps in a's loop.
  CHECK(s[ab[0]].node().attach == schedule::AttachKind::root);
}

}  // namespace te_scan
