// A model's declared inputs and outputs (ModelDescription): the array type and shape of each,
// with ImportOptions::input_shapes applied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coreml.pb.h"
#include "nnvm/coreml/importer.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

struct DeclaredArray {
  DataType dtype = dtype::float32;
  std::vector<int64_t> shape;  // empty when the description gives none
};

// The feature's array type and default shape (the shape field, else the first enumerated shape,
// else the lower bounds of a shape range). ImportError "nnvm.coreml.unsupported" for a feature
// that is not a multi-array (images, strings, dictionaries), "nnvm.coreml.shape" for a negative
// extent; `where` names the feature.
DeclaredArray declared_array(const nnvm_coreml_spec::FeatureDescription& f, const std::vector<std::string>& where);

// Throws ImportError "nnvm.coreml.shape" when ImportOptions::input_shapes names something that
// is not one of `inputs`.
void check_input_shape_names(const ImportOptions& options, const nnvm_coreml_spec::ModelDescription& d,
                             const std::string& label);

// A graph input's extents; ImportError "nnvm.coreml.shape" for a negative or too large shape.
std::vector<ir::Expr> input_extents(const std::vector<int64_t>& shape, DataType dtype,
                                    const std::vector<std::string>& where);

}  // namespace coreml_import
NNVM_END_NAMESPACE
