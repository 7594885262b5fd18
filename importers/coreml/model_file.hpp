// Opening a Core ML model: a `.mlmodel` file, or an `.mlpackage` directory whose Manifest.json
// names the root model file (Data/com.apple.CoreML/model.mlmodel as coremltools writes it), and
// parsing the specification with protobuf.
#pragma once

#include <string>
#include <vector>

#include "coreml.pb.h"
#include "nnvm/coreml/importer.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

struct ModelFile {
  nnvm_coreml_spec::Model spec;
  std::string label;       // "file <path>" for error contexts
  std::string name;        // the model's name: the file or package name without its extension
  std::string model_dir;   // the directory blob file names ("@model_path/...") resolve against
};

// ImportError nnvm.coreml.file for a missing, oversized or unparsable file or package.
ModelFile open_model(const std::string& path, const ImportOptions& options);

// The kind of model `spec` holds, as the specification names it ("neuralNetwork", "mlProgram",
// "pipeline", ...; "empty" when none is set).
std::string model_kind(const nnvm_coreml_spec::Model& spec);

}  // namespace coreml_import
NNVM_END_NAMESPACE
