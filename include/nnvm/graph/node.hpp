// The graph IR: a model as a list of nodes in topological order. A node is a graph input, a
// constant, one use of a registered op, or a control node (if, loop, scan) that runs graphs of
// its own (graph/control.hpp); a value is one output of one node. Passes and the
// executor walk `nodes` front to back, so the order is the evaluation order and stays stable
// (the builder appends, a pass that rewrites keeps producers before consumers).
#pragma once

#include <limits>
#include <memory>

#include "nnvm/ndarray.hpp"
#include "nnvm/ops/registry.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

using ops::Attrs;
using ops::TensorType;

// One output of one node: the producer's index in Graph::nodes and the output's index.
struct Value {
  static constexpr size_t npos = std::numeric_limits<size_t>::max();
  size_t node = npos;
  size_t index = 0;

  bool defined() const { return node != npos; }
  friend bool operator==(const Value&, const Value&) = default;
};

enum class NodeKind : uint8_t { input, constant, op, control };

struct Graph;

struct Node {
  NodeKind kind = NodeKind::op;
  // Unique in the graph; names the node in errors, printouts and importer round trips.
  std::string name;
  // The registered op's name (kind op); "if", "loop" or "scan" (kind control).
  std::string op;
  std::vector<Value> inputs;
  Attrs attrs;
  // One per output: set by the builder for inputs and constants, by inference for ops.
  std::vector<TensorType> types;
  // The data of a constant; shared so copying a graph in a pass does not copy weights.
  std::shared_ptr<const NDArray> data;
  // A control node's graphs: if's then and else branches, a loop's or a scan's body. Shared, so
  // a pass that copies the node does not copy them; a pass that changes one makes a new one.
  std::vector<std::shared_ptr<const Graph>> bodies;

  size_t num_outputs() const { return types.size(); }
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Value> outputs;
  // Where op names resolve; never null. The default registry unless the builder was given one.
  const ops::OpRegistry* registry = &ops::default_registry();

  // The input nodes' indices, in the order they were declared.
  std::vector<size_t> inputs() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].kind == NodeKind::input) out.push_back(i);
    return out;
  }
  const Node& node(const Value& v) const { return nodes.at(v.node); }
  const TensorType& type(const Value& v) const { return nodes.at(v.node).types.at(v.index); }
  // Index of the node called `name`, or Value::npos.
  size_t find(std::string_view name) const {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].name == name) return i;
    return Value::npos;
  }
};

namespace detail {
// Names come from model files, so they are escaped (printable) before they enter a message.
inline std::vector<std::string> where(const Graph& g, const Node* n = nullptr) {
  std::vector<std::string> ctx{"graph " + (g.name.empty() ? std::string("<unnamed>") : printable(g.name))};
  if (n) ctx.push_back("node " + printable(n->name));
  return ctx;
}

// UserError "nnvm.graph.too_large" when output `k` of `n`, typed `t`, is larger than
// max_tensor_bytes. Only a type whose extents are all constants is checked; a symbolic one is
// checked again once bind_shapes has replaced its extents with numbers.
inline void check_size(const Graph& g, const Node& n, const TensorType& t, size_t k) {
  std::vector<int64_t> extents;
  for (auto& e : t.shape) {
    const int64_t* c = ir::as_const_int(e);
    if (!c) return;
    extents.push_back(*c);
  }
  if (checked_tensor_bytes(extents, uint64_t(t.dtype.bytes()))) return;
  std::string shape;
  for (size_t d = 0; d < extents.size(); ++d) shape += str_cat(d ? ", " : "", extents[d]);
  throw UserError("nnvm.graph.too_large",
                  str_cat(n.kind == NodeKind::op ? str_cat("output ", k, " would be") : std::string("it is"), " a ",
                          t.dtype, " tensor of shape [", shape, "], larger than 2^48 bytes"),
                  where(g, &n));
}
inline const char* kind_name(NodeKind k) {
  static const char* const names[] = {"input", "constant", "op", "control"};
  return names[static_cast<int>(k)];
}
// Throws "nnvm.graph.dangling_value" unless `v` names an output of a node before `before`.
inline void check_value(const Graph& g, const Value& v, size_t before, const Node* user, const std::string& what) {
  if (!v.defined() || v.node >= before)
    throw UserError("nnvm.graph.dangling_value",
                    str_cat(what, " refers to ", v.defined() ? str_cat("node #", v.node) : std::string("no node"),
                            ", which is not defined before it"),
                    where(g, user));
  const Node& p = g.nodes[v.node];
  if (v.index >= p.num_outputs())
    throw UserError("nnvm.graph.dangling_value",
                    str_cat(what, " refers to output ", v.index, " of node ", p.name, ", which has ",
                            p.num_outputs(), " output", p.num_outputs() == 1 ? "" : "s"),
                    where(g, user));
}

inline void check_control(const Graph& g, size_t i);  // graph/control.hpp

// Every check on node `i` except name uniqueness (which needs the whole graph).
inline void check_node(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  if (n.name.empty()) throw UserError("nnvm.graph.invalid", str_cat("node #", i, " has no name"), where(g));
  if ((n.kind == NodeKind::input || n.kind == NodeKind::constant) && (!n.inputs.empty() || n.types.size() != 1))
    throw UserError("nnvm.graph.invalid",
                    str_cat("a graph ", kind_name(n.kind), " has no inputs and exactly one output"), where(g, &n));
  if (n.kind == NodeKind::input) check_size(g, n, n.types[0], 0);
  if (n.kind == NodeKind::constant) {
    const TensorType& t = n.types[0];
    bool ok = n.data && n.data->dtype() == t.dtype && n.data->shape().size() == t.shape.size();
    for (size_t d = 0; ok && d < t.shape.size(); ++d) ok = ir::is_const_int(t.shape[d], n.data->shape()[d]);
    if (!ok)
      throw UserError("nnvm.graph.invalid", "a constant's data is missing or does not match its type", where(g, &n));
  }
  if (n.kind == NodeKind::control) return check_control(g, i);
  if (n.kind != NodeKind::op) return;
  const ops::OpDef* def = nullptr;
  try {
    def = &g.registry->get(n.op);
  } catch (const UserError& e) {
    throw UserError("nnvm.graph.unknown_op", e.message(), where(g, &n));
  }
  size_t most = def->input_names.size(), least = most - std::min(def->optional_inputs, most);
  if (n.inputs.size() < least || n.inputs.size() > most)
    throw UserError("nnvm.graph.input_count",
                    str_cat("op ", n.op, " takes ", least == most ? str_cat(most) : str_cat(least, " to ", most),
                            " input", most == 1 ? "" : "s", ", got ", n.inputs.size()),
                    where(g, &n));
  // An undefined value is an optional input left out (ONNX's "" input).
  for (size_t k = 0; k < n.inputs.size(); ++k)
    if (n.inputs[k].defined() || k < least)
      check_value(g, n.inputs[k], i, &n, str_cat("input ", k, " (", def->input_names[k], ")"));
}
}  // namespace detail

// Checks the structure: unique non-empty names, every value produced by an earlier node, op
// names registered, input counts within the op's bounds, constants with data matching their type,
// at least one output. UserError ids: nnvm.graph.duplicate_name, nnvm.graph.dangling_value,
// nnvm.graph.unknown_op, nnvm.graph.input_count, nnvm.graph.invalid, nnvm.graph.no_outputs.
inline void validate(const Graph& g) {
  std::map<std::string_view, size_t> names;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (auto [it, fresh] = names.emplace(g.nodes[i].name, i); !fresh && !g.nodes[i].name.empty())
      throw UserError("nnvm.graph.duplicate_name",
                      str_cat("nodes #", it->second, " and #", i, " are both named '", g.nodes[i].name, "'"),
                      detail::where(g));
    detail::check_node(g, i);
  }
  if (g.outputs.empty()) throw UserError("nnvm.graph.no_outputs", "the graph has no outputs", detail::where(g));
  for (size_t k = 0; k < g.outputs.size(); ++k)
    detail::check_value(g, g.outputs[k], g.nodes.size(), nullptr, str_cat("graph output ", k));
}

}  // namespace graph
NNVM_END_NAMESPACE

#include "nnvm/graph/control.hpp"
