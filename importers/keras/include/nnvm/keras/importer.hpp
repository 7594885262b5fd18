// The Keras importer: a Keras 3 `.keras` archive (config.json + model.weights.h5) or a legacy
// full-model `.h5` (Keras 2, or Keras 3's legacy save) becomes a graph::Graph of registered ops.
//
//   graph::Graph g = keras_import::import_model("classifier.keras");
//
// Sequential and functional models (shared layers, several inputs and outputs) are read; each
// layer maps onto nnvm's ops through a table (importers/keras/convert_*.cpp). Keras computes
// channels-last (NHWC); nnvm's convolutions and pools are channels-first, so each such layer is
// imported as its channels-first op between two layout transposes, and the graph pass
// sink_transposes removes every pair that cancels: a chain of conv layers keeps one transpose at
// its start and one where it meets an op that needs the channels-last order (a Flatten, the
// graph output). Recurrent layers (LSTM, GRU, SimpleRNN) are unrolled over their static sequence
// length. Training-only layers (Dropout, noise) are identities, as in Keras' inference.
//
// Errors are ImportError with ids nnvm.keras.file, nnvm.keras.config, nnvm.keras.weights,
// nnvm.keras.shape, nnvm.keras.attribute, nnvm.keras.unsupported and nnvm.keras.too_large; the
// context names the file, then the layer, then the configuration key.
//
// Needs the nnvm_keras library (CMake target nnvm::keras): HDF5 and libzip.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nnvm/graph/node.hpp"
#include "nnvm/importers/support_report.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

struct ImportOptions {
  // The full shape (batch first) of an input, by its Keras name; overrides what the model
  // declares. An input extent the model leaves open (None) must be named here, except the batch.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // The batch extent of inputs whose declared batch is None.
  int64_t batch_size = 1;
  // Model files larger than this are rejected before a byte is read.
  uint64_t max_model_bytes = 8ull << 30;
  // config.json (or the legacy model_config) larger than this is rejected before parsing.
  uint64_t max_config_bytes = 256ull << 20;
  // One weight array larger than this is rejected before it is read.
  uint64_t max_weight_bytes = 4ull << 30;
  // Bytes of constants that constant folding may create during the import (FoldBudget).
  uint64_t fold_budget_bytes = FoldBudget::default_bytes;
  // Where ops are looked up; nullptr means ops::default_registry().
  const ops::OpRegistry* registry = nullptr;
};

// Reads the configuration and lists the layers (or configuration values) nnvm cannot import.
// Throws only for files that cannot be read or parsed.
importers::SupportReport check_support(const std::string& path, const ImportOptions& options = {});

// The model as a graph. Graph inputs are the model's inputs in order, under their Keras names;
// g.outputs are the model's outputs in order.
graph::Graph import_model(const std::string& path, const ImportOptions& options = {});

}  // namespace keras_import
NNVM_END_NAMESPACE
