// The one TensorProto validator and decoder: initializers, Constant values, TENSOR attributes and
// .pb test files all go through decode_tensor.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "nnvm/ndarray.hpp"
#include "nnvm/ops/attrs.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// Why nnvm cannot hold an ONNX data type ("type STRING (8) is not supported"), or "" when it can.
std::string unsupported_dtype(int64_t code);

// The tensor's data, checked against its type and shape: a supported data type, non-negative
// dims whose element and byte counts fit in int64, exactly one data source (raw_data, the typed
// field for the type, or external data), and exactly as many bytes or values as the shape needs,
// each in range of the type. External data resolves against `base_dir` (see read_external).
// ImportError "nnvm.onnx.tensor" (or "nnvm.onnx.unsupported" for the data type,
// "nnvm.onnx.external_data" for external data) with `where` as the context.
NDArray decode_tensor(const ::onnx::TensorProto& t, const std::string& base_dir, const std::vector<std::string>& where);

// The values as an attribute: a list of ints for integer and bool data, of floats for float data
// (float16 and bfloat16 widened).
ops::AttrValue values_as_attr(const NDArray& a);

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
