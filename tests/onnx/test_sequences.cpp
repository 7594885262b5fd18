// ONNX sequences of tensors whose length and element shapes are known at compile time: the
// sequence ops evaluated at import, SequenceMap inlined per element, a Loop that carries a
// sequence unrolled, sequence inputs and outputs one graph value per element. Models built here,
// results checked against plain loops written from the ONNX spec; misuse gets named errors.
#include "support/pch.hpp"
#include "support/check.hpp"

#include "onnx_test_util.hpp"

namespace onnx_sequences {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;
using nnvm_test::error_of;

namespace {

onnx::ValueInfoProto* sequence_input(Model& m, const std::string& name, int elem) {
  auto* v = m.g().add_input();
  v->set_name(name);
  v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(elem);
  return v;
}
onnx::TensorProto* ints(Model& m, const std::string& name, std::vector<int64_t> v, std::vector<int64_t> dims) {
  auto* t = m.initializer(name, T::INT64, std::move(dims));
  for (int64_t e : v) t->add_int64_data(e);
  return t;
}

}  // namespace

TEST_CASE("onnx sequences: split, insert, erase, at, length and concat, evaluated at import") {
  // x [2, 3] split into its 3 columns ([2, 1] each); insert -x's column 0 at position 1; erase
  // the last; concat along a new axis 0 -> [3, 2, 1]; also the length and element 1.
  Model m(17);
  m.input("x", T::FLOAT, {2, 3});
  m.node("Neg", {"x"}, {"nx"});
  attr_int(m.node("SplitToSequence", {"x"}, {"cols"}), "axis", 1);
  ints(m, "one", {1}, {});
  ints(m, "zero1", {0}, {1});
  ints(m, "one1", {1}, {1});
  m.node("Slice", {"nx", "zero1", "one1", "one1"}, {"ncol0"});  // -x[:, 0:1]
  m.node("SequenceInsert", {"cols", "ncol0", "one"}, {"inserted"});
  m.node("SequenceErase", {"inserted"}, {"erased"});
  auto* concat = m.node("ConcatFromSequence", {"erased"}, {"stacked"});
  attr_int(concat, "axis", 0);
  attr_int(concat, "new_axis", 1);
  m.node("SequenceLength", {"erased"}, {"length"});
  m.node("SequenceAt", {"erased", "one"}, {"second"});
  m.output("stacked");
  m.output("length");
  m.output("second");
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto got = graph::compile(oi::import_model(m.save(scratch("seq_ops")))).run({NDArray::from(x, {2, 3})});
  // Elements after insert: col0, -col0, col1, col2; after erase: col0, -col0, col1.
  std::vector<float> want = {x[0], x[3], -x[0], -x[3], x[1], x[4]};
  REQUIRE(got[0].shape() == std::vector<int64_t>{3, 2, 1});
  CHECK(elements<float>(got[0]) == want);
  CHECK(got[1].values<int64_t>()[0] == 3);
  CHECK(elements<float>(got[2]) == std::vector<float>{-x[0], -x[3]});
}

TEST_CASE("onnx sequences: a sequence input, SequenceMap with a tensor, a sequence output") {
  Model m(17);
  sequence_input(m, "xs", T::FLOAT);
  m.input("b", T::FLOAT, {1});
  auto* map = m.node("SequenceMap", {"xs", "b"}, {"ys"});
  auto* body = attr_graph(map, "body")->mutable_g();
  sub_input(body, "x");
  sub_input(body, "bias");
  sub_node(body, "Add", {"x", "bias"}, {"y"});
  body->add_output()->set_name("y");
  m.output("ys");
  oi::ImportOptions o;
  o.sequence_inputs["xs"] = {{2}, {3}};  // elements of different lengths
  graph::Graph g = oi::import_model(m.save(scratch("seq_map")), o);
  CHECK(g.inputs().size() == 3);  // xs[0], xs[1], b
  CHECK(g.outputs.size() == 2);
  auto got = graph::compile(g).run({NDArray::from(std::vector<float>{1, 2}, {2}),
                                    NDArray::from(std::vector<float>{3, 4, 5}, {3}),
                                    NDArray::from(std::vector<float>{0.5f}, {1})});
  CHECK(elements<float>(got[0]) == std::vector<float>{1.5f, 2.5f});
  CHECK(elements<float>(got[1]) == std::vector<float>{3.5f, 4.5f, 5.5f});

  auto [id, text] = error_of([&] { oi::import_model(m.save(scratch("seq_map_no_shapes"))); });
  CHECK(id == "nnvm.onnx.shape");
  CHECK(text.find("sequence_inputs") != std::string::npos);
}

TEST_CASE("onnx sequences: a Loop that carries a sequence is unrolled, each iteration's slice known") {
  // Iteration i appends x[0 : i + 1]; the result is concatenated: [1, 1, 2, 1, 2, 3].
  Model m(13);
  auto* x = m.initializer("x", T::FLOAT, {3});
  for (float v : {1.0f, 2.0f, 3.0f}) x->add_float_data(v);
  ints(m, "M", {3}, {});
  m.node("SequenceEmpty", {}, {"empty"});
  auto* loop = m.node("Loop", {"M", "", "empty"}, {"seq"}, "loop");
  auto* body = attr_graph(loop, "body")->mutable_g();
  sub_input(body, "i");
  sub_input(body, "c");
  sub_input(body, "s");
  auto* one = body->add_initializer();
  one->set_name("one");
  one->set_data_type(T::INT64);
  one->add_int64_data(1);
  auto* zero = body->add_initializer();
  zero->set_name("start");
  zero->set_data_type(T::INT64);
  zero->add_dims(1);
  zero->add_int64_data(0);
  sub_node(body, "Add", {"i", "one"}, {"end"});
  auto* axes = body->add_initializer();
  axes->set_name("axes");
  axes->set_data_type(T::INT64);
  axes->add_dims(1);
  axes->add_int64_data(0);
  sub_node(body, "Unsqueeze", {"end", "axes"}, {"end1"});
  sub_node(body, "Slice", {"x", "start", "end1"}, {"piece"});
  sub_node(body, "SequenceInsert", {"s", "piece"}, {"s_out"});
  sub_node(body, "Identity", {"c"}, {"c_out"});
  body->add_output()->set_name("c_out");
  body->add_output()->set_name("s_out");
  attr_int(m.node("ConcatFromSequence", {"seq"}, {"flat"}), "axis", 0);
  m.output("flat");
  auto got = graph::compile(oi::import_model(m.save(scratch("seq_loop")))).run({});
  std::vector<float> want;
  for (int i = 0; i < 3; ++i)
    for (int k = 0; k <= i; ++k) want.push_back(float(k + 1));
  CHECK(elements<float>(got[0]) == want);
}

TEST_CASE("onnx sequences: positions must be known at compile time; other ops do not take sequences") {
  // row = SequenceAt(SplitToSequence(x), position), x float[2, 3].
  auto row_at = [](Model& m, const std::string& position) {
    m.input("x", T::FLOAT, {2, 3});
    m.node("SplitToSequence", {"x"}, {"rows"});
    m.node("SequenceAt", {"rows", position}, {"row"});
    m.output("row");
  };
  Model m(17);
  row_at(m, "pos");
  m.input("pos", T::INT64, {});
  auto [id, text] = error_of([&] { oi::import_model(m.save(scratch("seq_pos"))); });
  CHECK(id == "nnvm.graph.not_constant");
  CHECK(text.find("graph input pos") != std::string::npos);

  // A position of another type is refused, not misread.
  Model f(17);
  row_at(f, "half");
  f.initializer("half", T::FLOAT, {})->add_float_data(0.5f);
  auto [fid, ftext] = error_of([&] { oi::import_model(f.save(scratch("seq_float_pos"))); });
  CHECK(fid == "nnvm.onnx.shape");
  CHECK(ftext.find("position is float32; it must be int32 or int64") != std::string::npos);

  Model r(17);
  r.input("x", T::FLOAT, {2, 3});
  r.node("SplitToSequence", {"x"}, {"rows"});
  r.node("Relu", {"rows"}, {"y"});
  r.output("y");
  auto [rid, rtext] = error_of([&] { oi::import_model(r.save(scratch("seq_relu"))); });
  CHECK(rid == "nnvm.onnx.unsupported");
  CHECK(rtext.find("'rows' is a sequence, which Relu does not take") != std::string::npos);
}

}  // namespace onnx_sequences
