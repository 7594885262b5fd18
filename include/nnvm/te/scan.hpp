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
#pragma once

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
  ScanDependence(const std::string& scan, const TensorNode* state, int64_t k) : scan_(scan), state_(state), k_(k) {}

  bool depends(const std::shared_ptr<const TensorNode>& t) {
    if (t.get() == state_) return true;
    if (t->op->kind == OpKind::placeholder) return false;
    auto it = depends_.find(t.get());
    if (it != depends_.end()) return it->second;
    bool d = false;
    for (auto& in : t->op->inputs) d = depends(in) || d;
    if (d) body_.push_back(t);
    return depends_[t.get()] = d;
  }

  // Every read of the state reachable from `t` (row t - `offset` of the step) must be at a
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
      if (in.get() != state_) {
        check(in.get(), offset + *back);
        continue;
      }
      int64_t j = offset + *back;
      if (j < 1 || j > k_)
        throw UserError("nnvm.te.scan_dependence",
                        str_cat("scan ", scan_, ": ", read(), " reads the state ",
                                j == 0 ? "at its own step" : str_cat(std::abs(j), std::abs(j) == 1 ? " step" : " steps", j < 0 ? " ahead" : " back"),
                                "; with ", k_, " initial row", k_ == 1 ? "" : "s", " a step may read only the state 1",
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
  const TensorNode* state_;
  int64_t k_;
  std::unordered_map<const TensorNode*, bool> depends_;
  std::set<std::pair<const TensorNode*, int64_t>> checked_;
  std::vector<std::shared_ptr<const TensorNode>> body_;
};

}  // namespace detail

// The scan [T, ...] whose rows [0, k) are `init` ([k, ...], k a constant >= 1) and whose row
// t in [k, T) is `update`'s row t ([T, ...]). `update` and the computes it reads may read
// `state` (from scan_state, shaped like update) only at rows t-1 .. t-k, where t is their axis
// 0; everything else they read is an ordinary input. `axis_name` names the step variable
// (default `<name>.t`, so the step loop of the lowered kernel says which scan it runs).
inline Tensor scan(const Tensor& init, const Tensor& update, const Tensor& state, std::string name = "scan",
                   std::string axis_name = "") {
  if (axis_name.empty()) axis_name = name + ".t";
  std::vector<std::string> ctx{"scan " + name};
  if (state.op().kind != OpKind::placeholder)
    throw UserError("nnvm.te.scan_state", str_cat("state ", state.name(), " must be a scan_state placeholder"), ctx);
  if (update.op().kind == OpKind::placeholder)
    throw UserError("nnvm.te.scan_shape", str_cat("update ", update.name(), " is a placeholder; it must be computed"), ctx);
  if (init.dtype() != state.dtype() || update.dtype() != state.dtype())
    throw UserError("nnvm.te.scan_dtype",
                    str_cat("init ", init.name(), " is ", init.dtype(), ", update ", update.name(), " is ", update.dtype(),
                            " and state ", state.name(), " is ", state.dtype(), "; they must agree"),
                    ctx);
  auto shape_str = [](const Tensor& t) {
    std::string s;
    for (auto& e : t.shape()) s += (s.empty() ? "" : ", ") + ir::to_string(e);
    return t.name() + "[" + s + "]";
  };
  const int64_t* k = init.rank() ? ir::as_const_int(init.shape()[0]) : nullptr;
  const int64_t* steps = state.rank() ? ir::as_const_int(state.shape()[0]) : nullptr;
  bool ok = state.rank() >= 1 && init.rank() == state.rank() && update.rank() == state.rank() && k && *k >= 1 &&
            (!steps || *k <= *steps) && ir::same_extent(update.shape()[0], state.shape()[0]);
  for (size_t d = 1; ok && d < state.rank(); ++d)
    ok = ir::same_extent(init.shape()[d], state.shape()[d]) && ir::same_extent(update.shape()[d], state.shape()[d]);
  if (!ok)
    throw UserError("nnvm.te.scan_shape",
                    str_cat("init ", shape_str(init), ", update ", shape_str(update), " and state ", shape_str(state),
                            " do not fit: state and update must be [T, ...] and init [k, ...] with the same trailing "
                            "extents and a constant k in [1, T]"),
                    ctx);
  detail::ScanDependence dep(name, state.get(), *k);
  if (dep.depends(init.node_ptr()))
    throw UserError("nnvm.te.scan_dependence", str_cat("init ", init.name(), " reads the state ", state.name()), ctx);
  dep.depends(update.node_ptr());
  dep.check(update.get(), 0);

  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::scan;
  op->name = name;
  std::vector<Expr> idx;
  const auto& shape = state.shape();
  for (size_t d = 0; d < shape.size(); ++d) {
    Var v(d == 0 ? axis_name : detail::default_axis_name(d - 1, shape.size() - 1));
    Range dom = d == 0 ? Range{Expr(*k), ir::simplify(shape[0] - Expr(*k))} : Range{Expr(int64_t(0)), shape[d]};
    op->axis.emplace_back(v, dom, ir::IterKind::data_par);
    idx.push_back(v);
  }
  op->body = update(idx);
  op->inputs = {init.node_ptr(), update.node_ptr()};
  op->scan_init = init.node_ptr();
  op->scan_update = update.node_ptr();
  op->scan_state = state.node_ptr();
  op->scan_body = dep.body();
  return Tensor(std::make_shared<const TensorNode>(TensorNode{{std::move(name), shape, state.dtype()}, std::move(op)}));
}

}  // namespace te
NNVM_END_NAMESPACE
