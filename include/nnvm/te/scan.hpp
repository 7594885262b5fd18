// Scans (recurrences), after TVM's te.scan. A scan is a tensor [T, ...] whose rows 0..k-1 are
// `init`'s and whose row t >= k is `update`'s row t, where `update` (and the computes it reads)
// may read rows t-1 .. t-k of the scan itself through a state placeholder:
//
//   auto h_state = te::scan_state({T, B, H}, dtype::float32, "h.state");
//   auto rec = te::compute({T, B, H}, [&](auto& v) { return te::sum(h_state(v[0] - 1, v[1], r) * R(v[2], r), {r}); });
//   auto step = te::compute({T, B, H}, [&](auto& v) { return ir::call(ir::CallOp::tanh, xw(v[0], v[1], v[2]) + rec(v[0], v[1], v[2])); });
//   auto h = te::scan(h0, step, h_state, "h");  // h0: [1, B, H]
//
// The schedule computes the stages between state and update once per step, inside one serial
// loop over t (schedule/schedule.hpp); lowering reads the state from the scan's own output.
//
// Several states step together in one loop, as TVM's te.scan allows (LSTM's h and c): each has
// its own init, update and state, and every update may read every state. The result is one
// tensor per state:
//
//   auto hc = te::scan({h0, c0}, {h_next, c_next}, {h_state, c_state}, {"h", "c"});
#pragma once

#include <optional>
#include <set>

#include "nnvm/ir/simplify.hpp"
#include "nnvm/te/operation.hpp"

NNVM_BEGIN_NAMESPACE
namespace te {

// The placeholder through which a scan's steps read its earlier rows. Its shape and dtype are
// the scan's ([T, ...]); pass it to exactly one te::scan. It is never a kernel argument.
inline Tensor scan_state(std::vector<Expr> shape, DataType dtype, std::string name = "state") {
  return placeholder(std::move(shape), dtype, std::move(name));
}

namespace detail {

// Checks the steps' reads of the state and collects the computes that read it, directly or
// through other computes (the scan's body, producers first).
class ScanDependence {
 public:
  ScanDependence(const std::string& scan, std::set<const TensorNode*> states, int64_t k)
      : scan_(scan), states_(std::move(states)), k_(k) {}

  bool depends(const std::shared_ptr<const TensorNode>& t) {
    if (states_.count(t.get())) return true;
    if (t->op->kind == OpKind::placeholder) return false;
    auto it = depends_.find(t.get());
    if (it != depends_.end()) return it->second;
    bool d = false;
    for (auto& in : t->op->inputs) d = depends(in) || d;
    if (d) body_.push_back(t);
    return depends_[t.get()] = d;
  }

  // Every read of a state reachable from `t` (row t - `offset` of the step) must be at a
  // row t - j with j in [1, k]; rows of the computes in between are followed by their offset.
  void check(const TensorNode* t, int64_t offset) {
    if (!checked_.insert({t, offset}).second) return;
    if (t->op->axis.empty())
      throw UserError("nnvm.te.scan_dependence",
                      str_cat("compute ", t->name, " reads the state of scan ", scan_, " but has no time axis; its axis 0 must be the step"),
                      {"scan " + scan_});
    const Expr step = t->op->axis[0].var();
    for (auto* load : loads(t->op->body)) {
      auto in = as_tensor(load->tensor);
      if (!depends(in)) continue;
      auto read = [&] {
        return str_cat(ir::to_string(ir::make_expr<ir::ProducerLoad>(load->dtype, load->tensor, load->indices)), " in ", t->name);
      };
      std::optional<int64_t> back = ir::simplified_const_int(step - load->indices[0]);
      if (!back)
        throw UserError("nnvm.te.scan_dependence",
                        str_cat("scan ", scan_, ": ", read(), " reads row ", ir::to_string(load->indices[0]), " of ", in->name,
                                "; a step may read rows only at its own step minus a constant"),
                        {"scan " + scan_});
      if (!states_.count(in.get())) {
        check(in.get(), offset + *back);
        continue;
      }
      int64_t j = offset + *back;
      if (j < 1 || j > k_)
        throw UserError("nnvm.te.scan_dependence",
                        str_cat("scan ", scan_, ": ", read(), " reads the state ",
                                j == 0 ? "at its own step" : str_cat(std::abs(j), std::abs(j) == 1 ? " step" : " steps", j < 0 ? " ahead" : " back"),
                                "; with ", k_, " initial row", k_ == 1 ? "" : "s", " a step may read only a state 1",
                                k_ > 1 ? str_cat(" to ", k_, " steps") : std::string(" step"), " back, which earlier steps wrote"),
                        {"scan " + scan_});
    }
  }

  const std::vector<std::shared_ptr<const TensorNode>>& body() const { return body_; }

 private:
  static std::vector<const ir::ProducerLoad*> loads(const Expr& body) {
    struct Finder : ir::IRVisitor {
      std::vector<const ir::ProducerLoad*> out;
      void visit(const ir::ProducerLoad* op) override {
        out.push_back(op);
        ir::IRVisitor::visit(op);
      }
    } f;
    f.visit_expr(body);
    return f.out;
  }

  std::string scan_;
  std::set<const TensorNode*> states_;
  int64_t k_;
  std::unordered_map<const TensorNode*, bool> depends_;
  std::set<std::pair<const TensorNode*, int64_t>> checked_;
  std::vector<std::shared_ptr<const TensorNode>> body_;
};

}  // namespace detail

// The scan of several states stepped together: output i is [T, ...] (state i's shape) with rows
// [0, k) from init[i] ([k, ...]; k a constant >= 1, the same for every state) and row t in
// [k, T) from update[i]'s row t. T is the same for every state. update[i] and the computes it
// reads may read every state (from scan_state) at rows t-1 .. t-k, where t is their axis 0.
// names[i] names output i (default "scan.<i>"); `axis_name` names the one step variable
// (default `<names[0]>.t`). Checks: nnvm.te.scan_states (counts), nnvm.te.scan_state,
// nnvm.te.scan_shape, nnvm.te.scan_dtype, nnvm.te.scan_dependence.
inline std::vector<Tensor> scan(const std::vector<Tensor>& init, const std::vector<Tensor>& update,
                                const std::vector<Tensor>& state, std::vector<std::string> names = {},
                                std::string axis_name = "") {
  const size_t n = state.size();
  std::string label;
  for (size_t i = 0; i < names.size(); ++i) label += (i ? "+" : "") + names[i];
  std::vector<std::string> ctx{"scan " + (label.empty() ? std::string("scan") : label)};
  if (n == 0 || init.size() != n || update.size() != n || (!names.empty() && names.size() != n))
    throw UserError("nnvm.te.scan_states",
                    str_cat("a scan needs one init, one update", names.empty() ? "" : " and one name",
                            " per state; got ", init.size(), " init, ", update.size(), " update, ", n, " state",
                            names.empty() ? "" : str_cat(" and ", names.size(), " names")),
                    ctx);
  if (names.empty())
    for (size_t i = 0; i < n; ++i) names.push_back(n == 1 ? "scan" : str_cat("scan.", i));
  if (label.empty()) label = names[0];
  if (axis_name.empty()) axis_name = names[0] + ".t";
  auto shape_str = [](const Tensor& t) {
    std::string s;
    for (auto& e : t.shape()) s += (s.empty() ? "" : ", ") + ir::to_string(e);
    return t.name() + "[" + s + "]";
  };
  std::set<const TensorNode*> states;
  std::optional<int64_t> k;
  for (size_t i = 0; i < n; ++i) {
    const Tensor &in = init[i], &up = update[i], &st = state[i];
    if (st.op().kind != OpKind::placeholder)
      throw UserError("nnvm.te.scan_state", str_cat("state ", st.name(), " must be a scan_state placeholder"), ctx);
    if (!states.insert(st.get()).second)
      throw UserError("nnvm.te.scan_state", str_cat("state ", st.name(), " is given twice; each state is its own placeholder"),
                      ctx);
    if (up.op().kind == OpKind::placeholder)
      throw UserError("nnvm.te.scan_shape", str_cat("update ", up.name(), " is a placeholder; it must be computed"), ctx);
    if (in.dtype() != st.dtype() || up.dtype() != st.dtype())
      throw UserError("nnvm.te.scan_dtype",
                      str_cat("init ", in.name(), " is ", in.dtype(), ", update ", up.name(), " is ", up.dtype(),
                              " and state ", st.name(), " is ", st.dtype(), "; they must agree"),
                      ctx);
    const int64_t* ki = in.rank() ? ir::as_const_int(in.shape()[0]) : nullptr;
    const int64_t* steps = st.rank() ? ir::as_const_int(st.shape()[0]) : nullptr;
    bool ok = st.rank() >= 1 && in.rank() == st.rank() && up.rank() == st.rank() && ki && *ki >= 1 &&
              (!steps || *ki <= *steps) && ir::same_extent(up.shape()[0], st.shape()[0]);
    for (size_t d = 1; ok && d < st.rank(); ++d)
      ok = ir::same_extent(in.shape()[d], st.shape()[d]) && ir::same_extent(up.shape()[d], st.shape()[d]);
    if (!ok)
      throw UserError("nnvm.te.scan_shape",
                      str_cat("init ", shape_str(in), ", update ", shape_str(up), " and state ", shape_str(st),
                              " do not fit: state and update must be [T, ...] and init [k, ...] with the same trailing "
                              "extents and a constant k in [1, T]"),
                      ctx);
    if (i > 0 && (*ki != *k || !ir::same_extent(st.shape()[0], state[0].shape()[0])))
      throw UserError("nnvm.te.scan_shape",
                      str_cat("state ", shape_str(st), " with init ", shape_str(in), " and state ", shape_str(state[0]),
                              " with init ", shape_str(init[0]),
                              " step together: their steps T and initial rows k must be the same"),
                      ctx);
    k = *ki;
  }
  detail::ScanDependence dep(label, states, *k);
  for (auto& in : init)
    if (dep.depends(in.node_ptr()))
      throw UserError("nnvm.te.scan_dependence", str_cat("init ", in.name(), " reads a state of the scan"), ctx);
  for (auto& up : update) dep.depends(up.node_ptr());
  for (auto& up : update) dep.check(up.get(), 0);

  // The outputs are allocated together and point at each other without owning (scan_output).
  struct Outputs {
    std::vector<TensorNode> nodes;
  };
  auto block = std::make_shared<Outputs>();
  block->nodes.resize(n);
  std::vector<const TensorNode*> members;
  for (auto& node : block->nodes) members.push_back(&node);
  const IterVar step(Var(axis_name), Range{Expr(*k), ir::simplify(state[0].shape()[0] - Expr(*k))}, ir::IterKind::data_par);
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) {
    auto op = std::make_shared<OperationNode>();
    op->kind = OpKind::scan;
    op->name = names[i];
    const auto& shape = state[i].shape();
    std::vector<Expr> idx{step.var()};
    op->axis.push_back(step);
    for (size_t d = 1; d < shape.size(); ++d) {
      Var v(detail::default_axis_name(d - 1, shape.size() - 1));
      op->axis.emplace_back(v, Range{Expr(int64_t(0)), shape[d]}, ir::IterKind::data_par);
      idx.push_back(v);
    }
    op->body = update[i](idx);
    op->inputs = {init[i].node_ptr(), update[i].node_ptr()};
    op->scan_init = init[i].node_ptr();
    op->scan_update = update[i].node_ptr();
    op->scan_state = state[i].node_ptr();
    op->scan_body = dep.body();
    op->scan_outputs = members;
    block->nodes[i] = TensorNode{{names[i], shape, state[i].dtype()}, std::move(op)};
    out.emplace_back(std::shared_ptr<const TensorNode>(block, &block->nodes[i]));
  }
  return out;
}

// The scan of one state [T, ...] whose rows [0, k) are `init` ([k, ...], k a constant >= 1) and
// whose row t in [k, T) is `update`'s row t ([T, ...]). `update` and the computes it reads may
// read `state` (from scan_state, shaped like update) only at rows t-1 .. t-k, where t is their
// axis 0; everything else they read is an ordinary input. `axis_name` names the step variable
// (default `<name>.t`, so the step loop of the lowered kernel says which scan it runs).
inline Tensor scan(const Tensor& init, const Tensor& update, const Tensor& state, std::string name = "scan",
                   std::string axis_name = "") {
  return scan(std::vector<Tensor>{init}, std::vector<Tensor>{update}, std::vector<Tensor>{state},
              std::vector<std::string>{std::move(name)}, std::move(axis_name))[0];
}

}  // namespace te
NNVM_END_NAMESPACE
