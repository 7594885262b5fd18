// The graph pass pipeline, in one list. Level 0 runs nothing; level 1 and up sink layout
// transposes, simplify for inference, fold constants and control flow decided by them, make QDQ
// pairs one op, merge common subexpressions and remove dead code; level 2 also puts convolutions
// in the target's blocked layout. Fusion (level 2) and memory planning (level 1)
// happen when the executor turns the graph into kernels.
#pragma once

#include <chrono>
#include <functional>

#include "nnvm/graph/passes/alter_layout.hpp"
#include "nnvm/graph/passes/common_subexpr.hpp"
#include "nnvm/graph/passes/dead_code.hpp"
#include "nnvm/graph/passes/fold_constants.hpp"
#include "nnvm/graph/passes/fold_control.hpp"
#include "nnvm/graph/passes/quantized_pairs.hpp"
#include "nnvm/graph/passes/simplify_inference.hpp"
#include "nnvm/graph/passes/sink_transposes.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct PassOptions {
  int opt_level = 2;
  // What the graph compiles for (layout alteration depends on it).
  target::Target target;
  // Called after each pass with its name and result (nnvmc --print-graph-after).
  std::function<void(const std::string& pass, const Graph&)> on_pass;
  // Each pass's wall time in milliseconds is added here when set.
  std::map<std::string, double>* pass_ms = nullptr;
};

struct GraphPass {
  std::string name;
  int min_level;
  std::function<Graph(const Graph&, const PassOptions&)> run;
};

inline const std::vector<GraphPass>& graph_passes() {
  static const std::vector<GraphPass> passes{
      // First, so that convs wrapped in layout transposes meet their batch norms and each other.
      {"sink_transposes", 1, [](const Graph& g, const PassOptions&) { return sink_transposes(g); }},
      {"simplify_inference", 1, [](const Graph& g, const PassOptions&) { return simplify_inference(g); }},
      {"fold_constants", 1, [](const Graph& g, const PassOptions&) { return fold_constants(g); }},
      {"fold_control_flow", 1, [](const Graph& g, const PassOptions&) { return fold_control_flow(g); }},
      // After folding, which has turned the weights' dequantize_linear into float constants.
      {"fuse_qdq_pairs", 1, [](const Graph& g, const PassOptions&) { return fuse_qdq_pairs(g); }},
      {"alter_layout", 2, [](const Graph& g, const PassOptions& o) { return alter_layout(g, o.target); }},
      {"eliminate_common_subexpressions", 1,
       [](const Graph& g, const PassOptions&) { return eliminate_common_subexpressions(g); }},
      {"eliminate_dead_code", 1, [](const Graph& g, const PassOptions&) { return eliminate_dead_code(g); }},
  };
  return passes;
}

NNVM_COMPILER_INLINE Graph optimize(const Graph& input, const PassOptions& options = {});
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE Graph optimize(const Graph& input, const PassOptions& options) {
  Graph g = input;
  for (auto& pass : graph_passes()) {
    if (options.opt_level < pass.min_level) continue;
    auto t0 = std::chrono::steady_clock::now();
    g = pass.run(g, options);
    if (options.pass_ms)
      (*options.pass_ms)["graph." + pass.name] +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (options.on_pass) options.on_pass(pass.name, g);
  }
  return g;
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
