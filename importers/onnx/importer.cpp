#include "nnvm/onnx/importer.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "adapters.hpp"
#include "attributes.hpp"
#include "files.hpp"
#include "nnvm/graph/infer.hpp"
#include "nnvm/graph/printer.hpp"
#include "nnvm/importers/error_context.hpp"
#include "nnvm/importers/files.hpp"
#include "nnvm/importers/graph_assembly.hpp"
#include "nnvm/importers/topological_order.hpp"
#include "nnvm/onnx/dtype_codes.hpp"
#include "support.hpp"
#include "tensor.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import {

namespace detail {
namespace {

using ::onnx::NodeProto;

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

class Importer final : public BuildContext {
 public:
  using Sequence = std::vector<graph::Value>;  // a sequence of tensors, element by element

  Importer(const ::onnx::ModelProto& m, const std::string& path, const ImportOptions& options,
           const ops::OpRegistry& registry)
      : m_(m),
        base_dir_(importers::directory_of(path)),
        file_("file " + printable(path)),
        options_(options),
        opset_(default_opset(m)),
        registry_(registry),
        root_("onnx", m.graph().name().empty() ? std::filesystem::path(path).stem().string() : m.graph().name(), registry,
           FoldBudget{options.fold_budget_bytes}) {}

  graph::Graph run() {
    const ::onnx::GraphProto& g = m_.graph();
    std::set<std::string> available;
    for (auto& t : g.initializer()) {
      std::vector<std::string> where{file_, "initializer " + printable(t.name())};
      if (t.name().empty()) throw ImportError("nnvm.onnx.graph", "an initializer has no name", {file_});
      if (!available.insert(t.name()).second) throw ImportError("nnvm.onnx.graph", "the initializer appears twice", where);
      a_->define(t.name(), guarded(where, [&] {
        return a_->builder().constant(a_->claim(t.name()), decode_tensor(t, base_dir_, where));
      }));
    }
    add_inputs(available);
    for (size_t i : node_order(g, available, {file_})) build_node(g.node(int(i)), i);
    if (g.output_size() == 0) throw ImportError("nnvm.onnx.graph", "the model has no outputs", {file_});
    for (auto& out : g.output()) {
      if (empty_values_.count(out.name())) refuse_empty_value(out.name(), "graph output", std::vector<std::string>{file_});
      if (auto it = sequences_.find(out.name()); it != sequences_.end()) {  // one graph output per element
        for (auto& v : it->second) a_->builder().output(v);
        continue;
      }
      a_->output(out.name(), {file_});
    }
    return guarded({file_}, [&] { return a_->builder().build(); });
  }

  graph::Value constant(const std::string& suffix, NDArray data) override {
    return a_->builder().constant(a_->claim(node_name_ + "/" + suffix), std::move(data));
  }
  // Read from the graph being built: no copy, so adapting a node costs the same in any graph.
  ops::TensorType type(const graph::Value& v) override { return a_->graph().type(v); }
  const NDArray* data(const graph::Value& v) override {
    const graph::Node& n = a_->graph().node(v);
    return n.kind == graph::NodeKind::constant ? n.data.get() : nullptr;
  }
  std::string input_behind(const graph::Value& v) override { return graph::input_behind(a_->graph(), v); }
  size_t max_inputs(const std::string& op_type) override {
    auto* def = a_->find_op(op_type);
    return def ? def->input_names.size() : 0;
  }
  std::vector<graph::Value> op(const std::string& op_type, std::vector<graph::Value> inputs, ops::Attrs attrs,
                               const std::string& suffix) override {
    return a_->builder().op_outputs(a_->op_name(op_type, where_), std::move(inputs), std::move(attrs),
                                   a_->claim(node_name_ + "/" + suffix));
  }

 private:
  // importers::with_context, dropping the builder's own "graph …" and "node <same node>"
  // context entries, which `where` already states.
  template <class F>
  auto guarded(const std::vector<std::string>& where, F&& f) -> decltype(f()) {
    auto repeats = [&](const std::string& c) { return c.rfind("graph ", 0) == 0 || c == "node " + printable(node_name_); };
    return importers::with_context("onnx", where, repeats, std::forward<F>(f));
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
      if (in.type().has_sequence_type()) {
        add_sequence_input(in, where);
        continue;
      }
      const auto& tt = in.type().tensor_type();
      DataType dtype = *dtype_of_code(tt.elem_type());  // analyze() rejected the rest
      if (auto it = options_.constant_inputs.find(in.name()); it != options_.constant_inputs.end()) {
        if (it->second.dtype() != dtype)
          throw ImportError("nnvm.onnx.shape",
                            str_cat("ImportOptions::constant_inputs gives ", it->second.dtype(), " data for a ",
                                    dtype, " input"),
                            where);
        a_->define(in.name(), guarded(where, [&] { return a_->builder().constant(a_->claim(in.name()), it->second); }));
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
      a_->define(in.name(), guarded(where, [&] { return a_->builder().input(a_->claim(in.name()), dtype, shape); }));
    }
    for (auto& [name, shapes] : options_.sequence_inputs)
      if (!sequences_.count(name))
        throw ImportError("nnvm.onnx.shape",
                          str_cat("ImportOptions::sequence_inputs names '", name,
                                  "', which is not a graph input of sequence type"),
                          {file_});
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
    std::map<size_t, Sequence> sequence_outs;  // the outputs that are sequences, by index
    guarded(where_, [&] {
      node_name_ = a_->claim(label, size_t(std::max(n.output_size(), 1)));
      if (n.op_type() == "Constant") {
        outs = {a_->builder().constant(node_name_, constant_value(n))};
        return;
      }
      if (is_sequence_op(n.op_type())) {
        outs = sequence_op(n, sequence_outs);
        return;
      }
      if (n.op_type() == "Identity" && n.input_size() == 1 && sequences_.count(n.input(0))) {
        sequence_outs[0] = sequences_.at(n.input(0));
        return;
      }
      if (n.op_type() == "If") {
        outs = inline_if(n, sequence_outs);
        return;
      }
      if (n.op_type() == "Loop") {
        outs = carries_sequence(n) ? unroll_loop(n, sequence_outs) : import_loop(n);
        return;
      }
      if (n.op_type() == "Scan") {
        outs = opset_ < 9 ? import_scan8(n) : import_scan(n);
        return;
      }
      NodeBuild nb{.op_type = n.op_type(), .attrs = convert_attributes(n, base_dir_, where_),
                   .num_outputs = size_t(n.output_size()), .proto = &n};
      if (n.op_type() == "Concat" && concat_of_empty_values(n, nb.attrs)) return;
      for (auto& in : n.input()) {
        if (sequences_.count(in)) refuse_sequence(n, in);
        if (!in.empty() && empty_values_.count(in) && n.op_type() != "Concat") refuse_empty_value(in, "an input");
        if (!in.empty() && empty_values_.count(in)) continue;  // Concat leaves it out
        nb.inputs.push_back(in.empty() ? graph::Value{} : *a_->find(in));  // node_order checked
      }
      for (const VersionAdapter* step : find_adapters(qualified_op_type(n), opset_))
        if (!(outs = step->rewrite(nb, *this)).empty()) return;
      while (!nb.inputs.empty() && !nb.inputs.back().defined()) nb.inputs.pop_back();
      if (nb.op_type == "Split" && (outs = split_around_empty_pieces(n, nb)).size()) return;
      translate_dtype_codes(nb.op_type, nb.attrs, where_);
      outs = a_->builder().op_outputs(a_->op_name(nb.op_type, where_), std::move(nb.inputs), std::move(nb.attrs),
                                     node_name_);
    });
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty() || empty_values_.count(n.output(k))) continue;
      if (auto it = sequence_outs.find(size_t(k)); it != sequence_outs.end()) {
        sequences_[n.output(k)] = it->second;
        continue;
      }
      sequences_.erase(n.output(k));  // a tensor now, in this scope
      if (size_t(k) >= outs.size())
        throw ImportError("nnvm.onnx.graph",
                          str_cat("the node declares output ", k, " ('", n.output(k), "') but its op computes ",
                                  outs.size(), " output", outs.size() == 1 ? "" : "s"),
                          where_);
      a_->define(n.output(k), outs[size_t(k)]);
    }
  }

  // Empty tensors (an extent of 0) are never computed: a kernel has no empty buffers. ONNX
  // functions make them all the same: RotaryEmbedding's body splits each head into [rotary,
  // rest] with rest = 0 when the whole head rotates, then concatenates the pieces back. Such a
  // value is kept as its type alone (empty_values_): Concat leaves it out, any other use is an
  // error that names it.
  [[noreturn]] void refuse_empty_value(const std::string& name, const std::string& as,
                                       const std::optional<std::vector<std::string>>& where = std::nullopt) {
    throw ImportError("nnvm.onnx.shape",
                      str_cat(as, " '", printable(name), "' is an empty tensor (", graph::to_string(empty_values_.at(name)),
                              "); nnvm computes no empty tensors (only Concat may take one, and leaves it out)"),
                      where ? *where : where_);
  }

  // A Split whose sizes (a constant input, after the version adapters) hold zeros as well as
  // positive sizes: the Split of the positive pieces, with an undefined Value at each empty one
  // (recorded in empty_values_). {} when the node has no empty piece.
  std::vector<graph::Value> split_around_empty_pieces(const NodeProto& n, NodeBuild& nb) {
    const NDArray* sizes = nb.inputs.size() > 1 && nb.inputs[1].defined() ? data(nb.inputs[1]) : nullptr;
    if (!sizes || sizes->dtype() != dtype::int64) return {};  // the op checks what it is
    const int64_t* s = sizes->data<int64_t>();
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < sizes->numel(); ++i)
      if (s[i] != 0) kept.push_back(s[i]);
    if (kept.size() == size_t(sizes->numel()) || kept.empty() || sizes->numel() != n.output_size()) return {};
    ops::TensorType x = type(nb.inputs[0]);
    int64_t axis = nb.attrs.get_int("axis", 0);
    if (axis < -int64_t(x.shape.size()) || axis >= int64_t(x.shape.size())) return {};  // the op reports it
    ops::TensorType empty = x;
    empty.shape[size_t(axis < 0 ? axis + int64_t(x.shape.size()) : axis)] = ir::Expr(int64_t(0));
    nb.inputs[1] = constant("nonempty_split", NDArray::from(kept, {int64_t(kept.size())}));
    std::vector<graph::Value> pieces =
        a_->builder().op_outputs(a_->op_name("Split", where_), std::move(nb.inputs), std::move(nb.attrs), node_name_);
    std::vector<graph::Value> outs;
    for (int64_t i = 0, next = 0; i < sizes->numel(); ++i) {
      if (s[i] != 0) {
        outs.push_back(pieces.at(size_t(next++)));
        continue;
      }
      outs.emplace_back();
      if (!n.output(int(i)).empty()) empty_values_.emplace(n.output(int(i)), empty);
    }
    return outs;
  }

  // A Concat whose inputs are all empty values gives an empty value (true); one with some
  // non-empty inputs is built from those (false, and build_node leaves the empty ones out).
  bool concat_of_empty_values(const NodeProto& n, const ops::Attrs& attrs) {
    std::optional<ops::TensorType> sum;
    for (auto& in : n.input()) {
      if (in.empty()) continue;
      auto it = empty_values_.find(in);
      if (it == empty_values_.end()) return false;
      if (!sum) {
        sum = it->second;
        continue;
      }
      int64_t axis = attrs.get_int("axis", 0), r = int64_t(sum->shape.size());
      if (axis < -r || axis >= r) return false;  // the op reports it
      size_t a = size_t(axis < 0 ? axis + r : axis);
      sum->shape[a] = ir::simplify(sum->shape[a] + it->second.shape[a]);
    }
    if (!sum || n.output_size() < 1) return false;
    empty_values_.emplace(n.output(0), *sum);
    return true;
  }

  // An If whose condition is a constant when the node is imported (the builder folds constant
  // subgraphs such as Equal(Size(x), 4) as they arrive): the taken branch's nodes are imported in
  // its place, reading the enclosing graph's values directly, and its outputs become the If's.
  // Run-time conditions are "nnvm.graph.not_constant", naming the graph input the condition is
  // computed from, so `nnvmc check` can bind it from the test data.
  std::vector<graph::Value> inline_if(const NodeProto& n, std::map<size_t, Sequence>& sequence_outs) {
    if (n.input_size() < 1 || n.input(0).empty()) throw ImportError("nnvm.onnx.graph", "If has no condition input", where_);
    graph::Value cond = *a_->find(n.input(0));  // node_order checked it exists
    const NDArray* value = data(cond);
    if (!value) {
      // A run-time if needs both branches to give the same types; when they cannot, the
      // condition must be known at compile time after all.
      try {
        return runtime_if(n, cond);
      } catch (const Error& e) {
        std::string from = graph::input_behind(a_->graph(), cond);
        throw ImportError("nnvm.graph.not_constant",
                          str_cat("If's condition '", printable(n.input(0)), "' is not known at compile time and the If "
                                  "cannot run at run time (", std::string(e.what()).substr(0, std::string(e.what()).find('\n')), "); it is ",
                                  from.empty() ? "computed at run time" : "computed from graph input " + from),
                          where_);
      }
    }
    if (value->dtype() != dtype::boolean || value->numel() != 1)
      throw ImportError("nnvm.onnx.shape",
                        str_cat("If's condition must be one bool, but it holds ", value->numel(), " ", value->dtype(),
                                " value", value->numel() == 1 ? "" : "s"),
                        where_);
    const char* taken = static_cast<const uint8_t*>(value->raw())[0] ? "then_branch" : "else_branch";
    const ::onnx::AttributeProto* branch = nullptr;
    for (auto& a : n.attribute())
      if (a.name() == taken) branch = &a;
    if (!branch || !branch->has_g())
      throw ImportError("nnvm.onnx.attribute", str_cat("If has no '", taken, "' subgraph"), where_);
    return inline_subgraph(branch->g(), {}, {}, "attribute " + std::string(taken), sequence_outs);
  }

 public:
  std::vector<graph::Value> inline_graph(const ::onnx::GraphProto& g, const std::vector<graph::Value>& inputs,
                                         const std::string& what) override {
    std::map<size_t, Sequence> sequence_outs;
    auto outs = inline_subgraph(g, inputs, {}, what, sequence_outs);
    if (!sequence_outs.empty())
      throw ImportError("nnvm.onnx.unsupported", str_cat(what, " gives a sequence, which is not taken here"), where_);
    return outs;
  }

 private:
  // inline_graph, where input k may be a sequence (sequence_inputs[k]; inputs[k] is then unused)
  // and output k may be one (sequence_outs[k]; the output's Value is then undefined).
  std::vector<graph::Value> inline_subgraph(const ::onnx::GraphProto& g, const std::vector<graph::Value>& inputs,
                                            const std::map<size_t, Sequence>& sequence_inputs, const std::string& what,
                                            std::map<size_t, Sequence>& sequence_outs) {
    if (size_t(g.input_size()) != inputs.size())
      throw ImportError("nnvm.onnx.graph", str_cat(what, " declares ", g.input_size(), " inputs; it takes ", inputs.size()),
                        where_);
    std::vector<std::string> outer_where = where_, inner_where = where_;
    inner_where.push_back(what);
    std::string outer_name = node_name_;
    // A name the subgraph defines hides the enclosing graph's value of that name only inside it.
    std::map<std::string, graph::Value> hidden;
    std::map<std::string, Sequence> hidden_sequences;
    auto note_hidden = [&](const std::string& name) {
      if (const graph::Value* v = a_->find(name)) hidden.emplace(name, *v);
      if (auto it = sequences_.find(name); it != sequences_.end()) hidden_sequences.emplace(name, it->second);
    };
    std::set<std::string> available;
    for (auto& name : free_names(g))
      if (a_->find(name) || sequences_.count(name)) available.insert(name);
    for (int i = 0; i < g.input_size(); ++i) {
      note_hidden(g.input(i).name());
      if (!available.insert(g.input(i).name()).second)
        throw ImportError("nnvm.onnx.graph", str_cat(what, " declares input '", printable(g.input(i).name()), "' twice"),
                          inner_where);
      if (auto s = sequence_inputs.find(size_t(i)); s != sequence_inputs.end())
        sequences_[g.input(i).name()] = s->second;
      else
        a_->define(g.input(i).name(), inputs[size_t(i)]);
    }
    for (auto& t : g.initializer()) {
      std::vector<std::string> at = inner_where;
      at.push_back("initializer " + printable(t.name()));
      note_hidden(t.name());
      if (!available.insert(t.name()).second) throw ImportError("nnvm.onnx.graph", "the initializer's name is already used", at);
      a_->define(t.name(), guarded(at, [&] { return a_->builder().constant(a_->claim(t.name()), decode_tensor(t, base_dir_, at)); }));
    }
    for (auto& node : g.node())
      for (auto& out : node.output()) note_hidden(out);
    for (size_t i : node_order(g, available, inner_where)) build_node(g.node(int(i)), i);
    node_name_ = outer_name;
    where_ = outer_where;
    std::vector<graph::Value> outs;
    for (auto& o : g.output()) {
      if (empty_values_.count(o.name())) refuse_empty_value(o.name(), what + " output");
      if (auto s = sequences_.find(o.name()); s != sequences_.end()) {
        sequence_outs[outs.size()] = s->second;
        outs.emplace_back();
        continue;
      }
      const graph::Value* v = a_->find(o.name());
      if (!v)
        throw ImportError("nnvm.onnx.graph", str_cat(what, " output '", printable(o.name()), "' is never computed"), where_);
      outs.push_back(*v);
    }
    for (auto& [name, v] : hidden) a_->define(name, v);
    for (auto& [name, s] : hidden_sequences) sequences_[name] = s;
    return outs;
  }

 private:
  // Control flow (graph/control.hpp). A body is imported as a graph of its own: its formal inputs
  // typed from the node's operands, then one input per outer non-constant value it reads (the
  // node's captures); outer constants it reads are shared into it, so they fold there.

  const ::onnx::GraphProto& subgraph(const NodeProto& n, const std::string& name) {
    for (auto& a : n.attribute())
      if (a.name() == name && a.has_g()) return a.g();
    throw ImportError("nnvm.onnx.attribute", str_cat(n.op_type(), " has no '", name, "' subgraph"), where_);
  }
  static std::vector<int64_t> ints_attribute(const NodeProto& n, const std::string& name) {
    for (auto& a : n.attribute())
      if (a.name() == name) return {a.ints().begin(), a.ints().end()};
    return {};
  }
  static std::optional<int64_t> int_attribute(const NodeProto& n, const std::string& name) {
    for (auto& a : n.attribute())
      if (a.name() == name) return a.i();
    return std::nullopt;
  }
  graph::Value operand(const NodeProto& n, int k) {
    if (k >= n.input_size() || n.input(k).empty())
      throw ImportError("nnvm.onnx.graph", str_cat(n.op_type(), "'s input ", k, " is missing"), where_);
    if (empty_values_.count(n.input(k))) refuse_empty_value(n.input(k), "an input");
    return *a_->find(n.input(k));  // node_order checked it exists
  }

  // The outer values `bodies` read that are not constants, by name: the node's captures.
  std::vector<std::string> captured_names(const std::vector<const ::onnx::GraphProto*>& bodies) {
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
  std::vector<graph::Value> values_of(const std::vector<std::string>& names) {
    std::vector<graph::Value> out;
    for (auto& name : names) out.push_back(*a_->find(name));
    return out;
  }

  // `g` as a body: inputs typed `formal`, then the captures `captures` (outer value names).
  std::shared_ptr<const graph::Graph> import_body(const ::onnx::GraphProto& g, const std::vector<ops::TensorType>& formal,
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

  // The control node, named after the node being built (plus `suffix`, when one ONNX node makes several).
  std::vector<graph::Value> control(const std::string& op, std::vector<graph::Value> inputs,
                                    std::vector<std::shared_ptr<const graph::Graph>> bodies, size_t outputs,
                                    ops::Attrs attrs = {}, const std::string& suffix = "") {
    return guarded(where_, [&] {
      return a_->builder().control(op, std::move(inputs), std::move(bodies), outputs, std::move(attrs),
                                   suffix.empty() ? node_name_ : a_->claim(node_name_ + "/" + suffix));
    });
  }

  std::vector<graph::Value> runtime_if(const NodeProto& n, graph::Value cond) {
    const ::onnx::GraphProto &then_g = subgraph(n, "then_branch"), &else_g = subgraph(n, "else_branch");
    std::vector<std::string> captures = captured_names({&then_g, &else_g});
    auto then_b = import_body(then_g, {}, captures, "attribute then_branch");
    auto else_b = import_body(else_g, {}, captures, "attribute else_branch");
    std::vector<graph::Value> inputs{cond};
    for (auto& v : values_of(captures)) inputs.push_back(v);
    return control("if", std::move(inputs), {then_b, else_b}, size_t(n.output_size()));
  }

  // Loop(M, cond, v_initial...): outputs the final carried values, then the scan outputs.
  std::vector<graph::Value> import_loop(const NodeProto& n) {
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

  // Scan (opset 9+): states, then scan inputs sliced along scan_input_axes.
  std::vector<graph::Value> import_scan(const NodeProto& n) {
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

  // Scan at opset 8: Scan(sequence_lens, states..., scans...) with a batch axis first on every
  // input; each batch row is a scan of its own (a loop over rows of the same body).
  std::vector<graph::Value> import_scan8(const NodeProto& n) {
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

  // The scan node for states and axis-0 scan inputs `inputs` (`states` of them first).
  std::vector<graph::Value> scan(const NodeProto& n, const ::onnx::GraphProto& body, size_t states,
                                 std::vector<graph::Value> inputs, std::vector<int64_t> in_dirs, std::vector<int64_t> out_dirs,
                                 const std::string& suffix = "") {
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

  // `v` with axis `axis` moved to the front (a scan input), or back from the front (a scan output).
  graph::Value axis_to_front(graph::Value v, int64_t axis, const std::string& what) {
    int64_t r = int64_t(type(v).shape.size());
    int64_t a = checked_axis(axis, r, what);
    if (a == 0) return v;
    std::vector<int64_t> perm{a};
    for (int64_t d = 0; d < r; ++d)
      if (d != a) perm.push_back(d);
    return op("Transpose", {v}, ops::Attrs().set_ints("perm", perm), what).at(0);
  }
  graph::Value front_to_axis(graph::Value v, int64_t axis, const std::string& what) {
    int64_t r = int64_t(type(v).shape.size());
    int64_t a = checked_axis(axis, r, what);
    if (a == 0) return v;
    std::vector<int64_t> perm;
    for (int64_t d = 1; d < r; ++d) perm.push_back(d);
    perm.insert(perm.begin() + a, 0);
    return op("Transpose", {v}, ops::Attrs().set_ints("perm", perm), what).at(0);
  }
  int64_t checked_axis(int64_t axis, int64_t rank, const std::string& what) {
    if (axis < -rank || axis >= rank)
      throw ImportError("nnvm.onnx.attribute", str_cat("Scan's ", what, " is ", axis, " for a rank-", rank, " tensor"),
                        where_);
    return axis < 0 ? axis + rank : axis;
  }

  // Sequences of tensors. nnvm compiles those whose length and element shapes are known at
  // compile time: a sequence is the list of its elements' values (sequences_), the sequence ops
  // are evaluated here on those lists, SequenceMap's body is inlined per element, and a Loop
  // that carries a sequence is unrolled (its trip count must then be a constant).

  void add_sequence_input(const ::onnx::ValueInfoProto& in, const std::vector<std::string>& where) {
    auto it = options_.sequence_inputs.find(in.name());
    if (it == options_.sequence_inputs.end())
      throw ImportError("nnvm.onnx.shape",
                        "the input is a sequence; nnvm compiles sequences whose length and element shapes are known, so "
                        "give them (ImportOptions::sequence_inputs)",
                        where);
    DataType dtype = *dtype_of_code(in.type().sequence_type().elem_type().tensor_type().elem_type());
    Sequence& s = sequences_[in.name()];
    for (size_t k = 0; k < it->second.size(); ++k) {
      std::vector<ir::Expr> shape;
      for (int64_t e : it->second[k]) shape.emplace_back(e);
      check_input_size(dtype, shape, where);
      s.push_back(guarded(where, [&] { return a_->builder().input(a_->claim(str_cat(in.name(), "[", k, "]")), dtype, shape); }));
    }
  }

  [[noreturn]] void refuse_sequence(const NodeProto& n, const std::string& name) {
    throw ImportError("nnvm.onnx.unsupported",
                      str_cat("input '", printable(name), "' is a sequence, which ", n.op_type(), " does not take"), where_);
  }
  const Sequence& sequence(const NodeProto& n, int k) {
    if (k >= n.input_size() || n.input(k).empty())
      throw ImportError("nnvm.onnx.graph", str_cat(n.op_type(), "'s input ", k, " is missing"), where_);
    auto it = sequences_.find(n.input(k));
    if (it == sequences_.end())
      throw ImportError("nnvm.onnx.graph", str_cat(n.op_type(), "'s input '", printable(n.input(k)), "' is not a sequence"),
                        where_);
    return it->second;
  }
  // Input k as an integer known at compile time (a position, a split size), or `fallback` when
  // it is left out; "nnvm.graph.not_constant" naming the graph input it comes from otherwise.
  std::vector<int64_t> constant_ints(const NodeProto& n, int k, const std::string& what) {
    graph::Value v = operand(n, k);
    const NDArray* d = data(v);
    if (!d) {
      std::string from = input_behind(v);
      throw ImportError("nnvm.graph.not_constant",
                        str_cat(n.op_type(), "'s ", what, " must be known at compile time (nnvm sequences have a length "
                                "and elements known at compile time), but it is ",
                                from.empty() ? "computed at run time" : "computed from graph input " + from),
                        where_);
    }
    std::vector<int64_t> out;
    for (int64_t i = 0; i < d->numel(); ++i)
      out.push_back(d->dtype() == dtype::int32 ? d->data<int32_t>()[i] : d->data<int64_t>()[i]);
    return out;
  }
  // A position in a sequence of `length` (ONNX accepts -length..length-1, or up to length when
  // inserting).
  size_t position(const NodeProto& n, int k, size_t length, bool inserting) {
    if (k >= n.input_size() || n.input(k).empty()) return inserting ? length : length - 1;
    std::vector<int64_t> p = constant_ints(n, k, "position");
    int64_t len = int64_t(length), at = p.size() == 1 ? p[0] : INT64_MIN;
    if (at < -len || at > (inserting ? len : len - 1))
      throw ImportError("nnvm.onnx.attribute",
                        str_cat(n.op_type(), "'s position is ", p.size() == 1 ? str_cat(at) : std::string("not one value"),
                                " for a sequence of ", length),
                        where_);
    return size_t(at < 0 ? at + len : at);
  }

  std::vector<graph::Value> sequence_op(const NodeProto& n, std::map<size_t, Sequence>& outs) {
    const std::string& op = n.op_type();
    if (op == "SequenceConstruct") {
      Sequence s;
      for (int k = 0; k < n.input_size(); ++k) s.push_back(operand(n, k));
      outs[0] = std::move(s);
    } else if (op == "SequenceEmpty") {
      outs[0] = {};
    } else if (op == "SequenceInsert") {
      Sequence s = sequence(n, 0);
      s.insert(s.begin() + ptrdiff_t(position(n, 2, s.size(), true)), operand(n, 1));
      outs[0] = std::move(s);
    } else if (op == "SequenceErase") {
      Sequence s = sequence(n, 0);
      if (s.empty()) throw ImportError("nnvm.onnx.shape", "SequenceErase of an empty sequence", where_);
      s.erase(s.begin() + ptrdiff_t(position(n, 1, s.size(), false)));
      outs[0] = std::move(s);
    } else if (op == "SequenceAt") {
      const Sequence& s = sequence(n, 0);
      if (s.empty()) throw ImportError("nnvm.onnx.shape", "SequenceAt of an empty sequence", where_);
      if (n.input_size() < 2) throw ImportError("nnvm.onnx.graph", "SequenceAt has no position input", where_);
      return {s[position(n, 1, s.size(), false)]};
    } else if (op == "SequenceLength") {
      return {constant("length", NDArray::from(std::vector<int64_t>{int64_t(sequence(n, 0).size())}, {}))};
    } else if (op == "ConcatFromSequence") {
      return {concat_from_sequence(n)};
    } else if (op == "SplitToSequence") {
      outs[0] = split_to_sequence(n);
    } else if (op == "SequenceMap") {
      return sequence_map(n, outs);
    }
    return {};
  }

  graph::Value concat_from_sequence(const NodeProto& n) {
    Sequence s = sequence(n, 0);
    if (s.empty()) throw ImportError("nnvm.onnx.shape", "ConcatFromSequence of an empty sequence", where_);
    int64_t axis = int_attribute(n, "axis").value_or(0);
    if (int_attribute(n, "new_axis").value_or(0) != 0) {
      int64_t r = int64_t(type(s[0]).shape.size()) + 1;
      graph::Value axes = constant("axis", NDArray::from(std::vector<int64_t>{checked_axis(axis, r, "axis")}, {1}));
      for (size_t k = 0; k < s.size(); ++k) s[k] = op("Unsqueeze", {s[k], axes}, {}, str_cat("element", k)).at(0);
      axis = checked_axis(axis, r, "axis");
    }
    return s.size() == 1 ? s[0] : op("Concat", s, ops::Attrs().set_int("axis", axis), "concat").at(0);
  }

  Sequence split_to_sequence(const NodeProto& n) {
    graph::Value x = operand(n, 0);
    ops::TensorType t = type(x);
    int64_t axis = checked_axis(int_attribute(n, "axis").value_or(0), int64_t(t.shape.size()), "axis");
    const int64_t* extent = ir::as_const_int(ir::simplify(t.shape[size_t(axis)]));
    if (!extent) throw ImportError("nnvm.onnx.shape", "SplitToSequence needs the split axis's extent at compile time", where_);
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (n.input_size() < 2 || n.input(1).empty()) {
      sizes.assign(size_t(*extent), 1);
      squeeze = int_attribute(n, "keepdims").value_or(1) == 0;
    } else if (type(operand(n, 1)).shape.empty()) {  // a chunk size; the last chunk may be smaller
      int64_t chunk = constant_ints(n, 1, "split").at(0);
      if (chunk <= 0) throw ImportError("nnvm.onnx.attribute", str_cat("SplitToSequence's split is ", chunk), where_);
      for (int64_t at = 0; at < *extent; at += chunk) sizes.push_back(std::min(chunk, *extent - at));
    } else {
      sizes = constant_ints(n, 1, "split");
    }
    Sequence pieces;
    if (sizes.size() == 1) {
      pieces = {x};
    } else {
      graph::Value s = constant("split", NDArray::from(sizes, {int64_t(sizes.size())}));
      pieces = op("Split", {x, s}, ops::Attrs().set_int("axis", axis), "split");
    }
    if (squeeze) {
      graph::Value axes = constant("axes", NDArray::from(std::vector<int64_t>{axis}, {1}));
      for (size_t k = 0; k < pieces.size(); ++k) pieces[k] = op("Squeeze", {pieces[k], axes}, {}, str_cat("piece", k)).at(0);
    }
    return pieces;
  }

  // SequenceMap(sequences and tensors): the body inlined once per element of the sequences.
  std::vector<graph::Value> sequence_map(const NodeProto& n, std::map<size_t, Sequence>& outs) {
    const ::onnx::GraphProto& body = subgraph(n, "body");
    size_t length = sequence(n, 0).size();
    for (int k = 1; k < n.input_size(); ++k)
      if (sequences_.count(n.input(k)) && sequence(n, k).size() != length)
        throw ImportError("nnvm.onnx.shape",
                          str_cat("SequenceMap's input ", k, " has ", sequence(n, k).size(), " elements, input 0 has ",
                                  length),
                          where_);
    for (int k = 0; k < n.output_size(); ++k) outs[size_t(k)] = {};
    for (size_t e = 0; e < length; ++e) {
      std::vector<graph::Value> inputs;
      for (int k = 0; k < n.input_size(); ++k)
        inputs.push_back(sequences_.count(n.input(k)) ? sequence(n, k)[e] : operand(n, k));
      std::map<size_t, Sequence> element_outs;
      auto results = inline_subgraph(body, inputs, {}, str_cat("attribute body (element ", e, ")"), element_outs);
      if (!element_outs.empty())
        throw ImportError("nnvm.onnx.unsupported", "SequenceMap's body gives a sequence, which nnvm does not take",
                          where_);
      for (size_t k = 0; k < results.size() && k < size_t(n.output_size()); ++k) outs[k].push_back(results[k]);
    }
    return {};
  }

  bool carries_sequence(const NodeProto& n) {
    for (int k = 2; k < n.input_size(); ++k)
      if (sequences_.count(n.input(k))) return true;
    return false;
  }

  // A Loop that carries a sequence, unrolled: the body inlined once per iteration with the
  // iteration count as a constant, so each iteration's sequence is known at compile time.
  std::vector<graph::Value> unroll_loop(const NodeProto& n, std::map<size_t, Sequence>& sequence_outs) {
    constexpr int64_t max_unrolled = 4096;
    int64_t trips = max_unrolled + 1;
    if (n.input_size() > 0 && !n.input(0).empty()) trips = constant_ints(n, 0, "trip count M (the loop carries a sequence, so it is unrolled)").at(0);
    bool cond = n.input_size() < 2 || n.input(1).empty() ||
                constant_ints_or_bool(n, 1, "condition (the loop carries a sequence, so it is unrolled)");
    const ::onnx::GraphProto& body = subgraph(n, "body");
    size_t carried = size_t(n.input_size() - 2);
    std::vector<graph::Value> values(carried);
    std::map<size_t, Sequence> sequences;
    for (size_t k = 0; k < carried; ++k) {
      if (sequences_.count(n.input(int(2 + k)))) sequences[k] = sequence(n, int(2 + k));
      else values[k] = operand(n, int(2 + k));
    }
    std::vector<std::vector<graph::Value>> rows(size_t(std::max(body.output_size() - 1 - int(carried), 0)));
    int64_t i = 0;
    for (; i < trips && cond; ++i) {
      if (i >= max_unrolled)
        throw ImportError("nnvm.onnx.unsupported",
                          str_cat("a Loop that carries a sequence is unrolled at import; it would run more than ",
                                  max_unrolled, " iterations"),
                          where_);
      std::vector<graph::Value> inputs{constant(str_cat("iter", i), NDArray::from(std::vector<int64_t>{i}, {})),
                                       graph::Value{}};
      NDArray c(dtype::boolean, {});
      *static_cast<uint8_t*>(c.raw()) = 1;
      inputs[1] = constant(str_cat("cond", i), std::move(c));
      std::map<size_t, Sequence> in_sequences;
      for (size_t k = 0; k < carried; ++k) {
        inputs.push_back(values[k]);
        if (sequences.count(k)) in_sequences[2 + k] = sequences[k];
      }
      std::map<size_t, Sequence> out_sequences;
      auto results = inline_subgraph(body, inputs, in_sequences, str_cat("attribute body (iteration ", i, ")"), out_sequences);
      const NDArray* next = data(results.at(0));
      if (!next || next->numel() != 1)
        throw ImportError("nnvm.graph.not_constant",
                          "the condition of a Loop that carries a sequence must be known at compile time in every "
                          "iteration (the loop is unrolled)",
                          where_);
      cond = static_cast<const uint8_t*>(next->raw())[0] != 0;
      sequences.clear();
      for (size_t k = 0; k < carried; ++k) {
        values[k] = results.at(1 + k);
        if (out_sequences.count(1 + k)) sequences[k] = out_sequences[1 + k];
      }
      for (size_t k = 0; k < rows.size(); ++k) {
        if (out_sequences.count(1 + carried + k))
          throw ImportError("nnvm.onnx.unsupported", "a Loop's scan output is a sequence, which nnvm does not take", where_);
        rows[k].push_back(results.at(1 + carried + k));
      }
    }
    if (trips > max_unrolled && cond)
      throw ImportError("nnvm.onnx.unsupported", "a Loop that carries a sequence needs a trip count (it is unrolled)", where_);
    std::vector<graph::Value> outs = values;
    for (auto& [k, s] : sequences) sequence_outs[k] = s;
    graph::Value zero = constant("axis0", NDArray::from(std::vector<int64_t>{0}, {1}));
    for (size_t k = 0; k < rows.size(); ++k) {
      if (rows[k].empty()) throw ImportError("nnvm.onnx.shape", str_cat("scan output ", k, " has no rows"), where_);
      for (size_t r = 0; r < rows[k].size(); ++r) rows[k][r] = op("Unsqueeze", {rows[k][r], zero}, {}, str_cat("scan", k, "_", r)).at(0);
      outs.push_back(rows[k].size() == 1 ? rows[k][0] : op("Concat", rows[k], ops::Attrs().set_int("axis", 0), str_cat("scan", k)).at(0));
    }
    return outs;
  }
  bool constant_ints_or_bool(const NodeProto& n, int k, const std::string& what) {
    graph::Value v = operand(n, k);
    const NDArray* d = data(v);
    if (!d) (void)constant_ints(n, k, what);  // throws not_constant naming the input
    if (d->numel() != 1 || d->dtype() != dtype::boolean)
      throw ImportError("nnvm.onnx.shape", str_cat(n.op_type(), "'s ", what, " must be one bool"), where_);
    return static_cast<const uint8_t*>(d->raw())[0] != 0;
  }

  const ::onnx::ModelProto& m_;
  std::string base_dir_, file_;
  const ImportOptions& options_;
  int64_t opset_;
  const ops::OpRegistry& registry_;
  importers::GraphAssembly root_;
  importers::GraphAssembly* a_ = &root_;  // the graph being built: root_, or a control node's body
  std::map<std::string, ops::TensorType> empty_values_;  // values with an extent of 0, by name
  std::map<std::string, Sequence> sequences_;            // sequence values, by name
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

NDArray read_tensor_pb(const std::string& path, const ImportOptions& options) {
  return detail::for_file(path, [&] {
    return detail::decode_tensor(detail::load_tensor(path, options.max_file_bytes), importers::directory_of(path),
                                 {"file " + printable(path)});
  });
}


}  // namespace onnx_import
NNVM_END_NAMESPACE
