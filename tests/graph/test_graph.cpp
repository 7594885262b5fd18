// The graph layer: building an MLP in code, shape/dtype inference with a symbolic batch, binding
// it, the text and DOT printers, and the error ids of malformed graphs.
#include "support/pch.hpp"
#include "support/check.hpp"

#include "nnvm/graph/graph.hpp"

namespace graph_graph {

using namespace nnvm;
using namespace nnvm::graph;
using nnvm_test::error_id;

namespace {

template <class F>
const Error* caught(F&& f, std::unique_ptr<Error>& keep) {
  try {
    f();
  } catch (const Error& e) {
    keep = std::make_unique<Error>(e);
  }
  return keep.get();
}
template <class F>
std::string error_text(F&& f) {
  std::unique_ptr<Error> e;
  return caught(f, e) ? e->what() : "(no error)";
}

NDArray filled(std::vector<int64_t> shape) {
  NDArray a(dtype::float32, std::move(shape));
  auto v = a.values<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i % 7) * 0.25f;
  return a;
}

// dense → relu → dense → softmax over a batch `n` left symbolic.
struct Mlp {
  ir::Var n{"n"};
  int64_t in = 4, hidden = 8, out = 3;
  Graph g;
  Mlp() {
    GraphBuilder b("mlp");
    auto x = b.input("x", dtype::float32, {n, in});
    auto w1 = b.constant("w1", filled({in, hidden}));
    auto b1 = b.constant("b1", filled({hidden}));
    auto w2 = b.constant("w2", filled({out, hidden}));
    auto h = b.op("relu", {b.op("dense", {x, w1, b1})});
    auto y = b.op("dense", {h, w2}, Attrs().set_int("transB", 1), "fc2");
    b.output(b.op("softmax", {y}, Attrs().set_int("axis", 1), "probs"));
    g = b.build();
  }
};

bool same_shape(const TensorType& t, const std::vector<ir::Expr>& want) {
  if (t.shape.size() != want.size()) return false;
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t* a = ir::as_const_int(t.shape[i]);
    const int64_t* b = ir::as_const_int(want[i]);
    if (a && b ? *a != *b : !t.shape[i].same_as(want[i])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("graph: an MLP built in code has the shapes its weights imply") {
  Mlp m;
  REQUIRE(m.g.nodes.size() == 8);
  CHECK(m.g.inputs() == std::vector<size_t>{0});
  CHECK(m.g.nodes[4].name == "dense_0");
  CHECK(m.g.nodes[5].name == "relu_0");
  // Reference: each node's output extents from the weight shapes and the batch symbol.
  std::map<std::string, std::vector<ir::Expr>> want = {
      {"dense_0", {m.n, m.hidden}},
      {"relu_0", {m.n, m.hidden}},
      {"fc2", {m.n, m.out}},
      {"probs", {m.n, m.out}},
  };
  for (auto& [name, shape] : want) {
    size_t i = m.g.find(name);
    REQUIRE(i != Value::npos);
    CAPTURE(name);
    CHECK(m.g.nodes[i].types.size() == 1);
    CHECK(m.g.nodes[i].types[0].dtype == dtype::float32);
    CHECK(same_shape(m.g.nodes[i].types[0], shape));
  }
  CHECK(m.g.type(m.g.outputs[0]).dtype == dtype::float32);
  CHECK(symbolic_dims(m.g) == std::vector<std::string>{"n"});
  // Constants are shared, not copied, when the graph is copied.
  Graph copy = m.g;
  CHECK(copy.nodes[1].data.get() == m.g.nodes[1].data.get());
  CHECK(m.g.nodes[1].data->values<float>()[3] == 0.75f);
}

TEST_CASE("graph: bind_shapes replaces the batch and re-infers every node") {
  Mlp m;
  for (int64_t batch : {1, 5}) {
    Graph b = bind_shapes(m.g, {{"n", batch}});
    for (auto& node : b.nodes)
      for (auto& t : node.types)
        for (auto& d : t.shape) CHECK(ir::as_const_int(d) != nullptr);
    CHECK(same_shape(b.type(b.outputs[0]), {batch, m.out}));
    CHECK(same_shape(b.nodes[b.find("relu_0")].types[0], {batch, m.hidden}));
    CHECK(symbolic_dims(b).empty());
  }
  CHECK(symbolic_dims(m.g) == std::vector<std::string>{"n"});  // the original is unchanged
  CHECK(error_id([&] { bind_shapes(m.g, {{"batch", 1}}); }) == "nnvm.graph.unknown_dim");
  CHECK(error_text([&] { bind_shapes(m.g, {{"batch", 1}}); }).find("symbolic: n") != std::string::npos);
  CHECK(error_id([&] { bind_shapes(m.g, {{"n", -1}}); }) == "nnvm.graph.bad_dim");
}

TEST_CASE("graph: the text printout") {
  Mlp m;
  CHECK(to_string(m.g) ==
        "graph mlp(%x: float32[n, 4]) {\n"
        "  %w1 = constant float32[4, 8]\n"
        "  %b1 = constant float32[8]\n"
        "  %w2 = constant float32[3, 8]\n"
        "  %dense_0 = dense(%x, %w1, %b1) : float32[n, 8]\n"
        "  %relu_0 = relu(%dense_0) : float32[n, 8]\n"
        "  %fc2 = dense(%relu_0, %w2) {transB=1} : float32[n, 3]\n"
        "  %probs = softmax(%fc2) {axis=1} : float32[n, 3]\n"
        "  return %probs\n"
        "}\n");
  Attrs a;
  a.set_float("alpha", 0.5).set_string("mode", "a\"b").set_ints("pads", {1, 2}).set_floats("s", {1.5});
  CHECK(graph::to_string(a) == "{alpha=0.5, mode=\"a\\\"b\", pads=[1, 2], s=[1.5]}");
}

TEST_CASE("graph: DOT export has a node per graph node and an edge per use") {
  Mlp m;
  std::string dot = to_dot(m.g);
  CHECK(dot.rfind("digraph \"mlp\" {\n", 0) == 0);
  CHECK(dot.find("n0 [label=\"x\\ninput\\nfloat32[n, 4]\", style=rounded];") != std::string::npos);
  CHECK(dot.find("n6 [label=\"fc2\\ndense\\n{transB=1}\"];") != std::string::npos);
  // Reference: one edge line per (input, consumer) pair, counted from the graph itself.
  size_t uses = 0;
  for (size_t i = 0; i < m.g.nodes.size(); ++i)
    for (auto& v : m.g.nodes[i].inputs) {
      ++uses;
      CHECK(dot.find(str_cat("  n", v.node, " -> n", i, " [label=")) != std::string::npos);
    }
  size_t arrows = 0;
  for (size_t p = dot.find("->"); p != std::string::npos; p = dot.find("->", p + 1)) ++arrows;
  CHECK(arrows == uses + 1);  // plus the graph output
  CHECK(dot.find("n7 -> out0 [label=\"float32[n, 3]\"];") != std::string::npos);
}

TEST_CASE("graph: malformed graphs fail with ids that name the graph and node") {
  GraphBuilder b("bad");
  auto x = b.input("x", dtype::float32, {2, 4});
  auto w = b.constant("w", filled({5, 3}));
  CHECK(error_id([&] { b.op("reluu", {x}); }) == "nnvm.graph.unknown_op");
  CHECK(error_text([&] { b.op("reluu", {x}, {}, "r"); }).find("did you mean 'relu'? (graph bad \u203a node r)") !=
        std::string::npos);
  CHECK(error_id([&] { b.op("relu", {x, x}); }) == "nnvm.graph.input_count");
  CHECK(error_id([&] { b.op("dense", {x}); }) == "nnvm.graph.input_count");
  CHECK(error_id([&] { b.op("relu", {Value{}}); }) == "nnvm.graph.dangling_value");
  CHECK(error_id([&] { b.op("relu", {Value{42, 0}}); }) == "nnvm.graph.dangling_value");
  CHECK(error_id([&] { b.op("relu", {Value{x.node, 1}}); }) == "nnvm.graph.dangling_value");
  CHECK(error_id([&] { b.input("x", dtype::float32, {1}); }) == "nnvm.graph.duplicate_name");
  CHECK(error_id([&] { b.op("relu", {x}, {}, "w"); }) == "nnvm.graph.duplicate_name");
  // The op's own errors keep their ids and gain graph › node as the outer context.
  std::unique_ptr<Error> e;
  REQUIRE(caught([&] { b.op("dense", {x, w}, {}, "fc"); }, e));
  CHECK(e->id() == "nnvm.ops.input_shape");
  REQUIRE(e->context().size() >= 3);
  CHECK(e->context()[0] == "graph bad");
  CHECK(e->context()[1] == "node fc");
  CHECK(e->context()[2] == "op dense");
  REQUIRE(caught([&] { b.op("softmax", {x}, Attrs().set_string("axis", "1"), "sm"); }, e));
  CHECK(e->id() == "nnvm.ops.attr");
  CHECK(e->context().back() == "attribute axis");
  // Failed calls left nothing behind; the builder goes on.
  CHECK(error_id([&] { b.build(); }) == "nnvm.graph.no_outputs");
  b.output(b.op("relu", {x}));
  Graph g = b.build();
  CHECK(g.nodes.size() == 3);
  CHECK(g.nodes[2].name == "relu_0");
}

TEST_CASE("graph: validate catches graphs edited by hand") {
  Mlp m;
  Graph g = m.g;
  g.nodes[5].name = "dense_0";
  CHECK(error_id([&] { validate(g); }) == "nnvm.graph.duplicate_name");
  g = m.g;
  std::swap(g.nodes[4], g.nodes[5]);  // a consumer before its producer
  CHECK(error_id([&] { validate(g); }) == "nnvm.graph.dangling_value");
  g = m.g;
  g.outputs = {Value{99, 0}};
  CHECK(error_id([&] { validate(g); }) == "nnvm.graph.dangling_value");
  g = m.g;
  g.nodes[1].data = std::make_shared<const NDArray>(filled({4, 9}));
  CHECK(error_id([&] { validate(g); }) == "nnvm.graph.invalid");
  g = m.g;
  g.nodes[5].op = "no_such_op";
  CHECK(error_id([&] { infer_types(g); }) == "nnvm.graph.unknown_op");
  // A registry without the built-ins knows none of them.
  ops::OpRegistry empty;
  GraphBuilder b("own", empty);
  auto x = b.input("x", dtype::float32, {2});
  CHECK(error_id([&] { b.op("relu", {x}); }) == "nnvm.graph.unknown_op");
}

}  // namespace graph_graph
