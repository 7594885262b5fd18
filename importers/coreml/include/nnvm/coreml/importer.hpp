// The Core ML importer: a `.mlmodel` file holding a NeuralNetwork, NeuralNetworkClassifier or
// NeuralNetworkRegressor (the format since Core ML 1), or an `.mlpackage` directory holding an
// ML Program (MIL, what coremltools writes today, weights in weights/weight.bin), becomes a
// graph::Graph of registered ops.
//
//   graph::Graph g = coreml_import::import_model("MobileNet.mlmodel");
//   graph::Graph p = coreml_import::import_model("resnet.mlpackage");
//
// The file is read through nnvm's own declaration of the Core ML specification's subset
// (importers/coreml/coreml.proto); layers and MIL ops map onto nnvm's ops through tables
// (importers/coreml/nn_layers_*.cpp, mil_ops.cpp). Every file is hostile: sizes, weight counts,
// blob offsets, names and shapes are validated before use.
//
// Shapes. An ML Program and a NeuralNetwork with the exact array mapping (specification 4 on,
// what coremltools writes) keep the declared input shape. A NeuralNetwork with the rank-5
// mapping (Core ML 1 to 3) declares inputs without a batch axis, as (C), (C, H, W) or
// (Seq, C, H, W): nnvm's graph input is (N, ...declared) with N = 1, or as given in
// ImportOptions::input_shapes, the layers run on (N, C, H, W) and each output is
// (N, ...its declared shape) when the model declares one, else (N, C, H, W).
//
// Classifiers. A NeuralNetworkClassifier's outputs are its probabilities as a tensor (1, classes)
// in class-label order, where Core ML gives a dictionary, and nothing for the predicted label
// (nnvm has no strings): class_labels() lists the labels, and the label is the one at the
// probabilities' argmax.
//
// Errors are ImportError with ids nnvm.coreml.file, nnvm.coreml.graph, nnvm.coreml.shape,
// nnvm.coreml.attribute, nnvm.coreml.weights and nnvm.coreml.unsupported; an op's own error
// (nnvm.ops.*, nnvm.graph.*) keeps its id. The context names the file, then the layer or op,
// then the attribute.
//
// Needs the nnvm_coreml library (CMake target nnvm::coreml), which uses protobuf and
// nlohmann-json.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nnvm/graph/node.hpp"
#include "nnvm/importers/support_report.hpp"
#include "nnvm/ndarray.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

struct ImportOptions {
  // Input shapes by name, replacing the declared ones (a flexible shape's range or enumeration
  // takes its default otherwise). For a rank-5-mapping NeuralNetwork the shape includes the
  // batch axis: (N, ...declared).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // The model file (model.mlmodel, also inside a package) larger than this is rejected before
  // parsing; weight.bin is read blob by blob, each checked against the file's real size.
  uint64_t max_model_bytes = 2ull << 30;
  // Bytes of constants that constant folding may create during the import (FoldBudget).
  uint64_t fold_budget_bytes = FoldBudget::default_bytes;
  // Where ops are looked up; nullptr means ops::default_registry().
  const ops::OpRegistry* registry = nullptr;
};

// Lists what cannot be imported (layers or MIL ops without a table entry, model kinds nnvm does
// not read). Throws only for files that cannot be read or parsed.
importers::SupportReport check_support(const std::string& path, const ImportOptions& options = {});

// The model as a graph with constant folding applied. `path` is a `.mlmodel` file or an
// `.mlpackage` directory. Graph inputs are the model's inputs in description order, under their
// Core ML names; g.outputs follow the description's outputs (a classifier: see above).
graph::Graph import_model(const std::string& path, const ImportOptions& options = {});

// A NeuralNetworkClassifier's class labels in probability order (int64 labels as decimal text);
// empty for other models.
std::vector<std::string> class_labels(const std::string& path, const ImportOptions& options = {});

}  // namespace coreml_import
NNVM_END_NAMESPACE
