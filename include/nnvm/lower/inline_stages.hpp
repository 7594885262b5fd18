// Inlining: the per-element body of every stage with reads of compute_inline'd stages
// replaced by those stages' bodies (recursively).
// Requires: inlined stages have no reduction (checked by compute_inline).
// Ensures: no body in the result reads an inlined stage.
#pragma once

#include "nnvm/schedule/schedule.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

using BodyMap = std::unordered_map<const schedule::StageNode*, ir::Expr>;

inline BodyMap inline_stages(const schedule::Schedule& sch) {
  std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*> inlined;
  BodyMap bodies;
  struct Inliner : ir::IRMutator {
    const std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*>& inlined;
    const BodyMap& bodies;
    Inliner(const std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*>& i, const BodyMap& b)
        : inlined(i), bodies(b) {}
    using ir::IRMutator::mutate;
    ir::Expr visit(const ir::ProducerLoad* op, const ir::Expr& e) override {
      ir::Expr r = ir::IRMutator::visit(op, e);
      auto* load = r.as<ir::ProducerLoad>();
      auto it = inlined.find(load->tensor.get());
      if (it == inlined.end()) return r;
      ir::VarMap m;
      for (size_t d = 0; d < it->second->axis.size(); ++d) m[it->second->axis[d].var()] = load->indices[d];
      return ir::substitute(bodies.at(it->second), m);
    }
  };
  // Stages are in producer order, so an inlined producer's body is final before its readers.
  for (auto& st : sch.stages()) {
    bodies[&st.node()] = Inliner(inlined, bodies).mutate(st.node().body);
    if (st.node().attach == schedule::AttachKind::inlined) inlined[st.tensor().get()] = &st.node();
  }
  return bodies;
}

}  // namespace lower
NNVM_END_NAMESPACE
