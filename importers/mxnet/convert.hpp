// The table from MXNet ops to nnvm ops. Each entry turns one symbol node into graph values
// through a NodeContext, which reads MXNet's string-valued attributes with checks (errors name
// the node and the attribute) and adds ops and constants under the node's name.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nnvm/importers/node_emitter.hpp"
#include "symbol.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

class NodeContext : public importers::NodeEmitter {
 public:
  NodeContext(const SymbolNode& node, std::vector<graph::Value> inputs, importers::GraphAssembly& assembly,
              std::vector<std::string> where, std::string graph_name)
      : NodeEmitter(assembly, std::move(where), std::move(graph_name)), node_(node), inputs_(std::move(inputs)) {}

  const SymbolNode& node() const { return node_; }

  // The k-th input; ImportError "nnvm.mxnet.graph" when the node has fewer.
  graph::Value input(size_t k) const;
  size_t num_inputs() const { return inputs_.size(); }
  const std::vector<graph::Value>& inputs() const { return inputs_; }

  // Attributes, as MXNet spells them: ints ("3"), floats ("1e-05"), booleans ("True", "1"),
  // tuples ("(3, 3)", "[1,2]", "(None, 2)"). A present value of the wrong form is an ImportError
  // "nnvm.mxnet.attribute" naming the attribute.
  bool has(const std::string& name) const { return node_.attrs.count(name) > 0; }
  std::string text(const std::string& name, const std::string& fallback) const;
  int64_t integer(const std::string& name) const;
  int64_t integer(const std::string& name, int64_t fallback) const;
  double real(const std::string& name, double fallback) const;
  bool flag(const std::string& name, bool fallback) const;
  std::vector<int64_t> ints(const std::string& name, std::vector<int64_t> fallback) const;
  // A tuple whose entries may be "None"; an int or "None" alone is a one-element tuple.
  std::vector<std::optional<int64_t>> optional_ints(const std::string& name) const;
  // An int, or "None" (nullopt); absent is nullopt.
  std::optional<int64_t> optional_int(const std::string& name) const;

 private:
  const std::string& raw(const std::string& name) const { return node_.attrs.at(name); }

  const SymbolNode& node_;
  std::vector<graph::Value> inputs_;
};

struct Converter {
  std::function<std::vector<graph::Value>(NodeContext&)> convert;
  // Inputs past this many are training-only (a *Output op's label) and are not read.
  size_t data_inputs = SIZE_MAX;
};

// The table: MXNet op name -> converter. convert_nn.cpp and convert_tensor.cpp fill it.
const std::map<std::string, Converter>& converters();
void add_nn_converters(std::map<std::string, Converter>& table);
void add_tensor_converters(std::map<std::string, Converter>& table);

}  // namespace mxnet_import
NNVM_END_NAMESPACE
