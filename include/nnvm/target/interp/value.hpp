// Runtime values of the reference interpreter and the per-lane kernels that give the lowered
// IR its meaning (docs/lowered_ir.md). A lane is 64 raw bits, so scalar evaluation never touches
// the heap; the element type, known from the IR node, says how to read them.
#pragma once

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "nnvm/ir/expr.hpp"
#include "nnvm/ir/small_float.hpp"

NNVM_BEGIN_NAMESPACE
namespace target::interp {

// Signed integers are held sign-extended, unsigned integers and bool zero-extended, float32 in
// the low 32 bits, float64 in all 64. float16/bfloat16 and the float8/float4 values are held as
// the float32 they equal exactly: they are only loaded, stored and cast. int4/int2/uint4/uint2
// are integers of that width, a byte each in memory.
struct Lane {
  uint64_t u;
  int64_t i() const { return int64_t(u); }
  float f() const { return std::bit_cast<float>(uint32_t(u)); }
  double d() const { return std::bit_cast<double>(u); }
  static Lane of_i(int64_t v) { return {uint64_t(v)}; }
  static Lane of_u(uint64_t v) { return {v}; }
  static Lane of(float v) { return {std::bit_cast<uint32_t>(v)}; }
  static Lane of(double v) { return {std::bit_cast<uint64_t>(v)}; }
};

// A vector value. Up to 64 lanes live inline (no allocation per vector operation); wider
// vectors spill to the heap.
class LaneVec {
 public:
  static constexpr int kInline = 64;
  LaneVec() = default;
  LaneVec(const LaneVec&) = delete;
  LaneVec& operator=(const LaneVec&) = delete;

  void resize(int n) {
    n_ = n;
    if (n > kInline && heap_.size() < size_t(n)) heap_.resize(size_t(n));
  }
  int size() const { return n_; }
  Lane* data() { return n_ > kInline ? heap_.data() : inline_; }
  const Lane* data() const { return n_ > kInline ? heap_.data() : inline_; }
  Lane& operator[](int k) { return data()[k]; }
  Lane operator[](int k) const { return data()[k]; }

 private:
  int n_ = 0;
  Lane inline_[kInline];
  std::vector<Lane> heap_;
};

// The interpretation of a scalar element type; `unsupported` for types no back end handles.
// `small`: a float8/float4 type, converted by storage_encode/storage_decode (small_float.hpp).
enum class Elem : uint8_t { i, u, b, f32, f64, f16, bf16, small, unsupported };

inline Elem elem_of(DataType t) {
  if (t.is_small_float()) return Elem::small;
  bool int_width = t.bits == 2 || t.bits == 4 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  switch (t.code) {
    case DataType::Code::Int: return int_width ? Elem::i : Elem::unsupported;
    case DataType::Code::UInt: return int_width ? Elem::u : Elem::unsupported;
    case DataType::Code::Bool: return t.bits == 8 ? Elem::b : Elem::unsupported;
    case DataType::Code::Float:
      return t.bits == 32 ? Elem::f32 : t.bits == 64 ? Elem::f64 : t.bits == 16 ? Elem::f16 : Elem::unsupported;
    case DataType::Code::BFloat: return t.bits == 16 ? Elem::bf16 : Elem::unsupported;
    default: return Elem::unsupported;
  }
}
inline bool is_integral(Elem c) { return c == Elem::i || c == Elem::u || c == Elem::b; }

// Brings an integer result back to its type's width: narrow types wrap, bool becomes 0 or 1.
inline Lane wrap_int(Elem c, int bits, uint64_t v) {
  if (c == Elem::b) return {v != 0};
  if (bits >= 64) return {v};
  unsigned sh = unsigned(64 - bits);
  if (c == Elem::i) return Lane::of_i(int64_t(v << sh) >> sh);
  return {v & ((uint64_t(1) << bits) - 1)};
}

// Float to integer conversion is undefined in C when the value does not fit; the interpreter
// must not be, so it saturates to int64 (NaN gives 0) and then wraps to the target width,
// which agrees with C for every value that fits.
template <class F>
uint64_t float_to_int_bits(Elem to, int bits, F x) {
  if (std::isnan(x)) return 0;
  if (to == Elem::u && bits == 64 && x >= F(0)) {
    if (x >= F(18446744073709551616.0)) return std::numeric_limits<uint64_t>::max();
    return uint64_t(x);
  }
  if (x >= F(9223372036854775808.0)) return uint64_t(std::numeric_limits<int64_t>::max());
  if (x < F(-9223372036854775808.0)) return uint64_t(std::numeric_limits<int64_t>::min());
  return uint64_t(int64_t(x));
}

// For Elem::small, `bits` is not enough to name the format: callers pass the DataType's code
// through small_code (a Code, the type's bits being implied).
template <class S>
Lane convert(Elem to, int bits, S x, DataType::Code small_code = DataType::Code::Float8E4M3FN) {
  switch (to) {
    case Elem::b: return {x != S(0)};
    case Elem::i:
    case Elem::u:
      if constexpr (std::is_floating_point_v<S>) return wrap_int(to, bits, float_to_int_bits(to, bits, x));
      else return wrap_int(to, bits, uint64_t(x));
    case Elem::f32: return Lane::of(float(x));
    case Elem::f64: return Lane::of(double(x));
    // Conversions to the storage types go through float32, as the emitted helpers do.
    case Elem::f16: return Lane::of(float16::to_float(float16::from_float(float(x))));
    case Elem::bf16: return Lane::of(bfloat16::to_float(bfloat16::from_float(float(x))));
    case Elem::small: return Lane::of(storage_round(DataType(small_code, 8), double(float(x))));
    case Elem::unsupported: break;
  }
  return {0};
}

inline Lane cast_lane(Elem to, int to_bits, Elem from, Lane v, DataType::Code small_code = DataType::Code::Float8E4M3FN) {
  switch (from) {
    case Elem::i: return convert(to, to_bits, v.i(), small_code);
    case Elem::u:
    case Elem::b: return convert(to, to_bits, v.u, small_code);
    case Elem::f32:
    case Elem::f16:
    case Elem::bf16:
    case Elem::small: return convert(to, to_bits, v.f(), small_code);
    case Elem::f64: return convert(to, to_bits, v.d(), small_code);
    case Elem::unsupported: break;
  }
  return {0};
}

// The low `bits` of a lane (a float's bits, or an integer's two's complement) read as `to`:
// a signed integer is sign-extended to 64 bits, as every integer lane is.
inline Lane bit_cast_lane(Elem to, int bits, Lane v) {
  uint64_t low = bits >= 64 ? v.u : v.u & ((uint64_t(1) << bits) - 1);
  if (to == Elem::i && bits < 64 && (low >> (bits - 1)) & 1) low |= ~uint64_t(0) << bits;
  return {low};
}

template <class T>
Lane float_binop(ir::ExprKind k, T a, T b) {
  using K = ir::ExprKind;
  switch (k) {
    case K::Add: return Lane::of(T(a + b));
    case K::Sub: return Lane::of(T(a - b));
    case K::Mul: return Lane::of(T(a * b));
    case K::Div: return Lane::of(T(a / b));
    case K::Mod: return Lane::of(T(std::fmod(a, b)));
    // IEEE 754-2019 minimum/maximum: a NaN operand gives NaN, whichever side it is on.
    case K::Min: return Lane::of(a < b || a != a ? a : b);
    case K::Max: return Lane::of(a > b || a != a ? a : b);
    case K::EQ: return {a == b};
    case K::NE: return {a != b};
    case K::LT: return {a < b};
    case K::LE: return {a <= b};
    case K::GT: return {a > b};
    case K::GE: return {a >= b};
    default: return {0};
  }
}

// a*b + c (c negated when `negate_addend`) rounded once: the interpreter's reading of the
// products the emitters fuse (docs/lowered_ir.md). f32 or f64 only.
inline Lane fused_multiply_add(Elem c, Lane a, Lane b, Lane addend, bool negate_addend) {
  if (c == Elem::f32) return Lane::of(std::fma(a.f(), b.f(), negate_addend ? -addend.f() : addend.f()));
  return Lane::of(std::fma(a.d(), b.d(), negate_addend ? -addend.d() : addend.d()));
}

// Requires a non-zero divisor for Div and Mod (the caller reports division by zero).
inline Lane int_binop(ir::ExprKind k, Elem c, int bits, Lane a, Lane b) {
  using K = ir::ExprKind;
  bool s = c == Elem::i;
  auto lt = [s](Lane x, Lane y) { return s ? x.i() < y.i() : x.u < y.u; };
  switch (k) {
    case K::Add: return wrap_int(c, bits, a.u + b.u);
    case K::Sub: return wrap_int(c, bits, a.u - b.u);
    case K::Mul: return wrap_int(c, bits, a.u * b.u);
    // x / -1 is a negation; done in unsigned arithmetic so INT64_MIN / -1 cannot trap.
    case K::Div:
      if (!s) return wrap_int(c, bits, a.u / b.u);
      return wrap_int(c, bits, b.i() == -1 ? 0 - a.u : uint64_t(a.i() / b.i()));
    case K::Mod:
      if (!s) return wrap_int(c, bits, a.u % b.u);
      return wrap_int(c, bits, b.i() == -1 ? 0 : uint64_t(a.i() % b.i()));
    case K::Min: return lt(a, b) ? a : b;
    case K::Max: return lt(b, a) ? a : b;
    case K::EQ: return {a.u == b.u};
    case K::NE: return {a.u != b.u};
    case K::LT: return {lt(a, b)};
    case K::LE: return {!lt(b, a)};
    case K::GT: return {lt(b, a)};
    case K::GE: return {!lt(a, b)};
    case K::And: return {a.u != 0 && b.u != 0};
    case K::Or: return {a.u != 0 || b.u != 0};
    default: return {0};
  }
}

// A binary node's result; `c`/`bits` describe the operands' element type.
inline Lane binop(ir::ExprKind k, Elem c, int bits, Lane a, Lane b) {
  if (c == Elem::f32) return float_binop(k, a.f(), b.f());
  if (c == Elem::f64) return float_binop(k, a.d(), b.d());
  return int_binop(k, c, bits, a, b);
}

// The math library in the argument's precision: the float overloads of <cmath> are the C
// library's `f` functions (expf, ...), as emitted C calls them.
template <class T>
Lane float_call(ir::CallOp op, T x, T y) {
  using O = ir::CallOp;
  switch (op) {
    case O::exp: return Lane::of(T(std::exp(x)));
    case O::exp2: return Lane::of(T(std::exp2(x)));
    case O::log: return Lane::of(T(std::log(x)));
    case O::log2: return Lane::of(T(std::log2(x)));
    case O::log1p: return Lane::of(T(std::log1p(x)));
    case O::expm1: return Lane::of(T(std::expm1(x)));
    case O::sqrt: return Lane::of(T(std::sqrt(x)));
    case O::rsqrt: return Lane::of(T(T(1) / std::sqrt(x)));
    case O::tanh: return Lane::of(T(std::tanh(x)));
    case O::erf: return Lane::of(T(std::erf(x)));
    case O::sigmoid: return Lane::of(T(T(1) / (T(1) + std::exp(-x))));
    case O::pow: return Lane::of(T(std::pow(x, y)));
    case O::abs: return Lane::of(T(std::fabs(x)));
    case O::floor: return Lane::of(T(std::floor(x)));
    case O::ceil: return Lane::of(T(std::ceil(x)));
    case O::round: return Lane::of(T(std::nearbyint(x)));
    case O::trunc: return Lane::of(T(std::trunc(x)));
    case O::sin: return Lane::of(T(std::sin(x)));
    case O::cos: return Lane::of(T(std::cos(x)));
    case O::tan: return Lane::of(T(std::tan(x)));
    case O::asin: return Lane::of(T(std::asin(x)));
    case O::acos: return Lane::of(T(std::acos(x)));
    case O::atan: return Lane::of(T(std::atan(x)));
    case O::atan2: return Lane::of(T(std::atan2(x, y)));
    case O::sinh: return Lane::of(T(std::sinh(x)));
    case O::cosh: return Lane::of(T(std::cosh(x)));
    case O::asinh: return Lane::of(T(std::asinh(x)));
    case O::acosh: return Lane::of(T(std::acosh(x)));
    case O::atanh: return Lane::of(T(std::atanh(x)));
    case O::fmod: return Lane::of(T(std::fmod(x, y)));
    case O::isnan: return {std::isnan(x) ? 1u : 0u};
    case O::isinf: return {std::isinf(x) ? 1u : 0u};
    case O::copysign: return Lane::of(T(std::copysign(x, y)));
    default: break;  // the bitwise ops take integers
  }
  return {0};
}

// The bitwise ops on integers held as lanes (ir::CallOp: out-of-range shifts are defined).
inline Lane bitwise_call(ir::CallOp op, Elem c, int bits, Lane x, Lane y) {
  using O = ir::CallOp;
  // A negative signed amount reads as a huge unsigned one: out of range too.
  bool in_range = y.u < uint64_t(bits);
  switch (op) {
    case O::bitwise_and: return wrap_int(c, bits, x.u & y.u);
    case O::bitwise_or: return wrap_int(c, bits, x.u | y.u);
    case O::bitwise_xor: return wrap_int(c, bits, x.u ^ y.u);
    case O::bitwise_not: return wrap_int(c, bits, ~x.u);
    case O::shift_left: return in_range ? wrap_int(c, bits, x.u << y.u) : Lane{0};
    case O::shift_right:
      if (c == Elem::i) return Lane::of_i(x.i() >> (in_range ? y.u : uint64_t(bits - 1)));
      return in_range ? Lane{x.u >> y.u} : Lane{0};
    default: return {0};
  }
}

// `c`/`bits` describe the arguments' element type; `y` is ignored by unary ops. Only abs and
// the bitwise ops take integers (checked by Call::make).
inline Lane call_lane(ir::CallOp op, Elem c, int bits, Lane x, Lane y) {
  if (c == Elem::f32) return float_call(op, x.f(), y.f());
  if (c == Elem::f64) return float_call(op, x.d(), y.d());
  if (ir::is_bitwise(op)) return bitwise_call(op, c, bits, x, y);
  if (c == Elem::i && x.i() < 0) return wrap_int(c, bits, 0 - x.u);
  return x;
}

template <class T>
T read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void write_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Reads one element of type (c, bits) at p; bool bytes other than 0 read as true.
// `code` names the format of an Elem::small element.
inline Lane load_elem(Elem c, int bits, const std::byte* p, DataType::Code code = DataType::Code::Float8E4M3FN) {
  switch (c) {
    case Elem::i:
      switch (bits) {
        case 2:
        case 4:
        case 8: return Lane::of_i(read_as<int8_t>(p));
        case 16: return Lane::of_i(read_as<int16_t>(p));
        case 32: return Lane::of_i(read_as<int32_t>(p));
        default: return Lane::of_i(read_as<int64_t>(p));
      }
    case Elem::u:
      switch (bits) {
        case 2:
        case 4:
        case 8: return {read_as<uint8_t>(p)};
        case 16: return {read_as<uint16_t>(p)};
        case 32: return {read_as<uint32_t>(p)};
        default: return {read_as<uint64_t>(p)};
      }
    case Elem::b: return {read_as<uint8_t>(p) != 0};
    case Elem::f32: return Lane::of(read_as<float>(p));
    case Elem::f64: return Lane::of(read_as<double>(p));
    case Elem::f16: return Lane::of(float16::to_float(read_as<uint16_t>(p)));
    case Elem::bf16: return Lane::of(bfloat16::to_float(read_as<uint16_t>(p)));
    case Elem::small: return Lane::of(storage_decode(DataType(code, 8), read_as<uint8_t>(p)));
    case Elem::unsupported: break;
  }
  return {0};
}

inline void store_elem(Elem c, int bits, std::byte* p, Lane v, DataType::Code code = DataType::Code::Float8E4M3FN) {
  switch (c) {
    case Elem::i:
    case Elem::u:
      switch (bits) {
        case 2:
        case 4:
        case 8: return write_as(p, uint8_t(v.u));
        case 16: return write_as(p, uint16_t(v.u));
        case 32: return write_as(p, uint32_t(v.u));
        default: return write_as(p, v.u);
      }
    case Elem::b: return write_as(p, uint8_t(v.u != 0));
    case Elem::f32: return write_as(p, v.f());
    case Elem::f64: return write_as(p, v.d());
    case Elem::f16: return write_as(p, float16::from_float(v.f()));
    case Elem::bf16: return write_as(p, bfloat16::from_float(v.f()));
    case Elem::small: return write_as(p, uint8_t(storage_encode(DataType(code, 8), v.f())));
    case Elem::unsupported: break;
  }
}

// Fills fresh scratch memory so that a kernel reading it before writing it is caught: floats
// become quiet NaNs, every other type the byte pattern 0xCD.
inline void fill_uninitialized(Elem c, int bits, std::byte* p, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    switch (c) {
      case Elem::f32: write_as(p + 4 * k, uint32_t(0x7fc00000u)); break;
      case Elem::f64: write_as(p + 8 * k, uint64_t(0x7ff8000000000000u)); break;
      case Elem::f16: write_as(p + 2 * k, uint16_t(0x7e00u)); break;
      case Elem::bf16: write_as(p + 2 * k, uint16_t(0x7fc0u)); break;
      default: std::memset(p, 0xCD, size_t(n) * size_t((bits + 7) / 8)); return;
    }
  }
}

}  // namespace target::interp
NNVM_END_NAMESPACE
