#include "convert.hpp"

#include <cmath>


NNVM_BEGIN_NAMESPACE
namespace keras_import {

graph::Value LayerContext::input(size_t k) const {
  if (k >= inputs_.size())
    throw ImportError("nnvm.keras.config", str_cat("the layer is called with ", inputs_.size(), " tensors; input ", k,
                                                   " is needed"),
                      where_);
  return inputs_[k];
}

const graph::Value* LayerContext::tensor_kwarg(const std::string& name) const {
  auto it = tensor_kwargs_.find(name);
  return it == tensor_kwargs_.end() ? nullptr : &it->second;
}

Json LayerContext::kwarg(const std::string& name) const {
  return call_.kwargs.contains(name) ? call_.kwargs[name] : Json();
}

bool LayerContext::has(const std::string& key) const {
  return layer_.config.contains(key) && !layer_.config[key].is_null();
}

const Json& LayerContext::raw(const std::string& key) const {
  if (!has(key)) bad_attribute(key, "the key is missing");
  return layer_.config[key];
}

int64_t LayerContext::integer(const std::string& key, int64_t fallback) const {
  if (!has(key)) return fallback;
  const Json& v = raw(key);
  if (!v.is_number_integer()) bad_attribute(key, str_cat("is ", printable(v.dump().substr(0, 60)), ", not an integer"));
  return v.get<int64_t>();
}

double LayerContext::real(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  const Json& v = raw(key);
  if (!v.is_number()) bad_attribute(key, str_cat("is ", printable(v.dump().substr(0, 60)), ", not a number"));
  return v.get<double>();
}

bool LayerContext::flag(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const Json& v = raw(key);
  if (!v.is_boolean()) bad_attribute(key, str_cat("is ", printable(v.dump().substr(0, 60)), ", not true or false"));
  return v.get<bool>();
}

std::string LayerContext::text(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const Json& v = raw(key);
  if (!v.is_string()) bad_attribute(key, str_cat("is ", printable(v.dump().substr(0, 60)), ", not a string"));
  return v.get<std::string>();
}

std::vector<int64_t> LayerContext::int_list(const std::string& key) const {
  const Json& v = raw(key);
  if (v.is_number_integer()) return {v.get<int64_t>()};
  if (!v.is_array()) bad_attribute(key, "is not a list of integers");
  std::vector<int64_t> out;
  for (auto& e : v) {
    if (!e.is_number_integer()) bad_attribute(key, str_cat(printable(v.dump().substr(0, 60)), " is not a list of integers"));
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::vector<int64_t> LayerContext::ints(const std::string& key, size_t dims, int64_t fallback) const {
  if (!has(key)) return std::vector<int64_t>(dims, fallback);
  std::vector<int64_t> v = int_list(key);
  if (v.size() == 1 && dims > 1) v.assign(dims, v[0]);
  if (v.size() != dims) bad_attribute(key, str_cat("has ", v.size(), " entries; the layer needs ", dims));
  return v;
}

std::vector<NDArray> LayerContext::weights(size_t count, const std::vector<std::string>& subgroups) const {
  std::vector<NDArray> w = weights_.read(subgroups, where_);
  if (w.size() < count)
    throw ImportError("nnvm.keras.weights",
                      str_cat("the layer has ", w.size(), " weight arrays in the file; its configuration needs ", count),
                      where_);
  return w;
}

LayerContext LayerContext::wrapped(const LayerSpec& inner, LayerWeights weights) {
  std::vector<std::string> at = where();
  at.push_back("wrapped layer " + printable(inner.name));
  LayerContext c(inner, call_, inputs_, tensor_kwargs_, std::move(weights), a_, std::move(at),
                 a_.claim(name_ + "/" + inner.name));
  c.set_keras_major(keras_major_);
  return c;
}

graph::Value LayerContext::to_channels_first(const graph::Value& v, const std::string& suffix) {
  const int64_t r = rank(v);
  std::vector<int64_t> perm{0, r - 1};
  for (int64_t d = 1; d < r - 1; ++d) perm.push_back(d);
  return op("transpose", {v}, ops::Attrs().set_ints("perm", perm), suffix);
}

graph::Value LayerContext::to_channels_last(const graph::Value& v, const std::string& suffix) {
  const int64_t r = rank(v);
  std::vector<int64_t> perm{0};
  for (int64_t d = 2; d < r; ++d) perm.push_back(d);
  perm.push_back(1);
  return op("transpose", {v}, ops::Attrs().set_ints("perm", perm), suffix);
}

bool LayerContext::channels_last() const {
  const std::string f = text("data_format", "channels_last");
  if (f != "channels_last" && f != "channels_first")
    bad_attribute("data_format", str_cat("'", printable(f), "' is neither channels_last nor channels_first"));
  return f == "channels_last";
}

namespace {

// Activations that are one nnvm op with fixed attributes.
struct SimpleActivation {
  const char* op;
  ops::Attrs attrs;
};

const std::map<std::string, SimpleActivation>& simple_activations() {
  static const std::map<std::string, SimpleActivation> table{
      {"relu", {"relu", {}}},
      {"sigmoid", {"sigmoid", {}}},
      {"tanh", {"tanh", {}}},
      {"softplus", {"softplus", {}}},
      {"softsign", {"softsign", {}}},
      {"elu", {"elu", ops::Attrs().set_float("alpha", 1.0)}},
      // celu with Keras' alpha 1 is elu.
      {"celu", {"elu", ops::Attrs().set_float("alpha", 1.0)}},
      {"selu", {"selu", {}}},
      {"gelu", {"gelu", ops::Attrs().set_string("approximate", "none")}},
      {"exponential", {"exp", {}}},
      {"leaky_relu", {"leaky_relu", ops::Attrs().set_float("alpha", 0.2)}},
      {"mish", {"mish", {}}},
      {"hard_silu", {"hard_swish", {}}},
      {"hard_swish", {"hard_swish", {}}},
      {"softmax", {"softmax", ops::Attrs().set_int("axis", -1)}},
      {"log_softmax", {"log_softmax", ops::Attrs().set_int("axis", -1)}},
  };
  return table;
}

}  // namespace

bool known_activation(const std::string& name) {
  return simple_activations().count(name) || name == "linear" || name == "relu6" || name == "silu" ||
         name == "swish" || name == "hard_sigmoid" || name == "log_sigmoid" || name == "hard_tanh";
}

graph::Value LayerContext::activation(const graph::Value& x, const std::string& name, const std::string& suffix) {
  if (name == "linear") return x;
  if (auto it = simple_activations().find(name); it != simple_activations().end())
    return op(it->second.op, {x}, it->second.attrs, suffix);
  if (name == "relu6" || name == "hard_tanh") {
    const double lo = name == "relu6" ? 0.0 : -1.0, hi = name == "relu6" ? 6.0 : 1.0;
    return op("clip", {x, scalar_like(lo, x, "min"), scalar_like(hi, x, "max")}, {}, suffix);
  }
  if (name == "silu" || name == "swish")
    return op("mul", {x, op("sigmoid", {x}, {}, "sigmoid")}, {}, suffix);
  if (name == "hard_sigmoid") {
    // Keras 3: relu6(x + 3) / 6; Keras 2: clip(0.2 x + 0.5, 0, 1).
    const double alpha = keras_major_ >= 3 ? 1.0 / 6.0 : 0.2;
    return op("hard_sigmoid", {x}, ops::Attrs().set_float("alpha", alpha).set_float("beta", 0.5), suffix);
  }
  if (name == "log_sigmoid") {
    graph::Value sp = op("softplus", {op("neg", {x}, {}, "neg")}, {}, "softplus");
    return op("neg", {sp}, {}, suffix);
  }
  std::vector<std::string> at = where_;
  at.push_back("activation " + printable(name));
  throw ImportError("nnvm.keras.unsupported", str_cat("the activation '", printable(name), "' is not supported"), at);
}

const std::map<std::string, Converter>& converters() {
  static const std::map<std::string, Converter> table = [] {
    std::map<std::string, Converter> t;
    add_core_converters(t);
    add_conv_converters(t);
    add_sequence_converters(t);
    return t;
  }();
  return table;
}

}  // namespace keras_import
NNVM_END_NAMESPACE
