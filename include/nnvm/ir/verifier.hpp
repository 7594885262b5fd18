// Checks that a lowered function keeps the lowered-IR contract (docs/lowered_ir.md), so that a
// broken pass is caught where it ran instead of in an emitter. Violations throw InternalError
// with an id "nnvm.verify.<what>" and the context (kernel › enclosing loops):
//   undefined           an undefined statement or expression
//   undefined_buffer    a Load/Store of a buffer that is neither a param nor allocated around it
//   var_scope           a variable used outside the For/Let/LetStmt that defines it
//                       (size_vars are in scope everywhere)
//   var_redefined       a variable defined again inside its own scope (or a size var redefined)
//   buffer_redefined    an Allocate of a buffer that is already a param or allocated around it
//   producer_node       ProducerLoad / ProducerStore / ProducerRealize left after lowering
//   reduce_node         a Reduce left after lowering
//   index_dtype         a Load/Store index that is not an integer
//   lanes_mismatch      a Store whose value lanes differ from its index lanes
//   store_dtype         a Store whose value element type is not the buffer's
//   condition_dtype     an if or select condition (or && / || / ! operand) that is not bool
//   loop_dtype          a loop variable, min or extent that is not a scalar integer
//   thread_tag          a thread-binding loop without a tag, or a tag on another loop
// lower() also checks the IR between its passes when NNVM_VERIFY_PASSES=1 (IRForm::loop_nest
// before storage_flatten).
#pragma once

#include <unordered_set>

#include "nnvm/ir/functor.hpp"
#include "nnvm/ir/printer.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

// What the verified IR is: lowered (the contract above) or a loop nest that still stores, reads
// and realizes tensors (schedule_ops' output, before storage_flatten).
enum class IRForm { lowered, loop_nest };

namespace detail {

class Verifier : public IRVisitor {
 public:
  Verifier(std::string kernel, const std::vector<Buffer>& params, const std::vector<Var>& size_vars,
           IRForm form = IRForm::lowered)
      : form_(form), context_{"kernel " + std::move(kernel)} {
    for (auto& v : size_vars) define(v);
    for (auto& b : params) {
      for (auto& d : b->shape) visit_expr(d);
      buffers_.insert(b.get());
    }
  }

  void visit_expr(const Expr& e) override {
    if (!e.defined()) fail("undefined", "an expression is undefined");
    IRVisitor::visit_expr(e);
  }
  void visit_stmt(const Stmt& s) override {
    if (!s.defined()) fail("undefined", "a statement is undefined");
    IRVisitor::visit_stmt(s);
  }

 protected:
  using IRVisitor::visit;

  void visit(const VarNode* op) override {
    if (!vars_.count(op))
      fail("var_scope", str_cat("variable ", op->name, " is used outside the loop or let that defines it"));
  }
  void visit(const Load* op) override {
    check_buffer(op->buffer, "load");
    check_index(op->buffer, op->index, "load");
    visit_expr(op->index);
  }
  void visit(const Let* op) override {
    visit_expr(op->value);
    Bind bind(*this, op->var);
    visit_expr(op->body);
  }
  void visit(const Select* op) override {
    check_bool(op->condition, "select condition");
    IRVisitor::visit(op);
  }
  void visit(const And* op) override {
    check_bool(op->a, "operand of &&");
    IRVisitor::visit(op);
  }
  void visit(const Or* op) override {
    check_bool(op->a, "operand of ||");
    IRVisitor::visit(op);
  }
  void visit(const Not* op) override {
    check_bool(op->a, "operand of !");
    IRVisitor::visit(op);
  }
  void visit(const Reduce*) override {
    fail("reduce_node", "a reduction is left in lowered IR; lowering must turn it into loops");
  }
  void visit(const ProducerLoad* op) override {
    if (form_ == IRForm::lowered)
      fail("producer_node", str_cat("tensor read ", op->tensor->name, "(...) is left in lowered IR"));
    IRVisitor::visit(op);
  }

  void visit(const For* op) override {
    if (!op->loop_var.dtype().is_int() || !op->loop_var.dtype().is_scalar() || !scalar_int(op->min) ||
        !scalar_int(op->extent))
      fail("loop_dtype", str_cat("loop ", op->loop_var.name(), " needs a scalar integer variable, min and extent"));
    if ((op->for_kind == ForKind::thread_binding) == op->thread_tag.empty())
      fail("thread_tag", str_cat("loop ", op->loop_var.name(),
                                 op->thread_tag.empty() ? " is bound to a thread axis but has no tag"
                                                        : " has a thread tag but is not a thread binding"));
    visit_expr(op->min);
    visit_expr(op->extent);
    Bind bind(*this, op->loop_var);
    context_.push_back(str_cat(for_kind_name(op->for_kind), " ", op->loop_var.name()));
    visit_stmt(op->body);
    context_.pop_back();
  }
  void visit(const Store* op) override {
    check_buffer(op->buffer, "store");
    check_index(op->buffer, op->index, "store");
    if (op->value.defined() && op->value.dtype().lanes != op->index.dtype().lanes)
      fail("lanes_mismatch", str_cat("store to ", op->buffer->name, " writes ", op->value.dtype().lanes,
                                     " lanes at an index of ", op->index.dtype().lanes, " lanes"));
    if (op->value.defined() && op->value.dtype().element_of() != op->buffer->dtype)
      fail("store_dtype", str_cat("store of ", op->value.dtype(), " into ", op->buffer->name, " of ", op->buffer->dtype));
    IRVisitor::visit(op);
  }
  void visit(const Allocate* op) override {
    if (buffers_.count(op->buffer.get()))
      fail("buffer_redefined", str_cat("buffer ", op->buffer->name, " is allocated where it already exists"));
    for (auto& d : op->buffer->shape) visit_expr(d);
    buffers_.insert(op->buffer.get());
    context_.push_back("allocate " + op->buffer->name);
    visit_stmt(op->body);
    context_.pop_back();
    buffers_.erase(op->buffer.get());
  }
  void visit(const IfThenElse* op) override {
    if (!op->condition.defined() || !op->condition.dtype().is_bool() || !op->condition.dtype().is_scalar())
      fail("condition_dtype", "an if condition must be a scalar bool");
    visit_expr(op->condition);
    visit_stmt(op->then_case);
    if (op->else_case.defined()) visit_stmt(op->else_case);
  }
  void visit(const LetStmt* op) override {
    visit_expr(op->value);
    Bind bind(*this, op->var);
    visit_stmt(op->body);
  }
  void visit(const ProducerStore* op) override {
    if (form_ == IRForm::lowered)
      fail("producer_node", str_cat("tensor store ", op->tensor->name, "(...) = ... is left in lowered IR"));
    IRVisitor::visit(op);
  }
  void visit(const ProducerRealize* op) override {
    if (form_ == IRForm::lowered)
      fail("producer_node", str_cat("realize of tensor ", op->tensor->name, " is left in lowered IR"));
    for (auto& r : op->bounds) {
      visit_expr(r.min);
      visit_expr(r.extent);
    }
    context_.push_back("realize " + op->tensor->name);
    visit_stmt(op->body);
    context_.pop_back();
  }

 private:
  // Puts a variable in scope for the lifetime of this object.
  struct Bind {
    Verifier& self;
    const VarNode* var;
    Bind(Verifier& s, const Var& v) : self(s), var(v.get()) { self.define(v); }
    ~Bind() { self.vars_.erase(var); }
  };

  void define(const Var& v) {
    if (!vars_.insert(v.get()).second)
      fail("var_redefined", str_cat("variable ", v.name(), " is defined again inside its own scope"));
  }
  static bool scalar_int(const Expr& e) { return e.defined() && e.dtype().is_int() && e.dtype().is_scalar(); }
  void check_buffer(const Buffer& b, const char* what) {
    if (!b.defined()) fail("undefined", str_cat("a ", what, " has no buffer"));
    if (!buffers_.count(b.get()))
      fail("undefined_buffer", str_cat(what, " of buffer ", b->name, " which is neither a parameter nor allocated here"));
  }
  void check_index(const Buffer& b, const Expr& index, const char* what) {
    if (!index.defined()) fail("undefined", str_cat("index of a ", what, " of ", b->name, " is undefined"));
    if (!index.dtype().is_int())
      fail("index_dtype", str_cat(what, " of ", b->name, " has an index of type ", index.dtype(), "; it must be an integer"));
  }
  void check_bool(const Expr& e, const char* what) {
    if (e.defined() && !e.dtype().is_bool())
      fail("condition_dtype", str_cat(what, " is ", e.dtype(), ", not bool: ", to_string(e)));
  }
  [[noreturn]] void fail(const std::string& what, const std::string& message) {
    throw InternalError("nnvm.verify." + what, message, context_);
  }

  IRForm form_;
  std::vector<std::string> context_;
  std::unordered_set<const VarNode*> vars_;
  std::unordered_set<const BufferNode*> buffers_;
};

}  // namespace detail

// Checks `body` as the body of a kernel with these params and size vars.
inline void verify(const Stmt& body, const std::vector<Buffer>& params, const std::vector<Var>& size_vars,
                   const std::string& kernel = "<stmt>", IRForm form = IRForm::lowered) {
  detail::Verifier v(kernel, params, size_vars, form);
  v.visit_stmt(body);
}

// Throws InternalError "nnvm.verify.<what>" when `f` breaks the lowered-IR contract.
inline void verify(const LoweredFunc& f) { verify(f.body, f.params, f.size_vars, f.name); }

}  // namespace ir
NNVM_END_NAMESPACE
