// The bounds a hostile model meets in the core (nnvm/limits.hpp): the 2^48-byte tensor bound in
// NDArray, inference and bind_shapes; the constant-folding budget; constant indices checked
// against their axis; control characters escaped in messages.
#include "support/pch.hpp"

#include "nnvm/graph/graph.hpp"

namespace graph_limits {

using namespace nnvm;
using namespace nnvm::graph;

namespace {
template <class F>
std::pair<std::string, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.id(), e.what()};
  }
  return {"(no error)", ""};
}
bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("limits: checked_tensor_bytes allows 2^48 bytes and no more, without wrapping") {
  using V = std::vector<int64_t>;
  CHECK(checked_tensor_bytes(V{int64_t(1) << 46}, 4) == max_tensor_bytes);
  CHECK(!checked_tensor_bytes(V{(int64_t(1) << 46) + 1}, 4));
  CHECK(!checked_tensor_bytes(V{int64_t(1) << 32, int64_t(1) << 32}, 1));  // wraps to 0 in 64 bits
  CHECK(!checked_tensor_bytes(V{int64_t(1) << 62, 3}, 4));
  CHECK(!checked_tensor_bytes(V{-1, 4}, 4));
  CHECK(checked_tensor_bytes(V{0, int64_t(1) << 62, int64_t(1) << 62}, 4) == 0u);  // empty
  CHECK(checked_tensor_bytes(V{}, 8) == 8u);                                        // a scalar
}

TEST_CASE("limits: printable escapes control characters, keeps the rest") {
  CHECK(printable("conv1/weight") == "conv1/weight");
  CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(printable("\x1b[31mred\x7f\n") == "\\x1b[31mred\\x7f\\x0a");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 passes through
}

TEST_CASE("limits: NDArray refuses tensors over 2^48 bytes before allocating") {
  auto [id, text] = error_of([] { NDArray(dtype::float32, {int64_t(1) << 32, int64_t(1) << 32}); });
  CHECK(id == "nnvm.ndarray.too_large");
  CHECK(contains(text, "shape [4294967296, 4294967296]"));
  CHECK(error_of([] { NDArray(dtype::float32, {0, int64_t(1) << 62}); }).first == "(no error)");
}

TEST_CASE("limits: inference and bind_shapes name the node whose type is too large") {
  GraphBuilder b("big");
  auto [id, text] = error_of([&] { b.input("x", dtype::float32, {int64_t(1) << 31, int64_t(1) << 31}); });
  CHECK(id == "nnvm.graph.too_large");
  CHECK(contains(text, "graph big \u203a node x"));

  // Each input fits; the broadcast of the two does not.
  auto a = b.input("a", dtype::float32, {int64_t(1) << 24, 1});
  auto c = b.input("c", dtype::float32, {1, int64_t(1) << 24});
  std::tie(id, text) = error_of([&] { b.op("add", {a, c}, {}, "outer"); });
  CHECK(id == "nnvm.graph.too_large");
  CHECK(contains(text, "output 0 would be a float32 tensor of shape [16777216, 16777216]"));
  CHECK(contains(text, "node outer"));

  // A symbolic extent is checked once it is bound.
  GraphBuilder s("sym");
  ir::Var n("n");
  s.output(s.op("relu", {s.input("x", dtype::float32, {n, int64_t(1) << 40})}, {}, "relu"));
  Graph g = s.build();
  std::tie(id, text) = error_of([&] { bind_shapes(g, {{"n", int64_t(1) << 20}}); });
  CHECK(id == "nnvm.graph.too_large");
  CHECK(error_of([&] { bind_shapes(g, {{"n", 2}}); }).first == "(no error)");
}

TEST_CASE("limits: constant folding stops at its budget and leaves the rest as ops") {
  // Three 1 MiB results with a 2.5 MiB budget: two fold, the third stays an op.
  GraphBuilder b("budget");
  b.fold_constants(true, FoldBudget{5 << 19});
  auto shape = b.constant("shape", NDArray::from(std::vector<int64_t>{1 << 18}, {1}));
  auto one = b.constant("one", NDArray::from(std::vector<float>{1.0f}, {}));
  std::vector<Value> v;
  for (int i = 0; i < 3; ++i) v.push_back(b.op("expand", {one, shape}, {}, str_cat("e", i)));
  CHECK(b.graph().node(v[0]).kind == NodeKind::constant);
  CHECK(b.graph().node(v[1]).kind == NodeKind::constant);
  CHECK(b.graph().node(v[2]).kind == NodeKind::op);
  // Tiny results (shape arithmetic) fold whatever is left.
  auto small = b.op("add", {one, one}, {}, "small");
  CHECK(b.graph().node(small).kind == NodeKind::constant);

  // The compile-time pass has its own budget.
  GraphBuilder u("pass");
  auto s2 = u.constant("shape", NDArray::from(std::vector<int64_t>{1 << 18}, {1}));
  auto one2 = u.constant("one", NDArray::from(std::vector<float>{1.0f}, {}));
  for (int i = 0; i < 3; ++i) u.output(u.op("expand", {one2, s2}, {}, str_cat("e", i)));
  Graph folded = fold_constants(u.build(), {.budget = FoldBudget{5 << 19}});
  size_t ops = 0;
  for (auto& n : folded.nodes) ops += n.kind == NodeKind::op;
  CHECK(ops == 1);
}

TEST_CASE("limits: constant indices out of range are refused when the node is added") {
  GraphBuilder b("gather");
  auto data = b.input("data", dtype::float32, {3, 4});
  auto bad = b.constant("idx", NDArray::from(std::vector<int64_t>{0, 4}, {2}));
  auto [id, text] = error_of([&] { b.op("gather", {data, bad}, ops::Attrs().set_int("axis", 1), "pick"); });
  CHECK(id == "nnvm.ops.index_range");
  CHECK(contains(text, "indices holds 4 at flat position 1, outside [-4, 4) for axis 1 of data"));
  CHECK(contains(text, "node pick \u203a op gather \u203a input indices"));
  auto ok = b.constant("ok", NDArray::from(std::vector<int64_t>{-4, 3}, {2}));
  CHECK(error_of([&] { b.op("gather", {data, ok}, ops::Attrs().set_int("axis", 1)); }).first == "(no error)");
}

TEST_CASE("limits: a lowering or interpreter error while folding names the node") {
  // An op whose compute reads a tensor that is not one of its inputs: lowering it for the
  // interpreter fails, and the error must say which node was being folded.
  ops::OpRegistry r = ops::OpRegistry::with_builtins();
  r.register_op(ops::OpDef{
      .name = "reads_outside",
      .input_names = {"x"},
      .compute =
          [](const std::vector<te::Tensor>& in, const ops::Attrs&) {
            te::Tensor hidden = te::placeholder({ir::Expr(int64_t(1))}, dtype::float32, "hidden");
            te::Tensor x = in[0];
            return std::vector<te::Tensor>{te::compute(
                x.shape(),
                [&](const std::vector<ir::Var>& v) {
                  return x(std::vector<ir::Expr>(v.begin(), v.end())) + hidden(std::vector<ir::Expr>{ir::Expr(int64_t(0))});
                },
                "out")};
          },
  });
  GraphBuilder b("fold", r);
  b.fold_constants();
  auto x = b.constant("x", NDArray::from(std::vector<float>{7}, {1}));
  auto [id, text] = error_of([&] { b.op("reads_outside", {x}, {}, "odd"); });
  CAPTURE(text);
  CHECK(id == "nnvm.lower.missing_arg");
  CHECK(contains(text, "node odd \u203a constant folding"));
}

}  // namespace graph_limits
