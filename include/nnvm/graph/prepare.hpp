// The first half of compiling a graph: bind symbolic sizes, run the graph passes
// (passes/pipeline.hpp), group ops into fused kernels (passes/fuse.hpp), lower one kernel per
// distinct group (graph/group_kernel.hpp), and plan slots, steps and memory: activations share one
// arena by liveness (passes/memory_plan.hpp). link() (graph/executor.hpp) compiles the kernels.
#pragma once

#include <map>

#include "nnvm/graph/compiled_model.hpp"
#include "nnvm/graph/control_runner.hpp"
#include "nnvm/graph/group_kernel.hpp"
#include "nnvm/graph/passes/fuse.hpp"
#include "nnvm/graph/passes/memory_plan.hpp"
#include "nnvm/graph/passes/pipeline.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct CompileOptions {
  target::Target target;
  // 0: each op its own kernel, nothing rewritten; 1: graph passes; 2 (default): and fusion.
  int opt_level = 2;
  // Called after each graph pass (nnvmc --print-graph-after).
  std::function<void(const std::string& pass, const Graph&)> on_graph_pass;
  // Values for the graph inputs' symbolic extents (bind_shapes); every extent must be known.
  std::map<std::string, int64_t> symbols;
  // Empty: the host C compiler (graph/executor.hpp). The LLVM library provides one for target
  // "llvm" (codegen/llvm_graph.hpp).
  KernelCompiler compiler;
  // Passed to every kernel's lowering: on_pass shows the IR after each pass, pass_ms times them.
  lower::LowerOptions lower;
};

struct PreparedControl;

// A model whose kernels are lowered but not yet compiled: the first half of compile(). The
// conformance runner prepares many models and links them in one compiler batch.
struct PreparedModel {
  CompiledModel model;
  std::vector<ir::LoweredFunc> funcs;  // one per kernel of model.steps()
  std::vector<PreparedControl> controls;  // by Step::control
};

// A control node's step: its runner, still without bodies, and the bodies prepared (link()
// compiles their kernels in the same batch as the parent's).
struct PreparedControl {
  size_t step = 0;
  std::shared_ptr<ControlRunner> runner;
  std::vector<PreparedModel> bodies;
};

namespace detail {
inline std::vector<int64_t> static_shape(const Graph& g, const Node& n, const TensorType& t) {
  std::vector<int64_t> shape;
  for (auto& e : t.shape) {
    ir::Expr s = ir::simplify(e);
    auto* c = ir::as_const_int(s);
    if (!c)
      throw UserError("nnvm.compile.symbolic_extent",
                      str_cat("extent ", ir::to_string(s), " is not known; bind it (CompileOptions::symbols, "
                                                           "nnvmc --define-symbol)"),
                      where(g, &n));
    shape.push_back(*c);
  }
  return shape;
}

// Identical op uses (same op, attributes and input types) share one kernel.
inline std::string kernel_key(const Node& n, const std::vector<TensorType>& in, const Attrs& attrs) {
  std::string key = n.op + "(";
  for (auto& t : in) {
    key += t.absent ? std::string("-") : t.dtype.str();
    for (auto& e : t.shape) key += "," + ir::to_string(e);
    key += ";";
  }
  key += ")";
  for (auto& [name, v] : attrs.values()) {
    key += name + "=";
    std::visit([&](auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, std::string>) key += x;
      else if constexpr (std::is_arithmetic_v<T>) key += str_cat(x);
      else for (auto& e : x) key += str_cat(e, ",");
    }, v);
    key += ";";
  }
  return key;
}

inline std::string kernel_name(const Node& n, size_t index) {
  std::string s = str_cat("k", index, "_", n.op);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}
inline UserError with_node_context(const Graph& g, const Node& n, const UserError& e) {
  std::vector<std::string> ctx = where(g, &n);
  ctx.insert(ctx.end(), e.context().begin(), e.context().end());
  return UserError(e.id(), e.message(), std::move(ctx));
}

}  // namespace detail
NNVM_COMPILER_INLINE PreparedModel prepare(const Graph& input, const CompileOptions& options = {});
namespace detail {

// Control node `i`'s runner and its bodies, each prepared as a model of its own with the
// parent's options (its input types are static: infer_control typed them from the parent's).
inline PreparedControl prepare_control(const Graph& g, size_t i, const std::vector<Slot>& slots,
                                       const std::vector<std::vector<size_t>>& slot_of, const CompileOptions& options) {
  const Node& n = g.nodes[i];
  if (options.target.recipe_family() != target::Family::cpu) {
    std::string what = str_cat("the ", target::emitter_name(options.target.emitter), " back end");
    // An if whose condition comes from a graph input runs on such a back end once the input is
    // bound (its taken branch is then imported inline).
    if (std::string from = n.op == "if" ? input_behind(g, n.inputs[0]) : ""; !from.empty())
      throw UserError("nnvm.graph.not_constant",
                      str_cat(what, " runs no control nodes, so the if's condition must be known at compile time, but "
                                    "it is computed from graph input ",
                              from),
                      where(g, &n));
    refuse_control_nodes(g, what);
  }
  PreparedControl pc;
  auto r = std::make_shared<ControlRunner>();
  r->op = n.op;
  r->layout = control_layout(g, n);
  const ControlLayout& l = r->layout;
  if (n.op == "loop") {
    r->has_trip_count = n.inputs[0].defined();
    r->has_cond = n.inputs[1].defined();
    if (l.scan_outputs) r->rows = constant_trip_count(g, n);
  }
  auto bytes = [&](const Value& v) { return slots[slot_of[v.node][v.index]].bytes(); };
  if (n.op == "scan") {
    r->rows = slots[slot_of[n.inputs[l.carried].node][n.inputs[l.carried].index]].shape.at(0);
    r->input_reverse = n.attrs.get_ints("scan_input_directions", {});
    r->output_reverse = n.attrs.get_ints("scan_output_directions", {});
    for (size_t k = 0; k < l.scan_inputs; ++k)
      r->slice_in_bytes.push_back(r->rows ? bytes(n.inputs[l.carried + k]) / uint64_t(r->rows) : 0);
  }
  for (size_t k = 0; k < l.carried; ++k) r->carried_bytes.push_back(bytes({i, k}));
  for (size_t k = 0; k < l.scan_outputs; ++k)
    r->slice_out_bytes.push_back(r->rows ? bytes({i, l.carried + k}) / uint64_t(r->rows) : 0);
  CompileOptions inner = options;
  inner.symbols.clear();
  inner.on_graph_pass = nullptr;
  for (auto& body : n.bodies) {
    try {
      pc.bodies.push_back(prepare(*body, inner));
    } catch (const UserError& e) {
      throw with_node_context(g, n, e);
    }
  }
  pc.runner = std::move(r);
  return pc;
}

// The arena's buffers: every activation a step writes that is not a model output, living from
// that step to the last step that reads it; `slots` lists them in order of first write.
struct ActivationLifetimes {
  std::vector<size_t> slots;
  std::vector<BufferLifetime> lifetimes;  // parallel to `slots`
};
inline ActivationLifetimes activation_lifetimes(const std::vector<Step>& steps, const std::vector<Slot>& slots,
                                                const std::vector<size_t>& output_slots) {
  std::vector<bool> is_output(slots.size(), false);
  for (size_t s : output_slots) is_output[s] = true;
  ActivationLifetimes out;
  std::map<size_t, size_t> index;
  for (size_t st = 0; st < steps.size(); ++st) {
    for (size_t s : steps[st].outputs) {
      if (slots[s].kind != Slot::Kind::activation || is_output[s]) continue;
      index[s] = out.slots.size();
      out.slots.push_back(s);
      out.lifetimes.push_back({slots[s].bytes(), st, st});
    }
    for (size_t s : steps[st].inputs)
      if (auto it = index.find(s); it != index.end()) out.lifetimes[it->second].last = st;
  }
  return out;
}

}  // namespace detail

// Binds symbols, runs the graph passes, infers types, groups ops, lowers one kernel per distinct
// group and plans slots, steps and memory. Errors name the node: an op that cannot be built
// ("nnvm.ops.*" with graph › node context), an extent left symbolic ("nnvm.compile.symbolic_extent").
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE PreparedModel prepare(const Graph& input, const CompileOptions& options) {
  PreparedModel p;
  CompiledModel& m = p.model;
  m.target_ = options.target;
  Graph bound = options.symbols.empty() ? input : bind_shapes(input, options.symbols);
  infer_types(bound);
  m.graph_ = optimize(bound, {.opt_level = options.opt_level, .target = options.target, .on_pass = options.on_graph_pass,
                              .pass_ms = options.lower.pass_ms});
  infer_types(m.graph_);
  const Graph& g = m.graph_;

  // One slot per node output.
  std::vector<std::vector<size_t>> slot_of(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (size_t k = 0; k < n.num_outputs(); ++k) {
      Slot s;
      s.dtype = n.types[k].dtype;
      s.shape = detail::static_shape(g, n, n.types[k]);
      s.name = k == 0 ? n.name : str_cat(n.name, ":", k);
      if (n.kind == NodeKind::input) {
        s.kind = Slot::Kind::input;
        s.input_index = m.input_slots_.size();
        m.input_slots_.push_back(m.slots_.size());
      } else if (n.kind == NodeKind::constant) {
        s.kind = Slot::Kind::constant;
        s.data = n.data;
      }
      slot_of[i].push_back(m.slots_.size());
      m.slots_.push_back(std::move(s));
    }
  }

  // Groups in node order; opt level < 2 keeps every op alone.
  std::vector<size_t> group_of = options.opt_level >= 2 ? fusion_groups(g, {.family = options.target.recipe_family()}) : std::vector<size_t>{};
  std::map<size_t, std::vector<size_t>> groups;
  std::vector<size_t> order;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != NodeKind::op && g.nodes[i].kind != NodeKind::control) continue;
    // A control node is a step of its own, never fused (ids from the top never meet a group's).
    size_t id = g.nodes[i].kind == NodeKind::control ? Value::npos - i : options.opt_level >= 2 ? group_of[i] : i;
    if (!groups.count(id)) order.push_back(id);
    groups[id].push_back(i);
  }
  auto uses = use_counts(g);
  std::map<std::string, size_t> kernel_of;
  for (size_t id : order) {
    const std::vector<size_t>& nodes = groups[id];
    if (g.nodes[nodes[0]].kind == NodeKind::control) {
      const Node& n = g.nodes[nodes[0]];
      Step st;
      st.nodes = nodes;
      st.label = n.op;
      st.control = p.controls.size();
      for (auto& v : n.inputs)
        if (v.defined()) st.inputs.push_back(slot_of[v.node][v.index]);
      for (size_t k = 0; k < n.num_outputs(); ++k) st.outputs.push_back(slot_of[nodes[0]][k]);
      p.controls.push_back(detail::prepare_control(g, nodes[0], m.slots_, slot_of, options));
      p.controls.back().step = m.steps_.size();
      m.steps_.push_back(std::move(st));
      continue;
    }
    std::string key;
    for (size_t i : nodes) {
      const Node& n = g.nodes[i];
      const ops::OpDef& def = g.registry->get(n.op);
      key += detail::kernel_key(n, detail::input_types(g, n), detail::node_attrs(g, n, def)) + "|";
    }
    // The wiring matters too (which inputs are the same value, which come from inside): values
    // from outside are numbered by first use, values from inside by position relative to the master.
    std::map<std::pair<size_t, size_t>, size_t> outside;
    for (size_t i : nodes)
      for (auto& v : g.nodes[i].inputs) {
        if (!v.defined()) key += "-,";
        else if (v.node >= nodes[0] && groups[id].end() != std::find(nodes.begin(), nodes.end(), v.node))
          key += str_cat("i", v.node - nodes[0], ":", v.index, ",");
        else key += str_cat("o", outside.emplace(std::pair{v.node, v.index}, outside.size()).first->second, ",");
      }
    // Fusion (passes/fuse.hpp) decided the groups; each becomes exactly one kernel. A group that
    // cannot be built is an error naming its first node, never a silent split into op kernels.
    detail::GroupKernel built;
    try {
      built = detail::build_group(g, nodes, uses, options.target, options.lower,
                                  detail::kernel_name(g.nodes[nodes[0]], p.funcs.size()));
    } catch (const UserError& e) {
      throw detail::with_node_context(g, g.nodes[nodes[0]], e);
    }
    Step st;
    st.nodes = nodes;
    for (size_t i : st.nodes) st.label += (st.label.empty() ? "" : "+") + g.nodes[i].op;
    auto [it, fresh] = kernel_of.emplace(key, p.funcs.size());
    if (fresh) p.funcs.push_back(built.func);
    st.kernel = it->second;
    for (auto& v : built.inputs) st.inputs.push_back(slot_of[v.node][v.index]);
    for (auto& v : built.outputs) st.outputs.push_back(slot_of[v.node][v.index]);
    m.steps_.push_back(std::move(st));
  }
  for (auto& v : g.outputs) m.output_slots_.push_back(slot_of[v.node][v.index]);

  // Memory: activations that are not model outputs share the arena by lifetime.
  std::vector<bool> is_output(m.slots_.size(), false);
  for (size_t s : m.output_slots_) is_output[s] = true;
  for (auto& st : m.steps_)
    for (size_t s : st.outputs)
      if (m.slots_[s].kind == Slot::Kind::activation && is_output[s]) m.memory_.output_bytes += m.slots_[s].bytes();
  detail::ActivationLifetimes act = detail::activation_lifetimes(m.steps_, m.slots_, m.output_slots_);
  MemoryPlan plan = plan_memory(act.lifetimes);
  for (size_t b = 0; b < act.slots.size(); ++b) m.slots_[act.slots[b]].arena_offset = plan.offsets[b];
  m.memory_.arena_bytes = plan.arena_bytes;
  m.memory_.unplanned_bytes = plan.unplanned_bytes;
  m.plan_run();
  return p;
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
