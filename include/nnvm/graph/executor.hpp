// Compiling a graph into a runnable CompiledModel: prepare() (graph/prepare.hpp) plans and lowers
// the kernels, link() compiles them in one batch with a back end's KernelCompiler, compile() does
// both. The model runs through the runtime's run loop (graph/compiled_model.hpp).
#pragma once

#include "nnvm/graph/compiled_model.hpp"
#include "nnvm/graph/prepare.hpp"
#include "nnvm/target/c_jit.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

// The host C compiler (target::jit_c) as a KernelCompiler: one compiler call for the batch.
inline KernelCompiler c_kernel_compiler(target::CJitOptions options = {}) {
  return [options](const std::vector<ir::LoweredFunc>& fns) { return target::jit_c(fns, options); };
}

namespace detail {
// The lowered functions of `p` and of its control nodes' bodies, depth first, named with
// `prefix` (a body's kernels get "c<control>b<body>_" more, so names stay unique).
inline void collect_funcs(const PreparedModel& p, const std::string& prefix, std::vector<ir::LoweredFunc>& all) {
  for (auto f : p.funcs) {
    f.name = prefix + f.name;
    all.push_back(std::move(f));
  }
  for (size_t c = 0; c < p.controls.size(); ++c)
    for (size_t b = 0; b < p.controls[c].bodies.size(); ++b)
      collect_funcs(p.controls[c].bodies[b], str_cat(prefix, "c", c, "b", b, "_"), all);
}
}  // namespace detail

// `p` with its kernels (from `kernels`, at `next`, in collect_funcs' order) and its control
// nodes' bodies linked.
inline CompiledModel link_one(PreparedModel& p, const std::vector<target::Kernel>& kernels, size_t& next) {
  CompiledModel& m = p.model;
  m.kernels_.assign(kernels.begin() + ptrdiff_t(next), kernels.begin() + ptrdiff_t(next + p.funcs.size()));
  next += p.funcs.size();
  // The run loop calls kernels by their entry points, with static shapes and the largest
  // step's workspace.
  const int64_t no_sizes = 0;
  for (const target::Kernel& k : m.kernels_) {
    if (!k.func().size_vars.empty())
      throw InternalError("nnvm.compile.symbolic_kernel",
                          str_cat("kernel ", k.func().name, " has symbolic sizes after shapes were bound"));
    m.plan_.kernels.push_back(k.raw_function());
    m.plan_.workspace_bytes = std::max(m.plan_.workspace_bytes, k.raw_workspace_bytes()(&no_sizes));
  }
  m.plan_.workspace_bytes = (m.plan_.workspace_bytes + 63) / 64 * 64;
  for (PreparedControl& pc : p.controls) {
    for (PreparedModel& body : pc.bodies) pc.runner->bodies.push_back(link_one(body, kernels, next));
    m.plan_.steps[pc.step].host = {&ControlRunner::run, pc.runner.get()};
    m.controls_.push_back(std::move(pc.runner));
  }
  return std::move(m);
}

// Compiles the kernels of several prepared models in one batch (kernel names get a per-model
// prefix so they stay unique) and returns the runnable models in order.
NNVM_COMPILER_INLINE std::vector<CompiledModel> link(std::vector<PreparedModel> prepared,
                                                     const KernelCompiler& compiler = {});
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE std::vector<CompiledModel> link(std::vector<PreparedModel> prepared,
                                                     const KernelCompiler& compiler) {
  std::vector<ir::LoweredFunc> all;
  for (size_t i = 0; i < prepared.size(); ++i)
    detail::collect_funcs(prepared[i], prepared.size() > 1 ? str_cat("m", i, "_") : std::string(), all);
  std::vector<target::Kernel> kernels = compiler ? compiler(all) : c_kernel_compiler()(all);
  if (kernels.size() != all.size())
    throw InternalError("nnvm.compile.kernel_count",
                        str_cat("the kernel compiler returned ", kernels.size(), " kernels for ", all.size()));
  std::vector<CompiledModel> out;
  size_t next = 0;
  for (auto& p : prepared) out.push_back(link_one(p, kernels, next));
  return out;
}
#endif  // NNVM_COMPILER_DEFINITIONS

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
