// A C-family dialect as data: every spelling the shared emitter (c_like.hpp) prints that is not
// common to C, CUDA, OpenCL C and Metal. The emitter reads these tables and knows no dialect;
// what needs more than spelling (the CPU kernel ABI, outlined parallel loops, the workspace)
// lives in a dialect's subclass of CLikeEmitter, which overrides the few virtual hooks there.
//
// Templates name their parts as ${part}; fill() substitutes them. A template gives the whole
// text of a construct, so a dialect can place each part where its language wants it.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>

#include "nnvm/ir/op.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// `pattern` with each ${name} replaced by its value; an unknown ${name} is kept as written.
template <class Parts>
std::string fill_from(const std::string& pattern, const Parts& parts) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t open = pattern.find("${", i), close = open == std::string::npos ? open : pattern.find('}', open);
    if (close == std::string::npos) break;
    out.append(pattern, i, open - i);
    std::string name = pattern.substr(open + 2, close - open - 2), value = pattern.substr(open, close - open + 1);
    for (auto& [n, v] : parts)
      if (name == n) value = v;
    out += value;
    i = close + 1;
  }
  return out.append(pattern, i, std::string::npos);
}
inline std::string fill(const std::string& pattern,
                        std::initializer_list<std::pair<const char*, std::string>> parts) {
  return fill_from(pattern, parts);
}
inline std::string fill(const std::string& pattern, const std::map<std::string, std::string>& parts) {
  return fill_from(pattern, parts);
}

struct Dialect {
  // Scalar types as stored in memory: bool is one byte, float16 and bfloat16 are their bits
  // (storage types: the emitter converts them to float32 through helpers to compute).
  struct ScalarTypes {
    std::string boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32,
        float64, handle;
  } types;
  std::string int_type;  // the plain int of lane counters and helper locals

  // Vector values. ${elem}: the element's dtype name (uint8 for bool, uint16 for a storage
  // type), ${scalar}: its scalar spelling, ${lanes}, ${type}: the vector type's spelling.
  std::string vector_type;   // ${elem} ${scalar} ${lanes}
  std::string vector_zero;   // ${type}: initializer of a temporary then filled lane by lane
  std::string broadcast;     // ${type} ${lanes} ${value} ${values} (${value} per lane, with ", ")
  std::string lane;          // lane ${lane} of vector variable ${vector}, readable and assignable
  std::string vector_load;   // expression: ${type} ${lanes} elements from &${buffer}[${base}]
  std::string vector_store;  // statement: ${type} vector variable ${value} into &${buffer}[${base}]

  // Literals the language spells its own way.
  std::string nan, infinity;                  // float32 NaN and +infinity
  std::string int64_literal, uint64_literal;  // ${value}: a 64-bit constant too big for 32 bits

  // Qualifiers and address spaces ("" where the language has none); each ends in a space.
  std::string restrict_qualifier, helper_qualifier, global_space, const_qualifier = "const ";

  // GPU axes: the expression for a thread_tag ("threadIdx.x"). A loop bound to a tag the table
  // lacks is a BackendError (a CPU dialect has none).
  std::map<std::string, std::string> thread_index;
  std::string barrier;  // the statement a Barrier node becomes

  // Math: names that differ from ir::call_op_name, and the suffix of float32 versions (C's
  // expf; empty where the names are overloaded).
  std::map<ir::CallOp, std::string> math_names;
  std::string float32_math_suffix;
  // Statement copying the 4 bytes of ${src} into ${dst} (a float and a uint32 variable), for
  // the float16/bfloat16 conversion helpers.
  std::string bit_copy;
  // Expression: the bits of ${value} (a scalar ${from}) read as the scalar type ${to}, of the
  // same width (ir::BitCast: a float to or from an integer).
  std::string bit_cast;

  // Identifiers the emitted code must avoid (keywords, library names); the emitter adds its own.
  const std::unordered_set<std::string>* reserved_names = nullptr;
  // The largest private array (bytes) a kernel may declare.
  int64_t max_private_bytes = 0;

  // The generic kernel (CLikeEmitter::emit_kernel_source): ${name} ${params}; each buffer
  // parameter from buffer_param: ${space} ${const} ${type} ${restrict} ${name}.
  std::string kernel_signature, buffer_param;

  std::string scalar_type(DataType t) const {
    switch (t.code) {
      case DataType::Code::Bool: return types.boolean;
      case DataType::Code::Int:
        return t.bits <= 8 ? types.int8 : t.bits == 16 ? types.int16 : t.bits == 32 ? types.int32 : types.int64;
      case DataType::Code::UInt:
        return t.bits <= 8 ? types.uint8 : t.bits == 16 ? types.uint16 : t.bits == 32 ? types.uint32 : types.uint64;
      case DataType::Code::Float: return t.bits == 32 ? types.float32 : t.bits == 64 ? types.float64 : types.float16;
      case DataType::Code::BFloat: return types.bfloat16;
      case DataType::Code::Handle: return types.handle;
      default: return types.uint8;  // the float8/float4 types: their bits
    }
    return "void";
  }
  // The function computing `op` in t's precision.
  std::string math_function(ir::CallOp op, DataType t) const {
    std::string name = math_name(op);
    return t.bits == 32 ? name + float32_math_suffix : name;
  }
  // The name of `op` without a precision suffix (isnan and isinf are type-generic everywhere).
  std::string math_name(ir::CallOp op) const {
    auto it = math_names.find(op);
    return it == math_names.end() ? ir::call_op_name(op) : it->second;
  }
};

}  // namespace target
NNVM_END_NAMESPACE
