// The simplifier: constant folding, canonical affine index arithmetic, and removal of what
// interval analysis proves redundant (min/max, selects, ifs, div/mod by constants, dead loops).
//
// Requires: well-typed IR. Ensures: the value of every expression is unchanged for every input
// where the original is defined (int32/int64 overflow and division by zero are undefined, as in
// C), every expression keeps its dtype, and the result is deterministic. Each node is rewritten
// once after its operands, with no search over rewrites, so the cost stays near linear in the
// size of the IR (quadratic at worst in the length of one sum).
#pragma once

#include <cmath>

#include "nnvm/ir/compare.hpp"
#include "nnvm/ir/const_fold.hpp"
#include "nnvm/ir/interval.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

namespace detail {

// A statement that does nothing: an empty sequence.
inline Stmt no_op() { return make_stmt<Seq>(std::vector<Stmt>{}); }
inline bool is_no_op(const Stmt& s) {
  auto* q = s.as<Seq>();
  return !s.defined() || (q && q->seq.empty());
}

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline Expr make_binary(ExprKind k, Expr a, Expr b) {
  switch (k) {
#define NNVM_MAKE_CASE(N) case ExprKind::N: return N::make(std::move(a), std::move(b));
    NNVM_FOR_EACH_BINARY(NNVM_MAKE_CASE)
#undef NNVM_MAKE_CASE
    default: break;
  }
  NNVM_INTERNAL_CHECK(false, "make_binary on a non-binary kind");
  return Expr();
}

inline bool is_comparison(ExprKind k) {
  return k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE ||
         k == ExprKind::GT || k == ExprKind::GE;
}
// The comparison that holds exactly when `k` does not (for integers; EQ/NE also for floats).
inline ExprKind negated(ExprKind k) {
  switch (k) {
    case ExprKind::EQ: return ExprKind::NE;
    case ExprKind::NE: return ExprKind::EQ;
    case ExprKind::LT: return ExprKind::GE;
    case ExprKind::LE: return ExprKind::GT;
    case ExprKind::GT: return ExprKind::LE;
    default: return ExprKind::LT;  // GE
  }
}
template <class N>
bool binary_operands(const Expr& e, ExprKind k, Expr& a, Expr& b) {
  if (e.kind() != k) return false;
  a = static_cast<const N*>(e.get())->a;
  b = static_cast<const N*>(e.get())->b;
  return true;
}
inline bool comparison_operands(const Expr& e, Expr& a, Expr& b) {
  return binary_operands<EQ>(e, ExprKind::EQ, a, b) || binary_operands<NE>(e, ExprKind::NE, a, b) ||
         binary_operands<LT>(e, ExprKind::LT, a, b) || binary_operands<LE>(e, ExprKind::LE, a, b) ||
         binary_operands<GT>(e, ExprKind::GT, a, b) || binary_operands<GE>(e, ExprKind::GE, a, b);
}

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(IntervalMap ranges) : ranges_(std::move(ranges)) {}
  using IRMutator::mutate;

  // Shared subtrees (a DAG, as inlining makes) are simplified once per set of known ranges,
  // which keeps the cost linear in the number of distinct nodes rather than in the tree size.
  // The memo holds the input node too, so its address cannot be reused while it is a key.
  Expr mutate(const Expr& e) override {
    if (!e.defined()) return e;
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second.second;
    Expr r = IRMutator::mutate(e);
    memo_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  // Applies every rule to `a op b`, whose operands are already simplified. `orig` (optional) is
  // returned when nothing changes, so unchanged trees stay shared.
  Expr binary(ExprKind k, const Expr& a, const Expr& b, const Expr& orig = Expr()) {
    Expr oa, ob;
    bool same_operands = orig.defined() && operands(orig, oa, ob) && oa.same_as(a) && ob.same_as(b);
    Expr r = rules(k, a, b);
    if (!r.defined()) return same_operands ? orig : make_binary(k, a, b);
    // Canonical input comes back rebuilt but equal: keep the original node.
    return same_operands && deep_equal(r, orig) ? orig : r;
  }

 protected:
  using IRMutator::visit;

  // ---- expressions ---------------------------------------------------------------------

  Expr visit(const VarNode* op, const Expr& e) override {
    auto it = ranges_.find(op);
    if (it != ranges_.end() && it->second.is_point() && op->dtype.is_int())
      return IntImm::make(op->dtype, *it->second.min);
    return e;
  }
#define NNVM_SIMPLIFY_BINARY(N) \
  Expr visit(const N* op, const Expr& e) override { return binary(ExprKind::N, mutate(op->a), mutate(op->b), e); }
  NNVM_FOR_EACH_BINARY(NNVM_SIMPLIFY_BINARY)
#undef NNVM_SIMPLIFY_BINARY

  Expr visit(const Not* op, const Expr& e) override {
    Expr a = mutate(op->a);
    return logical_not(a, a.same_as(op->a) ? e : Expr());
  }

  Expr visit(const Select* op, const Expr& e) override {
    Expr c = mutate(op->condition);
    if (auto* u = c.as<UIntImm>()) return mutate(u->value ? op->true_value : op->false_value);
    if (auto* bc = c.as<Broadcast>(); bc && bc->value.as<UIntImm>())
      return mutate(bc->value.as<UIntImm>()->value ? op->true_value : op->false_value);
    if (c.dtype().is_scalar()) {
      if (can_prove(c, ranges_)) return mutate(op->true_value);
      if (can_prove(!c, ranges_)) return mutate(op->false_value);
    }
    Expr t, f = mutate(op->false_value);
    {
      // The chosen branch may assume the condition (a guarded load may use the bounds it gives).
      Scope scope(*this);
      if (c.dtype().is_scalar()) refine(c);
      t = mutate(op->true_value);
    }
    if (deep_equal(t, f)) return t;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
    return Select::make(c, t, f);
  }

  Expr visit(const Cast* op, const Expr& e) override {
    Expr v = mutate(op->value);
    DataType t = op->dtype;
    if (is_scalar_const(v)) {
      if (Expr r = fold_cast(t, v); r.defined()) return r;
    }
    if (auto* b = v.as<Broadcast>(); b && is_scalar_const(b->value)) {
      if (Expr r = fold_cast(t.element_of(), b->value); r.defined()) return Broadcast::make(r, b->lanes);
    }
    // int64(int32(x)) for an int64 x that fits int32 is x.
    if (auto* inner = v.as<Cast>(); inner && inner->value.dtype() == t && t.is_integer() &&
                                    v.dtype().is_integer() &&
                                    const_bound(inner->value, ranges_).within(dtype_range(v.dtype())))
      return inner->value;
    return v.same_as(op->value) ? e : Cast::make(t, v);
  }

  Expr visit(const Ramp* op, const Expr& e) override {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return is_const_int(s, 0) ? Broadcast::make(b, op->lanes) : e;
    return ramp(b, s, op->lanes);
  }

  Expr visit(const Let* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (is_scalar_const(v) || v.as<VarNode>()) return mutate(substitute(op->body, op->var, v));
    Expr body;
    {
      Scope scope(*this);
      bind(op->var, const_bound(v, ranges_));
      body = mutate(op->body);
    }
    if (!uses_var(body, op->var)) return body;
    if (v.same_as(op->value) && body.same_as(op->body)) return e;
    return Let::make(op->var, v, body);
  }

  Expr visit(const Reduce* op, const Expr& e) override {
    Scope scope(*this);
    for (auto& ax : op->axes) bind_loop(ax.var(), ax->dom.min, ax->dom.extent);
    return IRMutator::visit(op, e);
  }

  // ---- statements ----------------------------------------------------------------------

  Stmt visit(const For* op, const Stmt& s) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    auto* n = as_const_int(ext);
    if (n && *n <= 0) return no_op();
    if (n && *n == 1 && op->for_kind != ForKind::thread_binding)
      return mutate(substitute(op->body, op->loop_var, mn));
    Stmt body;
    {
      Scope scope(*this);
      bind_loop(op->loop_var, mn, ext);
      body = mutate(op->body);
    }
    if (is_no_op(body)) return no_op();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return s;
    return For::make(op->loop_var, mn, ext, op->for_kind, body, op->thread_tag);
  }

  Stmt visit(const IfThenElse* op, const Stmt& s) override {
    Expr c = mutate(op->condition);
    if (auto* u = c.as<UIntImm>()) return u->value ? mutate(op->then_case) : mutate_or_no_op(op->else_case);
    Stmt then_case, else_case = mutate_or_no_op(op->else_case);
    {
      Scope scope(*this);
      refine(c);
      then_case = mutate(op->then_case);
    }
    if (is_no_op(then_case) && is_no_op(else_case)) return no_op();
    if (is_no_op(then_case)) return IfThenElse::make(logical_not(c), else_case);
    if (is_no_op(else_case)) else_case = Stmt();
    if (c.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return s;
    return IfThenElse::make(c, then_case, else_case);
  }

  Stmt visit(const Seq* op, const Stmt& s) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (auto& x : op->seq) {
      Stmt y = mutate(x);
      changed |= !y.same_as(x);
      if (is_no_op(y)) {
        changed = true;
        continue;
      }
      changed |= y.as<Seq>() != nullptr;
      out.push_back(y);
    }
    if (!changed) return s;
    return out.empty() ? no_op() : Seq::make(out);
  }

  Stmt visit(const LetStmt* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    if (is_scalar_const(v) || v.as<VarNode>()) return mutate(substitute(op->body, op->var, v));
    Stmt body;
    {
      Scope scope(*this);
      bind(op->var, const_bound(v, ranges_));
      body = mutate(op->body);
    }
    if (is_no_op(body)) return no_op();
    if (!uses_var(body, op->var)) return body;
    if (v.same_as(op->value) && body.same_as(op->body)) return s;
    return LetStmt::make(op->var, v, body);
  }

  Stmt visit(const Evaluate* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    if (is_const(v)) return no_op();
    return v.same_as(op->value) ? s : Evaluate::make(v);
  }

  Stmt visit(const Allocate* op, const Stmt& s) override {
    Stmt body = mutate(op->body);
    if (is_no_op(body)) return no_op();
    return body.same_as(op->body) ? s : Allocate::make(op->buffer, body);
  }

 private:
  // Saves the ranges on entry and restores them on exit, so facts stay within their scope.
  // Results memoized under other ranges do not carry over in either direction.
  struct Scope {
    Simplifier& self;
    IntervalMap saved;
    explicit Scope(Simplifier& s) : self(s), saved(s.ranges_) { self.memo_.clear(); }
    ~Scope() {
      self.ranges_ = std::move(saved);
      self.memo_.clear();
    }
  };

  Stmt mutate_or_no_op(const Stmt& s) { return s.defined() ? mutate(s) : no_op(); }

  void bind(const Var& v, const Interval& i) { ranges_[v.get()] = i; }
  // A loop variable lies in [min, min + extent - 1] (as far as constants tell).
  void bind_loop(const Var& v, const Expr& mn, const Expr& ext) {
    Interval m = const_bound(mn, ranges_), x = const_bound(ext, ranges_);
    Bound hi = bound_add(bound_add(hi_of(m), hi_of(x)), Bound::of(-1));
    bind(v, from_bounds(lo_of(m), hi));
  }
  // Narrows variable ranges with what `c` (a scalar condition known true) says about them.
  void refine(const Expr& c) {
    if (auto* a = c.as<And>()) {
      refine(a->a);
      refine(a->b);
      return;
    }
    Expr l, r;
    if (!comparison_operands(c, l, r) || !l.dtype().is_int() || !l.dtype().is_scalar()) return;
    ExprKind k = c.kind();
    if (!l.as<VarNode>() && r.as<VarNode>()) {  // put the variable on the left
      std::swap(l, r);
      if (k == ExprKind::LT) k = ExprKind::GT;
      else if (k == ExprKind::LE) k = ExprKind::GE;
      else if (k == ExprKind::GT) k = ExprKind::LT;
      else if (k == ExprKind::GE) k = ExprKind::LE;
    }
    auto* v = l.as<VarNode>();
    if (!v || k == ExprKind::NE) return;
    Interval other = const_bound(r, ranges_);
    Interval& cur = ranges_[v];
    auto lower = [&](std::optional<int64_t> m, int64_t shift) {
      if (m && !(shift > 0 && *m == INT64_MAX) && (!cur.min || *m + shift > *cur.min)) cur.min = *m + shift;
    };
    auto upper = [&](std::optional<int64_t> m, int64_t shift) {
      if (m && !(shift < 0 && *m == INT64_MIN) && (!cur.max || *m + shift < *cur.max)) cur.max = *m + shift;
    };
    if (k == ExprKind::LT) upper(other.max, -1);
    if (k == ExprKind::LE || k == ExprKind::EQ) upper(other.max, 0);
    if (k == ExprKind::GT) lower(other.min, 1);
    if (k == ExprKind::GE || k == ExprKind::EQ) lower(other.min, 0);
  }

  static bool operands(const Expr& e, Expr& a, Expr& b) {
    switch (e.kind()) {
#define NNVM_OPERANDS(N) case ExprKind::N: return binary_operands<N>(e, ExprKind::N, a, b);
      NNVM_FOR_EACH_BINARY(NNVM_OPERANDS)
#undef NNVM_OPERANDS
      default: return false;
    }
  }

  Expr ramp(const Expr& base, const Expr& stride, int lanes) {
    if (is_const_int(stride, 0)) return Broadcast::make(base, lanes);
    return Ramp::make(base, stride, lanes);
  }

  Expr logical_not(const Expr& a, const Expr& orig = Expr()) {
    if (auto* u = a.as<UIntImm>()) return UIntImm::make(a.dtype(), !u->value);
    if (auto* n = a.as<Not>()) return n->a;
    Expr l, r;
    if (comparison_operands(a, l, r) &&
        (l.dtype().is_integer() || a.kind() == ExprKind::EQ || a.kind() == ExprKind::NE))
      return binary(negated(a.kind()), l, r);
    return orig.defined() ? orig : Not::make(a);
  }

  // Canonical order of commutative operands: constants last, the rest by ExprOrder.
  void order_commutative(Expr& a, Expr& b) {
    bool ca = is_const(a), cb = is_const(b);
    if ((ca && !cb) || (ca == cb && order_.compare(b, a) < 0)) std::swap(a, b);
  }

  Expr scalar_rules(ExprKind k, Expr a, Expr b) {
    DataType t = a.dtype();
    bool no_wrap = t.is_int() && !wraps(t);
    if (has_affine_form(t) && (k == ExprKind::Add || k == ExprKind::Sub || k == ExprKind::Mul)) {
      if (k == ExprKind::Mul && !a.as<IntImm>() && !b.as<IntImm>()) return product(a, b);
      AffineForm f;
      if (k == ExprKind::Mul) {
        bool left = a.as<IntImm>() != nullptr;
        f = to_affine(left ? b : a);
        f.scale((left ? a : b).as<IntImm>()->value);
      } else {
        f = to_affine(a);
        f.add(to_affine(b), k == ExprKind::Add ? 1 : -1);
      }
      return from_affine(f, order_);
    }
    switch (k) {
      case ExprKind::Add:
        if (t.is_uint() && is_const_int(b, 0)) return a;
        if (t.is_uint() && is_const_int(a, 0)) return b;
        return Expr();
      case ExprKind::Sub:
        // x - 0.0 is x even for -0.0 and NaN; x + 0.0 is not (-0.0 + 0.0 is +0.0).
        if ((t.is_uint() && is_const_int(b, 0)) || (t.is_float() && is_float_const(b, 0.0, false))) return a;
        if (t.is_uint() && deep_equal(a, b)) return make_zero(t);
        return Expr();
      case ExprKind::Mul:
        if (t.is_uint() || t.is_float()) {
          if (t.is_uint() ? is_const_int(b, 1) : is_float_const(b, 1.0, true)) return a;
          if (t.is_uint() ? is_const_int(a, 1) : is_float_const(a, 1.0, true)) return b;
          if (t.is_uint() && (is_const_int(a, 0) || is_const_int(b, 0))) return make_zero(t);
        }
        return Expr();
      case ExprKind::Div:
        if (t.is_float() ? is_float_const(b, 1.0, true) : is_one(b)) return a;
        if (no_wrap) return div_mod(true, a, b);
        return Expr();
      case ExprKind::Mod:
        if (t.is_integer() && is_one(b)) return make_zero(t);
        if (no_wrap) return div_mod(false, a, b);
        return Expr();
      case ExprKind::Min:
      case ExprKind::Max: {
        if (deep_equal(a, b)) return a;
        if (!t.is_integer()) return Expr();
        bool is_min = k == ExprKind::Min;
        if (can_prove(LE::make(a, b), ranges_)) return is_min ? a : b;
        if (can_prove(LE::make(b, a), ranges_)) return is_min ? b : a;
        order_commutative(a, b);
        return is_min ? Min::make(a, b) : Max::make(a, b);
      }
      case ExprKind::And:
        if (auto* u = a.as<UIntImm>()) return u->value ? b : a;
        if (auto* u = b.as<UIntImm>()) return u->value ? a : b;
        if (deep_equal(a, b)) return a;
        return Expr();
      case ExprKind::Or:
        if (auto* u = a.as<UIntImm>()) return u->value ? a : b;
        if (auto* u = b.as<UIntImm>()) return u->value ? b : a;
        if (deep_equal(a, b)) return a;
        return Expr();
      default:
        if (is_comparison(k) && (t.is_integer() || t.is_bool())) {
          Expr cond = make_binary(k, a, b);
          if (can_prove(cond, ranges_)) return const_true();
          if (can_prove(make_binary(negated(k), a, b), ranges_)) return const_false();
        }
        return Expr();
    }
  }

  Expr rules(ExprKind k, const Expr& a, const Expr& b) {
    if (is_scalar_const(a) && is_scalar_const(b)) {
      if (Expr r = fold_binary(k, a, b); r.defined()) return r;
    }
    return a.dtype().is_vector() ? vector_rules(k, a, b) : scalar_rules(k, a, b);
  }

  // A product of two non-constants. A sum times a single term distributes, so symbolic strides
  // cancel like constant ones: (i.outer*16 + i.inner)*n is i.outer*n*16 + i.inner*n. A sum
  // times a sum stays one term: expanding it could grow without bound.
  Expr product(Expr a, Expr b) {
    DataType t = a.dtype();
    AffineForm fa = to_affine(a), fb = to_affine(b);
    auto monomial = [](const AffineForm& f) { return f.terms.size() == 1 && f.constant == 0; };
    if (!monomial(fb) && monomial(fa)) std::swap(fa, fb);
    if (!monomial(fb)) {
      order_commutative(a, b);
      return Mul::make(a, b);
    }
    auto [tb, cb] = fb.terms[0];
    AffineForm out{t, {}, 0};
    for (auto& [ta, ca] : fa.terms) {
      Expr x = ta, y = tb;
      order_commutative(x, y);
      out.add_term(Mul::make(x, y), out.wrap(uint64_t(ca) * uint64_t(cb)));
    }
    out.add_term(tb, out.wrap(uint64_t(fa.constant) * uint64_t(cb)));
    return from_affine(out, order_);
  }

  static bool is_one(const Expr& e) { return is_const_int(e, 1); }
  static bool is_float_const(const Expr& e, double v, bool sign_matters) {
    auto* f = e.as<FloatImm>();
    return f && f->value == v && (!sign_matters || std::signbit(f->value) == std::signbit(v));
  }

  // Integer division and remainder by a positive constant c, on int32/int64. Writes the dividend
  // as c*Q + R (R: the terms whose coefficients c does not divide, plus the constant mod c):
  // when the dividend and R are non-negative, x / c = Q + R / c and x % c = R % c, and R / c
  // vanishes when R < c. An exact dividend (R = 0) needs no sign condition.
  Expr div_mod(bool is_div, const Expr& a, const Expr& b) {
    DataType t = a.dtype();
    Interval ai = const_bound(a, ranges_);
    if (auto* c = b.as<IntImm>(); c && c->value > 0) {
      int64_t cv = c->value;
      // Nested division by positive constants: (x / c1) / c2 == x / (c1*c2).
      if (auto* inner = a.as<Div>(); is_div && inner) {
        auto* c1 = inner->b.as<IntImm>();
        int64_t prod;
        if (c1 && c1->value > 0 && checked_mul(c1->value, cv, prod) && Interval::point(prod).within(dtype_range(t)))
          return binary(ExprKind::Div, inner->a, IntImm::make(t, prod));
      }
      // (x % c1) % c2 == x % c2 when c2 divides c1.
      if (auto* inner = a.as<Mod>(); !is_div && inner) {
        auto* c1 = inner->b.as<IntImm>();
        if (c1 && c1->value > 0 && c1->value % cv == 0) return binary(ExprKind::Mod, inner->a, b);
      }
      AffineForm f = to_affine(a), q{t, {}, 0}, r{t, {}, 0};
      for (auto& [term, coeff] : f.terms) {
        if (coeff % cv == 0) q.add_term(term, coeff / cv);
        else r.add_term(term, coeff);
      }
      q.constant = floor_div(f.constant, cv);
      r.constant = f.constant - q.constant * cv;
      if (r.is_const() && r.constant == 0) return is_div ? from_affine(q, order_) : make_zero(t);
      // |x| < c: the quotient is 0 and the remainder x.
      if (ai.within(Interval::range(1 - cv, cv - 1))) return is_div ? make_zero(t) : a;
      if (!(ai.min && *ai.min >= 0)) return Expr();
      Expr rest = from_affine(r, order_);
      Interval ri = const_bound(rest, ranges_);
      if (!(ri.min && *ri.min >= 0)) return Expr();
      bool q_zero = q.is_const() && q.constant == 0;
      if (ri.max && *ri.max < cv) return is_div ? from_affine(q, order_) : rest;
      if (q_zero) return Expr();  // nothing to take out: keep x / c as it is
      if (!is_div) return Mod::make(rest, b);
      q.add_term(Div::make(rest, b), 1);
      return from_affine(q, order_);
    }
    // A non-negative dividend below a positive divisor.
    Interval bi = const_bound(b, ranges_);
    if (ai.min && *ai.min >= 0 && ai.max && bi.min && *bi.min > *ai.max) return is_div ? make_zero(t) : a;
    return Expr();
  }

  Expr vector_rules(ExprKind k, const Expr& a, const Expr& b) {
    DataType t = a.dtype();
    int lanes = t.lanes;
    auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(binary(k, ba->value, bb->value), lanes);
    if (!t.is_int()) return Expr();
    auto *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
    auto add = [&](const Expr& x, const Expr& y) { return binary(ExprKind::Add, x, y); };
    auto sub = [&](const Expr& x, const Expr& y) { return binary(ExprKind::Sub, x, y); };
    auto mul = [&](const Expr& x, const Expr& y) { return binary(ExprKind::Mul, x, y); };
    Expr zero = make_zero(t.element_of());
    switch (k) {
      case ExprKind::Add:
        if (ra && rb) return ramp(add(ra->base, rb->base), add(ra->stride, rb->stride), lanes);
        if (ra && bb) return ramp(add(ra->base, bb->value), ra->stride, lanes);
        if (ba && rb) return ramp(add(ba->value, rb->base), rb->stride, lanes);
        return Expr();
      case ExprKind::Sub:
        if (ra && rb) return ramp(sub(ra->base, rb->base), sub(ra->stride, rb->stride), lanes);
        if (ra && bb) return ramp(sub(ra->base, bb->value), ra->stride, lanes);
        if (ba && rb) return ramp(sub(ba->value, rb->base), sub(zero, rb->stride), lanes);
        return Expr();
      case ExprKind::Mul:
        if (ra && bb) return ramp(mul(ra->base, bb->value), mul(ra->stride, bb->value), lanes);
        if (ba && rb) return ramp(mul(ba->value, rb->base), mul(ba->value, rb->stride), lanes);
        return Expr();
      case ExprKind::Div:
      case ExprKind::Mod: {
        // Every lane of ramp(base, s, n) / c has one quotient when the first and the last do
        // (the lanes increase); then lane k % c is base % c + k*s.
        if (!ra || !bb || wraps(t)) return Expr();
        auto* c = bb->value.as<IntImm>();
        auto* s = ra->stride.as<IntImm>();
        if (!c || c->value <= 0 || !s || s->value < 0) return Expr();
        Expr first = binary(ExprKind::Div, ra->base, bb->value);
        Expr last_lane = add(ra->base, IntImm::make(t.element_of(), s->value * (lanes - 1)));
        if (!deep_equal(first, binary(ExprKind::Div, last_lane, bb->value))) return Expr();
        if (k == ExprKind::Div) return Broadcast::make(first, lanes);
        return ramp(binary(ExprKind::Mod, ra->base, bb->value), ra->stride, lanes);
      }
      default: return Expr();
    }
  }

  IntervalMap ranges_;
  ExprOrder order_;
  std::unordered_map<const ExprNode*, std::pair<Expr, Expr>> memo_;
};

}  // namespace detail

// Simplifies `e` given known ranges of its variables (see the header comment for the rules).
inline Expr simplify(const Expr& e, const IntervalMap& ranges) {
  return detail::Simplifier(ranges).mutate(e);
}
inline Expr simplify(const Expr& e) { return simplify(e, IntervalMap{}); }

// The value of `e` once simplified, when that is an integer constant. Use it instead of
// as_const_int(simplify(e)), whose pointer dangles as soon as the simplified expression (a
// temporary, often a new node) is gone.
inline std::optional<int64_t> simplified_const_int(const Expr& e) {
  Expr s = simplify(e);
  if (const int64_t* c = as_const_int(s)) return *c;
  return std::nullopt;
}

// True when two extents are equal for every binding of their symbolic sizes that nnvm can see:
// equal constants or structurally equal expressions. Different size variables are not equal:
// the graph layer gives one dimension one variable.
inline bool same_extent(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  Expr sa = simplify(a), sb = simplify(b);
  const int64_t *ca = as_const_int(sa), *cb = as_const_int(sb);
  if (ca && cb) return *ca == *cb;
  return deep_equal(sa, sb);
}

// Simplifies every expression of `s` with the ranges of the loops around it, and removes what
// is dead: loops of extent 0 (extent-1 loops other than thread bindings become a substitution),
// ifs with a provable condition, constant Evaluates, empty branches; sequences are flattened.
// A statement that does nothing becomes an empty Seq.
inline Stmt simplify(const Stmt& s, const IntervalMap& ranges = {}) {
  return detail::Simplifier(ranges).mutate(s);
}

}  // namespace ir
NNVM_END_NAMESPACE
