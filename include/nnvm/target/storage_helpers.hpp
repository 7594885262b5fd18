// The conversion helpers between float32 and the float storage types (float16, bfloat16, the
// float8 and float4 types) that generated code calls (storage types compute in float32), as
// source text in a dialect's spelling. Rounding is to nearest even, NaN stays a NaN and overflow
// gives infinity, as in nnvm::float16/bfloat16 (ir/dtype.hpp); the float8/float4 helpers are
// the steps of SmallFloatFormat::encode/decode (ir/small_float.hpp), one pair per format.
// Locals avoid names that are types or built-ins in OpenCL C and Metal (half, sign).
#pragma once

#include <cstdio>

#include "nnvm/ir/small_float.hpp"
#include "nnvm/target/dialect.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// Which helpers a source calls, by index: float16 and bfloat16 first (StorageHelper order), then
// a (to float32, from float32) pair per float8/float4 type in DataType::Code order. The source
// defines only those (an unused static function is a warning under -Wall).
enum class StorageHelper { f16_to_f32, f32_to_f16, bf16_to_f32, f32_to_bf16 };
inline constexpr int kSmallFloatTypes = int(DataType::Code::Float4E2M1) - int(DataType::Code::Float8E4M3FN) + 1;
inline constexpr int kStorageHelpers = 4 + 2 * kSmallFloatTypes;

// The helper converting storage type `t` to float32 (to_float) or float32 to `t`: its index and
// its name.
inline int storage_helper_index(DataType t, bool to_float) {
  if (t.is_small_float()) return 4 + 2 * (int(t.code) - int(DataType::Code::Float8E4M3FN)) + (to_float ? 0 : 1);
  bool bf = t.code == DataType::Code::BFloat;
  return int(bf ? (to_float ? StorageHelper::bf16_to_f32 : StorageHelper::f32_to_bf16)
                : (to_float ? StorageHelper::f16_to_f32 : StorageHelper::f32_to_f16));
}
inline std::string small_float_helper_stem(DataType t) {
  if (const SmallFloatFormat* f = small_float_format(t)) return f->helper;
  return "f8e8m0";
}
inline std::string storage_helper_name(DataType t, bool to_float) {
  std::string stem = t.is_small_float() ? small_float_helper_stem(t) : t.code == DataType::Code::BFloat ? "bf16" : "f16";
  return to_float ? "nnvm_" + stem + "_to_f32" : "nnvm_f32_to_" + stem;
}

namespace detail {
// The float8/float4 helpers of type `t` (the pair at `first`, `second`).
inline std::string small_float_helpers(DataType t, bool to_float, bool from_float,
                                       const std::map<std::string, std::string>& common) {
  auto u = [](uint32_t v) { return std::to_string(v) + "u"; };
  std::map<std::string, std::string> p = common;
  p["h"] = small_float_helper_stem(t);
  std::string s;
  const SmallFloatFormat* f = small_float_format(t);
  if (!f) {  // FLOAT8E8M0: a power of two 2^(c - 127), 0xFF NaN
    if (to_float)
      s += fill(R"(${qual}${f32} nnvm_${h}_to_f32(${u8} c) {
  ${u32} out = c == 0xffu ? 0x7fc00000u : c == 0u ? 0x00400000u : (${u32})c << 23;
  ${f32} f;
  ${copy_f_out}
  return f;
}
)", p);
    if (from_float)
      s += fill(R"(${qual}${u8} nnvm_f32_to_${h}(${f32} f) {
  ${u32} x, e, c;
  ${copy_x_f}
  if (x > 0x7f800000u && x != 0x80000000u) return (${u8})0xffu;
  e = (x >> 23) & 0xffu;
  if (e == 0u) return (${u8})0u;
  c = e + ((x & 0x400000u) ? 1u : 0u);
  return (${u8})(c > 0xfeu ? 0xffu : c);
}
)", p);
    return s;
  }
  using Nan = SmallFloatFormat::Nan;
  uint32_t mag_mask = f->sign_bit() - 1u, man_mask = (1u << f->man_bits) - 1u;
  char scale[40];
  std::snprintf(scale, sizeof scale, "%.9gf", double(std::ldexp(1.0f, 1 - f->bias - f->man_bits)));
  p["M"] = std::to_string(f->man_bits);
  p["mag_mask"] = u(mag_mask);
  p["man_mask"] = u(man_mask);
  p["sign_bit"] = u(f->sign_bit());
  p["sign_shift"] = std::to_string(31 - f->exp_bits - f->man_bits);
  p["man_shift"] = std::to_string(23 - f->man_bits);
  p["exp_adj"] = u(uint32_t(127 - f->bias));
  p["bias_adj"] = std::to_string(127 - f->bias);
  p["shift0"] = std::to_string(23 - f->man_bits);
  p["scale"] = scale;
  p["max_mag"] = u(f->max_mag);
  p["is_nan"] = f->nan == Nan::ieee       ? "e == " + u(f->exp_all_ones()) + " && m != 0u"
                : f->nan == Nan::all_ones ? "mag == " + u(mag_mask)
                : f->nan == Nan::neg_zero ? "c == " + u(f->sign_bit())
                                          : "0";
  p["is_inf"] = f->has_inf() ? "mag == " + u(f->exp_all_ones() << f->man_bits) : "0";
  p["nan0"] = u(f->nan_code(0));
  p["nan1"] = u(f->nan_code(1));
  p["ovf0"] = u(f->overflow_code(0));
  p["ovf1"] = u(f->overflow_code(1));
  p["zero1"] = u(f->zero_code(1));
  if (to_float)
    s += fill(R"(${qual}${f32} nnvm_${h}_to_f32(${u8} c) {
  ${u32} mag = c & ${mag_mask}, e = mag >> ${M}, m = mag & ${man_mask}, out;
  ${f32} f;
  if (${is_nan}) {
    out = 0x7fc00000u | ((${u32})(c & ${sign_bit}) << ${sign_shift});
  } else if (${is_inf}) {
    out = 0x7f800000u | ((${u32})(c & ${sign_bit}) << ${sign_shift});
  } else if (e == 0u) {
    f = (${f32})m * ${scale};
    return (c & ${sign_bit}) ? -f : f;
  } else {
    out = ((e + ${exp_adj}) << 23) | (m << ${man_shift}) | ((${u32})(c & ${sign_bit}) << ${sign_shift});
  }
  ${copy_f_out}
  return f;
}
)", p);
  if (from_float)
    s += fill(R"(${qual}${u8} nnvm_f32_to_${h}(${f32} f) {
  ${u32} x, neg, a, sig, q, rem, mid, mag;
  ${int} te, shift;
  ${copy_x_f}
  neg = x >> 31;
  a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return (${u8})(neg ? ${nan1} : ${nan0});
  if (a == 0x7f800000u) return (${u8})(neg ? ${ovf1} : ${ovf0});
  if (a < 0x00800000u) return (${u8})(neg ? ${zero1} : 0u);
  sig = (a & 0x7fffffu) | 0x800000u;
  te = (${int})(a >> 23) - ${bias_adj};
  shift = ${shift0} + (te < 1 ? 1 - te : 0);
  if (shift > 24) return (${u8})(neg ? ${zero1} : 0u);
  q = sig >> shift;
  rem = sig & ((1u << shift) - 1u);
  mid = 1u << (shift - 1);
  mag = (te < 1 ? 0u : (${u32})(te - 1) << ${M}) + q;
  if (rem > mid || (rem == mid && (mag & 1u))) ++mag;
  if (mag > ${max_mag}) return (${u8})(neg ? ${ovf1} : ${ovf0});
  if (mag == 0u) return (${u8})(neg ? ${zero1} : 0u);
  return (${u8})((neg ? ${sign_bit} : 0u) | mag);
}
)", p);
  return s;
}
}  // namespace detail

inline std::string storage_helpers_source(const Dialect& d, const bool (&used)[kStorageHelpers]) {
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
  const std::map<std::string, std::string> common = {
      {"qual", d.helper_qualifier}, {"f32", d.types.float32},       {"u8", d.types.uint8},
      {"u16", d.types.uint16},      {"u32", d.types.uint32},        {"int", d.int_type},
      {"copy_f_out", copy("f", "out")}, {"copy_f_x", copy("f", "x")}, {"copy_x_f", copy("x", "f")}};
  std::string s;
  for (int h = 0; h < 4; ++h)
    if (used[h]) s += fill(text[h], common);
  for (int k = 0; k < kSmallFloatTypes; ++k)
    if (used[4 + 2 * k] || used[5 + 2 * k])
      s += detail::small_float_helpers(DataType(DataType::Code(int(DataType::Code::Float8E4M3FN) + k), 8),
                                       used[4 + 2 * k], used[5 + 2 * k], common);
  return s;
}

}  // namespace target
NNVM_END_NAMESPACE
