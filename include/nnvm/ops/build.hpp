// From an op definition to a runnable kernel: placeholders for the inputs, the op's compute, its
// schedule for the target's family (its own, or the family's generic recipe), lowering; then,
// for the host CPU, the C JIT. This is the path the graph executor takes for each (fused) op,
// and the quickest way to try a new op.
#pragma once

#include "nnvm/lower/pipeline.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_generic.hpp"
#include "nnvm/target/c_jit.hpp"
#include "nnvm/target/parse.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct BuildOptions {
  std::string name;          // kernel name; empty: the op name with '.' as '_'
  bool schedule = true;      // false: the plain loop nest, e.g. to measure what the schedule buys
  lower::LowerOptions lower;  // on_pass shows the IR after each lowering pass
};

// One op lowered for concrete input types. The kernel's parameters are the given inputs that are
// not value inputs, in the op's order, then the outputs.
struct BuiltOp {
  std::string op;                   // the op's name
  std::vector<te::Tensor> inputs;   // placeholders named after the op's input_names (undefined if absent)
  // Positions in `inputs` that are kernel parameters: every given input except value inputs.
  std::vector<size_t> kernel_inputs;
  std::vector<te::Tensor> outputs;
  schedule::Schedule schedule;
  ir::LoweredFunc func;
};

// Throws the op's UserErrors ("nnvm.ops.input_count", "nnvm.ops.input_shape", "nnvm.ops.attr",
// ...) and those of its schedule, each with "op <name>" as the outermost context.
inline BuiltOp build(const OpDef& def, const std::vector<TensorType>& inputs, const Attrs& attrs = {},
                     const Target& target = {}, const BuildOptions& options = {}) {
  BuiltOp out;
  out.op = def.name;
  out.inputs = placeholders(def, inputs);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].absent && !is_value_input(def, i)) out.kernel_inputs.push_back(i);
  out.outputs = apply(def, out.inputs, attrs);
  std::string name = options.name;
  if (name.empty()) {
    name = def.name;
    std::replace(name.begin(), name.end(), '.', '_');
  }
  std::string how = "unscheduled";
  try {
    out.schedule = schedule::create_schedule(out.outputs);
    if (options.schedule) {
      apply_schedule(def, out.schedule, out.outputs, target);
      how = schedule_source(def, target);
    }
    std::vector<te::Tensor> args;
    for (size_t i : out.kernel_inputs) args.push_back(out.inputs[i]);
    args.insert(args.end(), out.outputs.begin(), out.outputs.end());
    lower::LowerOptions lowering = options.lower;
    lowering.vector_bits = target.vector_bits;
    lowering.family = target.family;
    out.func = lower::lower(out.schedule, args, name, lowering);
  } catch (const UserError& e) {
    detail::rethrow_with_context(e, "op " + def.name);
  }
  out.func.origin = str_cat("op ", def.name, ", ", how, ": ", out.func.origin);
  return out;
}

namespace detail {
inline target::CJitOptions jit_options(const Target& target) {
  if (target.emitter != target::Emitter::c || target.family != target::Family::cpu)
    throw UserError("nnvm.ops.target", str_cat("ops::jit compiles C for this CPU, not for target '",
                                               target::to_string(target), "'"));
  target::CJitOptions o;
  o.cpu = target.cpu;
  return o;
}
}  // namespace detail

// Compiles built ops with the host C compiler, all in one compiler call.
inline std::vector<target::Kernel> jit(const std::vector<BuiltOp>& built, const Target& target = {}) {
  std::vector<ir::LoweredFunc> fns;
  for (auto& b : built) fns.push_back(b.func);
  return target::jit_c(fns, detail::jit_options(target));
}
inline target::Kernel jit(const BuiltOp& built, const Target& target = {}) {
  return target::jit_c(built.func, detail::jit_options(target));
}

}  // namespace ops
NNVM_END_NAMESPACE
