// Affine forms of scalar signed-integer expressions: constant + sum(coeff * term), where a term
// is anything that is not a sum, a difference, a product with a constant or a constant (a
// variable, a product of two non-constants, a division, a load, ...). The simplifier and the
// interval analysis use them to cancel and collect terms: `(i*4 + j) - (j + i*4)` is 0.
//
// Coefficient arithmetic wraps at the dtype's width. That is exact for narrow types (whose
// arithmetic wraps) and for int32/int64 differs only where the original overflowed (undefined).
#pragma once

#include <algorithm>

#include "nnvm/ir/compare.hpp"
#include "nnvm/ir/op.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

struct AffineForm {
  DataType dtype = dtype::index;
  std::vector<std::pair<Expr, int64_t>> terms;  // distinct terms (deep_equal), nonzero coefficients
  int64_t constant = 0;

  // Sign-extends `v` from the dtype's width, the value an IntImm of that dtype would hold.
  int64_t wrap(uint64_t v) const {
    int bits = dtype.bits;
    if (bits >= 64) return int64_t(v);
    uint64_t m = (uint64_t(1) << bits) - 1, u = v & m;
    return (u >> (bits - 1)) ? int64_t(u | ~m) : int64_t(u);
  }
  bool is_const() const { return terms.empty(); }

  void add_term(const Expr& t, int64_t coeff) {
    for (size_t i = 0; i < terms.size(); ++i) {
      if (deep_equal(terms[i].first, t)) {
        terms[i].second = wrap(uint64_t(terms[i].second) + uint64_t(coeff));
        if (terms[i].second == 0) terms.erase(terms.begin() + long(i));
        return;
      }
    }
    if (wrap(uint64_t(coeff)) != 0) terms.emplace_back(t, wrap(uint64_t(coeff)));
  }
  void add(const AffineForm& o, int64_t scale) {
    for (auto& [t, c] : o.terms) add_term(t, wrap(uint64_t(c) * uint64_t(scale)));
    constant = wrap(uint64_t(constant) + uint64_t(o.constant) * uint64_t(scale));
  }
  void scale(int64_t s) {
    AffineForm out{dtype, {}, 0};
    out.add(*this, s);
    *this = std::move(out);
  }
};

// True for the dtypes that have affine forms: scalar signed integers.
inline bool has_affine_form(DataType t) { return t.is_int() && t.is_scalar(); }

// Decomposes `e` (a scalar signed integer) without looking inside terms.
inline AffineForm to_affine(const Expr& e) {
  AffineForm f{e.dtype(), {}, 0};
  if (auto* c = e.as<IntImm>()) {
    f.constant = c->value;
    return f;
  }
  if (auto* add = e.as<Add>()) {
    f = to_affine(add->a);
    f.add(to_affine(add->b), 1);
    return f;
  }
  if (auto* sub = e.as<Sub>()) {
    f = to_affine(sub->a);
    f.add(to_affine(sub->b), -1);
    return f;
  }
  if (auto* mul = e.as<Mul>(); mul && (mul->a.as<IntImm>() || mul->b.as<IntImm>())) {
    bool left = mul->a.as<IntImm>() != nullptr;
    f = to_affine(left ? mul->b : mul->a);
    f.scale((left ? mul->a : mul->b).as<IntImm>()->value);
    return f;
  }
  f.add_term(e, 1);
  return f;
}

// Rebuilds an expression from `f`: terms by decreasing |coefficient|, then non-variables before
// variables, then `order`; positive terms are added first, negative ones subtracted after, the
// constant comes last. `(i.outer*16 + i.inner)*64 + j` becomes `i.outer*1024 + i.inner*64 + j`.
inline Expr from_affine(const AffineForm& f, ExprOrder& order) {
  DataType t = f.dtype;
  auto magnitude = [](int64_t c) { return c < 0 ? uint64_t(0) - uint64_t(c) : uint64_t(c); };
  std::vector<std::pair<Expr, int64_t>> terms = f.terms;
  std::stable_sort(terms.begin(), terms.end(), [&](const auto& x, const auto& y) {
    if (magnitude(x.second) != magnitude(y.second)) return magnitude(x.second) > magnitude(y.second);
    bool xv = x.first.kind() == ExprKind::Var, yv = y.first.kind() == ExprKind::Var;
    if (xv != yv) return yv;
    if (int c = order.compare(x.first, y.first)) return c < 0;
    return x.second > y.second;
  });
  // The most negative value has no positive counterpart: it is added, never subtracted.
  auto negative = [&](int64_t c) { return c < 0 && f.wrap(uint64_t(0) - uint64_t(c)) > 0; };
  auto scaled = [&](const Expr& term, int64_t c) {
    return c == 1 ? term : Mul::make(term, IntImm::make(t, c));
  };
  Expr acc;
  bool const_done = false;
  for (auto& [term, c] : terms)
    if (!negative(c)) acc = acc.defined() ? Add::make(acc, scaled(term, c)) : scaled(term, c);
  for (auto& [term, c] : terms) {
    if (!negative(c)) continue;
    if (!acc.defined()) {
      const_done = f.constant > 0;
      acc = const_done ? IntImm::make(t, f.constant) : make_zero(t);
    }
    acc = Sub::make(acc, scaled(term, -c));
  }
  if (!acc.defined()) return IntImm::make(t, f.constant);
  if (f.constant == 0 || const_done) return acc;
  if (negative(f.constant)) return Sub::make(acc, IntImm::make(t, -f.constant));
  return Add::make(acc, IntImm::make(t, f.constant));
}

}  // namespace ir
NNVM_END_NAMESPACE
