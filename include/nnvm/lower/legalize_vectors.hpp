// Vector legalization: a `vectorized` loop wider than one SIMD register of the target becomes an
// unrolled loop over register-wide vectorized loops, so no emitter is asked for a vector wider
// than the machine has. (GCC, given a 16-float vector on an AVX2 machine, moves it through the
// stack: the kernel runs several times slower than with two 8-float vectors.)
// Requires: flattened storage, before `vectorize`. Ensures: every vectorized loop of constant
// extent that is a multiple of the register's lanes has at most that many iterations. A loop
// whose extent is not such a multiple is left as scheduled: the schedule asked for it.
#pragma once

#include <algorithm>

#include "nnvm/ir/op.hpp"
#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {
// The widest element, in bits, that the statement loads or stores: it decides the lanes of
// one register for the loop's vectors.
inline int widest_element_bits(const ir::Stmt& s) {
  struct F : ir::IRVisitor {
    int bits = 0;
    void visit(const ir::Load* op) override {
      bits = std::max(bits, int(op->buffer->dtype.bits));
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Store* op) override {
      bits = std::max(bits, int(op->buffer->dtype.bits));
      ir::IRVisitor::visit(op);
    }
  } f;
  f.visit_stmt(s);
  return f.bits;
}
}  // namespace detail

// `vector_bits`: the target's SIMD register width; 0 leaves every loop as scheduled.
inline ir::Stmt legalize_vectors(const ir::Stmt& s, int vector_bits) {
  struct Legalize : ir::IRMutator {
    int vector_bits;
    using ir::IRMutator::visit;
    ir::Stmt visit(const ir::For* op, const ir::Stmt& st) override {
      ir::Stmt inner = ir::IRMutator::visit(op, st);
      auto* f = inner.as<ir::For>();
      if (!f || f->for_kind != ir::ForKind::vectorized) return inner;
      const int64_t* extent = ir::as_const_int(f->extent);
      int bits = detail::widest_element_bits(f->body);
      if (!extent || bits == 0) return inner;
      const int64_t lanes = std::max(1, vector_bits / bits);
      if (*extent <= lanes || *extent % lanes != 0) return inner;
      ir::Var outer(f->loop_var.name() + ".reg", f->loop_var.dtype());
      ir::Var lane(f->loop_var.name() + ".lane", f->loop_var.dtype());
      ir::Expr index = outer * lanes + lane;
      if (!ir::is_const_int(f->min, 0)) index = f->min + index;
      ir::Stmt body = ir::substitute(f->body, f->loop_var, index);
      DataType t = f->extent.dtype();
      return ir::For::make(outer, ir::make_zero(t), ir::make_const(t, double(*extent / lanes)), ir::ForKind::unrolled,
                           ir::For::make(lane, ir::make_zero(t), ir::make_const(t, double(lanes)),
                                         ir::ForKind::vectorized, body));
    }
  } l;
  if (vector_bits <= 0) return s;
  l.vector_bits = vector_bits;
  return l.mutate(s);
}

}  // namespace lower
NNVM_END_NAMESPACE
