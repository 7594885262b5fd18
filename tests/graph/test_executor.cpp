// The executor: graphs built in code compile (one kernel per op, shared by identical uses) and
// run against plain loops; inputs are checked; one model runs from several threads at once;
// the builder folds constant subgraphs with the interpreter.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <thread>

namespace graph_executor {

using namespace nnvm;
using graph::GraphBuilder;
using nnvm_test::error_id;

namespace {

// y = softmax(relu(x * w + b)) over rows, by plain loops.
std::vector<float> mlp_reference(const NDArray& x, const NDArray& w, const NDArray& b, int64_t M, int64_t K,
                                 int64_t N) {
  auto xs = x.values<float>(), ws = w.values<float>(), bs = b.values<float>();
  std::vector<float> y(size_t(M * N));
  for (int64_t i = 0; i < M; ++i) {
    float mx = -INFINITY;
    for (int64_t j = 0; j < N; ++j) {
      float acc = bs[size_t(j)];
      for (int64_t k = 0; k < K; ++k) acc += xs[size_t(i * K + k)] * ws[size_t(k * N + j)];
      y[size_t(i * N + j)] = std::max(acc, 0.0f);
      mx = std::max(mx, y[size_t(i * N + j)]);
    }
    float sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += (y[size_t(i * N + j)] = std::exp(y[size_t(i * N + j)] - mx));
    for (int64_t j = 0; j < N; ++j) y[size_t(i * N + j)] /= sum;
  }
  return y;
}

struct Mlp {
  graph::Graph g;
  NDArray w, b;
};

Mlp make_mlp(ir::Expr batch, int64_t K, int64_t N) {
  Mlp m{{}, nnvm_test::random_array(dtype::float32, {K, N}, 2), nnvm_test::random_array(dtype::float32, {N}, 3)};
  GraphBuilder gb("mlp");
  auto x = gb.input("x", dtype::float32, {batch, K});
  auto w = gb.constant("w", m.w);
  auto b = gb.constant("b", m.b);
  auto h = gb.op("relu", {gb.op("dense", {x, w, b}, {}, "fc")}, {}, "act");
  gb.output(gb.op("softmax", {h}, ops::Attrs().set_int("axis", -1), "prob"));
  m.g = gb.build();
  return m;
}

}  // namespace

TEST_CASE("a dense → relu → softmax graph compiles and matches plain loops") {
  const int64_t M = 5, K = 13, N = 7;
  Mlp m = make_mlp(M, K, N);
  auto model = graph::compile(m.g);
  // dense and relu fuse into one kernel; softmax (a reduction) starts its own.
  CHECK(model.steps().size() == 2);
  CHECK(model.steps()[0].label == "dense+relu");
  NDArray x = nnvm_test::random_array(dtype::float32, {M, K}, 1);
  auto out = model.run({x});
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == std::vector<int64_t>{M, N});
  std::string diff = nnvm_test::compare<float>(out[0].values<float>(), mlp_reference(x, m.w, m.b, M, K, N));
  CHECK_MESSAGE(diff.empty(), diff);

  graph::Profile prof;
  model.run({x}, 1, &prof);
  REQUIRE(prof.entries.size() == 2);
  CHECK(prof.entries[0].node == "fc");
  CHECK(prof.entries[0].op == "dense+relu");

  auto unfused = graph::compile(m.g, {.opt_level = 0});
  CHECK(unfused.steps().size() == 3);
  diff = nnvm_test::compare<float>(unfused.run({x})[0].values<float>(), mlp_reference(x, m.w, m.b, M, K, N));
  CHECK_MESSAGE(diff.empty(), diff);
  CHECK(prof.table().find("softmax") != std::string::npos);
  CHECK(prof.chrome_trace().find("\"name\":\"prob\"") != std::string::npos);
}

TEST_CASE("symbolic batch sizes are bound at compile time; unbound ones are an error naming the extent") {
  ir::Var n("n");
  Mlp m = make_mlp(n, 6, 4);
  CHECK(error_id([&] { graph::compile(m.g); }) == "nnvm.compile.symbolic_extent");
  auto model = graph::compile(m.g, {.symbols = {{"n", 3}}});
  NDArray x = nnvm_test::random_array(dtype::float32, {3, 6}, 4);
  std::string diff = nnvm_test::compare<float>(model.run({x})[0].values<float>(), mlp_reference(x, m.w, m.b, 3, 6, 4));
  CHECK_MESSAGE(diff.empty(), diff);
}

TEST_CASE("run_into writes the outputs into the caller's arrays, run after run") {
  Mlp m = make_mlp(4, 5, 3);
  auto model = graph::compile(m.g);
  std::vector<NDArray> out{NDArray(dtype::float32, {4, 3})};
  const void* where = out[0].raw();
  for (uint64_t seed : {7, 8}) {
    NDArray x = nnvm_test::random_array(dtype::float32, {4, 5}, seed);
    model.run_into({x}, out);
    CHECK(out[0].raw() == where);
    std::string diff = nnvm_test::compare<float>(out[0].values<float>(), mlp_reference(x, m.w, m.b, 4, 5, 3));
    CHECK_MESSAGE(diff.empty(), diff);
  }
  NDArray x = nnvm_test::random_array(dtype::float32, {4, 5}, 9);
  std::vector<NDArray> none, wrong{NDArray(dtype::float32, {3, 4})}, two{out[0], out[0]};
  CHECK(error_id([&] { model.run_into({x}, none); }) == "nnvm.run.output");
  CHECK(error_id([&] { model.run_into({x}, wrong); }) == "nnvm.run.output");
  CHECK(error_id([&] { model.run_into({x}, two); }) == "nnvm.run.output");

  // Outputs that are an input, or one value shown twice, are copied into each array.
  GraphBuilder gb("passthrough");
  auto in = gb.input("x", dtype::float32, {2, 3});
  auto r = gb.op("relu", {in});
  gb.output(r);
  gb.output(r);
  gb.output(in);
  auto pass = graph::compile(gb.build());
  NDArray xv = nnvm_test::random_array(dtype::float32, {2, 3}, 10);
  std::vector<NDArray> outs(3, NDArray(dtype::float32, {2, 3}));
  pass.run_into({xv}, outs);
  for (size_t i = 0; i < 6; ++i) {
    float want = std::max(xv.values<float>()[i], 0.0f);
    CHECK(outs[0].values<float>()[i] == want);
    CHECK(outs[1].values<float>()[i] == want);
    CHECK(outs[2].values<float>()[i] == xv.values<float>()[i]);
  }
}

TEST_CASE("wrong inputs are reported by name and expected type") {
  Mlp m = make_mlp(2, 3, 4);
  auto model = graph::compile(m.g);
  CHECK(error_id([&] { model.run({}); }) == "nnvm.run.input");
  CHECK(error_id([&] { model.run({NDArray(dtype::float32, {2, 5})}); }) == "nnvm.run.input");
  CHECK(error_id([&] { model.run({NDArray(dtype::float64, {2, 3})}); }) == "nnvm.run.input");
  try {
    model.run({NDArray(dtype::float32, {2, 5})});
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("input 'x' is float32 [2x5] but the model expects float32 [2x3]") !=
          std::string::npos);
  }
}

TEST_CASE("identical op uses share one kernel") {
  GraphBuilder gb("twice");
  auto x = gb.input("x", dtype::float32, {4, 9});
  auto y = gb.input("y", dtype::float32, {4, 9});
  gb.output(gb.op("add", {gb.op("relu", {x}), gb.op("relu", {y})}));
  auto model = graph::compile(gb.build(), {.opt_level = 0});
  CHECK(model.steps().size() == 3);
  CHECK(model.kernels().size() == 2);
  NDArray a = nnvm_test::random_array(dtype::float32, {4, 9}, 5), b = nnvm_test::random_array(dtype::float32, {4, 9}, 6);
  auto out = model.run({a, b});
  std::vector<float> want;
  for (size_t i = 0; i < 36; ++i) want.push_back(std::max(a.values<float>()[i], 0.0f) + std::max(b.values<float>()[i], 0.0f));
  CHECK(nnvm_test::compare<float>(out[0].values<float>(), want).empty());
}

TEST_CASE("one compiled model runs from several threads at once") {
  const int64_t M = 16, K = 64, N = 32;
  Mlp m = make_mlp(M, K, N);
  const auto model = graph::compile(m.g);
  std::vector<NDArray> xs;
  for (uint32_t t = 0; t < 4; ++t) xs.push_back(nnvm_test::random_array(dtype::float32, {M, K}, 10 + t));
  std::vector<std::string> diffs(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        auto out = model.run({xs[t]});
        std::string d = nnvm_test::compare<float>(out[0].values<float>(), mlp_reference(xs[t], m.w, m.b, M, K, N));
        if (!d.empty()) diffs[t] = d;
      }
    });
  for (auto& th : threads) th.join();
  for (auto& d : diffs) CHECK_MESSAGE(d.empty(), d);
}

TEST_CASE("with folding on, the builder evaluates ops on constants and keeps the rest") {
  GraphBuilder gb("fold");
  gb.fold_constants();
  NDArray a = nnvm_test::random_array(dtype::float32, {3, 4}, 7), b = nnvm_test::random_array(dtype::float32, {4}, 8);
  auto ca = gb.constant("a", a), cb = gb.constant("b", b);
  auto s = gb.op("add", {ca, cb}, {}, "s");
  auto x = gb.input("x", dtype::float32, {3, 4});
  gb.output(gb.op("mul", {x, gb.op("relu", {s}, {}, "r")}, {}, "y"));
  auto g = gb.build();
  CHECK(g.nodes[size_t(g.find("s"))].kind == graph::NodeKind::constant);
  CHECK(g.nodes[size_t(g.find("r"))].kind == graph::NodeKind::constant);
  CHECK(g.nodes[size_t(g.find("y"))].kind == graph::NodeKind::op);
  auto& r = *g.nodes[size_t(g.find("r"))].data;
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j)
      CHECK(r.values<float>()[size_t(i * 4 + j)] ==
            std::max(a.values<float>()[size_t(i * 4 + j)] + b.values<float>()[size_t(j)], 0.0f));
}

}  // namespace graph_executor
