// Reading model and weight files with every importer's safety rules: only regular files (a FIFO
// would hang the reader), a size limit checked before a byte is read, and weights a model refers
// to (ONNX external data, Core ML's weight.bin) confined to the model's directory.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

// The whole file. ImportError "nnvm.<format>.file" naming the file when it is missing, not a
// regular file, larger than `max_bytes` (`limit_hint` is added to that message), or unreadable.
std::string read_regular_file(std::string_view format, const std::string& path, uint64_t max_bytes,
                              std::string_view limit_hint = "");

// The directory a model's relative references resolve against ("." for a bare file name).
std::string directory_of(const std::string& path);

// A byte range of a file a model refers to.
struct ConfinedRange {
  std::string location;           // relative to the model's directory, '/' between parts
  uint64_t offset = 0;
  std::optional<uint64_t> length;  // to the end of the file when absent
};

// Reads `bytes` bytes of `range`. The location must be a relative path below `base_dir` without
// "..", symbolic links (the file or any directory on the way, even one swapped in while it is
// walked) or hard links, naming a regular file; offset + length must lie inside the file and
// length must equal `bytes`. Only then is `destination` called for the buffer to fill, so a
// hostile shape allocates nothing. ImportError "nnvm.<format>.external_data" with `where`.
void read_confined(std::string_view format, const std::string& base_dir, const ConfinedRange& range, uint64_t bytes,
                   const std::vector<std::string>& where, const std::function<void*()>& destination);

}  // namespace importers
NNVM_END_NAMESPACE
