// Inlining: the per-element body of every stage with reads of compute_inline'd stages
// replaced by those stages' bodies (recursively), and reads of a scan's state replaced by reads
// of the scan itself (row t-1 of the state is row t-1 of the scan's output, already written).
// Requires: inlined stages have no reduction (checked by compute_inline).
// Ensures: no body in the result reads an inlined stage or a scan state.
#pragma once

#include "nnvm/schedule/schedule.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

using BodyMap = std::unordered_map<const schedule::StageNode*, ir::Expr>;

inline BodyMap inline_stages(const schedule::Schedule& sch) {
  std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*> inlined;
  std::unordered_map<const ir::ProducerNode*, std::shared_ptr<const te::TensorNode>> scan_of_state;
  for (auto& st : sch.stages())
    if (st.tensor().op().kind == te::OpKind::scan) scan_of_state[st.tensor().op().scan_state.get()] = st.tensor().node_ptr();
  BodyMap bodies;
  struct Inliner : ir::IRMutator {
    const std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*>& inlined;
    const BodyMap& bodies;
    const std::unordered_map<const ir::ProducerNode*, std::shared_ptr<const te::TensorNode>>& scans;
    Inliner(const std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*>& i, const BodyMap& b,
            const std::unordered_map<const ir::ProducerNode*, std::shared_ptr<const te::TensorNode>>& s)
        : inlined(i), bodies(b), scans(s) {}
    using ir::IRMutator::mutate;
    ir::Expr visit(const ir::ProducerLoad* op, const ir::Expr& e) override {
      ir::Expr r = ir::IRMutator::visit(op, e);
      auto* load = r.as<ir::ProducerLoad>();
      if (auto s = scans.find(load->tensor.get()); s != scans.end())
        return ir::make_expr<ir::ProducerLoad>(load->dtype, s->second, load->indices);
      auto it = inlined.find(load->tensor.get());
      if (it == inlined.end()) return r;
      ir::VarMap m;
      for (size_t d = 0; d < it->second->axis.size(); ++d) m[it->second->axis[d].var()] = load->indices[d];
      return ir::substitute(bodies.at(it->second), m);
    }
  };
  // Stages are in producer order, so an inlined producer's body is final before its readers.
  for (auto& st : sch.stages()) {
    bodies[&st.node()] = Inliner(inlined, bodies, scan_of_state).mutate(st.node().body);
    if (st.node().attach == schedule::AttachKind::inlined) inlined[st.tensor().get()] = &st.node();
  }
  return bodies;
}

}  // namespace lower
NNVM_END_NAMESPACE
