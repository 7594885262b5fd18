// Weights as Core ML stores them: a NeuralNetwork layer's WeightParams (float32 values, or
// float16 / float32 little-endian bytes), and an ML Program's blobs in weight.bin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coreml.pb.h"
#include "nnvm/ndarray.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

// `w` as a float32 array of `shape`. The stored count must equal the shape's element count;
// float16 values are widened (a NeuralNetwork computes in float32). ImportError
// "nnvm.coreml.weights" naming `where` and `attribute` for a wrong count, "nnvm.coreml.unsupported"
// for quantized weights.
NDArray weight_array(const nnvm_coreml_spec::WeightParams& w, std::vector<int64_t> shape,
                     const std::vector<std::string>& where, const std::string& attribute);
// The element count `w` stores (to infer a shape from); 0 when it is empty.
int64_t weight_count(const nnvm_coreml_spec::WeightParams& w);

// `a` with float16 elements widened to float32; any other array unchanged.
NDArray widen_float16(NDArray a);

// nnvm's type for a MIL data type, or nullopt.
std::optional<DataType> mil_dtype(int code);
std::string mil_dtype_name(int code);

// The blob at `offset` of `file_name` ("@model_path/weights/weight.bin") as an array of `dtype`
// and `shape`. The blob storage format: a 64-byte file header (uint32 count, uint32 version 2),
// and per blob a 64-byte record at `offset` (uint32 sentinel 0xDEADBEEF, uint32 data type,
// uint64 size in bytes, uint64 data offset) whose data lies elsewhere in the file. Every field
// is checked against the declared type and shape and the file's size before a byte of data is
// read. ImportError "nnvm.coreml.weights", or "nnvm.coreml.external_data" for a file outside the
// model's directory or a range outside the file.
NDArray read_blob(const std::string& model_dir, const std::string& file_name, uint64_t offset, DataType dtype,
                  const std::vector<int64_t>& shape, const std::vector<std::string>& where);

}  // namespace coreml_import
NNVM_END_NAMESPACE
