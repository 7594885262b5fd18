// The table from Keras layer classes to nnvm ops. Each entry turns one call of a layer into graph
// values through a LayerContext, which reads the layer's configuration with checks (errors name
// the layer and the key), hands out its weights, and adds ops and constants under the layer's
// name.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model_config.hpp"
#include "nnvm/importers/node_emitter.hpp"
#include "weights.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

using Values = std::vector<graph::Value>;

class LayerContext : public importers::NodeEmitter {
 public:
  LayerContext(const LayerSpec& layer, const LayerCall& call, Values inputs, std::map<std::string, graph::Value> kwargs,
               LayerWeights weights, importers::GraphAssembly& assembly, std::vector<std::string> where,
               std::string graph_name)
      : NodeEmitter(assembly, std::move(where), std::move(graph_name), "key"),
        layer_(layer),
        call_(call),
        inputs_(std::move(inputs)),
        tensor_kwargs_(std::move(kwargs)),
        weights_(std::move(weights)) {}

  const LayerSpec& layer() const { return layer_; }

  // The k-th tensor input; ImportError "nnvm.keras.config" when the call has fewer.
  graph::Value input(size_t k) const;
  size_t num_inputs() const { return inputs_.size(); }
  const Values& inputs() const { return inputs_; }
  // A keyword argument that is a tensor (MultiHeadAttention's key), or nullptr.
  const graph::Value* tensor_kwarg(const std::string& name) const;
  // A keyword argument's value in the call, or null.
  Json kwarg(const std::string& name) const;

  // Configuration values. A present value of the wrong type is an ImportError
  // "nnvm.keras.attribute" naming the key; null counts as absent.
  bool has(const std::string& key) const;
  int64_t integer(const std::string& key, int64_t fallback) const;
  double real(const std::string& key, double fallback) const;
  bool flag(const std::string& key, bool fallback) const;
  std::string text(const std::string& key, const std::string& fallback) const;
  // An int or a list of `dims` ints (Keras' kernel_size, strides); `fallback` fills every entry.
  std::vector<int64_t> ints(const std::string& key, size_t dims, int64_t fallback) const;
  // A list of ints of any length (target_shape, dims).
  std::vector<int64_t> int_list(const std::string& key) const;
  const Json& raw(const std::string& key) const;

  // The layer's weights in Keras' order (layer.weights); `subgroups` lists, for a .keras file,
  // the sublayer groups that hold them after the layer's own vars (MultiHeadAttention's
  // query_dense, ...). `count` is how many the converter needs: fewer is an error.
  std::vector<NDArray> weights(size_t count, const std::vector<std::string>& subgroups = {}) const;
  graph::Value weight_constant(NDArray data, const std::string& suffix) { return constant(std::move(data), suffix); }

  // Channels-last <-> channels-first for a rank-r value: (N, ..., C) <-> (N, C, ...). The pair
  // around a channels-first op cancels against its neighbours' in graph::sink_transposes.
  graph::Value to_channels_first(const graph::Value& v, const std::string& suffix = "to_nchw");
  graph::Value to_channels_last(const graph::Value& v, const std::string& suffix = "to_nhwc");
  // Whether the layer's data_format is channels_last (Keras' default); anything but the two
  // known values is an error.
  bool channels_last() const;

  // y = activation(x) for a Keras activation name ("relu", "gelu", "linear", ...).
  graph::Value activation(const graph::Value& x, const std::string& name, const std::string& suffix = "");
  // The layer's own "activation" key applied to x.
  graph::Value apply_activation(const graph::Value& x) { return activation(x, text("activation", "linear")); }
  // A context for `inner`, a layer a wrapper (Bidirectional) calls on this call's inputs, with
  // its own weights; its ops are named "<layer>/<inner name>/...".
  LayerContext wrapped(const LayerSpec& inner, LayerWeights weights);
  const LayerWeights& layer_weights() const { return weights_; }
  // The Keras major version that wrote the file (hard_sigmoid changed between 2 and 3).
  void set_keras_major(int major) { keras_major_ = major; }

 private:
  const LayerSpec& layer_;
  const LayerCall& call_;
  Values inputs_;
  std::map<std::string, graph::Value> tensor_kwargs_;
  LayerWeights weights_;
  int keras_major_ = 3;
};

using Converter = std::function<Values(LayerContext&)>;

// The table: Keras layer class -> converter. convert_core.cpp, convert_conv.cpp and
// convert_sequence.cpp fill it.
const std::map<std::string, Converter>& converters();
void add_core_converters(std::map<std::string, Converter>& table);
void add_conv_converters(std::map<std::string, Converter>& table);
void add_sequence_converters(std::map<std::string, Converter>& table);

// Activation names the importer knows (for the support report).
bool known_activation(const std::string& name);

}  // namespace keras_import
NNVM_END_NAMESPACE
