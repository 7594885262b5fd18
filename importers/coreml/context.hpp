// What the NeuralNetwork layer table and the MIL op table share: adding nnvm ops and constants
// under the layer's (op's) name, reading shapes, and errors that name the file, the layer and
// the attribute.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnvm/importers/graph_assembly.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

// A name from the file, escaped and quoted for messages: 'conv1'.
inline std::string quoted(std::string_view s) { return "'" + printable(s) + "'"; }

class Context {
 public:
  Context(importers::GraphAssembly& assembly, std::vector<std::string> where, std::string graph_name)
      : a_(assembly), where_(std::move(where)), name_(std::move(graph_name)) {}

  const std::vector<std::string>& where() const { return where_; }
  // `where` plus "attribute <name>" when `name` is not empty.
  std::vector<std::string> at(const std::string& name) const;

  // ImportError "nnvm.coreml.attribute": the attribute's value is invalid.
  [[noreturn]] void bad_attribute(const std::string& name, const std::string& why) const;
  // ImportError "nnvm.coreml.unsupported": valid, but nnvm has no implementation of it.
  [[noreturn]] void unsupported(const std::string& name, const std::string& why) const;
  // ImportError "nnvm.coreml.shape".
  [[noreturn]] void bad_shape(const std::string& why) const;

  // Adds nnvm op `op` named "<layer>/<suffix>", or the layer's own name when `suffix` is empty
  // (the op that yields the layer's result takes the layer's name).
  graph::Value op(const std::string& op, std::vector<graph::Value> inputs, ops::Attrs attrs = {},
                  const std::string& suffix = "");
  graph::Value constant(NDArray data, const std::string& suffix = "const");
  graph::Value int64s(const std::vector<int64_t>& values, const std::string& suffix = "const");
  // A rank-0 constant of `like`'s type.
  graph::Value scalar_like(double value, const graph::Value& like, const std::string& suffix = "scalar");
  // x * scale + shift, skipping the identity parts; `suffix` names the intermediate nodes.
  graph::Value affine(graph::Value x, double scale, double shift, const std::string& suffix);
  // `x` reshaped to `shape` (named "<layer>/<suffix>", the layer itself when empty).
  graph::Value reshape(graph::Value x, const std::vector<int64_t>& shape, const std::string& suffix = "");

  ops::TensorType type(const graph::Value& v) const { return a_.graph().type(v); }
  int64_t rank(const graph::Value& v) const { return int64_t(type(v).shape.size()); }
  // The static shape of `v`; ImportError "nnvm.coreml.shape" when an extent is symbolic.
  std::vector<int64_t> shape(const graph::Value& v) const;
  // An axis in [-rank, rank) made non-negative; ImportError naming `attribute` otherwise.
  int64_t axis(int64_t axis, int64_t rank, const std::string& attribute) const;

 protected:
  importers::GraphAssembly& a_;
  std::vector<std::string> where_;
  std::string name_;  // the layer's graph name
};

}  // namespace coreml_import
NNVM_END_NAMESPACE
