// Constant folding: op nodes whose computed outputs read only constants (a Shape op reads none)
// are evaluated by the reference interpreter and become constants. Large results stay ops: the
// interpreter is slow, and a big folded tensor would only move work from run time to the blob.
#pragma once

#include "nnvm/graph/passes/rewrite.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct FoldOptions {
  int64_t max_elements = int64_t(1) << 22;  // per folded node, all outputs together
  FoldBudget budget;                        // for the whole graph (limits.hpp)
};

NNVM_COMPILER_INLINE Graph fold_constants(const Graph& g, const FoldOptions& options = {});
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE Graph fold_constants(const Graph& g, const FoldOptions& options) {
  FoldBudget budget = options.budget;
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    size_t at = rw.keep(i);
    const Node& n = rw.result().nodes[at];
    if (n.kind != NodeKind::op) continue;
    int64_t elements = 0;
    bool static_shape = true;
    for (auto& t : n.types) {
      int64_t e = 1;
      for (auto& d : t.shape) {
        auto c = ir::simplified_const_int(d);
        if (!c) static_shape = false;
        else e *= std::max<int64_t>(*c, 1);
      }
      elements += e;
    }
    if (!static_shape || elements > options.max_elements || !foldable(rw.result(), n) ||
        !budget.take(*output_bytes(n)))
      continue;
    std::vector<NDArray> data = evaluate(rw.result(), n);
    std::string name = n.name;
    rw.pop();
    std::vector<Value> values;
    for (size_t k = 0; k < data.size(); ++k) {
      Node c;
      c.kind = NodeKind::constant;
      c.name = k == 0 ? name : rw.fresh_name(str_cat(name, ":", k));
      c.types = {TensorType(data[k].dtype(), data[k].shape())};
      c.data = std::make_shared<const NDArray>(std::move(data[k]));
      values.push_back({rw.add(std::move(c)), 0});
    }
    rw.replace(i, values);
  }
  return rw.finish();
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
