#include "model_config.hpp"

#include <regex>
#include <set>

NNVM_BEGIN_NAMESPACE
namespace keras_import {

namespace {

[[noreturn]] void bad(const std::string& what, const std::vector<std::string>& where) {
  throw ImportError("nnvm.keras.config", what, where);
}

const Json& member(const Json& j, const char* key, const std::vector<std::string>& where) {
  if (!j.is_object() || !j.contains(key)) bad(str_cat("the entry has no \"", key, "\""), where);
  return j[key];
}

std::string string_member(const Json& j, const char* key, const std::vector<std::string>& where) {
  const Json& v = member(j, key, where);
  if (!v.is_string()) bad(str_cat("\"", key, "\" is not a string"), where);
  return v.get<std::string>();
}

bool is_keras_tensor(const Json& j) {
  return j.is_object() && j.contains("class_name") && j["class_name"] == "__keras_tensor__";
}

// [layer, node, tensor] (Keras 3 keras_history, Keras 2 refs, which add a kwargs dict).
TensorRef ref_of(const Json& j, const std::vector<std::string>& where) {
  if (!j.is_array() || j.size() < 3 || !j[0].is_string() || !j[1].is_number_integer() || !j[2].is_number_integer())
    bad(str_cat("a tensor reference is not [layer, node, tensor]: ", printable(j.dump().substr(0, 80))), where);
  TensorRef r{j[0].get<std::string>(), j[1].get<int64_t>(), j[2].get<int64_t>()};
  if (r.node < 0 || r.tensor < 0) bad("a tensor reference has a negative index", where);
  return r;
}

TensorRef keras_tensor_ref(const Json& t, const std::vector<std::string>& where) {
  return ref_of(member(member(t, "config", where), "keras_history", where), where);
}

// Keras 3 positional args: tensors, or (nested) lists of them, in order.
void collect_tensors(const Json& arg, std::vector<TensorRef>& out, const std::vector<std::string>& where) {
  if (is_keras_tensor(arg)) {
    out.push_back(keras_tensor_ref(arg, where));
  } else if (arg.is_array()) {
    for (auto& a : arg) collect_tensors(a, out, where);
  } else {
    throw ImportError("nnvm.keras.unsupported",
                      str_cat("a positional argument that is not a tensor (", printable(arg.dump().substr(0, 60)),
                              ") is not supported"),
                      where);
  }
}

LayerCall keras3_call(const Json& node, const std::vector<std::string>& where) {
  LayerCall call;
  collect_tensors(member(node, "args", where), call.inputs, where);
  if (node.contains("kwargs")) {
    const Json& kw = node["kwargs"];
    if (!kw.is_object()) bad("\"kwargs\" is not an object", where);
    for (auto& [key, value] : kw.items()) {
      if (is_keras_tensor(value))
        call.tensor_kwargs[key] = keras_tensor_ref(value, where);
      else
        call.kwargs[key] = value;
    }
  }
  return call;
}

// Keras 2: [[layer, node, tensor, {kwargs}], ...]; a kwarg that is itself a ref is a tensor.
LayerCall keras2_call(const Json& node, const std::vector<std::string>& where) {
  LayerCall call;
  for (auto& entry : node) {
    call.inputs.push_back(ref_of(entry, where));
    if (entry.size() > 3 && entry[3].is_object())
      for (auto& [key, value] : entry[3].items()) {
        if (value.is_array() && value.size() >= 3 && value[0].is_string())
          call.tensor_kwargs[key] = ref_of(value, where);
        else
          call.kwargs[key] = value;
      }
  }
  return call;
}

// input_layers / output_layers: [[name, node, tensor], ...], or one [name, node, tensor].
std::vector<TensorRef> ref_list(const Json& j, const std::vector<std::string>& where) {
  if (!j.is_array()) bad("input_layers/output_layers is not a list", where);
  if (!j.empty() && j[0].is_string()) return {ref_of(j, where)};
  std::vector<TensorRef> out;
  for (auto& r : j) out.push_back(ref_of(r, where));
  return out;
}

std::string layer_name(const Json& entry, const std::vector<std::string>& where) {
  if (entry.contains("name") && entry["name"].is_string()) return entry["name"].get<std::string>();
  return string_member(member(entry, "config", where), "name", where);
}

ModelSpec sequential(const Json& config, ModelSpec m, const std::vector<std::string>& where) {
  const Json& layers = member(config, "layers", where);
  if (!layers.is_array() || layers.empty()) bad("the Sequential model has no layers", where);
  std::string previous;
  for (auto& entry : layers) {
    LayerSpec l;
    l.class_name = string_member(entry, "class_name", where);
    l.config = member(entry, "config", where);
    l.name = layer_name(entry, where);
    if (previous.empty() && l.class_name != "InputLayer") {
      // Keras 2 writes no InputLayer: the first layer carries batch_input_shape (and dtype).
      const Json& c = l.config;
      if (!c.contains("batch_input_shape") && !c.contains("batch_shape"))
        bad("the Sequential model has neither an InputLayer nor a batch_input_shape on its first layer",
            {where[0], "layer " + printable(l.name)});
      LayerSpec input;
      input.class_name = "InputLayer";
      input.name = l.name + "_input";
      input.config = {{"batch_shape", c.contains("batch_shape") ? c["batch_shape"] : c["batch_input_shape"]},
                      {"dtype", c.contains("dtype") && c["dtype"].is_string() ? c["dtype"] : Json("float32")},
                      {"name", input.name}};
      m.inputs.push_back({input.name, 0, 0});
      previous = input.name;
      m.layers.push_back(std::move(input));
    }
    if (l.class_name == "InputLayer") {
      if (!previous.empty()) bad("an InputLayer after the first layer of a Sequential model", where);
      m.inputs.push_back({l.name, 0, 0});
    } else {
      l.calls.push_back(LayerCall{{TensorRef{previous, 0, 0}}, {}, Json::object()});
    }
    previous = l.name;
    m.layers.push_back(std::move(l));
  }
  m.outputs.push_back({previous, 0, 0});
  return m;
}

ModelSpec functional(const Json& config, ModelSpec m, const std::vector<std::string>& where) {
  const Json& layers = member(config, "layers", where);
  if (!layers.is_array()) bad("\"layers\" is not a list", where);
  for (auto& entry : layers) {
    LayerSpec l;
    l.class_name = string_member(entry, "class_name", where);
    l.config = member(entry, "config", where);
    l.name = layer_name(entry, where);
    std::vector<std::string> at{where[0], "layer " + printable(l.name)};
    if (entry.contains("inbound_nodes")) {
      const Json& nodes = entry["inbound_nodes"];
      if (!nodes.is_array()) bad("\"inbound_nodes\" is not a list", at);
      for (auto& node : nodes) l.calls.push_back(node.is_object() ? keras3_call(node, at) : keras2_call(node, at));
    }
    m.layers.push_back(std::move(l));
  }
  m.inputs = ref_list(member(config, "input_layers", where), where);
  m.outputs = ref_list(member(config, "output_layers", where), where);
  return m;
}

}  // namespace

ModelSpec model_spec(const Json& model, const std::vector<std::string>& where) {
  ModelSpec m;
  m.class_name = string_member(model, "class_name", where);
  const Json& config = member(model, "config", where);
  if (config.contains("name") && config["name"].is_string()) m.name = config["name"].get<std::string>();
  std::vector<std::string> at = where;
  if (!m.name.empty()) at.push_back("model " + printable(m.name));
  if (m.class_name == "Sequential") m = sequential(config, std::move(m), at);
  else if (m.class_name == "Functional" || m.class_name == "Model") m = functional(config, std::move(m), at);
  else
    throw ImportError("nnvm.keras.unsupported",
                      str_cat("a model of class ", printable(m.class_name),
                              " (a subclassed model) has no layer graph in its configuration; only Sequential and "
                              "functional models are"),
                      at);
  std::set<std::string> names;
  for (auto& l : m.layers)
    if (!names.insert(l.name).second) bad(str_cat("two layers are named ", printable(l.name)), at);
  if (m.outputs.empty()) bad("the model has no outputs", at);
  return m;
}

ModelSpec parse_model_config(const std::string& json_text, const std::string& label) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const Json::exception& e) {
    bad(str_cat("the model configuration is not valid JSON: ", e.what()), {label});
  }
  try {
    return model_spec(j, {label});
  } catch (const Json::exception& e) {
    bad(str_cat("unexpected configuration structure: ", e.what()), {label});
  }
}

std::string snake_case(const std::string& class_name) {
  static const std::regex non_word(R"(\W+)"), word("(.)([A-Z][a-z]+)"), boundary("([a-z])([A-Z])");
  std::string s = std::regex_replace(class_name, non_word, "");
  s = std::regex_replace(s, word, "$1_$2");
  s = std::regex_replace(s, boundary, "$1_$2");
  for (char& ch : s) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace keras_import
NNVM_END_NAMESPACE
