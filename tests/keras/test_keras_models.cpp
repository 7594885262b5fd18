// Real Keras 3.15 models (tests/models/keras, made by scripts/models/keras/make_keras_models.py)
// imported from both files Keras writes (the .keras archive and the legacy .h5), compiled and
// run; every output is compared with Keras' own output for the same input, stored beside the
// model in NAME.reference.h5.
#include <algorithm>
#include <cmath>

#include "h5_file.hpp"
#include "nnvm/importers/files.hpp"
#include "nnvm/keras/importer.hpp"
#include "support/framework_reference.hpp"

namespace keras_models {

using namespace nnvm;
namespace ki = keras_import;

std::string model_path(const std::string& file) { return std::string(NNVM_TEST_SOURCE_DIR) + "/tests/models/keras/" + file; }

// NAME.reference.h5: input0, input1, ... and output0, output1, ...
struct Reference {
  std::vector<NDArray> inputs, outputs;
};

Reference reference(const std::string& name) {
  const std::string path = model_path(name + ".reference.h5");
  ki::H5File f(importers::read_regular_file("keras", path, 1 << 26), path, 1 << 26);
  Reference r;
  for (size_t k = 0; f.exists(str_cat("input", k)); ++k) {
    NDArray a = f.dataset(str_cat("input", k), {});
    // Keras' integer inputs (token ids) were int32; the reader widens integers to int64.
    if (a.dtype() == dtype::int64) {
      NDArray narrow(dtype::int32, a.shape());
      std::transform(a.values<int64_t>().begin(), a.values<int64_t>().end(), narrow.values<int32_t>().begin(),
                     [](int64_t v) { return int32_t(v); });
      a = std::move(narrow);
    }
    r.inputs.push_back(std::move(a));
  }
  for (size_t k = 0; f.exists(str_cat("output", k)); ++k) r.outputs.push_back(f.dataset(str_cat("output", k), {}));
  REQUIRE(!r.inputs.empty());
  REQUIRE(!r.outputs.empty());
  return r;
}

void check_against_keras(const graph::Graph& g, const Reference& ref) {
  nnvm_test::check_against_framework(g, ref.inputs, ref.outputs);
}

using nnvm_test::count_ops;

TEST_CASE("keras: a functional CNN (BN, depthwise, separable, residual add, pools, two heads) matches Keras") {
  for (std::string file : {"cnn_functional.keras", "cnn_functional.h5"}) {
    CAPTURE(file);
    graph::Graph g = ki::import_model(model_path(file));
    CHECK(g.name == "cnn_functional");
    REQUIRE(g.inputs().size() == 1);
    CHECK(g.nodes[g.inputs()[0]].name == "image");
    CHECK(g.outputs.size() == 2);
    // Channels-last layers become NCHW ops between transposes; after sinking, only the input's
    // and the one before the channels-last Flatten are left.
    graph::Graph sunk = graph::fold_constants(graph::sink_transposes(g));
    CHECK(count_ops(sunk, "transpose") == 2);
    check_against_keras(g, reference("cnn_functional"));
  }
}

TEST_CASE("keras: a Sequential CNN (dilated conv, BN without center, LeakyReLU, Softmax) matches Keras") {
  for (std::string file : {"cnn_sequential.keras", "cnn_sequential.h5"}) {
    CAPTURE(file);
    check_against_keras(ki::import_model(model_path(file)), reference("cnn_sequential"));
  }
}

TEST_CASE("keras: a text model (Embedding, MultiHeadAttention with and without a causal mask, LayerNorm) matches Keras") {
  graph::Graph g = ki::import_model(model_path("text_attention.keras"));
  REQUIRE(g.inputs().size() == 1);
  CHECK(g.type(graph::Value{g.inputs()[0], 0}).dtype == dtype::int32);
  check_against_keras(g, reference("text_attention"));
}

TEST_CASE("keras: recurrent layers (LSTM, GRU with and without reset_after, SimpleRNN, go_backwards) match Keras") {
  for (std::string file : {"recurrent.keras", "recurrent.h5"}) {
    CAPTURE(file);
    check_against_keras(ki::import_model(model_path(file)), reference("recurrent"));
  }
}

TEST_CASE("keras: 1-D convolutions (causal and same padding), 1-D pools, ZeroPadding1D and Permute match Keras") {
  check_against_keras(ki::import_model(model_path("conv1d.keras")), reference("conv1d"));
}

TEST_CASE("keras: every activation function, the activation layers and the merge layers match Keras") {
  check_against_keras(ki::import_model(model_path("activations.keras")), reference("activations"));
}

TEST_CASE("keras: UpSampling2D (nearest, bilinear), Conv2DTranspose (same, valid) and Cropping2D match Keras") {
  check_against_keras(ki::import_model(model_path("upsample.keras")), reference("upsample"));
}

TEST_CASE("keras: two inputs, a layer shared by four calls and a nested Sequential model match Keras") {
  graph::Graph g = ki::import_model(model_path("nested_shared.keras"));
  REQUIRE(g.inputs().size() == 2);
  CHECK(g.nodes[g.inputs()[0]].name == "left");
  CHECK(g.nodes[g.inputs()[1]].name == "right");
  check_against_keras(g, reference("nested_shared"));
}

TEST_CASE("keras: genuine Keras 2 .h5 files (tf.keras 2.21: list-form inbound nodes, ':0' weight names) match Keras") {
  // keras2_cnn also checks Keras 2's hard_sigmoid (0.2 x + 0.5, not Keras 3's x / 6 + 0.5).
  for (std::string name : {"keras2_cnn", "keras2_rnn"}) {
    CAPTURE(name);
    check_against_keras(ki::import_model(model_path(name + ".h5")), reference(name));
  }
}

TEST_CASE("keras: check_support lists the layers and names the producer") {
  importers::SupportReport r = ki::check_support(model_path("cnn_functional.keras"));
  CHECK(r.supported());
  CHECK(r.format == "Keras");
  CHECK(r.producer == "Keras 3.15.1");
  CHECK(r.op_counts.at("Conv2D") == 3);
  CHECK(r.op_counts.at("BatchNormalization") == 2);
  REQUIRE(r.inputs.size() == 1);
  CHECK(r.inputs[0] == "image");
}

}  // namespace keras_models
