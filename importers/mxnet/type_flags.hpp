// mshadow's element type flags, as MXNet writes them in NDArray files (type_flag) and in a
// variable's "__dtype__" attribute.
#pragma once

#include <cstdint>
#include <optional>

#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

inline std::optional<DataType> dtype_of_type_flag(int64_t flag) {
  switch (flag) {
    case 0: return dtype::float32;
    case 1: return dtype::float64;
    case 2: return dtype::float16;
    case 3: return dtype::uint8;
    case 4: return dtype::int32;
    case 5: return dtype::int8;
    case 6: return dtype::int64;
    case 7: return dtype::boolean;
    case 8: return dtype::int16;
    case 9: return dtype::uint16;
    case 10: return dtype::uint32;
    case 11: return dtype::uint64;
    case 12: return dtype::bfloat16;
    default: return std::nullopt;
  }
}

}  // namespace mxnet_import
NNVM_END_NAMESPACE
