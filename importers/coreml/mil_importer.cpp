// The ML Program driver: the main function's inputs, its block's ops in program order (MIL is in
// SSA form: an op may read only what an earlier op or an input defined), the block's outputs.
// `const` ops become constants that later ops read as parameters or as tensors.
//
// Float16. coremltools' default programs compute in float16 (float16 weights, casts around the
// body). nnvm's convolutions and dense ops compute in float32 and wider, so the program is run
// in float32: float16 constants are widened as read, casts to fp16 keep float32 (mil_ops.cpp),
// and float16 inputs and outputs are cast at the graph's edges so its interface stays the
// program's. Results are at least as accurate as float16 arithmetic.
#include <memory>
#include <set>

#include "description.hpp"
#include "formats.hpp"
#include "mil.hpp"
#include "nnvm/importers/error_context.hpp"
#include "nnvm/importers/graph_assembly.hpp"
#include "weights.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

namespace spec = nnvm_coreml_spec;

const ops::OpRegistry& registry_of(const ImportOptions& o) { return o.registry ? *o.registry : ops::default_registry(); }

// The function the model runs ("main", else the only one) and its block for the function's
// opset (else the only specialization).
const spec::Function& main_function(const ModelFile& f) {
  const auto& fs = f.spec.mlprogram().functions();
  if (auto it = fs.find("main"); it != fs.end()) return it->second;
  if (fs.size() == 1) return fs.begin()->second;
  throw ImportError("nnvm.coreml.graph", str_cat("the program has ", fs.size(), " functions and none is named main"),
                    {f.label});
}

const spec::Block& main_block(const ModelFile& f, const spec::Function& fn) {
  const auto& bs = fn.block_specializations();
  if (auto it = bs.find(fn.opset()); it != bs.end()) return it->second;
  if (bs.size() == 1) return bs.begin()->second;
  throw ImportError("nnvm.coreml.graph", str_cat("the main function has no block for its opset ", quote(fn.opset())),
                    {f.label});
}

std::string op_label(const spec::Operation& op) {
  return str_cat("op ", op.outputs_size() > 0 ? quote(op.outputs(0).name()) : std::string("(no outputs)"), " (",
                 quote(op.type()), ")");
}

class ProgramImporter {
 public:
  ProgramImporter(const ModelFile& f, const ImportOptions& options)
      : f_(f), options_(options), a_("coreml", f.name, registry_of(options), FoldBudget{options.fold_budget_bytes}) {}

  graph::Graph run() {
    check_input_shape_names(options_, f_.spec.description(), f_.label);
    const spec::Function& fn = main_function(f_);
    for (auto& in : fn.inputs()) add_input(in);
    const spec::Block& block = main_block(f_, fn);
    for (auto& op : block.operations()) {
      std::vector<std::string> where{f_.label, op_label(op)};
      importers::with_context("coreml", where, [&] { build(op, where); });
    }
    for (auto& name : block.outputs()) {
      std::vector<std::string> where{f_.label, "output " + quote(name)};
      graph::Value v = importers::with_context("coreml", where, [&] { return value(name, where); });
      if (float16_values_.count(name) && a_.graph().type(v).dtype == dtype::float32)
        v = cast(v, dtype::float16, name, "float16", where);
      a_.builder().output(v);
    }
    return importers::with_context("coreml", {f_.label}, [&] { return a_.builder().build(); });
  }

 private:
  void add_input(const spec::NamedValueType& in) {
    std::vector<std::string> where{f_.label, "input " + quote(in.name())};
    if (!in.type().has_tensortype())
      throw ImportError("nnvm.coreml.unsupported", "inputs other than tensors are not supported", where);
    const spec::TensorType& t = in.type().tensortype();
    auto dt = mil_dtype(t.datatype());
    if (!dt) throw ImportError("nnvm.coreml.unsupported", str_cat("input type ", mil_dtype_name(t.datatype())), where);
    std::vector<int64_t> shape;
    if (auto it = options_.input_shapes.find(in.name()); it != options_.input_shapes.end()) {
      shape = it->second;
    } else {
      for (auto& d : t.dimensions()) {
        if (!d.has_constant())
          throw ImportError("nnvm.coreml.shape",
                            "the input has a flexible dimension; set ImportOptions::input_shapes (nnvmc: --input-shape)",
                            where);
        shape.push_back(d.constant().size() > (uint64_t(1) << 40) ? -1 : int64_t(d.constant().size()));
      }
    }
    graph::Value v = importers::with_context("coreml", where, [&] {
      return a_.builder().input(a_.claim(in.name()), *dt, input_extents(shape, *dt, where));
    });
    if (*dt == dtype::float16) v = cast(v, dtype::float32, in.name(), "float32", where);
    define(in.name(), v, where);
  }

  MilConst read_widened(const spec::Value& v, const std::vector<std::string>& where) {
    MilConst c = read_mil_value(v, f_.model_dir, where);
    c.array = widen_float16(std::move(c.array));
    return c;
  }

  // `v` cast to `to` as a node named "<name>/<suffix>".
  graph::Value cast(graph::Value v, DataType to, const std::string& name, const std::string& suffix,
                    const std::vector<std::string>& where) {
    return importers::with_context("coreml", where, [&] {
      Context c(a_, where, a_.claim(name + "/" + suffix));
      return c.op("cast", {v}, ops::Attrs().set_dtype("to", to));
    });
  }

  void define(const std::string& name, graph::Value v, const std::vector<std::string>& where) {
    if (defined(name)) throw ImportError("nnvm.coreml.graph", str_cat("value ", quote(name), " is defined twice"), where);
    a_.define(name, v);
  }
  bool defined(const std::string& name) const { return a_.find(name) || consts_.count(name); }

  graph::Value value(const std::string& name, const std::vector<std::string>& where) {
    if (const graph::Value* v = a_.find(name)) return *v;
    if (auto it = consts_.find(name); it != consts_.end()) return materialize(*it->second, name);
    throw ImportError("nnvm.coreml.graph",
                      str_cat("value ", quote(name), " is read before any op or input defines it"), where);
  }

  // A constant as a graph constant, made once per constant.
  graph::Value materialize(const MilConst& c, const std::string& name) {
    if (auto it = materialized_.find(&c); it != materialized_.end()) return it->second;
    graph::Value v = a_.builder().constant(a_.claim(name), c.array);
    materialized_.emplace(&c, v);
    return v;
  }

  MilBinding resolve(const spec::Argument::Binding& b, const std::vector<std::string>& where) {
    if (b.has_value()) {
      immediates_.push_back(std::make_unique<MilConst>(read_widened(b.value(), where)));
      return {std::nullopt, immediates_.back().get()};
    }
    if (auto it = consts_.find(b.name()); it != consts_.end()) return {std::nullopt, it->second.get()};
    if (const graph::Value* v = a_.find(b.name())) return {*v, nullptr};
    throw ImportError("nnvm.coreml.graph",
                      str_cat("value ", quote(b.name()), " is read before any op or input defines it"), where);
  }

  void build(const spec::Operation& op, const std::vector<std::string>& where) {
    if (op.blocks_size() > 0)
      throw ImportError("nnvm.coreml.unsupported", "ops with nested blocks (control flow) are not supported", where);
    if (op.type() == "const") {
      auto val = op.attributes().find("val");
      if (op.outputs_size() != 1 || val == op.attributes().end())
        throw ImportError("nnvm.coreml.graph", "a const op needs one output and a val attribute", where);
      if (defined(op.outputs(0).name()))
        throw ImportError("nnvm.coreml.graph", str_cat("value ", quote(op.outputs(0).name()), " is defined twice"), where);
      consts_[op.outputs(0).name()] = std::make_unique<MilConst>(read_widened(val->second, where));
      return;
    }
    auto it = op_converters().find(op.type());
    if (it == op_converters().end())
      throw ImportError("nnvm.coreml.unsupported", str_cat("MIL op ", quote(op.type()), " is not supported"), where);
    const std::string base = op.outputs_size() > 0 ? op.outputs(0).name() : op.type();
    OpContext c(
        op, [&](const spec::Argument::Binding& b, const std::vector<std::string>& w) { return resolve(b, w); },
        [&](const MilConst& k, const std::string& name) { return materialize(k, base + "/" + name); }, a_, where,
        a_.claim(base));
    std::vector<graph::Value> outs = it->second(c);
    if (int(outs.size()) != op.outputs_size())
      throw ImportError("nnvm.coreml.graph",
                        str_cat("the op names ", op.outputs_size(), " outputs; nnvm produces ", outs.size()), where);
    for (size_t k = 0; k < outs.size(); ++k) {
      const auto& out = op.outputs(int(k));
      if (out.type().tensortype().datatype() == spec::FLOAT16) float16_values_.insert(out.name());
      define(out.name(), outs[k], where);
    }
  }

  const ModelFile& f_;
  const ImportOptions& options_;
  importers::GraphAssembly a_;
  std::map<std::string, std::unique_ptr<MilConst>> consts_;
  std::vector<std::unique_ptr<MilConst>> immediates_;
  std::map<const MilConst*, graph::Value> materialized_;
  std::set<std::string> float16_values_;  // values the program declares float16
};

}  // namespace

graph::Graph import_ml_program(const ModelFile& f, const ImportOptions& options) {
  return ProgramImporter(f, options).run();
}

void report_ml_program(const ModelFile& f, importers::SupportReport& r) {
  r.ir_version = f.spec.mlprogram().version();
  const spec::Function& fn = main_function(f);
  for (auto& in : fn.inputs()) r.inputs.push_back(in.name());
  for (auto& op : main_block(f, fn).operations()) {
    ++r.op_counts[op.type()];
    if (op.type() != "const" && !op_converters().count(op.type()))
      r.items.push_back({.node = op.outputs_size() ? op.outputs(0).name() : "", .op = op.type(),
                         .reason = "no nnvm op for this MIL op"});
    else if (op.blocks_size() > 0)
      r.items.push_back({.node = op.outputs_size() ? op.outputs(0).name() : "", .op = op.type(),
                         .reason = "control flow (nested blocks)"});
  }
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
