// A Keras model's configuration (config.json, or a legacy .h5's model_config) as a list of layer
// calls, whatever spelling wrote it:
//   - Sequential: the layers in order, each called once on the previous one's output; the input
//     comes from an InputLayer entry (Keras 3) or the first layer's batch_input_shape (Keras 2);
//   - Functional ("Functional", Keras 2's "Model"): each layer's inbound nodes, as Keras 3 writes
//     them ({"args": [keras tensors or lists of them], "kwargs": {...}}) or Keras 2 does
//     ([[layer, node, tensor, kwargs], ...]); input_layers/output_layers as a list of refs or,
//     for one, the ref itself.
// Layers are kept in file order (Keras writes them producers first); a call that reads a layer
// call not made yet is an error (nnvm.keras.config), so cycles cannot form.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

using Json = nlohmann::json;

// Output `tensor` of call `node` of layer `layer` (Keras' keras_history).
struct TensorRef {
  std::string layer;
  int64_t node = 0;
  int64_t tensor = 0;
};

struct LayerCall {
  std::vector<TensorRef> inputs;               // the tensors among the call's positional args, in order
  std::map<std::string, TensorRef> tensor_kwargs;  // keyword args that are tensors (MultiHeadAttention's key)
  Json kwargs = Json::object();                // the other keyword args (use_causal_mask, training)
};

struct LayerSpec {
  std::string class_name;
  std::string name;
  Json config = Json::object();
  std::vector<LayerCall> calls;
};

struct ModelSpec {
  std::string class_name;  // Sequential or Functional
  std::string name;
  std::vector<LayerSpec> layers;  // InputLayer entries included
  std::vector<TensorRef> inputs, outputs;
};

// ImportError "nnvm.keras.config" (with `label` and the layer) for JSON that does not parse or
// does not have this structure.
ModelSpec parse_model_config(const std::string& json_text, const std::string& label);
// The same, for a configuration already parsed (a nested model's entry).
ModelSpec model_spec(const Json& model, const std::vector<std::string>& where);

// Keras' to_snake_case: the name a layer class gets in a .keras weights file ("DepthwiseConv2D"
// -> "depthwise_conv2d", "PReLU" -> "p_re_lu").
std::string snake_case(const std::string& class_name);

}  // namespace keras_import
NNVM_END_NAMESPACE
