// The microcontroller family's recipes (schedule_generic.hpp): one thread, no SIMD unless the
// core has it, and RAM as the scarce resource. Every stage keeps plain loops; what a recipe
// decides is which intermediate values get a buffer:
//   - an op's internal injective stages (a conv's padded input, a pool's window sum feeding a
//     division) are computed where they are read when Target::opt_for is size, and keep their
//     buffer (a faster inner loop, more RAM) when it is speed. Stages that call math functions
//     (softmax's exp) keep their buffer either way: recomputing them costs more than it saves;
//   - an out-fusable op followed by elementwise ops (conv + bias + relu) computes each of its
//     output elements inside the epilogue's innermost loop (TVM's compute_at), so its result
//     needs one element of storage instead of a whole tensor.
#pragma once

#include <vector>

#include "nnvm/ir/functor.hpp"
#include "nnvm/schedule/schedule.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// Whether computing `e` again at each use is cheap: no math-library calls.
inline bool calls_no_math(const ir::Expr& e) {
  struct Scan : ir::IRVisitor {
    bool found = false;
    using ir::IRVisitor::visit;
    void visit(const ir::Call* op) override {
      found = true;
      ir::IRVisitor::visit(op);
    }
  } scan;
  scan.visit_expr(e);
  return !scan.found;
}
}  // namespace detail

// The internal stages of the stages computing `outputs` that opt_for size computes in place:
// compute stages that are not outputs, reduce nothing and call no math function.
inline void mcu_inline_intermediates(schedule::Schedule& s, const std::vector<te::Tensor>& outputs,
                                     const target::Target& target) {
  if (target.opt_for != target::OptFor::size) return;
  for (auto& t : te::post_order(outputs)) {
    const te::OperationNode& op = t.op();
    if (op.kind != te::OpKind::compute || !op.reduce_axes.empty() || !detail::calls_no_math(op.body)) continue;
    schedule::Stage st = s[t];
    if (!st.node().is_output && st.node().attach == schedule::AttachKind::root) st.compute_inline();
  }
}

// The fused recipe (ops::FusedScheduleFn) for any out-fusable op on a microcontroller: its one
// output computed element by element in the epilogue's innermost loop.
inline bool mcu_fused_schedule(schedule::Schedule& s, const std::vector<te::Tensor>& outputs, const te::Tensor& epilogue,
                               const target::Target& target) {
  if (outputs.size() != 1 || epilogue.op().axis.empty()) return false;
  mcu_inline_intermediates(s, outputs, target);
  schedule::Stage st = s[outputs[0]];
  if (st.node().attach != schedule::AttachKind::root) return false;
  st.compute_at(s[epilogue], epilogue.op().axis.back());
  return true;
}

}  // namespace ops
NNVM_END_NAMESPACE
