// The public API: open the model, pick the driver for its kind, report what cannot be read.
#include "nnvm/coreml/importer.hpp"

#include "formats.hpp"
#include "nnvm/importers/error_context.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

bool is_neural_network(const nnvm_coreml_spec::Model& m) {
  return m.has_neuralnetwork() || m.has_neuralnetworkclassifier() || m.has_neuralnetworkregressor();
}

importers::SupportReport report_of(const ModelFile& f) {
  importers::SupportReport r;
  r.format = "Core ML";
  r.default_domain = "coreml";
  r.ir_version = f.spec.specificationversion();
  const auto& meta = f.spec.description().metadata().userdefined();
  if (auto it = meta.find("com.github.apple.coremltools.source"); it != meta.end()) r.producer = it->second;
  if (auto it = meta.find("com.github.apple.coremltools.version"); it != meta.end())
    r.producer += (r.producer.empty() ? "coremltools " : " via coremltools ") + it->second;
  if (is_neural_network(f.spec)) {
    report_neural_network(f, r);
  } else if (f.spec.has_mlprogram()) {
    report_ml_program(f, r);
  } else {
    r.items.push_back({.node = f.name, .op = model_kind(f.spec),
                       .reason = "nnvm reads NeuralNetwork models and ML Programs only"});
  }
  return r;
}

}  // namespace

importers::SupportReport check_support(const std::string& path, const ImportOptions& options) {
  return importers::with_context("coreml", {"file " + printable(path)},
                                 [&] { return report_of(open_model(path, options)); });
}

graph::Graph import_model(const std::string& path, const ImportOptions& options) {
  return importers::with_context("coreml", {"file " + printable(path)}, [&] {
    ModelFile f = open_model(path, options);
    importers::SupportReport report = report_of(f);
    if (!report.supported()) {
      std::string items = report.to_string();
      throw ImportError("nnvm.coreml.unsupported", items.substr(items.find('\n') + 1), {f.label});
    }
    if (f.spec.has_mlprogram()) return import_ml_program(f, options);
    return import_neural_network(f, options);
  });
}

std::vector<std::string> class_labels(const std::string& path, const ImportOptions& options) {
  ModelFile f = open_model(path, options);
  std::vector<std::string> out;
  if (!f.spec.has_neuralnetworkclassifier()) return out;
  const auto& c = f.spec.neuralnetworkclassifier();
  for (auto& s : c.stringclasslabels().vector()) out.push_back(s);
  for (int64_t v : c.int64classlabels().vector()) out.push_back(std::to_string(v));
  return out;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
