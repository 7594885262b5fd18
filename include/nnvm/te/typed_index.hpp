// Index variables of the typed DSL: the data-parallel axes `compute` hands its body (`Index<E>`)
// and reduction axes (`ReduceAxis<E>`). E is the static extent, or `dyn`; it travels in the type
// so that indexing a tensor axis of a different static extent fails to compile. Arithmetic on
// indices (`i * 2 + 1`) yields plain int64 expressions without a static extent.
#pragma once

#include <array>
#include <string>

#include "nnvm/te/operation.hpp"
#include "nnvm/te/typed_node.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

// Static extents of a tensor or a compute, e.g. Shape<64, 32>; `dyn` marks a run-time extent.
template <int64_t... E>
struct Shape {
  static_assert(((E > 0 || E == dyn) && ...), "static extents must be positive (or dyn)");
  static constexpr size_t rank = sizeof...(E);
  static constexpr std::array<int64_t, sizeof...(E)> extents{E...};
};

// A data-parallel axis variable over [0, E).
template <int64_t E>
class Index : public NodeBase {
 public:
  using value_type = int64_t;
  static constexpr int64_t extent = E;

  explicit Index(ir::Var v) : var_(std::move(v)) {}
  const ir::Var& var() const { return var_; }
  ir::Expr to_ir() const { return var_; }

 private:
  ir::Var var_;
};
template <int64_t E>
inline constexpr int64_t extent_of<Index<E>> = E;

// A reduction axis. It is an ir::IterVar too, so untyped code and schedules take it directly.
template <int64_t E>
class ReduceAxis : public ir::IterVar, public NodeBase {
 public:
  using value_type = int64_t;
  static constexpr int64_t extent = E;

  explicit ReduceAxis(ir::IterVar iv) : ir::IterVar(std::move(iv)) {}
  const ir::IterVar& iter_var() const { return *this; }
  ir::Expr to_ir() const { return var(); }
};
template <int64_t E>
inline constexpr int64_t extent_of<ReduceAxis<E>> = E;

// The same variable without its static extent, for reading a sub-range of a larger axis
// (an Index<32> into an axis of extent 64), which the static check would reject.
template <int64_t E>
Index<dyn> as_dynamic(const Index<E>& i) {
  return Index<dyn>(i.var());
}
template <int64_t E>
ReduceAxis<dyn> as_dynamic(const ReduceAxis<E>& k) {
  return ReduceAxis<dyn>(k.iter_var());
}

// A reduction axis of static extent E over [0, E): reduce_axis<32>("k").
template <int64_t E>
ReduceAxis<E> reduce_axis(std::string name = "r") {
  static_assert(E > 0, "a static reduction extent must be positive");
  return ReduceAxis<E>(te::reduce_axis(ir::Expr(E), std::move(name)));
}
// A reduction axis over [min, min + extent) with a run-time extent: reduce_axis(n, "k").
// A template, so that te::reduce_axis (untyped) wins where both are visible and equally good.
template <class X>
  requires std::is_convertible_v<X, ir::Expr>
ReduceAxis<dyn> reduce_axis(const X& extent, std::string name = "r", ir::Expr min = ir::Expr(int64_t(0))) {
  return ReduceAxis<dyn>(te::reduce_axis(ir::Expr(extent), std::move(name), std::move(min)));
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
