// Text and Graphviz forms of a graph. Both are deterministic (node order, attributes sorted by
// name), so tests compare them verbatim and a diff of two printouts is a diff of two graphs.
//
//   graph mlp(%x: float32[n, 784]) {
//     %w1 = constant float32[784, 128]
//     %dense_0 = dense(%x, %w1) : float32[n, 128]
//     %sm = softmax(%dense_0) {axis=1} : float32[n, 128]
//     return %sm
//   }
#pragma once

#include <iomanip>

#include "nnvm/graph/node.hpp"
#include "nnvm/ir/printer.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

inline std::string to_string(const TensorType& t) {
  std::string s = t.dtype.str() + "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + ir::to_string(t.shape[i]);
  return s + "]";
}

inline std::string to_string(const ops::AttrValue& v) {
  auto num = [](double d) {
    std::ostringstream os;
    os << std::setprecision(17) << d;
    return os.str();
  };
  switch (v.index()) {
    case 0: return std::to_string(std::get<int64_t>(v));
    case 1: return num(std::get<double>(v));
    case 2: return str_cat(std::quoted(std::get<std::string>(v)));
    case 3: {
      std::string s = "[";
      for (auto& e : std::get<std::vector<int64_t>>(v)) s += (s.size() > 1 ? ", " : "") + std::to_string(e);
      return s + "]";
    }
    default: {
      std::string s = "[";
      for (auto& e : std::get<std::vector<double>>(v)) s += (s.size() > 1 ? ", " : "") + num(e);
      return s + "]";
    }
  }
}

// "{name=value, ...}" sorted by name; empty for no attributes.
inline std::string to_string(const Attrs& a) {
  std::string s;
  for (auto& [k, v] : a.values()) s += (s.empty() ? "{" : ", ") + k + "=" + to_string(v);
  return s.empty() ? s : s + "}";
}

namespace detail {
inline std::string ref(const Graph& g, const Value& v) {
  if (!v.defined()) return "none";  // an optional input left out
  std::string s = "%" + g.nodes.at(v.node).name;
  return v.index ? str_cat(s, ":", v.index) : s;
}
inline std::string types_text(const Node& n) {
  if (n.types.size() == 1) return to_string(n.types[0]);
  std::string s = "(";
  for (size_t i = 0; i < n.types.size(); ++i) s += (i ? ", " : "") + to_string(n.types[i]);
  return s + ")";
}
}  // namespace detail

inline std::string to_string(const Graph& g) {
  std::string s = "graph " + g.name + "(";
  bool first = true;
  for (size_t i : g.inputs()) {
    s += (first ? "%" : ", %") + g.nodes[i].name + ": " + detail::types_text(g.nodes[i]);
    first = false;
  }
  s += ") {\n";
  for (auto& n : g.nodes) {
    if (n.kind == NodeKind::input) continue;
    s += "  %" + n.name + " = ";
    if (n.kind == NodeKind::constant) {
      s += "constant " + detail::types_text(n) + "\n";
      continue;
    }
    s += n.op + "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) s += (k ? ", " : "") + detail::ref(g, n.inputs[k]);
    s += ")";
    if (n.attrs.size()) s += " " + to_string(n.attrs);
    s += " : " + detail::types_text(n) + "\n";
    // A control node's bodies follow it, indented.
    for (auto& body : n.bodies) {
      std::string text = to_string(*body);
      for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        s += "    " + text.substr(at, end - at) + "\n";
        at = end == std::string::npos ? text.size() : end + 1;
      }
    }
  }
  s += "  return ";
  for (size_t k = 0; k < g.outputs.size(); ++k) s += (k ? ", " : "") + detail::ref(g, g.outputs[k]);
  return s + "\n}\n";
}

inline std::ostream& operator<<(std::ostream& os, const Graph& g) { return os << to_string(g); }

namespace detail {
inline std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace detail

// Graphviz: one box per node (name, op or kind, attributes), one edge per use labelled with the
// value's type, and a point per graph output. Render with `dot -Tsvg`.
inline std::string to_dot(const Graph& g) {
  std::string s = "digraph \"" + detail::dot_escape(g.name) + "\" {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    using detail::dot_escape;
    // "\n" is Graphviz's line break, so it joins parts after they are escaped.
    std::string label = dot_escape(n.name) + "\\n" + dot_escape(n.kind == NodeKind::op ? n.op : detail::kind_name(n.kind));
    if (n.attrs.size()) label += "\\n" + dot_escape(to_string(n.attrs));
    if (n.kind != NodeKind::op) label += "\\n" + dot_escape(detail::types_text(n));
    s += str_cat("  n", i, " [label=\"", label, "\"", n.kind == NodeKind::op ? "" : ", style=rounded", "];\n");
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (auto& v : g.nodes[i].inputs)
      if (v.defined())
        s += str_cat("  n", v.node, " -> n", i, " [label=\"", detail::dot_escape(to_string(g.type(v))), "\"];\n");
  for (size_t k = 0; k < g.outputs.size(); ++k)
    s += str_cat("  out", k, " [shape=point];\n  n", g.outputs[k].node, " -> out", k, " [label=\"",
                 detail::dot_escape(to_string(g.type(g.outputs[k]))), "\"];\n");
  return s + "}\n";
}

}  // namespace graph
NNVM_END_NAMESPACE
