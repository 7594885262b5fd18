// Replaces variables by expressions, and queries which variables an expression uses.
#pragma once

#include <unordered_map>
#include <unordered_set>

#include "nnvm/ir/functor.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

using VarMap = std::unordered_map<Var, Expr, VarHash, VarEq>;
using VarSet = std::unordered_set<Var, VarHash, VarEq>;

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& m) : map_(m) {}
  using IRMutator::mutate;

 protected:
  using IRMutator::visit;
  Expr visit(const VarNode* op, const Expr& e) override {
    auto it = map_.find(Var::from(e));
    return it == map_.end() ? e : it->second;
    (void)op;
  }

 private:
  const VarMap& map_;
};

inline Expr substitute(const Expr& e, const VarMap& m) { return m.empty() ? e : Substituter(m).mutate(e); }
inline Stmt substitute(const Stmt& s, const VarMap& m) { return m.empty() ? s : Substituter(m).mutate(s); }
inline Expr substitute(const Expr& e, const Var& v, const Expr& by) { return substitute(e, VarMap{{v, by}}); }
inline Stmt substitute(const Stmt& s, const Var& v, const Expr& by) { return substitute(s, VarMap{{v, by}}); }

// True when `e` (or `s`) reads any variable for which `pred` holds.
template <class Node, class Pred>
bool uses_var_if(const Node& n, Pred pred) {
  struct Finder : IRVisitor {
    Pred& pred;
    bool found = false;
    explicit Finder(Pred& p) : pred(p) {}
    void visit(const VarNode* op) override { found |= pred(op); }
  } f(pred);
  if constexpr (std::is_same_v<Node, Expr>) f.visit_expr(n); else f.visit_stmt(n);
  return f.found;
}
inline bool uses_var(const Expr& e, const Var& v) {
  return uses_var_if(e, [&](const VarNode* n) { return n == v.get(); });
}
inline bool uses_var(const Stmt& s, const Var& v) {
  return uses_var_if(s, [&](const VarNode* n) { return n == v.get(); });
}

// True when `e` reads memory (a Load of a flat buffer).
inline bool contains_load(const Expr& e) {
  struct Finder : IRVisitor {
    bool found = false;
    using IRVisitor::visit;
    void visit(const Load*) override { found = true; }
  } f;
  f.visit_expr(e);
  return f.found;
}

// Free variables of an expression, in first-use order (deterministic).
inline std::vector<Var> vars_of(const Expr& e) {
  struct Collector : IRVisitor {
    std::vector<Var> out;
    std::unordered_set<const VarNode*> seen;
    void visit_expr(const Expr& x) override {
      if (x.defined() && x.kind() == ExprKind::Var) {
        if (seen.insert(x.as<VarNode>()).second) out.push_back(Var::from(x));
        return;
      }
      IRVisitor::visit_expr(x);
    }
  } c;
  c.visit_expr(e);
  return c.out;
}

}  // namespace ir
NNVM_END_NAMESPACE
