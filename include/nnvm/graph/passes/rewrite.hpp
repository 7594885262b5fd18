// The shared machinery of graph passes: a new graph is built node by node from an old one. Each
// old node is kept (copied with its inputs remapped), dropped, or replaced by values of the new
// graph; the outputs follow. Node order stays topological because nodes are visited in order.
#pragma once

#include "nnvm/graph/evaluate.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

class GraphRewriter {
 public:
  explicit GraphRewriter(const Graph& src) : src_(src), map_(src.nodes.size()) {
    out_.name = src.name;
    out_.registry = src.registry;
  }

  const Graph& source() const { return src_; }
  const Graph& result() const { return out_; }

  // The new value standing for old value `v` (undefined stays undefined).
  Value map(const Value& v) const {
    if (!v.defined()) return v;
    return map_.at(v.node).at(v.index);
  }
  bool mapped(size_t old_node) const { return !map_[old_node].empty(); }

  // Copies old node `i` with remapped inputs; returns its index in the new graph.
  size_t keep(size_t i) {
    Node n = src_.nodes[i];
    for (auto& v : n.inputs) v = map(v);
    out_.nodes.push_back(std::move(n));
    size_t at = out_.nodes.size() - 1;
    map_[i].clear();
    for (size_t k = 0; k < out_.nodes[at].num_outputs(); ++k) map_[i].push_back({at, k});
    return at;
  }
  // Copies old node `i` under its name with remapped inputs and attributes `attrs`, its types
  // inferred again (the attributes may change its outputs); old outputs it no longer has map to
  // no value. Returns its index in the new graph.
  size_t keep_with(size_t i, Attrs attrs) {
    Node n = src_.nodes[i];
    for (auto& v : n.inputs) v = map(v);
    n.attrs = std::move(attrs);
    n.types = detail::infer_node(out_, n);
    size_t at = add(std::move(n));
    map_[i].assign(src_.nodes[i].num_outputs(), Value{});
    for (size_t k = 0; k < std::min(map_[i].size(), out_.nodes[at].num_outputs()); ++k) map_[i][k] = {at, k};
    return at;
  }
  // Old node `i`'s outputs become `values` (of the new graph).
  void replace(size_t i, std::vector<Value> values) { map_[i] = std::move(values); }

  // Appends a node to the new graph (its inputs already refer to the new graph).
  size_t add(Node n) {
    out_.nodes.push_back(std::move(n));
    return out_.nodes.size() - 1;
  }
  // Appends a constant node holding `data`, named after `base`.
  Value add_constant(const std::string& base, NDArray data) {
    Node c;
    c.kind = NodeKind::constant;
    c.name = fresh_name(base);
    c.types = {TensorType(data.dtype(), data.shape())};
    c.data = std::make_shared<const NDArray>(std::move(data));
    return Value{add(std::move(c)), 0};
  }
  // Appends a use of op `op` on `inputs` (of the new graph), its output types inferred.
  Value add_op(const std::string& base, const std::string& op, std::vector<Value> inputs, Attrs attrs) {
    Node n;
    n.name = fresh_name(base);
    n.op = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.types = detail::infer_node(out_, n);
    return Value{add(std::move(n)), 0};
  }
  Node& node(size_t new_index) { return out_.nodes[new_index]; }
  void pop() { out_.nodes.pop_back(); }

  // A fresh node name based on `base`, unique in both graphs.
  std::string fresh_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; src_.find(name) != Value::npos || out_.find(name) != Value::npos; ++k) name = str_cat(base, "_", k);
    return name;
  }

  Graph finish() {
    out_.outputs.clear();
    for (auto& v : src_.outputs) out_.outputs.push_back(map(v));
    return std::move(out_);
  }

 private:
  const Graph& src_;
  Graph out_;
  std::vector<std::vector<Value>> map_;
};

namespace detail {
// `t`'s extents when all are constants.
inline std::optional<std::vector<int64_t>> constant_shape(const TensorType& t) {
  std::vector<int64_t> out;
  for (auto& e : t.shape) {
    auto c = ir::simplified_const_int(e);
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

}  // namespace detail

// The number of uses of every node output (graph outputs count as uses).
inline std::vector<std::vector<int>> use_counts(const Graph& g) {
  std::vector<std::vector<int>> uses(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) uses[i].assign(g.nodes[i].num_outputs(), 0);
  for (auto& n : g.nodes)
    for (auto& v : n.inputs)
      if (v.defined()) ++uses[v.node][v.index];
  for (auto& v : g.outputs) ++uses[v.node][v.index];
  return uses;
}

}  // namespace graph
NNVM_END_NAMESPACE
