// Vectorization: a `vectorized` loop of constant extent becomes one pass of vector code in
// which the loop variable is ramp(min, 1, extent).
// Requires: flattened storage. Ensures: no `vectorized` loop is left. A loop whose body cannot
// become vector code without changing its meaning (a store to one address from every lane, a
// condition that differs per lane around a store or a load, a nested vector loop, an
// allocation) stays a serial loop, which is always correct.
#pragma once

#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {

// The first select in `e` (outermost first) with a load on a side: one that guards a load.
inline const ir::Select* guarding_select(const ir::Expr& e) {
  struct F : ir::IRVisitor {
    const ir::Select* found = nullptr;
    void visit(const ir::Select* op) override {
      if (found) return;
      if (ir::contains_load(op->true_value) || ir::contains_load(op->false_value)) {
        found = op;
        return;
      }
      ir::IRVisitor::visit(op);
    }
  } f;
  f.visit_expr(e);
  return f.found;
}

// `e` with the node `target` replaced by `with`.
inline ir::Expr replace_node(const ir::Expr& e, const ir::Select* target, const ir::Expr& with) {
  struct R : ir::IRMutator {
    const ir::Select* target;
    ir::Expr with;
    using ir::IRMutator::visit;
    ir::Expr visit(const ir::Select* op, const ir::Expr& x) override {
      return op == target ? with : ir::IRMutator::visit(op, x);
    }
  } r;
  r.target = target;
  r.with = with;
  return r.mutate(e);
}

// Widens the body of one vectorized loop; `failed` is set when the result would be wrong.
class Widen : public ir::IRMutator {
 public:
  Widen(const ir::Var& var, ir::Expr ramp) : var_(var), ramp_(std::move(ramp)) {}
  bool failed = false;
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Expr visit(const ir::VarNode* op, const ir::Expr& e) override {
    if (op == var_.get()) return ramp_;
    auto it = renamed_.find(op);
    return it == renamed_.end() ? e : it->second;
  }
  ir::Expr visit(const ir::Select* op, const ir::Expr& e) override {
    // A vector select evaluates both sides (and a condition the same for every lane becomes a
    // vector one when the sides are vectors), so a guarded load could read out of bounds. The
    // store of such a select becomes an if/else (visit Store); anywhere else the loop stays serial.
    if (ir::contains_load(op->true_value) || ir::contains_load(op->false_value)) {
      ir::Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
      if (c.dtype().lanes > 1 || t.dtype().lanes > 1 || f.dtype().lanes > 1) {
        failed = true;
        return e;
      }
    }
    return ir::IRMutator::visit(op, e);
  }
  ir::Expr visit(const ir::Let* op, const ir::Expr& e) override {
    ir::Expr v = mutate(op->value);
    if (v.dtype().lanes == 1) return ir::IRMutator::visit(op, e);
    ir::Var wide(op->var.name(), v.dtype());
    renamed_[op->var.get()] = wide;
    ir::Expr b = mutate(op->body);
    return ir::Let::make(wide, v, b);
  }
  ir::Stmt visit(const ir::LetStmt* op, const ir::Stmt& s) override {
    ir::Expr v = mutate(op->value);
    if (v.dtype().lanes == 1) return ir::IRMutator::visit(op, s);
    ir::Var wide(op->var.name(), v.dtype());
    renamed_[op->var.get()] = wide;
    return ir::LetStmt::make(wide, v, mutate(op->body));
  }
  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override {
    // buf[i] = f(select(c, a, b)) with loads in a or b and c the same for every lane (a
    // zero-padded copy, or a convolution reading its input through the padding's select: the
    // condition is on outer axes): if (c) buf[i] = f(a); else buf[i] = f(b). Up to three such
    // selects per store (eight stores); more stay serial.
    if (const ir::Select* sel = guarding_select(op->value); sel && split_depth_ < 3) {
      ir::Expr c = mutate(sel->condition);
      if (c.dtype().lanes == 1) {
        ++split_depth_;
        auto side = [&](const ir::Expr& v) {
          ir::Stmt st = ir::Store::make(op->buffer, replace_node(op->value, sel, v), op->index);
          return mutate(st);
        };
        ir::Stmt t = side(sel->true_value), f = side(sel->false_value);
        --split_depth_;
        return ir::IfThenElse::make(c, t, f);
      }
    }
    return widen_store(op, op->value, s);
  }
  // The vector form of `op` storing `value` instead of its own value.
  ir::Stmt widen_store(const ir::Store* op, const ir::Expr& value, const ir::Stmt& s) {
    ir::Expr i = mutate(op->index), v = mutate(value);
    // Every lane would write the same address: a loop-carried dependence.
    if (i.dtype().lanes == 1) {
      failed = true;
      return s;
    }
    if (v.dtype().lanes == 1) v = ir::Broadcast::make(v, i.dtype().lanes);
    return ir::Store::make(op->buffer, v, i);
  }
  ir::Stmt visit(const ir::IfThenElse* op, const ir::Stmt& s) override {
    ir::Expr c = mutate(op->condition);
    if (c.dtype().lanes > 1) {
      failed = true;
      return s;
    }
    return ir::IRMutator::visit(op, s);
  }
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    if (ir::uses_var(op->min, var_) || ir::uses_var(op->extent, var_) || op->for_kind == ir::ForKind::parallel) {
      failed = true;
      return s;
    }
    return ir::IRMutator::visit(op, s);
  }
  ir::Stmt visit(const ir::Allocate*, const ir::Stmt& s) override {
    failed = true;
    return s;
  }

 private:
  const ir::Var& var_;
  ir::Expr ramp_;
  std::unordered_map<const ir::VarNode*, ir::Expr> renamed_;
  int split_depth_ = 0;  // selects split into if/else around the store being widened
};

class Vectorizer : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    ir::Stmt inner = ir::IRMutator::visit(op, s);  // innermost loops first
    auto* f = inner.as<ir::For>();
    if (!f || f->for_kind != ir::ForKind::vectorized) return inner;
    const int64_t* ext = ir::as_const_int(f->extent);
    if (!ext)
      throw UserError("nnvm.schedule.vectorize_extent",
                      str_cat("vectorized loop ", f->loop_var.name(),
                              " has a non-constant extent; split it by a constant factor and vectorize the inner loop"));
    auto serial = [&] { return ir::For::make(f->loop_var, f->min, f->extent, ir::ForKind::serial, f->body); };
    // GCC/Clang vector types need a power-of-two lane count; a vector wider than 64 lanes is
    // certainly a scheduling mistake, and one lane is just a loop.
    if (*ext < 2 || *ext > 64 || (*ext & (*ext - 1)) != 0) return serial();
    if (contains_vector_code(f->body)) return serial();
    Widen widen(f->loop_var, ir::Ramp::make(f->min, ir::Expr(int64_t(1)), int(*ext)));
    ir::Stmt body = widen.mutate(f->body);
    if (widen.failed) return serial();
    return body;
  }

 private:
  static bool contains_vector_code(const ir::Stmt& s) {
    struct F : ir::IRVisitor {
      bool found = false;
      void visit_expr(const ir::Expr& e) override {
        if (e.defined() && e.dtype().lanes > 1) found = true;
        else ir::IRVisitor::visit_expr(e);
      }
    } f;
    f.visit_stmt(s);
    return f.found;
  }
};

}  // namespace detail

inline ir::Stmt vectorize_loops(const ir::Stmt& s) { return detail::Vectorizer().mutate(s); }

}  // namespace lower
NNVM_END_NAMESPACE
