// ONNX node attributes as ops::Attrs: INT, FLOAT, STRING, INTS and FLOATS pass through unchanged;
// the few STRINGS attributes ops take (is_joined_strings_attribute) become one string, the
// elements joined with ',';
// a TENSOR attribute (ConstantOfShape's value) becomes a list of its one number plus
// "<name>_dtype", the tensor's data type (TreeEnsemble's tensor attributes may hold any number
// of values, all in the list). Subgraphs and the rest are unsupported. Attributes that
// hold a data type code (Cast's `to`) become nnvm type names (translate_dtype_codes), since
// nnvm's ops take no ONNX codes.
#pragma once

#include <onnx/onnx_pb.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nnvm/importers/dtype_attributes.hpp"
#include "nnvm/ops/attrs.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// Why the attribute of an `op_type` node (qualified_op_type) cannot be imported, or "" when it
// can. Looks at kinds and data types only; tensor data is validated when the node is built. The
// subgraph attributes taken are those the importer imports (is_imported_subgraph): If's branches
// (inlined when the condition is known at compile time, else a control node), Loop's and Scan's
// body (control nodes), SequenceMap's body and FlexAttention's score_mod and prob_mod (inlined).
std::string unsupported_attribute(const ::onnx::AttributeProto& a, std::string_view op_type);
bool is_imported_subgraph(const ::onnx::AttributeProto& a, std::string_view op_type);
// The sequence ops the importer evaluates itself on sequences of compile-time length.
bool is_sequence_op(std::string_view op_type);
// The optional ops (Optional, OptionalHasElement, OptionalGetElement), which the importer
// evaluates itself on optionals whose presence is known at compile time.
bool is_optional_op(std::string_view op_type);

// Whether attribute `name` of `op_type` is a STRINGS attribute an op takes as one string, the
// elements joined with ',' (RNN's, GRU's and LSTM's activations); the exporter splits it back.
bool is_joined_strings_attribute(std::string_view op_type, std::string_view name);

// The node's attributes. ImportError "nnvm.onnx.attribute" for a duplicate name or an
// unsupported kind, "nnvm.onnx.tensor" for bad TENSOR data; `where` names the node.
ops::Attrs convert_attributes(const ::onnx::NodeProto& node, const std::string& base_dir,
                              const std::vector<std::string>& where);

// The ONNX ops' attributes that hold a TensorProto data type code, for the importer (codes to
// names), the support report and the exporter (names back to codes).
std::span<const importers::DtypeAttribute> dtype_attributes();

// Why the data type attribute `a` of `op_type` cannot be imported ("Cast attribute 'to': type
// FLOAT8E4M3FN (17) is not supported"), or "" when it can.
std::string unsupported_dtype_attribute(std::string_view op_type, const ::onnx::AttributeProto& a);

// importers::translate_dtype_codes with ONNX's table and codes: Cast's `to` = 1 becomes "float32".
void translate_dtype_codes(std::string_view op_type, ops::Attrs& attrs, const std::vector<std::string>& where);

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
