// Writing a model in code:
//   GraphBuilder b("mlp");
//   ir::Var n("n");
//   auto x = b.input("x", dtype::float32, {n, 784});
//   auto w = b.constant("w", NDArray::from(weights, {784, 128}));
//   auto y = b.op("relu", {b.op("dense", {x, w})});
//   b.output(y);
//   Graph g = b.build();
// Each call checks its node at once (unknown op, input count, types through the op's rule), so an
// error points at the line that made the node.
#pragma once

#include <optional>

#include "nnvm/graph/evaluate.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph", const ops::OpRegistry& registry = ops::default_registry()) {
    g_.name = std::move(name);
    g_.registry = &registry;
  }

  // A graph input; an extent may be an ir::Var left symbolic until bind_shapes.
  Value input(std::string name, DataType dtype, std::vector<ir::Expr> shape) {
    Node n;
    n.kind = NodeKind::input;
    n.name = std::move(name);
    n.types = {TensorType(dtype, std::move(shape))};
    return add(std::move(n)).front();
  }

  Value constant(std::string name, NDArray data) {
    return constant(std::move(name), std::make_shared<const NDArray>(std::move(data)));
  }
  // A constant sharing `data` with another graph's (a control node's body reading an outer one).
  Value constant(std::string name, std::shared_ptr<const NDArray> data) {
    Node n;
    n.kind = NodeKind::constant;
    n.name = std::move(name);
    n.types = {TensorType(data->dtype(), data->shape())};
    n.data = std::move(data);
    return add(std::move(n)).front();
  }

  // One use of a registered op; returns its first output. An empty name becomes "<op>_<k>".
  Value op(const std::string& op, std::vector<Value> inputs, Attrs attrs = {}, std::string name = {}) {
    return op_outputs(op, std::move(inputs), std::move(attrs), std::move(name)).front();
  }
  // Like op, for ops with several outputs.
  std::vector<Value> op_outputs(const std::string& op, std::vector<Value> inputs, Attrs attrs = {},
                                std::string name = {}) {
    // A failed call must not use up an automatic name, so the count moves only on success.
    size_t k = counts_[op];
    bool automatic = name.empty();
    if (automatic)
      while (names_.count(name = str_cat(op, "_", k))) ++k;
    Node n;
    n.kind = NodeKind::op;
    n.op = op;
    n.name = std::move(name);
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    auto out = add(std::move(n));
    if (automatic) counts_[op] = k + 1;
    return out;
  }

  // A control node (graph/control.hpp): "if", "loop" or "scan" with its bodies, inputs in the
  // order that header gives and `num_outputs` outputs, typed from its inputs and bodies.
  std::vector<Value> control(const std::string& op, std::vector<Value> inputs,
                             std::vector<std::shared_ptr<const Graph>> bodies, size_t num_outputs, Attrs attrs = {},
                             std::string name = {}) {
    if (name.empty())
      for (size_t k = counts_[op];; ++k)
        if (!names_.count(name = str_cat(op, "_", k))) break;
    Node n;
    n.kind = NodeKind::control;
    n.op = op;
    n.name = std::move(name);
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.bodies = std::move(bodies);
    n.types.resize(num_outputs);  // infer_control fills them; check_node reads the count
    return add(std::move(n));
  }

  void output(Value v) { g_.outputs.push_back(v); }

  // With folding on, an op whose computed outputs read only constants (a Shape op reads none) is
  // evaluated when it is added and becomes constant nodes: output 0 keeps the node's name,
  // output k is named "<name>:<k>". Importers turn it on, so shape arithmetic (Shape → Gather →
  // Concat → Reshape) is known by the time a Reshape needs its shape.
  // Folding stops taking big results once `budget` is spent (FoldBudget); those nodes stay ops.
  GraphBuilder& fold_constants(bool on = true, FoldBudget budget = {}) {
    fold_ = on;
    budget_ = budget;
    return *this;
  }

  // The graph so far (not validated: it may have no outputs yet), for importers that need the
  // type of a value they already added.
  const Graph& graph() const { return g_; }

  // Gives node `node` the unused name `name` (an importer naming a layer's result after the
  // layer once it knows which node that is). UserError "nnvm.graph.duplicate_name" if taken.
  void rename(size_t node, std::string name) {
    if (names_.count(name))
      throw UserError("nnvm.graph.duplicate_name", str_cat("a node named '", name, "' already exists"),
                      detail::where(g_));
    names_.erase(g_.nodes.at(node).name);
    names_.insert(name);
    g_.nodes[node].name = std::move(name);
  }

  // The finished graph, validated. The builder keeps its state, so it can go on growing.
  Graph build() const {
    validate(g_);
    return g_;
  }

 private:
  std::vector<Value> add(Node n) {
    if (names_.count(n.name))
      throw UserError("nnvm.graph.duplicate_name", str_cat("a node named '", n.name, "' already exists"),
                      detail::where(g_));
    g_.nodes.push_back(std::move(n));
    std::optional<std::vector<NDArray>> folded;
    try {
      detail::check_node(g_, g_.nodes.size() - 1);
      Node& added = g_.nodes.back();
      if (added.kind == NodeKind::op) added.types = detail::infer_node(g_, added);
      if (added.kind == NodeKind::control) added.types = detail::infer_control(g_, added);
      if (fold_ && worth_folding(added) && foldable(g_, added) && budget_.take(*output_bytes(added)))
        folded = evaluate(g_, added);
    } catch (...) {
      g_.nodes.pop_back();  // a failed call leaves the graph as it was
      throw;
    }
    if (folded) {
      std::string name = g_.nodes.back().name;
      g_.nodes.pop_back();
      return add_constants(name, std::move(*folded));
    }
    names_.insert(g_.nodes.back().name);
    std::vector<Value> out;
    for (size_t k = 0; k < g_.nodes.back().num_outputs(); ++k) out.push_back({g_.nodes.size() - 1, k});
    return out;
  }

  // The interpreter folds tens of millions of elements per second; bigger results stay ops.
  static bool worth_folding(const Node& n) {
    if (n.kind != NodeKind::op) return false;
    int64_t elements = 0;
    for (auto& t : n.types) {
      int64_t e = 1;
      for (auto& d : t.shape) {
        auto c = ir::simplified_const_int(d);
        if (!c) return false;
        e *= std::max<int64_t>(*c, 1);
      }
      elements += e;
    }
    return elements <= (int64_t(1) << 24);
  }

  // Constants holding a folded node's outputs; the names were checked when the node was added.
  std::vector<Value> add_constants(const std::string& name, std::vector<NDArray> data) {
    std::vector<Value> out;
    for (size_t k = 0; k < data.size(); ++k) {
      Node c;
      c.kind = NodeKind::constant;
      c.name = k == 0 ? name : str_cat(name, ":", k);
      c.types = {TensorType(data[k].dtype(), data[k].shape())};
      c.data = std::make_shared<const NDArray>(std::move(data[k]));
      g_.nodes.push_back(std::move(c));
      names_.insert(g_.nodes.back().name);
      out.push_back({g_.nodes.size() - 1, 0});
    }
    return out;
  }

  Graph g_;
  bool fold_ = false;
  FoldBudget budget_;
  std::map<std::string, size_t> counts_;  // next automatic name per op
  std::set<std::string, std::less<>> names_;
};

}  // namespace graph
NNVM_END_NAMESPACE
