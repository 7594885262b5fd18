// ONNX's TensorProto data type codes (Cast's `to`, EyeLike's `dtype`, initializers' data_type)
// and nnvm's DataType. The codes are part of the model format, so they are fixed numbers.
#pragma once

#include <optional>

#include "nnvm/error.hpp"
#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The DataType for an ONNX code, or nullopt for codes nnvm has no type for (string, complex,
// float8, int4, ...).
inline std::optional<DataType> try_dtype_from_onnx(int64_t code) {
  switch (code) {
    case 1: return dtype::float32;
    case 2: return dtype::uint8;
    case 3: return dtype::int8;
    case 4: return dtype::uint16;
    case 5: return dtype::int16;
    case 6: return dtype::int32;
    case 7: return dtype::int64;
    case 9: return dtype::boolean;
    case 10: return dtype::float16;
    case 11: return dtype::float64;
    case 12: return dtype::uint32;
    case 13: return dtype::uint64;
    case 16: return dtype::bfloat16;
    default: return std::nullopt;
  }
}

// ONNX's name for a code, for messages ("STRING", "COMPLEX64", "FLOAT8E4M3FN").
inline const char* onnx_dtype_name(int64_t code) {
  static const char* const names[] = {"UNDEFINED", "FLOAT",     "UINT8",        "INT8",         "UINT16",
                                      "INT16",     "INT32",     "INT64",        "STRING",       "BOOL",
                                      "FLOAT16",   "DOUBLE",    "UINT32",       "UINT64",       "COMPLEX64",
                                      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                      "FLOAT8E5M2FNUZ", "UINT4", "INT4",        "FLOAT4E2M1",   "FLOAT8E8M0",
                                      "UINT2",     "INT2"};
  return code >= 0 && code < int64_t(std::size(names)) ? names[code] : "unknown";
}

// "nnvm.ops.attr" for a code nnvm has no type for; `attr` names the attribute.
inline DataType dtype_from_onnx(int64_t code, const char* attr = "to") {
  if (auto t = try_dtype_from_onnx(code)) return *t;
  throw UserError("nnvm.ops.attr",
                  str_cat("attribute '", attr, "' is ONNX data type ", code, " (", onnx_dtype_name(code),
                          "), which nnvm does not support"),
                  {str_cat("attribute ", attr)});
}

// The ONNX code of a DataType (scalar types only); 0 (UNDEFINED) for none.
inline int64_t onnx_code(DataType t) {
  for (int64_t c = 1; c <= 16; ++c)
    if (auto d = try_dtype_from_onnx(c); d && *d == t.element_of()) return c;
  return 0;
}

}  // namespace ops
NNVM_END_NAMESPACE
