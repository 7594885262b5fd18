// Checks registered ops by name, the way the graph executor uses them: each case's op is built
// from the default registry with its default CPU schedule (value inputs turned into attributes),
// run through the reference interpreter, the C JIT (all cases of a call in one compiler call)
// and, when built, the LLVM JIT, and every output is compared with values the test computed
// independently (a plain loop in the test). Any dtype; integers and bools must match exactly.
//
// With NNVM_TEST_GPU set (ctest's gpu.* groups), the same cases are built for that GPU target
// instead (support/gpu_check.hpp): run on OpenCL, or compiled by nvcc for CUDA.
#pragma once

#include <cstring>
#include <optional>

#include "support/check.hpp"
#include "support/gpu_check.hpp"
#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_jit.hpp"
#endif

namespace nnvm_test {

struct OpCheck {
  std::string label;  // names the case in failures
  std::string op;     // registered op name
  // One per input in the op's order; std::nullopt for an optional input left out in the middle.
  // Value inputs (OpDef::value_inputs) are given as arrays here too.
  std::vector<std::optional<nnvm::NDArray>> inputs;
  nnvm::ops::Attrs attrs = {};
  std::vector<nnvm::NDArray> want;  // expected outputs (dtype and shape checked too)
  double rtol = 1e-4, atol = 1e-5;
};

namespace detail {
inline double element(const nnvm::NDArray& a, int64_t i) {
  using namespace nnvm;
  const void* p = a.raw();
  DataType t = a.dtype();
  if (t == dtype::float32) return static_cast<const float*>(p)[i];
  if (t == dtype::float64) return static_cast<const double*>(p)[i];
  if (t == dtype::int64) return double(static_cast<const int64_t*>(p)[i]);
  if (t == dtype::int32) return static_cast<const int32_t*>(p)[i];
  if (t == dtype::int16) return static_cast<const int16_t*>(p)[i];
  if (t == dtype::int8) return static_cast<const int8_t*>(p)[i];
  if (t == dtype::uint64) return double(static_cast<const uint64_t*>(p)[i]);
  if (t == dtype::uint32) return static_cast<const uint32_t*>(p)[i];
  if (t == dtype::uint16) return static_cast<const uint16_t*>(p)[i];
  if (t == dtype::uint8 || t == dtype::boolean) return static_cast<const uint8_t*>(p)[i];
  if (t == dtype::float16 || t == dtype::bfloat16) {
    uint16_t h = static_cast<const uint16_t*>(p)[i];
    if (t == dtype::bfloat16) {
      uint32_t bits = uint32_t(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
  }
  throw std::runtime_error("op_check: no reader for dtype " + t.str());
}

// Empty when `got` matches `want` (dtype, shape, values), else the first difference.
inline std::string compare_arrays(const nnvm::NDArray& got, const nnvm::NDArray& want, double rtol, double atol) {
  if (got.dtype() != want.dtype()) return "dtype " + got.dtype().str() + " != " + want.dtype().str();
  if (got.shape() != want.shape()) return "shape differs";
  bool exact = !want.dtype().is_float();
  const size_t bytes = size_t(want.dtype().bytes());
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = element(got, i), w = element(want, i);
    // Integers compare as bytes: a double holds int64 values above 2^53 only approximately.
    bool ok = exact ? std::memcmp(static_cast<const char*>(got.raw()) + size_t(i) * bytes,
                                  static_cast<const char*>(want.raw()) + size_t(i) * bytes, bytes) == 0
              : std::isnan(w) ? std::isnan(g)
              : std::isinf(w) ? g == w
                              : std::abs(g - w) <= atol + rtol * std::abs(w);
    if (!ok) return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(w);
  }
  return {};
}
}  // namespace detail

inline void check_ops(const std::vector<OpCheck>& cases, const std::string& group) {
  using namespace nnvm;
  const char* gpu = std::getenv("NNVM_TEST_GPU");
  const target::Target build_target = gpu && *gpu ? target::parse_target(gpu) : target::Target{};
  std::vector<ops::BuiltOp> built;
  for (auto& c : cases) {
    const ops::OpDef& def = ops::default_registry().get(c.op);
    std::vector<ops::TensorType> types;
    ops::Attrs attrs = c.attrs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      if (!c.inputs[i]) {
        types.push_back(ops::TensorType::none());
        continue;
      }
      types.emplace_back(c.inputs[i]->dtype(), c.inputs[i]->shape());
      if (ops::is_value_input(def, i)) attrs.set(def.input_names[i], graph::detail::value_attr(*c.inputs[i]));
    }
    INFO(group, " / ", c.label);
    built.push_back(ops::build(def, types, attrs, build_target));
  }
  std::vector<ir::LoweredFunc> fns;
  for (auto& b : built) fns.push_back(b.func);
  auto run = [&](size_t k, const std::string& engine, auto&& call) {
    const OpCheck& c = cases[k];
    std::vector<NDArray> outs;
    std::vector<BufferView> views;
    for (size_t i : built[k].kernel_inputs) views.push_back(const_cast<NDArray&>(*c.inputs[i]).view());
    for (auto& o : built[k].outputs) {
      std::vector<int64_t> shape;
      for (auto& e : o.shape()) shape.push_back(*ir::as_const_int(ir::simplify(e)));
      outs.emplace_back(o.dtype(), shape);
      if (o.dtype().is_float()) std::memset(outs.back().raw(), 0xff, outs.back().nbytes());  // NaN
    }
    for (auto& o : outs) views.push_back(o.view());
    call(std::span<const BufferView>(views));
    INFO(group, " / ", c.label, " (", engine, ")");
    REQUIRE(outs.size() == c.want.size());
    for (size_t o = 0; o < outs.size(); ++o) {
      std::string diff = detail::compare_arrays(outs[o], c.want[o], c.rtol, c.atol);
      CHECK_MESSAGE(diff.empty(), "output ", o, ": ", diff);
    }
  };
  if (build_target.family == target::Family::gpu) {
    gpu_check(fns, build_target, group, [&](size_t k, auto&& call) { run(k, target::emitter_name(build_target.emitter), call); });
    return;
  }
  for (size_t k = 0; k < cases.size(); ++k)
    run(k, "interpreter", [&](auto views) { target::interpret(fns[k], views); });
  std::string strict = strict_compile(target::emit_c(fns), "opcheck_" + group);
  CHECK_MESSAGE(strict.empty(), group, ": emitted C fails -std=c99 -Wall -Wextra -Werror -pedantic:\n", strict);
  auto kernels = target::jit_c(fns);
  for (size_t k = 0; k < cases.size(); ++k) run(k, "C JIT", [&](auto views) { kernels[k](views); });
#if NNVM_TEST_WITH_LLVM
  auto llvm_kernels = codegen::jit_llvm(fns);
  for (size_t k = 0; k < cases.size(); ++k) run(k, "LLVM JIT", [&](auto views) { llvm_kernels[k](views); });
#endif
}

// The error id the op's type inference throws for inputs of these types, or "(no error)".
inline std::string infer_error(const std::string& op, const std::vector<nnvm::ops::TensorType>& in,
                               const nnvm::ops::Attrs& attrs = {}) {
  return error_of([&] { nnvm::ops::infer_types(nnvm::ops::get_op(op), in, attrs); }).first;
}

}  // namespace nnvm_test
