// Unrolling: an `unrolled` loop of constant extent becomes that many copies of its body, each
// with the loop variable replaced by its value.
// Requires: flattened storage. Ensures: no `unrolled` loop is left.
#pragma once

#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

// Beyond this many copies unrolling only bloats code; the schedule almost certainly meant
// to unroll an inner loop.
inline constexpr int64_t kMaxUnrollExtent = 256;

class Unroller : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    ir::Stmt inner = ir::IRMutator::visit(op, s);
    auto* f = inner.as<ir::For>();
    if (!f || f->for_kind != ir::ForKind::unrolled) return inner;
    const int64_t* ext = ir::as_const_int(f->extent);
    if (!ext)
      throw UserError("nnvm.schedule.unroll_extent",
                      str_cat("unrolled loop ", f->loop_var.name(),
                              " has a non-constant extent; split it by a constant factor and unroll the inner loop"));
    if (*ext > kMaxUnrollExtent)
      throw UserError("nnvm.schedule.unroll_extent",
                      str_cat("unrolled loop ", f->loop_var.name(), " has ", *ext, " iterations (at most ",
                              kMaxUnrollExtent, "); split it and unroll the inner loop"));
    std::vector<ir::Stmt> copies;
    for (int64_t k = 0; k < *ext; ++k) copies.push_back(ir::substitute(f->body, f->loop_var, f->min + k));
    return ir::Seq::make(copies);
  }
};

inline ir::Stmt unroll_loops(const ir::Stmt& s) { return Unroller().mutate(s); }

}  // namespace lower
NNVM_END_NAMESPACE
