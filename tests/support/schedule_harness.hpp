// Runs one operator under many schedules: every variant is lowered, run through the reference
// interpreter, the C JIT (all variants in one compiler call) and, when built, the LLVM JIT, and
// compared with an independent reference computed by a plain loop in the test. The emitted C of
// every variant must also pass the strict C99 warning flags.
#pragma once

#include <functional>

#include "support/check.hpp"
#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_jit.hpp"
#endif

namespace nnvm_test {

struct ScheduleVariant {
  std::string name;
  std::function<void(nnvm::schedule::Schedule&)> apply;
};

struct OpCase {
  std::string name;
  std::vector<nnvm::te::Tensor> inputs;
  nnvm::te::Tensor output;  // float32
  // Plain-loop reference: the output's values from the inputs' values.
  std::function<std::vector<float>(const std::vector<nnvm::NDArray>&)> reference;
  double rtol = 1e-3, atol = 1e-5;  // per-case tolerance (DESIGN.md's fp32 default)
};

// `edit_inputs`, when given, changes the random inputs before anything runs (to plant NaNs,
// infinities or ties where a case needs them).
inline void check_schedules(const OpCase& op, const std::vector<ScheduleVariant>& variants, uint32_t seed = 1,
                            const std::function<void(std::vector<nnvm::NDArray>&)>& edit_inputs = {}) {
  std::vector<nnvm::NDArray> inputs;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    std::vector<int64_t> shape;
    for (auto& e : op.inputs[i].shape()) shape.push_back(*nnvm::ir::as_const_int(e));
    inputs.push_back(random_array(op.inputs[i].dtype(), shape, seed + uint32_t(i)));
  }
  if (edit_inputs) edit_inputs(inputs);
  std::vector<int64_t> out_shape;
  for (auto& e : op.output.shape()) out_shape.push_back(*nnvm::ir::as_const_int(e));
  std::vector<float> want = op.reference(inputs);

  std::vector<nnvm::te::Tensor> args = op.inputs;
  args.push_back(op.output);
  std::vector<nnvm::ir::LoweredFunc> fns;
  for (auto& v : variants) {
    auto sch = nnvm::schedule::create_schedule(op.output);
    v.apply(sch);
    fns.push_back(nnvm::lower::lower(sch, args, op.name + "_" + v.name));
  }
  auto run = [&](const std::string& label, auto&& call) {
    nnvm::NDArray out(nnvm::dtype::float32, out_shape);
    std::vector<nnvm::BufferView> views;
    for (auto& in : inputs) views.push_back(in.view());
    views.push_back(out.view());
    call(std::span<const nnvm::BufferView>(views));
    std::string diff = compare<float>(out.values<float>(), want, op.rtol, op.atol);
    INFO(op.name, " / ", label);
    CHECK_MESSAGE(diff.empty(), diff);
  };
  for (size_t v = 0; v < fns.size(); ++v)
    run(variants[v].name + " (interpreter)", [&](auto views) { nnvm::target::interpret(fns[v], views); });
  std::string strict = strict_compile(nnvm::target::emit_c(fns), op.name + "_strict");
  CHECK_MESSAGE(strict.empty(), op.name, ": emitted C fails -std=c99 -Wall -Wextra -Werror -pedantic:\n", strict);
  auto kernels = nnvm::target::jit_c(fns);
  for (size_t v = 0; v < fns.size(); ++v)
    run(variants[v].name + " (C JIT)", [&](auto views) { kernels[v](views); });
#if NNVM_TEST_WITH_LLVM
  // Emitter parity: the LLVM back end runs every variant too (one module for all of them).
  auto llvm_kernels = nnvm::codegen::jit_llvm(fns);
  for (size_t v = 0; v < fns.size(); ++v)
    run(variants[v].name + " (LLVM JIT)", [&](auto views) { llvm_kernels[v](views); });
#endif
}

}  // namespace nnvm_test
