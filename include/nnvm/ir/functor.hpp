// IRVisitor walks every node; IRMutator rebuilds a tree bottom-up, sharing every subtree
// that did not change. Override the `visit` overloads of the nodes a pass cares about.
#pragma once

#include "nnvm/ir/stmt.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

#define NNVM_FOR_EACH_BINARY(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(Min) X(Max) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or)

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  virtual void visit_expr(const Expr& e) {
    if (!e.defined()) return;
    switch (e.kind()) {
#define NNVM_CASE(kind, node) case ExprKind::kind: return visit(e.as<node>());
      NNVM_IR_EXPR_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
  }
  virtual void visit_stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
#define NNVM_CASE(kind, node) case StmtKind::kind: return visit(s.as<node>());
      NNVM_IR_STMT_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
  }

 protected:
  virtual void visit(const IntImm*) {}
  virtual void visit(const UIntImm*) {}
  virtual void visit(const FloatImm*) {}
  virtual void visit(const VarNode*) {}
#define NNVM_VISIT(N) \
  virtual void visit(const N* op) { visit_expr(op->a); visit_expr(op->b); }
  NNVM_FOR_EACH_BINARY(NNVM_VISIT)
#undef NNVM_VISIT
  virtual void visit(const Not* op) { visit_expr(op->a); }
  virtual void visit(const Select* op) {
    visit_expr(op->condition); visit_expr(op->true_value); visit_expr(op->false_value);
  }
  virtual void visit(const Cast* op) { visit_expr(op->value); }
  virtual void visit(const BitCast* op) { visit_expr(op->value); }
  virtual void visit(const Call* op) { for (auto& a : op->args) visit_expr(a); }
  virtual void visit(const Load* op) { visit_expr(op->index); }
  virtual void visit(const Ramp* op) { visit_expr(op->base); visit_expr(op->stride); }
  virtual void visit(const Broadcast* op) { visit_expr(op->value); }
  virtual void visit(const Let* op) { visit_expr(op->value); visit_expr(op->body); }
  virtual void visit(const Reduce* op) {
    visit_expr(op->source); visit_expr(op->init); visit_expr(op->condition);
  }
  virtual void visit(const ProducerLoad* op) { for (auto& i : op->indices) visit_expr(i); }

  virtual void visit(const For* op) {
    visit_expr(op->min); visit_expr(op->extent); visit_stmt(op->body);
  }
  virtual void visit(const Store* op) { visit_expr(op->value); visit_expr(op->index); }
  virtual void visit(const Allocate* op) {
    for (auto& e : op->buffer->shape) visit_expr(e);
    visit_stmt(op->body);
  }
  virtual void visit(const IfThenElse* op) {
    visit_expr(op->condition); visit_stmt(op->then_case); visit_stmt(op->else_case);
  }
  virtual void visit(const Seq* op) { for (auto& s : op->seq) visit_stmt(s); }
  virtual void visit(const LetStmt* op) { visit_expr(op->value); visit_stmt(op->body); }
  virtual void visit(const Evaluate* op) { visit_expr(op->value); }
  virtual void visit(const Barrier*) {}
  virtual void visit(const ProducerStore* op) {
    visit_expr(op->value);
    for (auto& i : op->indices) visit_expr(i);
  }
  virtual void visit(const ProducerRealize* op) {
    for (auto& r : op->bounds) { visit_expr(r.min); visit_expr(r.extent); }
    visit_stmt(op->body);
  }
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  virtual Expr mutate(const Expr& e) {
    if (!e.defined()) return e;
    switch (e.kind()) {
#define NNVM_CASE(kind, node) case ExprKind::kind: return visit(e.as<node>(), e);
      NNVM_IR_EXPR_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
    return e;
  }
  virtual Stmt mutate(const Stmt& s) {
    if (!s.defined()) return s;
    switch (s.kind()) {
#define NNVM_CASE(kind, node) case StmtKind::kind: return visit(s.as<node>(), s);
      NNVM_IR_STMT_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
    return s;
  }

 protected:
  virtual Expr visit(const IntImm*, const Expr& e) { return e; }
  virtual Expr visit(const UIntImm*, const Expr& e) { return e; }
  virtual Expr visit(const FloatImm*, const Expr& e) { return e; }
  virtual Expr visit(const VarNode*, const Expr& e) { return e; }
  // Binary nodes are rebuilt through their checked factory; vector lanes are matched so a
  // mutator may turn one side into a vector (the vectorizer relies on this).
#define NNVM_MUTATE(N)                                                    \
  virtual Expr visit(const N* op, const Expr& e) {                        \
    Expr a = mutate(op->a), b = mutate(op->b);                            \
    if (a.same_as(op->a) && b.same_as(op->b)) return e;                   \
    match_lanes(a, b);                                                    \
    return N::make(std::move(a), std::move(b));                           \
  }
  NNVM_FOR_EACH_BINARY(NNVM_MUTATE)
#undef NNVM_MUTATE
  virtual Expr visit(const Not* op, const Expr& e) {
    Expr a = mutate(op->a);
    return a.same_as(op->a) ? e : Not::make(a);
  }
  virtual Expr visit(const Select* op, const Expr& e) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
    match_lanes(t, f);
    if (c.dtype().lanes == 1 && t.dtype().lanes > 1) c = Broadcast::make(c, t.dtype().lanes);
    if (c.dtype().lanes > 1 && t.dtype().lanes == 1) {
      t = Broadcast::make(t, c.dtype().lanes);
      f = Broadcast::make(f, c.dtype().lanes);
    }
    return Select::make(c, t, f);
  }
  virtual Expr visit(const Cast* op, const Expr& e) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? e : Cast::make(op->dtype.with_lanes(v.dtype().lanes), v);
  }
  virtual Expr visit(const BitCast* op, const Expr& e) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? e : BitCast::make(op->dtype, v);
  }
  virtual Expr visit(const Call* op, const Expr& e) {
    std::vector<Expr> args;
    bool changed = false;
    for (auto& a : op->args) {
      args.push_back(mutate(a));
      changed |= !args.back().same_as(a);
    }
    if (!changed) return e;
    if (args.size() == 2) match_lanes(args[0], args[1]);
    return Call::make(op->op, std::move(args));
  }
  virtual Expr visit(const Load* op, const Expr& e) {
    Expr i = mutate(op->index);
    return i.same_as(op->index) ? e : Load::make(op->buffer, i);
  }
  virtual Expr visit(const Ramp* op, const Expr& e) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    return b.same_as(op->base) && s.same_as(op->stride) ? e : Ramp::make(b, s, op->lanes);
  }
  virtual Expr visit(const Broadcast* op, const Expr& e) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return e;
    return v.dtype().lanes > 1 ? v : Broadcast::make(v, op->lanes);
  }
  virtual Expr visit(const Let* op, const Expr& e) {
    Expr v = mutate(op->value), b = mutate(op->body);
    return v.same_as(op->value) && b.same_as(op->body) ? e : Let::make(op->var, v, b);
  }
  virtual Expr visit(const Reduce* op, const Expr& e) {
    Expr s = mutate(op->source), i = mutate(op->init), c = mutate(op->condition);
    if (s.same_as(op->source) && i.same_as(op->init) && c.same_as(op->condition)) return e;
    return make_expr<Reduce>(s.dtype(), op->combiner, s, op->axes, i, c);
  }
  virtual Expr visit(const ProducerLoad* op, const Expr& e) {
    std::vector<Expr> idx;
    bool changed = false;
    for (auto& i : op->indices) {
      idx.push_back(mutate(i));
      changed |= !idx.back().same_as(i);
    }
    return changed ? make_expr<ProducerLoad>(op->dtype, op->tensor, std::move(idx)) : e;
  }

  virtual Stmt visit(const For* op, const Stmt& s) {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    Stmt b = mutate(op->body);
    if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return s;
    return For::make(op->loop_var, mn, ext, op->for_kind, b, op->thread_tag);
  }
  virtual Stmt visit(const Store* op, const Stmt& s) {
    Expr v = mutate(op->value), i = mutate(op->index);
    if (v.same_as(op->value) && i.same_as(op->index)) return s;
    if (i.dtype().lanes > 1 && v.dtype().lanes == 1) v = Broadcast::make(v, i.dtype().lanes);
    return Store::make(op->buffer, v, i);
  }
  virtual Stmt visit(const Allocate* op, const Stmt& s) {
    Stmt b = mutate(op->body);
    return b.same_as(op->body) ? s : Allocate::make(op->buffer, b);
  }
  virtual Stmt visit(const IfThenElse* op, const Stmt& s) {
    Expr c = mutate(op->condition);
    Stmt t = mutate(op->then_case), f = mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
    return IfThenElse::make(c, t, f);
  }
  virtual Stmt visit(const Seq* op, const Stmt& s) {
    std::vector<Stmt> out;
    bool changed = false;
    for (auto& x : op->seq) {
      out.push_back(mutate(x));
      changed |= !out.back().same_as(x);
    }
    return changed ? Seq::make(out) : s;
  }
  virtual Stmt visit(const LetStmt* op, const Stmt& s) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    return v.same_as(op->value) && b.same_as(op->body) ? s : LetStmt::make(op->var, v, b);
  }
  virtual Stmt visit(const Barrier*, const Stmt& s) { return s; }
  virtual Stmt visit(const Evaluate* op, const Stmt& s) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? s : Evaluate::make(v);
  }
  virtual Stmt visit(const ProducerStore* op, const Stmt& s) {
    Expr v = mutate(op->value);
    std::vector<Expr> idx;
    bool changed = !v.same_as(op->value);
    for (auto& i : op->indices) {
      idx.push_back(mutate(i));
      changed |= !idx.back().same_as(i);
    }
    return changed ? make_stmt<ProducerStore>(op->tensor, v, std::move(idx)) : s;
  }
  virtual Stmt visit(const ProducerRealize* op, const Stmt& s) {
    std::vector<Range> bounds;
    bool changed = false;
    for (auto& r : op->bounds) {
      bounds.push_back({mutate(r.min), mutate(r.extent)});
      changed |= !bounds.back().min.same_as(r.min) || !bounds.back().extent.same_as(r.extent);
    }
    Stmt b = mutate(op->body);
    if (!changed && b.same_as(op->body)) return s;
    return make_stmt<ProducerRealize>(op->tensor, std::move(bounds), op->scope, b);
  }
};

}  // namespace ir
NNVM_END_NAMESPACE
