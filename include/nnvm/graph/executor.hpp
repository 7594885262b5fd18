// Compiling a graph and running it. compile() builds one kernel per op node for the target (the
// op's default schedule; identical nodes share a kernel), compiles all of them in one batch and
// records the plan: which values each kernel reads and writes. A CompiledModel is immutable, so
// one model can run from several threads at once; each run() owns its activations.
#pragma once

#include <chrono>
#include <map>

#include "nnvm/graph/infer.hpp"
#include "nnvm/graph/profile.hpp"
#include "nnvm/ops/build.hpp"
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

// The host C compiler (target::jit_c), one compiler call for the batch.
inline std::vector<CompiledKernel> compile_with_c(const std::vector<ir::LoweredFunc>& fns) {
  std::vector<CompiledKernel> out;
  for (auto& k : target::jit_c(fns)) {
    auto owner = std::make_shared<const target::CKernel>(k);
    out.push_back({k.func(), k.raw_function(), k.raw_workspace_bytes(), owner});
  }
  return out;
}

struct CompileOptions {
  target::Target target;
  // Values for the graph inputs' symbolic extents (bind_shapes); every extent must be known.
  std::map<std::string, int64_t> symbols;
  // Empty: the host C compiler. The LLVM library provides one for target "llvm".
  KernelCompiler compiler;
  // Passed to every kernel's lowering: on_pass shows the IR after each pass, pass_ms times them.
  lower::LowerOptions lower;
};

// One kernel call of the plan.
struct Step {
  size_t node = 0;                // index in the graph
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
    check_inputs(inputs);
    std::vector<NDArray> activations(slots_.size());
    std::vector<BufferView> views(slots_.size());
    for (size_t s = 0; s < slots_.size(); ++s) {
      const Slot& sl = slots_[s];
      if (sl.kind == Slot::Kind::input) {
        views[s] = const_cast<NDArray&>(inputs[sl.input_index]).view();
      } else if (sl.kind == Slot::Kind::constant) {
        views[s] = const_cast<NDArray&>(*sl.data).view();
      } else {
        activations[s] = NDArray(sl.dtype, sl.shape);
        views[s] = activations[s].view();
      }
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
        const Node& n = graph_.nodes[st.node];
        profile->entries.push_back({n.name, n.op, slots_[st.outputs.at(0)].shape,
                                    std::chrono::duration<double, std::micro>(t0 - run_start).count(),
                                    std::chrono::duration<double, std::micro>(t1 - t0).count()});
      }
    }
    std::vector<NDArray> out;
    for (size_t s : output_slots_) {
      const Slot& sl = slots_[s];
      if (sl.kind == Slot::Kind::activation && std::count(output_slots_.begin(), output_slots_.end(), s) == 1)
        out.push_back(std::move(activations[s]));
      else
        out.push_back(sl.kind == Slot::Kind::input ? inputs[sl.input_index]
                      : sl.kind == Slot::Kind::constant ? *sl.data
                                                          : activations[s]);
    }
    return out;
  }

 private:
  friend PreparedModel prepare(const Graph& input, const CompileOptions& options);
  friend std::vector<CompiledModel> link(std::vector<PreparedModel> prepared, const KernelCompiler& compiler);

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

// Binds symbols, infers types, plans the slots and steps and lowers one kernel per distinct op
// use. Errors name the node: an op that cannot be built ("nnvm.ops.*" with graph › node
// context), an extent left symbolic ("nnvm.compile.symbolic_extent").
inline PreparedModel prepare(const Graph& input, const CompileOptions& options = {}) {
  PreparedModel p;
  CompiledModel& m = p.model;
  m.graph_ = options.symbols.empty() ? input : bind_shapes(input, options.symbols);
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

  std::map<std::string, size_t> kernel_of;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind != NodeKind::op) continue;
    const ops::OpDef& def = g.registry->get(n.op);
    std::vector<TensorType> in = detail::input_types(g, n);
    Attrs attrs = detail::node_attrs(g, n, def);
    Step st;
    st.node = i;
    auto [it, fresh] = kernel_of.emplace(detail::kernel_key(n, in, attrs), p.funcs.size());
    if (fresh) {
      try {
        p.funcs.push_back(
            ops::build(def, in, attrs, options.target, {.name = detail::kernel_name(n, p.funcs.size()), .lower = options.lower}).func);
      } catch (const UserError& e) {
        std::vector<std::string> ctx = detail::where(g, &n);
        ctx.insert(ctx.end(), e.context().begin(), e.context().end());
        throw UserError(e.id(), e.message(), std::move(ctx));
      }
    }
    st.kernel = it->second;
    // The kernel's parameters: the given inputs except value inputs (ops::BuiltOp::kernel_inputs).
    for (size_t k = 0; k < n.inputs.size(); ++k)
      if (n.inputs[k].defined() && !ops::is_value_input(def, k))
        st.inputs.push_back(slot_of[n.inputs[k].node][n.inputs[k].index]);
    st.outputs = slot_of[i];
    m.steps_.push_back(std::move(st));
  }
  for (auto& v : g.outputs) m.output_slots_.push_back(slot_of[v.node][v.index]);
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
  std::vector<CompiledKernel> kernels = compiler ? compiler(all) : compile_with_c(all);
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
  return std::move(link(std::move(one), options.compiler).front());
}

}  // namespace graph
NNVM_END_NAMESPACE
