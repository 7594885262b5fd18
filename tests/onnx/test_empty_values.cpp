// Empty tensors in the ONNX importer (importers/onnx/importer.cpp: empty_values_): a Split piece
// of size 0 is never computed; Concat leaves it out; any other use, or a graph output, is an
// error naming the value. The pattern is RotaryEmbedding's function body, which splits each head
// into [rotary, rest] with rest = 0 when the whole head rotates.
#include "support/pch.hpp"

#include "onnx_test_util.hpp"

namespace onnx_empty_values {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {

// x (2, 5) split on axis 1 into `sizes` (an initializer), pieces named p0, p1, ...
Model split_model(const std::vector<int64_t>& sizes) {
  Model m(18);
  m.input("x", T::FLOAT, {2, 5});
  auto* s = m.initializer("sizes", T::INT64, {int64_t(sizes.size())});
  for (int64_t v : sizes) s->add_int64_data(v);
  std::vector<std::string> pieces;
  for (size_t i = 0; i < sizes.size(); ++i) pieces.push_back("p" + std::to_string(i));
  attr_int(m.node("Split", {"x", "sizes"}, pieces, "split"), "axis", 1);
  return m;
}

NDArray iota(const std::vector<int64_t>& shape) {
  NDArray a(dtype::float32, shape);
  for (int64_t i = 0; i < a.numel(); ++i) a.data<float>()[i] = float(i) * 0.5f - 1.0f;
  return a;
}

}  // namespace

TEST_CASE("onnx empty values: an empty Split piece that Concat joins back is left out") {
  // Split [3, 0, 2] then Concat(p2, p1, p0): the columns of x as [3 4 | 0 1 2], a real permutation,
  // so a piece dropped or misplaced shows.
  Model m = split_model({3, 0, 2});
  attr_int(m.node("Concat", {"p2", "p1", "p0"}, {"y"}, "concat"), "axis", 1);
  m.output("y");
  NDArray x = iota({2, 5});
  std::vector<NDArray> out = graph::compile(oi::import_model(m.save(scratch("empty_split_concat")))).run({x});
  REQUIRE(out[0].shape() == std::vector<int64_t>{2, 5});
  const int from[5] = {3, 4, 0, 1, 2};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 5; ++c) CHECK(out[0].data<float>()[r * 5 + c] == x.data<float>()[r * 5 + from[c]]);
}

TEST_CASE("onnx empty values: any other use, or a graph output, names the empty value") {
  {
    Model m = split_model({5, 0});
    m.node("Relu", {"p1"}, {"y"}, "relu");
    m.output("y");
    auto [id, text] = error_of([&] { oi::import_model(m.save(scratch("empty_relu"))); });
    CHECK(id == "nnvm.onnx.shape");
    CHECK(text.find("an input 'p1' is an empty tensor (float32[2, 0])") != std::string::npos);
    CHECK(text.find("node relu (Relu)") != std::string::npos);
  }
  {
    Model m = split_model({0, 5});
    m.output("p0");
    m.output("p1");
    auto [id, text] = error_of([&] { oi::import_model(m.save(scratch("empty_output"))); });
    CHECK(id == "nnvm.onnx.shape");
    CHECK(text.find("graph output 'p0' is an empty tensor") != std::string::npos);
  }
  {
    // Two empty pieces concatenated stay one empty value (float32[2, 0]) that a later use names.
    Model m = split_model({0, 5, 0});
    attr_int(m.node("Concat", {"p0", "p2"}, {"e"}, "concat"), "axis", 1);
    m.node("Relu", {"e"}, {"y"}, "relu");
    m.output("y");
    auto [id, text] = error_of([&] { oi::import_model(m.save(scratch("empty_concat_empty"))); });
    CHECK(id == "nnvm.onnx.shape");
    CHECK(text.find("'e' is an empty tensor (float32[2, 0])") != std::string::npos);
  }
}

}  // namespace onnx_empty_values
