// What every format's converter table shares when it turns one node (layer, op) of a model into
// nnvm ops: ops and constants named after the node, its inputs' types and static shapes, axes
// checked against a rank, and errors that name the file, the node and the attribute (or, for
// Keras, the configuration key). Each importer's context (mxnet::NodeContext,
// keras::LayerContext, coreml::Context) derives from it and adds how its format spells
// attributes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnvm/importers/graph_assembly.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

class NodeEmitter {
 public:
  // `where` is the context of every error (file, node); `graph_name` the node's claimed graph
  // name; `key_word` what the format calls a node's settings in messages ("attribute", "key").
  NodeEmitter(GraphAssembly& assembly, std::vector<std::string> where, std::string graph_name,
              std::string key_word = "attribute");

  const std::vector<std::string>& where() const { return where_; }
  // `where` plus "<key_word> 'key'" when `key` is not empty.
  std::vector<std::string> at(const std::string& key) const;

  // ImportError "nnvm.<format>.attribute": the value is invalid.
  [[noreturn]] void bad_attribute(const std::string& key, const std::string& why) const;
  // ImportError "nnvm.<format>.unsupported": valid, but nnvm has no implementation of it.
  [[noreturn]] void unsupported(const std::string& key, const std::string& why) const;
  // ImportError "nnvm.<format>.shape".
  [[noreturn]] void bad_shape(const std::string& why) const;

  // Adds nnvm op `op`. With an empty `suffix` the first such op takes the node's own name (the
  // op that yields the node's result, when the converter knows it); any other is named
  // "<node>/<suffix>" ("<node>/<op>" for a later empty suffix).
  graph::Value op(const std::string& op, std::vector<graph::Value> inputs, ops::Attrs attrs = {},
                  const std::string& suffix = "");
  std::vector<graph::Value> op_outputs(const std::string& op, std::vector<graph::Value> inputs, ops::Attrs attrs,
                                       const std::string& suffix = "");
  graph::Value constant(NDArray data, const std::string& suffix = "const");
  graph::Value int64s(const std::vector<int64_t>& values, const std::string& suffix = "const");
  // A rank-0 constant of `like`'s type.
  graph::Value scalar_like(double value, const graph::Value& like, const std::string& suffix = "scalar");
  // `x` reshaped to `shape` (named "<node>/<suffix>", or as op() names an empty suffix).
  graph::Value reshape(graph::Value x, const std::vector<int64_t>& shape, const std::string& suffix = "");
  // Names the node's first result after the node when an op of this emitter made it and no op
  // took the name yet (for converters whose last op is known only at their end).
  void name_result(const std::vector<graph::Value>& results);

  ops::TensorType type(const graph::Value& v) const { return a_.graph().type(v); }
  int64_t rank(const graph::Value& v) const { return int64_t(type(v).shape.size()); }
  // The static shape of `v`; ImportError "nnvm.<format>.shape" when an extent is symbolic.
  std::vector<int64_t> shape(const graph::Value& v) const;
  // An axis in [-rank, rank) made non-negative; ImportError naming `key` otherwise.
  int64_t axis(int64_t axis, int64_t rank, const std::string& key) const;

 protected:
  GraphAssembly& a_;
  std::vector<std::string> where_;
  std::string name_;  // the node's graph name

 private:
  std::string name_for(const std::string& op, const std::string& suffix);

  std::string key_word_;
  bool name_taken_ = false;  // whether an op already carries name_
  size_t first_node_;        // graph nodes from here on were made through this emitter
};

}  // namespace importers
NNVM_END_NAMESPACE
