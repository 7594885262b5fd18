// Operator fusion: which op nodes compile into one kernel. A group starts at any op (its
// "master": a dense, conv, reduction or injective op) and grows along chains of elementwise,
// broadcast and injective consumers that read a value of the group nobody else reads; inside a
// kernel those consumers' producers are inlined, so the chain makes one pass over memory
// (TVM's rule for injective ops and out-fusable epilogues). A master with a fused schedule takes
// only elementwise and broadcast consumers.
#pragma once

#include "nnvm/graph/passes/rewrite.hpp"
#include "nnvm/ops/schedule_generic.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct FusionOptions {
  size_t max_group_size = 16;
  // The family the kernels are built for: it decides which masters have a fused schedule.
  target::Family family = target::Family::cpu;
};

namespace detail {
// A group's kernel runs where its master stands in node order, so a node may join only if every
// value it reads from outside the group is computed before the master.
inline bool inputs_ready(const Graph& g, const Node& n, const ops::OpDef& def, const std::vector<size_t>& group,
                         size_t id, size_t master) {
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Value& v = n.inputs[k];
    if (!v.defined() || ops::is_value_input(def, k) || group[v.node] == id) continue;
    NodeKind producer = g.nodes[v.node].kind;
    if ((producer == NodeKind::op || producer == NodeKind::control) && v.node > master) return false;
  }
  return true;
}

// A master with its own fused schedule (a blocked conv: accumulators in registers, the epilogue
// applied at write-back) takes only elementwise and broadcast epilogues, which keep its output's
// shape; anything else (a layout transform, a reshape) would push it back to the generic
// compute-at-root schedule, so it starts a kernel of its own.
inline bool takes_epilogue(const Graph& g, size_t master, const ops::OpDef& consumer, target::Family family) {
  if (!ops::own_fused_schedule(g.registry->get(g.nodes[master].op), family)) return true;
  return consumer.pattern == ops::OpPattern::elementwise || consumer.pattern == ops::OpPattern::broadcast;
}
}  // namespace detail

// The group of every node: op nodes get an id (groups numbered in node order; a group's nodes
// are in node order, its first node is the master); inputs and constants get Value::npos.
inline std::vector<size_t> fusion_groups(const Graph& g, const FusionOptions& options = {}) {
  auto uses = use_counts(g);
  std::vector<bool> is_output(g.nodes.size(), false);
  for (auto& v : g.outputs) is_output[v.node] = true;
  std::vector<size_t> group(g.nodes.size(), Value::npos), size, master;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind != NodeKind::op) continue;
    const ops::OpDef& def = g.registry->get(n.op);
    bool injective = def.pattern == ops::OpPattern::elementwise || def.pattern == ops::OpPattern::broadcast ||
                     def.pattern == ops::OpPattern::injective;
    size_t join = Value::npos;
    if (injective) {
      for (size_t k = 0; k < n.inputs.size() && join == Value::npos; ++k) {
        const Value& v = n.inputs[k];
        if (!v.defined() || ops::is_value_input(def, k)) continue;
        size_t p = group[v.node];
        if (p != Value::npos && uses[v.node][v.index] == 1 && !is_output[v.node] && size[p] < options.max_group_size &&
            detail::takes_epilogue(g, master[p], def, options.family) && detail::inputs_ready(g, n, def, group, p, master[p]))
          join = p;
      }
    }
    if (join == Value::npos) {
      join = size.size();
      size.push_back(0);
      master.push_back(i);
    }
    group[i] = join;
    ++size[join];
  }
  return group;
}

}  // namespace graph
NNVM_END_NAMESPACE
