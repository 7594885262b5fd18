// Model formats name data types by their own codes (ONNX's TensorProto codes, Core ML's array
// types); nnvm's ops take nnvm type names (ops::Attrs::get_dtype). An importer lists which of its
// ops' attributes hold such a code and translates them here before the op sees them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nnvm/ops/attrs.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

// An attribute of a format's op that holds a data type code.
struct DtypeAttribute {
  std::string_view op_type, name;
  bool undefined_is_default = false;  // the format's "undefined" code means "not given"
};

// A format's data type codes.
struct DtypeCodes {
  std::function<std::optional<DataType>(int64_t)> decode;  // nullopt: nnvm has no such type
  std::function<std::string(int64_t)> name;                // for messages ("FLOAT8E4M3FN (17)")
  int64_t undefined = 0;
};

// The entry of `table` for attribute `name` of `op_type`, or nullptr.
const DtypeAttribute* find_dtype_attribute(std::span<const DtypeAttribute> table, std::string_view op_type,
                                           std::string_view name);

// Replaces each data type attribute of `op_type` in `attrs` by nnvm's type name; the undefined
// code removes an attribute where that means "not given". ImportError "nnvm.<format>.unsupported"
// for a code nnvm has no type for, "nnvm.<format>.attribute" for a value that is not an int;
// `where` names the node.
void translate_dtype_codes(std::string_view format, std::span<const DtypeAttribute> table, const DtypeCodes& codes,
                           std::string_view op_type, ops::Attrs& attrs, const std::vector<std::string>& where);

}  // namespace importers
NNVM_END_NAMESPACE
