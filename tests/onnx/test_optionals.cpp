// ONNX optionals whose presence is known at compile time: a present optional is its element, an
// empty one (ImportOptions::empty_optional_inputs, or Optional without an input) is known to the
// importer by name; Optional, OptionalHasElement and OptionalGetElement are evaluated at import.
// Models built here, results checked against plain loops; misuse gets named errors.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <onnx/onnx-data_pb.h>

#include "onnx_test_util.hpp"

namespace onnx_optionals {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {

// A graph input of type optional(tensor(elem)[dims]).
void optional_input(Model& m, const std::string& name, int elem, std::vector<int64_t> dims) {
  auto* t = m.g().add_input();
  t->set_name(name);
  auto* tt = t->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}
// Optional() with its `type` attribute: an empty optional of float tensors.
void empty_optional(onnx::GraphProto* g, const std::string& out) {
  auto* n = sub_node(g, "Optional", {}, {out});
  auto* a = n->add_attribute();
  a->set_name("type");
  a->set_type(onnx::AttributeProto::TYPE_PROTO);
  a->mutable_tp()->mutable_tensor_type()->set_elem_type(T::FLOAT);
}
// y = Relu(maybe if it holds a value, else the constant `fallback`); also whether it holds one.
Model fallback_model(const std::vector<float>& fallback) {
  Model m(18);
  optional_input(m, "maybe", T::FLOAT, {3});
  m.node("OptionalHasElement", {"maybe"}, {"has"});
  m.node("Not", {"has"}, {"none"});
  auto* iff = m.node("If", {"none"}, {"chosen"});
  auto* then_g = attr_graph(iff, "then_branch")->mutable_g();
  auto* c = attr_tensor(sub_node(then_g, "Constant", {}, {"fallback"}), "value")->mutable_t();
  c->set_data_type(T::FLOAT);
  c->add_dims(3);
  for (float v : fallback) c->add_float_data(v);
  then_g->add_output()->set_name("fallback");
  auto* else_g = attr_graph(iff, "else_branch")->mutable_g();
  sub_node(else_g, "OptionalGetElement", {"maybe"}, {"value"});
  else_g->add_output()->set_name("value");
  m.node("Relu", {"chosen"}, {"y"});
  m.output("y");
  m.output("has");
  return m;
}
std::vector<float> relu(std::vector<float> v) {
  for (float& e : v) e = e > 0 ? e : 0;
  return v;
}

}  // namespace

TEST_CASE("onnx optionals: an optional input that holds a tensor, unwrapped, tested and taken by an If") {
  std::vector<float> x = {-1.5f, 2.0f, -3.0f}, fallback = {5.0f, -6.0f, 7.0f};
  std::string path = fallback_model(fallback).save(scratch("optional_present"));
  auto report = oi::check_support(path);
  CHECK(report.supported());
  CHECK(report.optionals == std::set<std::string>{"maybe"});
  graph::Graph g = oi::import_model(path);
  REQUIRE(g.inputs().size() == 1);  // the optional input, as its tensor
  auto got = graph::compile(g).run({NDArray::from(x, {3})});
  CHECK(elements<float>(got[0]) == relu(x));
  CHECK(got[1].values<bool>()[0]);
}

TEST_CASE("onnx optionals: an optional input given as empty takes the If's other branch") {
  std::vector<float> fallback = {5.0f, -6.0f, 7.0f};
  oi::ImportOptions o;
  o.empty_optional_inputs = {"maybe"};
  graph::Graph g = oi::import_model(fallback_model(fallback).save(scratch("optional_empty")), o);
  CHECK(g.inputs().empty());
  auto got = graph::compile(g).run({});
  CHECK(elements<float>(got[0]) == relu(fallback));
  CHECK(!got[1].values<bool>()[0]);
}

TEST_CASE("onnx optionals: Optional wraps a tensor or a sequence; an empty optional output gives no graph output") {
  Model m(18);
  m.input("x", T::FLOAT, {2});
  auto* seq = m.g().add_input();  // optional(sequence(float))
  seq->set_name("parts");
  seq->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_sequence_type()->mutable_elem_type()
      ->mutable_tensor_type()->set_elem_type(T::FLOAT);
  m.node("Optional", {"x"}, {"wrapped"});
  m.node("OptionalGetElement", {"wrapped"}, {"unwrapped"});
  m.node("Neg", {"unwrapped"}, {"negated"});
  m.node("OptionalGetElement", {"parts"}, {"part_list"});
  attr_int(m.node("ConcatFromSequence", {"part_list"}, {"joined"}), "axis", 0);
  empty_optional(&m.g(), "nothing");
  m.node("Identity", {"nothing"}, {"still_nothing"});
  m.node("OptionalHasElement", {"still_nothing"}, {"has"});
  m.node("OptionalHasElement", {}, {"has_no_input"});  // no input: an empty optional
  m.output("negated");
  m.output("still_nothing");
  m.output("joined");
  m.output("has");
  m.output("has_no_input");
  std::string path = m.save(scratch("optional_wrap"));
  auto report = oi::check_support(path);
  CHECK(report.supported());
  CHECK(report.optionals == std::set<std::string>{"parts"});
  CHECK(report.sequences == std::set<std::string>{"parts"});
  oi::ImportOptions o;
  o.sequence_inputs["parts"] = {{1}, {2}};
  graph::Graph g = oi::import_model(path, o);
  CHECK(g.inputs().size() == 3);     // x, parts[0], parts[1]
  REQUIRE(g.outputs.size() == 4);    // still_nothing gives none
  std::vector<float> x = {1.5f, -2.0f}, p0 = {3.0f}, p1 = {4.0f, 5.0f};
  auto got = graph::compile(g).run({NDArray::from(x, {2}), NDArray::from(p0, {1}), NDArray::from(p1, {2})});
  CHECK(elements<float>(got[0]) == std::vector<float>{-x[0], -x[1]});
  CHECK(elements<float>(got[1]) == std::vector<float>{p0[0], p1[0], p1[1]});
  CHECK(!got[2].values<bool>()[0]);
  CHECK(!got[3].values<bool>()[0]);
}

TEST_CASE("onnx optionals: misuse is named") {
  SUBCASE("OptionalGetElement of an empty optional") {
    Model m(18);
    empty_optional(&m.g(), "nothing");
    m.node("OptionalGetElement", {"nothing"}, {"y"}, "unwrap");
    m.output("y");
    auto [id, what] = error_of([&] { oi::import_model(m.save(scratch("optional_get_empty"))); });
    CHECK(id == "nnvm.onnx.graph");
    CHECK(what.find("OptionalGetElement of 'nothing', an empty optional") != std::string::npos);
    CHECK(what.find("node unwrap") != std::string::npos);
  }
  SUBCASE("an empty optional given to an op that takes tensors") {
    Model m(18);
    optional_input(m, "maybe", T::FLOAT, {3});
    m.node("Relu", {"maybe"}, {"y"}, "act");
    m.output("y");
    oi::ImportOptions o;
    o.empty_optional_inputs = {"maybe"};
    auto [id, what] = error_of([&] { oi::import_model(m.save(scratch("optional_to_relu")), o); });
    CHECK(id == "nnvm.onnx.unsupported");
    CHECK(what.find("input 'maybe' is an empty optional, which Relu does not take") != std::string::npos);
  }
  SUBCASE("empty_optional_inputs naming an input that is not optional") {
    Model m(18);
    m.input("x", T::FLOAT, {3});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    oi::ImportOptions o;
    o.empty_optional_inputs = {"x"};
    auto [id, what] = error_of([&] { oi::import_model(m.save(scratch("optional_not_optional")), o); });
    CHECK(id == "nnvm.onnx.shape");
    CHECK(what.find("names 'x', which is not a graph input of optional type") != std::string::npos);
  }
}

TEST_CASE("onnx optionals: OptionalProto files read as empty, a tensor or a sequence") {
  fs::path dir = scratch("optional_pb");
  auto write = [&](const std::string& name, const onnx::OptionalProto& o) {
    std::string path = (dir / name).string();
    std::ofstream out(path, std::ios::binary);
    o.SerializeToOstream(&out);
    return path;
  };
  onnx::OptionalProto empty;
  empty.set_elem_type(onnx::OptionalProto::UNDEFINED);
  CHECK(oi::read_optional_pb(write("empty.pb", empty)).holds == oi::OptionalValue::Holds::nothing);

  onnx::OptionalProto tensor;
  tensor.set_elem_type(onnx::OptionalProto::TENSOR);
  auto* t = tensor.mutable_tensor_value();
  t->set_data_type(T::FLOAT);
  t->add_dims(2);
  t->add_float_data(1.5f);
  t->add_float_data(-2.5f);
  auto got = oi::read_optional_pb(write("tensor.pb", tensor));
  CHECK(got.holds == oi::OptionalValue::Holds::tensor);
  REQUIRE(got.elements.size() == 1);
  CHECK(elements<float>(got.elements[0]) == std::vector<float>{1.5f, -2.5f});

  onnx::OptionalProto seq;
  seq.set_elem_type(onnx::OptionalProto::SEQUENCE);
  seq.mutable_sequence_value()->set_elem_type(onnx::SequenceProto::TENSOR);
  for (int32_t v : {7, 8}) {
    auto* e = seq.mutable_sequence_value()->add_tensor_values();
    e->set_data_type(T::INT32);
    e->add_dims(1);
    e->add_int32_data(v);
  }
  got = oi::read_optional_pb(write("sequence.pb", seq));
  CHECK(got.holds == oi::OptionalValue::Holds::sequence);
  REQUIRE(got.elements.size() == 2);
  CHECK(got.elements[1].values<int32_t>()[0] == 8);

  onnx::OptionalProto map;
  map.set_elem_type(onnx::OptionalProto::MAP);
  auto [id, what] = error_of([&] { oi::read_optional_pb(write("map.pb", map)); });
  CHECK(id == "nnvm.onnx.file");
  CHECK(what.find("map.pb") != std::string::npos);
}

}  // namespace onnx_optionals
