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

#include "nnvm/importers/graph_assembly.hpp"
#include "symbol.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

class NodeContext {
 public:
  NodeContext(const SymbolNode& node, std::vector<graph::Value> inputs, importers::GraphAssembly& assembly,
              std::vector<std::string> where, std::string graph_name)
      : node_(node), inputs_(std::move(inputs)), a_(assembly), where_(std::move(where)), name_(std::move(graph_name)) {}

  const SymbolNode& node() const { return node_; }
  const std::vector<std::string>& where() const { return where_; }

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

  [[noreturn]] void bad_attribute(const std::string& name, const std::string& why) const;
  // ImportError "nnvm.mxnet.unsupported": the attribute's value has no nnvm implementation.
  [[noreturn]] void unsupported(const std::string& name, const std::string& why) const;

  // Adds nnvm op `op` named "<node>/<suffix>", or the node's own name when `suffix` is empty
  // (the op that yields the node's result takes the node's name).
  graph::Value op(const std::string& op, std::vector<graph::Value> inputs, ops::Attrs attrs = {},
                  const std::string& suffix = "");
  std::vector<graph::Value> op_outputs(const std::string& op, std::vector<graph::Value> inputs, ops::Attrs attrs,
                                       const std::string& suffix = "");
  graph::Value constant(NDArray data, const std::string& suffix = "const");
  graph::Value int64s(const std::vector<int64_t>& values, const std::string& suffix = "const");
  // A rank-0 constant of `like`'s type.
  graph::Value scalar_like(double value, const graph::Value& like, const std::string& suffix = "scalar");

  ops::TensorType type(const graph::Value& v) const { return a_.graph().type(v); }
  // The static shape of `v`; ImportError "nnvm.mxnet.shape" when an extent is symbolic.
  std::vector<int64_t> shape(const graph::Value& v) const;
  // An axis in [-rank, rank) made non-negative; ImportError naming `attribute` otherwise.
  int64_t axis(int64_t axis, int64_t rank, const std::string& attribute) const;

 private:
  const std::string& raw(const std::string& name) const { return node_.attrs.at(name); }

  const SymbolNode& node_;
  std::vector<graph::Value> inputs_;
  importers::GraphAssembly& a_;
  std::vector<std::string> where_;
  std::string name_;  // the node's graph name
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
