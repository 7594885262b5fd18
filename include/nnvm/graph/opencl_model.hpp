// A whole model on an OpenCL device: prepare() lowers its kernels for the GPU family (target
// "opencl"), the kernels of one or more models become one program (target/opencl_module.hpp),
// and the plan's steps run as launches on device buffers. Weights are uploaded once; each run
// uploads the inputs and reads back the outputs, and the activations stay on the device.
//
// Every value has a device buffer of its own (the CPU plan's shared arena is not used: OpenCL
// sub-buffers need an alignment the arena's offsets do not promise). Not thread-safe: one run at
// a time per model.
#pragma once

#include <memory>

#include "nnvm/graph/prepare.hpp"
#include "nnvm/target/opencl_module.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

class OpenCLModel {
 public:
  // `first`: the index of this model's first function in `module` (models built together share
  // one program).
  OpenCLModel(PreparedModel prepared, std::shared_ptr<const target::OpenCLModule> module, size_t first)
      : model_(std::move(prepared.model)), module_(std::move(module)), first_(first) {
    const runtime::Plan& plan = model_.plan();
    const runtime::opencl::Device& device = module_->device();
    for (const runtime::PlanSlot& s : plan.slots) {
      buffers_.push_back(device.allocate(size_t(s.bytes)));
      if (s.kind == runtime::PlanSlot::Kind::constant) device.write(buffers_.back(), plan.constants[s.index]);
    }
  }

  // Slots, steps and the graph, as for the CPU (its plan has no kernel entry points).
  const CompiledModel& model() const { return model_; }
  const target::OpenCLModule& module() const { return *module_; }

  // Runs the model on `inputs` (in model().input_names() order). A wrong count, dtype or shape:
  // UserError "nnvm.run.input".
  std::vector<NDArray> run(const std::vector<NDArray>& inputs) const {
    const runtime::Plan& plan = model_.plan();
    const runtime::opencl::Device& device = module_->device();
    const auto& slots = model_.slots();
    model_.check_inputs(inputs);
    for (size_t s = 0; s < plan.slots.size(); ++s)
      if (plan.slots[s].kind == runtime::PlanSlot::Kind::input) device.write(buffers_[s], inputs[plan.slots[s].index].raw());
    std::vector<const runtime::opencl::Buffer*> args;
    for (const runtime::PlanStep& st : plan.steps) {
      args.clear();
      for (size_t a : st.args) args.push_back(&buffers_[a]);
      module_->launch(first_ + st.kernel, args);
    }
    std::vector<NDArray> out;
    for (size_t o = 0; o < plan.outputs.size(); ++o) {
      const Slot& s = slots[model_.output_slots()[o]];
      out.emplace_back(s.dtype, s.shape);
      device.read(buffers_[plan.outputs[o]], out.back().raw());
    }
    device.finish();
    return out;
  }

 private:
  CompiledModel model_;
  std::shared_ptr<const target::OpenCLModule> module_;
  size_t first_;
  std::vector<runtime::opencl::Buffer> buffers_;  // per plan slot
};

// The kernels of several prepared models (prepared for an OpenCL target) as one program built
// on `device`, and the runnable models in order.
NNVM_COMPILER_INLINE std::vector<OpenCLModel> link_opencl(std::vector<PreparedModel> prepared,
                                                          const target::Target& target,
                                                          const runtime::opencl::Device& device,
                                                          const target::OpenCLModuleOptions& options = {});
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE std::vector<OpenCLModel> link_opencl(std::vector<PreparedModel> prepared,
                                                          const target::Target& target,
                                                          const runtime::opencl::Device& device,
                                                          const target::OpenCLModuleOptions& options) {
  std::vector<ir::LoweredFunc> all;
  for (auto& p : prepared) {
    refuse_control_nodes(p.model.graph(), "the OpenCL back end");
    all.insert(all.end(), p.funcs.begin(), p.funcs.end());
  }
  auto module = std::make_shared<const target::OpenCLModule>(target::emit_gpu(all, target), device, options);
  std::vector<OpenCLModel> out;
  size_t first = 0;
  for (auto& p : prepared) {
    size_t n = p.funcs.size();
    out.emplace_back(std::move(p), module, first);
    first += n;
  }
  return out;
}
#endif  // NNVM_COMPILER_DEFINITIONS

// Prepares `g` for options.target (an OpenCL target) and builds it on `device`.
inline OpenCLModel compile_opencl(const Graph& g, const CompileOptions& options, const runtime::opencl::Device& device) {
  if (options.target.emitter != target::Emitter::opencl)
    throw UserError("nnvm.compile.target", str_cat("compile_opencl needs an opencl target, not ",
                                                   target::emitter_name(options.target.emitter)));
  std::vector<PreparedModel> one;
  one.push_back(prepare(g, options));
  return std::move(link_opencl(std::move(one), options.target, device).front());
}

}  // namespace graph
NNVM_END_NAMESPACE
