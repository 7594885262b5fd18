// The NeuralNetwork driver: inputs from the description (see importer.hpp for the rank-5
// mapping's batch axis), layers in dependency order through the layer table, outputs as the
// description lists them.
#include <set>

#include "description.hpp"
#include "formats.hpp"
#include "nn.hpp"
#include "nnvm/importers/error_context.hpp"
#include "nnvm/importers/graph_assembly.hpp"
#include "nnvm/importers/topological_order.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

namespace spec = nnvm_coreml_spec;
using Layers = google::protobuf::RepeatedPtrField<Layer>;

// The parts the three NeuralNetwork kinds share.
struct Network {
  const Layers* layers = nullptr;
  bool rank5 = true;
  int preprocessing = 0;
  const spec::NeuralNetworkClassifier* classifier = nullptr;
};

Network network_of(const spec::Model& m) {
  Network n;
  if (m.has_neuralnetwork()) {
    const auto& nn = m.neuralnetwork();
    n = {&nn.layers(), nn.arrayinputshapemapping() == spec::RANK5_ARRAY_MAPPING, nn.preprocessing_size(), nullptr};
  } else if (m.has_neuralnetworkclassifier()) {
    const auto& nn = m.neuralnetworkclassifier();
    n = {&nn.layers(), nn.arrayinputshapemapping() == spec::RANK5_ARRAY_MAPPING, nn.preprocessing_size(), &nn};
  } else {
    const auto& nn = m.neuralnetworkregressor();
    n = {&nn.layers(), nn.arrayinputshapemapping() == spec::RANK5_ARRAY_MAPPING, nn.preprocessing_size(), nullptr};
  }
  return n;
}

std::string layer_label(const Layer& l) { return str_cat("layer ", quote(l.name()), " (", layer_kind(l), ")"); }

const ops::OpRegistry& registry_of(const ImportOptions& o) { return o.registry ? *o.registry : ops::default_registry(); }

class NeuralNetworkImporter {
 public:
  NeuralNetworkImporter(const ModelFile& f, const ImportOptions& options)
      : f_(f),
        n_(network_of(f.spec)),
        options_(options),
        a_("coreml", f.name, registry_of(options), FoldBudget{options.fold_budget_bytes}) {}

  graph::Graph run() {
    const auto& d = f_.spec.description();
    check_input_shape_names(options_, d, f_.label);
    if (n_.preprocessing > 0)
      throw ImportError("nnvm.coreml.unsupported", "image preprocessing is not supported", {f_.label});
    std::set<std::string> available;
    for (auto& in : d.input()) {
      add_input(in);
      available.insert(in.name());
    }
    std::vector<importers::NodeValues> nodes;
    for (auto& l : *n_.layers)
      nodes.push_back({{l.input().begin(), l.input().end()}, {l.output().begin(), l.output().end()}});
    auto order = importers::topological_order(
        "coreml", nodes, available, [&](size_t i) { return layer_label((*n_.layers)[int(i)]); }, {f_.label});
    for (size_t i : order) {
      const Layer& l = (*n_.layers)[int(i)];
      std::vector<std::string> where{f_.label, layer_label(l)};
      importers::with_context("coreml", where, [&] { build(l, where); });
    }
    for (auto& out : d.output()) add_output(out);
    return importers::with_context("coreml", {f_.label}, [&] { return a_.builder().build(); });
  }

 private:
  // Under the rank-5 mapping the graph input is (N, ...declared) and the layers see (N, C, H, W).
  void add_input(const spec::FeatureDescription& in) {
    std::vector<std::string> where{f_.label, "input " + quote(in.name())};
    DeclaredArray decl = declared_array(in, where);
    std::vector<int64_t> shape = decl.shape;
    if (n_.rank5) shape.insert(shape.begin(), 1);
    if (auto it = options_.input_shapes.find(in.name()); it != options_.input_shapes.end()) shape = it->second;
    if (shape.empty() || (n_.rank5 && shape.size() == 1))
      throw ImportError("nnvm.coreml.shape",
                        "the input declares no shape; set ImportOptions::input_shapes (nnvmc: --input-shape)", where);
    // A NeuralNetwork computes in float32 whatever the declared array type.
    const DataType dt = dtype::float32;
    graph::Value v = importers::with_context("coreml", where, [&] {
      return a_.builder().input(a_.claim(in.name()), dt, input_extents(shape, dt, where));
    });
    if (n_.rank5) {
      std::vector<int64_t> nchw;
      if (shape.size() == 2) nchw = {shape[0], shape[1], 1, 1};                    // (N, C)
      else if (shape.size() == 4) nchw = shape;                                     // (N, C, H, W)
      else if (shape.size() == 5 && shape[1] == 1) nchw = {shape[0], shape[2], shape[3], shape[4]};  // (N, 1, C, H, W)
      else
        throw ImportError("nnvm.coreml.shape",
                          str_cat("a rank-5-mapping input is (N, C) or (N, C, H, W) with the batch axis; this one has "
                                  "rank ", shape.size()),
                          where);
      if (nchw != shape)
        v = importers::with_context("coreml", where, [&] {
          Context c(a_, where, a_.claim(in.name() + "/nchw"));
          return c.reshape(v, nchw);
        });
    }
    a_.define(in.name(), v);
  }

  void build(const Layer& l, const std::vector<std::string>& where) {
    auto it = layer_converters().find(int(l.layer_case()));
    if (it == layer_converters().end())
      throw ImportError("nnvm.coreml.unsupported", str_cat("layer kind ", layer_kind(l), " is not supported"), where);
    std::vector<graph::Value> inputs;
    for (auto& name : l.input()) inputs.push_back(*a_.find(name));  // topological_order checked them
    LayerContext c(l, std::move(inputs), n_.rank5, a_, where, a_.claim(l.name().empty() ? layer_kind(l) : l.name()));
    std::vector<graph::Value> outs = it->second(c);
    if (int(outs.size()) != l.output_size())
      throw ImportError("nnvm.coreml.graph",
                        str_cat("the layer names ", l.output_size(), " outputs; it produces ", outs.size()), where);
    for (size_t k = 0; k < outs.size(); ++k) a_.define(l.output(int(k)), outs[k]);
  }

  void add_output(const spec::FeatureDescription& out) {
    const auto& d = f_.spec.description();
    std::vector<std::string> where{f_.label, "output " + quote(out.name())};
    std::string blob = out.name();
    if (n_.classifier) {
      // The predicted label is a string (or int64) Core ML derives from the probabilities.
      if (out.name() == d.predictedfeaturename()) return;
      if (out.name() == d.predictedprobabilitiesname() && !n_.classifier->labelprobabilitylayername().empty())
        blob = n_.classifier->labelprobabilitylayername();
    }
    const graph::Value* v = a_.find(blob);
    if (!v) throw ImportError("nnvm.coreml.graph", str_cat("no layer produces ", quote(blob)), where);
    graph::Value y = *v;
    importers::with_context("coreml", where, [&] {
      Context c(a_, where, a_.claim(out.name() + "/output"));
      std::vector<int64_t> shape = c.shape(y);
      std::vector<int64_t> want;
      if (n_.classifier && out.name() == d.predictedprobabilitiesname()) {
        want = {shape.empty() ? 1 : shape[0], -1};  // (N, classes)
      } else if (n_.rank5 && out.type().has_multiarraytype() && out.type().multiarraytype().shape_size() > 0) {
        want = {shape.empty() ? 1 : shape[0]};
        for (int64_t e : out.type().multiarraytype().shape()) want.push_back(e);
        int64_t have = 1, need = 1;
        for (int64_t e : shape) have *= e;
        for (int64_t e : want) need *= e;
        if (have != need) want.clear();  // a declared shape that does not fit: keep (N, C, H, W)
      }
      if (!want.empty()) y = c.reshape(y, want);
    });
    a_.builder().output(y);
  }

  const ModelFile& f_;
  Network n_;
  const ImportOptions& options_;
  importers::GraphAssembly a_;
};

}  // namespace

graph::Graph import_neural_network(const ModelFile& f, const ImportOptions& options) {
  return NeuralNetworkImporter(f, options).run();
}

void report_neural_network(const ModelFile& f, importers::SupportReport& r) {
  const Network n = network_of(f.spec);
  for (auto& l : *n.layers) {
    const std::string kind = layer_kind(l);
    ++r.op_counts[kind];
    if (!layer_converters().count(int(l.layer_case())))
      r.items.push_back({.node = l.name(), .op = kind, .reason = "no nnvm op for this layer kind"});
  }
  if (n.preprocessing > 0) r.items.push_back({.node = "", .op = "preprocessing", .reason = "image preprocessing"});
  for (auto& in : f.spec.description().input()) r.inputs.push_back(in.name());
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
