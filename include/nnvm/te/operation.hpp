// Tensors and the operations that produce them: placeholders (inputs) and computes (a body
// expression over index variables). This is the untyped path; te/dsl.hpp wraps it with
// compile-time rank, dtype and shape checks.
#pragma once

#include <functional>
#include <initializer_list>

#include "nnvm/ir/printer.hpp"
#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace te {

using nnvm::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Range;
using ir::Var;

struct OperationNode;

// A tensor: the IR's producer (name, shape, dtype) and the operation that computes it.
struct TensorNode : ir::ProducerNode {
  std::shared_ptr<const OperationNode> op;  // the producer
};

// The tensor an IR producer is. Every producer in IR is a TensorNode: only the DSL (and the
// schedule's cache and rfactor stages, which are tensors too) makes producer loads.
inline std::shared_ptr<const TensorNode> as_tensor(const std::shared_ptr<const ir::ProducerNode>& p) {
  return std::static_pointer_cast<const TensorNode>(p);
}
inline const TensorNode* as_tensor(const ir::ProducerNode* p) { return static_cast<const TensorNode*>(p); }

// scan: a recurrence (te/scan.hpp), lowered as one serial loop over its first axis.
enum class OpKind : uint8_t { placeholder, compute, scan };

struct OperationNode {
  OpKind kind;
  std::string name;
  // compute only: one data-parallel axis per output dimension, and the body. A body whose top
  // is a Reduce is a reduction; its reduce axes are listed in reduce_axes.
  std::vector<IterVar> axis;
  std::vector<IterVar> reduce_axes;
  Expr body;
  // The tensors the body reads, in first-use order (a scan: init, then update).
  std::vector<std::shared_ptr<const TensorNode>> inputs;
  // scan only (te/scan.hpp): axis[0] runs over the steps [k, T) and body reads update's row
  // there. scan_state is the placeholder through which the steps read earlier rows of this
  // scan's output; scan_body lists the computes between the scan's states and its updates
  // (producers first), which run once per step. A scan of several states is one output per
  // state, each with its own op; the ops share axis[0] (one step loop) and scan_body, and
  // scan_outputs lists every output of the scan in order (this one included). The outputs are
  // allocated together, so these plain pointers live as long as any of them (te::scan_output).
  std::shared_ptr<const TensorNode> scan_init, scan_update, scan_state;
  std::vector<std::shared_ptr<const TensorNode>> scan_body;
  std::vector<const TensorNode*> scan_outputs;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const TensorNode> n) : node_(std::move(n)) {}

  bool defined() const { return node_ != nullptr; }
  const TensorNode* get() const { return node_.get(); }
  const TensorNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const TensorNode>& node_ptr() const { return node_; }
  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  size_t rank() const { return node_->shape.size(); }
  const std::vector<Expr>& shape() const { return node_->shape; }
  const OperationNode& op() const { return *node_->op; }
  bool same_as(const Tensor& o) const { return node_ == o.node_; }

  // Element access: builds a read of this tensor at `indices` (int64 expressions).
  Expr operator()(std::vector<Expr> indices) const {
    if (indices.size() != rank())
      throw UserError("nnvm.te.rank_mismatch",
                      str_cat("tensor ", name(), " has rank ", rank(), " but is indexed with ",
                              indices.size(), indices.size() == 1 ? " index" : " indices"));
    for (auto& i : indices) {
      if (!i.dtype().is_int() || !i.dtype().is_scalar())
        throw UserError("nnvm.te.index_dtype", str_cat("index of tensor ", name(), " is ", i.dtype(),
                                                       "; indices must be scalar integers"));
      if (i.dtype() != dtype::index) i = ir::cast(dtype::index, i);
    }
    return ir::make_expr<ir::ProducerLoad>(dtype(), node_, std::move(indices));
  }
  template <class... I>
    requires(sizeof...(I) > 0 && (std::is_convertible_v<I, Expr> && ...))
  Expr operator()(I&&... i) const {
    return (*this)(std::vector<Expr>{Expr(std::forward<I>(i))...});
  }

 private:
  std::shared_ptr<const TensorNode> node_;
};

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.name(); }

namespace detail {
inline void check_shape(const std::string& name, const std::vector<Expr>& shape) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!shape[d].defined() || !shape[d].dtype().is_int() || !shape[d].dtype().is_scalar())
      throw UserError("nnvm.te.shape_dtype",
                      str_cat("extent of dimension ", d, " of tensor ", name, " must be a scalar integer"));
    // Zero is allowed: empty tensors (ONNX's empty sets, a Slice that selects nothing) lower to
    // loops that run no iterations.
    if (auto* c = ir::as_const_int(shape[d]); c && *c < 0)
      throw UserError("nnvm.te.shape_negative",
                      str_cat("extent of dimension ", d, " of tensor ", name, " is ", *c, "; extents must be non-negative"));
  }
}
inline std::vector<Expr> to_index_dtype(std::vector<Expr> shape) {
  for (auto& e : shape)
    if (e.defined() && e.dtype().is_int() && e.dtype() != dtype::index) e = ir::cast(dtype::index, e);
  return shape;
}
// Tensors read by `body`, in first-use order.
inline std::vector<std::shared_ptr<const TensorNode>> collect_inputs(const Expr& body) {
  struct Collector : ir::IRVisitor {
    std::vector<std::shared_ptr<const TensorNode>> out;
    void visit(const ir::ProducerLoad* op) override {
      bool seen = false;
      for (auto& t : out) seen |= t == op->tensor;
      if (!seen) out.push_back(as_tensor(op->tensor));
      ir::IRVisitor::visit(op);
    }
  } c;
  c.visit_expr(body);
  return c.out;
}
inline std::string default_axis_name(size_t d, size_t rank) {
  static const char* const names[] = {"i", "j", "k", "l", "m", "n"};
  return rank <= 6 ? names[d] : "i" + std::to_string(d);
}
}  // namespace detail

// An input tensor of the given shape and element type. Extents may be symbolic `Var`s.
inline Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  shape = detail::to_index_dtype(std::move(shape));
  detail::check_shape(name, shape);
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::placeholder;
  op->name = name;
  return Tensor(std::make_shared<const TensorNode>(TensorNode{{std::move(name), std::move(shape), dtype}, std::move(op)}));
}

// A reduction axis over [min, min + extent).
inline IterVar reduce_axis(Expr extent, std::string name = "r", Expr min = Expr(int64_t(0))) {
  if (extent.dtype() != dtype::index) extent = ir::cast(dtype::index, extent);
  // An empty reduction (extent 0) yields its combiner's initial value.
  if (auto* c = ir::as_const_int(extent); c && *c < 0)
    throw UserError("nnvm.te.reduce_extent", str_cat("reduction axis ", name, " has extent ", *c, "; it must be non-negative"));
  return IterVar(Var(std::move(name)), Range{std::move(min), std::move(extent)}, ir::IterKind::reduce);
}

// The tensor whose element at index vector `axis` is `fbody(axis)`; `axis_names` name the
// index variables (defaults i, j, k, ...).
inline Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& fbody,
                      std::string name = "compute", std::vector<std::string> axis_names = {}) {
  shape = detail::to_index_dtype(std::move(shape));
  detail::check_shape(name, shape);
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::compute;
  op->name = name;
  std::vector<Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string vn = d < axis_names.size() ? axis_names[d] : detail::default_axis_name(d, shape.size());
    vars.emplace_back(vn);
    op->axis.emplace_back(vars.back(), Range{Expr(int64_t(0)), shape[d]}, ir::IterKind::data_par);
  }
  Expr body = fbody(vars);
  if (!body.defined()) throw UserError("nnvm.te.empty_body", str_cat("compute ", name, " returned no expression"));
  if (body.dtype().lanes != 1)
    throw UserError("nnvm.te.vector_body", str_cat("compute ", name, " must return a scalar expression"));
  // A reduction may only be the top of the body: anything else has no defined loop placement.
  struct NestedReduce : ir::IRVisitor {
    int depth = 0;
    bool nested = false;
    void visit(const ir::Reduce* r) override {
      nested |= depth > 0;
      ++depth;
      ir::IRVisitor::visit(r);
      --depth;
    }
  } check;
  check.depth = 1;  // every Reduce the visitor meets lies below the top of the body
  if (auto* r = body.as<ir::Reduce>()) {
    op->reduce_axes = r->axes;
    check.visit_expr(r->source);
  } else {
    check.visit_expr(body);
  }
  if (check.nested)
    throw UserError("nnvm.te.nested_reduce",
                    str_cat("compute ", name, " has a reduction inside a larger expression; compute the "
                                              "reduction as its own tensor"));
  op->inputs = detail::collect_inputs(body);
  op->body = body;
  DataType dt = body.dtype();
  return Tensor(std::make_shared<const TensorNode>(TensorNode{{std::move(name), std::move(shape), dt}, std::move(op)}));
}

// Untyped reductions over one or more axes (the typed DSL has its own spelling).
inline Expr sum(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::sum, std::move(source), std::move(axes), std::move(init));
}
inline Expr prod(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::prod, std::move(source), std::move(axes), std::move(init));
}
inline Expr max_reduce(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::max, std::move(source), std::move(axes), std::move(init));
}
inline Expr min_reduce(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::min, std::move(source), std::move(axes), std::move(init));
}

// Output `i` of the scan that `t` is an output of (te/scan.hpp), sharing `t`'s ownership.
inline Tensor scan_output(const Tensor& t, size_t i) {
  return Tensor(std::shared_ptr<const TensorNode>(t.node_ptr(), t.op().scan_outputs.at(i)));
}

// All operations that `outputs` depend on, producers before consumers (deterministic). The
// outputs of a scan of several states come together, in their order, where the first is met.
inline std::vector<Tensor> post_order(const std::vector<Tensor>& outputs) {
  std::vector<Tensor> order;
  std::unordered_set<const TensorNode*> visited;
  std::function<void(const std::shared_ptr<const TensorNode>&)> visit = [&](const auto& t) {
    if (!visited.insert(t.get()).second) return;
    const auto& group = t->op->scan_outputs;
    if (group.size() <= 1) {
      for (auto& in : t->op->inputs) visit(in);
      order.emplace_back(t);
      return;
    }
    for (auto* member : group) {
      visited.insert(member);
      for (auto& in : member->op->inputs) visit(in);
    }
    for (size_t i = 0; i < group.size(); ++i) order.push_back(scan_output(Tensor(t), i));
  };
  for (auto& o : outputs) visit(o.node_ptr());
  return order;
}

}  // namespace te

namespace ir {
// A placeholder prints as `placeholder A: float32[64, n]`, a compute as its definition,
// `C(i, j) = sum(A(i, k)*B(k, j), axis=[k])`. Beside ir::to_string's other overloads, so one
// name prints everything; defined here because the IR knows nothing of operations.
// A scan prints as its step with the rows it starts from and the state it reads,
// `h(t, i, j) = U(t, i, j) for t in [1, 7), rows [0, 1) from h0, state h.state`.
inline std::string to_string(const te::Tensor& t) {
  detail::Printer p;
  if (t.op().kind == te::OpKind::placeholder) p.print_placeholder(t.get());
  else p.print_definition(t.get(), t.op().axis, t.op().body);
  if (t.op().kind != te::OpKind::scan) return p.str();
  const ir::Range& steps = t.op().axis[0]->dom;
  return str_cat(p.str(), " for ", t.op().axis[0].name(), " in [", to_string(steps.min), ", ",
                 to_string(t.shape()[0]), "), rows [0, ", to_string(steps.min), ") from ",
                 t.op().scan_init->name, ", state ", t.op().scan_state->name);
}
}  // namespace ir
NNVM_END_NAMESPACE
