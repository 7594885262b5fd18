// Reading model, tensor and external-data files with the importer's safety rules: a size limit
// checked before parsing, and external data confined to the model's directory.
#pragma once

#include <onnx/onnx_pb.h>

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

// The directory external data of `path` is resolved against ("." for a bare file name).
std::string directory_of(const std::string& path);

// Reads `bytes` bytes of the external data a tensor's external_data entries
// (location, offset, length, checksum) describe. The location must be a relative path below
// `base_dir` without "..", symbolic links (the file or any parent below base_dir) or hard links;
// offset + length must lie inside the file and length must equal `bytes`. Only then is
// `destination` called for the buffer to fill, so a hostile shape allocates nothing. ImportError
// "nnvm.onnx.external_data", with `where` as the context.
void read_external(const ::onnx::TensorProto& t, const std::string& base_dir, uint64_t bytes,
                   const std::vector<std::string>& where, const std::function<void*()>& destination);

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
