// NeuralNetwork layers onto nnvm ops. A layer's blobs are channels-first: under the rank-5
// mapping the importer holds every blob as (N, C, H, W) (Core ML's (Seq, Batch, C, H, W) with
// Seq = 1); under the exact mapping a blob has its own rank and C, H, W are its last three axes.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "context.hpp"
#include "coreml.pb.h"
#include "weights.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

using Layer = nnvm_coreml_spec::NeuralNetworkLayer;

class LayerContext : public Context {
 public:
  LayerContext(const Layer& layer, std::vector<graph::Value> inputs, bool rank5, importers::GraphAssembly& assembly,
               std::vector<std::string> where, std::string graph_name)
      : Context(assembly, std::move(where), std::move(graph_name)),
        layer_(layer),
        inputs_(std::move(inputs)),
        rank5_(rank5) {}

  const Layer& layer() const { return layer_; }
  bool rank5() const { return rank5_; }
  // The k-th input; ImportError "nnvm.coreml.graph" when the layer has fewer.
  graph::Value input(size_t k) const;
  const std::vector<graph::Value>& inputs() const { return inputs_; }

  // The channel axis of `v`: 1 under the rank-5 mapping, rank - 3 otherwise (rank >= 3), the
  // last axis for rank 1 and 2. (Core ML's C is the third axis from the end.)
  int64_t channel_axis(const graph::Value& v) const;
  // `w` as a float32 constant of `shape` (weight_array's checks).
  graph::Value weight(const nnvm_coreml_spec::WeightParams& w, const std::vector<int64_t>& shape,
                      const std::string& attribute);
  // A per-channel parameter of `count` values shaped to broadcast along `x`'s channel axis; one
  // value broadcasts to every channel.
  graph::Value channel_weight(const nnvm_coreml_spec::WeightParams& w, const graph::Value& x,
                              const std::string& attribute);

 private:
  const Layer& layer_;
  std::vector<graph::Value> inputs_;
  bool rank5_;
};

using LayerConverter = std::function<std::vector<graph::Value>(LayerContext&)>;

// The table: the layer's parameter field number (Layer::LayerCase) -> converter.
const std::map<int, LayerConverter>& layer_converters();
void add_nn_layer_converters(std::map<int, LayerConverter>& table);      // nn_layers_nn.cpp
void add_tensor_layer_converters(std::map<int, LayerConverter>& table);  // nn_layers_tensor.cpp

// The layer's kind as the specification names its parameter field ("convolution").
std::string layer_kind(const Layer& layer);

}  // namespace coreml_import
NNVM_END_NAMESPACE
