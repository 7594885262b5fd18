// ONNX If (run-time condition), Loop and Scan (opset 8 and 9+), imported as control nodes
// (graph/control.hpp), compiled and run; each result checked against a plain loop written here
// from the ONNX spec. Malformed nodes get errors that name what is wrong.
#include "support/pch.hpp"
#include "support/check.hpp"

#include "onnx_test_util.hpp"

namespace onnx_control_flow {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;
using nnvm_test::error_of;

namespace {

std::vector<NDArray> run(const Model& m, const std::string& name, const std::vector<NDArray>& inputs) {
  return graph::compile(oi::import_model(m.save(scratch(name)))).run(inputs);
}
void check_close(const NDArray& got, const std::vector<float>& want, const std::vector<int64_t>& shape) {
  REQUIRE(got.shape() == shape);
  std::vector<float> g = elements<float>(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(g[i] == doctest::Approx(want[i]).epsilon(1e-6));
}
onnx::TensorProto* int64_initializer(Model& m, const std::string& name, int64_t v) {
  auto* t = m.initializer(name, T::INT64, {});
  t->add_int64_data(v);
  return t;
}

// Scan body: s_out = s + x_t, row = s_out * 2.
void sum_body(onnx::NodeProto* scan) {
  auto* body = attr_graph(scan, "body")->mutable_g();
  sub_input(body, "s");
  sub_input(body, "x_t");
  sub_node(body, "Add", {"s", "x_t"}, {"s_out"});
  sub_node(body, "Add", {"s_out", "s_out"}, {"row"});
  body->add_output()->set_name("s_out");
  body->add_output()->set_name("row");
}

}  // namespace

TEST_CASE("onnx If at run time: the condition comes from an input, each branch reads the outer x") {
  Model m(18);
  m.input("x", T::FLOAT, {3});
  m.input("flag", T::FLOAT, {1});
  auto* zero = m.initializer("zero", T::FLOAT, {1});
  zero->add_float_data(0.0f);
  m.node("Greater", {"flag", "zero"}, {"cond"});
  auto* node = m.node("If", {"cond"}, {"out"}, "if");
  auto* then_g = attr_graph(node, "then_branch")->mutable_g();
  sub_node(then_g, "Neg", {"x"}, {"t"});
  then_g->add_output()->set_name("t");
  auto* else_g = attr_graph(node, "else_branch")->mutable_g();
  sub_node(else_g, "Abs", {"x"}, {"e"});
  else_g->add_output()->set_name("e");
  m.output("out");
  graph::CompiledModel model = graph::compile(oi::import_model(m.save(scratch("if_runtime"))));
  std::vector<float> x = {-1.5f, 2, 0.25f};
  NDArray xa = NDArray::from(x, {3});
  check_close(model.run({xa, NDArray::from(std::vector<float>{1}, {1})})[0], {1.5f, -2, -0.25f}, {3});
  check_close(model.run({xa, NDArray::from(std::vector<float>{-1}, {1})})[0], {1.5f, 2, 0.25f}, {3});

  // Branches of different shapes cannot run at run time: the condition must then be known at
  // compile time, and the error names the graph input it comes from.
  Model bad(18);
  bad.input("x", T::FLOAT, {4});
  bad.input("flag", T::BOOL, {});
  auto* b = bad.node("If", {"flag"}, {"out"}, "if");
  auto* bt = attr_graph(b, "then_branch")->mutable_g();
  sub_node(bt, "Neg", {"x"}, {"t"});
  bt->add_output()->set_name("t");
  auto* be = attr_graph(b, "else_branch")->mutable_g();
  attr_int(sub_node(be, "Split", {"x"}, {"a", "c"}), "num_outputs", 2);
  be->add_output()->set_name("a");
  bad.output("out");
  auto [id, text] = error_of([&] { oi::import_model(bad.save(scratch("if_shapes"))); });
  CHECK(id == "nnvm.graph.not_constant");
  CHECK(text.find("then branch") != std::string::npos);
  CHECK(text.find("graph input flag") != std::string::npos);
}

TEST_CASE("onnx Loop: carried value, scan output, a captured outer input, the iteration count") {
  // y_{i+1} = y_i + x * i for i < M (= 4); the scan output is y_{i+1} per iteration.
  Model m(13);
  m.input("y0", T::FLOAT, {2});
  m.input("x", T::FLOAT, {2});
  int64_initializer(m, "M", 4);
  auto* loop = m.node("Loop", {"M", "", "y0"}, {"y", "ys"}, "loop");
  auto* body = attr_graph(loop, "body")->mutable_g();
  sub_input(body, "i");
  sub_input(body, "c");
  sub_input(body, "y_in");
  attr_int(sub_node(body, "Cast", {"i"}, {"fi"}), "to", T::FLOAT);
  sub_node(body, "Mul", {"x", "fi"}, {"step"});
  sub_node(body, "Add", {"y_in", "step"}, {"y_out"});
  sub_node(body, "Identity", {"c"}, {"c_out"});
  for (auto* name : {"c_out", "y_out", "y_out"}) body->add_output()->set_name(name);
  m.output("y");
  m.output("ys");
  std::vector<float> y = {1, -1}, x = {0.5f, 2}, rows;
  for (int i = 0; i < 4; ++i) {
    for (size_t k = 0; k < 2; ++k) y[k] += x[k] * float(i);
    rows.insert(rows.end(), y.begin(), y.end());
  }
  auto got = run(m, "loop", {NDArray::from(std::vector<float>{1, -1}, {2}), NDArray::from(x, {2})});
  check_close(got[0], y, {2});
  check_close(got[1], rows, {4, 2});
}

TEST_CASE("onnx Scan (opset 11): scan axis 1, a reversed input, output rows placed along axis 1") {
  // x is [2, T=3], scanned along axis 1 from the last column; the rows go out as columns.
  Model m(11);
  m.input("s0", T::FLOAT, {2});
  m.input("x", T::FLOAT, {2, 3});
  auto* scan = m.node("Scan", {"s0", "x"}, {"s", "cols"}, "scan");
  attr_int(scan, "num_scan_inputs", 1);
  attr_ints(scan, "scan_input_axes", {1});
  attr_ints(scan, "scan_input_directions", {1});
  attr_ints(scan, "scan_output_axes", {1});
  sum_body(scan);
  m.output("s");
  m.output("cols");
  std::vector<float> s = {0.5f, -1}, x = {1, 2, 3, 4, 5, 6};
  std::vector<float> cols(6);
  for (int t = 0; t < 3; ++t) {
    int col = 2 - t;  // reversed input
    for (int k = 0; k < 2; ++k) {
      s[size_t(k)] += x[size_t(k * 3 + col)];
      cols[size_t(k * 3 + t)] = 2 * s[size_t(k)];  // row t of the output, placed as column t
    }
  }
  auto got = run(m, "scan11", {NDArray::from(std::vector<float>{0.5f, -1}, {2}), NDArray::from(x, {2, 3})});
  check_close(got[0], s, {2});
  check_close(got[1], cols, {2, 3});
}

TEST_CASE("onnx Scan (opset 8): a batch of 2, each row its own scan") {
  Model m(8);
  m.input("s0", T::FLOAT, {2, 2});
  m.input("x", T::FLOAT, {2, 3, 2});
  auto* scan = m.node("Scan", {"", "s0", "x"}, {"s", "rows"}, "scan");
  attr_int(scan, "num_scan_inputs", 1);
  sum_body(scan);
  m.output("s");
  m.output("rows");
  std::vector<float> s = {1, 2, -3, 0.5f}, x(12), rows(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i) * 0.25f - 1;
  std::vector<float> s0 = s;
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 3; ++t)
      for (int k = 0; k < 2; ++k) {
        s[size_t(b * 2 + k)] += x[size_t((b * 3 + t) * 2 + k)];
        rows[size_t((b * 3 + t) * 2 + k)] = 2 * s[size_t(b * 2 + k)];
      }
  auto got = run(m, "scan8", {NDArray::from(s0, {2, 2}), NDArray::from(x, {2, 3, 2})});
  check_close(got[0], s, {2, 2});
  check_close(got[1], rows, {2, 3, 2});
}

TEST_CASE("onnx Loop and Scan: malformed nodes get errors that say what is wrong") {
  auto import_error = [](Model& m, const std::string& name) {
    return error_of([&] { oi::import_model(m.save(scratch(name))); });
  };
  {
    Model m(11);
    m.input("s0", T::FLOAT, {2});
    m.input("x", T::FLOAT, {3, 2});
    auto* scan = m.node("Scan", {"s0", "x"}, {"s", "rows"}, "scan");
    attr_int(scan, "num_scan_inputs", 0);
    sum_body(scan);
    m.output("s");
    auto [id, text] = import_error(m, "scan_count");
    CHECK(id == "nnvm.onnx.attribute");
    CHECK(text.find("num_scan_inputs is 0") != std::string::npos);
  }
  {
    Model m(11);
    m.input("y0", T::FLOAT, {2});
    auto* loop = m.node("Loop", {"", "", "y0"}, {"y"}, "loop");
    auto* body = attr_graph(loop, "body")->mutable_g();
    sub_input(body, "i");  // cond and the carried value are missing
    body->add_output()->set_name("i");
    m.output("y");
    auto [id, text] = import_error(m, "loop_inputs");
    CHECK(id == "nnvm.onnx.graph");
    CHECK(text.find("declares 1 inputs; it takes 3") != std::string::npos);
  }
  {
    Model m(11);
    m.input("y0", T::FLOAT, {2});
    m.node("Loop", {"", "", "y0"}, {"y"}, "loop");
    m.output("y");
    auto [id, text] = import_error(m, "loop_body");
    CHECK(id == "nnvm.onnx.attribute");
    CHECK(text.find("no 'body' subgraph") != std::string::npos);
  }
  {
    Model m(8);
    m.input("lens", T::INT32, {1});
    m.input("s0", T::FLOAT, {1, 2});
    m.input("x", T::FLOAT, {1, 3, 2});
    auto* scan = m.node("Scan", {"lens", "s0", "x"}, {"s", "rows"}, "scan");
    attr_int(scan, "num_scan_inputs", 1);
    sum_body(scan);
    m.output("s");
    auto [id, text] = import_error(m, "scan8_lens");
    CHECK(id == "nnvm.onnx.unsupported");
    CHECK(text.find("sequence_lens") != std::string::npos);
  }
}

}  // namespace onnx_control_flow
