// The ONNX importer's state and steps (one Importer per import_model call): the graph being
// built, value names, and how each node is built. Control flow (control_flow.cpp), sequences
// (sequences.cpp) and optionals (optionals.cpp) are defined in their own files.
#pragma once

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
namespace onnx_import::detail {

using ::onnx::NodeProto;

// The names `g`'s nodes (and the subgraphs in them) read that `g` does not define: the outer
// values a subgraph captures. `depth` is bounded by analyze() (max_subgraph_depth).
std::set<std::string> free_names(const ::onnx::GraphProto& g);

// importers::topological_order over the graph's nodes. A node with subgraphs (If) also waits for
// the outer values its subgraphs read.
std::vector<size_t> node_order(const ::onnx::GraphProto& g, const std::set<std::string>& available,
                               const std::vector<std::string>& where);

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
      if (empty_optionals_.count(out.name())) continue;  // an empty optional gives no graph output
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
      // An optional input holds its element (a tensor or a sequence) unless options say it is empty.
      const ::onnx::TypeProto& type = in.type().has_optional_type() ? in.type().optional_type().elem_type() : in.type();
      if (in.type().has_optional_type() && options_.empty_optional_inputs.count(in.name())) {
        empty_optionals_.insert(in.name());
        continue;
      }
      if (type.has_sequence_type()) {
        add_sequence_input(in.name(), type, where);
        continue;
      }
      const auto& tt = type.tensor_type();
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
    for (auto& name : options_.empty_optional_inputs)
      if (!empty_optionals_.count(name))
        throw ImportError("nnvm.onnx.shape",
                          str_cat("ImportOptions::empty_optional_inputs names '", name,
                                  "', which is not a graph input of optional type"),
                          {file_});
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
    std::set<size_t> empty_outs;               // the outputs that are empty optionals
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
      if (is_optional_op(n.op_type())) {
        outs = optional_op(n, sequence_outs, empty_outs);
        return;
      }
      if (n.op_type() == "Identity" && n.input_size() == 1 && sequences_.count(n.input(0))) {
        sequence_outs[0] = sequences_.at(n.input(0));
        return;
      }
      if (n.op_type() == "Identity" && n.input_size() == 1 && empty_optionals_.count(n.input(0))) {
        empty_outs.insert(0);
        return;
      }
      if (n.op_type() == "If") {
        outs = inline_if(n, sequence_outs, &empty_outs);
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
        if (empty_optionals_.count(in)) refuse_empty_optional(n, in);
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
      if (empty_outs.count(size_t(k))) {
        empty_optionals_.insert(n.output(k));
        sequences_.erase(n.output(k));
        continue;
      }
      empty_optionals_.erase(n.output(k));
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
  std::vector<graph::Value> inline_if(const NodeProto& n, std::map<size_t, Sequence>& sequence_outs,
                                      std::set<size_t>* empty_outs) {
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
    return inline_subgraph(branch->g(), {}, {}, "attribute " + std::string(taken), sequence_outs, empty_outs);
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
  // and output k may be one (sequence_outs[k]; the output's Value is then undefined), or an
  // empty optional where `empty_outs` takes them (its index is added; the Value is undefined).
  std::vector<graph::Value> inline_subgraph(const ::onnx::GraphProto& g, const std::vector<graph::Value>& inputs,
                                            const std::map<size_t, Sequence>& sequence_inputs, const std::string& what,
                                            std::map<size_t, Sequence>& sequence_outs,
                                            std::set<size_t>* empty_outs = nullptr) {
    if (size_t(g.input_size()) != inputs.size())
      throw ImportError("nnvm.onnx.graph", str_cat(what, " declares ", g.input_size(), " inputs; it takes ", inputs.size()),
                        where_);
    std::vector<std::string> outer_where = where_, inner_where = where_;
    inner_where.push_back(what);
    std::string outer_name = node_name_;
    // A name the subgraph defines hides the enclosing graph's value of that name only inside it.
    std::map<std::string, graph::Value> hidden;
    std::map<std::string, Sequence> hidden_sequences;
    std::set<std::string> hidden_empty_optionals;
    auto note_hidden = [&](const std::string& name) {
      if (const graph::Value* v = a_->find(name)) hidden.emplace(name, *v);
      if (auto it = sequences_.find(name); it != sequences_.end()) hidden_sequences.emplace(name, it->second);
      if (empty_optionals_.erase(name)) hidden_empty_optionals.insert(name);
    };
    std::set<std::string> available;
    for (auto& name : free_names(g))
      if (a_->find(name) || sequences_.count(name) || empty_optionals_.count(name)) available.insert(name);
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
      if (empty_optionals_.count(o.name())) {
        if (!empty_outs)
          throw ImportError("nnvm.onnx.unsupported", str_cat(what, " gives an empty optional, which is not taken here"),
                            where_);
        empty_outs->insert(outs.size());
        outs.emplace_back();
        continue;
      }
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
    empty_optionals_.insert(hidden_empty_optionals.begin(), hidden_empty_optionals.end());
    return outs;
  }

 private:
  // Control flow (graph/control.hpp). A body is imported as a graph of its own: its formal inputs
  // typed from the node's operands, then one input per outer non-constant value it reads (the
  // node's captures); outer constants it reads are shared into it, so they fold there.

  const ::onnx::GraphProto& subgraph(const NodeProto& n, const std::string& name);
  static std::vector<int64_t> ints_attribute(const NodeProto& n, const std::string& name);
  static std::optional<int64_t> int_attribute(const NodeProto& n, const std::string& name);
  graph::Value operand(const NodeProto& n, int k);
  // The outer values `bodies` read that are not constants, by name: the node's captures.
  std::vector<std::string> captured_names(const std::vector<const ::onnx::GraphProto*>& bodies);
  std::vector<graph::Value> values_of(const std::vector<std::string>& names);
  // `g` as a body: inputs typed `formal`, then the captures `captures` (outer value names).
  std::shared_ptr<const graph::Graph> import_body(const ::onnx::GraphProto& g, const std::vector<ops::TensorType>& formal,
                                                  const std::vector<std::string>& captures, const std::string& what);
  // The control node, named after the node being built (plus `suffix`, when one ONNX node makes several).
  std::vector<graph::Value> control(const std::string& op, std::vector<graph::Value> inputs,
                                    std::vector<std::shared_ptr<const graph::Graph>> bodies, size_t outputs,
                                    ops::Attrs attrs = {}, const std::string& suffix = "");
  std::vector<graph::Value> runtime_if(const NodeProto& n, graph::Value cond);
  // Loop(M, cond, v_initial...): outputs the final carried values, then the scan outputs.
  std::vector<graph::Value> import_loop(const NodeProto& n);
  // Scan (opset 9+): states, then scan inputs sliced along scan_input_axes.
  std::vector<graph::Value> import_scan(const NodeProto& n);
  // Scan at opset 8: Scan(sequence_lens, states..., scans...) with a batch axis first on every
  // input; each batch row is a scan of its own (a loop over rows of the same body).
  std::vector<graph::Value> import_scan8(const NodeProto& n);
  // The scan node for states and axis-0 scan inputs `inputs` (`states` of them first).
  std::vector<graph::Value> scan(const NodeProto& n, const ::onnx::GraphProto& body, size_t states,
                                 std::vector<graph::Value> inputs, std::vector<int64_t> in_dirs, std::vector<int64_t> out_dirs,
                                 const std::string& suffix = "");
  // `v` with axis `axis` moved to the front (a scan input), or back from the front (a scan output).
  graph::Value axis_to_front(graph::Value v, int64_t axis, const std::string& what);
  graph::Value front_to_axis(graph::Value v, int64_t axis, const std::string& what);
  int64_t checked_axis(int64_t axis, int64_t rank, const std::string& what);

  // Sequences of tensors. nnvm compiles those whose length and element shapes are known at
  // compile time: a sequence is the list of its elements' values (sequences_), the sequence ops
  // are evaluated here on those lists, SequenceMap's body is inlined per element, and a Loop
  // that carries a sequence is unrolled (its trip count must then be a constant).

  // Graph input `name` of sequence type `type`.
  void add_sequence_input(const std::string& name, const ::onnx::TypeProto& type, const std::vector<std::string>& where);
  [[noreturn]] void refuse_sequence(const NodeProto& n, const std::string& name);
  const Sequence& sequence(const NodeProto& n, int k);
  // Input k as an integer known at compile time (a position, a split size), or `fallback` when
  // it is left out; "nnvm.graph.not_constant" naming the graph input it comes from otherwise.
  std::vector<int64_t> constant_ints(const NodeProto& n, int k, const std::string& what);
  // A position in a sequence of `length` (ONNX accepts -length..length-1, or up to length when
  // inserting).
  size_t position(const NodeProto& n, int k, size_t length, bool inserting);
  std::vector<graph::Value> sequence_op(const NodeProto& n, std::map<size_t, Sequence>& outs);
  graph::Value concat_from_sequence(const NodeProto& n);
  Sequence split_to_sequence(const NodeProto& n);
  // SequenceMap(sequences and tensors): the body inlined once per element of the sequences.
  std::vector<graph::Value> sequence_map(const NodeProto& n, std::map<size_t, Sequence>& outs);
  bool carries_sequence(const NodeProto& n);
  // A Loop that carries a sequence, unrolled: the body inlined once per iteration with the
  // iteration count as a constant, so each iteration's sequence is known at compile time.
  std::vector<graph::Value> unroll_loop(const NodeProto& n, std::map<size_t, Sequence>& sequence_outs);
  bool constant_ints_or_bool(const NodeProto& n, int k, const std::string& what);

  // Optionals (optionals.cpp). nnvm compiles those whose presence is known at compile time: a
  // present optional is its element's value (a tensor in the assembly, or a sequence), an empty
  // one is a name in empty_optionals_; the optional ops are evaluated here.
  std::vector<graph::Value> optional_op(const NodeProto& n, std::map<size_t, Sequence>& sequence_outs,
                                        std::set<size_t>& empty_outs);
  [[noreturn]] void refuse_empty_optional(const NodeProto& n, const std::string& name);

  const ::onnx::ModelProto& m_;
  std::string base_dir_, file_;
  const ImportOptions& options_;
  int64_t opset_;
  const ops::OpRegistry& registry_;
  importers::GraphAssembly root_;
  importers::GraphAssembly* a_ = &root_;  // the graph being built: root_, or a control node's body
  std::map<std::string, ops::TensorType> empty_values_;  // values with an extent of 0, by name
  std::map<std::string, Sequence> sequences_;            // sequence values, by name
  std::set<std::string> empty_optionals_;                // values that are empty optionals (None), by name
  std::string node_name_;          // the graph name of the node being built
  std::vector<std::string> where_;  // its error context
};

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
