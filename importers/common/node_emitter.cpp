#include "nnvm/importers/node_emitter.hpp"

#include "nnvm/importers/scalar_constant.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

NodeEmitter::NodeEmitter(GraphAssembly& assembly, std::vector<std::string> where, std::string graph_name,
                         std::string key_word)
    : a_(assembly),
      where_(std::move(where)),
      name_(std::move(graph_name)),
      key_word_(std::move(key_word)),
      first_node_(assembly.graph().nodes.size()) {}

std::vector<std::string> NodeEmitter::at(const std::string& key) const {
  std::vector<std::string> out = where_;
  if (!key.empty()) out.push_back(key_word_ + " '" + printable(key) + "'");
  return out;
}

void NodeEmitter::bad_attribute(const std::string& key, const std::string& why) const {
  throw ImportError(str_cat("nnvm.", a_.format(), ".attribute"), why, at(key));
}

void NodeEmitter::unsupported(const std::string& key, const std::string& why) const {
  throw ImportError(str_cat("nnvm.", a_.format(), ".unsupported"), why, at(key));
}

void NodeEmitter::bad_shape(const std::string& why) const {
  throw ImportError(str_cat("nnvm.", a_.format(), ".shape"), why, where_);
}

std::string NodeEmitter::name_for(const std::string& op, const std::string& suffix) {
  if (suffix.empty() && !name_taken_) {
    name_taken_ = true;
    return name_;
  }
  return a_.claim(name_ + "/" + (suffix.empty() ? op : suffix));
}

graph::Value NodeEmitter::op(const std::string& op, std::vector<graph::Value> inputs, ops::Attrs attrs,
                             const std::string& suffix) {
  return op_outputs(op, std::move(inputs), std::move(attrs), suffix).front();
}

std::vector<graph::Value> NodeEmitter::op_outputs(const std::string& op, std::vector<graph::Value> inputs,
                                                  ops::Attrs attrs, const std::string& suffix) {
  return a_.builder().op_outputs(op, std::move(inputs), std::move(attrs), name_for(op, suffix));
}

graph::Value NodeEmitter::constant(NDArray data, const std::string& suffix) {
  return a_.builder().constant(a_.claim(name_ + "/" + suffix), std::move(data));
}

graph::Value NodeEmitter::int64s(const std::vector<int64_t>& values, const std::string& suffix) {
  return constant(NDArray::from(values, {int64_t(values.size())}), suffix);
}

graph::Value NodeEmitter::scalar_like(double value, const graph::Value& like, const std::string& suffix) {
  return constant(scalar_constant(a_.format(), type(like).dtype, value), suffix);
}

graph::Value NodeEmitter::reshape(graph::Value x, const std::vector<int64_t>& shape, const std::string& suffix) {
  return op("reshape", {x, int64s(shape, suffix.empty() ? "shape" : suffix + "_shape")}, {}, suffix);
}

void NodeEmitter::name_result(const std::vector<graph::Value>& results) {
  if (name_taken_ || results.empty() || results[0].node < first_node_) return;
  a_.builder().rename(results[0].node, name_);
  name_taken_ = true;
}

std::vector<int64_t> NodeEmitter::shape(const graph::Value& v) const {
  std::vector<int64_t> out;
  for (auto& e : type(v).shape) {
    const int64_t* c = ir::as_const_int(e);
    if (!c) bad_shape("an input's shape is not known when importing");
    out.push_back(*c);
  }
  return out;
}

int64_t NodeEmitter::axis(int64_t axis, int64_t rank, const std::string& key) const {
  if (axis < -rank || axis >= rank) bad_attribute(key, str_cat("axis ", axis, " is outside a rank-", rank, " input"));
  return axis < 0 ? axis + rank : axis;
}

}  // namespace importers
NNVM_END_NAMESPACE
