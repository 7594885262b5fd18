#include "weights.hpp"

#include "context.hpp"

#include <cstring>

#include "nnvm/importers/files.hpp"
#include "nnvm/limits.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

[[noreturn]] void bad_weights(const std::vector<std::string>& where, const std::string& why) {
  throw ImportError("nnvm.coreml.weights", why, where);
}

uint32_t le32(const unsigned char* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }
uint64_t le64(const unsigned char* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }

// Blob data types of the blob storage format (MILBlob's BlobDataType).
std::optional<DataType> blob_dtype(uint32_t code) {
  switch (code) {
    case 1: return dtype::float16;
    case 2: return dtype::float32;
    case 3: return dtype::uint8;
    case 4: return dtype::int8;
    case 5: return dtype::bfloat16;
    case 6: return dtype::int16;
    case 7: return dtype::uint16;
    case 10: return dtype::int32;
    case 11: return dtype::uint32;
    default: return std::nullopt;
  }
}

}  // namespace

int64_t weight_count(const nnvm_coreml_spec::WeightParams& w) {
  if (w.floatvalue_size() > 0) return w.floatvalue_size();
  if (!w.float16value().empty()) return int64_t(w.float16value().size() / 2);
  if (!w.rawvalue().empty()) return int64_t(w.rawvalue().size() / 4);
  return 0;
}

NDArray weight_array(const nnvm_coreml_spec::WeightParams& w, std::vector<int64_t> shape,
                     const std::vector<std::string>& where, const std::string& attribute) {
  std::vector<std::string> at = where;
  at.push_back("attribute " + quote(attribute));
  if (w.has_quantization() || !w.int8rawvalue().empty())
    throw ImportError("nnvm.coreml.unsupported", "quantized weights are not supported", at);
  auto bytes = checked_tensor_bytes(shape, 4);
  if (!bytes) bad_weights(at, "the weight's shape is too large");
  const uint64_t count = *bytes / 4;
  const int kinds = (w.floatvalue_size() > 0) + !w.float16value().empty() + !w.rawvalue().empty();
  if (kinds > 1) bad_weights(at, "the weight holds values in more than one encoding");
  NDArray out(dtype::float32, std::move(shape));
  float* dst = out.data<float>();
  if (w.floatvalue_size() > 0) {
    if (uint64_t(w.floatvalue_size()) != count)
      bad_weights(at, str_cat("holds ", w.floatvalue_size(), " values where ", count, " are needed"));
    std::memcpy(dst, w.floatvalue().data(), count * 4);
  } else if (!w.float16value().empty()) {
    const std::string& b = w.float16value();
    if (b.size() != count * 2)
      bad_weights(at, str_cat("holds ", b.size(), " float16 bytes where ", count * 2, " are needed"));
    for (uint64_t i = 0; i < count; ++i)
      dst[i] = float16::to_float(uint16_t(uint8_t(b[2 * i]) | uint16_t(uint8_t(b[2 * i + 1])) << 8));
  } else if (!w.rawvalue().empty()) {
    const std::string& b = w.rawvalue();
    if (b.size() != count * 4)
      bad_weights(at, str_cat("holds ", b.size(), " raw bytes where ", count * 4, " (float32) are needed"));
    for (uint64_t i = 0; i < count; ++i) {
      uint32_t bits = le32(reinterpret_cast<const unsigned char*>(b.data()) + 4 * i);
      std::memcpy(dst + i, &bits, 4);
    }
  } else if (count != 0) {
    bad_weights(at, str_cat("the weight is empty where ", count, " values are needed"));
  }
  return out;
}

NDArray widen_float16(NDArray a) {
  if (a.dtype() != dtype::float16) return a;
  NDArray out(dtype::float32, a.shape());
  const float16* src = a.data<float16>();
  float* dst = out.data<float>();
  for (int64_t i = 0; i < a.numel(); ++i) dst[i] = float(src[i]);
  return out;
}

std::optional<DataType> mil_dtype(int code) {
  using T = nnvm_coreml_spec::DataType;
  switch (code) {
    case T::BOOL: return dtype::boolean;
    case T::FLOAT16: return dtype::float16;
    case T::FLOAT32: return dtype::float32;
    case T::FLOAT64: return dtype::float64;
    case T::BFLOAT16: return dtype::bfloat16;
    case T::INT8: return dtype::int8;
    case T::INT16: return dtype::int16;
    case T::INT32: return dtype::int32;
    case T::INT64: return dtype::int64;
    case T::UINT8: return dtype::uint8;
    case T::UINT16: return dtype::uint16;
    case T::UINT32: return dtype::uint32;
    case T::UINT64: return dtype::uint64;
    default: return std::nullopt;
  }
}

std::string mil_dtype_name(int code) {
  const auto* v = nnvm_coreml_spec::DataType_descriptor()->FindValueByNumber(code);
  return v ? str_cat(v->name(), " (", code, ")") : str_cat("unknown type ", code);
}

NDArray read_blob(const std::string& model_dir, const std::string& file_name, uint64_t offset, DataType dtype,
                  const std::vector<int64_t>& shape, const std::vector<std::string>& where) {
  const std::string prefix = "@model_path/";
  if (file_name.rfind(prefix, 0) != 0)
    bad_weights(where, str_cat("blob file ", quote(file_name), " does not start with @model_path/"));
  importers::ConfinedRange range{file_name.substr(prefix.size()), 0, 64};
  unsigned char header[64];
  importers::read_confined("coreml", model_dir, range, 64, where, [&] { return static_cast<void*>(header); });
  if (le32(header + 4) != 2)
    throw ImportError("nnvm.coreml.unsupported",
                      str_cat("blob file version ", le32(header + 4), " is not supported (version 2 is)"), where);
  unsigned char record[64];
  range.offset = offset;
  importers::read_confined("coreml", model_dir, range, 64, where, [&] { return static_cast<void*>(record); });
  if (le32(record) != 0xDEADBEEFu)
    bad_weights(where, str_cat("no blob record at offset ", offset, " of ", quote(file_name),
                               " (its sentinel is not 0xDEADBEEF)"));
  auto stored = blob_dtype(le32(record + 4));
  if (!stored || *stored != dtype)
    bad_weights(where, str_cat("the blob at offset ", offset, " holds data type code ", le32(record + 4),
                               ", not the declared ", dtype.str()));
  auto want = checked_tensor_bytes(shape, uint64_t(dtype.bytes()));
  if (!want) bad_weights(where, "the declared shape is too large");
  const uint64_t size = le64(record + 8), data_offset = le64(record + 16);
  if (size != *want)
    bad_weights(where, str_cat("the blob at offset ", offset, " holds ", size, " bytes; the declared ",
                               dtype.str(), " shape needs ", *want));
  NDArray out(dtype, shape);
  range.offset = data_offset;
  range.length = size;
  importers::read_confined("coreml", model_dir, range, size, where, [&] { return out.raw(); });
  return out;
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
