// Compile-time checks of the typed DSL. Each failing check is one static_assert whose message is
// a sentence; the numbers it cannot spell (extents, axis) are the helper's template arguments,
// which the compiler prints in its "in instantiation of ... [with ...]" line.
// Every check returns whether it held, so callers stop at the first failure (`if constexpr`)
// and a mistake yields one error, not a cascade.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

// Marks an extent known only at run time (a symbolic size or a value given as an ir::Expr).
inline constexpr int64_t dyn = -1;

template <class...>
inline constexpr bool dependent_false = false;

namespace check {

// The rank mismatch, spelled with its numbers for ranks and index counts up to 8; larger ones
// fall back to the primary template, whose arguments carry the numbers.
template <size_t Rank, size_t Given, class = void>
struct RankMismatch {
  static_assert(dependent_false<RankMismatch>, "tensor has rank N but is indexed with M indices");
};
#define NNVM_DSL_INDEX_WORD_0 " indices"
#define NNVM_DSL_INDEX_WORD_1 " index"
#define NNVM_DSL_INDEX_WORD_2 " indices"
#define NNVM_DSL_INDEX_WORD_3 " indices"
#define NNVM_DSL_INDEX_WORD_4 " indices"
#define NNVM_DSL_INDEX_WORD_5 " indices"
#define NNVM_DSL_INDEX_WORD_6 " indices"
#define NNVM_DSL_INDEX_WORD_7 " indices"
#define NNVM_DSL_INDEX_WORD_8 " indices"
// Entries with N == M exist only to keep the table regular; they are never instantiated.
#define NNVM_DSL_RANK_CASE(N, M)                                                             \
  template <class D>                                                                         \
  struct RankMismatch<N, M, D> {                                                             \
    static_assert(dependent_false<D>,                                                        \
                  "tensor has rank " #N " but is indexed with " #M NNVM_DSL_INDEX_WORD_##M); \
  };
#define NNVM_DSL_RANK_ROW(N)                                                                \
  NNVM_DSL_RANK_CASE(N, 0) NNVM_DSL_RANK_CASE(N, 1) NNVM_DSL_RANK_CASE(N, 2)               \
  NNVM_DSL_RANK_CASE(N, 3) NNVM_DSL_RANK_CASE(N, 4) NNVM_DSL_RANK_CASE(N, 5)               \
  NNVM_DSL_RANK_CASE(N, 6) NNVM_DSL_RANK_CASE(N, 7) NNVM_DSL_RANK_CASE(N, 8)
NNVM_DSL_RANK_ROW(0) NNVM_DSL_RANK_ROW(1) NNVM_DSL_RANK_ROW(2)
NNVM_DSL_RANK_ROW(3) NNVM_DSL_RANK_ROW(4) NNVM_DSL_RANK_ROW(5)
NNVM_DSL_RANK_ROW(6) NNVM_DSL_RANK_ROW(7) NNVM_DSL_RANK_ROW(8)
#undef NNVM_DSL_RANK_ROW
#undef NNVM_DSL_RANK_CASE
#undef NNVM_DSL_INDEX_WORD_0
#undef NNVM_DSL_INDEX_WORD_1
#undef NNVM_DSL_INDEX_WORD_2
#undef NNVM_DSL_INDEX_WORD_3
#undef NNVM_DSL_INDEX_WORD_4
#undef NNVM_DSL_INDEX_WORD_5
#undef NNVM_DSL_INDEX_WORD_6
#undef NNVM_DSL_INDEX_WORD_7
#undef NNVM_DSL_INDEX_WORD_8

// Called only on a mismatch. Kept apart from the condition, which must stay a constant
// expression after the diagnostic (Clang drops functions that name an invalid class).
// `Name` is the tensor's compile-time name (tensor_named<'A'>) where it has one: a C++20
// static_assert message cannot contain it, so it reaches the diagnostic as a template argument.
template <size_t Rank, size_t Given, class Name = void>
void report_rank_mismatch() {
  (void)sizeof(RankMismatch<Rank, Given, Name>);
}

// An index variable's static extent must equal the static extent of the axis it indexes
// (index arithmetic such as `i + 1` has no static extent and is checked at run time instead).
// Reading part of a larger axis on purpose (a stencil's A(i) beside A(i + 1), a slice) takes
// as_dynamic(i), which the message says.
template <size_t Axis, int64_t IndexExtent, int64_t TensorExtent>
constexpr bool extent_matches() {
  constexpr bool ok = IndexExtent == dyn || TensorExtent == dyn || IndexExtent == TensorExtent;
  static_assert(ok,
                "index extent does not match the tensor's extent on this axis; to read part of a longer axis "
                "on purpose (a stencil's A(i) beside A(i + 1), a slice), write A(as_dynamic(i))");
  return ok;
}

template <class A, class B>
constexpr bool same_element_type() {
  static_assert(std::is_same_v<A, B>, "operands have different element types; use cast<T>() to convert");
  return std::is_same_v<A, B>;
}

template <class T>
constexpr bool not_storage_type() {
  static_assert(!std::is_same_v<T, float16>, "float16 is a storage type: cast<float>() before arithmetic");
  static_assert(!std::is_same_v<T, bfloat16>, "bfloat16 is a storage type: cast<float>() before arithmetic");
  return !std::is_same_v<T, float16> && !std::is_same_v<T, bfloat16>;
}

template <class T>
constexpr bool numeric_type() {
  if constexpr (!not_storage_type<T>()) {
    return false;
  } else {
    static_assert(!std::is_same_v<T, bool>,
                  "arithmetic on bool expressions is not allowed; use select() or cast<T>()");
    return !std::is_same_v<T, bool>;
  }
}

template <class T>
constexpr bool bool_type() {
  static_assert(std::is_same_v<T, bool>, "logical operators and select() need bool expressions (comparisons)");
  return std::is_same_v<T, bool>;
}

template <class T>
constexpr bool float_argument() {
  if constexpr (!not_storage_type<T>()) {
    return false;
  } else {
    static_assert(std::is_floating_point_v<T>,
                  "this math function needs a floating-point argument; use cast<float>() to convert");
    return std::is_floating_point_v<T>;
  }
}

template <class T>
constexpr bool index_type() {
  constexpr bool ok = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  static_assert(ok, "tensor indices must be integer expressions");
  return ok;
}

// A literal takes the element type of the expression it meets (Halide's rule), which must not
// silently drop a fraction.
template <class T, class Literal>
constexpr bool literal_fits() {
  constexpr bool ok = !std::is_floating_point_v<Literal> || !std::is_integral_v<T>;
  static_assert(ok, "a floating-point literal cannot meet an integer expression; use cast<float>() on the expression");
  return ok;
}

template <class T>
constexpr bool has_dtype() {
  static_assert(nnvm::has_dtype<T>::value,
                "element type has no nnvm dtype; use bool, a fixed-width integer, float, double, float16 or bfloat16");
  return nnvm::has_dtype<T>::value;
}

template <bool IsReduction>
constexpr bool not_reduction() {
  static_assert(!IsReduction, "a reduction must be the whole body of a compute; compute it as its own tensor");
  return !IsReduction;
}

}  // namespace check
}  // namespace te::dsl
NNVM_END_NAMESPACE
