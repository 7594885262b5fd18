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

// Compiles the kernels of several prepared models in one batch (kernel names get a per-model
// prefix so they stay unique) and returns the runnable models in order.
inline std::vector<CompiledModel> link(std::vector<PreparedModel> prepared, const KernelCompiler& compiler = {}) {
  std::vector<ir::LoweredFunc> all;
  for (size_t i = 0; i < prepared.size(); ++i)
    for (auto f : prepared[i].funcs) {
      if (prepared.size() > 1) f.name = str_cat("m", i, "_", f.name);
      all.push_back(std::move(f));
    }
  std::vector<target::Kernel> kernels = compiler ? compiler(all) : c_kernel_compiler()(all);
  if (kernels.size() != all.size())
    throw InternalError("nnvm.compile.kernel_count",
                        str_cat("the kernel compiler returned ", kernels.size(), " kernels for ", all.size()));
  std::vector<CompiledModel> out;
  size_t next = 0;
  for (auto& p : prepared) {
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
    out.push_back(std::move(m));
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
