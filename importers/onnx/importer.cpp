#include "importer_class.hpp"

#include <filesystem>

NNVM_BEGIN_NAMESPACE
namespace onnx_import {

namespace detail {

// The names `g`'s nodes (and the subgraphs in them) read that `g` does not define: the outer
// values a subgraph captures. `depth` is bounded by analyze() (max_subgraph_depth).
std::set<std::string> free_names(const ::onnx::GraphProto& g) {
  std::set<std::string> defined, used;
  for (auto& t : g.initializer()) defined.insert(t.name());
  for (auto& in : g.input()) defined.insert(in.name());
  for (auto& n : g.node()) {
    defined.insert(n.output().begin(), n.output().end());
    for (auto& in : n.input())
      if (!in.empty()) used.insert(in);
    for (auto& a : n.attribute())
      if (a.has_g())
        for (auto& name : free_names(a.g())) used.insert(name);
  }
  std::set<std::string> out;
  for (auto& name : used)
    if (!defined.count(name)) out.insert(name);
  return out;
}

// importers::topological_order over the graph's nodes. A node with subgraphs (If) also waits for
// the outer values its subgraphs read.
std::vector<size_t> node_order(const ::onnx::GraphProto& g, const std::set<std::string>& available,
                               const std::vector<std::string>& where) {
  std::vector<importers::NodeValues> nodes(size_t(g.node_size()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeProto& n = g.node(int(i));
    nodes[i].inputs.assign(n.input().begin(), n.input().end());
    for (auto& a : n.attribute())
      if (a.has_g())
        for (auto& name : free_names(a.g()))
          if (std::find(nodes[i].inputs.begin(), nodes[i].inputs.end(), name) == nodes[i].inputs.end())
            nodes[i].inputs.push_back(name);
    nodes[i].outputs.assign(n.output().begin(), n.output().end());
  }
  auto label = [&](size_t i) { return node_label(g.node(int(i)), i); };
  return importers::topological_order("onnx", nodes, available, label, where);
}

namespace {

const ops::OpRegistry& registry_of(const ImportOptions& o) { return o.registry ? *o.registry : ops::default_registry(); }

graph::Graph import_file(const std::string& path, const ImportOptions& options) {
  ::onnx::ModelProto m = load_model(path, options.max_file_bytes);
  const ops::OpRegistry& registry = registry_of(options);
  SupportReport report = analyze(m, registry);
  if (!report.supported()) {
    std::string items = report.to_string();
    throw ImportError("nnvm.onnx.unsupported", items.substr(items.find('\n') + 1), {"file " + printable(path)});
  }
  return Importer(m, path, options, registry).run();
}

// Runs `f` for the file at `path`; what the standard library throws (out of memory, a size
// too large, an out-of-range access) becomes a named error that says which file.
template <class F>
auto for_file(const std::string& path, F&& f) -> decltype(f()) {
  return importers::with_context("onnx", {"file " + printable(path)}, std::forward<F>(f));
}

}  // namespace
}  // namespace detail

SupportReport check_support(const std::string& path, const ImportOptions& options) {
  return detail::for_file(path, [&] {
    return detail::analyze(detail::load_model(path, options.max_file_bytes), detail::registry_of(options));
  });
}

graph::Graph import_model(const std::string& path, const ImportOptions& options) {
  return detail::for_file(path, [&] { return detail::import_file(path, options); });
}

std::vector<NDArray> read_sequence_pb(const std::string& path, const ImportOptions& options) {
  return detail::for_file(path, [&] {
    ::onnx::SequenceProto s = detail::load_sequence(path, options.max_file_bytes);
    std::vector<std::string> where{"file " + printable(path)};
    if (s.elem_type() != ::onnx::SequenceProto::TENSOR)
      throw ImportError("nnvm.onnx.file", "the sequence's elements are not tensors", where);
    std::vector<NDArray> out;
    for (auto& t : s.tensor_values()) out.push_back(detail::decode_tensor(t, importers::directory_of(path), where));
    return out;
  });
}

OptionalValue read_optional_pb(const std::string& path, const ImportOptions& options) {
  return detail::for_file(path, [&] {
    ::onnx::OptionalProto o = detail::load_optional(path, options.max_file_bytes);
    std::vector<std::string> where{"file " + printable(path)};
    std::string base = importers::directory_of(path);
    OptionalValue out;
    if (o.elem_type() == ::onnx::OptionalProto::UNDEFINED) return out;
    if (o.elem_type() == ::onnx::OptionalProto::TENSOR && o.has_tensor_value()) {
      out.holds = OptionalValue::Holds::tensor;
      out.elements.push_back(detail::decode_tensor(o.tensor_value(), base, where));
      return out;
    }
    if (o.elem_type() == ::onnx::OptionalProto::SEQUENCE && o.has_sequence_value() &&
        o.sequence_value().elem_type() == ::onnx::SequenceProto::TENSOR) {
      out.holds = OptionalValue::Holds::sequence;
      for (auto& t : o.sequence_value().tensor_values()) out.elements.push_back(detail::decode_tensor(t, base, where));
      return out;
    }
    throw ImportError("nnvm.onnx.file",
                      str_cat("the optional holds element type ", int(o.elem_type()),
                              "; nnvm reads an empty optional, a tensor or a sequence of tensors"),
                      where);
  });
}

NDArray read_tensor_pb(const std::string& path, const ImportOptions& options) {
  return detail::for_file(path, [&] {
    return detail::decode_tensor(detail::load_tensor(path, options.max_file_bytes), importers::directory_of(path),
                                 {"file " + printable(path)});
  });
}

}  // namespace onnx_import
NNVM_END_NAMESPACE
