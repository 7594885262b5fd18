// Scalar and vector data types of IR values, and the C++ storage types that map onto them.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE

// IEEE half precision, used only as a storage type: cast to float32 before arithmetic.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }

  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, out;
    if (exp == 0x1f) {
      out = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
      out = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
      out = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do { ++e; man <<= 1; } while (!(man & 0x400u));
      out = sign | uint32_t(112 - e) << 23 | ((man & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &out, 4);
    return f;
  }
  // Round to nearest even, with overflow to infinity and NaN preserved.
  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504
    if (absx < 0x38800000u) {  // result is subnormal or zero
      if (absx < 0x33000000u) return uint16_t(sign);
      uint32_t man = (absx & 0x7fffffu) | 0x800000u;
      int shift = 113 - int(absx >> 23) + 13;
      uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1u))) ++half;
      return uint16_t(sign | half);
    }
    uint32_t half = ((absx >> 13) - (112u << 10));
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
};

// bfloat16 (the upper half of a float32), also a storage type only.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }
  static float to_float(uint16_t b) {
    uint32_t x = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return uint16_t(x >> 16);
  }
};

// A data type: a code, a bit width and a lane count (lanes > 1 for vector values).
struct DataType {
  // Float8*/Float4E2M1: ONNX's 8- and 4-bit floats (ir/small_float.hpp), storage types.
  enum class Code : uint8_t {
    Int, UInt, Float, BFloat, Bool, Handle,
    Float8E4M3FN, Float8E4M3FNUZ, Float8E5M2, Float8E5M2FNUZ, Float8E8M0, Float4E2M1,
  };
  Code code = Code::Int;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(Code c, int b, int l = 1) : code(c), bits(uint8_t(b)), lanes(uint16_t(l)) {}

  static constexpr DataType int_(int bits, int lanes = 1) { return {Code::Int, bits, lanes}; }
  static constexpr DataType uint(int bits, int lanes = 1) { return {Code::UInt, bits, lanes}; }
  static constexpr DataType float_(int bits, int lanes = 1) { return {Code::Float, bits, lanes}; }
  static constexpr DataType bool_(int lanes = 1) { return {Code::Bool, 8, lanes}; }
  static constexpr DataType handle() { return {Code::Handle, 64, 1}; }

  constexpr bool is_int() const { return code == Code::Int; }
  constexpr bool is_uint() const { return code == Code::UInt; }
  constexpr bool is_integer() const { return code == Code::Int || code == Code::UInt; }
  constexpr bool is_float() const { return code == Code::Float || code == Code::BFloat || is_small_float(); }
  // The float8 and float4 types.
  constexpr bool is_small_float() const { return code >= Code::Float8E4M3FN; }
  // int4, uint4, int2, uint2: one element per byte in memory (sign-extended for int4/int2).
  constexpr bool is_sub_byte_int() const { return is_integer() && bits < 8; }
  constexpr bool is_bool() const { return code == Code::Bool; }
  constexpr bool is_handle() const { return code == Code::Handle; }
  constexpr bool is_scalar() const { return lanes == 1; }
  constexpr bool is_vector() const { return lanes > 1; }
  // float16, bfloat16, the float8/float4 types and the sub-byte integers are storage types:
  // loads, stores and casts only, no arithmetic (ops compute in float32; int4/int2 values are
  // exact there).
  constexpr bool is_storage_only() const {
    return (code == Code::Float && bits == 16) || code == Code::BFloat || is_small_float() || is_sub_byte_int();
  }
  constexpr int bytes() const { return (bits + 7) / 8; }
  constexpr DataType element_of() const { return {code, bits, 1}; }
  constexpr DataType with_lanes(int l) const { return {code, bits, l}; }

  friend constexpr bool operator==(DataType a, DataType b) {
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
  }
  friend constexpr bool operator!=(DataType a, DataType b) { return !(a == b); }

  std::string str() const {
    std::string s;
    switch (code) {
      case Code::Int: s = "int" + std::to_string(bits); break;
      case Code::UInt: s = "uint" + std::to_string(bits); break;
      case Code::Float: s = "float" + std::to_string(bits); break;
      case Code::BFloat: s = "bfloat" + std::to_string(bits); break;
      case Code::Bool: s = "bool"; break;
      case Code::Handle: s = "handle"; break;
      case Code::Float8E4M3FN: s = "float8e4m3fn"; break;
      case Code::Float8E4M3FNUZ: s = "float8e4m3fnuz"; break;
      case Code::Float8E5M2: s = "float8e5m2"; break;
      case Code::Float8E5M2FNUZ: s = "float8e5m2fnuz"; break;
      case Code::Float8E8M0: s = "float8e8m0"; break;
      case Code::Float4E2M1: s = "float4e2m1"; break;
    }
    if (lanes > 1) s += "x" + std::to_string(lanes);
    return s;
  }
  friend std::ostream& operator<<(std::ostream& os, DataType t) { return os << t.str(); }
};

namespace dtype {
inline constexpr DataType boolean = DataType::bool_();
inline constexpr DataType int8 = DataType::int_(8), int16 = DataType::int_(16),
                          int32 = DataType::int_(32), int64 = DataType::int_(64);
inline constexpr DataType uint8 = DataType::uint(8), uint16 = DataType::uint(16),
                          uint32 = DataType::uint(32), uint64 = DataType::uint(64);
inline constexpr DataType float16 = DataType::float_(16), float32 = DataType::float_(32),
                          float64 = DataType::float_(64);
inline constexpr DataType bfloat16 = DataType(DataType::Code::BFloat, 16);
inline constexpr DataType float8e4m3fn = DataType(DataType::Code::Float8E4M3FN, 8),
                          float8e4m3fnuz = DataType(DataType::Code::Float8E4M3FNUZ, 8),
                          float8e5m2 = DataType(DataType::Code::Float8E5M2, 8),
                          float8e5m2fnuz = DataType(DataType::Code::Float8E5M2FNUZ, 8),
                          float8e8m0 = DataType(DataType::Code::Float8E8M0, 8),
                          float4e2m1 = DataType(DataType::Code::Float4E2M1, 4);
inline constexpr DataType int4 = DataType::int_(4), uint4 = DataType::uint(4), int2 = DataType::int_(2),
                          uint2 = DataType::uint(2);
// Index arithmetic (loop variables, shapes, flattened offsets) is int64 throughout.
inline constexpr DataType index = int64;
// Every scalar type a tensor can hold, in the order messages list them.
inline constexpr DataType tensor_types[] = {
    boolean, int8,     int16,   int32,   int64,        uint8,          uint16,     uint32,         uint64,
    float16, bfloat16, float32, float64, float8e4m3fn, float8e4m3fnuz, float8e5m2, float8e5m2fnuz, float8e8m0,
    float4e2m1, int4, uint4, int2, uint2};
}  // namespace dtype

// The C++ type <-> DataType mapping used by the typed DSL and by typed buffers.
template <class T>
struct dtype_of;
#define NNVM_DTYPE_OF(T, V) \
  template <>               \
  struct dtype_of<T> {      \
    static constexpr DataType value = V; \
  };
NNVM_DTYPE_OF(bool, dtype::boolean)
NNVM_DTYPE_OF(int8_t, dtype::int8)
NNVM_DTYPE_OF(int16_t, dtype::int16)
NNVM_DTYPE_OF(int32_t, dtype::int32)
NNVM_DTYPE_OF(int64_t, dtype::int64)
NNVM_DTYPE_OF(uint8_t, dtype::uint8)
NNVM_DTYPE_OF(uint16_t, dtype::uint16)
NNVM_DTYPE_OF(uint32_t, dtype::uint32)
NNVM_DTYPE_OF(uint64_t, dtype::uint64)
NNVM_DTYPE_OF(float16, dtype::float16)
NNVM_DTYPE_OF(bfloat16, dtype::bfloat16)
NNVM_DTYPE_OF(float, dtype::float32)
NNVM_DTYPE_OF(double, dtype::float64)
#undef NNVM_DTYPE_OF

template <class T>
inline constexpr DataType dtype_v = dtype_of<T>::value;

// The tensor type named as DataType::str() writes it ("float32", "uint8", "bool"), or nullopt.
// Ops take data types as such names (Cast's `to`), so no importer's type codes reach them.
inline std::optional<DataType> parse_dtype(std::string_view name) {
  for (DataType t : dtype::tensor_types)
    if (t.str() == name) return t;
  return std::nullopt;
}

// "bool, int8, ..., float64", for messages that list the names parse_dtype accepts.
inline std::string tensor_type_names() {
  std::string s;
  for (DataType t : dtype::tensor_types) s += (s.empty() ? "" : ", ") + t.str();
  return s;
}

template <class T, class = void>
struct has_dtype : std::false_type {};
template <class T>
struct has_dtype<T, std::void_t<decltype(dtype_of<T>::value)>> : std::true_type {};

NNVM_END_NAMESPACE
