// The input dtype rules the elementwise and broadcast ops share: which element types an input
// may have, and the type their arithmetic runs in.
#pragma once

#include "nnvm/ops/checks.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

enum class DtypeKind : uint8_t {
  any,      // every scalar type, bool and the storage floats included (copies, selects)
  number,   // integers and floats
  float_,   // floats (float16/bfloat16 compute in float32)
  integer,  // signed and unsigned integers
  boolean,  // bool
  compare,  // numbers and bool (operands of comparisons)
};

inline bool dtype_in(DataType t, DtypeKind k) {
  if (!t.is_scalar() || t.is_handle()) return false;
  switch (k) {
    case DtypeKind::any:
      return true;
    case DtypeKind::number:
      return !t.is_bool();
    case DtypeKind::float_:
      return t.is_float();
    case DtypeKind::integer:
      return t.is_integer();
    case DtypeKind::boolean:
      return t.is_bool();
    case DtypeKind::compare:
      return true;
  }
  return false;
}
inline const char* dtype_kind_text(DtypeKind k) {
  static const char* const names[] = {"any type", "a number", "a float", "an integer", "bool", "a number or bool"};
  return names[static_cast<int>(k)];
}

// "nnvm.ops.input_dtype" unless `t`'s element type is of kind `k`.
inline void check_input_kind(const te::Tensor& t, const std::string& input, DtypeKind k) {
  if (!dtype_in(t.dtype(), k))
    throw UserError(
        "nnvm.ops.input_dtype",
        str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected ", dtype_kind_text(k)),
        {"input " + input});
}

// The type arithmetic on `t` runs in: float16/bfloat16 are storage types and compute in float32.
inline DataType arith_type(DataType t) { return t.is_storage_only() ? dtype::float32.with_lanes(t.lanes) : t; }

}  // namespace ops
NNVM_END_NAMESPACE
