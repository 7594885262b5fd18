// ONNX optionals whose presence is known at compile time: a present optional is its element's
// value (a tensor, or a sequence of compile-time length), an empty one is a name the importer
// keeps in empty_optionals_. Optional, OptionalHasElement and OptionalGetElement are evaluated
// here; an empty optional reaching any other op, a Loop or a graph body is refused by name.
#include "importer_class.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

void Importer::refuse_empty_optional(const NodeProto& n, const std::string& name) {
  throw ImportError("nnvm.onnx.unsupported",
                    str_cat("input '", printable(name), "' is an empty optional, which ", n.op_type(), " does not take"),
                    where_);
}

std::vector<graph::Value> Importer::optional_op(const NodeProto& n, std::map<size_t, Sequence>& sequence_outs,
                                                std::set<size_t>& empty_outs) {
  const std::string& op = n.op_type();
  // Input 0, or "" when it is left out (the inputs are all optional: no input is an empty optional).
  const std::string in = n.input_size() > 0 ? n.input(0) : std::string();
  const bool empty = in.empty() || empty_optionals_.count(in);
  if (op == "OptionalHasElement") {
    NDArray has(dtype::boolean, {});
    *static_cast<uint8_t*>(has.raw()) = empty ? 0 : 1;
    return {constant("has_element", std::move(has))};
  }
  // Optional(x) wraps x; without x (its `type` attribute then names the element type) it is
  // empty. OptionalGetElement(x) unwraps x (a tensor or sequence passes through unchanged).
  if (empty) {
    if (op == "OptionalGetElement")
      throw ImportError("nnvm.onnx.graph",
                        in.empty() ? std::string("OptionalGetElement has no input")
                                   : str_cat("OptionalGetElement of '", printable(in), "', an empty optional"),
                        where_);
    empty_outs.insert(0);
    return {};
  }
  if (auto it = sequences_.find(in); it != sequences_.end()) {
    sequence_outs[0] = it->second;
    return {};
  }
  return {operand(n, 0)};
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
