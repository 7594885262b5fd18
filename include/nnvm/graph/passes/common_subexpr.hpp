// Common-subexpression elimination: an op node with the same op, attributes and inputs as an
// earlier one is replaced by it; constants with equal type and bytes are merged. Ops are pure
// (no random ops are registered), so equal inputs give equal outputs.
#pragma once

#include <cstring>

#include "nnvm/graph/passes/rewrite.hpp"
#include "nnvm/graph/printer.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

NNVM_COMPILER_INLINE Graph eliminate_common_subexpressions(const Graph& g);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE Graph eliminate_common_subexpressions(const Graph& g) {
  GraphRewriter rw(g);
  std::map<std::string, size_t> seen_ops;                 // key -> new node
  std::map<std::string, std::vector<size_t>> seen_consts;  // type text -> new nodes
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    // A control node is never merged: two with the same inputs may run different bodies.
    if (n.kind == NodeKind::input || n.kind == NodeKind::control) {
      rw.keep(i);
      continue;
    }
    if (n.kind == NodeKind::constant) {
      std::string key = to_string(n.types[0]);
      bool merged = false;
      for (size_t c : seen_consts[key]) {
        const NDArray& d = *rw.result().nodes[c].data;
        if (d.nbytes() == n.data->nbytes() && std::memcmp(d.raw(), n.data->raw(), d.nbytes()) == 0) {
          rw.replace(i, {{c, 0}});
          merged = true;
          break;
        }
      }
      if (!merged) seen_consts[key].push_back(rw.keep(i));
      continue;
    }
    std::string key = n.op + "(";
    for (auto& v : n.inputs) {
      Value m = rw.map(v);
      key += m.defined() ? str_cat(m.node, ":", m.index, ",") : std::string("-,");
    }
    key += ")" + to_string(n.attrs);
    if (auto it = seen_ops.find(key); it != seen_ops.end()) {
      std::vector<Value> same;
      for (size_t k = 0; k < n.num_outputs(); ++k) same.push_back({it->second, k});
      rw.replace(i, same);
      continue;
    }
    seen_ops[key] = rw.keep(i);
  }
  return rw.finish();
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
