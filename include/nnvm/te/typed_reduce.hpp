// Typed reductions: sum, prod, max_over and min_over of an expression over one reduction axis
// or several ({k1, k2}), optionally from a custom init value. The extreme-value reductions are
// named *_over so that they never look like the elementwise min(a, b) / max(a, b).
// A reduction must be the whole body of a compute; using one as an operand fails to compile.
#pragma once

#include <initializer_list>

#include "nnvm/te/typed_index.hpp"
#include "nnvm/te/typed_ops.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

template <ir::Combiner C, class S>
struct ReduceExpr : NodeBase {
  using value_type = value_t<S>;
  S source;
  std::vector<ir::IterVar> axes;
  Expr<value_type> init;  // undefined: the combiner's identity

  ReduceExpr(S s, std::vector<ir::IterVar> ax, Expr<value_type> i)
      : source(std::move(s)), axes(std::move(ax)), init(std::move(i)) {}
  ir::Expr to_ir() const {
    ir::Expr src = source.to_ir(), in = init.to_ir();
    switch (C) {
      case ir::Combiner::sum: return te::sum(src, axes, in);
      case ir::Combiner::prod: return te::prod(src, axes, in);
      case ir::Combiner::max: return te::max_reduce(src, axes, in);
      case ir::Combiner::min: return te::min_reduce(src, axes, in);
    }
    return {};
  }
};
template <ir::Combiner C, class S>
inline constexpr bool is_reduction<ReduceExpr<C, S>> = true;

// One entry of a braced list of reduction axes of any static extents: sum(e, {k1, k2}).
class AxisRef {
 public:
  template <int64_t E>
  AxisRef(const ReduceAxis<E>& k) : iv_(k.iter_var()) {}
  const ir::IterVar& iter_var() const { return iv_; }

 private:
  ir::IterVar iv_;
};

namespace detail {
inline std::vector<ir::IterVar> axis_list(std::initializer_list<AxisRef> axes) {
  std::vector<ir::IterVar> out;
  for (auto& a : axes) out.push_back(a.iter_var());
  return out;
}

template <ir::Combiner C, class S, class Init>
auto make_reduce(const S& src, std::vector<ir::IterVar> axes, const Init* init) {
  using T = value_t<S>;
  if constexpr (any_invalid<S>) {
    return Invalid{};
  } else if constexpr (!no_reductions<S>() || !check::numeric_type<T>()) {
    return Invalid{};
  } else if constexpr (std::is_same_v<Init, void>) {
    return ReduceExpr<C, S>(src, std::move(axes), Expr<T>());
  } else {
    auto in = lift<T>(*init);
    using I = decltype(in);
    if constexpr (any_invalid<I>) return Invalid{};
    else if constexpr (!check::same_element_type<T, value_t<I>>()) return Invalid{};
    else return ReduceExpr<C, S>(src, std::move(axes), Expr<T>(in));
  }
}
}  // namespace detail

#define NNVM_DSL_REDUCTION(name, combiner)                                                      \
  template <Node S, int64_t E>                                                                  \
  auto name(const S& source, const ReduceAxis<E>& axis) {                                       \
    return detail::make_reduce<combiner>(source, {axis.iter_var()}, (const void*)nullptr);     \
  }                                                                                             \
  template <Node S, int64_t E, class Init>                                                      \
    requires(Node<Init> || Literal<Init>)                                                       \
  auto name(const S& source, const ReduceAxis<E>& axis, const Init& init) {                     \
    return detail::make_reduce<combiner>(source, {axis.iter_var()}, &init);                     \
  }                                                                                             \
  template <Node S>                                                                             \
  auto name(const S& source, std::initializer_list<AxisRef> axes) {                             \
    return detail::make_reduce<combiner>(source, detail::axis_list(axes), (const void*)nullptr); \
  }                                                                                             \
  template <Node S, class Init>                                                                 \
    requires(Node<Init> || Literal<Init>)                                                       \
  auto name(const S& source, std::initializer_list<AxisRef> axes, const Init& init) {           \
    return detail::make_reduce<combiner>(source, detail::axis_list(axes), &init);               \
  }
NNVM_DSL_REDUCTION(sum, ir::Combiner::sum)
NNVM_DSL_REDUCTION(prod, ir::Combiner::prod)
NNVM_DSL_REDUCTION(max_over, ir::Combiner::max)
NNVM_DSL_REDUCTION(min_over, ir::Combiner::min)
#undef NNVM_DSL_REDUCTION

}  // namespace te::dsl
NNVM_END_NAMESPACE
