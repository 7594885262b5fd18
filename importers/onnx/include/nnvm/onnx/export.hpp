// The ONNX exporter: a graph, or a compiled model's optimized graph, as an ONNX ModelProto, so
// Netron (or any ONNX reader) can show what nnvm runs.
//
//   std::string bytes = onnx_export::export_model(graph::compile(g));   // fused groups visible
//   std::ofstream("graph.onnx", std::ios::binary) << bytes;
//
// Mapping (ONNX names are the inverse of the importer's):
//   - an op with an "onnx:" importer name is a node of the default domain with that op type and
//     its attributes as they are (a "<name>" list of one value plus "<name>_dtype", which the
//     importer makes of a TENSOR attribute, becomes that TENSOR attribute again);
//   - any other op is a node of domain "ai.nnvm" whose op type is the nnvm op name;
//   - a fused group of a compiled model (one kernel for several ops) is one node of domain
//     "ai.nnvm", op type "fused_<op>_<op>..." ("fused_conv_relu"), reading the values the group
//     reads from outside and writing those used outside. Its "members" STRING attribute lists the
//     member nodes one per line in the graph printer's syntax, with their attributes and types;
//     its "kernel" attribute names the kernel. One node per kernel is what Netron should show:
//     the box count is the kernel count, and a group is read as one step, not as ops that look
//     the same as in the unfused model;
//   - every node's doc_string names its kernel (compiled models only);
//   - constants are initializers with their data, graph inputs and outputs keep their names and
//     types, and every other value has a value_info entry with dtype and shape (symbolic extents
//     as dim_param).
// Values are named after their producing node ("conv_0"; further outputs "topk:1"). The default
// domain's opset is onnx_import::newest_opset, the version nnvm's ops implement, so a graph whose
// ops all have ONNX names imports back into the same graph (plain ONNX, valid for that opset).
//
// Errors: UserError "nnvm.onnx.export" for a data type ONNX cannot hold, or a model of 2 GiB or
// more (protobuf's limit; such weights would need external data).
#pragma once

#include <string>

#include "nnvm/graph/executor.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_export {

// The domain and version of nodes for ops (or fused groups) without an ONNX name.
inline constexpr const char* nnvm_domain = "ai.nnvm";
inline constexpr int64_t nnvm_domain_version = 1;

// `g` as a serialized ModelProto: one ONNX node per op node, in graph order.
std::string export_graph(const graph::Graph& g);

// The compiled model's optimized graph (after the pass pipeline) as a serialized ModelProto: one
// ONNX node per kernel call, fused groups as one "ai.nnvm" node each.
std::string export_model(const graph::CompiledModel& m);

}  // namespace onnx_export
NNVM_END_NAMESPACE
