// The reference interpreter: runs a lowered kernel on host buffers with the exact semantics of
// docs/lowered_ir.md. It is the oracle every schedule and every emitter is checked against, so
// it is strict: every load and store is bounds-checked, scratch memory starts as NaN/garbage,
// and integer division by zero is an error instead of undefined behaviour.
#pragma once

#include <array>
#include <concepts>

#include "nnvm/target/arguments.hpp"
#include "nnvm/target/interp/check.hpp"
#include "nnvm/target/interp/machine.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// Runs `fn` on `args` (one buffer per fn.params, in order; inputs are read, outputs written in
// place). Throws UserError for bad arguments (ids from bind_arguments) and integer division by
// zero ("nnvm.interp.div_by_zero"); InternalError for a kernel that breaks the lowered-IR
// contract: "nnvm.interp.out_of_bounds", "nnvm.interp.unbound_var", "nnvm.interp.unlowered",
// "nnvm.interp.unbound_buffer", "nnvm.interp.unsupported_dtype", "nnvm.interp.storage_only_arith",
// "nnvm.interp.bad_allocation", "nnvm.interp.malformed". A kernel that throws midway may have
// written part of its outputs.
NNVM_COMPILER_INLINE void interpret(const ir::LoweredFunc& fn, std::span<const BufferView> args);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE void interpret(const ir::LoweredFunc& fn, std::span<const BufferView> args) {
  std::vector<int64_t> sizes = bind_arguments(fn, args);
  interp::check_interpretable(fn);
  interp::Machine(fn).run(args, sizes);
}
#endif  // NNVM_COMPILER_DEFINITIONS

template <class A>
concept InterpretArgument = std::same_as<std::remove_reference_t<A>, NDArray> ||
                            std::same_as<std::remove_cvref_t<A>, BufferView>;

// interpret(fn, a, b, c) with NDArrays and/or BufferViews, in fn.params order.
template <InterpretArgument... A>
void interpret(const ir::LoweredFunc& fn, A&&... arrays) {
  auto view = [](auto& a) -> BufferView {
    if constexpr (std::same_as<std::remove_cvref_t<decltype(a)>, NDArray>) return a.view();
    else return a;
  };
  const std::array<BufferView, sizeof...(A)> views{view(arrays)...};
  interpret(fn, std::span<const BufferView>(views));
}

}  // namespace target
NNVM_END_NAMESPACE
