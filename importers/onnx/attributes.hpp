// ONNX node attributes as ops::Attrs: INT, FLOAT, STRING, INTS and FLOATS pass through unchanged;
// a TENSOR attribute (ConstantOfShape's value) becomes a list of its one number plus
// "<name>_dtype", the tensor's ONNX type code. Subgraphs and the rest are unsupported.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "nnvm/ops/attrs.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// Why the attribute cannot be imported, or "" when it can. Looks at kinds and data types only;
// tensor data is validated when the node is built.
std::string unsupported_attribute(const ::onnx::AttributeProto& a);

// The node's attributes. ImportError "nnvm.onnx.attribute" for a duplicate name or an
// unsupported kind, "nnvm.onnx.tensor" for bad TENSOR data; `where` names the node.
ops::Attrs convert_attributes(const ::onnx::NodeProto& node, const std::string& base_dir,
                              const std::vector<std::string>& where);

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
