#include "nn.hpp"

#include <google/protobuf/unknown_field_set.h>

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

graph::Value LayerContext::input(size_t k) const {
  if (k >= inputs_.size())
    throw ImportError("nnvm.coreml.graph", str_cat("the layer has ", inputs_.size(), " inputs; input ", k, " is needed"),
                      where_);
  return inputs_[k];
}

int64_t LayerContext::channel_axis(const graph::Value& v) const {
  const int64_t r = rank(v);
  if (rank5_) return 1;
  return r >= 3 ? r - 3 : r - 1;
}

graph::Value LayerContext::weight(const nnvm_coreml_spec::WeightParams& w, const std::vector<int64_t>& shape,
                                  const std::string& attribute) {
  return constant(weight_array(w, shape, where_, attribute), attribute);
}

graph::Value LayerContext::channel_weight(const nnvm_coreml_spec::WeightParams& w, const graph::Value& x,
                                          const std::string& attribute) {
  const int64_t count = weight_count(w);
  const int64_t rank = this->rank(x), axis = channel_axis(x);
  if (count == 1) return weight(w, {1}, attribute);
  // (C, 1, ..., 1) with as many unit axes as follow the channel axis.
  std::vector<int64_t> shape(size_t(rank - axis), 1);
  shape[0] = count;
  if (count != this->shape(x)[size_t(axis)])
    bad_attribute(attribute, str_cat("holds ", count, " values for an input of ", this->shape(x)[size_t(axis)], " channels"));
  return weight(w, shape, attribute);
}

std::string layer_kind(const Layer& layer) {
  if (const auto* field = Layer::GetDescriptor()->FindFieldByNumber(int(layer.layer_case()))) return field->name();
  // A layer kind coreml.proto does not declare arrives as an unknown field: name its number,
  // which the specification's NeuralNetworkLayer lists.
  const auto& unknown = layer.GetReflection()->GetUnknownFields(layer);
  for (int i = 0; i < unknown.field_count(); ++i)
    if (unknown.field(i).number() >= 100) return str_cat("NeuralNetworkLayer field ", unknown.field(i).number());
  return "(no parameters)";
}

const std::map<int, LayerConverter>& layer_converters() {
  static const std::map<int, LayerConverter> table = [] {
    std::map<int, LayerConverter> t;
    add_nn_layer_converters(t);
    add_tensor_layer_converters(t);
    return t;
  }();
  return table;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
