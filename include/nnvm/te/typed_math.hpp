// Elementwise math functions, one per ir::CallOp. They live in nnvm::te::dsl (and nnvm), not
// std, and take typed expressions only, so `exp(x)` finds them by argument-dependent lookup
// and never competes with std::exp on plain numbers.
#pragma once

#include "nnvm/te/typed_ops.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

namespace detail {
template <ir::CallOp Op, class... A>
auto make_call(A... a) {
  using T = value_t<std::tuple_element_t<0, std::tuple<A...>>>;
  if constexpr (any_invalid<A...>) {
    return Invalid{};
  } else if constexpr (!no_reductions<A...>()) {
    return Invalid{};
  } else if constexpr (!(check::same_element_type<T, value_t<A>>() && ...)) {
    return Invalid{};
  } else if constexpr (Op == ir::CallOp::abs) {
    if constexpr (!check::numeric_type<T>()) return Invalid{};
    else return CallExpr<Op, A...>(std::move(a)...);
  } else {
    if constexpr (!check::float_argument<T>()) return Invalid{};
    else return CallExpr<Op, A...>(std::move(a)...);
  }
}
}  // namespace detail

#define NNVM_DSL_UNARY_CALL(name)                           \
  template <Node A>                                         \
  auto name(const A& a) {                                   \
    return detail::make_call<ir::CallOp::name>(a);          \
  }
#define NNVM_DSL_BINARY_CALL(name)                                   \
  template <class A, class B>                                        \
    requires Operands<A, B>                                          \
  auto name(const A& a, const B& b) {                                \
    if constexpr (any_invalid<A, B>) {                               \
      return Invalid{};                                              \
    } else {                                                         \
      auto [x, y] = detail::lift_pair(a, b);                         \
      return detail::make_call<ir::CallOp::name>(x, y);              \
    }                                                                \
  }
NNVM_DSL_UNARY_CALL(exp)
NNVM_DSL_UNARY_CALL(exp2)
NNVM_DSL_UNARY_CALL(log)
NNVM_DSL_UNARY_CALL(log2)
NNVM_DSL_UNARY_CALL(log1p)
NNVM_DSL_UNARY_CALL(expm1)
NNVM_DSL_UNARY_CALL(sqrt)
NNVM_DSL_UNARY_CALL(rsqrt)
NNVM_DSL_UNARY_CALL(tanh)
NNVM_DSL_UNARY_CALL(erf)
NNVM_DSL_UNARY_CALL(sigmoid)
NNVM_DSL_BINARY_CALL(pow)
NNVM_DSL_UNARY_CALL(abs)
NNVM_DSL_UNARY_CALL(floor)
NNVM_DSL_UNARY_CALL(ceil)
NNVM_DSL_UNARY_CALL(round)
NNVM_DSL_UNARY_CALL(trunc)
NNVM_DSL_UNARY_CALL(sin)
NNVM_DSL_UNARY_CALL(cos)
NNVM_DSL_UNARY_CALL(tan)
NNVM_DSL_UNARY_CALL(asin)
NNVM_DSL_UNARY_CALL(acos)
NNVM_DSL_UNARY_CALL(atan)
NNVM_DSL_BINARY_CALL(atan2)
NNVM_DSL_UNARY_CALL(sinh)
NNVM_DSL_UNARY_CALL(cosh)
NNVM_DSL_UNARY_CALL(asinh)
NNVM_DSL_UNARY_CALL(acosh)
NNVM_DSL_UNARY_CALL(atanh)
NNVM_DSL_BINARY_CALL(fmod)
NNVM_DSL_UNARY_CALL(isnan)
NNVM_DSL_UNARY_CALL(isinf)
NNVM_DSL_BINARY_CALL(copysign)
#undef NNVM_DSL_UNARY_CALL
#undef NNVM_DSL_BINARY_CALL

}  // namespace te::dsl
NNVM_END_NAMESPACE
