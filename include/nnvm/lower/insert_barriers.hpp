// GPU family: a barrier wherever the threads of a block could see shared memory half-written.
// Threads write a shared buffer cooperatively (each its part, cache_read(..., shared) bound to
// threadIdx) and then read parts other threads wrote, so
//   - in a sequence, a statement that reads (or writes) a shared buffer written by an earlier
//     statement since the last barrier gets a barrier before it (read after write);
//   - a serial loop whose body reads a shared buffer that its body also writes gets a barrier
//     at the end of the body, so the next iteration's writes wait for this one's reads (write
//     after read);
//   - so does a serial loop around thread loops whose body reads a global buffer it also writes:
//     a scan's step loop, run by one block (ops/schedule_gpu.hpp), whose threads read the rows
//     other threads wrote the step before (the dialects' barriers fence global memory too).
// A loop bound to a thread axis is no loop on the device (each thread takes its index), so every
// thread of a block reaches a barrier placed between statements, unless it sits in a branch on
// a thread index (or on memory): a barrier some threads skip hangs the block, so one needed
// under such a condition is an error (nnvm.codegen.divergent_barrier).
#pragma once

#include <set>

#include "nnvm/ir/functor.hpp"
#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {

// The shared buffers a statement reads and writes.
struct SharedAccess : ir::IRVisitor {
  std::set<const ir::BufferNode*> reads, writes;
  std::set<const ir::BufferNode*> global_reads, global_writes;  // in global memory
  bool thread_loop = false;                                      // holds a loop bound to threadIdx
  using ir::IRVisitor::visit;
  void visit(const ir::Load* op) override {
    if (op->buffer->scope == ir::MemoryScope::shared) reads.insert(op->buffer.get());
    if (op->buffer->scope == ir::MemoryScope::global) global_reads.insert(op->buffer.get());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    if (op->buffer->scope == ir::MemoryScope::shared) writes.insert(op->buffer.get());
    if (op->buffer->scope == ir::MemoryScope::global) global_writes.insert(op->buffer.get());
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::For* op) override {
    thread_loop |= op->for_kind == ir::ForKind::thread_binding && op->thread_tag.rfind("threadIdx.", 0) == 0;
    ir::IRVisitor::visit(op);
  }
  static SharedAccess of(const ir::Stmt& s) {
    SharedAccess a;
    a.visit_stmt(s);
    return a;
  }
  bool touches_any(const std::set<const ir::BufferNode*>& bufs) const {
    for (auto* b : bufs)
      if (reads.count(b) || writes.count(b)) return true;
    return false;
  }
};

class BarrierInserter : public ir::IRMutator {
 protected:
  // A condition on thread indices splits a block; one on block indices or serial loops (a guard
  // of the block grid's last, partial block) holds for all of its threads alike.
  ir::Stmt visit(const ir::IfThenElse* op, const ir::Stmt& s) override {
    const bool divergent =
        ir::uses_var_if(op->condition, [&](const ir::VarNode* v) { return thread_vars_.count(v) > 0; }) ||
        ir::contains_load(op->condition);
    branches_ += divergent;
    ir::Stmt out = IRMutator::visit(op, s);
    branches_ -= divergent;
    return out;
  }
  ir::Stmt barrier() const {
    if (branches_ > 0)
      throw BackendError("nnvm.codegen.divergent_barrier",
                         "shared memory is written and then read under a condition, where a barrier would hang the "
                         "threads that skip it; make the tile divide the extent or compute the shared stage outside "
                         "the guarded loops");
    return ir::Barrier::make();
  }
  ir::Stmt visit(const ir::Seq* op, const ir::Stmt& s) override {
    std::vector<ir::Stmt> out;
    std::set<const ir::BufferNode*> pending;  // written since the last barrier
    bool changed = false;
    for (auto& item : op->seq) {
      ir::Stmt m = mutate(item);
      changed |= !m.same_as(item);
      SharedAccess a = SharedAccess::of(m);
      if (!pending.empty() && a.touches_any(pending)) {
        out.push_back(barrier());
        pending.clear();
        changed = true;
      }
      pending.insert(a.writes.begin(), a.writes.end());
      out.push_back(m);
    }
    return changed ? ir::Seq::make(out) : s;
  }
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    const bool thread = op->for_kind == ir::ForKind::thread_binding && op->thread_tag.rfind("threadIdx.", 0) == 0;
    if (thread) thread_vars_.insert(op->loop_var.get());
    ir::Stmt body = mutate(op->body);
    if (thread) thread_vars_.erase(op->loop_var.get());
    if (op->for_kind != ir::ForKind::thread_binding) {
      SharedAccess a = SharedAccess::of(body);
      bool reads_written = false;
      for (auto* b : a.reads) reads_written |= a.writes.count(b) > 0;
      if (a.thread_loop)
        for (auto* b : a.global_reads) reads_written |= a.global_writes.count(b) > 0;
      if (reads_written) body = ir::Seq::make({body, barrier()});
    }
    if (body.same_as(op->body)) return s;
    return ir::For::make(op->loop_var, op->min, op->extent, op->for_kind, body, op->thread_tag);
  }

 private:
  int branches_ = 0;
  std::set<const ir::VarNode*> thread_vars_;
};

}  // namespace detail

inline ir::Stmt insert_barriers(const ir::Stmt& body) { return detail::BarrierInserter().mutate(body); }

}  // namespace lower
NNVM_END_NAMESPACE
