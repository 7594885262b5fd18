#include "types.hpp"

#include <cstdarg>
#include <cstdio>

NNVM_BEGIN_NAMESPACE
namespace runtime {

namespace {
struct DtypeEntry {
  const char* name;  // DataType::str() of the compiler
  int32_t code;
  uint32_t bytes;
};
constexpr DtypeEntry dtypes[] = {
    {"float32", NNVM_DTYPE_FLOAT32, 4}, {"uint8", NNVM_DTYPE_UINT8, 1},     {"int8", NNVM_DTYPE_INT8, 1},
    {"uint16", NNVM_DTYPE_UINT16, 2},   {"int16", NNVM_DTYPE_INT16, 2},     {"int32", NNVM_DTYPE_INT32, 4},
    {"int64", NNVM_DTYPE_INT64, 8},     {"bool", NNVM_DTYPE_BOOL, 1},       {"float16", NNVM_DTYPE_FLOAT16, 2},
    {"float64", NNVM_DTYPE_FLOAT64, 8}, {"uint32", NNVM_DTYPE_UINT32, 4},   {"uint64", NNVM_DTYPE_UINT64, 8},
    {"bfloat16", NNVM_DTYPE_BFLOAT16, 2}};
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
