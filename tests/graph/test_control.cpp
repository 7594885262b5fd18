// Control nodes (graph/control.hpp): if, loop and scan built in code, compiled (each body once,
// run per iteration by the run loop's host step) and checked against plain loops written here.
// Also: bodies re-typed from the node's inputs, the type rules' errors, and the back ends that
// refuse control nodes.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <filesystem>

#include "nnvm/graph/artifact.hpp"

namespace graph_control {

using namespace nnvm;
using graph::GraphBuilder;
using graph::Value;
using nnvm_test::error_id;

namespace {

using Body = std::shared_ptr<const graph::Graph>;
Body finish(GraphBuilder& b) { return std::make_shared<const graph::Graph>(b.build()); }

NDArray floats(std::vector<float> v, std::vector<int64_t> shape) { return NDArray::from(v, shape); }
NDArray one_bool(bool v) {
  NDArray a(dtype::boolean, {});
  *static_cast<uint8_t*>(a.raw()) = v;
  return a;
}
NDArray one_int(int64_t v) { return NDArray::from(std::vector<int64_t>{v}, {}); }

void check_close(const NDArray& got, const std::vector<float>& want, const std::vector<int64_t>& shape) {
  REQUIRE(got.shape() == shape);
  auto g = got.values<float>();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(g[i] == doctest::Approx(want[i]).epsilon(1e-5));
}

// loop body: y_out = y + x * float(iter); the condition passes through; scan row = y_out.
Body running_sum_body() {
  GraphBuilder b("running_sum");
  Value iter = b.input("iter", dtype::int64, {});
  Value cond = b.input("cond", dtype::boolean, {});
  Value y = b.input("y", dtype::float32, {3});
  Value x = b.input("x", dtype::float32, {3});  // captured from the outer graph
  Value f = b.op("cast", {iter}, ops::Attrs().set_dtype("to", dtype::float32));
  Value y_out = b.op("add", {y, b.op("mul", {x, f})});
  b.output(cond);
  b.output(y_out);
  b.output(y_out);
  return finish(b);
}

}  // namespace

TEST_CASE("loop: carried value, scan output and a captured input match a plain loop") {
  const int64_t M = 5;
  GraphBuilder b("running_sum_loop");
  Value y0 = b.input("y0", dtype::float32, {3});
  Value x = b.input("x", dtype::float32, {3});
  auto outs = b.control("loop", {b.constant("M", one_int(M)), b.constant("cond", one_bool(true)), y0, x},
                        {running_sum_body()}, 2, ops::Attrs().set_int("num_carried", 1), "loop");
  b.output(outs[0]);
  b.output(outs[1]);
  graph::Graph g = b.build();
  CHECK(g.type(outs[1]).shape.size() == 2);

  std::vector<float> y = {1, -2, 0.5f}, xs = {0.25f, 3, -1};
  std::vector<float> rows;
  std::vector<float> cur = y;
  for (int64_t i = 0; i < M; ++i) {
    for (size_t k = 0; k < 3; ++k) cur[k] += xs[k] * float(i);
    rows.insert(rows.end(), cur.begin(), cur.end());
  }
  for (int level : {0, 2}) {
    graph::CompiledModel m = graph::compile(g, {.opt_level = level});
    CHECK(m.controls().size() == 1);
    auto got = m.run({floats(y, {3}), floats(xs, {3})});
    check_close(got[0], cur, {3});
    check_close(got[1], rows, {M, 3});
  }
}

TEST_CASE("loop: the body's condition ends it; M and cond may be run-time inputs") {
  // y doubles while y < limit, at most M times.
  GraphBuilder bb("double_until");
  bb.input("iter", dtype::int64, {});
  bb.input("cond", dtype::boolean, {});
  Value y = bb.input("y", dtype::float32, {1});
  Value limit = bb.input("limit", dtype::float32, {1});
  Value y_out = bb.op("mul", {y, bb.constant("two", floats({2}, {1}))});
  bb.output(bb.op("less", {y_out, limit}));
  bb.output(y_out);
  Body body = finish(bb);

  GraphBuilder b("double_loop");
  Value M = b.input("M", dtype::int64, {});
  Value cond = b.input("cond", dtype::boolean, {});
  Value y0 = b.input("y0", dtype::float32, {1});
  Value lim = b.input("limit", dtype::float32, {1});
  b.output(b.control("loop", {M, cond, y0, lim}, {body}, 1, ops::Attrs().set_int("num_carried", 1)).front());
  graph::CompiledModel m = graph::compile(b.build());

  auto reference = [](int64_t trips, bool c, float v, float l) {
    for (int64_t i = 0; i < trips && c; ++i) {
      v *= 2;
      c = v < l;
    }
    return v;
  };
  for (auto [trips, c, v, l] : {std::tuple{int64_t(100), true, 1.5f, 40.0f}, {int64_t(3), true, 1.0f, 1000.0f},
                                {int64_t(100), false, 1.0f, 40.0f}, {int64_t(0), true, 1.0f, 40.0f}}) {
    CAPTURE(trips);
    CAPTURE(c);
    auto got = m.run({one_int(trips), one_bool(c), floats({v}, {1}), floats({l}, {1})});
    check_close(got[0], {reference(trips, c, v, l)}, {1});
  }

  // Without M or cond (both left out): the body's condition alone ends it.
  GraphBuilder w("while_loop");
  Value y1 = w.input("y0", dtype::float32, {1});
  Value l1 = w.input("limit", dtype::float32, {1});
  w.output(w.control("loop", {Value{}, Value{}, y1, l1}, {body}, 1, ops::Attrs().set_int("num_carried", 1)).front());
  graph::CompiledModel wm = graph::compile(w.build());
  check_close(wm.run({floats({3}, {1}), floats({100}, {1})})[0], {reference(INT64_MAX, true, 3, 100)}, {1});
}

TEST_CASE("scan: two states, a reversed scan input and a reversed scan output") {
  const int64_t T = 4;
  GraphBuilder bb("sum_and_product");
  Value s = bb.input("s", dtype::float32, {2});
  Value p = bb.input("p", dtype::float32, {2});
  Value x = bb.input("x_t", dtype::float32, {2});
  Value w = bb.input("w_t", dtype::float32, {2});
  Value s_out = bb.op("add", {s, x});
  Value p_out = bb.op("mul", {p, w});
  bb.output(s_out);
  bb.output(p_out);
  bb.output(bb.op("sub", {s_out, p_out}));
  Body body = finish(bb);

  GraphBuilder b("scan");
  Value s0 = b.input("s0", dtype::float32, {2});
  Value p0 = b.input("p0", dtype::float32, {2});
  Value xs = b.input("xs", dtype::float32, {T, 2});
  Value ws = b.input("ws", dtype::float32, {T, 2});
  auto outs = b.control("scan", {s0, p0, xs, ws}, {body}, 3,
                        ops::Attrs()
                            .set_int("num_carried", 2)
                            .set_int("num_scan_inputs", 2)
                            .set_ints("scan_input_directions", {1, 0})
                            .set_ints("scan_output_directions", {1}));
  for (auto& o : outs) b.output(o);
  graph::CompiledModel m = graph::compile(b.build());

  std::vector<float> sv = {0.5f, -1}, pv = {1, 2}, xv = {1, 2, 3, 4, 5, 6, 7, 8}, wv = {0.5f, 2, -1, 1, 1.5f, 0.5f, 2, -0.25f};
  std::vector<float> rows(size_t(T * 2));
  for (int64_t t = 0; t < T; ++t)
    for (size_t k = 0; k < 2; ++k) {
      sv[k] += xv[size_t((T - 1 - t) * 2) + k];  // input 0 is read last row first
      pv[k] *= wv[size_t(t * 2) + k];
      rows[size_t((T - 1 - t) * 2) + k] = sv[k] - pv[k];  // the output is written last row first
    }
  auto got = m.run({floats({0.5f, -1}, {2}), floats({1, 2}, {2}), floats(xv, {T, 2}), floats(wv, {T, 2})});
  check_close(got[0], sv, {2});
  check_close(got[1], pv, {2});
  check_close(got[2], rows, {T, 2});
}

TEST_CASE("if: the condition is a run-time input; each branch reads a captured value") {
  GraphBuilder tb("then");
  Value a = tb.input("a", dtype::float32, {4});
  tb.output(tb.op("add", {a, a}));
  GraphBuilder eb("else");
  Value a2 = eb.input("a", dtype::float32, {4});
  eb.output(eb.op("mul", {a2, a2}));

  GraphBuilder b("if");
  Value cond = b.input("cond", dtype::boolean, {});
  Value x = b.input("x", dtype::float32, {4});
  b.output(b.op("relu", {b.control("if", {cond, x}, {finish(tb), finish(eb)}, 1).front()}));
  graph::Graph g = b.build();
  graph::CompiledModel m = graph::compile(g);
  std::vector<float> xv = {-3, 0.5f, 2, -0.25f};
  std::vector<float> doubled, squared;
  for (float v : xv) doubled.push_back(std::max(v + v, 0.0f)), squared.push_back(v * v);
  check_close(m.run({one_bool(true), floats(xv, {4})})[0], doubled, {4});
  check_close(m.run({one_bool(false), floats(xv, {4})})[0], squared, {4});

  // A back end that runs no control nodes needs the condition at compile time, and says which
  // graph input it comes from (nnvmc check binds it from the test data).
  auto [id, message] = nnvm_test::error_of([&] { graph::prepare(g, {.target = target::parse_target("opencl")}); });
  CHECK(id == "nnvm.graph.not_constant");
  CHECK(message.find("graph input cond") != std::string::npos);
}

TEST_CASE("control flow decided at compile time folds away: a constant if condition, a loop that never runs") {
  GraphBuilder tb("then");
  Value a = tb.input("a", dtype::float32, {3});
  tb.output(tb.op("add", {a, a}));
  GraphBuilder eb("else");
  Value a2 = eb.input("a", dtype::float32, {3});
  eb.output(eb.op("mul", {a2, a2}));
  Body then_b = finish(tb), else_b = finish(eb);
  std::vector<float> xv = {-1.5f, 2, 0.25f};
  for (bool taken : {true, false}) {
    GraphBuilder b("constant_if");
    Value x = b.input("x", dtype::float32, {3});
    // The condition folds only in the graph passes: 2 < 3 (or 3 < 2) is an op on constants.
    Value two = b.constant("two", one_int(2)), three = b.constant("three", one_int(3));
    Value cond = b.op("less", taken ? std::vector<Value>{two, three} : std::vector<Value>{three, two});
    b.output(b.control("if", {cond, x}, {then_b, else_b}, 1).front());
    graph::Graph g = b.build();
    graph::Graph folded = graph::optimize(g, {.opt_level = 1});
    CHECK(std::none_of(folded.nodes.begin(), folded.nodes.end(),
                       [](const graph::Node& n) { return n.kind == graph::NodeKind::control; }));
    graph::CompiledModel m = graph::compile(g);
    CHECK(m.controls().empty());
    std::vector<float> want;
    for (float v : xv) want.push_back(taken ? v + v : v * v);
    check_close(m.run({floats(xv, {3})})[0], want, {3});
  }
  // A loop whose condition is a constant false runs no iteration: its result is its initial value.
  GraphBuilder bb("negate");
  bb.input("iter", dtype::int64, {});
  Value c = bb.input("cond", dtype::boolean, {});
  Value y = bb.input("y", dtype::float32, {3});
  bb.output(c);
  bb.output(bb.op("neg", {y}));
  GraphBuilder b("never");
  Value y0 = b.input("y0", dtype::float32, {3});
  b.output(b.control("loop", {b.constant("M", one_int(5)), b.constant("cond", one_bool(false)), y0}, {finish(bb)}, 1,
                     ops::Attrs().set_int("num_carried", 1))
               .front());
  graph::CompiledModel m = graph::compile(b.build());
  CHECK(m.controls().empty());
  check_close(m.run({floats(xv, {3})})[0], xv, {3});
}

TEST_CASE("nested: an if inside a loop body reads the body's values") {
  // y = iter < 2 ? y + 1 : y * 3, for iter in [0, 5).
  GraphBuilder tb("plus_one");
  Value t_y = tb.input("y", dtype::float32, {2});
  tb.output(tb.op("add", {t_y, tb.constant("one", floats({1}, {1}))}));
  GraphBuilder eb("times_three");
  Value e_y = eb.input("y", dtype::float32, {2});
  eb.output(eb.op("mul", {e_y, eb.constant("three", floats({3}, {1}))}));

  GraphBuilder bb("body");
  Value iter = bb.input("iter", dtype::int64, {});
  Value cond = bb.input("cond", dtype::boolean, {});
  Value y = bb.input("y", dtype::float32, {2});
  Value early = bb.op("less", {iter, bb.constant("two", one_int(2))});
  bb.output(cond);
  bb.output(bb.control("if", {early, y}, {finish(tb), finish(eb)}, 1).front());
  Body body = finish(bb);

  GraphBuilder b("outer");
  Value y0 = b.input("y0", dtype::float32, {2});
  b.output(b.control("loop", {b.constant("M", one_int(5)), Value{}, y0}, {body}, 1,
                     ops::Attrs().set_int("num_carried", 1))
               .front());
  graph::CompiledModel m = graph::compile(b.build());
  std::vector<float> v = {0.5f, -2};
  for (int i = 0; i < 5; ++i)
    for (float& e : v) e = i < 2 ? e + 1 : e * 3;
  check_close(m.run({floats({0.5f, -2}, {2})})[0], v, {2});
}

TEST_CASE("a body is re-typed from the node's inputs: a symbolic batch bound outside reaches it") {
  ir::Var n("n");
  GraphBuilder bb("body");
  Value s = bb.input("s", dtype::float32, {n});
  Value x = bb.input("x_t", dtype::float32, {n});
  Value s_out = bb.op("add", {s, x});
  bb.output(s_out);
  bb.output(s_out);
  Body body = finish(bb);
  GraphBuilder b("scan_n");
  Value s0 = b.input("s0", dtype::float32, {n});
  Value xs = b.input("xs", dtype::float32, {3, n});
  for (auto& o : b.control("scan", {s0, xs}, {body}, 2,
                           ops::Attrs().set_int("num_carried", 1).set_int("num_scan_inputs", 1)))
    b.output(o);
  graph::CompiledModel m = graph::compile(b.build(), {.symbols = {{"n", 2}}});
  auto got = m.run({floats({1, 2}, {2}), floats({1, 1, 2, 2, 3, 3}, {3, 2})});
  check_close(got[0], {7, 8}, {2});
  check_close(got[1], {2, 3, 4, 5, 7, 8}, {3, 2});
}

TEST_CASE("control nodes: type errors name the node; other back ends refuse them") {
  GraphBuilder tb("then");
  Value a = tb.input("a", dtype::float32, {4});
  tb.output(a);
  GraphBuilder eb("else");
  Value a2 = eb.input("a", dtype::float32, {4});
  eb.output(eb.op("cast", {a2}, ops::Attrs().set_dtype("to", dtype::float64)));
  Body then_b = finish(tb), else_b = finish(eb);
  {
    GraphBuilder b("bad_if");
    Value c = b.input("c", dtype::boolean, {});
    Value x = b.input("x", dtype::float32, {4});
    CHECK(error_id([&] { b.control("if", {c, x}, {then_b, else_b}, 1); }) == "nnvm.graph.branch_types");
    CHECK(error_id([&] { b.control("if", {x, x}, {then_b, then_b}, 1); }) == "nnvm.graph.control_type");
    CHECK(error_id([&] { b.control("if", {c, x}, {then_b}, 1); }) == "nnvm.graph.invalid");
    CHECK(error_id([&] { b.control("while", {c, x}, {then_b}, 1); }) == "nnvm.graph.invalid");
  }
  {
    // A carried value that changes its type between iterations.
    GraphBuilder bb("widen");
    bb.input("iter", dtype::int64, {});
    Value cond = bb.input("cond", dtype::boolean, {});
    Value y = bb.input("y", dtype::float32, {4});
    bb.output(cond);
    bb.output(bb.op("cast", {y}, ops::Attrs().set_dtype("to", dtype::float64)));
    GraphBuilder b("bad_loop");
    Value y0 = b.input("y0", dtype::float32, {4});
    CHECK(error_id([&] {
            b.control("loop", {b.constant("M", one_int(2)), Value{}, y0}, {finish(bb)}, 1,
                      ops::Attrs().set_int("num_carried", 1));
          }) == "nnvm.graph.loop_shape");
  }
  // A loop with scan outputs whose trip count comes from a graph input: not_constant naming it.
  GraphBuilder b("run_time_m");
  Value M = b.input("M", dtype::int64, {});
  Value y0 = b.input("y0", dtype::float32, {3});
  Value x = b.input("x", dtype::float32, {3});
  auto [id, message] = nnvm_test::error_of(
      [&] { b.control("loop", {M, Value{}, y0, x}, {running_sum_body()}, 2, ops::Attrs().set_int("num_carried", 1)); });
  CHECK(id == "nnvm.graph.not_constant");
  CHECK(message.find("graph input M") != std::string::npos);

  // A loop with scan outputs that stops early: its outputs were planned for M rows.
  GraphBuilder sb("stop_early");
  sb.input("iter", dtype::int64, {});
  sb.input("cond", dtype::boolean, {});
  Value y = sb.input("y", dtype::float32, {1});
  Value y_out = sb.op("add", {y, sb.constant("one", floats({1}, {1}))});
  sb.output(sb.op("less", {y_out, sb.constant("three", floats({3}, {1}))}));
  sb.output(y_out);
  sb.output(y_out);
  GraphBuilder lb("early");
  Value start = lb.input("start", dtype::float32, {1});
  for (auto& o : lb.control("loop", {lb.constant("M", one_int(4)), Value{}, start}, {finish(sb)}, 2,
                            ops::Attrs().set_int("num_carried", 1)))
    lb.output(o);
  graph::Graph early = lb.build();
  graph::CompiledModel m = graph::compile(early);
  CHECK(m.run({floats({-10}, {1})})[1].shape() == std::vector<int64_t>{4, 1});  // runs all 4
  CHECK(error_id([&] { m.run({floats({0}, {1})}); }) == "nnvm.run.loop_exit");

  auto dir = std::filesystem::temp_directory_path() / "nnvm_control_artifact";
  CHECK(error_id([&] { graph::save_artifact(m, dir.string()); }) == "nnvm.compile.control_flow");
  CHECK(error_id([&] { graph::prepare(early, {.target = target::parse_target("opencl")}); }) ==
        "nnvm.compile.control_flow");
}

}  // namespace graph_control
