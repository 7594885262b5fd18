// Decisions every CPU emitter (C, LLVM) makes the same way, so that they agree on the workspace
// layout and on what an outlined parallel body captures.
#pragma once

#include <unordered_set>
#include <vector>

#include "nnvm/ir/functor.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// The largest allocation (bytes) that lives on the stack instead of in the workspace.
inline constexpr int64_t kMaxStackBytes = 64 * 1024;

// A local-scope allocation of constant size small enough for the stack.
inline bool stack_eligible(const ir::Allocate* op) {
  if (op->buffer->scope != ir::MemoryScope::local) return false;
  int64_t bytes = op->buffer->dtype.bytes();
  for (auto& d : op->buffer->shape) {
    const int64_t* c = ir::as_const_int(d);
    if (!c || *c < 0 || (bytes *= *c) > kMaxStackBytes) return false;
  }
  return true;
}

// The allocations that take workspace: outside parallel loops and not stack-eligible, in
// first-visit order (the order of their slices in the workspace).
inline std::vector<const ir::Allocate*> workspace_allocations(const ir::Stmt& body) {
  struct Scan : ir::IRVisitor {
    int parallel_depth = 0;
    std::vector<const ir::Allocate*> workspace;
    using ir::IRVisitor::visit;
    void visit(const ir::For* op) override {
      int p = op->for_kind == ir::ForKind::parallel;
      parallel_depth += p;
      ir::IRVisitor::visit(op);
      parallel_depth -= p;
    }
    void visit(const ir::Allocate* op) override {
      if (parallel_depth == 0 && !stack_eligible(op)) workspace.push_back(op);
      ir::IRVisitor::visit(op);
    }
  } scan;
  scan.visit_stmt(body);
  return scan.workspace;
}

// Variables and buffers a parallel loop reads from its enclosing scope, in first-use order:
// what its outlined body must receive. `is_bound(node)` says whether a variable or buffer node
// is defined in the enclosing scope.
struct LoopCaptures {
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Buffer> buffers;
};

template <class IsBound>
LoopCaptures loop_captures(const ir::For* loop, IsBound is_bound) {
  struct Collect : ir::IRVisitor {
    IsBound& is_bound;
    LoopCaptures out;
    std::unordered_set<const void*> seen, inner;
    explicit Collect(IsBound& b) : is_bound(b) {}
    using ir::IRVisitor::visit;
    void visit(const ir::VarNode* op) override {
      if (inner.count(op) || !is_bound(op) || !seen.insert(op).second) return;
      out.vars.push_back(op);
    }
    void buffer(const ir::Buffer& b) {
      if (inner.count(b.get()) || !is_bound(b.get()) || !seen.insert(b.get()).second) return;
      out.buffers.push_back(b);
    }
    void visit(const ir::Load* op) override {
      buffer(op->buffer);
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Store* op) override {
      buffer(op->buffer);
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Allocate* op) override {
      inner.insert(op->buffer.get());
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::For* op) override {
      inner.insert(op->loop_var.get());
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::LetStmt* op) override {
      visit_expr(op->value);
      inner.insert(op->var.get());
      visit_stmt(op->body);
    }
    void visit(const ir::Let* op) override {
      visit_expr(op->value);
      inner.insert(op->var.get());
      visit_expr(op->body);
    }
  } c(is_bound);
  c.inner.insert(loop->loop_var.get());
  c.visit_expr(loop->min);
  c.visit_stmt(loop->body);
  return std::move(c.out);
}

}  // namespace target
NNVM_END_NAMESPACE
