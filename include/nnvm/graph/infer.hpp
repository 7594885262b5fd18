// Shape and dtype inference: each op node's output types from its inputs' types, by the op's own
// rule (ops::infer_types). Symbolic extents (an ir::Var batch size) flow through as expressions
// until bind_shapes replaces them with numbers.
#pragma once

#include <cmath>
#include <cstring>
#include <set>

#include "nnvm/graph/node.hpp"
#include "nnvm/graph/printer.hpp"
#include "nnvm/ir/functor.hpp"
#include "nnvm/ir/substitute.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

// The name of the graph input that `v` is computed from (the latest declared one when there are
// several), or "" when only constants feed it. Errors about values that must be known at compile
// time end with "graph input <name>", which tools (nnvmc check) read to bind that input.
inline std::string input_behind(const Graph& g, const Value& v) {
  std::vector<bool> reached(v.node + 1, false);
  reached[v.node] = true;
  for (size_t i = v.node + 1; i-- > 0;) {  // producers come before their users
    if (!reached[i]) continue;
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::input) return n.name;
    for (const Value& in : n.inputs)
      if (in.defined()) reached[in.node] = true;
  }
  return "";
}

namespace detail {
// The op's errors keep their ids (nnvm.ops.input_shape, nnvm.ops.attr) and gain graph › node as
// the outermost context, so a message reads "(graph mlp › node fc1 › op dense › input B)".
// The value input's data as an attribute: integers and bools as ints, floats as floats.
inline ops::AttrValue value_attr(const NDArray& a) {
  DataType t = a.dtype();
  int64_t n = a.numel();
  auto read = [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(a.raw());
    return std::vector<T>(p, p + n);
  };
  auto ints = [&](auto tag) {
    auto v = read(tag);
    return ops::AttrValue(std::vector<int64_t>(v.begin(), v.end()));
  };
  if (t == dtype::int64) return read(int64_t{});
  if (t == dtype::int32) return ints(int32_t{});
  if (t == dtype::int16) return ints(int16_t{});
  if (t == dtype::int8 || (t.is_sub_byte_int() && t.is_int())) return ints(int8_t{});
  if (t.is_sub_byte_int()) return ints(uint8_t{});
  if (t.is_small_float()) {
    std::vector<double> out;
    for (uint8_t b : read(uint8_t{})) out.push_back(storage_decode(t, b));
    return out;
  }
  if (t == dtype::uint8 || t == dtype::boolean) return ints(uint8_t{});
  if (t == dtype::uint16) return ints(uint16_t{});
  if (t == dtype::uint32) return ints(uint32_t{});
  if (t == dtype::uint64) return ints(uint64_t{});
  if (t == dtype::float64) return read(double{});
  if (t == dtype::float32) {
    auto v = read(float{});
    return std::vector<double>(v.begin(), v.end());
  }
  if (t == dtype::float16 || t == dtype::bfloat16) {
    auto bits = read(uint16_t{});
    std::vector<double> out;
    for (uint16_t h : bits) {
      if (t == dtype::bfloat16) {
        uint32_t w = uint32_t(h) << 16;
        float f;
        std::memcpy(&f, &w, 4);
        out.push_back(f);
        continue;
      }
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
      out.push_back((h & 0x8000) ? -v : v);
    }
    return out;
  }
  throw UserError("nnvm.graph.value_input", str_cat("a ", t, " tensor cannot be read as an attribute value"));
}

// The node's attributes plus its value inputs' data (ops::OpDef::value_inputs), which must come
// from constants by now; "nnvm.graph.not_constant" otherwise.
inline Attrs node_attrs(const Graph& g, const Node& n, const ops::OpDef& def) {
  if (def.value_inputs.empty()) return n.attrs;
  Attrs attrs = n.attrs;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (!n.inputs[k].defined() || !ops::is_value_input(def, k)) continue;
    const Node& p = g.node(n.inputs[k]);
    std::string in = def.input_names[k];
    if (p.kind != NodeKind::constant) {
      std::string from = p.kind == NodeKind::input ? "" : input_behind(g, n.inputs[k]);
      throw UserError("nnvm.graph.not_constant",
                      str_cat("input ", k, " (", in, ") of op ", n.op, " must be known at compile time, but it is ",
                              p.kind == NodeKind::input ? "graph input " : "computed by node ", p.name,
                              from.empty() ? "" : ", from graph input " + from),
                      where(g, &n));
    }
    try {
      attrs.set(in, value_attr(*p.data));
    } catch (const UserError& e) {
      throw UserError(e.id(), e.message(), {where(g, &n).at(0), where(g, &n).at(1), "input " + in});
    }
  }
  return attrs;
}

// The types of the node's inputs; an absent optional input is TensorType::none().
inline std::vector<TensorType> input_types(const Graph& g, const Node& n) {
  std::vector<TensorType> in;
  for (auto& v : n.inputs) in.push_back(v.defined() ? g.type(v) : TensorType::none());
  return in;
}

// Runs the op's check_constants on the node's constant inputs (none: nothing to check).
inline void check_constants(const Graph& g, const Node& n, const ops::OpDef& def, const std::vector<TensorType>& in,
                            const Attrs& attrs) {
  std::vector<const NDArray*> data;
  bool any = false;
  for (auto& v : n.inputs) {
    const Node* p = v.defined() ? &g.node(v) : nullptr;
    data.push_back(p && p->kind == NodeKind::constant ? p->data.get() : nullptr);
    any = any || data.back();
  }
  if (!any) return;
  try {
    def.check_constants(in, data, attrs);
  } catch (const UserError& e) {
    ops::detail::rethrow_with_context(e, "op " + def.name);
  }
}

inline std::vector<TensorType> infer_node(const Graph& g, const Node& n) {
  try {
    const ops::OpDef& def = g.registry->get(n.op);
    std::vector<TensorType> in = input_types(g, n);
    Attrs attrs = node_attrs(g, n, def);
    std::vector<TensorType> types = ops::infer_types(def, in, attrs);
    for (size_t k = 0; k < types.size(); ++k) check_size(g, n, types[k], k);
    if (def.check_constants) check_constants(g, n, def, in, attrs);
    return types;
  } catch (const UserError& e) {
    if (!e.context().empty() && e.context()[0].rfind("graph ", 0) == 0) throw;
    std::vector<std::string> ctx = where(g, &n);
    ctx.insert(ctx.end(), e.context().begin(), e.context().end());
    throw UserError(e.id(), e.message(), std::move(ctx));
  }
}

class VarCollector : public ir::IRVisitor {
 public:
  std::vector<ir::Var> vars;
  void visit_expr(const ir::Expr& e) override {
    if (e.defined() && e.as<ir::VarNode>()) {
      vars.push_back(ir::Var::from(e));
      return;
    }
    IRVisitor::visit_expr(e);
  }
};
inline std::vector<ir::Var> input_vars(const Graph& g) {
  VarCollector c;
  for (size_t i : g.inputs())
    for (auto& t : g.nodes[i].types)
      for (auto& d : t.shape) c.visit_expr(d);
  return c.vars;
}
inline std::vector<TensorType> infer_control(const Graph& g, Node& n);  // graph/control_types.hpp
}  // namespace detail

// Validates `g`, then recomputes every op and control node's output types in node order.
NNVM_COMPILER_INLINE void infer_types(Graph& g);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE void infer_types(Graph& g) {
  validate(g);
  for (auto& n : g.nodes)
    if (n.kind == NodeKind::op) n.types = detail::infer_node(g, n);
    else if (n.kind == NodeKind::control) n.types = detail::infer_control(g, n);
}
#endif  // NNVM_COMPILER_DEFINITIONS

// The names of the symbolic extents in the graph inputs' shapes, sorted.
inline std::vector<std::string> symbolic_dims(const Graph& g) {
  std::set<std::string> names;
  for (auto& v : detail::input_vars(g)) names.insert(v.name());
  return {names.begin(), names.end()};
}

// A copy of `g` with the named symbolic extents replaced by numbers and types re-inferred, so a
// graph written for any batch size compiles for one. UserError "nnvm.graph.unknown_dim" when a
// name is not a symbolic extent of the inputs, "nnvm.graph.bad_dim" for a negative value.
NNVM_COMPILER_INLINE Graph bind_shapes(const Graph& g, const std::map<std::string, int64_t>& dims);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE Graph bind_shapes(const Graph& g, const std::map<std::string, int64_t>& dims) {
  std::vector<ir::Var> vars = detail::input_vars(g);
  ir::VarMap map;
  for (auto& [name, value] : dims) {
    if (value < 0)
      throw UserError("nnvm.graph.bad_dim", str_cat("extent '", name, "' is bound to ", value, "; it must be >= 0"),
                      detail::where(g));
    bool found = false;
    for (auto& v : vars)
      if (v.name() == name) map[v] = ir::Expr(value), found = true;
    if (!found) {
      std::string known;
      for (auto& s : symbolic_dims(g)) known += (known.empty() ? "" : ", ") + s;
      throw UserError("nnvm.graph.unknown_dim",
                      str_cat("no graph input has a symbolic extent named '", name, "' (symbolic: ",
                              known.empty() ? "none" : known, ")"),
                      detail::where(g));
    }
  }
  Graph out = g;
  for (size_t i : out.inputs())
    for (auto& t : out.nodes[i].types)
      for (auto& d : t.shape) d = ir::simplify(ir::substitute(d, map));
  infer_types(out);
  return out;
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE

#include "nnvm/graph/control_types.hpp"
