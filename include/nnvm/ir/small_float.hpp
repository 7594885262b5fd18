// The float8 and float4 storage types (ONNX FLOAT8E4M3FN .. FLOAT4E2M1): their encodings and
// their conversions from and to float32, which every back end implements the same way (the C
// helpers in target/storage_helpers.hpp, the LLVM emitter, the interpreter through these
// functions).
//
// A conversion to one of them (ir::Cast) rounds to nearest even and does NOT saturate: a value
// beyond the largest finite one becomes infinity where the format has one (E5M2), NaN where it
// has only NaN (the *FN and *FNUZ formats), and the largest value where it has neither
// (FLOAT4E2M1), as in ml_dtypes and PyTorch. ONNX's saturate=1 is a clamp before the cast
// (ops/transform/cast.hpp). NaN stays NaN where the format has one; FLOAT4E2M1 has none and,
// as ONNX's reference does, turns NaN into the zero of the opposite sign. The FNUZ formats have
// no negative zero. FLOAT8E8M0 (a power of two 2^(code - 127), no sign, no zero, 0xFF is NaN)
// rounds to the nearest power of two, ties up; zero and values below 2^-127 give 2^-127, a
// negative number NaN; ONNX's round_mode up/down is applied around it (ops/transform/cast.hpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE

// A sign-exponent-mantissa format of at most 8 bits (FLOAT8E8M0 is not one: see above).
struct SmallFloatFormat {
  enum class Nan : uint8_t {
    ieee,       // all-ones exponent with a nonzero mantissa (infinity: zero mantissa)
    all_ones,   // only S.1111.111 (the FN formats: no infinity)
    neg_zero,   // only 0x80, the pattern of -0 (the FNUZ formats: no infinity, no -0)
    none,       // no NaN, no infinity (FLOAT4E2M1)
  };
  const char* helper;  // short name in emitted helpers: nnvm_f32_to_<helper>
  int exp_bits, man_bits, bias;
  Nan nan;
  uint8_t max_mag;  // the largest finite magnitude's code (sign bit clear)

  constexpr uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  constexpr uint32_t exp_all_ones() const { return (1u << exp_bits) - 1u; }
  constexpr bool has_inf() const { return nan == Nan::ieee; }
  // The code NaN converts to (sign: the input's sign bit, 0 or 1).
  constexpr uint32_t nan_code(uint32_t sign) const {
    switch (nan) {
      case Nan::ieee: return (sign ? sign_bit() : 0) | (exp_all_ones() << man_bits) | (1u << (man_bits - 1));
      case Nan::all_ones: return (sign ? sign_bit() : 0) | (sign_bit() - 1u);
      case Nan::neg_zero: return sign_bit();
      case Nan::none: return sign ? 0u : sign_bit();
    }
    return 0;
  }
  // The code of a magnitude past max_mag (infinity included).
  constexpr uint32_t overflow_code(uint32_t sign) const {
    switch (nan) {
      case Nan::ieee: return (sign ? sign_bit() : 0) | (exp_all_ones() << man_bits);
      case Nan::all_ones:
      case Nan::neg_zero: return nan_code(sign);
      case Nan::none: return (sign ? sign_bit() : 0) | max_mag;
    }
    return 0;
  }
  constexpr uint32_t zero_code(uint32_t sign) const { return sign && nan != Nan::neg_zero ? sign_bit() : 0u; }
  constexpr bool is_nan(uint32_t c) const {
    uint32_t mag = c & (sign_bit() - 1u);
    switch (nan) {
      case Nan::ieee: return (mag >> man_bits) == exp_all_ones() && (mag & ((1u << man_bits) - 1u)) != 0;
      case Nan::all_ones: return mag == sign_bit() - 1u;
      case Nan::neg_zero: return c == sign_bit();
      case Nan::none: return false;
    }
    return false;
  }
  constexpr bool is_inf(uint32_t c) const {
    return has_inf() && (c & (sign_bit() - 1u)) == exp_all_ones() << man_bits;
  }
  // The largest finite value.
  float max_value() const { return decode(max_mag); }

  // A NaN keeps its sign bit (so the interpreter, which holds values as float32, stores back
  // the code it loaded).
  float decode(uint32_t c) const {
    bool neg = c & sign_bit();
    if (is_nan(c)) return neg ? -NAN : NAN;
    if (is_inf(c)) return neg ? -INFINITY : INFINITY;
    uint32_t mag = c & (sign_bit() - 1u), e = mag >> man_bits, m = mag & ((1u << man_bits) - 1u);
    float v = e == 0 ? std::ldexp(float(m), 1 - bias - man_bits)
                     : std::ldexp(float((1u << man_bits) + m), int(e) - bias - man_bits);
    return neg ? -v : v;
  }

  // Round to nearest even in integer arithmetic on float32's bits (the emitted helpers are the
  // same steps; storage_helpers.hpp).
  uint32_t encode(float f) const {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = x >> 31, a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return nan_code(sign);
    if (a == 0x7f800000u) return overflow_code(sign);
    int e32 = int(a >> 23);
    if (e32 == 0) return zero_code(sign);  // float32 subnormals are far below every format's least value
    uint32_t sig = (a & 0x7fffffu) | 0x800000u;
    int te = e32 - 127 + bias;  // the biased exponent in this format
    int shift = 23 - man_bits + (te < 1 ? 1 - te : 0);
    if (shift > 24) return zero_code(sign);
    uint32_t q = sig >> shift, rem = sig & ((1u << shift) - 1u), half = 1u << (shift - 1);
    uint32_t mag = (te < 1 ? 0u : uint32_t(te - 1) << man_bits) + q;  // a mantissa carry raises the exponent
    if (rem > half || (rem == half && (mag & 1u))) ++mag;
    if (mag > max_mag) return overflow_code(sign);
    if (mag == 0) return zero_code(sign);
    return (sign ? sign_bit() : 0u) | mag;
  }
};

namespace small_float {
inline constexpr SmallFloatFormat e4m3fn{"f8e4m3fn", 4, 3, 7, SmallFloatFormat::Nan::all_ones, 0x7e};
inline constexpr SmallFloatFormat e4m3fnuz{"f8e4m3fnuz", 4, 3, 8, SmallFloatFormat::Nan::neg_zero, 0x7f};
inline constexpr SmallFloatFormat e5m2{"f8e5m2", 5, 2, 15, SmallFloatFormat::Nan::ieee, 0x7b};
inline constexpr SmallFloatFormat e5m2fnuz{"f8e5m2fnuz", 5, 2, 16, SmallFloatFormat::Nan::neg_zero, 0x7f};
inline constexpr SmallFloatFormat e2m1{"f4e2m1", 2, 1, 1, SmallFloatFormat::Nan::none, 0x7};

// FLOAT8E8M0: code c is 2^(c - 127); 0xFF is NaN.
inline float e8m0_decode(uint32_t c) { return c == 0xffu ? NAN : std::ldexp(1.0f, int(c) - 127); }
inline uint32_t e8m0_encode(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (x > 0x7f800000u && x != 0x80000000u) return 0xffu;  // NaN, infinity and negative numbers (not -0)
  uint32_t e = (x >> 23) & 0xffu;
  if (e == 0) return 0;  // zero and subnormals: 2^-127, the least value
  uint32_t c = e + ((x & 0x400000u) ? 1u : 0u);  // ties (mantissa exactly 0.5) round up
  return c > 0xfeu ? 0xffu : c;
}
}  // namespace small_float

// The format of a float8/float4 type, or nullptr (FLOAT8E8M0 included: it has its own rules).
constexpr const SmallFloatFormat* small_float_format(DataType t) {
  switch (t.code) {
    case DataType::Code::Float8E4M3FN: return &small_float::e4m3fn;
    case DataType::Code::Float8E4M3FNUZ: return &small_float::e4m3fnuz;
    case DataType::Code::Float8E5M2: return &small_float::e5m2;
    case DataType::Code::Float8E5M2FNUZ: return &small_float::e5m2fnuz;
    case DataType::Code::Float4E2M1: return &small_float::e2m1;
    default: return nullptr;
  }
}

// The stored bits of float32 value `f` in storage type `t` (float16, bfloat16, a float8 or
// float4 type), and the float32 those bits stand for.
inline uint32_t storage_encode(DataType t, float f) {
  if (const SmallFloatFormat* fmt = small_float_format(t)) return fmt->encode(f);
  if (t.code == DataType::Code::Float8E8M0) return small_float::e8m0_encode(f);
  if (t.code == DataType::Code::BFloat) return bfloat16::from_float(f);
  return float16::from_float(f);
}
inline float storage_decode(DataType t, uint32_t bits) {
  if (const SmallFloatFormat* fmt = small_float_format(t)) return fmt->decode(bits);
  if (t.code == DataType::Code::Float8E8M0) return small_float::e8m0_decode(bits);
  if (t.code == DataType::Code::BFloat) return bfloat16::to_float(uint16_t(bits));
  return float16::to_float(uint16_t(bits));
}
// `v` rounded to float storage type `t` (the value a constant of that type holds).
inline float storage_round(DataType t, double v) { return storage_decode(t, storage_encode(t, float(v))); }

NNVM_END_NAMESPACE
