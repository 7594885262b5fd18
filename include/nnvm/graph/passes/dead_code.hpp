// Dead-code elimination: nodes no graph output depends on are removed. Graph inputs stay, even
// unused ones, because they are the model's calling signature.
#pragma once

#include "nnvm/graph/passes/rewrite.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

inline Graph eliminate_dead_code(const Graph& g) {
  std::vector<bool> live(g.nodes.size(), false);
  for (auto& v : g.outputs) live[v.node] = true;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    if (g.nodes[i].kind == NodeKind::input) live[i] = true;
    if (!live[i]) continue;
    for (auto& v : g.nodes[i].inputs)
      if (v.defined()) live[v.node] = true;
  }
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (live[i]) rw.keep(i);
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
