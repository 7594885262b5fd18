// Operators of the typed DSL. The C++ type of `A(i, k) * B(k, j)` is
// `BinaryExpr<MulOp, Access<...>, Access<...>>` with `value_type` the element type; element
// types are checked here, at compile time, and each node lowers through the same ir functions
// the untyped operators use, so both paths produce identical IR.
#pragma once

#include <tuple>

#include "nnvm/te/typed_node.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

enum class OpClass { arithmetic, comparison, logical };

#define NNVM_DSL_OP(Tag, Class, expr)                            \
  struct Tag {                                                   \
    static constexpr OpClass op_class = OpClass::Class;          \
    static ir::Expr make(ir::Expr a, ir::Expr b) { return expr; } \
  };
NNVM_DSL_OP(AddOp, arithmetic, a + b)
NNVM_DSL_OP(SubOp, arithmetic, a - b)
NNVM_DSL_OP(MulOp, arithmetic, a * b)
NNVM_DSL_OP(DivOp, arithmetic, a / b)
NNVM_DSL_OP(ModOp, arithmetic, a % b)
NNVM_DSL_OP(MinOp, arithmetic, ir::min(a, b))
NNVM_DSL_OP(MaxOp, arithmetic, ir::max(a, b))
NNVM_DSL_OP(EqOp, comparison, a == b)
NNVM_DSL_OP(NeOp, comparison, a != b)
NNVM_DSL_OP(LtOp, comparison, a < b)
NNVM_DSL_OP(LeOp, comparison, a <= b)
NNVM_DSL_OP(GtOp, comparison, a > b)
NNVM_DSL_OP(GeOp, comparison, a >= b)
NNVM_DSL_OP(AndOp, logical, a && b)
NNVM_DSL_OP(OrOp, logical, a || b)
#undef NNVM_DSL_OP

template <class Op, class A, class B>
struct BinaryExpr : NodeBase {
  using value_type = std::conditional_t<Op::op_class == OpClass::arithmetic, value_t<A>, bool>;
  A a;
  B b;
  BinaryExpr(A a_, B b_) : a(std::move(a_)), b(std::move(b_)) {}
  ir::Expr to_ir() const { return Op::make(a.to_ir(), b.to_ir()); }
};

struct NegOp {
  static ir::Expr make(const ir::Expr& a) { return -a; }
};
struct NotOp {
  static ir::Expr make(const ir::Expr& a) { return !a; }
};
template <class Op, class A>
struct UnaryExpr : NodeBase {
  using value_type = value_t<A>;
  A a;
  explicit UnaryExpr(A a_) : a(std::move(a_)) {}
  ir::Expr to_ir() const { return Op::make(a.to_ir()); }
};

template <class U, class A>
struct CastExpr : NodeBase {
  using value_type = U;
  A a;
  explicit CastExpr(A a_) : a(std::move(a_)) {}
  ir::Expr to_ir() const { return ir::cast(dtype_v<U>, a.to_ir()); }
};

template <class C, class A, class B>
struct SelectExpr : NodeBase {
  using value_type = value_t<A>;
  C c;
  A a;
  B b;
  SelectExpr(C c_, A a_, B b_) : c(std::move(c_)), a(std::move(a_)), b(std::move(b_)) {}
  ir::Expr to_ir() const { return ir::select(c.to_ir(), a.to_ir(), b.to_ir()); }
};

// A math function call; isnan/isinf yield bool, every other op its argument's type.
template <ir::CallOp Op, class... A>
struct CallExpr : NodeBase {
  using value_type = std::conditional_t<Op == ir::CallOp::isnan || Op == ir::CallOp::isinf, bool,
                                        value_t<std::tuple_element_t<0, std::tuple<A...>>>>;
  std::tuple<A...> args;
  explicit CallExpr(A... a) : args(std::move(a)...) {}
  ir::Expr to_ir() const {
    return std::apply([](const auto&... a) { return ir::call(Op, a.to_ir()...); }, args);
  }
};

// Operands of a binary operation: at least one typed node; the other may be a literal or
// untyped IR, which adopts the node's element type.
template <class A, class B>
concept Operands = (Node<A> && (Node<B> || Literal<B> || IrExpr<B>)) || (Node<B> && (Literal<A> || IrExpr<A>));

namespace detail {

// Both operands as nodes of one element type (or Invalid after a diagnostic).
template <class A, class B>
auto lift_pair(const A& a, const B& b) {
  if constexpr (Node<A> && Node<B>)
    return std::pair<A, B>(a, b);
  else if constexpr (Node<A>)
    return std::pair(a, lift<value_t<A>>(b));
  else
    return std::pair(lift<value_t<B>>(a), b);
}

template <class... X>
constexpr bool no_reductions() {
  return (check::not_reduction<is_reduction<X>>() && ...);
}

template <class Op, class A, class B>
auto make_binary_nodes(A a, B b) {
  using TA = value_t<A>;
  using TB = value_t<B>;
  if constexpr (any_invalid<A, B>) {
    return Invalid{};
  } else if constexpr (!no_reductions<A, B>()) {
    return Invalid{};
  } else if constexpr (!check::same_element_type<TA, TB>()) {
    return Invalid{};
  } else if constexpr (Op::op_class == OpClass::logical) {
    if constexpr (!check::bool_type<TA>()) return Invalid{};
    else return BinaryExpr<Op, A, B>(std::move(a), std::move(b));
  } else if constexpr (Op::op_class == OpClass::comparison) {
    if constexpr (!check::not_storage_type<TA>()) return Invalid{};
    else return BinaryExpr<Op, A, B>(std::move(a), std::move(b));
  } else {
    if constexpr (!check::numeric_type<TA>()) return Invalid{};
    else return BinaryExpr<Op, A, B>(std::move(a), std::move(b));
  }
}

template <class Op, class A, class B>
auto make_binary(const A& a, const B& b) {
  if constexpr (any_invalid<A, B>) {
    return Invalid{};
  } else {
    auto [x, y] = lift_pair(a, b);
    return make_binary_nodes<Op>(std::move(x), std::move(y));
  }
}

}  // namespace detail

#define NNVM_DSL_BINARY(op, Tag)                         \
  template <class A, class B>                            \
    requires Operands<A, B>                              \
  auto operator op(const A& a, const B& b) {             \
    return detail::make_binary<Tag>(a, b);               \
  }
NNVM_DSL_BINARY(+, AddOp)
NNVM_DSL_BINARY(-, SubOp)
NNVM_DSL_BINARY(*, MulOp)
NNVM_DSL_BINARY(/, DivOp)
NNVM_DSL_BINARY(%, ModOp)
NNVM_DSL_BINARY(==, EqOp)
NNVM_DSL_BINARY(!=, NeOp)
NNVM_DSL_BINARY(<, LtOp)
NNVM_DSL_BINARY(<=, LeOp)
NNVM_DSL_BINARY(>, GtOp)
NNVM_DSL_BINARY(>=, GeOp)
NNVM_DSL_BINARY(&&, AndOp)
NNVM_DSL_BINARY(||, OrOp)
#undef NNVM_DSL_BINARY

// Elementwise minimum and maximum (the reductions are min_over / max_over).
template <class A, class B>
  requires Operands<A, B>
auto min(const A& a, const B& b) {
  return detail::make_binary<MinOp>(a, b);
}
template <class A, class B>
  requires Operands<A, B>
auto max(const A& a, const B& b) {
  return detail::make_binary<MaxOp>(a, b);
}

template <Node A>
auto operator-(const A& a) {
  if constexpr (any_invalid<A> || !detail::no_reductions<A>() || !check::numeric_type<value_t<A>>())
    return Invalid{};
  else
    return UnaryExpr<NegOp, A>(a);
}
template <Node A>
auto operator!(const A& a) {
  if constexpr (any_invalid<A> || !detail::no_reductions<A>() || !check::bool_type<value_t<A>>())
    return Invalid{};
  else
    return UnaryExpr<NotOp, A>(a);
}

// Converts to element type U; the one operation besides load and store that storage types allow.
template <class U, Node A>
auto cast(const A& a) {
  if constexpr (any_invalid<A> || !check::has_dtype<U>() || !detail::no_reductions<A>())
    return Invalid{};
  else
    return CastExpr<U, A>(a);
}

// `c ? t : f` per element; only the chosen branch is evaluated, so a guarded out-of-bounds
// read (padding) is safe. Literal branches adopt the other branch's element type.
template <Node C, class A, class B>
  requires(Operands<A, B> || (Literal<A> && Literal<B>))
auto select(const C& c, const A& t, const B& f) {
  if constexpr (any_invalid<C, A, B>) {
    return Invalid{};
  } else if constexpr (!detail::no_reductions<C>() || !check::bool_type<value_t<C>>()) {
    return Invalid{};
  } else {
    auto [x, y] = [&] {
      if constexpr (Literal<A> && Literal<B>) return std::pair(Const<A>(t), Const<B>(f));
      else return detail::lift_pair(t, f);
    }();
    using X = decltype(x);
    using Y = decltype(y);
    if constexpr (any_invalid<X, Y>)
      return Invalid{};
    else if constexpr (!detail::no_reductions<X, Y>())
      return Invalid{};
    else if constexpr (!check::same_element_type<value_t<X>, value_t<Y>>())
      return Invalid{};
    else
      return SelectExpr<C, X, Y>(c, std::move(x), std::move(y));
  }
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
