// Run-time index checks for the gathers. ONNX calls an index out of range an error, but a kernel
// cannot fail, so gather kernels clamp such an index into range (and constant indices are
// checked when the graph is built). To make a run-time index an error instead, add_index_checks
// gives the graph one extra output per gather whose indices are computed or given at run time:
// a bool that is true when any index lies outside [-n, n) of the axis it indexes, built from
// ordinary ops (less, greater_or_equal, or, reduce_max), so every back end computes it. After a
// run, raise_index_errors turns a true flag into an error naming the node (nnvmc run
// --index-check=error, its default).
#pragma once

#include <algorithm>
#include <cstdint>

#include "nnvm/graph/infer.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

// One added check: the gather node it guards, and which graph output holds its flag.
struct IndexCheck {
  std::string node;
  size_t output = 0;
};

namespace detail {
// Appends an op node, typed by inference, named `name` (made unique); returns its output 0.
inline Value append_op(Graph& g, const std::string& op, std::vector<Value> inputs, Attrs attrs, std::string name) {
  for (size_t k = 1; g.find(name) != Value::npos; ++k) name = str_cat(name, "_", k);
  Node n;
  n.kind = NodeKind::op;
  n.op = op;
  n.name = std::move(name);
  n.inputs = std::move(inputs);
  n.attrs = std::move(attrs);
  g.nodes.push_back(std::move(n));
  g.nodes.back().types = infer_node(g, g.nodes.back());
  return {g.nodes.size() - 1, 0};
}
inline Value append_constant(Graph& g, std::string name, NDArray data) {
  for (size_t k = 1; g.find(name) != Value::npos; ++k) name = str_cat(name, "_", k);
  Node n;
  n.kind = NodeKind::constant;
  n.name = std::move(name);
  n.types = {TensorType(data.dtype(), data.shape())};
  n.data = std::make_shared<const NDArray>(std::move(data));
  g.nodes.push_back(std::move(n));
  return {g.nodes.size() - 1, 0};
}
// `values` as a 1-D (or, for one value and `scalar`, rank-0) tensor of the index dtype.
inline NDArray index_bounds(DataType t, const std::vector<int64_t>& values, bool scalar) {
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(int64_t(values.size()));
  NDArray a(t, shape);
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == dtype::int32) a.data<int32_t>()[i] = int32_t(std::clamp<int64_t>(values[i], INT32_MIN, INT32_MAX));
    else a.data<int64_t>()[i] = values[i];
  }
  return a;
}
}  // namespace detail

// Adds the checks to `g` (op nodes gather, gather_elements and gather_nd whose indices are not a
// constant and whose indexed extents are known) and returns them, in graph output order.
inline std::vector<IndexCheck> add_index_checks(Graph& g) {
  std::vector<IndexCheck> checks;
  size_t original = g.nodes.size();
  for (size_t i = 0; i < original; ++i) {
    const Node n = g.nodes[i];  // a copy: appending nodes moves the vector
    bool nd = n.op == "gather_nd";
    if (n.kind != NodeKind::op || (n.op != "gather" && n.op != "gather_elements" && !nd)) continue;
    if (n.inputs.size() < 2 || g.node(n.inputs[1]).kind == NodeKind::constant) continue;
    const TensorType data = g.type(n.inputs[0]), idx = g.type(n.inputs[1]);
    bool empty = false;  // no index to check (and nothing for reduce_max to reduce)
    for (auto& e : idx.shape) empty = empty || ir::is_const_int(ir::simplify(e), 0);
    if (empty || (idx.shape.empty() && nd)) continue;
    // The extent each index (or, for gather_nd, each coordinate of the last axis) is checked against.
    std::vector<int64_t> extents;
    std::vector<size_t> axes;
    if (nd) {
      auto k = ir::simplified_const_int(idx.shape.back());
      size_t b = size_t(n.attrs.get_int("batch_dims", 0));
      for (int64_t j = 0; k && j < *k; ++j) axes.push_back(b + size_t(j));
    } else {
      int64_t a = n.attrs.get_int("axis", 0);
      axes.push_back(size_t(a < 0 ? a + int64_t(data.shape.size()) : a));
    }
    bool known = !axes.empty();
    for (size_t a : axes) {
      std::optional<int64_t> c = a < data.shape.size() ? ir::simplified_const_int(data.shape[a]) : std::nullopt;
      known = known && c;
      if (c) extents.push_back(*c);
    }
    if (!known) continue;
    std::vector<int64_t> lows;
    for (int64_t e : extents) lows.push_back(-e);
    std::string base = n.name + "/index_check";
    Value lo = detail::append_constant(g, base + "/low", detail::index_bounds(idx.dtype, lows, !nd));
    Value hi = detail::append_constant(g, base + "/high", detail::index_bounds(idx.dtype, extents, !nd));
    Value below = detail::append_op(g, "less", {n.inputs[1], lo}, {}, base + "/below");
    Value above = detail::append_op(g, "greater_or_equal", {n.inputs[1], hi}, {}, base + "/above");
    Value outside = detail::append_op(g, "or", {below, above}, {}, base + "/outside");
    // One flag for all indices (a rank-0 index is its own flag).
    Value any = idx.shape.empty() ? outside
                                  : detail::append_op(g, "reduce_max", {outside}, Attrs().set_int("keepdims", 0), base);
    checks.push_back({n.name, g.outputs.size()});
    g.outputs.push_back(any);
  }
  return checks;
}

// UserError "nnvm.run.index_range" naming the first gather whose flag is set in `outputs` (a
// run's outputs of the graph add_index_checks changed).
inline void raise_index_errors(const std::vector<IndexCheck>& checks, const std::vector<NDArray>& outputs,
                               const std::string& graph_name = "") {
  for (auto& c : checks) {
    const NDArray& flag = outputs.at(c.output);
    if (flag.numel() > 0 && static_cast<const uint8_t*>(flag.raw())[0] != 0)
      throw UserError("nnvm.run.index_range",
                      "an index computed or given at run time lies outside its axis (ONNX: an error; "
                      "--index-check=clamp clamps it instead)",
                      {"graph " + printable(graph_name), "node " + printable(c.node), "input indices"});
  }
}

}  // namespace graph
NNVM_END_NAMESPACE
