// The leaves of typed expressions and the type-erased handle `Expr<T>`. Every node type of the
// DSL derives from NodeBase, names its element type as `value_type`, and lowers itself to IR
// with `to_ir()`, which only `compute` (and `Expr<T>`, which erases the structure) calls.
#pragma once

#include <utility>

#include "nnvm/ir/op.hpp"
#include "nnvm/te/typed_check.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

struct NodeBase {};

template <class X>
concept Node = std::is_base_of_v<NodeBase, X>;
// C++ scalars that take the element type of the expression they meet.
template <class X>
concept Literal = std::is_arithmetic_v<X>;
// Untyped IR (a symbolic size Var, say) meeting a typed expression; its dtype is checked at run time.
template <class X>
concept IrExpr = std::is_base_of_v<ir::Expr, X>;

template <class X>
using value_t = typename X::value_type;

// What an ill-formed expression evaluates to after its static_assert fired: every operation
// on it yields Invalid again without further diagnostics.
struct Invalid : NodeBase {
  using value_type = Invalid;
  ir::Expr to_ir() const { return {}; }
};
template <class... X>
inline constexpr bool any_invalid = (std::is_same_v<X, Invalid> || ...);

template <class X>
inline constexpr bool is_reduction = false;

template <class X>
inline constexpr int64_t extent_of = dyn;

// A literal converted to the element type T.
template <class T>
struct Const : NodeBase {
  using value_type = T;
  std::conditional_t<std::is_integral_v<T>, T, double> value;

  template <Literal L>
  explicit Const(L v) : value(static_cast<decltype(value)>(v)) {}

  ir::Expr to_ir() const {
    if constexpr (std::is_integral_v<T>)
      return ir::make_int_const(dtype_v<T>, static_cast<int64_t>(value));
    else
      return ir::make_const(dtype_v<T>, value);
  }
};

// A typed expression with its structure erased: what branches and loops that build expressions
// hold. Converting a node to Expr<T> lowers it to IR at that point.
template <class T>
class Expr : public NodeBase {
  static_assert(check::has_dtype<T>());

 public:
  using value_type = T;

  Expr() = default;
  Expr(T literal)
    requires std::is_arithmetic_v<T>
      : ir_(Const<T>(literal).to_ir()) {}
  template <Node E>
  Expr(const E& e) {
    if constexpr (!any_invalid<E>)
      if constexpr (check::same_element_type<value_t<E>, T>()) ir_ = e.to_ir();
  }
  // Wraps untyped IR; throws UserError nnvm.te.dtype_mismatch unless its dtype is T's.
  explicit Expr(ir::Expr e) : ir_(std::move(e)) {
    if (!ir_.defined()) throw UserError("nnvm.te.undefined_expr", "Expr<T> built from an undefined ir::Expr");
    if (ir_.dtype() != dtype_v<T>)
      throw UserError("nnvm.te.dtype_mismatch",
                      str_cat("expression of type ", ir_.dtype(), " used where ", dtype_v<T>, " is expected"));
  }

  bool defined() const { return ir_.defined(); }
  ir::Expr to_ir() const { return ir_; }

 private:
  ir::Expr ir_;
};

// `x` as a node of element type T (literals and untyped IR adopt T).
template <class T, class X>
auto lift(const X& x) {
  if constexpr (Node<X>) {
    return x;
  } else if constexpr (IrExpr<X>) {
    return Expr<T>(ir::Expr(x));
  } else if constexpr (check::literal_fits<T, X>()) {
    return Const<T>(x);
  } else {
    return Invalid{};
  }
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
