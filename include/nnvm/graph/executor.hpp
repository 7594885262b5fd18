// Compiling a graph and running it. compile() binds symbolic sizes, runs the graph passes
// (passes/pipeline.hpp), groups ops into fused kernels (passes/fuse.hpp), lowers one kernel per
// group with the ops' default schedules (identical groups share a kernel), compiles all of them in
// one batch and plans memory: activations share one arena by liveness (passes/memory_plan.hpp).
// A CompiledModel is immutable, so one model can run from several threads at once; each run()
// owns its arena.
#pragma once

#include <chrono>
#include <map>
#include <set>

#include "nnvm/graph/infer.hpp"
#include "nnvm/graph/passes/fuse.hpp"
#include "nnvm/graph/passes/memory_plan.hpp"
#include "nnvm/graph/passes/pipeline.hpp"
#include "nnvm/graph/profile.hpp"
#include "nnvm/ops/build.hpp"
#include "nnvm/ops/schedule_generic.hpp"
#include "nnvm/target/kernel_call.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

// A compiled kernel of any back end, as its raw ABI entry points; `owner` keeps the code loaded.
struct CompiledKernel {
  ir::LoweredFunc func;
  nnvm_kernel_fn kernel = nullptr;
  nnvm_workspace_bytes_fn workspace_bytes = nullptr;
  std::shared_ptr<const void> owner;
};
// Compiles lowered functions (all in one batch) for a back end.
using KernelCompiler = std::function<std::vector<CompiledKernel>(const std::vector<ir::LoweredFunc>&)>;

// The host C compiler (target::jit_c) as a KernelCompiler: one compiler call for the batch.
inline KernelCompiler c_kernel_compiler(target::CJitOptions options = {}) {
  return [options](const std::vector<ir::LoweredFunc>& fns) {
    std::vector<CompiledKernel> out;
    for (auto& k : target::jit_c(fns, options)) {
      auto owner = std::make_shared<const target::CKernel>(k);
      out.push_back({k.func(), k.raw_function(), k.raw_workspace_bytes(), owner});
    }
    return out;
  };
}

struct CompileOptions {
  target::Target target;
  // 0: each op its own kernel, nothing rewritten; 1: graph passes; 2 (default): and fusion.
  int opt_level = 2;
  // Called after each graph pass (nnvmc --print-graph-after).
  std::function<void(const std::string& pass, const Graph&)> on_graph_pass;
  // Values for the graph inputs' symbolic extents (bind_shapes); every extent must be known.
  std::map<std::string, int64_t> symbols;
  // Empty: the host C compiler. The LLVM library provides one for target "llvm".
  KernelCompiler compiler;
  // Passed to every kernel's lowering: on_pass shows the IR after each pass, pass_ms times them.
  lower::LowerOptions lower;
};

// One kernel call of the plan.
struct Step {
  std::vector<size_t> nodes;      // the fused op nodes, in graph order; the first is the master
  std::string label;              // the ops, "conv+add+relu", for profiles
  size_t kernel = 0;              // index in CompiledModel::kernels()
  std::vector<size_t> inputs;     // value slots read, in kernel parameter order
  std::vector<size_t> outputs;    // value slots written
};

// Where a value slot's data comes from.
struct Slot {
  enum class Kind : uint8_t { input, constant, activation } kind = Kind::activation;
  DataType dtype;
  std::vector<int64_t> shape;
  size_t input_index = 0;                // kind input: position in the model's inputs
  std::shared_ptr<const NDArray> data;   // kind constant
  std::string name;                      // the producing node (and output), for messages
  // kind activation: offset in the run's arena, or npos for a model output (returned to the
  // caller, so it gets its own array).
  uint64_t arena_offset = UINT64_MAX;
  uint64_t bytes() const {
    uint64_t n = uint64_t(dtype.bytes());
    for (int64_t d : shape) n *= uint64_t(d);
    return n;
  }
};

// What memory planning achieved, for reports.
struct MemoryStats {
  uint64_t arena_bytes = 0;      // the planned arena: peak activation bytes
  uint64_t unplanned_bytes = 0;  // all activations allocated separately
  uint64_t output_bytes = 0;     // model outputs (always separate)
};

struct PreparedModel;

class CompiledModel {
 public:
  CompiledModel() = default;

  const Graph& graph() const { return graph_; }
  const std::vector<CompiledKernel>& kernels() const { return kernels_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<Slot>& slots() const { return slots_; }
  // The model's inputs and outputs, as value slots, with names and types.
  const std::vector<size_t>& input_slots() const { return input_slots_; }
  const std::vector<size_t>& output_slots() const { return output_slots_; }
  const MemoryStats& memory() const { return memory_; }
  // What the kernels were lowered and compiled for (CompileOptions::target).
  const target::Target& target() const { return target_; }
  std::vector<std::string> input_names() const {
    std::vector<std::string> out;
    for (size_t s : input_slots_) out.push_back(slots_[s].name);
    return out;
  }

  // Runs the model on `inputs` (in input_names() order), returning the outputs. Wrong input
  // count, dtype or shape: UserError "nnvm.run.input" naming the input and what was expected.
  // `num_threads` > 0 overrides the thread count for this run; `profile`, when given, receives
  // one entry per kernel call.
  std::vector<NDArray> run(const std::vector<NDArray>& inputs, int num_threads = 0, Profile* profile = nullptr) const {
    std::vector<NDArray> out;
    for (size_t s : output_slots_) out.emplace_back(slots_[s].dtype, slots_[s].shape);
    run_into(inputs, out, num_threads, profile);
    return out;
  }

  // Runs the model writing its outputs into `outputs`, arrays the caller made (and may reuse
  // from run to run) of the model's output dtypes and shapes: nothing is allocated per run once
  // the calling thread's arena is big enough. A wrong output count, dtype or shape: UserError
  // "nnvm.run.output" naming the output and what was expected. Otherwise as run().
  void run_into(const std::vector<NDArray>& inputs, std::vector<NDArray>& outputs, int num_threads = 0,
                Profile* profile = nullptr) const {
    check_inputs(inputs);
    check_outputs(outputs);
    std::byte* base = thread_arena(memory_.arena_bytes);
    std::vector<BufferView> views(slots_.size());
    for (size_t s = 0; s < slots_.size(); ++s) {
      const Slot& sl = slots_[s];
      if (sl.kind == Slot::Kind::input) views[s] = const_cast<NDArray&>(inputs[sl.input_index]).view();
      else if (sl.kind == Slot::Kind::constant) views[s] = const_cast<NDArray&>(*sl.data).view();
      else if (sl.arena_offset != UINT64_MAX) views[s] = BufferView{base + sl.arena_offset, sl.dtype, sl.shape};
    }
    // A model output computed by a kernel is written in place, into the first output array
    // showing it; an output that is an input or a constant, or shown twice, is copied below.
    for (size_t o = 0; o < output_slots_.size(); ++o) {
      size_t s = output_slots_[o];
      if (slots_[s].kind == Slot::Kind::activation && !views[s].data) views[s] = outputs[o].view();
    }
    auto run_start = std::chrono::steady_clock::now();
    std::vector<BufferView> args;
    for (const Step& st : steps_) {
      args.clear();
      for (size_t s : st.inputs) args.push_back(views[s]);
      for (size_t s : st.outputs) args.push_back(views[s]);
      const CompiledKernel& k = kernels_[st.kernel];
      auto t0 = std::chrono::steady_clock::now();
      target::call_kernel(k.func, k.kernel, k.workspace_bytes, args, num_threads, "nnvm.run.kernel_status");
      if (profile) {
        auto t1 = std::chrono::steady_clock::now();
        const Node& n = graph_.nodes[st.nodes.front()];
        profile->entries.push_back({n.name, st.label, slots_[st.outputs.at(0)].shape,
                                    std::chrono::duration<double, std::micro>(t0 - run_start).count(),
                                    std::chrono::duration<double, std::micro>(t1 - t0).count()});
      }
    }
    for (size_t o = 0; o < output_slots_.size(); ++o) {
      void* dst = outputs[o].raw();
      const BufferView& src = views[output_slots_[o]];
      if (src.data != dst) std::memcpy(dst, src.data, outputs[o].nbytes());
    }
  }

 private:
  friend PreparedModel prepare(const Graph& input, const CompileOptions& options);
  friend std::vector<CompiledModel> link(std::vector<PreparedModel> prepared, const KernelCompiler& compiler);

  void check_outputs(const std::vector<NDArray>& outputs) const {
    if (outputs.size() != output_slots_.size())
      throw UserError("nnvm.run.output", str_cat("the model has ", output_slots_.size(), " output",
                                                 output_slots_.size() == 1 ? "" : "s", ", got ", outputs.size(),
                                                 " arrays for them"),
                      {"graph " + graph_.name});
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Slot& sl = slots_[output_slots_[o]];
      if (outputs[o].dtype() != sl.dtype || outputs[o].shape() != sl.shape || (sl.bytes() && !outputs[o].raw()))
        throw UserError("nnvm.run.output",
                        str_cat("output ", o, " ('", sl.name, "') is given as ", outputs[o].dtype(), " ",
                                shape_text(outputs[o].shape()), " but the model writes ", sl.dtype, " ",
                                shape_text(sl.shape)),
                        {"graph " + graph_.name, str_cat("output ", o)});
    }
  }

  // The calling thread's arena, kept from run to run and grown when a model needs more: a fresh
  // one per run would cost a page fault per 4 KiB touched, on every run. A kernel never runs a
  // model, so one run per thread uses it at a time.
  static std::byte* thread_arena(uint64_t bytes) {
    struct Arena {
      std::unique_ptr<std::byte, decltype(&std::free)> data{nullptr, &std::free};
      uint64_t size = 0;
    };
    thread_local Arena arena;
    if (arena.size < bytes) {
      uint64_t rounded = (bytes + 63) / 64 * 64;
      arena.data.reset(static_cast<std::byte*>(std::aligned_alloc(64, rounded)));
      if (!arena.data) throw std::bad_alloc();
      arena.size = rounded;
    }
    return arena.data.get();
  }

  void check_inputs(const std::vector<NDArray>& inputs) const {
    if (inputs.size() != input_slots_.size())
      throw UserError("nnvm.run.input", str_cat("the model takes ", input_slots_.size(), " input",
                                                input_slots_.size() == 1 ? "" : "s", ", got ", inputs.size()),
                      {"graph " + graph_.name});
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Slot& sl = slots_[input_slots_[i]];
      if (inputs[i].dtype() != sl.dtype || inputs[i].shape() != sl.shape)
        throw UserError("nnvm.run.input",
                        str_cat("input '", sl.name, "' is ", inputs[i].dtype(), " ", shape_text(inputs[i].shape()),
                                " but the model expects ", sl.dtype, " ", shape_text(sl.shape)),
                        {"graph " + graph_.name, "input " + sl.name});
    }
  }

  Graph graph_;
  std::vector<CompiledKernel> kernels_;
  std::vector<Step> steps_;
  std::vector<Slot> slots_;
  std::vector<size_t> input_slots_, output_slots_;
  MemoryStats memory_;
  target::Target target_;
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
}  // namespace detail

// A model whose kernels are lowered but not yet compiled: the first half of compile(). The
// conformance runner prepares many models and links them in one compiler batch.
struct PreparedModel {
  CompiledModel model;
  std::vector<ir::LoweredFunc> funcs;  // one per kernel of model.steps()
};

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
// master's: the case OpDef::cpu_fused_schedule handles.
inline bool epilogue_only(const Graph& g, const std::vector<size_t>& nodes, const std::vector<Value>& group_outputs,
                          const std::vector<std::vector<te::Tensor>>& node_outs) {
  const ops::OpDef& master = g.registry->get(g.nodes[nodes[0]].op);
  if (!master.cpu_fused_schedule || nodes.size() < 2 || group_outputs.size() != 1 || node_outs[0].size() != 1 ||
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
    auto* a = ir::as_const_int(ir::simplify(first.shape()[d]));
    auto* b = ir::as_const_int(ir::simplify(last.shape()[d]));
    if (!a || !b || *a != *b) return false;
  }
  return true;
}

inline GroupKernel build_group(const Graph& g, const std::vector<size_t>& nodes,
                               const std::vector<std::vector<int>>& uses, const CompileOptions& options,
                               const std::string& name) {
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
  bool fused = options.target.family == target::Family::cpu && epilogue_only(g, nodes, gk.outputs, node_outs) &&
               master.cpu_fused_schedule(sch, node_outs[0], outputs[0], options.target);
  if (!fused) {
    ops::apply_schedule(master, sch, node_outs[0], options.target);
    // The other members' outputs that leave the group: the family's recipe for injective stages.
    std::vector<te::Tensor> member_outputs;
    for (size_t m = 1; m < nodes.size(); ++m)
      for (size_t k = 0; k < node_outs[m].size(); ++k)
        if (std::find(gk.outputs.begin(), gk.outputs.end(), Value{nodes[m], k}) != gk.outputs.end())
          member_outputs.push_back(node_outs[m][k]);
    ops::generic_schedule(ops::OpPattern::injective, sch, member_outputs, options.target);
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
  lower::LowerOptions lowering = options.lower;
  lowering.vector_bits = options.target.vector_bits;
  lowering.family = options.target.family;
  gk.func = lower::lower(sch, args, name, lowering);
  std::string ops_text;
  for (size_t i : nodes) ops_text += (ops_text.empty() ? "" : "+") + g.nodes[i].op;
  gk.func.origin = str_cat("fused ", ops_text, ": ", gk.func.origin);
  return gk;
}

inline UserError with_node_context(const Graph& g, const Node& n, const UserError& e) {
  std::vector<std::string> ctx = where(g, &n);
  ctx.insert(ctx.end(), e.context().begin(), e.context().end());
  return UserError(e.id(), e.message(), std::move(ctx));
}
}  // namespace detail

// Binds symbols, runs the graph passes, infers types, groups ops, lowers one kernel per distinct
// group and plans slots, steps and memory. Errors name the node: an op that cannot be built
// ("nnvm.ops.*" with graph › node context), an extent left symbolic ("nnvm.compile.symbolic_extent").
inline PreparedModel prepare(const Graph& input, const CompileOptions& options = {}) {
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
  std::vector<size_t> group_of = options.opt_level >= 2 ? fusion_groups(g) : std::vector<size_t>{};
  std::map<size_t, std::vector<size_t>> groups;
  std::vector<size_t> order;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != NodeKind::op) continue;
    size_t id = options.opt_level >= 2 ? group_of[i] : i;
    if (!groups.count(id)) order.push_back(id);
    groups[id].push_back(i);
  }
  auto uses = use_counts(g);
  std::map<std::string, size_t> kernel_of;
  for (size_t id : order) {
    const std::vector<size_t>& nodes = groups[id];
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
    std::vector<detail::GroupKernel> built;
    try {
      if (nodes.size() == 1) {
        built.push_back(detail::build_group(g, nodes, uses, options, detail::kernel_name(g.nodes[nodes[0]], p.funcs.size())));
      } else {
        try {
          built.push_back(detail::build_group(g, nodes, uses, options, detail::kernel_name(g.nodes[nodes[0]], p.funcs.size())));
        } catch (const Error&) {
          // A schedule that cannot take the fused form: every node compiles alone instead.
          for (size_t i : nodes)
            built.push_back(detail::build_group(g, {i}, uses, options, detail::kernel_name(g.nodes[i], p.funcs.size() + built.size())));
        }
      }
    } catch (const UserError& e) {
      throw detail::with_node_context(g, g.nodes[nodes[0]], e);
    }
    for (size_t b = 0; b < built.size(); ++b) {
      Step st;
      st.nodes = built.size() == 1 ? nodes : std::vector<size_t>{nodes[b]};
      for (size_t i : st.nodes) st.label += (st.label.empty() ? "" : "+") + g.nodes[i].op;
      std::string k = built.size() == 1 ? key : detail::kernel_key(g.nodes[nodes[b]], detail::input_types(g, g.nodes[nodes[b]]), detail::node_attrs(g, g.nodes[nodes[b]], g.registry->get(g.nodes[nodes[b]].op)));
      auto [it, fresh] = kernel_of.emplace(k, p.funcs.size());
      if (fresh) p.funcs.push_back(built[b].func);
      st.kernel = it->second;
      for (auto& v : built[b].inputs) st.inputs.push_back(slot_of[v.node][v.index]);
      for (auto& v : built[b].outputs) st.outputs.push_back(slot_of[v.node][v.index]);
      m.steps_.push_back(std::move(st));
    }
  }
  for (auto& v : g.outputs) m.output_slots_.push_back(slot_of[v.node][v.index]);

  // Memory: activations that are not model outputs share the arena by lifetime.
  std::vector<bool> is_output(m.slots_.size(), false);
  for (size_t s : m.output_slots_) is_output[s] = true;
  std::vector<BufferLifetime> lifetimes;
  std::vector<size_t> planned;
  std::map<size_t, size_t> lifetime_of;
  for (size_t st = 0; st < m.steps_.size(); ++st) {
    for (size_t s : m.steps_[st].outputs) {
      Slot& sl = m.slots_[s];
      if (sl.kind != Slot::Kind::activation) continue;
      if (is_output[s]) {
        m.memory_.output_bytes += sl.bytes();
        continue;
      }
      lifetime_of[s] = lifetimes.size();
      lifetimes.push_back({sl.bytes(), st, st});
      planned.push_back(s);
    }
    for (size_t s : m.steps_[st].inputs)
      if (auto it = lifetime_of.find(s); it != lifetime_of.end()) lifetimes[it->second].last = st;
  }
  MemoryPlan plan = plan_memory(lifetimes);
  for (size_t b = 0; b < planned.size(); ++b) m.slots_[planned[b]].arena_offset = plan.offsets[b];
  m.memory_.arena_bytes = plan.arena_bytes;
  m.memory_.unplanned_bytes = plan.unplanned_bytes;
  return p;
}

// Compiles the kernels of several prepared models in one batch (kernel names get a per-model
// prefix so they stay unique) and returns the runnable models in order.
inline std::vector<CompiledModel> link(std::vector<PreparedModel> prepared, const KernelCompiler& compiler = {}) {
  std::vector<ir::LoweredFunc> all;
  for (size_t i = 0; i < prepared.size(); ++i)
    for (auto f : prepared[i].funcs) {
      if (prepared.size() > 1) f.name = str_cat("m", i, "_", f.name);
      all.push_back(std::move(f));
    }
  std::vector<CompiledKernel> kernels = compiler ? compiler(all) : c_kernel_compiler()(all);
  if (kernels.size() != all.size())
    throw InternalError("nnvm.compile.kernel_count",
                        str_cat("the kernel compiler returned ", kernels.size(), " kernels for ", all.size()));
  std::vector<CompiledModel> out;
  size_t next = 0;
  for (auto& p : prepared) {
    p.model.kernels_.assign(kernels.begin() + ptrdiff_t(next), kernels.begin() + ptrdiff_t(next + p.funcs.size()));
    next += p.funcs.size();
    out.push_back(std::move(p.model));
  }
  return out;
}

// Compiles `g` for options.target: prepare, then one compiler batch for its kernels.
inline CompiledModel compile(const Graph& g, const CompileOptions& options = {}) {
  std::vector<PreparedModel> one;
  one.push_back(prepare(g, options));
  KernelCompiler compiler = options.compiler;
  if (!compiler) {  // the host C compiler, for the target's CPU
    target::CJitOptions c;
    c.cpu = options.target.cpu;
    compiler = c_kernel_compiler(c);
  }
  return std::move(link(std::move(one), compiler).front());
}

}  // namespace graph
NNVM_END_NAMESPACE
