#include "files.hpp"

#include <climits>
#include <map>

#include "nnvm/importers/files.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

namespace {

template <class Message>
Message parse(const std::string& path, uint64_t max_bytes, const char* what) {
  std::string data = importers::read_regular_file(
      "onnx", path, file_limit(max_bytes), "protobuf cannot parse 2 GiB or more; keep large weights in external data");
  Message m;
  if (!m.ParseFromArray(data.data(), int(data.size())))
    throw ImportError("nnvm.onnx.file", str_cat("not a valid ", what, " (protobuf could not parse it)"),
                      {"file " + printable(path)});
  return m;
}

[[noreturn]] void external_error(const std::vector<std::string>& where, const std::string& why) {
  throw ImportError("nnvm.onnx.external_data", why, where);
}

// A decimal external_data number ("offset", "length"): digits only, no overflow.
uint64_t parse_number(const std::string& key, const std::string& s, const std::vector<std::string>& where) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos)
    external_error(where, str_cat("external_data '", key, "' is '", printable(s), "', not a decimal byte count"));
  return std::stoull(s);
}

}  // namespace

uint64_t file_limit(uint64_t max_file_bytes) { return std::min<uint64_t>(max_file_bytes, uint64_t(INT_MAX)); }

::onnx::ModelProto load_model(const std::string& path, uint64_t max_bytes) {
  auto m = parse<::onnx::ModelProto>(path, max_bytes, "ONNX model");
  if (!m.has_graph()) throw ImportError("nnvm.onnx.file", "the model has no graph", {"file " + printable(path)});
  return m;
}

::onnx::TensorProto load_tensor(const std::string& path, uint64_t max_bytes) {
  return parse<::onnx::TensorProto>(path, max_bytes, "ONNX TensorProto");
}

::onnx::SequenceProto load_sequence(const std::string& path, uint64_t max_bytes) {
  return parse<::onnx::SequenceProto>(path, max_bytes, "ONNX SequenceProto");
}

::onnx::OptionalProto load_optional(const std::string& path, uint64_t max_bytes) {
  return parse<::onnx::OptionalProto>(path, max_bytes, "ONNX OptionalProto");
}

void read_external(const ::onnx::TensorProto& t, const std::string& base_dir, uint64_t bytes,
                   const std::vector<std::string>& where, const std::function<void*()>& destination) {
  std::map<std::string, std::string> keys;
  for (auto& kv : t.external_data()) {
    if (kv.key() != "location" && kv.key() != "offset" && kv.key() != "length" && kv.key() != "checksum")
      external_error(where, str_cat("unknown external_data key '", printable(kv.key()), "' (known: location, offset, length, checksum)"));
    if (!keys.emplace(kv.key(), kv.value()).second)
      external_error(where, str_cat("external_data key '", printable(kv.key()), "' appears twice"));
  }
  if (!keys.count("location")) external_error(where, "external data without a 'location' key");
  importers::ConfinedRange range{.location = keys["location"]};
  if (keys.count("offset")) range.offset = parse_number("offset", keys["offset"], where);
  if (keys.count("length")) range.length = parse_number("length", keys["length"], where);
  importers::read_confined("onnx", base_dir, range, bytes, where, destination);
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
