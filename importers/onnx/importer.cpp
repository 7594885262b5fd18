#include "nnvm/onnx/importer.hpp"

#include <filesystem>
#include <queue>
#include <set>

#include "adapters.hpp"
#include "attributes.hpp"
#include "files.hpp"
#include "nnvm/graph/builder.hpp"
#include "nnvm/ops/dtype_code.hpp"
#include "support.hpp"
#include "tensor.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import {

namespace detail {
namespace {

using ::onnx::NodeProto;

// The nodes in an order where every value is produced before it is read. ImportError
// "nnvm.onnx.graph" naming the node and value for a value nothing produces, a value produced
// twice, or a cycle (listing its nodes).
std::vector<size_t> topological_order(const ::onnx::GraphProto& g, const std::set<std::string>& available,
                                      const std::vector<std::string>& where) {
  size_t n = size_t(g.node_size());
  auto label = [&](size_t i) { return "'" + printable(node_label(g.node(int(i)), i)) + "'"; };
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (auto& out : g.node(int(i)).output()) {
      if (out.empty()) continue;
      if (available.count(out))
        throw ImportError("nnvm.onnx.graph",
                          str_cat("node ", label(i), " writes '", printable(out), "', which is also a graph input or initializer"),
                          where);
      if (auto [it, fresh] = producer.emplace(out, i); !fresh)
        throw ImportError("nnvm.onnx.graph",
                          str_cat("value '", printable(out), "' is written by both node ", label(it->second), " and node ", label(i)),
                          where);
    }
  std::vector<size_t> pending(n, 0);
  std::vector<std::vector<size_t>> readers(n);
  for (size_t i = 0; i < n; ++i)
    for (auto& in : g.node(int(i)).input()) {
      if (in.empty() || available.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        throw ImportError("nnvm.onnx.graph",
                          str_cat("node ", label(i), " reads '", printable(in),
                                  "', which no node, graph input or initializer provides"),
                          where);
      readers[it->second].push_back(i);
      ++pending[i];
    }
  // Ready nodes leave in file order, so an already sorted model keeps its order.
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (!pending[i]) ready.push(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t r : readers[i])
      if (--pending[r] == 0) ready.push(r);
  }
  if (order.size() == n) return order;
  // Every node left waits on another node left, so walking back from any of them reaches a cycle.
  size_t at = 0;
  while (!pending[at]) ++at;
  std::vector<size_t> walk;
  std::map<size_t, size_t> seen;
  while (!seen.count(at)) {
    seen[at] = walk.size();
    walk.push_back(at);
    for (auto& in : g.node(int(at)).input())
      if (auto it = producer.find(in); !in.empty() && it != producer.end() && pending[it->second]) {
        at = it->second;
        break;
      }
  }
  std::string cycle;
  for (size_t k = seen[at]; k < walk.size(); ++k) cycle = label(walk[k]) + (cycle.empty() ? "" : " -> " + cycle);
  throw ImportError("nnvm.onnx.graph", str_cat("the nodes form a cycle: ", cycle, " -> ", label(at)), where);
}

class Importer final : public BuildContext {
 public:
  Importer(const ::onnx::ModelProto& m, const std::string& path, const ImportOptions& options,
           const ops::OpRegistry& registry)
      : m_(m),
        base_dir_(directory_of(path)),
        file_("file " + printable(path)),
        options_(options),
        registry_(registry),
        opset_(default_opset(m)),
        b_(m.graph().name().empty() ? std::filesystem::path(path).stem().string() : m.graph().name(), registry) {
    b_.fold_constants(true, FoldBudget{options.fold_budget_bytes});
  }

  graph::Graph run() {
    const ::onnx::GraphProto& g = m_.graph();
    std::set<std::string> available;
    for (auto& t : g.initializer()) {
      std::vector<std::string> where{file_, "initializer " + printable(t.name())};
      if (t.name().empty()) throw ImportError("nnvm.onnx.graph", "an initializer has no name", {file_});
      if (!available.insert(t.name()).second) throw ImportError("nnvm.onnx.graph", "the initializer appears twice", where);
      define(t.name(), guarded(where, [&] { return b_.constant(claim(t.name()), decode_tensor(t, base_dir_, where)); }));
    }
    add_inputs(available);
    for (size_t i : topological_order(g, available, {file_})) build_node(g.node(int(i)), i);
    if (g.output_size() == 0) throw ImportError("nnvm.onnx.graph", "the model has no outputs", {file_});
    for (auto& out : g.output()) {
      auto it = values_.find(out.name());
      if (it == values_.end())
        throw ImportError("nnvm.onnx.graph",
                          str_cat("graph output '", printable(out.name()), "' is not produced by any node, input or initializer"),
                          {file_});
      b_.output(it->second);
    }
    return guarded({file_}, [&] { return b_.build(); });
  }

  graph::Value constant(const std::string& suffix, NDArray data) override {
    return b_.constant(claim(node_name_ + "/" + suffix), std::move(data));
  }
  // Read from the graph being built: no copy, so adapting a node costs the same in any graph.
  ops::TensorType type(const graph::Value& v) override { return b_.graph().type(v); }
  const NDArray* data(const graph::Value& v) override {
    const graph::Node& n = b_.graph().node(v);
    return n.kind == graph::NodeKind::constant ? n.data.get() : nullptr;
  }
  size_t max_inputs(const std::string& op_type) override {
    auto* def = registry_.find_by_importer_name("onnx:" + op_type);
    return def ? def->input_names.size() : 0;
  }
  std::vector<graph::Value> op(const std::string& op_type, std::vector<graph::Value> inputs, ops::Attrs attrs,
                               const std::string& suffix) override {
    return b_.op_outputs(op_name(op_type), std::move(inputs), std::move(attrs), claim(node_name_ + "/" + suffix));
  }

 private:
  // Runs `f`; an op's or the graph's UserError becomes an ImportError with `where` in front (the
  // builder's own "graph …" and "node <same node>" entries are dropped as repeats).
  template <class F>
  auto guarded(const std::vector<std::string>& where, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const UserError& e) {
      std::vector<std::string> ctx = where;
      for (auto& c : e.context())
        if (c.rfind("graph ", 0) != 0 && c != "node " + printable(node_name_)) ctx.push_back(c);
      throw ImportError(e.id(), e.message(), std::move(ctx));
    } catch (const std::bad_alloc&) {
      throw ImportError("nnvm.onnx.out_of_memory", "memory ran out while importing", where);
    } catch (const std::out_of_range& e) {
      // A bug (an unchecked index or substr), but the user learns which file and node hit it.
      throw InternalError("nnvm.onnx.internal", str_cat("out-of-range access: ", e.what()), where);
    } catch (const std::length_error& e) {
      throw ImportError("nnvm.onnx.out_of_memory", str_cat("a size is too large: ", e.what()), where);
    }
  }

  // A node name not used yet: `base`, else base_1, base_2, ... The builder names further outputs
  // of a folded node "<name>:<k>", so those are claimed with it.
  std::string claim(const std::string& base, size_t outputs = 1) {
    std::string name = base.empty() ? "node" : base;
    auto taken = [&](const std::string& s) {
      if (used_.count(s)) return true;
      for (size_t k = 1; k < outputs; ++k)
        if (used_.count(str_cat(s, ":", k))) return true;
      return false;
    };
    for (size_t k = 1; taken(name); ++k) name = str_cat(base.empty() ? "node" : base, "_", k);
    used_.insert(name);
    for (size_t k = 1; k < outputs; ++k) used_.insert(str_cat(name, ":", k));
    return name;
  }

  void define(const std::string& value, graph::Value v) { values_[value] = v; }

  std::string op_name(const std::string& op_type) {
    if (auto* def = registry_.find_by_importer_name("onnx:" + op_type)) return def->name;
    throw ImportError("nnvm.onnx.unsupported", str_cat("no nnvm op answers to onnx:", op_type), where_);
  }

  // Adds the graph inputs that are not initializers, and their names to `available`.
  void add_inputs(std::set<std::string>& available) {
    const std::set<std::string> initializers = available;
    const ::onnx::GraphProto& g = m_.graph();
    std::set<std::string> symbols, inputs;
    std::map<std::string, ir::Var> vars;
    for (auto& in : g.input()) {
      if (initializers.count(in.name())) continue;
      std::vector<std::string> where{file_, "input " + printable(in.name())};
      if (in.name().empty()) throw ImportError("nnvm.onnx.graph", "a graph input has no name", {file_});
      if (!inputs.insert(in.name()).second) throw ImportError("nnvm.onnx.graph", "the graph input appears twice", where);
      available.insert(in.name());
      const auto& tt = in.type().tensor_type();
      DataType dtype = *ops::try_dtype_from_onnx(tt.elem_type());  // analyze() rejected the rest
      if (auto it = options_.constant_inputs.find(in.name()); it != options_.constant_inputs.end()) {
        if (it->second.dtype() != dtype)
          throw ImportError("nnvm.onnx.shape",
                            str_cat("ImportOptions::constant_inputs gives ", it->second.dtype(), " data for a ",
                                    dtype, " input"),
                            where);
        define(in.name(), guarded(where, [&] { return b_.constant(claim(in.name()), it->second); }));
        continue;
      }
      std::vector<ir::Expr> shape;
      auto symbol = [&](const std::string& name) -> ir::Expr {
        symbols.insert(name);
        if (auto it = options_.symbols.find(name); it != options_.symbols.end()) return ir::Expr(it->second);
        return vars.try_emplace(name, ir::Var(name)).first->second;
      };
      for (int k = 0; k < tt.shape().dim_size(); ++k)
        if (tt.shape().dim(k).has_dim_param()) symbols.insert(tt.shape().dim(k).dim_param());
      if (auto it = options_.input_shapes.find(in.name()); it != options_.input_shapes.end()) {
        for (int64_t e : it->second) {
          if (e < 0) throw ImportError("nnvm.onnx.shape", str_cat("ImportOptions::input_shapes gives extent ", e), where);
          shape.emplace_back(e);
        }
      } else if (!tt.has_shape()) {
        throw ImportError("nnvm.onnx.shape", "the model gives no shape for this input; set ImportOptions::input_shapes",
                          where);
      } else {
        for (int k = 0; k < tt.shape().dim_size(); ++k) {
          const auto& d = tt.shape().dim(k);
          if (d.has_dim_value()) {
            if (d.dim_value() < 0)
              throw ImportError("nnvm.onnx.shape", str_cat("dimension ", k, " is ", d.dim_value()), where);
            shape.emplace_back(d.dim_value());
          } else {
            // An unnamed unknown extent gets a name, so ImportOptions::symbols can bind it too.
            shape.push_back(symbol(d.has_dim_param() && !d.dim_param().empty() ? d.dim_param()
                                                                              : str_cat(in.name(), "_dim", k)));
          }
        }
      }
      check_input_size(dtype, shape, where);
      define(in.name(), guarded(where, [&] { return b_.input(claim(in.name()), dtype, shape); }));
    }
    for (auto& [name, data] : options_.constant_inputs)
      if (!inputs.count(name))
        throw ImportError("nnvm.onnx.shape",
                          str_cat("ImportOptions::constant_inputs names '", name, "', which is not a graph input"), {file_});
    for (auto& [name, shape] : options_.input_shapes)
      if (!inputs.count(name)) {
        std::string known;
        for (auto& s : inputs) known += (known.empty() ? "" : ", ") + s;
        throw ImportError("nnvm.onnx.shape",
                          str_cat("ImportOptions::input_shapes names '", name, "', which is not a graph input (inputs: ",
                                  known.empty() ? "none" : known, ")"),
                          {file_});
      }
    for (auto& [name, value] : options_.symbols) {
      if (value < 0)
        throw ImportError("nnvm.onnx.shape", str_cat("ImportOptions::symbols binds '", name, "' to ", value), {file_});
      if (!symbols.count(name)) {
        std::string known;
        for (auto& s : symbols) known += (known.empty() ? "" : ", ") + s;
        throw ImportError("nnvm.onnx.shape",
                          str_cat("ImportOptions::symbols names '", name,
                                  "', which is not a symbolic extent of any input (symbolic: ",
                                  known.empty() ? "none" : known, ")"),
                          {file_});
      }
    }
  }

  // ImportError "nnvm.onnx.too_large" when an input's constant extents (declared in the model or
  // given by ImportOptions::input_shapes) make it larger than max_tensor_bytes.
  static void check_input_size(DataType dtype, const std::vector<ir::Expr>& shape, const std::vector<std::string>& where) {
    std::vector<int64_t> extents;
    for (auto& e : shape)
      if (const int64_t* c = ir::as_const_int(e)) extents.push_back(*c);
    if (checked_tensor_bytes(extents, uint64_t(dtype.bytes()))) return;
    std::string dims;
    for (auto& e : shape) dims += (dims.empty() ? "" : ", ") + ir::to_string(e);
    throw ImportError("nnvm.onnx.too_large", str_cat("a ", dtype, " input of shape [", dims, "] is larger than 2^48 bytes"),
                      where);
  }

  NDArray constant_value(const NodeProto& n) {
    const ::onnx::AttributeProto* value = nullptr;
    std::string names;
    for (auto& a : n.attribute())
      if (a.name().rfind("value", 0) == 0 || a.name() == "sparse_value") {
        names += (names.empty() ? "" : ", ") + a.name();
        value = value ? nullptr : &a;
      }
    if (!value || names.find(',') != std::string::npos)
      throw ImportError("nnvm.onnx.attribute",
                        str_cat("a Constant has exactly one value attribute; this one has ",
                                names.empty() ? "none" : names),
                        where_);
    std::vector<std::string> at = where_;
    at.push_back("attribute " + value->name());
    auto kind = [&](::onnx::AttributeProto::AttributeType t) {
      if (value->type() != t && value->type() != ::onnx::AttributeProto::UNDEFINED)
        throw ImportError("nnvm.onnx.attribute",
                          str_cat("the attribute's kind is ", ::onnx::AttributeProto::AttributeType_Name(value->type()),
                                  " but '", value->name(), "' must be ", ::onnx::AttributeProto::AttributeType_Name(t)),
                          at);
    };
    const std::string& a = value->name();
    if (a == "value") {
      kind(::onnx::AttributeProto::TENSOR);
      return decode_tensor(value->t(), base_dir_, at);
    }
    if (a == "value_float") {
      kind(::onnx::AttributeProto::FLOAT);
      return scalar(dtype::float32, value->f());
    }
    if (a == "value_int") {
      kind(::onnx::AttributeProto::INT);
      return NDArray::from(std::vector<int64_t>{value->i()}, {});
    }
    if (a == "value_floats") {
      kind(::onnx::AttributeProto::FLOATS);
      std::vector<float> v(value->floats().begin(), value->floats().end());
      return NDArray::from(v, {int64_t(v.size())});
    }
    if (a == "value_ints") {
      kind(::onnx::AttributeProto::INTS);
      std::vector<int64_t> v(value->ints().begin(), value->ints().end());
      return NDArray::from(v, {int64_t(v.size())});
    }
    throw ImportError("nnvm.onnx.unsupported", str_cat("Constant attribute '", a, "' is not supported"), at);
  }

  void build_node(const NodeProto& n, size_t index) {
    std::string label = node_label(n, index);
    where_ = {file_, str_cat("node ", printable(label), " (", printable(n.op_type()), ")")};
    std::vector<graph::Value> outs;
    guarded(where_, [&] {
      node_name_ = claim(label, size_t(std::max(n.output_size(), 1)));
      if (n.op_type() == "Constant") {
        outs = {b_.constant(node_name_, constant_value(n))};
        return;
      }
      NodeBuild nb{.op_type = n.op_type(), .attrs = convert_attributes(n, base_dir_, where_),
                   .num_outputs = size_t(n.output_size())};
      for (auto& in : n.input()) nb.inputs.push_back(in.empty() ? graph::Value{} : values_.at(in));
      for (const VersionAdapter* step : find_adapters(n.op_type(), opset_))
        if (!(outs = step->rewrite(nb, *this)).empty()) return;
      while (!nb.inputs.empty() && !nb.inputs.back().defined()) nb.inputs.pop_back();
      outs = b_.op_outputs(op_name(nb.op_type), std::move(nb.inputs), std::move(nb.attrs), node_name_);
    });
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      if (size_t(k) >= outs.size())
        throw ImportError("nnvm.onnx.graph",
                          str_cat("the node declares output ", k, " ('", n.output(k), "') but its op computes ",
                                  outs.size(), " output", outs.size() == 1 ? "" : "s"),
                          where_);
      define(n.output(k), outs[size_t(k)]);
    }
  }

  const ::onnx::ModelProto& m_;
  std::string base_dir_, file_;
  const ImportOptions& options_;
  const ops::OpRegistry& registry_;
  int64_t opset_;
  graph::GraphBuilder b_;
  std::map<std::string, graph::Value> values_;
  std::set<std::string> used_;
  std::string node_name_;          // the graph name of the node being built
  std::vector<std::string> where_;  // its error context
};

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
  std::vector<std::string> where{"file " + printable(path)};
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw ImportError("nnvm.onnx.out_of_memory", "memory ran out while importing", where);
  } catch (const std::length_error& e) {
    throw ImportError("nnvm.onnx.out_of_memory", str_cat("a size is too large: ", e.what()), where);
  } catch (const std::out_of_range& e) {
    throw InternalError("nnvm.onnx.internal", str_cat("out-of-range access: ", e.what()), where);
  }
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

NDArray read_tensor_pb(const std::string& path, const ImportOptions& options) {
  return detail::for_file(path, [&] {
    return detail::decode_tensor(detail::load_tensor(path, options.max_file_bytes), detail::directory_of(path),
                                 {"file " + printable(path)});
  });
}


}  // namespace onnx_import
NNVM_END_NAMESPACE
