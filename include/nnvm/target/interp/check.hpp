// The interpreter's static check of a kernel body, run before anything executes: nodes that
// lowering must have removed, element types no back end supports, and arithmetic on storage
// types are reported here, so the evaluator's hot path need not test for them.
#pragma once

#include "nnvm/ir/functor.hpp"
#include "nnvm/ir/function.hpp"
#include "nnvm/target/interp/value.hpp"

NNVM_BEGIN_NAMESPACE
namespace target::interp {

class InterpretableChecker : public ir::IRVisitor {
 public:
  explicit InterpretableChecker(const ir::LoweredFunc& fn) : fn_(fn) {}

  void visit_expr(const ir::Expr& e) override {
    if (!e.defined()) fail("nnvm.interp.malformed", "an expression operand is undefined");
    check_dtype(e.dtype(), "an expression");
    ir::IRVisitor::visit_expr(e);
  }

 protected:
  using ir::IRVisitor::visit;
#define NNVM_CHECK_BINARY(N)                                             \
  void visit(const ir::N* op) override {                                 \
    check_arith(op->a.dtype(), #N);                                      \
    ir::IRVisitor::visit(op);                                            \
  }
  NNVM_FOR_EACH_BINARY(NNVM_CHECK_BINARY)
#undef NNVM_CHECK_BINARY
  void visit(const ir::Call* op) override {
    for (auto& a : op->args) check_arith(a.dtype(), ir::call_op_name(op->op));
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    check_dtype(op->buffer->dtype, "buffer " + op->buffer->name);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Reduce*) override { unlowered("Reduce"); }
  void visit(const ir::ProducerLoad*) override { unlowered("ProducerLoad"); }

  void visit(const ir::For* op) override {
    if (!op->loop_var.dtype().is_scalar() || !op->min.dtype().is_scalar() || !op->extent.dtype().is_scalar())
      fail("nnvm.interp.malformed", str_cat("loop ", op->loop_var.name(), " has vector bounds"));
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    check_dtype(op->buffer->dtype, "buffer " + op->buffer->name);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Allocate* op) override {
    check_dtype(op->buffer->dtype, "buffer " + op->buffer->name);
    for (auto& e : op->buffer->shape)
      if (!e.defined() || !e.dtype().is_int() || !e.dtype().is_scalar())
        fail("nnvm.interp.malformed", str_cat("allocation ", op->buffer->name, " has a non-integer extent"));
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::ProducerStore*) override { unlowered("ProducerStore"); }
  void visit(const ir::ProducerRealize*) override { unlowered("ProducerRealize"); }

 private:
  [[noreturn]] void fail(const char* id, std::string msg) const {
    throw InternalError(id, std::move(msg), {"kernel " + fn_.name});
  }
  [[noreturn]] void unlowered(const char* node) const {
    fail("nnvm.interp.unlowered", str_cat("a ", node, " node reached the interpreter; lowering must remove it"));
  }
  void check_dtype(DataType t, const std::string& what) const {
    if (elem_of(t) == Elem::unsupported)
      fail("nnvm.interp.unsupported_dtype", str_cat(what, " has type ", t, ", which no back end supports"));
  }
  void check_arith(DataType t, const char* op) const {
    if (t.is_storage_only())
      fail("nnvm.interp.storage_only_arith", str_cat(op, " on ", t, ", a storage type; cast to float32 first"));
  }

  const ir::LoweredFunc& fn_;
};

inline void check_interpretable(const ir::LoweredFunc& fn) {
  InterpretableChecker checker(fn);
  for (auto& p : fn.params) {
    if (elem_of(p->dtype) == Elem::unsupported || !p->dtype.is_scalar())
      throw InternalError("nnvm.interp.unsupported_dtype",
                          str_cat("parameter ", p->name, " has element type ", p->dtype), {"kernel " + fn.name});
  }
  checker.visit_stmt(fn.body);
}

}  // namespace target::interp
NNVM_END_NAMESPACE
