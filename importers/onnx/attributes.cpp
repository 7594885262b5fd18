#include "attributes.hpp"

#include "nnvm/onnx/dtype_codes.hpp"
#include "support.hpp"
#include "tensor.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

namespace {

using ::onnx::AttributeProto;

// Old exporters leave `type` unset; the field that holds a value tells the kind then.
AttributeProto::AttributeType kind_of(const AttributeProto& a) {
  if (a.type() != AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return AttributeProto::FLOAT;
  if (a.has_i()) return AttributeProto::INT;
  if (a.has_s()) return AttributeProto::STRING;
  if (a.has_t()) return AttributeProto::TENSOR;
  if (a.has_g()) return AttributeProto::GRAPH;
  if (a.floats_size()) return AttributeProto::FLOATS;
  if (a.ints_size()) return AttributeProto::INTS;
  if (a.strings_size()) return AttributeProto::STRINGS;
  if (a.tensors_size()) return AttributeProto::TENSORS;
  if (a.graphs_size()) return AttributeProto::GRAPHS;
  return AttributeProto::UNDEFINED;
}

// TreeEnsemble (ai.onnx.ml) keeps its thresholds, modes, weights and sets in tensor attributes
// of any length; they arrive as lists like INTS and FLOATS.
bool takes_tensor_list(std::string_view op_type, const std::string& name) {
  return op_type == "ai.onnx.ml:TreeEnsemble" &&
         (name == "nodes_splits" || name == "nodes_modes" || name == "nodes_hitrates" || name == "leaf_weights" ||
          name == "membership_values");
}

}  // namespace

bool is_joined_strings_attribute(std::string_view op_type, std::string_view name) {
  return name == "activations" && (op_type == "RNN" || op_type == "GRU" || op_type == "LSTM");
}

bool is_imported_subgraph(const AttributeProto& a, std::string_view op_type) {
  if (kind_of(a) != AttributeProto::GRAPH) return false;
  if (op_type == "If") return a.name() == "then_branch" || a.name() == "else_branch";
  if (op_type == "Loop" || op_type == "Scan" || op_type == "SequenceMap") return a.name() == "body";
  if (op_type == "ai.onnx.preview:FlexAttention") return a.name() == "score_mod" || a.name() == "prob_mod";
  return false;
}

bool is_sequence_op(std::string_view op_type) {
  for (const char* op : {"SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase", "SequenceAt",
                         "SequenceLength", "ConcatFromSequence", "SplitToSequence", "SequenceMap"})
    if (op_type == op) return true;
  return false;
}

bool is_optional_op(std::string_view op_type) {
  return op_type == "Optional" || op_type == "OptionalHasElement" || op_type == "OptionalGetElement";
}

std::string unsupported_attribute(const AttributeProto& a, std::string_view op_type) {
  std::string name = "attribute '" + printable(a.name()) + "' ";
  if (!a.ref_attr_name().empty()) return name + "refers to a function attribute (functions are not supported)";
  switch (kind_of(a)) {
    case AttributeProto::INT:
    case AttributeProto::FLOAT:
    case AttributeProto::STRING:
    case AttributeProto::INTS:
    case AttributeProto::FLOATS:
      return "";
    case AttributeProto::TENSOR:
      if (std::string why = unsupported_dtype(a.t().data_type()); !why.empty()) return name + "is a tensor whose " + why;
      return "";
    case AttributeProto::GRAPH:
    case AttributeProto::GRAPHS:
      if (is_imported_subgraph(a, op_type)) return "";
      return name + "is a subgraph, which this op does not take (If, Loop and Scan take theirs)";
    case AttributeProto::STRINGS:
      if (!is_joined_strings_attribute(op_type, a.name()))
        return name + "is a list of strings, which is not supported (nnvm has no string tensors)";
      for (auto& e : a.strings())
        if (e.find(',') != std::string::npos) return name + "holds a string with a ',' (" + printable(e) + ")";
      return "";
    case AttributeProto::TYPE_PROTO:  // an empty optional's element type, which it never needs
      if (op_type == "Optional" && a.name() == "type") return "";
      return name + "is a type, which this op does not take";
    case AttributeProto::UNDEFINED:
      return name + "has no value";
    default:
      return name + str_cat("has kind ", AttributeProto::AttributeType_Name(kind_of(a)), ", which is not supported");
  }
}

ops::Attrs convert_attributes(const ::onnx::NodeProto& node, const std::string& base_dir,
                              const std::vector<std::string>& where) {
  ops::Attrs out;
  for (auto& a : node.attribute()) {
    std::vector<std::string> at = where;
    at.push_back("attribute " + printable(a.name()));
    if (a.name().empty()) throw ImportError("nnvm.onnx.attribute", "an attribute has no name", where);
    if (out.has(a.name())) throw ImportError("nnvm.onnx.attribute", "the attribute appears twice", at);
    if (std::string why = unsupported_attribute(a, qualified_op_type(node)); !why.empty())
      throw ImportError("nnvm.onnx.unsupported", why, at);
    switch (kind_of(a)) {
      case AttributeProto::INT: out.set_int(a.name(), a.i()); break;
      case AttributeProto::FLOAT: out.set_float(a.name(), a.f()); break;
      case AttributeProto::STRING: out.set_string(a.name(), a.s()); break;
      case AttributeProto::INTS: out.set_ints(a.name(), {a.ints().begin(), a.ints().end()}); break;
      case AttributeProto::FLOATS: out.set_floats(a.name(), {a.floats().begin(), a.floats().end()}); break;
      case AttributeProto::STRINGS: {  // only the joined ones pass unsupported_attribute
        std::string joined;
        for (auto& e : a.strings()) joined += (joined.empty() ? "" : ",") + e;
        out.set_string(a.name(), joined);
        break;
      }
      case AttributeProto::TENSOR: {
        NDArray v = decode_tensor(a.t(), base_dir, at);
        if (v.numel() != 1 && !takes_tensor_list(qualified_op_type(node), a.name()))
          throw ImportError("nnvm.onnx.attribute",
                            str_cat("a tensor attribute must hold one value, this one holds ", v.numel()), at);
        out.set(a.name(), values_as_attr(v));
        out.set_dtype(a.name() + "_dtype", *dtype_of_code(a.t().data_type()));  // checked above
        break;
      }
      default: break;  // subgraphs the importer inlines (read from the NodeProto); unsupported_attribute rejected the rest
    }
  }
  return out;
}

std::span<const importers::DtypeAttribute> dtype_attributes() {
  static const importers::DtypeAttribute table[] = {
      {"BitCast", "to"},
      {"Cast", "to"},
      {"EyeLike", "dtype"},
      {"LayerNormalization", "stash_type"},
      {"GroupNormalization", "stash_type"},
      {"RMSNormalization", "stash_type"},
      {"Attention", "softmax_precision"},
      {"QuantizeLinear", "output_dtype", true},
      {"QuantizeLinear", "precision", true},
      {"DequantizeLinear", "output_dtype", true},
  };
  return table;
}

std::string unsupported_dtype_attribute(std::string_view op_type, const AttributeProto& a) {
  const importers::DtypeAttribute* d = importers::find_dtype_attribute(dtype_attributes(), op_type, a.name());
  if (!d || kind_of(a) != AttributeProto::INT || (a.i() == 0 && d->undefined_is_default)) return "";
  if (std::string why = unsupported_dtype(a.i()); !why.empty()) return str_cat(op_type, " attribute '", a.name(), "': ", why);
  return "";
}

void translate_dtype_codes(std::string_view op_type, ops::Attrs& attrs, const std::vector<std::string>& where) {
  static const importers::DtypeCodes codes{
      .decode = dtype_of_code,
      .name = [](int64_t code) { return str_cat(code_name(code), " (", code, ")"); },
  };
  importers::translate_dtype_codes("onnx", dtype_attributes(), codes, op_type, attrs, where);
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
