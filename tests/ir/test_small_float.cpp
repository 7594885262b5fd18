#include "support/pch.hpp"

#include <cmath>

#include "nnvm/ir/small_float.hpp"

namespace ir_small_float {

using namespace nnvm;

namespace {
// Values from the formats' definitions (OCP 8-bit floating point specification, ONNX's
// float8/float4 pages), written out by hand: code -> value.
struct Known {
  DataType type;
  uint32_t code;
  float value;  // NaN: the code is a NaN
};
const Known known[] = {
    {dtype::float8e4m3fn, 0x00, 0.0f},         {dtype::float8e4m3fn, 0x01, 0.001953125f},
    {dtype::float8e4m3fn, 0x07, 0.013671875f}, {dtype::float8e4m3fn, 0x08, 0.015625f},
    {dtype::float8e4m3fn, 0x38, 1.0f},         {dtype::float8e4m3fn, 0x3c, 1.5f},
    {dtype::float8e4m3fn, 0x7e, 448.0f},       {dtype::float8e4m3fn, 0x7f, NAN},
    {dtype::float8e4m3fn, 0xb8, -1.0f},        {dtype::float8e4m3fn, 0xfe, -448.0f},
    {dtype::float8e4m3fn, 0xff, NAN},          {dtype::float8e4m3fnuz, 0x40, 1.0f},
    {dtype::float8e4m3fnuz, 0x01, 0.0009765625f}, {dtype::float8e4m3fnuz, 0x7f, 240.0f},
    {dtype::float8e4m3fnuz, 0x80, NAN},        {dtype::float8e4m3fnuz, 0xc0, -1.0f},
    {dtype::float8e5m2, 0x3c, 1.0f},           {dtype::float8e5m2, 0x01, 1.52587890625e-05f},
    {dtype::float8e5m2, 0x04, 6.103515625e-05f}, {dtype::float8e5m2, 0x7b, 57344.0f},
    {dtype::float8e5m2, 0x7c, INFINITY},       {dtype::float8e5m2, 0xfc, -INFINITY},
    {dtype::float8e5m2, 0x7d, NAN},            {dtype::float8e5m2, 0x7f, NAN},
    {dtype::float8e5m2fnuz, 0x40, 1.0f},       {dtype::float8e5m2fnuz, 0x01, 7.62939453125e-06f},
    {dtype::float8e5m2fnuz, 0x7f, 57344.0f},   {dtype::float8e5m2fnuz, 0x80, NAN},
    {dtype::float4e2m1, 0x0, 0.0f},            {dtype::float4e2m1, 0x1, 0.5f},
    {dtype::float4e2m1, 0x2, 1.0f},            {dtype::float4e2m1, 0x3, 1.5f},
    {dtype::float4e2m1, 0x4, 2.0f},            {dtype::float4e2m1, 0x5, 3.0f},
    {dtype::float4e2m1, 0x6, 4.0f},            {dtype::float4e2m1, 0x7, 6.0f},
    {dtype::float4e2m1, 0xf, -6.0f},           {dtype::float8e8m0, 0x7f, 1.0f},
    {dtype::float8e8m0, 0x80, 2.0f},           {dtype::float8e8m0, 0x00, 5.877471754111438e-39f},
    {dtype::float8e8m0, 0xfe, 1.7014118346046923e38f}, {dtype::float8e8m0, 0xff, NAN},
};
}  // namespace

TEST_CASE("small floats: codes decode to the values the formats define, and encode back") {
  for (const Known& k : known) {
    CAPTURE(k.type.str());
    CAPTURE(k.code);
    float v = storage_decode(k.type, k.code);
    if (std::isnan(k.value)) {
      CHECK(std::isnan(v));
    } else {
      CHECK(v == k.value);
      CHECK(std::signbit(v) == std::signbit(k.value));
      CHECK(storage_encode(k.type, k.value) == k.code);
    }
  }
}

TEST_CASE("small floats: conversion rounds to nearest even, overflows as each format can") {
  for (DataType t : {dtype::float8e4m3fn, dtype::float8e4m3fnuz, dtype::float8e5m2, dtype::float8e5m2fnuz, dtype::float4e2m1}) {
    CAPTURE(t.str());
    const SmallFloatFormat& f = *small_float_format(t);
    // Between neighbouring finite codes: below the midpoint the lower, above it the upper, at it
    // the one with an even mantissa.
    for (uint32_t c = 0; c < f.max_mag; ++c) {
      float a = f.decode(c), b = f.decode(c + 1), mid = a + (b - a) / 2;
      CAPTURE(c);
      CHECK(f.encode(std::nextafter(mid, a)) == c);
      CHECK(f.encode(std::nextafter(mid, b)) == c + 1);
      CHECK(f.encode(mid) == (c % 2 == 0 ? c : c + 1));
      CHECK(f.encode(-std::nextafter(mid, b)) == (c + 1 | f.sign_bit()));
    }
    // Past the largest value: infinity (E5M2), NaN (FN/FNUZ) or the largest value (E2M1).
    float max = f.max_value(), over = 2 * max;
    uint32_t want = t == dtype::float8e5m2 ? 0x7cu : t == dtype::float4e2m1 ? 0x7u : t == dtype::float8e4m3fn ? 0x7fu : 0x80u;
    CHECK(f.encode(over) == want);
    CHECK(f.encode(INFINITY) == want);
    CHECK(std::isnan(f.decode(f.encode(NAN))) == (t != dtype::float4e2m1));
    // Below half the least subnormal: zero, with the sign where the format has -0.
    float least = f.decode(1);
    CHECK(f.encode(least / 2) == 0u);
    CHECK(f.encode(std::nextafter(least / 2, 1.0f)) == 1u);
    CHECK(f.encode(-least / 4) == (f.nan == SmallFloatFormat::Nan::neg_zero ? 0u : f.sign_bit()));
  }
  // E8M0: the nearest power of two, ties up; zero gives the least value; negatives are NaN.
  CHECK(storage_encode(dtype::float8e8m0, 1.4f) == 0x7fu);
  CHECK(storage_encode(dtype::float8e8m0, 1.5f) == 0x80u);
  CHECK(storage_encode(dtype::float8e8m0, 0.0f) == 0x00u);
  CHECK(storage_encode(dtype::float8e8m0, -2.0f) == 0xffu);
  CHECK(storage_encode(dtype::float8e8m0, INFINITY) == 0xffu);
}

TEST_CASE("small floats: constants of a storage type hold the rounded value") {
  ir::Expr c = ir::make_const(dtype::float8e4m3fn, 0.3);
  REQUIRE(c.as<ir::FloatImm>());
  CHECK(c.as<ir::FloatImm>()->value == 0.3125);  // 0.3 lies between 0.28125 and 0.3125, nearer the latter
  CHECK(ir::max_value(dtype::float8e5m2).as<ir::FloatImm>()->value == 57344.0);
  CHECK(dtype::float8e4m3fn.is_storage_only());
  CHECK(dtype::int4.is_storage_only());
  CHECK(parse_dtype("float8e5m2fnuz") == dtype::float8e5m2fnuz);
  CHECK(parse_dtype("uint2") == dtype::uint2);
}

}  // namespace ir_small_float
