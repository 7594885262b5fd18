// A Keras model file opened: the model's configuration (JSON) and its weights (HDF5), from
// either form Keras writes:
//   - a Keras 3 `.keras` archive: a zip holding config.json, model.weights.h5, metadata.json
//     (read with libzip from memory; every member's size is checked against the limits before
//     it is inflated);
//   - a legacy full-model `.h5` (Keras 2, or Keras 3's `model.save("x.h5")`): the configuration
//     in the root attribute `model_config`, the weights under `model_weights/`.
// The form is told by the file's first bytes, not its name.
#pragma once

#include <memory>
#include <string>

#include "h5_file.hpp"
#include "nnvm/keras/importer.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

struct ModelFile {
  std::string label;  // "file NAME", the start of every error's context
  std::string config_json;
  std::unique_ptr<H5File> weights;
  bool legacy_h5 = false;
  std::string keras_version;  // as the file records it; may be empty
};

// ImportError "nnvm.keras.file" for a file that is neither form, a missing member, or a member
// over the limits.
ModelFile open_model_file(const std::string& path, const ImportOptions& options);

}  // namespace keras_import
NNVM_END_NAMESPACE
