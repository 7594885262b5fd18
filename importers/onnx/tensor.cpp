#include "tensor.hpp"

#include <bit>
#include <cstring>

#include "files.hpp"
#include "nnvm/ir/small_float.hpp"
#include "nnvm/limits.hpp"
#include "nnvm/onnx/dtype_codes.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// raw_data and external data are little-endian; a big-endian host would need byte swaps.
static_assert(std::endian::native == std::endian::little, "the ONNX importer assumes a little-endian host");

namespace {

using ::onnx::TensorProto;

[[noreturn]] void tensor_error(const std::vector<std::string>& where, const std::string& why) {
  throw ImportError("nnvm.onnx.tensor", why, where);
}

// The typed field that carries each data type (onnx.proto's comments on TensorProto).
enum class Field { float_data, int32_data, int64_data, double_data, uint64_data };
const char* field_name(Field f) {
  static const char* const names[] = {"float_data", "int32_data", "int64_data", "double_data", "uint64_data"};
  return names[int(f)];
}
Field field_for(DataType t) {
  if (t == dtype::float32) return Field::float_data;
  if (t == dtype::int64) return Field::int64_data;
  if (t == dtype::float64) return Field::double_data;
  if (t == dtype::uint32 || t == dtype::uint64) return Field::uint64_data;
  return Field::int32_data;  // int32, int16, int8, uint16, uint8, bool, float16, bfloat16
}
int field_size(const TensorProto& t, Field f) {
  switch (f) {
    case Field::float_data: return t.float_data_size();
    case Field::int32_data: return t.int32_data_size();
    case Field::int64_data: return t.int64_data_size();
    case Field::double_data: return t.double_data_size();
    case Field::uint64_data: return t.uint64_data_size();
  }
  return 0;
}

// The range an int32_data / uint64_data value must lie in for the type; float16 and bfloat16
// are bit patterns, which some writers sign-extend, so both readings of the 16 bits pass.
std::pair<int64_t, int64_t> int32_range(DataType t) {
  if (t == dtype::boolean) return {0, 1};
  if (t == dtype::int8) return {INT8_MIN, INT8_MAX};
  if (t == dtype::uint8) return {0, UINT8_MAX};
  if (t == dtype::int16) return {INT16_MIN, INT16_MAX};
  if (t == dtype::uint16) return {0, UINT16_MAX};
  if (t == dtype::float16 || t == dtype::bfloat16) return {INT16_MIN, UINT16_MAX};
  if (t.is_small_float()) return {INT8_MIN, UINT8_MAX};
  return {INT32_MIN, INT32_MAX};
}

template <class T>
void store(NDArray& a, int64_t i, T v) {
  std::memcpy(static_cast<char*>(a.raw()) + i * a.dtype().bytes(), &v, sizeof(T));
}

void decode_typed(const TensorProto& t, NDArray& a, const std::vector<std::string>& where) {
  DataType d = a.dtype();
  int64_t n = a.numel();
  switch (field_for(d)) {
    case Field::float_data:
      for (int64_t i = 0; i < n; ++i) store(a, i, t.float_data(int(i)));
      return;
    case Field::int64_data:
      for (int64_t i = 0; i < n; ++i) store(a, i, t.int64_data(int(i)));
      return;
    case Field::double_data:
      for (int64_t i = 0; i < n; ++i) store(a, i, t.double_data(int(i)));
      return;
    case Field::uint64_data:
      for (int64_t i = 0; i < n; ++i) {
        uint64_t v = t.uint64_data(int(i));
        if (d == dtype::uint32) {
          if (v > UINT32_MAX) tensor_error(where, str_cat("uint64_data[", i, "] = ", v, " does not fit in ", d));
          store(a, i, uint32_t(v));
        } else {
          store(a, i, v);
        }
      }
      return;
    case Field::int32_data: {
      auto [lo, hi] = int32_range(d);
      for (int64_t i = 0; i < n; ++i) {
        int64_t v = t.int32_data(int(i));
        if (v < lo || v > hi) tensor_error(where, str_cat("int32_data[", i, "] = ", v, " does not fit in ", d));
        // Two's complement truncation keeps the value for signed types and the bits for 16-bit floats.
        switch (d.bytes()) {
          case 1: store(a, i, uint8_t(v)); break;
          case 2: store(a, i, uint16_t(v)); break;
          default: store(a, i, int32_t(v)); break;
        }
      }
      return;
    }
  }
}

// The 4- and 2-bit types (int4, uint4, int2, uint2, float4e2m1) are packed in files, low bits
// first: 8 / bits elements per byte of raw_data, external data or int32_data. nnvm holds one per
// byte, sign-extended for int4/int2.
bool packed_in_files(DataType t) { return t.bits < 8; }
int64_t packed_bytes(DataType t, int64_t numel) { return (numel * t.bits + 7) / 8; }
void unpack(const uint8_t* packed, NDArray& a) {
  DataType d = a.dtype();
  int per = 8 / d.bits;
  unsigned mask = (1u << d.bits) - 1u;
  auto* out = static_cast<uint8_t*>(a.raw());
  for (int64_t i = 0; i < a.numel(); ++i) {
    unsigned v = (packed[i / per] >> ((i % per) * d.bits)) & mask;
    if (d.is_int() && (v >> (d.bits - 1))) v |= ~mask;  // sign-extend
    out[i] = uint8_t(v);
  }
}

template <class T>
T load(const NDArray& a, int64_t i) {
  T v;
  std::memcpy(&v, static_cast<const char*>(a.raw()) + i * a.dtype().bytes(), sizeof(T));
  return v;
}

}  // namespace

ops::AttrValue values_as_attr(const NDArray& a) {
  DataType d = a.dtype();
  int64_t n = a.numel();
  auto collect = [&](auto read) {
    std::vector<decltype(read(0))> out;
    for (int64_t i = 0; i < n; ++i) out.push_back(read(i));
    return out;
  };
  if (d == dtype::float32) return collect([&](int64_t i) { return double(load<float>(a, i)); });
  if (d == dtype::float64) return collect([&](int64_t i) { return load<double>(a, i); });
  if (d == dtype::float16) return collect([&](int64_t i) { return double(float16::to_float(load<uint16_t>(a, i))); });
  if (d == dtype::bfloat16) return collect([&](int64_t i) { return double(bfloat16::to_float(load<uint16_t>(a, i))); });
  if (d == dtype::int64) return collect([&](int64_t i) { return load<int64_t>(a, i); });
  if (d == dtype::int32) return collect([&](int64_t i) { return int64_t(load<int32_t>(a, i)); });
  if (d == dtype::int16) return collect([&](int64_t i) { return int64_t(load<int16_t>(a, i)); });
  if (d == dtype::int8) return collect([&](int64_t i) { return int64_t(load<int8_t>(a, i)); });
  if (d == dtype::uint16) return collect([&](int64_t i) { return int64_t(load<uint16_t>(a, i)); });
  if (d == dtype::uint32) return collect([&](int64_t i) { return int64_t(load<uint32_t>(a, i)); });
  // uint64 values above INT64_MAX wrap; attributes are int64 in ONNX too.
  if (d == dtype::uint64) return collect([&](int64_t i) { return int64_t(load<uint64_t>(a, i)); });
  if (d.is_small_float()) return collect([&](int64_t i) { return double(storage_decode(d, load<uint8_t>(a, i))); });
  if (d.is_sub_byte_int() && d.is_int()) return collect([&](int64_t i) { return int64_t(load<int8_t>(a, i)); });
  return collect([&](int64_t i) { return int64_t(load<uint8_t>(a, i)); });  // uint8, bool
}

std::string unsupported_dtype(int64_t code) {
  if (code == 0) return "the data type is UNDEFINED (0)";
  if (dtype_of_code(code)) return "";
  return str_cat("type ", code_name(code), " (", code, ") is not supported");
}

namespace {
NDArray decode_packed(const TensorProto& t, DataType d, const std::vector<int64_t>& shape, int64_t numel, bool external,
                      const std::string& base_dir, const std::vector<std::string>& where) {
  int64_t bytes = packed_bytes(d, numel);
  std::vector<uint8_t> packed;
  if (external) {
    read_external(t, base_dir, uint64_t(bytes), where, [&] {
      packed.resize(size_t(bytes));
      return static_cast<void*>(packed.data());
    });
  } else if (t.has_raw_data()) {
    if (int64_t(t.raw_data().size()) != bytes)
      tensor_error(where, str_cat("raw_data holds ", t.raw_data().size(), " bytes but ", numel, " packed ", d,
                                  " elements need ", bytes));
    packed.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    if (int64_t(t.int32_data_size()) != bytes)
      tensor_error(where, str_cat("int32_data holds ", t.int32_data_size(), " values but ", numel, " packed ", d,
                                  " elements need ", bytes, " (one byte each)"));
    for (int64_t i = 0; i < bytes; ++i) {
      int64_t v = t.int32_data(int(i));
      if (v < INT8_MIN || v > UINT8_MAX) tensor_error(where, str_cat("int32_data[", i, "] = ", v, " is not a byte"));
      packed.push_back(uint8_t(v));
    }
  }
  NDArray a(d, shape);
  unpack(packed.data(), a);
  return a;
}
}  // namespace

NDArray decode_tensor(const TensorProto& t, const std::string& base_dir, const std::vector<std::string>& where) {
  if (std::string why = unsupported_dtype(t.data_type()); !why.empty())
    throw ImportError("nnvm.onnx.unsupported", "tensor " + why, where);
  DataType d = *dtype_of_code(t.data_type());
  if (t.has_segment()) throw ImportError("nnvm.onnx.unsupported", "segmented tensors are not supported", where);
  std::vector<int64_t> shape;
  for (int k = 0; k < t.dims_size(); ++k) {
    int64_t e = t.dims(k);
    if (e < 0) tensor_error(where, str_cat("dimension ", k, " is ", e, "; extents must be >= 0"));
    shape.push_back(e);
  }
  std::optional<uint64_t> size = checked_tensor_bytes(shape, uint64_t(d.bytes()));
  if (!size) {
    std::string dims;
    for (size_t k = 0; k < shape.size(); ++k) dims += str_cat(k ? ", " : "", shape[k]);
    throw ImportError("nnvm.onnx.too_large", str_cat("a ", d, " tensor of shape [", dims, "] is larger than 2^48 bytes"),
                      where);
  }
  int64_t bytes = int64_t(*size), numel = bytes / int64_t(d.bytes());

  bool external = t.data_location() == TensorProto::EXTERNAL;
  if (!external && t.external_data_size() > 0)
    tensor_error(where, "the tensor has external_data entries but its data_location is not EXTERNAL");
  Field want = field_for(d);
  for (Field f : {Field::float_data, Field::int32_data, Field::int64_data, Field::double_data, Field::uint64_data})
    if (field_size(t, f) > 0 && (f != want || external || t.has_raw_data()))
      tensor_error(where, str_cat("the tensor has values in ", field_name(f), ", which is not where ",
                                  code_name(t.data_type()),
                                  external ? " external data" : t.has_raw_data() ? " raw_data" : " values", " go"));
  if (t.string_data_size() > 0) tensor_error(where, str_cat("the tensor has string_data but type ", d));
  if (external && t.has_raw_data()) tensor_error(where, "the tensor has both raw_data and external data");

  // Sizes are checked before NDArray allocates, so a hostile shape cannot make us allocate more
  // than the data actually present.
  if (packed_in_files(d)) return decode_packed(t, d, shape, numel, external, base_dir, where);
  if (external) {
    NDArray a;
    read_external(t, base_dir, uint64_t(bytes), where, [&] {
      a = NDArray(d, shape);
      return a.raw();
    });
    return a;
  }
  if (t.has_raw_data()) {
    if (uint64_t(t.raw_data().size()) != uint64_t(bytes))
      tensor_error(where, str_cat("raw_data holds ", t.raw_data().size(), " bytes but the shape and type need ", bytes,
                                  " (", numel, " x ", d, ")"));
    NDArray a(d, shape);
    if (bytes > 0) std::memcpy(a.raw(), t.raw_data().data(), size_t(bytes));
    return a;
  }
  if (int64_t(field_size(t, want)) != numel)
    tensor_error(where, str_cat(field_name(want), " holds ", field_size(t, want), " values but the shape needs ", numel));
  NDArray a(d, shape);
  decode_typed(t, a, where);
  return a;
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
