#include "nnvm/mxnet/importer.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <set>

#include "convert.hpp"
#include "nnvm/importers/error_context.hpp"
#include "nnvm/importers/files.hpp"
#include "nnvm/importers/graph_assembly.hpp"
#include "nnvm/limits.hpp"
#include "symbol.hpp"
#include "type_flags.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

namespace {

const ops::OpRegistry& registry_of(const ImportOptions& o) { return o.registry ? *o.registry : ops::default_registry(); }

Symbol load_symbol(const std::string& path, const ImportOptions& options) {
  std::string text = importers::read_regular_file("mxnet", path, options.max_symbol_bytes,
                                                  "; raise ImportOptions::max_symbol_bytes");
  return parse_symbol(text, "file " + printable(path));
}

// The name a parameter is saved under, without MXNet's "arg:"/"aux:" prefix.
std::string parameter_name(const std::string& key) {
  if (key.rfind("arg:", 0) == 0 || key.rfind("aux:", 0) == 0) return key.substr(4);
  return key;
}

// Which node outputs the converters read: a *Output op's label input is never read, so the
// variable that feeds only labels is not a graph input.
std::vector<bool> read_nodes(const Symbol& s) {
  std::vector<bool> read(s.nodes.size(), false);
  for (auto& h : s.heads) read[h.node] = true;
  for (size_t i = s.nodes.size(); i-- > 0;) {
    const SymbolNode& n = s.nodes[i];
    if (!read[i] || n.op == "null") continue;
    auto it = converters().find(n.op);
    size_t used = it == converters().end() ? n.inputs.size() : std::min(n.inputs.size(), it->second.data_inputs);
    for (size_t k = 0; k < used; ++k) read[n.inputs[k].node] = true;
  }
  return read;
}

class Importer {
 public:
  Importer(Symbol s, const std::string& path, std::map<std::string, NDArray> params, const ImportOptions& options)
      : s_(std::move(s)),
        file_("file " + printable(path)),
        params_(std::move(params)),
        options_(options),
        a_("mxnet", graph_name(path), registry_of(options), FoldBudget{options.fold_budget_bytes}) {}

  graph::Graph run() {
    const std::vector<bool> read = read_nodes(s_);
    std::set<std::string> inputs;
    values_.resize(s_.nodes.size());
    for (size_t i = 0; i < s_.nodes.size(); ++i) {
      if (!read[i]) continue;
      const SymbolNode& n = s_.nodes[i];
      std::vector<std::string> where{file_, node_label(n)};
      if (n.op == "null") {
        values_[i] = {variable(n, where, inputs)};
        continue;
      }
      values_[i] = importers::with_context("mxnet", where, [&] { return build(n, where); });
    }
    for (auto& [name, unused] : options_.input_shapes)
      if (!inputs.count(name))
        throw ImportError("nnvm.mxnet.shape",
                          str_cat("ImportOptions::input_shapes names '", name, "', which is not a data input"), {file_});
    for (auto& h : s_.heads) a_.builder().output(value(h, {file_, "head of " + node_label(s_.nodes[h.node])}));
    return importers::with_context("mxnet", {file_}, [&] { return a_.builder().build(); });
  }

 private:
  static std::string graph_name(const std::string& path) {
    std::string stem = std::filesystem::path(path).filename().string();
    const std::string suffix = "-symbol.json";
    if (stem.size() > suffix.size() && stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0)
      return stem.substr(0, stem.size() - suffix.size());
    return std::filesystem::path(path).stem().string();
  }

  graph::Value value(const Entry& e, const std::vector<std::string>& where) const {
    const std::vector<graph::Value>& outs = values_[e.node];
    if (e.index >= outs.size())
      throw ImportError("nnvm.mxnet.graph",
                        str_cat("output ", e.index, " of ", node_label(s_.nodes[e.node]), " is read, but it has ",
                                outs.size()),
                        where);
    return outs[e.index];
  }

  // A variable: a parameter when the parameter file holds it, else a data input.
  graph::Value variable(const SymbolNode& n, const std::vector<std::string>& where, std::set<std::string>& inputs) {
    const std::string name = a_.claim(n.name);
    if (auto it = params_.find(n.name); it != params_.end())
      return importers::with_context("mxnet", where, [&] { return a_.builder().constant(name, it->second); });
    inputs.insert(n.name);
    DataType dtype = dtype::float32;
    if (auto it = n.hidden.find("__dtype__"); it != n.hidden.end()) {
      char* end = nullptr;
      const long flag = std::strtol(it->second.c_str(), &end, 10);
      auto d = *end == '\0' && end != it->second.c_str() ? dtype_of_type_flag(flag) : std::nullopt;
      if (!d) throw ImportError("nnvm.mxnet.attribute", str_cat("__dtype__ ", it->second, " is not a type nnvm reads"), where);
      dtype = *d;
    }
    if (auto it = options_.input_dtypes.find(n.name); it != options_.input_dtypes.end()) dtype = it->second;
    std::vector<int64_t> shape;
    if (auto it = options_.input_shapes.find(n.name); it != options_.input_shapes.end()) {
      shape = it->second;
    } else if (auto h = n.hidden.find("__shape__"); h != n.hidden.end()) {
      shape = declared_shape(h->second, where);
    } else {
      throw ImportError("nnvm.mxnet.shape",
                        str_cat("the data input '", n.name,
                                "' has no shape (not a parameter in the .params file, and the symbol does not declare "
                                "one); set ImportOptions::input_shapes (nnvmc: --input-shape ",
                                n.name, ":1x3x224x224)"),
                        where);
    }
    std::vector<ir::Expr> extents;
    for (int64_t e : shape) {
      if (e < 0) throw ImportError("nnvm.mxnet.shape", str_cat("input extent ", e, " is negative"), where);
      extents.emplace_back(e);
    }
    if (!checked_tensor_bytes(shape, uint64_t(dtype.bytes())))
      throw ImportError("nnvm.mxnet.too_large", "the input is larger than 2^48 bytes", where);
    return importers::with_context("mxnet", where, [&] { return a_.builder().input(name, dtype, extents); });
  }

  // "(1, 3, 224, 224)"; 0 (MXNet's unknown extent) is refused.
  static std::vector<int64_t> declared_shape(const std::string& text, const std::vector<std::string>& where) {
    std::vector<int64_t> shape;
    std::string body = text;
    for (char& ch : body)
      if (ch == '(' || ch == ')' || ch == '[' || ch == ']' || ch == ',') ch = ' ';
    std::istringstream in(body);
    std::string part;
    while (in >> part) {
      char* end = nullptr;
      long long v = std::strtoll(part.c_str(), &end, 10);
      if (*end != '\0' || v <= 0)
        throw ImportError("nnvm.mxnet.shape",
                          str_cat("the declared shape ", printable(text),
                                  " has an unknown or invalid extent; set ImportOptions::input_shapes"),
                          where);
      shape.push_back(v);
    }
    return shape;
  }

  std::vector<graph::Value> build(const SymbolNode& n, const std::vector<std::string>& where) {
    auto it = converters().find(n.op);
    if (it == converters().end())
      throw ImportError("nnvm.mxnet.unsupported", str_cat("MXNet op ", printable(n.op), " is not supported"), where);
    std::vector<graph::Value> inputs;
    const size_t used = std::min(n.inputs.size(), it->second.data_inputs);
    for (size_t k = 0; k < used; ++k) inputs.push_back(value(n.inputs[k], where));
    // MXNet 0.8 files list BatchNorm's data, gamma and beta only; its loader adds the moving
    // statistics as variables "<node>_moving_mean" and "<node>_moving_var", as saved.
    if (n.op == "BatchNorm" && inputs.size() == 3)
      for (const char* stat : {"_moving_mean", "_moving_var"}) {
        auto it = params_.find(n.name + stat);
        if (it == params_.end())
          throw ImportError("nnvm.mxnet.params",
                            str_cat("the node has no moving statistics and the parameters hold no ",
                                    printable(n.name + stat)),
                            where);
        inputs.push_back(importers::with_context(
            "mxnet", where, [&] { return a_.builder().constant(a_.claim(n.name + stat), it->second); }));
      }
    NodeContext c(n, std::move(inputs), a_, where, a_.claim(n.name));
    return it->second.convert(c);
  }

  Symbol s_;
  std::string file_;
  std::map<std::string, NDArray> params_;
  const ImportOptions& options_;
  importers::GraphAssembly a_;
  std::vector<std::vector<graph::Value>> values_;
};

// The parameters by name (prefix removed); a name saved twice is refused.
std::map<std::string, NDArray> load_params(const std::string& path, const ImportOptions& options) {
  std::map<std::string, NDArray> out;
  if (path.empty()) return out;
  for (auto& a : read_ndarray_file(path, options.max_params_bytes)) {
    if (a.name.empty())
      throw ImportError("nnvm.mxnet.params", "the parameter file holds unnamed arrays (a saved list, not parameters)",
                        {"file " + printable(path)});
    if (!out.emplace(parameter_name(a.name), std::move(a.data)).second)
      throw ImportError("nnvm.mxnet.params", str_cat("parameter ", printable(a.name), " appears twice"),
                        {"file " + printable(path)});
  }
  return out;
}


// The ops of `s` that have no table entry. Variables are not listed as inputs: which of them
// are parameters only the parameter file says.
importers::SupportReport report_of(const Symbol& s) {
  importers::SupportReport r;
  r.format = "MXNet";
  r.default_domain = "mxnet";
  // MXNet writes its version as major*10000 + minor*100 + patch (10901 is 1.9.1).
  if (s.mxnet_version > 0)
    r.producer = str_cat("MXNet ", s.mxnet_version / 10000, ".", s.mxnet_version / 100 % 100, ".", s.mxnet_version % 100);
  for (const SymbolNode& n : s.nodes) {
    if (n.op == "null") continue;
    ++r.op_counts[n.op];
    if (!converters().count(n.op))
      r.items.push_back({.node = n.name, .op = n.op, .reason = "no nnvm op for this MXNet op"});
  }
  return r;
}

}  // namespace

importers::SupportReport check_support(const std::string& symbol_json, const ImportOptions& options) {
  return importers::with_context("mxnet", {"file " + printable(symbol_json)},
                                 [&] { return report_of(load_symbol(symbol_json, options)); });
}

graph::Graph import_model(const std::string& symbol_json, const std::string& params, const ImportOptions& options) {
  return importers::with_context("mxnet", {"file " + printable(symbol_json)}, [&] {
    Symbol s = load_symbol(symbol_json, options);
    importers::SupportReport report = report_of(s);
    if (!report.supported()) {
      std::string items = report.to_string();
      throw ImportError("nnvm.mxnet.unsupported", items.substr(items.find('\n') + 1),
                        {"file " + printable(symbol_json)});
    }
    return Importer(std::move(s), symbol_json, load_params(params, options), options).run();
  });
}

}  // namespace mxnet_import
NNVM_END_NAMESPACE
