#include "types.hpp"

#include <cstdarg>
#include <cstdio>

NNVM_BEGIN_NAMESPACE
namespace runtime {

namespace {
// Names inline (no pointers): a table of pointers costs a dynamic relocation per entry in a
// shared library, and the runtime's size budget (ctest runtime.size) is tight.
struct DtypeEntry {
  char name[15];  // DataType::str() of the compiler
  uint8_t bytes;
  int32_t code;
};
constexpr DtypeEntry dtypes[] = {
    {"float32", 4, NNVM_DTYPE_FLOAT32},       {"uint8", 1, NNVM_DTYPE_UINT8},
    {"int8", 1, NNVM_DTYPE_INT8},             {"uint16", 2, NNVM_DTYPE_UINT16},
    {"int16", 2, NNVM_DTYPE_INT16},           {"int32", 4, NNVM_DTYPE_INT32},
    {"int64", 8, NNVM_DTYPE_INT64},           {"bool", 1, NNVM_DTYPE_BOOL},
    {"float16", 2, NNVM_DTYPE_FLOAT16},       {"float64", 8, NNVM_DTYPE_FLOAT64},
    {"uint32", 4, NNVM_DTYPE_UINT32},         {"uint64", 8, NNVM_DTYPE_UINT64},
    {"bfloat16", 2, NNVM_DTYPE_BFLOAT16},     {"float8e4m3fn", 1, NNVM_DTYPE_FLOAT8E4M3FN},
    {"float8e4m3fnuz", 1, NNVM_DTYPE_FLOAT8E4M3FNUZ}, {"float8e5m2", 1, NNVM_DTYPE_FLOAT8E5M2},
    {"float8e5m2fnuz", 1, NNVM_DTYPE_FLOAT8E5M2FNUZ}, {"float8e8m0", 1, NNVM_DTYPE_FLOAT8E8M0},
    {"float4e2m1", 1, NNVM_DTYPE_FLOAT4E2M1}, {"int4", 1, NNVM_DTYPE_INT4},
    {"uint4", 1, NNVM_DTYPE_UINT4},           {"int2", 1, NNVM_DTYPE_INT2},
    {"uint2", 1, NNVM_DTYPE_UINT2}};
}  // namespace

const char* dtype_name(int32_t code) {
  for (auto& d : dtypes)
    if (d.code == code) return d.name;
  return "unknown";
}

uint32_t dtype_bytes(int32_t code) {
  for (auto& d : dtypes)
    if (d.code == code) return d.bytes;
  return 0;
}

int32_t dtype_from_name(const std::string& name) {
  for (auto& d : dtypes)
    if (name == d.name) return d.code;
  return 0;
}

std::string type_text(int32_t dtype, const int64_t* shape, size_t rank) {
  std::string s = format("%s [", dtype_name(dtype));
  for (size_t d = 0; d < rank; ++d) s += format(d ? "x%lld" : "%lld", static_cast<long long>(shape[d]));
  return s + "]";
}

namespace {
std::string vformat(const char* fmt, va_list args) {
  va_list again;
  va_copy(again, args);
  int n = std::vsnprintf(nullptr, 0, fmt, args);
  std::string s(size_t(n > 0 ? n : 0), '\0');
  std::vsnprintf(s.data(), s.size() + 1, fmt, again);
  va_end(again);
  return s;
}
}  // namespace

std::string format(const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string s = vformat(fmt, args);
  va_end(args);
  return s;
}

void fail(nnvm_status_t status, const char* fmt, ...) {
  va_list args;
  va_start(args, fmt);
  Failure f{status, vformat(fmt, args)};
  va_end(args);
  throw f;
}

}  // namespace runtime
NNVM_END_NAMESPACE
