// The float8/float4 and int4/int2 storage types through a back end: one kernel per type that
// converts float32 to the type and back (scalar and 4-lane), and for the integers also from
// int32, checked against SmallFloatFormat (itself checked against the formats' published values
// in tests/ir/test_small_float.cpp) and plain wrapping arithmetic written here.
#pragma once

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "nnvm/ir/small_float.hpp"
#include "nnvm/ndarray.hpp"
#include "support/check.hpp"

namespace storage_cases {

using namespace nnvm;
using namespace nnvm::ir;

inline const std::vector<DataType>& small_float_types() {
  static const std::vector<DataType> t = {dtype::float8e4m3fn, dtype::float8e4m3fnuz, dtype::float8e5m2,
                                          dtype::float8e5m2fnuz, dtype::float8e8m0, dtype::float4e2m1};
  return t;
}
inline const std::vector<DataType>& sub_byte_types() {
  static const std::vector<DataType> t = {dtype::int4, dtype::uint4, dtype::int2, dtype::uint2};
  return t;
}

// B = T(A), C = float32(B) for float32 A; for an integer T also D = T(K), E = int32(D) for int32 K.
// The first n/4*4 elements go 4 lanes at a time, the rest one by one.
inline LoweredFunc convert_kernel(DataType t) {
  Var n("n");
  Expr four = make_const(dtype::index, 4.0);
  Buffer A("A", dtype::float32, {n}), B("B", t, {n}), C("C", dtype::float32, {n}), K("K", dtype::int32, {n}),
      D("D", t, {n}), E("E", dtype::int32, {n});
  bool integer = t.is_sub_byte_int();
  auto body_for = [&](Expr index) {
    std::vector<Stmt> s{Store::make(B, cast(t, Load::make(A, index)), index),
                        Store::make(C, cast(dtype::float32, Load::make(B, index)), index)};
    if (integer) {
      s.push_back(Store::make(D, cast(t, Load::make(K, index)), index));
      s.push_back(Store::make(E, cast(dtype::int32, Load::make(D, index)), index));
    }
    return Seq::make(s);
  };
  Var io("io"), tl("t");
  Stmt vec = For::make(io, 0, n / 4, ForKind::serial, body_for(Ramp::make(io * four, make_const(dtype::index, 1.0), 4)));
  Stmt tail = For::make(tl, n / 4 * 4, n % 4, ForKind::serial, body_for(tl));
  std::vector<Buffer> params{A, B, C};
  if (integer) params.insert(params.end(), {K, D, E});
  return {"convert_" + t.str(), params, {n}, Seq::make({vec, tail}), "test storage conversions of " + t.str()};
}

// Inputs that reach every rule: zeros, NaN, infinities, each format's largest value and the
// values just past it, subnormals and ties, and random magnitudes over float32's exponents.
inline std::vector<float> float_inputs() {
  std::vector<float> v = {0.0f, -0.0f, NAN, -NAN, INFINITY, -INFINITY, 1.0f, -1.0f, 448.0f, 464.0f, 465.0f, 480.0f,
                          240.0f, 248.0f, 57344.0f, 61440.0f, 61441.0f, 6.0f, 7.0f, -6.5f, 0.25f, 0.75f, 1.25f, 1.75f,
                          0.001953125f, 0.0009765625f, 0.00146484375f, 1.5258789e-05f, 7.6293945e-06f, 1e-30f,
                          1e-40f, 3e38f, 0.124f, 1.1f, 1.5f, 3.0f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  std::uniform_int_distribution<int> ex(-30, 20);
  for (int k = 0; k < 400; ++k) v.push_back((k % 2 ? -1.0f : 1.0f) * std::ldexp(mant(rng), ex(rng)));
  // Every code's value and the midpoints between neighbours (ties) of the 8-bit formats.
  for (DataType t : small_float_types())
    for (uint32_t c = 0; c < (1u << t.bits); ++c) {
      float a = storage_decode(t, c), b = storage_decode(t, c + 1 < (1u << t.bits) ? c + 1 : c);
      v.push_back(a);
      if (std::isfinite(a) && std::isfinite(b)) v.push_back(a + (b - a) / 2);
    }
  while (v.size() % 4 != 3) v.push_back(2.5f);  // a scalar tail too
  return v;
}

inline bool same_float(float a, float b) { return std::isnan(a) ? std::isnan(b) : std::memcmp(&a, &b, 4) == 0; }

// `run(kernel, views)` runs the compiled kernel on the arrays in parameter order.
inline void check_conversions(DataType t, const std::function<void(const LoweredFunc&, const std::vector<BufferView>&)>& run) {
  CAPTURE(t.str());
  std::vector<float> in = float_inputs();
  int64_t n = int64_t(in.size());
  NDArray A(dtype::float32, {n}), B(t, {n}), C(dtype::float32, {n}), K(dtype::int32, {n}), D(t, {n}), E(dtype::int32, {n});
  bool integer = t.is_sub_byte_int();
  for (int64_t i = 0; i < n; ++i) {
    // Float to integer is undefined in C for NaN and values past int64: keep the integer cases in range.
    float x = in[size_t(i)];
    A.data<float>()[i] = integer && !(std::abs(x) < 1e9f) ? float(i) - 200.5f : x;
    K.data<int32_t>()[i] = int32_t(i * 2654435761u);
  }
  LoweredFunc fn = convert_kernel(t);
  if (integer) run(fn, {A.view(), B.view(), C.view(), K.view(), D.view(), E.view()});
  else run(fn, {A.view(), B.view(), C.view()});
  auto wrap = [&](int64_t v) {  // the low bits, sign-extended for a signed type
    int64_t m = (int64_t(1) << t.bits) - 1, u = v & m;
    return t.is_int() && (u >> (t.bits - 1)) ? u - (m + 1) : u;
  };
  // The storage types' bytes (NDArray::data<T> wants T's own dtype).
  auto bytes = [](const NDArray& x) { return static_cast<const uint8_t*>(x.raw()); };
  int bad = 0;
  for (int64_t i = 0; i < n && bad < 10; ++i) {
    float a = A.data<float>()[i];
    uint8_t got = bytes(B)[i];
    if (integer) {
      int64_t want = wrap(int64_t(std::trunc(a)));
      int64_t got_value = t.is_int() ? int64_t(int8_t(got)) : int64_t(got);
      int64_t from_int = wrap(K.data<int32_t>()[i]);
      bool ok = got_value == want && C.data<float>()[i] == float(want) && int8_t(bytes(D)[i]) == int8_t(from_int) &&
                E.data<int32_t>()[i] == from_int;
      if (!ok) {
        ++bad;
        FAIL_CHECK(str_cat("element ", i, ": ", t, "(", a, ") = ", got_value, " (want ", want, "), float ", C.data<float>()[i],
                           "; from int32 ", K.data<int32_t>()[i], ": ", int(int8_t(bytes(D)[i])), " / ",
                           E.data<int32_t>()[i], " (want ", from_int, ")"));
      }
      continue;
    }
    uint32_t want = storage_encode(t, a);
    if (got != want || !same_float(C.data<float>()[i], storage_decode(t, got))) {
      ++bad;
      FAIL_CHECK(str_cat("element ", i, ": ", t, "(", a, ") = code ", unsigned(got), " (want ", want, "), back to float32 ",
                         C.data<float>()[i], " (want ", storage_decode(t, got), ")"));
    }
  }
}

}  // namespace storage_cases
