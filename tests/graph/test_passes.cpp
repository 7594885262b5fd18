// Graph passes and the executor's planning: dead code, common subexpressions, constant folding,
// fusion of elementwise chains (values that leave a group stay kernel outputs) and memory
// planning, each checked on the graph's structure and on values against plain loops.
#include "support/pch.hpp"
#include "support/check.hpp"

namespace graph_passes {

using namespace nnvm;
using graph::GraphBuilder;

namespace {
using nnvm_test::count_ops;
float relu(float v) { return std::max(v, 0.0f); }
}  // namespace

TEST_CASE("dead-code elimination removes what no output reads and keeps every graph input") {
  GraphBuilder gb("dce");
  auto x = gb.input("x", dtype::float32, {3, 4});
  gb.input("unused", dtype::float32, {2});
  gb.op("neg", {x}, {}, "dead");
  gb.output(gb.op("relu", {x}, {}, "live"));
  auto g = graph::eliminate_dead_code(gb.build());
  CHECK(g.find("dead") == graph::Value::npos);
  CHECK(g.find("live") != graph::Value::npos);
  CHECK(g.inputs().size() == 2);
  graph::validate(g);
}

TEST_CASE("common-subexpression elimination merges equal op uses and equal constants") {
  GraphBuilder gb("cse");
  auto x = gb.input("x", dtype::float32, {5});
  NDArray c = nnvm_test::random_array(dtype::float32, {5}, 1);
  auto c1 = gb.constant("c1", c), c2 = gb.constant("c2", c);
  auto a = gb.op("add", {x, c1}, {}, "a"), b = gb.op("add", {x, c2}, {}, "b");
  gb.output(gb.op("mul", {gb.op("relu", {a}), gb.op("relu", {b})}, {}, "y"));
  auto g = graph::eliminate_dead_code(graph::eliminate_common_subexpressions(gb.build()));
  CHECK(count_ops(g, "add") == 1);
  CHECK(count_ops(g, "relu") == 1);
  graph::validate(g);
  auto model = graph::compile(g);
  NDArray xv = nnvm_test::random_array(dtype::float32, {5}, 2);
  NDArray result = model.run({xv})[0];
  auto out = result.values<float>();
  for (size_t i = 0; i < 5; ++i) {
    float r = relu(xv.values<float>()[i] + c.values<float>()[i]);
    CHECK(out[i] == doctest::Approx(r * r));
  }
}

TEST_CASE("constant folding evaluates op chains on constants and leaves the rest") {
  GraphBuilder gb("fold");
  NDArray a = nnvm_test::random_array(dtype::float32, {2, 3}, 3);
  auto s = gb.op("exp", {gb.op("neg", {gb.constant("a", a)})}, {}, "s");
  auto x = gb.input("x", dtype::float32, {2, 3});
  gb.output(gb.op("add", {x, s}, {}, "y"));
  auto g = graph::fold_constants(gb.build());
  CHECK(count_ops(g, "exp") == 0);
  CHECK(count_ops(g, "neg") == 0);
  CHECK(count_ops(g, "add") == 1);
  const auto& folded = *g.nodes[g.find("s")].data;
  for (size_t i = 0; i < 6; ++i) CHECK(folded.values<float>()[i] == doctest::Approx(std::exp(-a.values<float>()[i])));
}

TEST_CASE("an elementwise chain fuses into one kernel; a value read outside its group stays an output") {
  GraphBuilder gb("chain");
  auto x = gb.input("x", dtype::float32, {7, 9});
  auto y = gb.input("y", dtype::float32, {9});
  auto a = gb.op("add", {x, y}, {}, "a");        // broadcast
  auto r = gb.op("relu", {a}, {}, "r");          // read twice below
  auto e = gb.op("exp", {gb.op("neg", {r})}, {}, "e");
  gb.output(gb.op("mul", {e, r}, {}, "out"));
  gb.output(r);
  auto model = graph::compile(gb.build());
  CHECK(model.steps().size() == 2);
  NDArray xv = nnvm_test::random_array(dtype::float32, {7, 9}, 4), yv = nnvm_test::random_array(dtype::float32, {9}, 5);
  auto outs = model.run({xv, yv});
  std::vector<float> want_out, want_r;
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 9; ++j) {
      float rv = relu(xv.values<float>()[size_t(i * 9 + j)] + yv.values<float>()[size_t(j)]);
      want_r.push_back(rv);
      want_out.push_back(std::exp(-rv) * rv);
    }
  CHECK(nnvm_test::compare<float>(outs[0].values<float>(), want_out).empty());
  CHECK(nnvm_test::compare<float>(outs[1].values<float>(), want_r).empty());
}

TEST_CASE("which epilogues a master takes follows the target family's fused schedules") {
  GraphBuilder gb("conv_then_epilogues");
  auto x = gb.input("x", dtype::float32, {1, 2, 6, 6, 4});    // NCHW4c
  auto w = gb.input("w", dtype::float32, {2, 2, 3, 3, 4, 4});  // OIHW4i4o
  auto c = gb.op("conv_nchwc", {x, w}, {}, "conv");
  auto r = gb.op("relu", {c}, {}, "r");
  gb.output(gb.op("transpose", {r}, ops::Attrs().set_ints("perm", {0, 1, 2, 4, 3}), "t"));
  auto g = gb.build();
  size_t conv = g.find("conv"), relu = g.find("r"), transpose = g.find("t");
  // The CPU's blocked conv schedule applies elementwise epilogues at write-back only, so the
  // transpose starts a kernel of its own.
  auto cpu = graph::fusion_groups(g, {.family = target::Family::cpu});
  CHECK(cpu[relu] == cpu[conv]);
  CHECK(cpu[transpose] != cpu[conv]);
  // The GPU has no fused conv schedule: its generic recipe computes the group's stages at the
  // root, so an injective consumer joins like any other.
  auto gpu = graph::fusion_groups(g, {.family = target::Family::gpu});
  CHECK(gpu[relu] == gpu[conv]);
  CHECK(gpu[transpose] == gpu[conv]);
}

TEST_CASE("memory planning reuses activation storage by liveness") {
  GraphBuilder gb("pingpong");
  auto v = gb.input("x", dtype::float32, {64, 64});
  const char* ops[] = {"relu", "neg", "exp", "neg", "relu", "neg"};
  for (auto* op : ops) v = gb.op(op, {v});
  gb.output(v);
  auto g = gb.build();
  auto model = graph::compile(g, {.opt_level = 1});  // no fusion: six kernels, five intermediates
  CHECK(model.steps().size() == 6);
  const uint64_t bytes = 64 * 64 * 4;
  CHECK(model.memory().unplanned_bytes == 5 * bytes);
  CHECK(model.memory().arena_bytes == 2 * bytes);
  CHECK(model.memory().output_bytes == bytes);
  NDArray x = nnvm_test::random_array(dtype::float32, {64, 64}, 6);
  NDArray result = model.run({x})[0];
  auto out = result.values<float>();
  for (size_t i = 0; i < out.size(); ++i) {
    float t = -relu(std::exp(-(-relu(x.values<float>()[i]))));
    CHECK(out[i] == doctest::Approx(-relu(t)));
  }
}

TEST_CASE("plan_memory never overlaps buffers that are alive together") {
  std::vector<graph::BufferLifetime> b{{100, 0, 3}, {200, 1, 2}, {50, 2, 5}, {300, 4, 6}, {10, 0, 6}};
  auto plan = graph::plan_memory(b);
  for (size_t i = 0; i < b.size(); ++i)
    for (size_t j = i + 1; j < b.size(); ++j) {
      bool together = !(b[i].last < b[j].first || b[j].last < b[i].first);
      bool apart = plan.offsets[i] + b[i].bytes <= plan.offsets[j] || plan.offsets[j] + b[j].bytes <= plan.offsets[i];
      CHECK((!together || apart));
    }
  CHECK(plan.arena_bytes <= plan.unplanned_bytes);
}

TEST_CASE("a consumer joins its producer's kernel only when its other inputs are computed before it") {
  // where(less(x, 0), mul(a, x), x): mul comes after less, so where may not join less's kernel
  // (which runs where less stands); that ordering once made where read mul before it was written.
  GraphBuilder gb("order");
  auto x = gb.input("x", dtype::float32, {3, 4, 5});
  auto l = gb.op("less", {x, gb.constant("z", NDArray::from(std::vector<float>{0.0f}, {}))});
  auto m = gb.op("mul", {gb.constant("a", NDArray::from(std::vector<float>{0.1f}, {})), x});
  gb.output(gb.op("where", {l, m, x}));
  auto model = graph::compile(gb.build());
  NDArray xv = nnvm_test::random_array(dtype::float32, {3, 4, 5}, 9);
  NDArray out = model.run({xv})[0];
  for (size_t i = 0; i < 60; ++i) {
    float v = xv.values<float>()[i];
    CHECK(out.values<float>()[i] == doctest::Approx(v < 0 ? 0.1f * v : v));
  }
}

}  // namespace graph_passes
