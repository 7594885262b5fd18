// Typed tensor handles: Tensor<T, E...> is a te::Tensor whose element type T, rank
// sizeof...(E) and static extents E (or `dyn`) are part of its C++ type, so indexing it checks
// rank, index types and static extents at compile time. It converts to `const te::Tensor&`
// implicitly, so schedules and lowering take typed tensors as they are.
#pragma once

#include "nnvm/te/typed_index.hpp"
#include "nnvm/te/typed_ops.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

// A read of tensor element (I...) of type T; I are the index nodes, as written.
template <class T, class... I>
struct Access : NodeBase {
  using value_type = T;
  te::Tensor tensor;
  std::tuple<I...> indices;
  Access(te::Tensor t, I... i) : tensor(std::move(t)), indices(std::move(i)...) {}
  ir::Expr to_ir() const {
    return std::apply([&](const auto&... i) { return tensor(std::vector<ir::Expr>{i.to_ir()...}); }, indices);
  }
};

namespace detail {

// An index argument as a node: integer literals become int64 constants.
template <class X>
auto as_index(const X& x) {
  if constexpr (Node<X>) {
    return x;
  } else if constexpr (IrExpr<X>) {
    return Expr<int64_t>(ir::Expr(x));
  } else if constexpr (std::is_integral_v<X> && !std::is_same_v<X, bool>) {
    return Const<int64_t>(x);
  } else {
    static_assert(dependent_false<X>, "tensor indices must be integer expressions");
    return Invalid{};
  }
}

template <class T, int64_t... E, size_t... D, class... X>
auto make_access(const te::Tensor& t, std::integer_sequence<int64_t, E...>, std::index_sequence<D...>, X... x) {
  if constexpr (any_invalid<X...>)
    return Invalid{};
  else if constexpr (!no_reductions<X...>())
    return Invalid{};
  else if constexpr (!(check::index_type<value_t<X>>() && ...))
    return Invalid{};
  else if constexpr (!(check::extent_matches<D, extent_of<X>, E>() && ...))
    return Invalid{};
  else
    return Access<T, X...>(t, std::move(x)...);
}

}  // namespace detail

template <class T, int64_t... E>
class Tensor {
  static_assert(check::has_dtype<T>());
  static_assert(((E > 0 || E == dyn) && ...), "static extents must be positive (or dyn)");

 public:
  using value_type = T;
  using shape_type = Shape<E...>;
  static constexpr size_t rank = sizeof...(E);
  static constexpr std::array<int64_t, sizeof...(E)> static_extents{E...};

  Tensor() = default;
  // Wraps an untyped tensor; throws UserError if its dtype, rank or a static extent differs
  // from the type's (ids nnvm.te.dtype_mismatch, nnvm.te.rank_mismatch, nnvm.te.extent_mismatch).
  explicit Tensor(te::Tensor t) : t_(std::move(t)) {
    if (!t_.defined()) return;
    if (t_.dtype() != dtype_v<T>)
      throw UserError("nnvm.te.dtype_mismatch", str_cat("tensor ", t_.name(), " has element type ", t_.dtype(),
                                                        " but its typed handle says ", dtype_v<T>));
    if (t_.rank() != rank)
      throw UserError("nnvm.te.rank_mismatch",
                      str_cat("tensor ", t_.name(), " has rank ", t_.rank(), " but its typed handle says ", rank));
    for (size_t d = 0; d < rank; ++d) {
      if (static_extents[d] == dyn) continue;
      const int64_t* c = ir::as_const_int(t_.shape()[d]);
      if (!c || *c != static_extents[d])
        throw UserError("nnvm.te.extent_mismatch",
                        str_cat("tensor ", t_.name(), " has extent ", c ? std::to_string(*c) : "(symbolic)",
                                " on axis ", d, " but its type says ", static_extents[d]));
    }
  }

  const te::Tensor& untyped() const { return t_; }
  operator const te::Tensor&() const { return t_; }

  bool defined() const { return t_.defined(); }
  const std::string& name() const { return t_.name(); }
  const std::vector<ir::Expr>& shape() const { return t_.shape(); }
  bool same_as(const te::Tensor& o) const { return t_.same_as(o); }

  // Element access, checked at compile time: the number of indices, that each is an integer
  // expression, and that index variables of static extent match the axes' static extents.
  template <class... I>
  auto operator()(const I&... idx) const {
    return access<void>(idx...);
  }

 protected:
  // `Name`: the tensor's compile-time name for the rank diagnostic (void: it has none).
  template <class Name, class... I>
  auto access(const I&... idx) const {
    if constexpr (rank != sizeof...(I)) {
      check::report_rank_mismatch<rank, sizeof...(I), Name>();
      return Invalid{};
    } else {
      return detail::make_access<T>(t_, std::integer_sequence<int64_t, E...>{}, std::index_sequence_for<I...>{},
                                    detail::as_index(idx)...);
    }
  }

 private:
  te::Tensor t_;
};

namespace detail {
template <class T, class Seq>
struct dyn_tensor;
template <class T, size_t... D>
struct dyn_tensor<T, std::index_sequence<D...>> {
  using type = Tensor<T, (void(D), dyn)...>;
};
template <int64_t... E>
std::vector<ir::Expr> static_shape(Shape<E...>) {
  return {ir::Expr(E)...};
}
}  // namespace detail

// A tensor name as a template argument: placeholder<"A", float, 64, 32>().
template <size_t N>
struct TensorName {
  char text[N]{};
  constexpr TensorName(const char (&s)[N]) {
    for (size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};
// The tag that carries a tensor's compile-time name into a diagnostic, one character per
// template argument: GCC and Clang both print tensor_named<'A'>, where Clang would print a
// TensorName as its character codes.
template <char... C>
struct tensor_named {};
namespace detail {
template <TensorName Name, size_t... I>
tensor_named<Name.text[I]...> name_tag(std::index_sequence<I...>);
template <TensorName Name>
using name_tag_t = decltype(name_tag<Name>(std::make_index_sequence<sizeof(Name.text) - 1>{}));
}  // namespace detail

// A Tensor<T, E...> whose name is part of its type, so that indexing it with the wrong number
// of indices names it in the compiler's diagnostic. Everything else is the Tensor's.
template <TensorName Name, class T, int64_t... E>
class NamedTensor : public Tensor<T, E...> {
 public:
  using Tensor<T, E...>::Tensor;
  template <class... I>
  auto operator()(const I&... idx) const {
    return this->template access<detail::name_tag_t<Name>>(idx...);
  }
};

// A tensor of rank R whose extents are all known only at run time.
template <class T, size_t R>
using DynTensor = typename detail::dyn_tensor<T, std::make_index_sequence<R>>::type;

// An input tensor of static shape: placeholder<float, 64, 32>("A").
template <class T, int64_t... E>
Tensor<T, E...> placeholder(std::string name) {
  static_assert(((E != dyn) && ...), "a placeholder with dyn extents needs them: placeholder<T, ...>({n, ...}, name)");
  return Tensor<T, E...>(te::placeholder(detail::static_shape(Shape<E...>{}), dtype_v<T>, std::move(name)));
}
// The same with the name known at compile time: placeholder<"A", float, 64, 32>(). A rank
// mistake's diagnostic then names the tensor.
template <TensorName Name, class T, int64_t... E>
NamedTensor<Name, T, E...> placeholder() {
  static_assert(((E != dyn) && ...), "a placeholder with dyn extents needs them: placeholder<T, ...>({n, ...}, name)");
  return NamedTensor<Name, T, E...>(te::placeholder(detail::static_shape(Shape<E...>{}), dtype_v<T>, Name.text));
}
// The same, spelled placeholder<float>(Shape<64, 32>{}, "A").
template <class T, int64_t... E>
Tensor<T, E...> placeholder(Shape<E...>, std::string name) {
  return placeholder<T, E...>(std::move(name));
}
// An input tensor with run-time extents (int64 expressions such as a symbolic size Var, or
// integers): placeholder<float>({n, 32}, "B") is a Tensor<float, dyn, dyn>.
template <class T, size_t N>
DynTensor<T, N> placeholder(const ir::Expr (&shape)[N], std::string name) {
  return DynTensor<T, N>(te::placeholder(std::vector<ir::Expr>(shape, shape + N), dtype_v<T>, std::move(name)));
}
// Some extents static, some not: placeholder<float, dyn, 32>({n, 32}, "B"). The extents given
// for static axes must equal them (UserError nnvm.te.extent_mismatch).
template <class T, int64_t... E>
  requires(sizeof...(E) > 0)
Tensor<T, E...> placeholder(const ir::Expr (&shape)[sizeof...(E)], std::string name) {
  return Tensor<T, E...>(
      te::placeholder(std::vector<ir::Expr>(shape, shape + sizeof...(E)), dtype_v<T>, std::move(name)));
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
