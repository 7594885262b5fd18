#include "nnvm/onnx/export.hpp"

#include <onnx/onnx_pb.h>

#include <bit>
#include <climits>
#include <cstring>
#include <optional>
#include <set>

#include "adapters.hpp"
#include "attributes.hpp"
#include "nnvm/graph/printer.hpp"
#include "nnvm/onnx/importer.hpp"
#include "nnvm/onnx/dtype_codes.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_export {

// raw_data is little-endian, and the bytes are copied as they lie in memory.
static_assert(std::endian::native == std::endian::little, "the ONNX exporter assumes a little-endian host");

namespace {

using graph::Graph;
using graph::Node;
using graph::Value;

// The op nodes one ONNX node stands for (one, or a fused group) and the kernel that runs them.
struct Unit {
  std::vector<size_t> nodes;
  std::string kernel;
};

int32_t elem_type(DataType t, const std::string& what) {
  if (int64_t code = onnx_import::code_of(t)) return int32_t(code);
  throw UserError("nnvm.onnx.export", str_cat("data type ", t.str(), " has no ONNX counterpart"), {what});
}

std::string value_name(const Graph& g, const Value& v) {
  const std::string& n = g.nodes[v.node].name;
  return v.index ? str_cat(n, ":", v.index) : n;
}

void set_type(::onnx::ValueInfoProto* vi, const std::string& name, const ops::TensorType& t) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type(t.dtype, "value " + name));
  auto* shape = tt->mutable_shape();
  for (auto& e : t.shape) {
    ir::Expr s = ir::simplify(e);
    auto* dim = shape->add_dim();
    if (auto* c = ir::as_const_int(s)) dim->set_dim_value(*c);
    else dim->set_dim_param(ir::to_string(s));
  }
}

void set_tensor(::onnx::TensorProto* t, const NDArray& a, const std::string& what) {
  t->set_data_type(elem_type(a.dtype(), what));
  for (int64_t d : a.shape()) t->add_dims(d);
  if (a.nbytes()) t->set_raw_data(std::string(static_cast<const char*>(a.raw()), a.nbytes()));
}

// The importer keeps a TENSOR attribute (ConstantOfShape's value) as a list of its one number
// plus "<name>_dtype"; this is that tensor again (shape [1], as ONNX writes it), or nothing.
std::optional<NDArray> tensor_attribute(const ops::Attrs& attrs, const std::string& name) {
  const ops::AttrValue* value = attrs.find(name);
  const ops::AttrValue* type_name = attrs.find(name + "_dtype");
  const std::string* s = type_name ? std::get_if<std::string>(type_name) : nullptr;
  std::optional<DataType> t = s ? parse_dtype(*s) : std::nullopt;
  if (!value || !t) return std::nullopt;
  NDArray one;
  if (auto* ints = std::get_if<std::vector<int64_t>>(value); ints && ints->size() == 1)
    one = *t == dtype::int64 ? NDArray::from(*ints, {}) : onnx_import::detail::scalar(*t, double((*ints)[0]));
  else if (auto* floats = std::get_if<std::vector<double>>(value); floats && floats->size() == 1)
    one = onnx_import::detail::scalar(*t, (*floats)[0]);
  else
    return std::nullopt;
  NDArray out(*t, {1});
  std::memcpy(out.raw(), one.raw(), out.nbytes());
  return out;
}

// Whether attribute `name` of ONNX op `op_type` holds a data type code (Cast's `to`), which
// nnvm keeps as a type name.
bool is_dtype_attribute(const std::string& op_type, const std::string& name) {
  return importers::find_dtype_attribute(onnx_import::detail::dtype_attributes(), op_type, name) != nullptr;
}

void add_attributes(::onnx::NodeProto* n, const ops::Attrs& attrs) {
  using A = ::onnx::AttributeProto;
  for (auto& [name, v] : attrs.values()) {
    if (name.ends_with("_dtype") && tensor_attribute(attrs, name.substr(0, name.size() - 6))) continue;
    A* a = n->add_attribute();
    a->set_name(name);
    if (auto t = tensor_attribute(attrs, name)) {
      a->set_type(A::TENSOR);
      set_tensor(a->mutable_t(), *t, "attribute " + name);
      continue;
    }
    if (n->domain().empty() && is_dtype_attribute(n->op_type(), name)) {
      a->set_type(A::INT);
      a->set_i(elem_type(attrs.get_dtype(name), "attribute " + name));
      continue;
    }
    if (auto* i = std::get_if<int64_t>(&v)) {
      a->set_type(A::INT);
      a->set_i(*i);
    } else if (auto* f = std::get_if<double>(&v)) {
      a->set_type(A::FLOAT);
      a->set_f(float(*f));
    } else if (auto* s = std::get_if<std::string>(&v);
               s && n->domain().empty() && onnx_import::detail::is_joined_strings_attribute(n->op_type(), name)) {
      a->set_type(A::STRINGS);
      for (size_t at = 0; at <= s->size();) {
        size_t comma = std::min(s->find(',', at), s->size());
        a->add_strings(s->substr(at, comma - at));
        at = comma + 1;
      }
    } else if (auto* s = std::get_if<std::string>(&v)) {
      a->set_type(A::STRING);
      a->set_s(*s);
    } else if (auto* is = std::get_if<std::vector<int64_t>>(&v)) {
      a->set_type(A::INTS);
      for (int64_t x : *is) a->add_ints(x);
    } else {
      a->set_type(A::FLOATS);
      for (double x : std::get<std::vector<double>>(v)) a->add_floats(float(x));
    }
  }
}

void add_string_attribute(::onnx::NodeProto* n, const std::string& name, const std::string& value) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(value);
}

// A member of a fused group in the graph printer's syntax: "%relu_0 = relu(%conv_0) : float32[1, 8]".
std::string member_line(const Graph& g, const Node& n) {
  std::string s = "%" + n.name + " = " + n.op + "(";
  for (size_t k = 0; k < n.inputs.size(); ++k) s += (k ? ", " : "") + graph::detail::ref(g, n.inputs[k]);
  s += ")";
  if (n.attrs.size()) s += " " + graph::to_string(n.attrs);
  return s + " : " + graph::detail::types_text(n);
}

class Exporter {
 public:
  explicit Exporter(const Graph& g) : g_(g) {
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (auto& v : g.nodes[i].inputs)
        if (v.defined()) readers_[{v.node, v.index}].insert(i);
    for (auto& v : g.outputs) graph_outputs_.insert(value_name(g, v));
  }

  std::string run(const std::vector<Unit>& units) {
    m_.set_ir_version(::onnx::IR_VERSION);
    m_.set_producer_name("nnvm");
    m_.set_producer_version(str_cat(NNVM_VERSION_MAJOR, ".", NNVM_VERSION_MINOR, ".", NNVM_VERSION_PATCH));
    auto* opset = m_.add_opset_import();
    opset->set_domain("");
    opset->set_version(onnx_import::newest_opset);
    ::onnx::GraphProto& out = *m_.mutable_graph();
    out.set_name(g_.name);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.kind == graph::NodeKind::input) set_type(out.add_input(), n.name, n.types[0]);
      if (n.kind == graph::NodeKind::constant) {
        auto* t = out.add_initializer();
        t->set_name(n.name);
        set_tensor(t, *n.data, "constant " + n.name);
      }
    }
    for (auto& u : units) u.nodes.size() == 1 ? add_op(u) : add_group(u);
    for (auto& v : g_.outputs) set_type(out.add_output(), value_name(g_, v), g_.type(v));
    if (uses_nnvm_domain_) {
      auto* ours = m_.add_opset_import();
      ours->set_domain(nnvm_domain);
      ours->set_version(nnvm_domain_version);
    }
    if (m_.ByteSizeLong() > size_t(INT_MAX))
      throw UserError("nnvm.onnx.export",
                      str_cat("the model would take ", m_.ByteSizeLong(), " bytes; protobuf writes at most 2 GiB"),
                      {"graph " + g_.name});
    return m_.SerializeAsString();
  }

 private:
  ::onnx::NodeProto* new_node(const Unit& u, const std::string& name) {
    auto* n = m_.mutable_graph()->add_node();
    n->set_name(name);
    if (!u.kernel.empty()) n->set_doc_string("kernel " + u.kernel);
    return n;
  }

  // An output of a written node; a graph output is typed in the graph's outputs instead.
  void add_output(::onnx::NodeProto* n, const Value& v) {
    std::string name = value_name(g_, v);
    n->add_output(name);
    if (!graph_outputs_.count(name)) set_type(m_.mutable_graph()->add_value_info(), name, g_.type(v));
  }

  void add_op(const Unit& u) {
    const Node& node = g_.nodes[u.nodes[0]];
    auto* n = new_node(u, node.name);
    const ops::OpDef& def = g_.registry->get(node.op);
    std::string onnx_name;
    for (auto& name : def.importer_names)
      if (name.starts_with("onnx:")) {
        onnx_name = name.substr(5);
        break;
      }
    if (onnx_name.empty()) {
      n->set_domain(nnvm_domain);
      n->set_op_type(node.op);
      uses_nnvm_domain_ = true;
    } else {
      n->set_op_type(onnx_name);
    }
    size_t count = node.inputs.size();
    while (count && !node.inputs[count - 1].defined()) --count;
    for (size_t k = 0; k < count; ++k) n->add_input(node.inputs[k].defined() ? value_name(g_, node.inputs[k]) : "");
    for (size_t k = 0; k < node.num_outputs(); ++k) add_output(n, {u.nodes[0], k});
    add_attributes(n, node.attrs);
  }

  void add_group(const Unit& u) {
    std::set<size_t> members(u.nodes.begin(), u.nodes.end());
    const Node& master = g_.nodes[u.nodes[0]];
    auto* n = new_node(u, master.name);
    n->set_domain(nnvm_domain);
    uses_nnvm_domain_ = true;
    std::string type = "fused", lines;
    std::set<std::pair<size_t, size_t>> read;
    for (size_t i : u.nodes) {
      const Node& member = g_.nodes[i];
      type += "_" + member.op;
      lines += (lines.empty() ? "" : "\n") + member_line(g_, member);
      for (auto& v : member.inputs)
        if (v.defined() && !members.count(v.node) && read.insert({v.node, v.index}).second)
          n->add_input(value_name(g_, v));
    }
    n->set_op_type(type);
    // A value leaves the group when a node outside reads it or the graph returns it; an output
    // nobody reads is written too, as the kernel does.
    for (size_t i : u.nodes)
      for (size_t k = 0; k < g_.nodes[i].num_outputs(); ++k) {
        auto it = readers_.find({i, k});
        bool leaves = it == readers_.end() || graph_outputs_.count(value_name(g_, {i, k}));
        if (it != readers_.end())
          for (size_t r : it->second) leaves = leaves || !members.count(r);
        if (leaves) add_output(n, {i, k});
      }
    add_string_attribute(n, "members", lines);
    if (!u.kernel.empty()) add_string_attribute(n, "kernel", u.kernel);
  }

  const Graph& g_;
  ::onnx::ModelProto m_;
  std::map<std::pair<size_t, size_t>, std::set<size_t>> readers_;
  std::set<std::string> graph_outputs_;
  bool uses_nnvm_domain_ = false;
};

}  // namespace

std::string export_graph(const graph::Graph& g) {
  graph::refuse_control_nodes(g, "ONNX export");
  std::vector<Unit> units;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].kind == graph::NodeKind::op) units.push_back({{i}, ""});
  return Exporter(g).run(units);
}

std::string export_model(const graph::CompiledModel& m) {
  graph::refuse_control_nodes(m.graph(), "ONNX export");
  std::vector<Unit> units;
  for (auto& st : m.steps()) units.push_back({st.nodes, m.kernels().at(st.kernel).func().name});
  return Exporter(m.graph()).run(units);
}

}  // namespace onnx_export
NNVM_END_NAMESPACE
