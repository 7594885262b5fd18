// What the importer can and cannot import, decided from the model file alone (before building).
#pragma once

#include <onnx/onnx_pb.h>

#include "nnvm/onnx/importer.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// How deep If branches may nest (each level is a recursion of the importer).
constexpr int max_subgraph_depth = 16;

// The model's opset for the default domain ("" or "ai.onnx"); 1 when it imports none.
int64_t default_opset(const ::onnx::ModelProto& m);
bool is_default_domain(const std::string& domain);
// The node's op type, prefixed "domain:" outside the default domain ("ai.onnx.ml:Binarizer"):
// how adapter rows for other domains' operators are keyed.
std::string qualified_op_type(const ::onnx::NodeProto& n);

// How errors and reports name node `index`: its name, else its first output, else "#index".
std::string node_label(const ::onnx::NodeProto& n, size_t index);

// Every unsupported domain, opset, op, attribute and data type of the model, plus its summary.
SupportReport analyze(const ::onnx::ModelProto& m, const ops::OpRegistry& registry);

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
