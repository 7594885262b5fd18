// Real models from the ONNX node conformance suite: import, and read their .pb inputs and
// outputs, checked against the TensorProto decoded here independently.
#include "support/pch.hpp"

#include <cstring>

#include "onnx_test_util.hpp"

namespace onnx_node_suite {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;

namespace {
const fs::path suite = NNVM_ONNX_NODE_TESTS;

// The suite's float tensors carry raw_data; decode it here without the importer.
std::vector<float> reference_floats(const fs::path& pb, std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  std::ifstream in(pb, std::ios::binary);
  REQUIRE(t.ParseFromIstream(&in));
  REQUIRE(t.data_type() == onnx::TensorProto::FLOAT);
  dims.assign(t.dims().begin(), t.dims().end());
  std::vector<float> v;
  if (t.has_raw_data()) {
    v.resize(t.raw_data().size() / 4);
    std::memcpy(v.data(), t.raw_data().data(), v.size() * 4);
  } else {
    v.assign(t.float_data().begin(), t.float_data().end());
  }
  return v;
}
}  // namespace

TEST_CASE("onnx node suite: models import and their .pb tensors match an independent decode") {
  if (!fs::exists(suite / "test_relu")) {
    MESSAGE("ONNX node suite not found at " << suite << "; skipped");
    return;
  }
  struct Case {
    std::string name, op;
  };
  for (auto& c : std::vector<Case>{{"test_relu", "relu"}, {"test_add_bcast", "add"}, {"test_softmax_axis_0", "softmax"}}) {
    CAPTURE(c.name);
    fs::path dir = suite / c.name;
    graph::Graph g = oi::import_model((dir / "model.onnx").string());
    CHECK(oi::check_support((dir / "model.onnx").string()).supported());
    REQUIRE(g.outputs.size() == 1);
    CHECK(g.node(g.outputs[0]).op == c.op);
    auto inputs = g.inputs();
    for (size_t k = 0; k < inputs.size(); ++k) {
      fs::path pb = dir / "test_data_set_0" / ("input_" + std::to_string(k) + ".pb");
      NDArray a = oi::read_tensor_pb(pb.string());
      std::vector<int64_t> dims;
      std::vector<float> want = reference_floats(pb, dims);
      CHECK(a.dtype() == dtype::float32);
      CHECK(a.shape() == dims);
      CHECK(const_shape(g.nodes[inputs[k]].types[0]) == dims);
      auto got = a.values<float>();
      CHECK(std::vector<float>(got.begin(), got.end()) == want);
    }
    fs::path out = dir / "test_data_set_0" / "output_0.pb";
    std::vector<int64_t> dims;
    std::vector<float> want = reference_floats(out, dims);
    NDArray y = oi::read_tensor_pb(out.string());
    CHECK(y.shape() == dims);
    CHECK(const_shape(g.type(g.outputs[0])) == dims);
    CHECK(std::memcmp(y.raw(), want.data(), want.size() * 4) == 0);
  }
}

TEST_CASE("onnx node suite: check_support reads every model without throwing") {
  if (!fs::exists(suite)) return;
  size_t models = 0, supported = 0;
  std::map<std::string, int> reasons;
  for (auto& entry : fs::directory_iterator(suite)) {
    fs::path model = entry.path() / "model.onnx";
    if (!fs::exists(model)) continue;
    ++models;
    oi::SupportReport r;
    CHECK_NOTHROW(r = oi::check_support(model.string()));
    supported += r.supported();
  }
  MESSAGE(supported << " of " << models << " node-suite models are supported");
  CHECK(models > 0);
  CHECK(supported > 0);
}

}  // namespace onnx_node_suite
