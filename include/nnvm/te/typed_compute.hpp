// Typed compute: the body is a callable taking one index variable per output dimension
// (`[&](auto i, auto j) { ... }` works) and returning a typed expression; the result is a
// Tensor of the body's element type with the static extents given. The typed body is lowered
// once, inside te::compute, so the IR is exactly what the untyped path builds.
#pragma once

#include "nnvm/te/typed_reduce.hpp"
#include "nnvm/te/typed_tensor.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

namespace check {
// Rank is unused but shows in the diagnostic's "[with ...]" line.
template <bool Invocable, size_t Rank>
constexpr bool body_invocable() {
  static_assert(Invocable, "the compute body must take one index variable per output dimension");
  return Invocable;
}
template <class Body>
constexpr bool typed_body() {
  constexpr bool ok = Node<Body> || Literal<Body>;
  static_assert(ok, "the compute body must return a typed expression (untyped ir::Expr bodies go to te::compute)");
  return ok;
}
}  // namespace check

namespace detail {

template <int64_t... E, class F, size_t... D>
decltype(auto) invoke_body(F& f, const std::vector<ir::Var>& v, std::index_sequence<D...>) {
  return f(Index<E>(v[D])...);
}

template <class Raw>
auto body_node(const Raw& r) {
  if constexpr (Node<Raw>) return r;
  else return Const<Raw>(r);
}

template <int64_t... E, class F>
auto compute_impl(std::vector<ir::Expr> shape, F& f, std::string name, std::vector<std::string> axis_names) {
  using Fallback = Tensor<float, E...>;  // the result type after a diagnostic
  // A requires-expression rather than std::is_invocable keeps library internals out of the
  // instantiation context of errors inside the body.
  constexpr bool invocable = requires(F& g) { g(Index<E>(std::declval<ir::Var>())...); };
  if constexpr (!check::body_invocable<invocable, sizeof...(E)>()) {
    return Fallback();
  } else {
    using Raw = std::decay_t<decltype(f(Index<E>(std::declval<ir::Var>())...))>;
    if constexpr (!check::typed_body<Raw>()) {
      return Fallback();
    } else {
      using Body = decltype(body_node(std::declval<const Raw&>()));
      if constexpr (any_invalid<Body>) {
        return Fallback();
      } else {
        te::Tensor t = te::compute(
            std::move(shape),
            [&](const std::vector<ir::Var>& v) {
              return body_node(invoke_body<E...>(f, v, std::make_index_sequence<sizeof...(E)>{})).to_ir();
            },
            std::move(name), std::move(axis_names));
        return Tensor<value_t<Body>, E...>(std::move(t));
      }
    }
  }
}

template <class S>
struct is_shape : std::false_type {};
template <int64_t... E>
struct is_shape<Shape<E...>> : std::true_type {};

template <size_t... D>
Shape<(void(D), dyn)...> dyn_shape(std::index_sequence<D...>) {
  return {};
}

}  // namespace detail

// Static shape: compute(Shape<64, 64>{}, body, "C").
template <int64_t... E, class F>
auto compute(Shape<E...>, F&& f, std::string name = "compute", std::vector<std::string> axis_names = {}) {
  static_assert(((E != dyn) && ...), "a compute with dyn extents needs them: compute<Shape<...>>({n, ...}, body, name)");
  return detail::compute_impl<E...>(detail::static_shape(Shape<E...>{}), f, std::move(name), std::move(axis_names));
}
// The same, spelled compute<Shape<64, 64>>(body, "C").
template <class S, class F>
  requires detail::is_shape<S>::value
auto compute(F&& f, std::string name = "compute", std::vector<std::string> axis_names = {}) {
  return compute(S{}, f, std::move(name), std::move(axis_names));
}
// Run-time extents: compute({n, m}, body, "C") gives a Tensor<T, dyn, dyn>.
template <size_t N, class F>
auto compute(const ir::Expr (&shape)[N], F&& f, std::string name = "compute", std::vector<std::string> axis_names = {}) {
  return [&]<int64_t... E>(Shape<E...>) {
    return detail::compute_impl<E...>(std::vector<ir::Expr>(shape, shape + N), f, std::move(name),
                                      std::move(axis_names));
  }(detail::dyn_shape(std::make_index_sequence<N>{}));
}
// Some extents static, some not: compute<Shape<dyn, 64>>({n, 64}, body, "C"). The extents given
// for static axes must equal them (UserError nnvm.te.extent_mismatch).
template <class S, class F>
  requires detail::is_shape<S>::value
auto compute(const ir::Expr (&shape)[S::rank], F&& f, std::string name = "compute",
             std::vector<std::string> axis_names = {}) {
  return [&]<int64_t... E>(Shape<E...>) {
    return detail::compute_impl<E...>(std::vector<ir::Expr>(shape, shape + S::rank), f, std::move(name),
                                      std::move(axis_names));
  }(S{});
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
