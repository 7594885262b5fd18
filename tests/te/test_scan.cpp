// te::scan: recurrences lowered as one serial loop over the steps, checked against plain loops
// on the interpreter and the C JIT (and the LLVM JIT when it is built), under several schedules
// of the per-step body; bad reads of the state and bad schedules of the step axis fail by id.
#include "support/pch.hpp"
#include "support/schedule_harness.hpp"

namespace te_scan {

using namespace nnvm;
using nnvm_test::OpCase;
using nnvm_test::ScheduleVariant;
using schedule::Schedule;

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
