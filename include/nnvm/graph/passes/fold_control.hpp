// Control nodes whose outcome is known at compile time fold away (graph/control.hpp): an if
// whose condition is a constant becomes its taken branch's nodes, spliced into the graph and
// reading the node's captured values; a loop that never runs (a constant trip count of 0, or a
// constant false condition) and has no scan outputs passes its initial values through. Runs
// after fold_constants, so conditions computed from constants count too (the importer already
// inlines an ONNX If whose condition it can fold; this covers graphs built in code, and conditions
// that become constant after bind_shapes).
#pragma once

#include "nnvm/graph/passes/rewrite.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
// The constant bool (or int64) in `v`'s one element, or nullopt when it is not a constant.
inline std::optional<int64_t> constant_scalar(const Graph& g, const Value& v) {
  if (!v.defined()) return std::nullopt;
  const Node& p = g.node(v);
  if (p.kind != NodeKind::constant || p.data->numel() != 1) return std::nullopt;
  if (p.data->dtype() == dtype::boolean) return int64_t(*static_cast<const uint8_t*>(p.data->raw()) != 0);
  if (p.data->dtype() == dtype::int64) return *static_cast<const int64_t*>(p.data->raw());
  return std::nullopt;
}

// Copies `body`'s nodes into the rewriter's graph, its inputs standing for `inputs`, each node
// renamed "<prefix>/<name>"; returns the values of its outputs.
inline std::vector<Value> splice_body(GraphRewriter& rw, const Graph& body, const std::vector<Value>& inputs,
                                      const std::string& prefix) {
  std::vector<std::vector<Value>> map(body.nodes.size());
  size_t next_input = 0;
  for (size_t i = 0; i < body.nodes.size(); ++i) {
    const Node& n = body.nodes[i];
    if (n.kind == NodeKind::input) {
      map[i] = {inputs.at(next_input++)};
      continue;
    }
    Node copy = n;
    copy.name = rw.fresh_name(prefix + "/" + n.name);
    for (auto& v : copy.inputs)
      if (v.defined()) v = map[v.node].at(v.index);
    size_t at = rw.add(std::move(copy));
    for (size_t k = 0; k < n.num_outputs(); ++k) map[i].push_back({at, k});
  }
  std::vector<Value> out;
  for (auto& v : body.outputs) out.push_back(map[v.node].at(v.index));
  return out;
}
}  // namespace detail

inline Graph fold_control_flow(const Graph& g) {
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind != NodeKind::control) {
      rw.keep(i);
      continue;
    }
    ControlLayout l = control_layout(g, n);
    std::vector<Value> inputs;
    for (auto& v : n.inputs) inputs.push_back(rw.map(v));
    if (n.op == "if") {
      if (auto cond = detail::constant_scalar(g, n.inputs[0])) {
        std::vector<Value> captures(inputs.begin() + 1, inputs.end());
        rw.replace(i, detail::splice_body(rw, *n.bodies[*cond ? 0 : 1], captures, n.name));
        continue;
      }
    } else if (n.op == "loop" && l.scan_outputs == 0) {
      auto trips = detail::constant_scalar(g, n.inputs[0]), cond = detail::constant_scalar(g, n.inputs[1]);
      if ((trips && *trips <= 0) || (cond && *cond == 0)) {
        rw.replace(i, std::vector<Value>(inputs.begin() + 2, inputs.begin() + 2 + ptrdiff_t(l.carried)));
        continue;
      }
    }
    rw.keep(i);
  }
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
