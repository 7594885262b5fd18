// The float16 and bfloat16 conversion helpers generated code calls (storage types compute in
// float32), as source text in a dialect's spelling. Rounding is to nearest even, NaN stays a
// NaN and overflow gives infinity, as in nnvm::float16/bfloat16 (ir/dtype.hpp).
#pragma once

#include "nnvm/target/dialect.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// Which helpers a source calls, in StorageHelper order; the source defines only those (an
// unused static function is a warning under -Wall).
enum class StorageHelper { f16_to_f32, f32_to_f16, bf16_to_f32, f32_to_bf16 };

inline std::string storage_helpers_source(const Dialect& d, const bool (&used)[4]) {
  static const char* const text[4] = {
      // f16_to_f32
      R"(${qual}${f32} nnvm_f16_to_f32(${u16} h) {
  ${u32} sign = (${u32})(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, out;
  ${f32} f;
  if (exp == 0x1fu) {
    out = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    out = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    out = sign;
  } else {
    ${int} e = -1;
    do { ++e; man <<= 1; } while (!(man & 0x400u));
    out = sign | ((${u32})(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  ${copy_f_out}
  return f;
}
)",
      // f32_to_f16
      R"(${qual}${u16} nnvm_f32_to_f16(${f32} f) {
  ${u32} x, sign, absx, bits, rem;
  ${copy_x_f}
  sign = (x >> 16) & 0x8000u;
  absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return (${u16})(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) return (${u16})(sign | 0x7c00u);
  if (absx < 0x38800000u) {
    ${u32} man, mid;
    ${int} shift;
    if (absx < 0x33000000u) return (${u16})sign;
    man = (absx & 0x7fffffu) | 0x800000u;
    shift = 113 - (${int})(absx >> 23) + 13;
    bits = man >> shift;
    rem = man & ((1u << shift) - 1u);
    mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (bits & 1u))) ++bits;
    return (${u16})(sign | bits);
  }
  bits = (absx >> 13) - (112u << 10);
  rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (bits & 1u))) ++bits;
  return (${u16})(sign | bits);
}
)",
      // bf16_to_f32
      R"(${qual}${f32} nnvm_bf16_to_f32(${u16} b) {
  ${u32} x = (${u32})b << 16;
  ${f32} f;
  ${copy_f_x}
  return f;
}
)",
      // f32_to_bf16
      R"(${qual}${u16} nnvm_f32_to_bf16(${f32} f) {
  ${u32} x;
  ${copy_x_f}
  if ((x & 0x7fffffffu) > 0x7f800000u) return (${u16})((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (${u16})(x >> 16);
}
)",
  };
  auto copy = [&](const char* dst, const char* src) { return fill(d.bit_copy, {{"dst", dst}, {"src", src}}); };
  std::string s;
  for (int h = 0; h < 4; ++h)
    if (used[h])
      s += fill(text[h], {{"qual", d.helper_qualifier},
                          {"f32", d.types.float32},
                          {"u16", d.types.uint16},
                          {"u32", d.types.uint32},
                          {"int", d.int_type},
                          {"copy_f_out", copy("f", "out")},
                          {"copy_f_x", copy("f", "x")},
                          {"copy_x_f", copy("x", "f")}});
  return s;
}

}  // namespace target
NNVM_END_NAMESPACE
