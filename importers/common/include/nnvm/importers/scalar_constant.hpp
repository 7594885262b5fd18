// A rank-0 constant of any tensor type from a number, for importers whose files give scalars as
// attributes (ONNX's older Clip min/max, MXNet's `_plus_scalar`) that nnvm's ops take as inputs.
#pragma once

#include <string_view>

#include "nnvm/ndarray.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

// A rank-0 tensor of `dtype` holding `value`. Floats round as a C++ cast would; integers saturate
// (NaN becomes 0), so no value is undefined behaviour. ImportError "nnvm.<format>.unsupported"
// for a type with no scalar constant (handles, vectors).
NDArray scalar_constant(std::string_view format, DataType dtype, double value);

}  // namespace importers
NNVM_END_NAMESPACE
