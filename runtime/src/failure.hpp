// How the runtime's internals report a failure: a Failure exception carrying the C API status
// and the message, caught once at the C API boundary (api.cpp). Messages are printf-formatted
// only when something fails: a format string and register arguments cost far less code per
// call site than building std::strings, and the runtime counts its bytes.
#pragma once

#include <cstdint>
#include <string>

#include "nnvm/config.hpp"
#include "nnvm/runtime/nnvm_runtime.h"

#define NNVM_RUNTIME_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))

NNVM_BEGIN_NAMESPACE
namespace runtime {

struct Failure {
  nnvm_status_t status;
  std::string message;
};

// printf into a std::string.
std::string format(const char* fmt, ...) NNVM_RUNTIME_PRINTF(1, 2);
[[noreturn]] void fail(nnvm_status_t status, const char* fmt, ...) NNVM_RUNTIME_PRINTF(2, 3);

// For %llu / %lld: sizes and offsets of any integer type.
inline unsigned long long ull(uint64_t v) { return v; }

}  // namespace runtime
NNVM_END_NAMESPACE
