// One kernel per fused group: the group's ops applied to placeholders for the values it reads
// from outside, scheduled for the target's family, and lowered. prepare() (graph/prepare.hpp)
// calls it once per distinct group that fusion (passes/fuse.hpp) formed.
#pragma once

#include <map>
#include <set>

#include "nnvm/graph/infer.hpp"
#include "nnvm/lower/pipeline.hpp"
#include "nnvm/ops/build.hpp"
#include "nnvm/ops/schedule_generic.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {
namespace detail {

// One fused group's kernel: the group's nodes applied to placeholders for the values it reads
// from outside, the master's default schedule, the other members' internal outputs inlined and
// their external outputs scheduled as injective stages.
struct GroupKernel {
  ir::LoweredFunc func;
  std::vector<Value> inputs;   // kernel parameters read, in order
  std::vector<Value> outputs;  // kernel parameters written, in order
};

// True when the group is an out-fusable master with a fused schedule followed only by
// elementwise/broadcast members, and its single output is the last member's, shaped like the
// master's: the case a fused schedule (ops::own_fused_schedule) handles.
inline bool epilogue_only(const Graph& g, const std::vector<size_t>& nodes, const std::vector<Value>& group_outputs,
                          const std::vector<std::vector<te::Tensor>>& node_outs) {
  if (nodes.size() < 2 || group_outputs.size() != 1 || node_outs[0].size() != 1 ||
      group_outputs[0].node != nodes.back())
    return false;
  for (size_t m = 1; m < nodes.size(); ++m) {
    auto p = g.registry->get(g.nodes[nodes[m]].op).pattern;
    if (p != ops::OpPattern::elementwise && p != ops::OpPattern::broadcast) return false;
  }
  const te::Tensor& first = node_outs[0][0];
  const te::Tensor& last = node_outs.back().at(group_outputs[0].index);
  if (first.rank() != last.rank()) return false;
  for (size_t d = 0; d < first.rank(); ++d) {
    auto a = ir::simplified_const_int(first.shape()[d]);
    auto b = ir::simplified_const_int(last.shape()[d]);
    if (!a || !b || *a != *b) return false;
  }
  return true;
}

inline GroupKernel build_group(const Graph& g, const std::vector<size_t>& nodes,
                               const std::vector<std::vector<int>>& uses, const target::Target& target,
                               const lower::LowerOptions& lower_options, const std::string& name) {
  std::set<size_t> members(nodes.begin(), nodes.end());
  std::map<std::pair<size_t, size_t>, te::Tensor> tensors;
  GroupKernel gk;
  std::vector<te::Tensor> params;
  std::vector<std::vector<te::Tensor>> node_outs;
  for (size_t i : nodes) {
    const Node& n = g.nodes[i];
    const ops::OpDef& def = g.registry->get(n.op);
    std::vector<TensorType> types = input_types(g, n);
    std::vector<te::Tensor> ins;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& v = n.inputs[k];
      if (!v.defined()) {
        ins.emplace_back();
      } else if (ops::is_value_input(def, k)) {
        ins.push_back(te::placeholder(types[k].shape, types[k].dtype, def.input_names[k]));
      } else if (auto it = tensors.find({v.node, v.index}); it != tensors.end()) {
        ins.push_back(it->second);
      } else {
        // One parameter per distinct value: a value read twice must not become two aliasing buffers.
        te::Tensor p = te::placeholder(types[k].shape, types[k].dtype, def.input_names[k]);
        tensors[{v.node, v.index}] = p;
        params.push_back(p);
        gk.inputs.push_back(v);
        ins.push_back(p);
      }
    }
    auto outs = ops::apply(def, ins, node_attrs(g, n, def));
    for (size_t k = 0; k < outs.size(); ++k) tensors[{i, k}] = outs[k];
    node_outs.push_back(outs);
  }
  // A value leaves the group when a node outside it or the graph's outputs read it.
  std::vector<bool> external_use;
  std::vector<te::Tensor> outputs;
  for (size_t m = 0; m < nodes.size(); ++m) {
    size_t i = nodes[m];
    for (size_t k = 0; k < node_outs[m].size(); ++k) {
      int inside = 0;
      for (size_t j : nodes)
        for (auto& v : g.nodes[j].inputs)
          if (v.defined() && v.node == i && v.index == k) ++inside;
      bool leaves = uses[i][k] > inside || uses[i][k] == 0;
      if (leaves) {
        outputs.push_back(node_outs[m][k]);
        gk.outputs.push_back({i, k});
      }
    }
  }
  schedule::Schedule sch = schedule::create_schedule(outputs);
  const ops::OpDef& master = g.registry->get(g.nodes[nodes[0]].op);
  for (size_t m = 1; m < nodes.size(); ++m)
    for (size_t k = 0; k < node_outs[m].size(); ++k)
      if (std::find(gk.outputs.begin(), gk.outputs.end(), Value{nodes[m], k}) == gk.outputs.end())
        sch[node_outs[m][k]].compute_inline();
  const ops::FusedScheduleFn& fused_schedule = ops::own_fused_schedule(master, target.recipe_family());
  bool fused = fused_schedule && epilogue_only(g, nodes, gk.outputs, node_outs) &&
               fused_schedule(sch, node_outs[0], outputs[0], target);
  if (!fused) {
    ops::apply_schedule(master, sch, node_outs[0], target);
    // The other members' outputs that leave the group: the family's recipe for injective stages.
    std::vector<te::Tensor> member_outputs;
    for (size_t m = 1; m < nodes.size(); ++m)
      for (size_t k = 0; k < node_outs[m].size(); ++k)
        if (std::find(gk.outputs.begin(), gk.outputs.end(), Value{nodes[m], k}) != gk.outputs.end())
          member_outputs.push_back(node_outs[m][k]);
    ops::generic_schedule(ops::OpPattern::injective, sch, member_outputs, target);
  }
  // The master's own outputs feed the chain: inline them too when the master is injective.
  if (nodes.size() > 1 && (master.pattern == ops::OpPattern::elementwise || master.pattern == ops::OpPattern::broadcast ||
                           master.pattern == ops::OpPattern::injective)) {
    for (size_t k = 0; k < node_outs[0].size(); ++k)
      if (std::find(gk.outputs.begin(), gk.outputs.end(), Value{nodes[0], k}) == gk.outputs.end())
        sch[node_outs[0][k]].compute_inline();
  }
  std::vector<te::Tensor> args = params;
  args.insert(args.end(), outputs.begin(), outputs.end());
  lower::LowerOptions lowering = lower_options;
  lowering.vector_bits = target.vector_bits;
  lowering.family = target.family;
  gk.func = lower::lower(sch, args, name, lowering);
  std::string ops_text;
  for (size_t i : nodes) ops_text += (ops_text.empty() ? "" : "+") + g.nodes[i].op;
  gk.func.origin = str_cat("fused ", ops_text, ": ", gk.func.origin);
  return gk;
}

}  // namespace detail
}  // namespace graph
NNVM_END_NAMESPACE
