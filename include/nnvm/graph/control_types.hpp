// Type inference for control nodes (graph/control.hpp). A body's input types come from the node's
// actual inputs (a scan slice drops axis 0), so the types a file declares for body inputs never
// matter and a bound batch size reaches the bodies; the body is re-typed and its outputs give the
// node's. Static shapes: a loop-carried value or scan state keeps its type across iterations.
// Included by graph/infer.hpp.
#pragma once

#include "nnvm/graph/infer.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {
namespace detail {

inline bool same_type(const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype || a.shape.size() != b.shape.size()) return false;
  for (size_t d = 0; d < a.shape.size(); ++d)
    if (!ir::is_const_int(ir::simplify(a.shape[d] - b.shape[d]), 0)) return false;
  return true;
}

// `body` with its inputs typed `types`, re-inferred; the same graph when nothing changes.
inline std::shared_ptr<const Graph> retyped_body(const std::shared_ptr<const Graph>& body,
                                                 const std::vector<TensorType>& types) {
  std::vector<size_t> inputs = body->inputs();
  bool same = true;
  for (size_t k = 0; k < inputs.size() && same; ++k) same = same_type(body->nodes[inputs[k]].types[0], types[k]);
  if (same) return body;
  auto copy = std::make_shared<Graph>(*body);
  for (size_t k = 0; k < inputs.size(); ++k) copy->nodes[inputs[k]].types = {types[k]};
  infer_types(*copy);
  return copy;
}

// UserError "nnvm.graph.control_type" unless `t` is one bool or int64 (what a condition or a trip
// count is); ONNX writes both as a scalar or as a [1] tensor.
inline void check_scalar(const Graph& g, const Node& n, const TensorType& t, DataType want, const std::string& what) {
  bool one = t.dtype == want;
  for (auto& e : t.shape) one = one && ir::is_const_int(ir::simplify(e), 1);
  if (!one)
    throw UserError("nnvm.graph.control_type", str_cat(what, " must be one ", want, ", but it is ", to_string(t)),
                    where(g, &n));
}

// A loop's trip count when it is a constant; "nnvm.graph.not_constant" naming the graph input it
// comes from otherwise (nnvmc check binds that input from the test data).
inline int64_t constant_trip_count(const Graph& g, const Node& n) {
  if (!n.inputs[0].defined())
    throw UserError("nnvm.graph.control_type", "a loop with scan outputs needs a trip count (input M)", where(g, &n));
  const Node& p = g.node(n.inputs[0]);
  if (p.kind != NodeKind::constant) {
    std::string from = input_behind(g, n.inputs[0]);
    throw UserError("nnvm.graph.not_constant",
                    str_cat("a loop's trip count M must be known at compile time when the loop has scan outputs (they "
                            "have M rows), but it is ",
                            from.empty() ? "computed at run time" : "computed from graph input " + from),
                    where(g, &n));
  }
  int64_t m = p.data->dtype() == dtype::int64 ? p.data->data<int64_t>()[0] : -1;
  if (m < 0) throw UserError("nnvm.graph.control_type", str_cat("the loop's trip count is ", m), where(g, &n));
  return m;
}

// The output types of control node `n` (of `g`), whose bodies are re-typed in place.
inline std::vector<TensorType> infer_control(const Graph& g, Node& n) {
  ControlLayout l = control_layout(g, n);
  std::vector<TensorType> in = input_types(g, n);
  std::vector<TensorType> captures(in.begin() + ptrdiff_t(l.first_capture()), in.end());
  std::vector<TensorType> out;
  auto body_out = [&](size_t b, size_t k) { return n.bodies[b]->type(n.bodies[b]->outputs[k]); };
  if (n.op == "if") {
    check_scalar(g, n, in[0], dtype::boolean, "if's condition");
    for (auto& b : n.bodies) b = retyped_body(b, captures);
    for (size_t k = 0; k < n.num_outputs(); ++k) {
      TensorType then_t = body_out(0, k), else_t = body_out(1, k);
      if (!same_type(then_t, else_t))
        throw UserError("nnvm.graph.branch_types",
                        str_cat("output ", k, " is ", to_string(then_t), " in the then branch but ", to_string(else_t),
                                " in the else branch; nnvm needs both branches to give the same types"),
                        where(g, &n));
      out.push_back(then_t);
    }
    return out;
  }
  // loop and scan: the carried values' types, then the slices, then the captures.
  const bool loop = n.op == "loop";
  std::vector<TensorType> body_in;
  if (loop) {
    if (n.inputs[0].defined()) check_scalar(g, n, in[0], dtype::int64, "the loop's trip count M");
    if (n.inputs[1].defined()) check_scalar(g, n, in[1], dtype::boolean, "the loop's condition");
    body_in = {TensorType(dtype::int64, std::vector<int64_t>{}), TensorType(dtype::boolean, std::vector<int64_t>{})};
  }
  for (size_t k = 0; k < l.carried; ++k) body_in.push_back(in[l.operands + k]);
  if (!loop && l.scan_inputs == 0)
    throw UserError("nnvm.graph.control_type", "a scan needs at least one scan input (num_scan_inputs)", where(g, &n));
  ir::Expr rows;  // a scan's sequence length, or a loop's M
  for (size_t k = 0; k < l.scan_inputs; ++k) {
    TensorType t = in[l.operands + l.carried + k];
    if (t.shape.empty())
      throw UserError("nnvm.graph.control_type", str_cat("scan input ", k, " is a scalar; it needs an axis to scan"),
                      where(g, &n));
    if (rows.defined() && !ir::is_const_int(ir::simplify(rows - t.shape[0]), 0))
      throw UserError("nnvm.graph.control_type",
                      str_cat("scan input ", k, " has ", ir::to_string(t.shape[0]), " rows, scan input 0 has ",
                              ir::to_string(rows)),
                      where(g, &n));
    rows = t.shape[0];
    t.shape.erase(t.shape.begin());
    body_in.push_back(t);
  }
  body_in.insert(body_in.end(), captures.begin(), captures.end());
  n.bodies[0] = retyped_body(n.bodies[0], body_in);
  const size_t first = loop ? 1 : 0;
  if (loop) check_scalar(*n.bodies[0], n, body_out(0, 0), dtype::boolean, "the body's condition output");
  for (size_t k = 0; k < l.carried; ++k) {
    TensorType before = body_in[(loop ? 2 : 0) + k], after = body_out(0, first + k);
    if (!same_type(before, after))
      throw UserError("nnvm.graph.loop_shape",
                      str_cat(loop ? "loop-carried value " : "scan state ", k, " enters the body as ", to_string(before),
                              " and leaves it as ", to_string(after),
                              "; nnvm needs it to keep its type from iteration to iteration"),
                      where(g, &n));
    out.push_back(before);
  }
  if (loop && l.scan_outputs) rows = ir::Expr(constant_trip_count(g, n));
  for (size_t k = 0; k < l.scan_outputs; ++k) {
    TensorType t = body_out(0, first + l.carried + k);
    t.shape.insert(t.shape.begin(), rows.defined() ? rows : ir::Expr(int64_t(0)));
    check_size(g, n, t, out.size());
    out.push_back(t);
  }
  return out;
}

}  // namespace detail
}  // namespace graph
NNVM_END_NAMESPACE
