// ONNX's TensorProto data type codes (initializers' data_type, Cast's `to`, EyeLike's `dtype`)
// and nnvm's DataType. The codes are part of the file format, so they are fixed numbers; they
// stay in the ONNX importer: nnvm's ops take data types by name (ops::Attrs::get_dtype).
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>

#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import {

// The DataType of an ONNX code, or nullopt for codes nnvm has no type for (string, complex).
inline std::optional<DataType> dtype_of_code(int64_t code) {
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
    case 17: return dtype::float8e4m3fn;
    case 18: return dtype::float8e4m3fnuz;
    case 19: return dtype::float8e5m2;
    case 20: return dtype::float8e5m2fnuz;
    case 21: return dtype::uint4;
    case 22: return dtype::int4;
    case 23: return dtype::float4e2m1;
    case 24: return dtype::float8e8m0;
    case 25: return dtype::uint2;
    case 26: return dtype::int2;
    default: return std::nullopt;
  }
}

// ONNX's name for a code, for messages ("STRING", "COMPLEX64", "FLOAT8E4M3FN").
inline const char* code_name(int64_t code) {
  static const char* const names[] = {"UNDEFINED", "FLOAT",     "UINT8",        "INT8",         "UINT16",
                                      "INT16",     "INT32",     "INT64",        "STRING",       "BOOL",
                                      "FLOAT16",   "DOUBLE",    "UINT32",       "UINT64",       "COMPLEX64",
                                      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                      "FLOAT8E5M2FNUZ", "UINT4", "INT4",        "FLOAT4E2M1",   "FLOAT8E8M0",
                                      "UINT2",     "INT2"};
  return code >= 0 && code < int64_t(std::size(names)) ? names[code] : "unknown";
}

// The ONNX code of a DataType (its element type); 0 (UNDEFINED) when ONNX has none.
inline int64_t code_of(DataType t) {
  for (int64_t c = 1; c <= 26; ++c)
    if (auto d = dtype_of_code(c); d && *d == t.element_of()) return c;
  return 0;
}

}  // namespace onnx_import
NNVM_END_NAMESPACE
