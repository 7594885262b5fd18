// Control nodes: ONNX's If, Loop and Scan as nodes of kind NodeKind::control that run graphs of
// their own (Node::bodies). Their operands come first, then one input per outer value a body
// reads (a "capture"): every body takes the captures as its last inputs, in the node's order, so
// use counts, dead code and lifetimes need no special case. Constants a body reads are copied
// into it instead (they fold there).
//
//   op     node inputs                         body inputs                  body outputs
//   "if"   cond, captures                      captures (both branches)     the outputs
//   "loop" M, cond, carried[N], captures       iter, cond, carried, capt.   cond, carried, scan[K]
//   "scan" states[N], scan inputs[S], capt.    states, slices, captures     states, scan[K]
//
// A loop's M (int64 trip count) and cond (bool) may each be left out (an undefined Value). Its
// outputs are the N final carried values, then K scan outputs of M rows each. A scan slices its
// scan inputs along axis 0 (importers transpose other axes there); attrs "scan_input_directions"
// and "scan_output_directions" (1 = last row first) default to 0. Attr "num_carried" is N for
// loop and scan, "num_scan_inputs" is S for scan. Types: graph/infer.hpp (detail::infer_control);
// running: graph/control_runner.hpp.
#pragma once

#include "nnvm/graph/node.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

// A control node's operand counts, from its op, attrs and input and output counts.
struct ControlLayout {
  size_t operands = 0;      // if: 1 (cond); loop: 2 (M, cond); scan: 0
  size_t carried = 0;       // N: loop-carried values or scan states
  size_t scan_inputs = 0;   // S (scan)
  size_t captures = 0;      // C: outer values the bodies read
  size_t scan_outputs = 0;  // K (loop, scan)
  size_t bodies = 1;        // if: 2

  size_t body_inputs() const { return operands == 1 ? captures : (operands == 2 ? 2 : 0) + carried + scan_inputs + captures; }
  size_t body_outputs(size_t node_outputs) const {
    return operands == 1 ? node_outputs : (operands == 2 ? 1 : 0) + carried + scan_outputs;
  }
  // The first capture's position among the node's inputs.
  size_t first_capture() const { return operands + carried + scan_inputs; }
};

namespace detail {
inline int64_t control_count(const Graph& g, const Node& n, const char* attr) {
  int64_t v = n.attrs.get_int(attr, 0);
  if (v < 0 || v > int64_t(n.inputs.size()))
    throw UserError("nnvm.graph.invalid", str_cat(n.op, "'s ", attr, " is ", v, "; it has ", n.inputs.size(), " inputs"),
                    where(g, &n));
  return v;
}
}  // namespace detail

// UserError "nnvm.graph.invalid" when the counts do not fit together.
inline ControlLayout control_layout(const Graph& g, const Node& n) {
  ControlLayout l;
  if (n.op == "if") {
    l.operands = 1, l.bodies = 2;
  } else if (n.op == "loop" || n.op == "scan") {
    l.operands = n.op == "loop" ? 2 : 0;
    l.carried = size_t(detail::control_count(g, n, "num_carried"));
    if (n.op == "scan") l.scan_inputs = size_t(detail::control_count(g, n, "num_scan_inputs"));
    if (l.carried > n.num_outputs())
      throw UserError("nnvm.graph.invalid",
                      str_cat(n.op, " carries ", l.carried, " values but has ", n.num_outputs(), " outputs"),
                      detail::where(g, &n));
    l.scan_outputs = n.num_outputs() - l.carried;
  } else {
    throw UserError("nnvm.graph.invalid", str_cat("control node op '", printable(n.op), "' is not if, loop or scan"),
                    detail::where(g, &n));
  }
  if (n.inputs.size() < l.operands + l.carried + l.scan_inputs)
    throw UserError("nnvm.graph.input_count",
                    str_cat(n.op, " takes at least ", l.operands + l.carried + l.scan_inputs, " inputs, got ",
                            n.inputs.size()),
                    detail::where(g, &n));
  l.captures = n.inputs.size() - l.first_capture();
  return l;
}

namespace detail {
// node.hpp's check_node for a control node: counts, bodies present with matching input and
// output counts (each body validated in turn), operands defined where they must be.
inline void check_control(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  ControlLayout l = control_layout(g, n);
  if (n.bodies.size() != l.bodies)
    throw UserError("nnvm.graph.invalid", str_cat(n.op, " has ", l.bodies, " bod", l.bodies == 1 ? "y" : "ies", ", got ",
                                                  n.bodies.size()),
                    where(g, &n));
  if (n.num_outputs() == 0) throw UserError("nnvm.graph.invalid", str_cat(n.op, " has no outputs"), where(g, &n));
  for (size_t k = 0; k < n.inputs.size(); ++k)
    if (n.inputs[k].defined() || !(n.op == "loop" && k < 2))  // a loop's M and cond are optional
      check_value(g, n.inputs[k], i, &n, str_cat("input ", k));
  for (size_t b = 0; b < n.bodies.size(); ++b) {
    if (!n.bodies[b]) throw UserError("nnvm.graph.invalid", str_cat(n.op, "'s body ", b, " is missing"), where(g, &n));
    const Graph& body = *n.bodies[b];
    size_t ins = body.inputs().size(), outs = body.outputs.size();
    if (ins != l.body_inputs() || outs != l.body_outputs(n.num_outputs()))
      throw UserError("nnvm.graph.invalid",
                      str_cat(n.op, "'s body '", printable(body.name), "' takes ", ins, " inputs and gives ", outs,
                              " outputs; the node needs ", l.body_inputs(), " and ", l.body_outputs(n.num_outputs())),
                      where(g, &n));
    validate(body);
  }
}
}  // namespace detail

// UserError "nnvm.compile.control_flow" naming the first control node of `g`, for the ways of
// running a model that do not carry control nodes yet (`what`: "the deploy artifact", ...).
inline void refuse_control_nodes(const Graph& g, const std::string& what) {
  for (auto& n : g.nodes)
    if (n.kind == NodeKind::control)
      throw UserError("nnvm.compile.control_flow",
                      str_cat(what, " does not carry control nodes (", n.op,
                              ") yet; run the model in process (compile(), nnvmc run) instead"),
                      detail::where(g, &n));
}

}  // namespace graph
NNVM_END_NAMESPACE
