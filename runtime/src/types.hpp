// Element types by the C API's codes (nnvm_dtype) and by the names model.json uses.
#pragma once

#include <cstdint>
#include <string>

#include "failure.hpp"

NNVM_BEGIN_NAMESPACE
namespace runtime {

const char* dtype_name(int32_t code);               // "unknown" for other codes
uint32_t dtype_bytes(int32_t code);                 // 0 for other codes
int32_t dtype_from_name(const std::string& name);  // 0 for other names
// "float32 [2x3]", for messages.
std::string type_text(int32_t dtype, const int64_t* shape, size_t rank);

}  // namespace runtime
NNVM_END_NAMESPACE
