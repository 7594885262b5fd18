// A compiled model: the optimized graph, its kernels, and the plan that runs them. It runs
// through the deploy runtime's run loop (runtime/plan.hpp), the one loop every nnvm model runs
// by, in process or from an artifact. A CompiledModel is immutable, so one model can run from
// several threads at once; each run has its own arena.
//
// Made by prepare() (graph/prepare.hpp) and link() (graph/executor.hpp).
#pragma once

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>

#include "nnvm/graph/node.hpp"
#include "nnvm/graph/profile.hpp"
#include "nnvm/runtime/plan.hpp"
#include "nnvm/target/kernel.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct ControlRunner;  // graph/control_runner.hpp

// One kernel call of the plan, or one control node (if, loop, scan) the host runs.
struct Step {
  std::vector<size_t> nodes;      // the fused op nodes, in graph order; the first is the master
  std::string label;              // the ops, "conv+add+relu", for profiles
  size_t kernel = 0;              // index in CompiledModel::kernels()
  size_t control = SIZE_MAX;      // a control node's step: index in CompiledModel::controls()
  std::vector<size_t> inputs;     // value slots read, in kernel parameter order
  std::vector<size_t> outputs;    // value slots written
};

// A value of the compiled graph: its type, where its data comes from, and its name.
struct Slot {
  enum class Kind : uint8_t { input, constant, activation } kind = Kind::activation;
  DataType dtype;
  std::vector<int64_t> shape;
  size_t input_index = 0;                // kind input: position in the model's inputs
  std::shared_ptr<const NDArray> data;   // kind constant
  std::string name;                      // the producing node (and output), for messages
  // kind activation: offset in the planned (shared) part of the arena, or none (UINT64_MAX) for
  // a model output, which the caller's array receives.
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
struct CompileOptions;
// Compiles lowered functions (all in one batch) for a back end (graph/executor.hpp has the host
// C compiler's; codegen/llvm_graph.hpp has LLVM's).
using KernelCompiler = std::function<std::vector<target::Kernel>(const std::vector<ir::LoweredFunc>&)>;

class CompiledModel {
 public:
  CompiledModel() = default;

  const Graph& graph() const { return graph_; }
  const std::vector<target::Kernel>& kernels() const { return kernels_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<Slot>& slots() const { return slots_; }
  // The model's inputs and outputs, as value slots, with names and types.
  const std::vector<size_t>& input_slots() const { return input_slots_; }
  const std::vector<size_t>& output_slots() const { return output_slots_; }
  const MemoryStats& memory() const { return memory_; }
  // The control nodes' runners (their bodies are compiled models), by Step::control.
  const std::vector<std::shared_ptr<const ControlRunner>>& controls() const { return controls_; }
  // What runs: the plan the run loop executes (slots, steps, kernel entry points, arena size).
  const runtime::Plan& plan() const { return plan_; }
  // What the kernels were lowered and compiled for (CompileOptions::target).
  const target::Target& target() const { return target_; }
  std::vector<std::string> input_names() const {
    std::vector<std::string> out;
    for (size_t s : input_slots_) out.push_back(slots_[s].name);
    return out;
  }

  // UserError "nnvm.run.input" naming the input unless `inputs` are the model's inputs in count,
  // dtype and shape (every way of running the model checks them so).
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
  // Runs the model on `inputs` (in input_names() order), returning the outputs. Wrong input
  // count, dtype or shape: UserError "nnvm.run.input" naming the input and what was expected.
  // Parallel loops use `num_threads` threads (0: the pool's count, NNVM_NUM_THREADS or all);
  // `profile`, when given, receives one entry per kernel call.
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
                Profile* profile = nullptr) const;

 private:
  friend PreparedModel prepare(const Graph& input, const CompileOptions& options);
  friend std::vector<CompiledModel> link(std::vector<PreparedModel> prepared, const KernelCompiler& compiler);
  friend CompiledModel link_one(PreparedModel& p, const std::vector<target::Kernel>& kernels, size_t& next);

  // The run loop's plan for the slots and steps (the kernels' entry points and workspace come
  // with link()). The planned activations share the arena's first part; each model output gets
  // space after it, for a run whose output array cannot take it in place.
  void plan_run() {
    runtime::Plan& plan = plan_;
    plan.arena_bytes = (memory_.arena_bytes + 63) / 64 * 64;
    plan.slots.resize(slots_.size());
    for (size_t s = 0; s < slots_.size(); ++s) {
      const Slot& sl = slots_[s];
      runtime::PlanSlot& ps = plan.slots[s];
      ps.bytes = sl.bytes();
      if (sl.kind == Slot::Kind::input) {
        ps.kind = runtime::PlanSlot::Kind::input;
        ps.index = sl.input_index;
      } else if (sl.kind == Slot::Kind::constant) {
        ps.kind = runtime::PlanSlot::Kind::constant;
        ps.index = plan.constants.size();
        plan.constants.push_back(sl.data->raw());
      } else {
        ps.offset = sl.arena_offset;
      }
    }
    for (const Step& st : steps_) {
      runtime::PlanStep& ps = plan.steps.emplace_back();
      ps.kernel = st.kernel;
      ps.args = st.inputs;
      ps.args.insert(ps.args.end(), st.outputs.begin(), st.outputs.end());
      plan.max_args = std::max(plan.max_args, ps.args.size());
      for (size_t s : st.outputs)
        if (plan.slots[s].offset == UINT64_MAX) {
          plan.slots[s].offset = plan.arena_bytes;
          plan.arena_bytes += (plan.slots[s].bytes + 63) / 64 * 64;
        }
    }
    // Values no step writes (a fused group's inlined ones) are never touched.
    for (runtime::PlanSlot& ps : plan.slots)
      if (ps.offset == UINT64_MAX) ps.offset = 0;
    plan.inputs = input_slots_;
    plan.outputs = output_slots_;
  }

  // Times each step into a Profile.
  class ProfileRecorder final : public runtime::StepObserver {
   public:
    ProfileRecorder(const CompiledModel& m, Profile* profile) : m_(m), profile_(profile) {}
    void before_step(size_t) override { t0_ = std::chrono::steady_clock::now(); }
    void after_step(size_t step) override {
      auto t1 = std::chrono::steady_clock::now();
      const Step& st = m_.steps_[step];
      profile_->entries.push_back({m_.graph_.nodes[st.nodes.front()].name, st.label, m_.slots_[st.outputs.at(0)].shape,
                                   std::chrono::duration<double, std::micro>(t0_ - start_).count(),
                                   std::chrono::duration<double, std::micro>(t1 - t0_).count()});
    }

   private:
    const CompiledModel& m_;
    Profile* profile_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), t0_;
  };

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
  static char* thread_arena(uint64_t bytes) {
    struct Arena {
      std::unique_ptr<char, decltype(&std::free)> data{nullptr, &std::free};
      uint64_t size = 0;
    };
    thread_local Arena arena;
    if (arena.size < bytes) {
      uint64_t rounded = (bytes + 63) / 64 * 64;
      arena.data.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
      if (!arena.data) throw std::bad_alloc();
      arena.size = rounded;
    }
    return arena.data.get();
  }

  Graph graph_;
  std::vector<target::Kernel> kernels_;
  std::vector<Step> steps_;
  std::vector<Slot> slots_;
  std::vector<size_t> input_slots_, output_slots_;
  MemoryStats memory_;
  runtime::Plan plan_;
  target::Target target_;
  std::vector<std::shared_ptr<const ControlRunner>> controls_;
};

#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE void CompiledModel::run_into(const std::vector<NDArray>& inputs, std::vector<NDArray>& outputs,
                                                  int num_threads, Profile* profile) const {
  check_inputs(inputs);
  check_outputs(outputs);
  std::vector<const void*> in;
  std::vector<void*> out;
  for (auto& a : inputs) in.push_back(a.raw());
  for (auto& a : outputs) out.push_back(a.raw());
  ProfileRecorder recorder(*this, profile);
  runtime::StepFailure failed = runtime::run_plan(plan_, in.data(), out.data(), thread_arena(plan_.run_bytes()),
                                                  num_threads, profile ? &recorder : nullptr);
  if (!failed) return;
  const Step& st = steps_[failed.step];
  std::vector<std::string> context = {"graph " + graph_.name, "node " + graph_.nodes[st.nodes.front()].name};
  if (failed.status == NNVM_STATUS_LOOP_EXIT)
    throw UserError("nnvm.run.loop_exit",
                    "the loop's condition ended it before its trip count M, but its scan outputs have M rows (nnvm "
                    "plans every tensor's shape at compile time)",
                    context);
  if (st.control != SIZE_MAX)
    throw BackendError("nnvm.run.kernel_status",
                       str_cat("a kernel of the ", st.label, "'s body returned status ", failed.status), context);
  if (failed.status == NNVM_STATUS_RUNTIME_FAILURE)
    throw BackendError("nnvm.runtime.parallel_failure",
                       str_cat("kernel ", kernels_[st.kernel].func().name, " (", st.label,
                               "): the thread pool could not run a parallel loop"),
                       context);
  throw BackendError("nnvm.run.kernel_status",
                     str_cat("kernel ", kernels_[st.kernel].func().name, " (", st.label, ") returned status ",
                             failed.status,
                             failed.status == NNVM_STATUS_WORKSPACE_TOO_SMALL ? " (workspace too small)" : ""),
                     context);
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
