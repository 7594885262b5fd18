// Reading ONNX model, tensor and external-data files with the importers' shared safety rules
// (nnvm/importers/files.hpp): a size limit checked before parsing, and external data confined to
// the model's directory.
#pragma once

#include <onnx/onnx-data_pb.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// The effective limit: the caller's, clamped below protobuf's 2 GiB.
uint64_t file_limit(uint64_t max_file_bytes);

// ImportError "nnvm.onnx.file" when the file is missing, not a regular file, larger than
// `max_bytes`, or not a valid message of the type.
::onnx::ModelProto load_model(const std::string& path, uint64_t max_bytes);
::onnx::TensorProto load_tensor(const std::string& path, uint64_t max_bytes);
::onnx::SequenceProto load_sequence(const std::string& path, uint64_t max_bytes);
::onnx::OptionalProto load_optional(const std::string& path, uint64_t max_bytes);

// Reads `bytes` bytes of the external data a tensor's external_data entries (location, offset,
// length, checksum) describe, with importers::read_confined's checks. ImportError
// "nnvm.onnx.external_data", with `where` as the context.
void read_external(const ::onnx::TensorProto& t, const std::string& base_dir, uint64_t bytes,
                   const std::vector<std::string>& where, const std::function<void*()>& destination);

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
