// Constant folding with the run-time semantics of each dtype: integers wrap at their width and
// divide truncating, float32 folds in float and float64 in double, and nothing whose run-time
// result is undefined (division by zero, an out-of-range float to int conversion) is folded.
#pragma once

#include <cmath>

#include "nnvm/ir/op.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {
namespace detail {

// True for an IntImm, UIntImm or FloatImm.
inline bool is_scalar_const(const Expr& e) {
  return e.defined() && (e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>());
}

// Folds `a op b` for two scalar constants of one dtype; undefined when the result is undefined
// behaviour at run time (division by zero, INT64_MIN / -1) or `op` is not foldable.
inline Expr fold_binary(ExprKind k, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  DataType bt = dtype::boolean;
  if (auto *x = a.as<IntImm>(), *y = b.as<IntImm>(); x && y) {
    int64_t p = x->value, q = y->value;
    uint64_t up = uint64_t(p), uq = uint64_t(q);
    switch (k) {
      case ExprKind::Add: return IntImm::make(t, int64_t(up + uq));
      case ExprKind::Sub: return IntImm::make(t, int64_t(up - uq));
      case ExprKind::Mul: return IntImm::make(t, int64_t(up * uq));
      case ExprKind::Div:
      case ExprKind::Mod:
        if (q == 0 || (p == INT64_MIN && q == -1)) return Expr();
        return IntImm::make(t, k == ExprKind::Div ? p / q : p % q);
      case ExprKind::Min: return IntImm::make(t, p < q ? p : q);
      case ExprKind::Max: return IntImm::make(t, p > q ? p : q);
      case ExprKind::EQ: return UIntImm::make(bt, p == q);
      case ExprKind::NE: return UIntImm::make(bt, p != q);
      case ExprKind::LT: return UIntImm::make(bt, p < q);
      case ExprKind::LE: return UIntImm::make(bt, p <= q);
      case ExprKind::GT: return UIntImm::make(bt, p > q);
      case ExprKind::GE: return UIntImm::make(bt, p >= q);
      default: return Expr();
    }
  }
  if (auto *x = a.as<UIntImm>(), *y = b.as<UIntImm>(); x && y) {
    uint64_t p = x->value, q = y->value;
    switch (k) {
      case ExprKind::Add: return UIntImm::make(t, p + q);
      case ExprKind::Sub: return UIntImm::make(t, p - q);
      case ExprKind::Mul: return UIntImm::make(t, p * q);
      case ExprKind::Div: return q == 0 ? Expr() : UIntImm::make(t, p / q);
      case ExprKind::Mod: return q == 0 ? Expr() : UIntImm::make(t, p % q);
      case ExprKind::Min: return UIntImm::make(t, p < q ? p : q);
      case ExprKind::Max: return UIntImm::make(t, p > q ? p : q);
      case ExprKind::EQ: return UIntImm::make(bt, p == q);
      case ExprKind::NE: return UIntImm::make(bt, p != q);
      case ExprKind::LT: return UIntImm::make(bt, p < q);
      case ExprKind::LE: return UIntImm::make(bt, p <= q);
      case ExprKind::GT: return UIntImm::make(bt, p > q);
      case ExprKind::GE: return UIntImm::make(bt, p >= q);
      case ExprKind::And: return UIntImm::make(t, p && q);
      case ExprKind::Or: return UIntImm::make(t, p || q);
      default: return Expr();
    }
  }
  if (auto *x = a.as<FloatImm>(), *y = b.as<FloatImm>(); x && y) {
    // Fold in the dtype's own precision: float32 through float, as the generated code computes.
    auto fold = [&](auto p, auto q) -> Expr {
      switch (k) {
        case ExprKind::Add: return FloatImm::make(t, double(p + q));
        case ExprKind::Sub: return FloatImm::make(t, double(p - q));
        case ExprKind::Mul: return FloatImm::make(t, double(p * q));
        case ExprKind::Div: return FloatImm::make(t, double(p / q));
        case ExprKind::Mod: return FloatImm::make(t, double(std::fmod(p, q)));
        // NaN-propagating, as the emitters and the interpreter (docs/lowered_ir.md).
        case ExprKind::Min: return FloatImm::make(t, double(p < q || p != p ? p : q));
        case ExprKind::Max: return FloatImm::make(t, double(p > q || p != p ? p : q));
        case ExprKind::EQ: return UIntImm::make(bt, p == q);
        case ExprKind::NE: return UIntImm::make(bt, p != q);
        case ExprKind::LT: return UIntImm::make(bt, p < q);
        case ExprKind::LE: return UIntImm::make(bt, p <= q);
        case ExprKind::GT: return UIntImm::make(bt, p > q);
        case ExprKind::GE: return UIntImm::make(bt, p >= q);
        default: return Expr();
      }
    };
    if (t.bits == 32) return fold(float(x->value), float(y->value));
    if (t.bits == 64) return fold(x->value, y->value);
  }
  return Expr();
}

// Folds a cast of a scalar constant; undefined when the conversion is undefined behaviour
// (a float out of the target integer's range, or NaN).
inline Expr fold_cast(DataType t, const Expr& v) {
  if (auto* i = v.as<IntImm>()) {
    if (t.is_int()) return IntImm::make(t, i->value);
    if (t.is_uint() || t.is_bool()) return UIntImm::make(t, uint64_t(i->value));
    if (t.is_float()) return FloatImm::make(t, t.bits == 64 ? double(i->value) : double(float(i->value)));
  }
  if (auto* u = v.as<UIntImm>()) {
    if (t.is_int()) return IntImm::make(t, int64_t(u->value));
    if (t.is_uint() || t.is_bool()) return UIntImm::make(t, u->value);
    if (t.is_float()) return FloatImm::make(t, t.bits == 64 ? double(u->value) : double(float(u->value)));
  }
  if (auto* f = v.as<FloatImm>()) {
    double x = f->value;
    if (t.is_float()) return FloatImm::make(t, x);
    if (t.is_bool()) return UIntImm::make(t, x != 0);
    if (std::isnan(x)) return Expr();
    if (t.is_int()) {
      double lim = std::ldexp(1.0, t.bits - 1);
      if (!(x > -lim - 1 && x < lim)) return Expr();
      return IntImm::make(t, int64_t(x));
    }
    if (t.is_uint()) {
      if (!(x > -1 && x < std::ldexp(1.0, t.bits))) return Expr();
      return UIntImm::make(t, uint64_t(x));
    }
  }
  return Expr();
}

}  // namespace detail
}  // namespace ir
NNVM_END_NAMESPACE
