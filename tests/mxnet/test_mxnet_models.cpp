// Real MXNet 1.9.1 models (tests/models/mxnet, made by scripts/models/mxnet/make_mxnet_models.py)
// imported, compiled and run; every output is compared with MXNet's own output for the same
// input, stored beside the model.
#include <algorithm>
#include <cmath>

#include "nnvm/mxnet/importer.hpp"
#include "support/framework_reference.hpp"

namespace mxnet_models {

using namespace nnvm;
namespace mi = mxnet_import;

std::string model_dir(const std::string& name) { return std::string(NNVM_TEST_SOURCE_DIR) + "/tests/models/mxnet/" + name; }

// reference.params: "data" (the input) and "output0", "output1", ...
struct Reference {
  NDArray input;
  std::vector<NDArray> outputs;
};

Reference reference(const std::string& name) {
  Reference r;
  std::map<std::string, NDArray> by_name;
  for (auto& a : mi::read_ndarray_file(model_dir(name) + "/reference.params")) by_name[a.name] = std::move(a.data);
  REQUIRE(by_name.count("data"));
  r.input = by_name.at("data");
  for (size_t k = 0; by_name.count("output" + std::to_string(k)); ++k) r.outputs.push_back(by_name.at("output" + std::to_string(k)));
  REQUIRE(!r.outputs.empty());
  return r;
}

void check_against_mxnet(const graph::Graph& g, const Reference& ref) {
  nnvm_test::check_against_framework(g, {ref.input}, ref.outputs);
}

graph::Graph import(const std::string& name, const std::string& symbol_file, std::vector<int64_t> shape) {
  const std::string dir = model_dir(name);
  return mi::import_model(dir + "/" + symbol_file, dir + "/" + name + "-0000.params",
                          {.input_shapes = {{"data", std::move(shape)}}});
}

TEST_CASE("mxnet: GluonCV cifar_resnet20_v1 matches MXNet") {
  graph::Graph g = import("cifar_resnet20_v1", "cifar_resnet20_v1-symbol.json", {1, 3, 32, 32});
  CHECK(g.name == "cifar_resnet20_v1");
  REQUIRE(g.inputs().size() == 1);
  CHECK(g.nodes[g.inputs()[0]].name == "data");
  check_against_mxnet(g, reference("cifar_resnet20_v1"));
}

TEST_CASE("mxnet: Gluon model zoo mobilenetv2_0.25 (depthwise convs, ReLU6 as clip) matches MXNet") {
  check_against_mxnet(import("mobilenetv2_0.25", "mobilenetv2_0.25-symbol.json", {1, 3, 64, 64}),
                      reference("mobilenetv2_0.25"));
}

TEST_CASE("mxnet: a symbol-API text model (Embedding, attention, Reshape codes, scalar ops) matches MXNet") {
  graph::Graph g = import("symbol_text", "symbol_text-symbol.json", {2, 8});
  CHECK(g.outputs.size() == 2);
  check_against_mxnet(g, reference("symbol_text"));
}

TEST_CASE("mxnet: a symbol-API CNN (every activation, Deconvolution, pooling conventions) matches MXNet") {
  graph::Graph g = import("symbol_cnn", "symbol_cnn-symbol.json", {1, 3, 16, 16});
  // SoftmaxOutput's label is for training: it is not an input.
  REQUIRE(g.inputs().size() == 1);
  check_against_mxnet(g, reference("symbol_cnn"));
}

TEST_CASE("mxnet: the same CNN written in MXNet 0.8's and 0.9's JSON spellings gives the same result") {
  // 0.8: "param" and "attr" per node, [node, output] inputs, BatchNorm without its moving
  // statistics as inputs; 0.9: "attr".
  for (const char* file : {"legacy-symbol.json", "legacy-attr-symbol.json"}) {
    CAPTURE(file);
    check_against_mxnet(import("symbol_cnn", file, {1, 3, 16, 16}), reference("symbol_cnn"));
  }
}

}  // namespace mxnet_models
