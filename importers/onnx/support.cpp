#include "support.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "adapters.hpp"
#include "attributes.hpp"
#include "nnvm/onnx/dtype_codes.hpp"
#include "tensor.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import {

namespace detail {

namespace {

// The element type the model declares for each value it describes (inputs, outputs, value_info,
// initializers), for the dtypes column of a report.
std::map<std::string, int64_t> declared_types(const ::onnx::GraphProto& g) {
  std::map<std::string, int64_t> out;
  auto add = [&](const ::onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type()) out[v.name()] = v.type().tensor_type().elem_type();
  };
  for (auto& v : g.input()) add(v);
  for (auto& v : g.output()) add(v);
  for (auto& v : g.value_info()) add(v);
  for (auto& t : g.initializer()) out[t.name()] = t.data_type();
  return out;
}

std::string input_dtypes(const ::onnx::NodeProto& n, const std::map<std::string, int64_t>& types) {
  std::string s;
  for (auto& in : n.input())
    if (auto it = types.find(in); !in.empty() && it != types.end())
      s += str_cat(s.empty() ? "" : ", ", in, ": ", code_name(it->second));
  return s;
}

// Constant carries its value in exactly one of these attributes.
const std::set<std::string>& constant_value_attrs() {
  static const std::set<std::string> names = {"value",        "value_float",  "value_floats",  "value_int",
                                              "value_ints",   "value_string", "value_strings", "sparse_value"};
  return names;
}

std::string unsupported_constant(const ::onnx::NodeProto& n) {
  for (auto& a : n.attribute()) {
    if (a.name() == "value_string" || a.name() == "value_strings") return "string constants are not supported";
    if (a.name() == "sparse_value") return "sparse constants are not supported";
    if (a.name() == "value" && a.has_t())
      if (std::string why = unsupported_dtype(a.t().data_type()); !why.empty()) return "the constant's " + why;
  }
  return "";
}

}  // namespace

bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

std::string qualified_op_type(const ::onnx::NodeProto& n) {
  return is_default_domain(n.domain()) ? n.op_type() : n.domain() + ":" + n.op_type();
}

int64_t default_opset(const ::onnx::ModelProto& m) {
  for (auto& o : m.opset_import())
    if (is_default_domain(o.domain())) return o.version();
  return 1;
}

std::string node_label(const ::onnx::NodeProto& n, size_t index) {
  if (!n.name().empty()) return n.name();
  for (auto& o : n.output())
    if (!o.empty()) return o;
  return str_cat("#", index);
}

SupportReport analyze(const ::onnx::ModelProto& m, const ops::OpRegistry& registry) {
  SupportReport r{.format = "ONNX", .default_domain = "ai.onnx"};
  r.ir_version = m.ir_version();
  r.producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  for (auto& o : m.opset_import()) r.opsets[is_default_domain(o.domain()) ? "" : o.domain()] = o.version();
  const ::onnx::GraphProto& g = m.graph();
  int64_t opset = default_opset(m);
  if (opset < oldest_opset || opset > newest_opset)
    r.items.push_back({.opset = opset,
                       .reason = str_cat("the model's default-domain opset is ", opset, "; nnvm imports opsets ",
                                         oldest_opset, " to ", newest_opset)});

  std::set<std::string> initializers;
  for (auto& t : g.initializer()) {
    initializers.insert(t.name());
    if (std::string why = unsupported_dtype(t.data_type()); !why.empty())
      r.items.push_back({.node = t.name(), .opset = opset, .dtypes = code_name(t.data_type()),
                         .reason = "initializer " + why});
  }
  for (auto& t : g.sparse_initializer())
    r.items.push_back({.node = t.values().name(), .opset = opset, .reason = "sparse initializers are not supported"});
  // A sequence of tensors is taken (its length and element shapes are given at import), and an
  // optional of either (whether it is empty is given at import); maps and sequences or optionals
  // of anything else are not.
  auto tensor_of = [](const ::onnx::TypeProto& type) -> const ::onnx::TypeProto_Tensor* {
    const ::onnx::TypeProto& t = type.has_optional_type() ? type.optional_type().elem_type() : type;
    if (t.has_tensor_type()) return &t.tensor_type();
    if (t.has_sequence_type() && t.sequence_type().elem_type().has_tensor_type())
      return &t.sequence_type().elem_type().tensor_type();
    return nullptr;
  };
  auto note_kind = [&](const ::onnx::ValueInfoProto& v) {
    if (v.type().has_optional_type()) r.optionals.insert(v.name());
    if (v.type().has_sequence_type() ||
        (v.type().has_optional_type() && v.type().optional_type().elem_type().has_sequence_type()))
      r.sequences.insert(v.name());
  };
  for (auto& in : g.input()) {
    if (initializers.count(in.name())) continue;
    r.inputs.push_back(in.name());
    note_kind(in);
    const ::onnx::TypeProto_Tensor* t = tensor_of(in.type());
    if (!t)
      r.items.push_back({.node = in.name(), .opset = opset,
                         .reason = "graph input is neither a tensor, a sequence of tensors nor an optional of one (maps "
                                   "are not supported)"});
    else if (std::string why = unsupported_dtype(t->elem_type()); !why.empty())
      r.items.push_back({.node = in.name(), .opset = opset, .dtypes = code_name(t->elem_type()),
                         .reason = "graph input " + why});
  }
  for (auto& out : g.output()) {
    r.outputs.push_back(out.name());
    note_kind(out);
  }

  std::set<std::string> functions;
  for (auto& f : m.functions()) functions.insert(f.domain() + ":" + f.name());
  auto types = declared_types(g);
  // Visits the nodes of `graph`, and of the subgraphs in it that the importer imports, to
  // a bounded depth so a hostile file cannot exhaust the stack.
  std::function<void(const ::onnx::GraphProto&, int)> visit = [&](const ::onnx::GraphProto& graph, int depth) {
    if (depth > 0)  // the main graph's initializers were checked above
      for (auto& t : graph.initializer())
        if (std::string why = unsupported_dtype(t.data_type()); !why.empty())
          r.items.push_back({.node = t.name(), .opset = opset, .dtypes = code_name(t.data_type()),
                             .reason = "initializer " + why});
    for (int i = 0; i < graph.node_size(); ++i) {
      const ::onnx::NodeProto& n = graph.node(i);
      bool ours = is_default_domain(n.domain());
      r.op_counts[ours ? n.op_type() : n.domain() + ":" + n.op_type()] += 1;
      int64_t node_opset = ours ? opset : (r.opsets.count(n.domain()) ? r.opsets[n.domain()] : 0);
      auto report = [&](std::string reason) {
        r.items.push_back({.node = node_label(n, size_t(i)), .op = n.op_type(), .domain = ours ? "" : n.domain(),
                           .opset = node_opset, .dtypes = input_dtypes(n, types), .reason = std::move(reason)});
      };
      if (functions.count(n.domain() + ":" + n.op_type())) {
        report("model-local functions are not supported");
        continue;
      }
      std::vector<const VersionAdapter*> steps = find_adapters(qualified_op_type(n), node_opset);
      bool built = std::any_of(steps.begin(), steps.end(), [](auto* step) { return step->builds; });
      if (!ours && !built) {
        report(str_cat("domain '", n.domain(), "' is not supported (only the default ONNX domain and some operators of "
                                               "ai.onnx.ml and ai.onnx.preview.training are)"));
        continue;
      }
      for (auto& a : n.attribute()) {
        if (std::string why = unsupported_attribute(a, qualified_op_type(n)); !why.empty()) report(why);
        if (is_imported_subgraph(a, qualified_op_type(n))) {
          if (depth >= max_subgraph_depth)
            report(str_cat("subgraphs nest deeper than ", max_subgraph_depth, " levels"));
          else
            visit(a.g(), depth + 1);
        }
        // A data type attribute (Cast's `to`) decides an output's type, so an unsupported one is a
        // model-level gap (before opset 6 Cast's `to` is a name, which the Cast adapter checks).
        if (std::string why = unsupported_dtype_attribute(n.op_type(), a); !why.empty()) report(why);
      }
      if (n.op_type() == "Constant") {
        if (std::string why = unsupported_constant(n); !why.empty()) report(why);
        continue;
      }
      // The importer's own (control nodes, graph/control.hpp, sequences and optionals); their
      // subgraphs were visited.
      if (ours && (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan" || is_sequence_op(n.op_type()) ||
                   is_optional_op(n.op_type())))
        continue;
      std::string why;
      for (auto* step : steps)
        if (step->unsupported && why.empty()) why = step->unsupported(n);
      if (!why.empty()) {
        report(why);
        continue;
      }
      std::vector<std::string> needed;
      if (!built) needed.push_back(adapted_op_type(n.op_type(), steps));
      for (auto* step : steps) needed.insert(needed.end(), step->also_needs.begin(), step->also_needs.end());
      for (auto& op : needed)
        if (!registry.find_by_importer_name("onnx:" + op))
          report(op == n.op_type() ? str_cat("no nnvm op answers to onnx:", op)
                                   : str_cat("opset ", opset, " ", n.op_type(), " is imported as onnx:", op,
                                             ", which no nnvm op answers to"));
    }
  };
  visit(g, 0);
  return r;
}

}  // namespace detail

}  // namespace onnx_import
NNVM_END_NAMESPACE
