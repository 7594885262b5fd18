#include "nnvm/keras/importer.hpp"

#include <filesystem>
#include <set>
#include <tuple>

#include "convert.hpp"
#include "model_file.hpp"
#include "nnvm/importers/error_context.hpp"
#include "nnvm/limits.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

namespace {

const ops::OpRegistry& registry_of(const ImportOptions& o) { return o.registry ? *o.registry : ops::default_registry(); }

bool is_model_class(const std::string& k) { return k == "Sequential" || k == "Functional" || k == "Model"; }

DataType input_dtype(const std::string& name, const std::vector<std::string>& where) {
  static const std::map<std::string, DataType> types{
      {"float32", dtype::float32}, {"float64", dtype::float64}, {"float16", dtype::float16},
      {"int32", dtype::int32},     {"int64", dtype::int64},     {"uint8", dtype::uint8},
      {"int8", dtype::int8},       {"bool", dtype::boolean}};
  auto it = types.find(name);
  if (it == types.end())
    throw ImportError("nnvm.keras.unsupported", str_cat("input dtype '", printable(name), "' is not supported"), where);
  return it->second;
}

// The dtype name an InputLayer declares: a string, or Keras 3's DTypePolicy object.
std::string dtype_name(const Json& config) {
  if (!config.contains("dtype")) return "float32";
  const Json& d = config["dtype"];
  if (d.is_string()) return d.get<std::string>();
  if (d.is_object() && d.contains("config") && d["config"].contains("name") && d["config"]["name"].is_string())
    return d["config"]["name"].get<std::string>();
  return "float32";
}

class Importer {
 public:
  Importer(const ModelFile& file, const ImportOptions& options, std::string graph_name)
      : file_(file),
        options_(options),
        a_("keras", std::move(graph_name), registry_of(options), FoldBudget{options.fold_budget_bytes}) {
    const std::string& v = file.keras_version;
    keras_major_ = !v.empty() && v[0] >= '1' && v[0] <= '9' ? v[0] - '0' : (file.legacy_h5 ? 2 : 3);
  }

  graph::Graph run(const ModelSpec& m) {
    Values inputs;
    for (auto& ref : m.inputs) inputs.push_back(declare_input(m, ref));
    for (auto& [name, unused] : options_.input_shapes)
      if (!declared_.count(name))
        throw ImportError("nnvm.keras.shape", str_cat("ImportOptions::input_shapes names '", printable(name),
                                                      "', which is not an input of the model"),
                          {file_.label});
    Values outputs = run_model(m, inputs, file_.legacy_h5 ? "model_weights/" : "", true);
    for (auto& v : outputs) a_.builder().output(v);
    return importers::with_context("keras", {file_.label}, [&] { return a_.builder().build(); });
  }

 private:
  using Key = std::tuple<std::string, int64_t, int64_t>;

  graph::Value declare_input(const ModelSpec& m, const TensorRef& ref) {
    std::vector<std::string> where{file_.label, "input " + printable(ref.layer)};
    const LayerSpec* layer = nullptr;
    for (auto& l : m.layers)
      if (l.name == ref.layer) layer = &l;
    if (!layer || layer->class_name != "InputLayer")
      throw ImportError("nnvm.keras.config", "the model's input is not an InputLayer", where);
    const Json& c = layer->config;
    const char* key = c.contains("batch_shape") ? "batch_shape" : "batch_input_shape";
    std::vector<int64_t> shape;
    if (auto it = options_.input_shapes.find(ref.layer); it != options_.input_shapes.end()) {
      shape = it->second;
    } else {
      if (!c.contains(key) || !c[key].is_array())
        throw ImportError("nnvm.keras.shape", "the InputLayer declares no batch_shape; set ImportOptions::input_shapes", where);
      for (size_t d = 0; d < c[key].size(); ++d) {
        const Json& e = c[key][d];
        if (e.is_null() && d == 0) {
          shape.push_back(options_.batch_size);
        } else if (e.is_number_integer() && e.get<int64_t>() >= 0) {
          shape.push_back(e.get<int64_t>());
        } else {
          throw ImportError("nnvm.keras.shape",
                            str_cat("extent ", d, " of the input is ", printable(e.dump()),
                                    "; set its shape with ImportOptions::input_shapes (nnvmc: --input-shape ",
                                    printable(ref.layer), ":1x...)"),
                            where);
        }
      }
    }
    for (int64_t e : shape)
      if (e < 0) throw ImportError("nnvm.keras.shape", str_cat("input extent ", e, " is negative"), where);
    DataType dtype = input_dtype(dtype_name(c), where);
    if (!checked_tensor_bytes(shape, uint64_t(dtype.bytes())))
      throw ImportError("nnvm.keras.too_large", "the input is larger than 2^48 bytes", where);
    declared_.insert(ref.layer);
    std::vector<ir::Expr> extents(shape.begin(), shape.end());
    return importers::with_context("keras", where, [&] { return a_.builder().input(a_.claim(ref.layer), dtype, extents); });
  }

  // Runs the layers of `m` on `inputs` (one per m.inputs); returns m's outputs. `prefix` is where
  // this model's weights live: "" or "layers/<nested>/" in a .keras file, "model_weights/" in
  // a legacy one.
  Values run_model(const ModelSpec& m, const Values& inputs, const std::string& prefix, bool top) {
    std::map<Key, graph::Value> values;
    for (size_t k = 0; k < m.inputs.size(); ++k) values[{m.inputs[k].layer, m.inputs[k].node, m.inputs[k].tensor}] = inputs.at(k);
    std::map<std::string, int> class_count;
    for (const LayerSpec& l : m.layers) {
      std::vector<std::string> where{file_.label, "layer " + printable(l.name)};
      if (l.class_name == "InputLayer") continue;
      // The .keras weights group: the class's snake_case name, numbered among this model's
      // layers of that class.
      std::string base = snake_case(l.class_name);
      int k = class_count[base]++;
      std::string group = file_.legacy_h5 ? prefix + l.name : prefix + "layers/" + (k ? str_cat(base, "_", k) : base);
      for (size_t call = 0; call < l.calls.size(); ++call) {
        Values in;
        for (auto& r : l.calls[call].inputs) in.push_back(lookup(values, r, where));
        std::map<std::string, graph::Value> kw;
        for (auto& [name, r] : l.calls[call].tensor_kwargs) kw[name] = lookup(values, r, where);
        Values out = importers::with_context("keras", where, [&] {
          return call_layer(l, l.calls[call], std::move(in), std::move(kw), group, where);
        });
        for (size_t t = 0; t < out.size(); ++t) values[{l.name, int64_t(call), int64_t(t)}] = out[t];
      }
    }
    Values outputs;
    for (auto& r : m.outputs) outputs.push_back(lookup(values, r, {file_.label, top ? "model outputs" : "nested model outputs"}));
    return outputs;
  }

  Values call_layer(const LayerSpec& l, const LayerCall& call, Values in, std::map<std::string, graph::Value> kw,
                    const std::string& group, const std::vector<std::string>& where) {
    if (is_model_class(l.class_name)) {
      if (file_.legacy_h5)
        throw ImportError("nnvm.keras.unsupported", "a model nested in a legacy .h5 model is not supported", where);
      ModelSpec inner = model_spec(Json{{"class_name", l.class_name}, {"config", l.config}}, where);
      if (inner.inputs.size() != in.size())
        throw ImportError("nnvm.keras.config", str_cat("the nested model takes ", inner.inputs.size(), " inputs, not ", in.size()), where);
      return run_model(inner, in, group + "/", false);
    }
    auto it = converters().find(l.class_name);
    if (it == converters().end())
      throw ImportError("nnvm.keras.unsupported", str_cat("Keras layer ", printable(l.class_name), " is not supported"), where);
    LayerWeights weights;
    if (file_.weights)
      weights = file_.legacy_h5 ? LayerWeights::legacy(file_.weights.get(), group) : LayerWeights::keras3(file_.weights.get(), group);
    LayerContext c(l, call, std::move(in), std::move(kw), std::move(weights), a_, where, a_.claim(l.name));
    c.set_keras_major(keras_major_);
    Values out = it->second(c);
    c.name_result(out);
    return out;
  }

  graph::Value lookup(const std::map<Key, graph::Value>& values, const TensorRef& r, const std::vector<std::string>& where) const {
    auto it = values.find({r.layer, r.node, r.tensor});
    if (it == values.end())
      throw ImportError("nnvm.keras.config",
                        str_cat("reads output ", r.tensor, " of call ", r.node, " of layer ", printable(r.layer),
                                ", which no earlier layer produced"),
                        where);
    return it->second;
  }

  const ModelFile& file_;
  const ImportOptions& options_;
  importers::GraphAssembly a_;
  std::set<std::string> declared_;
  int keras_major_ = 3;
};

void report_layers(const ModelSpec& m, importers::SupportReport& r, const std::vector<std::string>& where) {
  for (const LayerSpec& l : m.layers) {
    if (l.class_name == "InputLayer") continue;
    ++r.op_counts[l.class_name];
    if (is_model_class(l.class_name)) {
      report_layers(model_spec(Json{{"class_name", l.class_name}, {"config", l.config}}, where), r, where);
      continue;
    }
    if (!converters().count(l.class_name)) {
      r.items.push_back({.node = l.name, .op = l.class_name, .reason = "no nnvm translation for this Keras layer"});
      continue;
    }
    for (const char* key : {"activation", "recurrent_activation"})
      if (l.config.contains(key) && l.config[key].is_string() && !known_activation(l.config[key].get<std::string>()))
        r.items.push_back({.node = l.name, .op = l.class_name,
                           .reason = str_cat("activation '", l.config[key].get<std::string>(), "' is not supported")});
  }
}

std::string graph_name(const ModelSpec& m, const std::string& path) {
  return m.name.empty() ? std::filesystem::path(path).stem().string() : m.name;
}

}  // namespace

importers::SupportReport check_support(const std::string& path, const ImportOptions& options) {
  return importers::with_context("keras", {"file " + printable(path)}, [&] {
    ModelFile f = open_model_file(path, options);
    ModelSpec m = parse_model_config(f.config_json, f.label);
    importers::SupportReport r;
    r.format = "Keras";
    r.default_domain = "keras";
    if (!f.keras_version.empty()) r.producer = "Keras " + f.keras_version;
    for (auto& i : m.inputs) r.inputs.push_back(i.layer);
    report_layers(m, r, {f.label});
    return r;
  });
}

graph::Graph import_model(const std::string& path, const ImportOptions& options) {
  return importers::with_context("keras", {"file " + printable(path)}, [&] {
    ModelFile f = open_model_file(path, options);
    ModelSpec m = parse_model_config(f.config_json, f.label);
    try {
      return Importer(f, options, graph_name(m, path)).run(m);
    } catch (const Json::exception& e) {
      throw ImportError("nnvm.keras.config", str_cat("unexpected configuration structure: ", e.what()), {f.label});
    }
  });
}

}  // namespace keras_import
NNVM_END_NAMESPACE
