// Reduction interchange: a serial loop whose every iteration accumulates into its own element,
//
//   for j:  X[f(j)] = init(j)
//           for k (one or more serial loops):  X[f(j)] = X[f(j)] + g(j, k)
//
// becomes
//
//   for j:  X[f(j)] = init(j)
//   for k:  for j':  X[f(j')] = X[f(j')] + g(j', k)
//
// so that the innermost loop is the data-parallel one and walks X contiguously (f(j+1) = f(j)+1).
// Each element still adds its terms in the same k order, so the results are bit-identical.
//
// The LLVM back end runs this before emitting: LLVM's loop vectorizer works on innermost loops
// only, so the unscheduled nest `for i, j: for k: C[i,j] += A[i,k]*B[k,j]` stays scalar there,
// while GCC (the C emitter's path) vectorizes its outer j loop by itself. Only what no schedule
// decided is touched: j and the k loops must be serial (not parallel, vectorized, unrolled or
// bound), and the nest must have exactly this shape; anything else is left as it is.
// Requires: flattened storage (Store/Load). Ensures: the same values, in the same order per element.
#pragma once

#include "nnvm/ir/affine.hpp"
#include "nnvm/ir/functor.hpp"
#include "nnvm/ir/simplify.hpp"
#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {

// Whether `e` reads buffer `x` anywhere other than at `index` (or reads it at all when `index`
// is undefined).
inline bool reads_elsewhere(const ir::Expr& e, const ir::Buffer& x, const ir::Expr& index) {
  struct Finder : ir::IRVisitor {
    const ir::Buffer& x;
    const ir::Expr& index;
    bool found = false;
    Finder(const ir::Buffer& b, const ir::Expr& i) : x(b), index(i) {}
    using ir::IRVisitor::visit;
    void visit(const ir::Load* op) override {
      if (op->buffer.same_as(x) && (!index.defined() || !ir::deep_equal(op->index, index))) found = true;
      ir::IRVisitor::visit(op);
    }
  } f(x, index);
  f.visit_expr(e);
  return f.found;
}

// True when `index` moves by exactly one element per step of `j`: f(j+1) - f(j) == 1.
inline bool unit_stride_in(const ir::Expr& index, const ir::Var& j) {
  if (!ir::has_affine_form(index.dtype()) || !ir::uses_var(index, j)) return false;
  ir::Expr step = ir::simplify(ir::substitute(index, j, j + 1) - index);
  const int64_t* c = ir::as_const_int(step);
  return c && *c == 1;
}

class ReductionInterchanger : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    ir::Stmt inner = ir::IRMutator::visit(op, s);
    auto* j = inner.as<ir::For>();
    if (!j || j->for_kind != ir::ForKind::serial) return inner;
    auto* seq = j->body.as<ir::Seq>();
    if (!seq || seq->seq.size() != 2) return inner;
    auto* init = seq->seq[0].as<ir::Store>();
    if (!init || !init->value.dtype().is_scalar()) return inner;
    const ir::Buffer& x = init->buffer;
    const ir::Expr& index = init->index;
    if (!unit_stride_in(index, j->loop_var) || reads_elsewhere(init->value, x, ir::Expr())) return inner;
    // The reduction loops: a perfect nest of serial loops whose bounds do not depend on j.
    std::vector<const ir::For*> ks;
    ir::Stmt at = seq->seq[1];
    while (auto* k = at.as<ir::For>()) {
      if (k->for_kind != ir::ForKind::serial || ir::uses_var(k->min, j->loop_var) ||
          ir::uses_var(k->extent, j->loop_var))
        return inner;
      ks.push_back(k);
      at = k->body;
    }
    auto* update = at.as<ir::Store>();
    if (ks.empty() || !update || !update->buffer.same_as(x) || !ir::deep_equal(update->index, index) ||
        reads_elsewhere(update->value, x, index))
      return inner;
    ir::Var j2(j->loop_var.name(), j->loop_var.dtype());
    ir::Stmt nest = ir::For::make(j2, j->min, j->extent, ir::ForKind::serial, ir::substitute(at, j->loop_var, j2));
    for (size_t n = ks.size(); n-- > 0;)
      nest = ir::For::make(ks[n]->loop_var, ks[n]->min, ks[n]->extent, ir::ForKind::serial, nest);
    return ir::Seq::make({ir::For::make(j->loop_var, j->min, j->extent, ir::ForKind::serial, seq->seq[0]), nest});
  }
};

}  // namespace detail

inline ir::Stmt interchange_reductions(const ir::Stmt& s) { return detail::ReductionInterchanger().mutate(s); }

}  // namespace lower
NNVM_END_NAMESPACE
