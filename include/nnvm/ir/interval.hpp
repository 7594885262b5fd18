// Integer interval analysis: constant bounds of integer expressions (`const_bound`), symbolic
// bounds of index expressions (`eval_sym_interval`, for bound inference) and proofs of integer
// conditions (`can_prove`). Everything here is conservative: an answer may be loose, never wrong.
#pragma once

#include <optional>
#include <unordered_map>

#include "nnvm/ir/affine.hpp"
#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

// The integers in [min, max], both inclusive; a missing end is unbounded.
struct Interval {
  std::optional<int64_t> min, max;

  static Interval everything() { return {}; }
  static Interval point(int64_t v) { return {v, v}; }
  static Interval range(int64_t lo, int64_t hi) { return {lo, hi}; }
  bool is_bounded() const { return min && max; }
  bool is_point() const { return min && max && *min == *max; }
  bool contains(int64_t v) const { return (!min || *min <= v) && (!max || v <= *max); }
  // True when every value of this interval lies in `o`.
  bool within(const Interval& o) const {
    return (!o.min || (min && *min >= *o.min)) && (!o.max || (max && *max <= *o.max));
  }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Known ranges of variables, keyed by the variable node (the caller keeps the Vars alive).
// A variable that is absent is unbounded (within its dtype).
using IntervalMap = std::unordered_map<const VarNode*, Interval>;

namespace detail {

// An interval end: a finite int64 or an infinity (inf = -1 or +1). Arithmetic saturates to
// the infinity of the true result's sign, so a bound that does not fit int64 is dropped.
struct Bound {
  int inf = 0;
  int64_t v = 0;
  static Bound neg_inf() { return {-1, 0}; }
  static Bound pos_inf() { return {1, 0}; }
  static Bound of(int64_t x) { return {0, x}; }
  int sign() const { return inf ? inf : (v > 0) - (v < 0); }
  friend bool operator<(const Bound& a, const Bound& b) {
    if (a.inf != b.inf) return a.inf < b.inf;
    return a.inf == 0 && a.v < b.v;
  }
};
// Checked int64 arithmetic: false (and `r` untouched) when the result does not fit.
inline bool checked_add(int64_t a, int64_t b, int64_t& r) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
  r = a + b;
  return true;
}
inline bool checked_mul(int64_t a, int64_t b, int64_t& r) {
  if (a == 0 || b == 0) {
    r = 0;
    return true;
  }
  uint64_t ua = a < 0 ? 0 - uint64_t(a) : uint64_t(a), ub = b < 0 ? 0 - uint64_t(b) : uint64_t(b);
  bool neg = (a < 0) != (b < 0);
  uint64_t lim = neg ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
  if (ua > lim / ub) return false;
  uint64_t p = ua * ub;
  r = neg ? int64_t(0 - p) : int64_t(p);
  return true;
}

inline Bound bound_add(Bound a, Bound b) {
  if (a.inf || b.inf) return {a.inf ? a.inf : b.inf, 0};  // -inf + +inf never meets: ends are ordered
  int64_t r;
  if (!checked_add(a.v, b.v, r)) return {a.v > 0 ? 1 : -1, 0};
  return Bound::of(r);
}
inline Bound bound_neg(Bound a) {
  if (a.inf) return {-a.inf, 0};
  if (a.v == INT64_MIN) return Bound::pos_inf();
  return Bound::of(-a.v);
}
inline Bound bound_mul(Bound a, Bound b) {
  int s = a.sign() * b.sign();
  if (s == 0) return Bound::of(0);
  if (a.inf || b.inf) return {s, 0};
  int64_t r;
  if (!checked_mul(a.v, b.v, r)) return {s, 0};
  return Bound::of(r);
}
// Truncating division for b > 0 (b may be +inf).
inline Bound bound_div_pos(Bound a, Bound b) {
  if (b.inf) return Bound::of(0);
  if (a.inf) return a;
  return Bound::of(a.v / b.v);
}
inline Bound lo_of(const Interval& i) { return i.min ? Bound::of(*i.min) : Bound::neg_inf(); }
inline Bound hi_of(const Interval& i) { return i.max ? Bound::of(*i.max) : Bound::pos_inf(); }
inline Interval from_bounds(Bound lo, Bound hi) {
  Interval r;
  if (!lo.inf) r.min = lo.v;
  if (!hi.inf) r.max = hi.v;
  return r;
}
inline Interval from_corners(std::initializer_list<Bound> c) {
  return from_bounds(std::min(c), std::max(c));
}

// The values a scalar of integer type `t` can hold.
inline Interval dtype_range(DataType t) {
  if (t.is_bool()) return Interval::range(0, 1);
  if (t.is_uint()) return t.bits >= 64 ? Interval{0, std::nullopt} : Interval::range(0, int64_t((uint64_t(1) << t.bits) - 1));
  if (t.is_int()) {
    if (t.bits >= 64) return {};
    return Interval::range(-(int64_t(1) << (t.bits - 1)), (int64_t(1) << (t.bits - 1)) - 1);
  }
  return {};
}
// Whether arithmetic of `t` wraps (narrow signed, or any unsigned type) instead of being
// undefined on overflow (int32, int64).
inline bool wraps(DataType t) { return t.is_uint() || t.is_bool() || (t.is_int() && t.bits < 32); }

// Restricts the mathematical result `r` of an operation of type `t` to what the type can hold:
// a wrapping type that might have wrapped can hold anything of its range.
inline Interval fit(const Interval& r, DataType t) {
  Interval range = dtype_range(t);
  if (r.within(range)) return r;
  if (wraps(t)) return range;
  Interval out = r;
  if (range.min && (!out.min || *out.min < *range.min)) out.min = range.min;
  if (range.max && (!out.max || *out.max > *range.max)) out.max = range.max;
  return out;
}

inline Interval interval_union(const Interval& a, const Interval& b) {
  Interval r;
  if (a.min && b.min) r.min = std::min(*a.min, *b.min);
  if (a.max && b.max) r.max = std::max(*a.max, *b.max);
  return r;
}

inline Interval div_interval(const Interval& a, const Interval& b) {
  // Truncating division is monotone in each operand on each sign of the divisor, so the corners
  // of each part of the divisor bound the result. A zero divisor is undefined and ignored.
  auto positive_part = [&](Bound lo, Bound hi) {
    return from_corners({bound_div_pos(lo_of(a), lo), bound_div_pos(lo_of(a), hi),
                         bound_div_pos(hi_of(a), lo), bound_div_pos(hi_of(a), hi)});
  };
  std::optional<Interval> out;
  auto merge = [&](const Interval& x) { out = out ? interval_union(*out, x) : x; };
  Bound blo = lo_of(b), bhi = hi_of(b);
  if (Bound::of(0) < bhi) merge(positive_part(std::max(blo, Bound::of(1)), bhi));
  if (blo < Bound::of(0)) {
    // a / b == -(a / -b)
    Interval neg = positive_part(bound_neg(std::min(bhi, Bound::of(-1))), bound_neg(blo));
    merge(from_bounds(bound_neg(hi_of(neg)), bound_neg(lo_of(neg))));
  }
  return out ? *out : Interval{};
}

inline Interval mod_interval(const Interval& a, const Interval& b) {
  // The result has the dividend's sign and a magnitude below both |a| and |b|.
  Bound m = std::max(bound_neg(lo_of(b)), hi_of(b));  // max |b|
  if (!m.inf && m.v <= 0) return {};  // only a zero divisor: undefined
  Bound lim = m.inf ? m : Bound::of(m.v - 1);
  Bound lo = lo_of(a), hi = hi_of(a);
  Bound rlo = Bound::of(0) < lo ? Bound::of(0) : std::max(lo, bound_neg(lim));
  Bound rhi = hi < Bound::of(0) ? Bound::of(0) : std::min(hi, lim);
  return from_bounds(rlo, rhi);
}

class ConstBounder {
 public:
  explicit ConstBounder(const IntervalMap& m) : map_(&m) {}

  Interval bound(const Expr& e) {
    if (!e.defined()) return {};
    DataType t = e.dtype();
    if (t.is_bool()) {
      if (auto* u = e.as<UIntImm>()) return Interval::point(int64_t(u->value));
      if (auto* b = e.as<Broadcast>()) return bound(b->value);
      return Interval::range(0, 1);
    }
    if (!t.is_integer()) return {};
    // Shared subtrees are bounded once (the expression outlives this bounder).
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    Interval r = fit(raw(e), t.element_of());
    memo_.emplace(e.get(), r);
    return r;
  }

 private:
  Interval raw(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::IntImm: return Interval::point(e.as<IntImm>()->value);
      case ExprKind::UIntImm: {
        uint64_t v = e.as<UIntImm>()->value;
        return v > uint64_t(INT64_MAX) ? Interval{INT64_MAX, std::nullopt} : Interval::point(int64_t(v));
      }
      case ExprKind::Var: {
        auto it = map_->find(e.as<VarNode>());
        return it == map_->end() ? Interval{} : it->second;
      }
      case ExprKind::Add: {
        auto* o = e.as<Add>();
        Interval a = bound(o->a), b = bound(o->b);
        return from_bounds(bound_add(lo_of(a), lo_of(b)), bound_add(hi_of(a), hi_of(b)));
      }
      case ExprKind::Sub: {
        auto* o = e.as<Sub>();
        Interval a = bound(o->a), b = bound(o->b);
        return from_bounds(bound_add(lo_of(a), bound_neg(hi_of(b))), bound_add(hi_of(a), bound_neg(lo_of(b))));
      }
      case ExprKind::Mul: {
        auto* o = e.as<Mul>();
        if (deep_equal(o->a, o->b)) {  // a square is never negative
          Interval a = bound(o->a);
          Interval sq = from_corners({bound_mul(lo_of(a), lo_of(a)), bound_mul(hi_of(a), hi_of(a))});
          if (!a.contains(0) && a.is_bounded()) return sq;
          return {0, sq.max};
        }
        Interval a = bound(o->a), b = bound(o->b);
        return from_corners({bound_mul(lo_of(a), lo_of(b)), bound_mul(lo_of(a), hi_of(b)),
                             bound_mul(hi_of(a), lo_of(b)), bound_mul(hi_of(a), hi_of(b))});
      }
      case ExprKind::Div: return div_interval(bound(e.as<Div>()->a), bound(e.as<Div>()->b));
      case ExprKind::Mod: return mod_interval(bound(e.as<Mod>()->a), bound(e.as<Mod>()->b));
      case ExprKind::Min: {
        Interval a = bound(e.as<Min>()->a), b = bound(e.as<Min>()->b);
        return from_bounds(std::min(lo_of(a), lo_of(b)), std::min(hi_of(a), hi_of(b)));
      }
      case ExprKind::Max: {
        Interval a = bound(e.as<Max>()->a), b = bound(e.as<Max>()->b);
        return from_bounds(std::max(lo_of(a), lo_of(b)), std::max(hi_of(a), hi_of(b)));
      }
      case ExprKind::Select: {
        auto* o = e.as<Select>();
        Interval c = bound(o->condition);
        if (c.is_point()) return bound(*c.min ? o->true_value : o->false_value);
        return interval_union(bound(o->true_value), bound(o->false_value));
      }
      case ExprKind::Cast: {
        auto* o = e.as<Cast>();
        DataType from = o->value.dtype();
        // A conversion that does not fit wraps; from a float, anything the target type holds.
        if (!from.is_integer() && !from.is_bool()) return {};
        Interval v = bound(o->value), range = dtype_range(e.dtype().element_of());
        return v.within(range) ? v : range;
      }
      case ExprKind::BitCast: return {};  // the bits of a float read as an integer: any value of the type
      case ExprKind::Ramp: {
        auto* o = e.as<Ramp>();
        Interval base = bound(o->base), stride = bound(o->stride);
        Interval lanes = Interval::range(0, o->lanes - 1);
        Interval off = from_corners({bound_mul(lo_of(lanes), lo_of(stride)), bound_mul(lo_of(lanes), hi_of(stride)),
                                     bound_mul(hi_of(lanes), lo_of(stride)), bound_mul(hi_of(lanes), hi_of(stride))});
        return from_bounds(bound_add(lo_of(base), lo_of(off)), bound_add(hi_of(base), hi_of(off)));
      }
      case ExprKind::Broadcast: return bound(e.as<Broadcast>()->value);
      case ExprKind::Let: {
        auto* o = e.as<Let>();
        Interval v = bound(o->value);
        IntervalMap inner = *map_;
        inner[o->var.get()] = v;
        return ConstBounder(inner).bound(o->body);
      }
      default: return {};
    }
  }

  const IntervalMap* map_;
  std::unordered_map<const ExprNode*, Interval> memo_;
};

}  // namespace detail

// Conservative bounds of the integer expression `e` (scalar, or every lane of a vector) given
// the ranges of its variables. Non-integer expressions are unbounded; bools are within [0, 1].
inline Interval const_bound(const Expr& e, const IntervalMap& ranges = {}) {
  return detail::ConstBounder(ranges).bound(e);
}

// True only when `cond` (a bool expression) is true for every value of its variables within
// `ranges`. Integer comparisons of int32/int64 values are decided on the affine form of the
// difference of their sides, so common terms cancel: `i*4 + j < i*4 + 8` holds when j < 8.
inline bool can_prove(const Expr& cond, const IntervalMap& ranges = {}) {
  if (!cond.defined() || !cond.dtype().is_bool()) return false;
  if (auto* u = cond.as<UIntImm>()) return u->value != 0;
  if (auto* b = cond.as<Broadcast>()) return can_prove(b->value, ranges);
  if (auto* o = cond.as<And>()) return can_prove(o->a, ranges) && can_prove(o->b, ranges);
  if (auto* o = cond.as<Or>()) return can_prove(o->a, ranges) || can_prove(o->b, ranges);
  if (auto* o = cond.as<Not>()) {
    const Expr& x = o->a;
    if (auto* n = x.as<Not>()) return can_prove(n->a, ranges);
    if (auto* c = x.as<LT>()) return can_prove(GE::make(c->a, c->b), ranges);
    if (auto* c = x.as<LE>()) return can_prove(GT::make(c->a, c->b), ranges);
    if (auto* c = x.as<GT>()) return can_prove(LE::make(c->a, c->b), ranges);
    if (auto* c = x.as<GE>()) return can_prove(LT::make(c->a, c->b), ranges);
    if (auto* c = x.as<EQ>()) return can_prove(NE::make(c->a, c->b), ranges);
    if (auto* c = x.as<NE>()) return can_prove(EQ::make(c->a, c->b), ranges);
    if (auto* c = x.as<And>()) return can_prove(!c->a, ranges) || can_prove(!c->b, ranges);
    if (auto* c = x.as<Or>()) return can_prove(!c->a, ranges) && can_prove(!c->b, ranges);
    return const_bound(x, ranges).max == 0;
  }
  // A comparison: find the bounds of lhs - rhs (or of each side when the difference could wrap).
  const Expr *lhs = nullptr, *rhs = nullptr;
  enum { lt, le, gt, ge, eq, ne } op = lt;
  auto sides = [&](auto* node, auto kind) {
    if (!node) return false;
    lhs = &node->a, rhs = &node->b, op = kind;
    return true;
  };
  if (!sides(cond.as<LT>(), lt) && !sides(cond.as<LE>(), le) && !sides(cond.as<GT>(), gt) &&
      !sides(cond.as<GE>(), ge) && !sides(cond.as<EQ>(), eq) && !sides(cond.as<NE>(), ne))
    return const_bound(cond, ranges).min == 1;
  DataType t = lhs->dtype();
  if (!t.is_integer() && !t.is_bool()) return false;
  if (has_affine_form(t.element_of()) && !detail::wraps(t) && t.is_scalar()) {
    AffineForm d = to_affine(*lhs);
    d.add(to_affine(*rhs), -1);
    // Bound each term separately: a term's bound is sound whatever the others are.
    detail::Bound lo = detail::Bound::of(d.constant), hi = lo;
    for (auto& [term, c] : d.terms) {
      Interval ti = const_bound(term, ranges);
      detail::Bound k = detail::Bound::of(c);
      detail::Bound p = detail::bound_mul(detail::lo_of(ti), k), q = detail::bound_mul(detail::hi_of(ti), k);
      lo = detail::bound_add(lo, std::min(p, q));
      hi = detail::bound_add(hi, std::max(p, q));
    }
    Interval diff = detail::from_bounds(lo, hi);
    switch (op) {
      case lt: return diff.max && *diff.max < 0;
      case le: return diff.max && *diff.max <= 0;
      case gt: return diff.min && *diff.min > 0;
      case ge: return diff.min && *diff.min >= 0;
      case eq: return diff.is_point() && *diff.min == 0;
      case ne: return (diff.min && *diff.min > 0) || (diff.max && *diff.max < 0);
    }
  }
  Interval a = const_bound(*lhs, ranges), b = const_bound(*rhs, ranges);
  bool same = deep_equal(*lhs, *rhs);
  switch (op) {
    case lt: return a.max && b.min && *a.max < *b.min;
    case le: return same || (a.max && b.min && *a.max <= *b.min);
    case gt: return a.min && b.max && *a.min > *b.max;
    case ge: return same || (a.min && b.max && *a.min >= *b.max);
    case eq: return same || (a.is_point() && b.is_point() && *a.min == *b.min);
    case ne: return (a.max && b.min && *a.max < *b.min) || (a.min && b.max && *a.min > *b.max);
  }
  return false;
}

// Symbolic bounds [min, max] (inclusive) of an index expression; an undefined end is
// unbounded. Bound inference uses them to find the region of a producer that a consumer reads
// when the producer is computed inside the consumer's loops.
struct SymInterval {
  Expr min, max;
  static SymInterval point(Expr e) { return {e, e}; }
  bool is_bounded() const { return min.defined() && max.defined(); }
  bool is_point() const { return is_bounded() && deep_equal(min, max); }
};
using SymIntervalMap = std::unordered_map<const VarNode*, SymInterval>;

// Defined in simplify.hpp, which this header includes at its end.
Expr simplify(const Expr& e, const IntervalMap& ranges);

namespace detail {

class SymBounder {
 public:
  SymBounder(const SymIntervalMap& vars, const IntervalMap& ranges) : vars_(vars), ranges_(ranges) {}

  SymInterval eval(const Expr& e) {
    if (!e.defined()) return {};
    bool relaxed = uses_var_if(e, [&](const VarNode* v) { return vars_.count(v) != 0; });
    if (!relaxed) return SymInterval::point(e);
    switch (e.kind()) {
      case ExprKind::Var: return vars_.at(e.as<VarNode>());
      case ExprKind::Add: {
        SymInterval a = eval(e.as<Add>()->a), b = eval(e.as<Add>()->b);
        return {both(a.min, b.min, [](Expr x, Expr y) { return x + y; }),
                both(a.max, b.max, [](Expr x, Expr y) { return x + y; })};
      }
      case ExprKind::Sub: {
        SymInterval a = eval(e.as<Sub>()->a), b = eval(e.as<Sub>()->b);
        return {both(a.min, b.max, [](Expr x, Expr y) { return x - y; }),
                both(a.max, b.min, [](Expr x, Expr y) { return x - y; })};
      }
      case ExprKind::Mul: {
        auto* op = e.as<Mul>();
        SymInterval a = eval(op->a), b = eval(op->b);
        if (b.is_point()) return scale(a, b.min, [](Expr x, Expr y) { return x * y; });
        if (a.is_point()) return scale(b, a.min, [](Expr x, Expr y) { return y * x; });
        if (non_negative(a.min) && non_negative(b.min))
          return {a.min * b.min, both(a.max, b.max, [](Expr x, Expr y) { return x * y; })};
        return {};
      }
      case ExprKind::Div: {
        // Truncating division by a positive divisor is monotone in the dividend.
        SymInterval a = eval(e.as<Div>()->a), b = eval(e.as<Div>()->b);
        if (!b.is_point() || !positive(b.min)) return {};
        return {a.min.defined() ? a.min / b.min : Expr(), a.max.defined() ? a.max / b.min : Expr()};
      }
      case ExprKind::Mod: {
        SymInterval a = eval(e.as<Mod>()->a), b = eval(e.as<Mod>()->b);
        if (!b.is_point() || !positive(b.min) || !non_negative(a.min)) return {};
        Expr top = b.min - 1;
        if (a.max.defined() && can_prove(a.max < b.min, ranges_)) return a;  // no wrap-around
        return {make_zero(e.dtype()), top};
      }
      case ExprKind::Min: {
        SymInterval a = eval(e.as<Min>()->a), b = eval(e.as<Min>()->b);
        return {both(a.min, b.min, [](Expr x, Expr y) { return min(x, y); }),
                either(a.max, b.max, [](Expr x, Expr y) { return min(x, y); })};
      }
      case ExprKind::Max: {
        SymInterval a = eval(e.as<Max>()->a), b = eval(e.as<Max>()->b);
        return {either(a.min, b.min, [](Expr x, Expr y) { return max(x, y); }),
                both(a.max, b.max, [](Expr x, Expr y) { return max(x, y); })};
      }
      case ExprKind::Select: {
        SymInterval t = eval(e.as<Select>()->true_value), f = eval(e.as<Select>()->false_value);
        return {both(t.min, f.min, [](Expr x, Expr y) { return min(x, y); }),
                both(t.max, f.max, [](Expr x, Expr y) { return max(x, y); })};
      }
      case ExprKind::Cast: {
        // A widening integer conversion keeps the order of values.
        auto* op = e.as<Cast>();
        DataType from = op->value.dtype(), to = e.dtype();
        bool widening = from.is_int() && to.is_int() && to.bits >= from.bits;
        if (!widening) return {};
        SymInterval v = eval(op->value);
        return {v.min.defined() ? cast(to, v.min) : Expr(), v.max.defined() ? cast(to, v.max) : Expr()};
      }
      case ExprKind::BitCast: return {};
      case ExprKind::Broadcast: return eval(e.as<Broadcast>()->value);
      case ExprKind::Ramp: {
        auto* op = e.as<Ramp>();
        SymInterval base = eval(op->base), stride = eval(op->stride);
        if (!stride.is_point()) return {};
        Expr last = stride.min * int64_t(op->lanes - 1);
        if (non_negative(stride.min)) return {base.min, base.max.defined() ? base.max + last : Expr()};
        if (non_positive(stride.min)) return {base.min.defined() ? base.min + last : Expr(), base.max};
        return {};
      }
      case ExprKind::Let: {
        auto* op = e.as<Let>();
        SymIntervalMap inner = vars_;
        inner[op->var.get()] = eval(op->value);
        return SymBounder(inner, ranges_).eval(op->body);
      }
      default: return {};
    }
  }

 private:
  template <class F>
  static Expr both(const Expr& x, const Expr& y, F f) {
    return x.defined() && y.defined() ? f(x, y) : Expr();
  }
  // For the end where a missing bound does not matter (the upper end of a min).
  template <class F>
  static Expr either(const Expr& x, const Expr& y, F f) {
    if (x.defined() && y.defined()) return f(x, y);
    return x.defined() ? x : y;
  }
  template <class F>
  SymInterval scale(const SymInterval& a, const Expr& k, F f) {
    auto apply = [&](const Expr& x) { return x.defined() ? f(x, k) : Expr(); };
    if (non_negative(k)) return {apply(a.min), apply(a.max)};
    if (non_positive(k)) return {apply(a.max), apply(a.min)};
    return {};
  }
  bool non_negative(const Expr& x) { return x.defined() && can_prove(x >= make_zero(x.dtype()), ranges_); }
  bool non_positive(const Expr& x) { return x.defined() && can_prove(x <= make_zero(x.dtype()), ranges_); }
  bool positive(const Expr& x) { return x.defined() && can_prove(x > make_zero(x.dtype()), ranges_); }

  const SymIntervalMap& vars_;
  const IntervalMap& ranges_;
};

}  // namespace detail

// Symbolic bounds of the integer expression `e` when each variable of `vars` ranges over its
// SymInterval; variables not in `vars` are fixed (the result may use them). `ranges` holds
// known constant ranges of any variable, used to decide signs and to simplify the result.
// `i.outer*16 + i.inner` with i.inner in [0, 15] is [i.outer*16, i.outer*16 + 15].
// An end that cannot be bounded is left undefined.
inline SymInterval eval_sym_interval(const Expr& e, const SymIntervalMap& vars, const IntervalMap& ranges = {}) {
  SymInterval r = detail::SymBounder(vars, ranges).eval(e);
  if (r.min.defined()) r.min = simplify(r.min, ranges);
  if (r.max.defined()) r.max = simplify(r.max, ranges);
  return r;
}

}  // namespace ir
NNVM_END_NAMESPACE

// The simplifier builds on the analyses above; eval_sym_interval needs its definition.
#include "nnvm/ir/simplify.hpp"
