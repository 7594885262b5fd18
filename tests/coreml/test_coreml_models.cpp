// Core ML models made by coremltools 9 (tests/models/coreml, made by
// scripts/models/coreml/make_coreml_models.py) imported, compiled and run; every output is
// compared with the output of the framework the model came from (PyTorch, or the numpy formula
// of the NeuralNetwork layer for models written layer by layer), stored beside the model.
#include <algorithm>
#include <cmath>

#include "nnvm/coreml/importer.hpp"
#include "npy.hpp"
#include "support/framework_reference.hpp"

namespace coreml_models {

using namespace nnvm;
namespace ci = coreml_import;
using coreml_tests::read_npy;

std::string model_path(const std::string& file) { return std::string(NNVM_TEST_SOURCE_DIR) + "/tests/models/coreml/" + file; }

struct Reference {
  NDArray input;
  std::vector<NDArray> outputs;
};

Reference reference(const std::string& name) {
  Reference r;
  const std::string dir = model_path(name) + "/";
  r.input = read_npy(dir + "input.npy");
  for (size_t k = 0; std::ifstream(dir + "output" + std::to_string(k) + ".npy").good(); ++k)
    r.outputs.push_back(read_npy(dir + "output" + std::to_string(k) + ".npy"));
  REQUIRE(!r.outputs.empty());
  return r;
}

void check_against_reference(const graph::Graph& g, const Reference& ref, double rtol = 1e-3, double atol_scale = 1e-4) {
  nnvm_test::check_against_framework(g, {ref.input}, ref.outputs, rtol, atol_scale);
}

TEST_CASE("coreml: a PyTorch CNN as a NeuralNetwork .mlmodel matches PyTorch") {
  // convolution, activation, pooling (max, average), add, batchnorm, concat, reshapeStatic,
  // innerProduct, softmaxND; the exact array mapping keeps the declared (1, 3, 16, 16).
  graph::Graph g = ci::import_model(model_path("nn_cnn.mlmodel"));
  CHECK(g.name == "nn_cnn");
  REQUIRE(g.inputs().size() == 1);
  CHECK(g.nodes[g.inputs()[0]].name == "x");
  check_against_reference(g, reference("nn_cnn"));
}

TEST_CASE("coreml: a NeuralNetworkClassifier gives its probabilities in class order") {
  const std::string path = model_path("nn_classifier.mlmodel");
  graph::Graph g = ci::import_model(path);
  // The dictionary of probabilities becomes a (1, classes) tensor; the string label is left out.
  REQUIRE(g.outputs.size() == 1);
  check_against_reference(g, reference("nn_classifier"));
  CHECK(ci::class_labels(path) == std::vector<std::string>{"cat", "dog", "bird", "fish"});
  CHECK(ci::class_labels(model_path("nn_cnn.mlmodel")).empty());
}

TEST_CASE("coreml: NeuralNetwork layers of the rank-5 mapping (every activation, padding, upsample, unary) match "
          "their formulas") {
  // Declared input (3, 6, 6) without a batch axis: the graph input is (1, 3, 6, 6).
  graph::Graph g = ci::import_model(model_path("nn_layers.mlmodel"));
  REQUIRE(g.inputs().size() == 1);
  CHECK(g.type(graph::Value{g.inputs()[0], 0}).shape.size() == 4);
  check_against_reference(g, reference("nn_layers"));
}

TEST_CASE("coreml: NeuralNetwork layers of the exact mapping (shape, broadcast, normalization) match their formulas") {
  // scale, bias, clip, clampedReLU, average / max / min, transpose, concatND, flattenTo2D,
  // constantPad, reduceMean, squeeze, expandDims, batchedMatmul with a weight, loadConstantND,
  // subtract / divide / max broadcastable, softmaxND, SAME max pooling, instance normalization
  // (batchnorm with computeMeanVar), CHANNEL_LAST flatten; every output keeps its own rank.
  graph::Graph g = ci::import_model(model_path("nn_exact_layers.mlmodel"));
  check_against_reference(g, reference("nn_exact_layers"));
}

TEST_CASE("coreml: the rank-5 mapping's batch axis can be set with input_shapes") {
  graph::Graph g = ci::import_model(model_path("nn_layers.mlmodel"), {.input_shapes = {{"data", {2, 3, 6, 6}}}});
  graph::CompileOptions c;
  c.target = target::parse_target("c");
  Reference ref = reference("nn_layers");
  NDArray two(dtype::float32, {2, 3, 6, 6});
  auto x = ref.input.values<float>();
  std::copy(x.begin(), x.end(), two.values<float>().begin());
  std::copy(x.begin(), x.end(), two.values<float>().begin() + x.size());
  std::vector<NDArray> out = graph::compile(g, c).run({two});
  REQUIRE(out.size() == ref.outputs.size());
  // Both items of the batch give the single item's reference (output 0 is the linear activation).
  std::span<const float> want = ref.outputs[0].values<float>();
  std::span<const float> got = std::as_const(out[0]).values<float>();
  REQUIRE(got.size() == 2 * want.size());
  CHECK(nnvm_test::compare(std::span<const float>(got.data(), want.size()), want, 1e-5, 1e-6) == "");
  CHECK(nnvm_test::compare(std::span<const float>(got.data() + want.size(), want.size()), want, 1e-5, 1e-6) == "");
}

TEST_CASE("coreml: an ML Program .mlpackage with float32 weights in weight.bin matches PyTorch") {
  // conv, relu, max_pool, add, batch_norm, concat, avg_pool, reshape, transpose, matmul,
  // reduce_mean, mul, linear, softmax, const (immediate and blob).
  graph::Graph g = ci::import_model(model_path("mil_cnn_fp32.mlpackage"));
  CHECK(g.name == "mil_cnn_fp32");
  REQUIRE(g.outputs.size() == 2);
  check_against_reference(g, reference("mil_cnn_fp32"));
}

TEST_CASE("coreml: an ML Program in float16 (coremltools' default) matches PyTorch") {
  // Weights in weight.bin and immediate values are float16; the program casts its input to
  // float16 and its outputs back. nnvm computes it in float32 (mil_importer.cpp), so the only
  // difference from PyTorch's float32 run is the weights' rounding to float16 (2^-11 relative
  // each): at most 7e-4 relative here, inside the float32 tolerance, which is kept.
  graph::Graph g = ci::import_model(model_path("mil_cnn_fp16.mlpackage"));
  REQUIRE(g.outputs.size() == 2);
  check_against_reference(g, reference("mil_cnn_fp16"));
}

TEST_CASE("coreml: MIL element-wise and reduction ops written with coremltools' builder match numpy") {
  // sigmoid, tanh, softplus, softsign, exp, abs, sqrt, leaky_relu, elu, clip, sub, mul (the
  // builder's real_div by a constant becomes mul), maximum, minimum, pow, reduce_sum, reduce_max,
  // identity.
  graph::Graph g = ci::import_model(model_path("mil_ops.mlpackage"));
  REQUIRE(g.outputs.size() == 17);
  check_against_reference(g, reference("mil_ops"));
}

TEST_CASE("coreml: check_support lists the layers and ops a model uses") {
  importers::SupportReport nn = ci::check_support(model_path("nn_cnn.mlmodel"));
  CHECK(nn.supported());
  CHECK(nn.format == "Core ML");
  CHECK(nn.op_counts.at("convolution") == 3);
  CHECK(nn.producer == "torch==1.13.0a0 via coremltools 9.0");
  importers::SupportReport mil = ci::check_support(model_path("mil_cnn_fp32.mlpackage"));
  CHECK(mil.supported());
  CHECK(mil.op_counts.at("conv") == 3);
  CHECK(mil.inputs == std::vector<std::string>{"x"});
}

}  // namespace coreml_models
