// The deploy runtime's type numbers (nnvm_dtype in nnvm/runtime/nnvm_runtime.h) for the
// compiler's DataType, both ways: for tools and tests that hand NDArrays to the runtime.
#pragma once

#include <cstdint>
#include <utility>

#include "nnvm/error.hpp"
#include "nnvm/ir/dtype.hpp"
#include "nnvm/runtime/nnvm_runtime.h"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
inline constexpr std::pair<nnvm_dtype, DataType> runtime_dtypes[] = {
    {NNVM_DTYPE_FLOAT32, dtype::float32}, {NNVM_DTYPE_UINT8, dtype::uint8},     {NNVM_DTYPE_INT8, dtype::int8},
    {NNVM_DTYPE_UINT16, dtype::uint16},   {NNVM_DTYPE_INT16, dtype::int16},     {NNVM_DTYPE_INT32, dtype::int32},
    {NNVM_DTYPE_INT64, dtype::int64},     {NNVM_DTYPE_BOOL, dtype::boolean},    {NNVM_DTYPE_FLOAT16, dtype::float16},
    {NNVM_DTYPE_FLOAT64, dtype::float64}, {NNVM_DTYPE_UINT32, dtype::uint32},   {NNVM_DTYPE_UINT64, dtype::uint64},
    {NNVM_DTYPE_BFLOAT16, dtype::bfloat16},
    {NNVM_DTYPE_FLOAT8E4M3FN, dtype::float8e4m3fn}, {NNVM_DTYPE_FLOAT8E4M3FNUZ, dtype::float8e4m3fnuz},
    {NNVM_DTYPE_FLOAT8E5M2, dtype::float8e5m2},     {NNVM_DTYPE_FLOAT8E5M2FNUZ, dtype::float8e5m2fnuz},
    {NNVM_DTYPE_FLOAT8E8M0, dtype::float8e8m0},     {NNVM_DTYPE_FLOAT4E2M1, dtype::float4e2m1},
    {NNVM_DTYPE_INT4, dtype::int4},                 {NNVM_DTYPE_UINT4, dtype::uint4},
    {NNVM_DTYPE_INT2, dtype::int2},                 {NNVM_DTYPE_UINT2, dtype::uint2}};
}  // namespace detail

// The nnvm_dtype of a scalar tensor type; UserError "nnvm.graph.dtype" for any other type.
inline int32_t runtime_dtype(DataType t) {
  for (auto& [code, type] : detail::runtime_dtypes)
    if (type == t) return int32_t(code);
  throw UserError("nnvm.graph.dtype", str_cat("data type ", t, " has no nnvm_dtype in the deploy runtime"));
}

// The DataType of an nnvm_dtype; UserError "nnvm.graph.dtype" for an unknown number.
inline DataType dtype_from_runtime(int32_t code) {
  for (auto& [c, type] : detail::runtime_dtypes)
    if (int32_t(c) == code) return type;
  throw UserError("nnvm.graph.dtype", str_cat("nnvm_dtype ", code, " is not a type the deploy runtime knows"));
}

}  // namespace graph
NNVM_END_NAMESPACE
