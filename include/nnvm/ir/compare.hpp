// Structural comparison of expressions. `deep_equal` is equality up to node sharing (variables,
// buffers and tensors still compare by identity); `ExprOrder` is a total order consistent with
// it, used to put commutative operands and affine terms in a deterministic order.
#pragma once

#include <cstring>
#include <unordered_map>

#include "nnvm/ir/stmt.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

namespace detail {
inline int cmp_dtype(DataType a, DataType b) {
  if (a.code != b.code) return a.code < b.code ? -1 : 1;
  if (a.bits != b.bits) return a.bits < b.bits ? -1 : 1;
  if (a.lanes != b.lanes) return a.lanes < b.lanes ? -1 : 1;
  return 0;
}
template <class T>
int cmp_value(const T& a, const T& b) {
  return a < b ? -1 : b < a ? 1 : 0;
}
// Floats compare by bit pattern so that NaN equals itself and -0.0 differs from 0.0.
inline int cmp_double_bits(double a, double b) {
  uint64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  if (x == y) return 0;
  return a < b ? -1 : b < a ? 1 : cmp_value(x, y);
}
}  // namespace detail

// Orders expressions structurally: by kind, dtype, then operands. Variables (and buffers and
// tensors) order by name, and distinct objects sharing a name by the order in which this
// ExprOrder first met them, so the result never depends on addresses. Keep one ExprOrder for
// the whole of one pass so that the order stays consistent.
class ExprOrder {
 public:
  int compare(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return 0;
    if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
    if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
    if (int c = detail::cmp_dtype(a.dtype(), b.dtype())) return c;
    switch (a.kind()) {
      case ExprKind::IntImm: return detail::cmp_value(a.as<IntImm>()->value, b.as<IntImm>()->value);
      case ExprKind::UIntImm: return detail::cmp_value(a.as<UIntImm>()->value, b.as<UIntImm>()->value);
      case ExprKind::FloatImm: return detail::cmp_double_bits(a.as<FloatImm>()->value, b.as<FloatImm>()->value);
      case ExprKind::Var: {
        auto *x = a.as<VarNode>(), *y = b.as<VarNode>();
        return named(x, x->name, y, y->name);
      }
#define NNVM_CMP_BINARY(N)                                         \
  case ExprKind::N: {                                              \
    auto *x = a.as<N>(), *y = b.as<N>();                           \
    if (int c = compare(x->a, y->a)) return c;                     \
    return compare(x->b, y->b);                                    \
  }
        NNVM_CMP_BINARY(Add) NNVM_CMP_BINARY(Sub) NNVM_CMP_BINARY(Mul) NNVM_CMP_BINARY(Div)
        NNVM_CMP_BINARY(Mod) NNVM_CMP_BINARY(Min) NNVM_CMP_BINARY(Max) NNVM_CMP_BINARY(EQ)
        NNVM_CMP_BINARY(NE) NNVM_CMP_BINARY(LT) NNVM_CMP_BINARY(LE) NNVM_CMP_BINARY(GT)
        NNVM_CMP_BINARY(GE) NNVM_CMP_BINARY(And) NNVM_CMP_BINARY(Or)
#undef NNVM_CMP_BINARY
      case ExprKind::Not: return compare(a.as<Not>()->a, b.as<Not>()->a);
      case ExprKind::Select: {
        auto *x = a.as<Select>(), *y = b.as<Select>();
        if (int c = compare(x->condition, y->condition)) return c;
        if (int c = compare(x->true_value, y->true_value)) return c;
        return compare(x->false_value, y->false_value);
      }
      case ExprKind::Cast: return compare(a.as<Cast>()->value, b.as<Cast>()->value);
      case ExprKind::BitCast: return compare(a.as<BitCast>()->value, b.as<BitCast>()->value);
      case ExprKind::Call: {
        auto *x = a.as<Call>(), *y = b.as<Call>();
        if (x->op != y->op) return x->op < y->op ? -1 : 1;
        return compare_list(x->args, y->args);
      }
      case ExprKind::Load: {
        auto *x = a.as<Load>(), *y = b.as<Load>();
        if (int c = named(x->buffer.get(), x->buffer->name, y->buffer.get(), y->buffer->name)) return c;
        return compare(x->index, y->index);
      }
      case ExprKind::Ramp: {
        auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
        if (int c = compare(x->base, y->base)) return c;
        return compare(x->stride, y->stride);
      }
      case ExprKind::Broadcast: return compare(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
      case ExprKind::Let: {
        auto *x = a.as<Let>(), *y = b.as<Let>();
        if (int c = compare(x->var, y->var)) return c;
        if (int c = compare(x->value, y->value)) return c;
        return compare(x->body, y->body);
      }
      case ExprKind::Reduce: {
        auto *x = a.as<Reduce>(), *y = b.as<Reduce>();
        if (x->combiner != y->combiner) return x->combiner < y->combiner ? -1 : 1;
        if (x->axes.size() != y->axes.size()) return x->axes.size() < y->axes.size() ? -1 : 1;
        for (size_t i = 0; i < x->axes.size(); ++i)
          if (int c = compare(x->axes[i].var(), y->axes[i].var())) return c;
        if (int c = compare(x->source, y->source)) return c;
        if (int c = compare(x->init, y->init)) return c;
        return compare(x->condition, y->condition);
      }
      case ExprKind::ProducerLoad: {
        auto *x = a.as<ProducerLoad>(), *y = b.as<ProducerLoad>();
        if (int c = named(x->tensor.get(), x->tensor->name, y->tensor.get(), y->tensor->name)) return c;
        return compare_list(x->indices, y->indices);
      }
    }
    return 0;
  }
  bool operator()(const Expr& a, const Expr& b) { return compare(a, b) < 0; }

 private:
  int compare_list(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    for (size_t i = 0; i < a.size(); ++i)
      if (int c = compare(a[i], b[i])) return c;
    return 0;
  }
  int named(const void* x, const std::string& xn, const void* y, const std::string& yn) {
    if (x == y) return 0;
    if (int c = xn.compare(yn)) return c < 0 ? -1 : 1;
    int rx = rank(x), ry = rank(y);
    return rx < ry ? -1 : 1;
  }
  int rank(const void* p) { return ranks_.emplace(p, int(ranks_.size())).first->second; }

  std::unordered_map<const void*, int> ranks_;
};

// True when `a` and `b` compute the same thing by the same tree (variables by identity).
inline bool deep_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  // Names never decide equality, so a throwaway order is enough here.
  return ExprOrder().compare(a, b) == 0;
}

}  // namespace ir
NNVM_END_NAMESPACE
