// ONNX If (at run time), Loop and Scan imported as control nodes (graph/control.hpp): each body
// is a graph of its own, its outer values captured as inputs.
#include "importer_class.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

const ::onnx::GraphProto& Importer::subgraph(const NodeProto& n, const std::string& name) {
  for (auto& a : n.attribute())
    if (a.name() == name && a.has_g()) return a.g();
  throw ImportError("nnvm.onnx.attribute", str_cat(n.op_type(), " has no '", name, "' subgraph"), where_);
}

std::vector<int64_t> Importer::ints_attribute(const NodeProto& n, const std::string& name) {
  for (auto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return {};
}

std::optional<int64_t> Importer::int_attribute(const NodeProto& n, const std::string& name) {
  for (auto& a : n.attribute())
    if (a.name() == name) return a.i();
  return std::nullopt;
}

graph::Value Importer::operand(const NodeProto& n, int k) {
  if (k >= n.input_size() || n.input(k).empty())
    throw ImportError("nnvm.onnx.graph", str_cat(n.op_type(), "'s input ", k, " is missing"), where_);
  if (empty_values_.count(n.input(k))) refuse_empty_value(n.input(k), "an input");
  if (empty_optionals_.count(n.input(k))) refuse_empty_optional(n, n.input(k));
  return *a_->find(n.input(k));  // node_order checked it exists
}

std::vector<std::string> Importer::captured_names(const std::vector<const ::onnx::GraphProto*>& bodies) {
  std::set<std::string> names;
  for (auto* b : bodies)
    for (auto& name : free_names(*b)) names.insert(name);
  std::vector<std::string> out;
  for (auto& name : names) {
    if (empty_values_.count(name)) refuse_empty_value(name, "a value a subgraph reads");
    if (const graph::Value* v = a_->find(name); v && !data(*v)) out.push_back(name);
  }
  return out;
}

std::vector<graph::Value> Importer::values_of(const std::vector<std::string>& names) {
  std::vector<graph::Value> out;
  for (auto& name : names) out.push_back(*a_->find(name));
  return out;
}

std::shared_ptr<const graph::Graph> Importer::import_body(const ::onnx::GraphProto& g, const std::vector<ops::TensorType>& formal,
                                                const std::vector<std::string>& captures, const std::string& what) {
  std::vector<std::string> inner_where = where_;
  inner_where.push_back(what);
  if (size_t(g.input_size()) != formal.size())
    throw ImportError("nnvm.onnx.graph", str_cat(what, " declares ", g.input_size(), " inputs; it takes ", formal.size()),
                      where_);
  importers::GraphAssembly body("onnx", g.name().empty() ? node_name_ + "_body" : g.name(), registry_,
                                FoldBudget{options_.fold_budget_bytes});
  std::set<std::string> available;
  auto bind = [&](const std::string& name, graph::Value v) {
    if (!available.insert(name).second)
      throw ImportError("nnvm.onnx.graph", str_cat(what, " defines '", printable(name), "' twice"), inner_where);
    body.define(name, v);
  };
  for (int k = 0; k < g.input_size(); ++k) {
    const std::string& name = g.input(k).name();
    bind(name, guarded(inner_where, [&] {
           return body.builder().input(body.claim(name.empty() ? str_cat("input", k) : name), formal[size_t(k)].dtype,
                                       formal[size_t(k)].shape);
         }));
  }
  for (auto& name : free_names(g)) {
    const graph::Value* outer = a_->find(name);
    if (!outer || available.count(name)) continue;  // node_order reports a name nobody defines
    const graph::Node& p = a_->graph().node(*outer);
    if (std::find(captures.begin(), captures.end(), name) != captures.end()) continue;
    if (p.kind == graph::NodeKind::constant)
      bind(name, guarded(inner_where, [&] { return body.builder().constant(body.claim(name), p.data); }));
  }
  for (auto& name : captures) {
    ops::TensorType t = a_->graph().type(*a_->find(name));
    bind(name, guarded(inner_where, [&] { return body.builder().input(body.claim(name), t.dtype, t.shape); }));
  }
  for (auto& t : g.initializer()) {
    std::vector<std::string> at = inner_where;
    at.push_back("initializer " + printable(t.name()));
    NDArray data = decode_tensor(t, base_dir_, at);
    bind(t.name(), guarded(at, [&] { return body.builder().constant(body.claim(t.name()), std::move(data)); }));
  }
  importers::GraphAssembly* outer = a_;
  std::vector<std::string> outer_where = where_;
  std::string outer_name = node_name_;
  auto restore = [&] { a_ = outer, where_ = outer_where, node_name_ = outer_name; };
  a_ = &body;
  try {
    for (size_t i : node_order(g, available, inner_where)) build_node(g.node(int(i)), i);
    restore();
    for (auto& o : g.output()) {
      if (empty_values_.count(o.name())) refuse_empty_value(o.name(), what + " output");
      body.output(o.name(), inner_where);
    }
    return std::make_shared<const graph::Graph>(guarded(inner_where, [&] { return body.builder().build(); }));
  } catch (...) {
    restore();
    throw;
  }
}

std::vector<graph::Value> Importer::control(const std::string& op, std::vector<graph::Value> inputs,
                                  std::vector<std::shared_ptr<const graph::Graph>> bodies, size_t outputs,
                                  ops::Attrs attrs, const std::string& suffix) {
  return guarded(where_, [&] {
    return a_->builder().control(op, std::move(inputs), std::move(bodies), outputs, std::move(attrs),
                                 suffix.empty() ? node_name_ : a_->claim(node_name_ + "/" + suffix));
  });
}

std::vector<graph::Value> Importer::runtime_if(const NodeProto& n, graph::Value cond) {
  const ::onnx::GraphProto &then_g = subgraph(n, "then_branch"), &else_g = subgraph(n, "else_branch");
  std::vector<std::string> captures = captured_names({&then_g, &else_g});
  auto then_b = import_body(then_g, {}, captures, "attribute then_branch");
  auto else_b = import_body(else_g, {}, captures, "attribute else_branch");
  std::vector<graph::Value> inputs{cond};
  for (auto& v : values_of(captures)) inputs.push_back(v);
  return control("if", std::move(inputs), {then_b, else_b}, size_t(n.output_size()));
}

std::vector<graph::Value> Importer::import_loop(const NodeProto& n) {
  if (n.input_size() < 2)
    throw ImportError("nnvm.onnx.graph", "Loop takes M, cond and the loop-carried values (M and cond may be empty)",
                      where_);
  const ::onnx::GraphProto& body = subgraph(n, "body");
  std::vector<graph::Value> inputs;
  for (int k = 0; k < 2; ++k) inputs.push_back(n.input(k).empty() ? graph::Value{} : operand(n, k));
  std::vector<ops::TensorType> formal{ops::TensorType(dtype::int64, std::vector<ir::Expr>{}),
                                      ops::TensorType(dtype::boolean, std::vector<ir::Expr>{})};
  for (int k = 2; k < n.input_size(); ++k) {
    inputs.push_back(operand(n, k));
    formal.push_back(type(inputs.back()));
  }
  std::vector<std::string> captures = captured_names({&body});
  auto b = import_body(body, formal, captures, "attribute body");
  for (auto& v : values_of(captures)) inputs.push_back(v);
  size_t carried = size_t(n.input_size() - 2);
  return control("loop", std::move(inputs), {b}, b->outputs.size() - 1,
                 ops::Attrs().set_int("num_carried", int64_t(carried)));
}

std::vector<graph::Value> Importer::import_scan(const NodeProto& n) {
  int64_t s = int_attribute(n, "num_scan_inputs").value_or(-1);
  if (s < 1 || s > n.input_size())
    throw ImportError("nnvm.onnx.attribute",
                      str_cat("Scan's num_scan_inputs is ", s, "; it must be 1 to the input count, ", n.input_size()),
                      where_);
  size_t states = size_t(n.input_size() - s);
  std::vector<graph::Value> inputs;
  for (int k = 0; k < n.input_size(); ++k) inputs.push_back(operand(n, k));
  std::vector<int64_t> in_axes = ints_attribute(n, "scan_input_axes");
  for (size_t k = 0; k < in_axes.size() && k < size_t(s); ++k)
    inputs[states + k] = axis_to_front(inputs[states + k], in_axes[k], str_cat("scan_input_axes[", k, "]"));
  const ::onnx::GraphProto& body = subgraph(n, "body");
  auto outs = scan(n, body, states, inputs, ints_attribute(n, "scan_input_directions"),
                   ints_attribute(n, "scan_output_directions"));
  std::vector<int64_t> out_axes = ints_attribute(n, "scan_output_axes");
  for (size_t k = 0; k < out_axes.size() && states + k < outs.size(); ++k)
    outs[states + k] = front_to_axis(outs[states + k], out_axes[k], str_cat("scan_output_axes[", k, "]"));
  return outs;
}

std::vector<graph::Value> Importer::import_scan8(const NodeProto& n) {
  if (n.input_size() >= 1 && !n.input(0).empty())
    throw ImportError("nnvm.onnx.unsupported",
                      "Scan's sequence_lens (opset 8) is not supported: every sequence must have the full length",
                      where_);
  int64_t s = int_attribute(n, "num_scan_inputs").value_or(-1);
  if (s < 1 || s > n.input_size() - 1)
    throw ImportError("nnvm.onnx.attribute", str_cat("Scan's num_scan_inputs is ", s), where_);
  size_t states = size_t(n.input_size() - 1 - s);
  std::vector<graph::Value> batched;
  for (int k = 1; k < n.input_size(); ++k) batched.push_back(operand(n, k));
  ops::TensorType first = type(batched[0]);
  const int64_t* batch = first.shape.empty() ? nullptr : ir::as_const_int(ir::simplify(first.shape[0]));
  if (!batch)
    throw ImportError("nnvm.onnx.shape", "Scan (opset 8) needs a batch axis of known extent on its inputs", where_);
  const ::onnx::GraphProto& body = subgraph(n, "body");
  std::vector<std::vector<graph::Value>> rows;
  for (int64_t b = 0; b < *batch; ++b) {
    std::vector<graph::Value> inputs;
    graph::Value index = constant(str_cat("batch", b), NDArray::from(std::vector<int64_t>{b}, {}));
    for (size_t k = 0; k < batched.size(); ++k)
      inputs.push_back(op("Gather", {batched[k], index}, ops::Attrs().set_int("axis", 0), str_cat("row", b, "_", k)).at(0));
    rows.push_back(scan(n, body, states, inputs, ints_attribute(n, "directions"), {}, str_cat("row", b)));
  }
  std::vector<graph::Value> outs;
  graph::Value zero = constant("axis0", NDArray::from(std::vector<int64_t>{0}, {1}));
  for (size_t k = 0; k < rows.at(0).size(); ++k) {
    std::vector<graph::Value> parts;
    for (size_t b = 0; b < rows.size(); ++b)
      parts.push_back(op("Unsqueeze", {rows[b][k], zero}, {}, str_cat("out", k, "_row", b)).at(0));
    outs.push_back(parts.size() == 1 ? parts[0] : op("Concat", parts, ops::Attrs().set_int("axis", 0), str_cat("out", k)).at(0));
  }
  return outs;
}

std::vector<graph::Value> Importer::scan(const NodeProto& n, const ::onnx::GraphProto& body, size_t states,
                               std::vector<graph::Value> inputs, std::vector<int64_t> in_dirs, std::vector<int64_t> out_dirs,
                               const std::string& suffix) {
  size_t scans = inputs.size() - states;
  std::vector<ops::TensorType> formal;
  for (size_t k = 0; k < inputs.size(); ++k) {
    formal.push_back(type(inputs[k]));
    if (k >= states && !formal.back().shape.empty()) formal.back().shape.erase(formal.back().shape.begin());
  }
  size_t scan_outputs = size_t(std::max(body.output_size() - int(states), 0));
  for (auto& [dirs, count, name] : {std::tuple{&in_dirs, scans, "scan_input_directions"},
                                    std::tuple{&out_dirs, scan_outputs, "scan_output_directions"}}) {
    if (dirs->empty()) dirs->assign(count, 0);
    if (dirs->size() != count || std::any_of(dirs->begin(), dirs->end(), [](int64_t d) { return d != 0 && d != 1; }))
      throw ImportError("nnvm.onnx.attribute",
                        str_cat("Scan's ", name, " must hold ", count, " values of 0 or 1; it holds ", dirs->size()),
                        where_);
  }
  std::vector<std::string> captures = captured_names({&body});
  auto b = import_body(body, formal, captures, "attribute body");
  for (auto& v : values_of(captures)) inputs.push_back(v);
  return control("scan", std::move(inputs), {b}, b->outputs.size(),
                 ops::Attrs()
                     .set_int("num_carried", int64_t(states))
                     .set_int("num_scan_inputs", int64_t(scans))
                     .set_ints("scan_input_directions", in_dirs)
                     .set_ints("scan_output_directions", out_dirs),
                 suffix);
}

graph::Value Importer::axis_to_front(graph::Value v, int64_t axis, const std::string& what) {
  int64_t r = int64_t(type(v).shape.size());
  int64_t a = checked_axis(axis, r, what);
  if (a == 0) return v;
  std::vector<int64_t> perm{a};
  for (int64_t d = 0; d < r; ++d)
    if (d != a) perm.push_back(d);
  return op("Transpose", {v}, ops::Attrs().set_ints("perm", perm), what).at(0);
}

graph::Value Importer::front_to_axis(graph::Value v, int64_t axis, const std::string& what) {
  int64_t r = int64_t(type(v).shape.size());
  int64_t a = checked_axis(axis, r, what);
  if (a == 0) return v;
  std::vector<int64_t> perm;
  for (int64_t d = 1; d < r; ++d) perm.push_back(d);
  perm.insert(perm.begin() + a, 0);
  return op("Transpose", {v}, ops::Attrs().set_ints("perm", perm), what).at(0);
}

int64_t Importer::checked_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    throw ImportError("nnvm.onnx.attribute", str_cat("Scan's ", what, " is ", axis, " for a rank-", rank, " tensor"),
                      where_);
  return axis < 0 ? axis + rank : axis;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
