// quantize_linear and dequantize_linear (include/nnvm/ops/quant/) against plain loops over every
// scale layout (per tensor, per axis, blocked), several integer and float types, round half to
// even, saturation and NaN; fake_quantize against the two loops in turn; then the error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <functional>

namespace ops_quant_ops {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;

void put(NDArray& a, int64_t i, double v) {
  DataType t = a.dtype();
  if (t == dtype::float32) a.data<float>()[i] = float(v);
  else if (t == dtype::float64) a.data<double>()[i] = v;
  else if (t == dtype::float16) a.values<float16>()[i] = float16(float(v));
  else if (t == dtype::int8) a.data<int8_t>()[i] = int8_t(v);
  else if (t == dtype::uint8) a.data<uint8_t>()[i] = uint8_t(v);
  else if (t == dtype::int16) a.data<int16_t>()[i] = int16_t(v);
  else if (t == dtype::uint16) a.data<uint16_t>()[i] = uint16_t(v);
  else if (t == dtype::int32) a.data<int32_t>()[i] = int32_t(v);
  else throw std::runtime_error("put: no writer for " + t.str());
}
double get(const NDArray& a, int64_t i) { return nnvm_test::detail::element(a, i); }

NDArray make(DataType t, Dims s, const std::function<double(int64_t)>& f) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) put(a, i, f(i));
  return a;
}

// The flat index into a scale/zero point of shape `ps` that applies to element `i` of X (shape
// `xs`): the three ONNX layouts, written out.
int64_t param_index(const Dims& xs, const Dims& ps, int64_t i, int64_t axis, int64_t block) {
  int64_t n = 1;
  for (int64_t e : ps) n *= e;
  if (n == 1) return 0;
  if (axis < 0) axis += int64_t(xs.size());
  Dims idx(xs.size());
  for (size_t d = xs.size(); d-- > 0;) idx[d] = i % xs[d], i /= xs[d];
  if (block == 0) return idx[size_t(axis)];
  idx[size_t(axis)] /= block;
  int64_t flat = 0;
  for (size_t d = 0; d < ps.size(); ++d) flat = flat * ps[d] + idx[d];
  return flat;
}

struct Layout {
  int64_t axis = 1, block = 0;
};

NDArray dequantize(const NDArray& x, const NDArray& s, const NDArray* zp, Layout l, DataType out) {
  bool f64 = s.dtype() == dtype::float64 || out == dtype::float64;
  return make(out, x.shape(), [&](int64_t i) {
    int64_t p = param_index(x.shape(), s.shape(), i, l.axis, l.block);
    double q = get(x, i) - (zp ? get(*zp, p) : 0);
    return f64 ? q * get(s, p) : double(float(q) * float(get(s, p)));
  });
}

double round_to_half(double v) { return double(float(float16(float(v)))); }

NDArray quantize(const NDArray& x, const NDArray& s, const NDArray* zp, Layout l, DataType out, bool half_precision = false) {
  bool f64 = x.dtype() == dtype::float64 || s.dtype() == dtype::float64;
  double lo = out == dtype::int8 ? -128 : out == dtype::int16 ? -32768 : 0;
  double hi = out == dtype::int8 ? 127 : out == dtype::uint8 ? 255 : out == dtype::int16 ? 32767 : 65535;
  return make(out, x.shape(), [&](int64_t i) {
    int64_t p = param_index(x.shape(), s.shape(), i, l.axis, l.block);
    double q = half_precision ? round_to_half(round_to_half(get(x, i)) / round_to_half(get(s, p)))
               : f64          ? get(x, i) / get(s, p)
                              : double(float(get(x, i)) / float(get(s, p)));
    if (std::isnan(q)) return lo;
    q = std::nearbyint(q) + (zp ? get(*zp, p) : 0);
    return std::clamp(q, lo, hi);
  });
}

const DataType f32 = dtype::float32;

}  // namespace

TEST_CASE("quant ops: dequantize_linear") {
  std::vector<OpCheck> cases;
  auto none = std::nullopt;
  auto codes = [](int64_t i) { return double((i * 37) % 256); };
  {
    NDArray x = make(dtype::uint8, {3, 5, 7}, codes);
    NDArray s = make(f32, {}, [](int64_t) { return 0.37; }), zp = make(dtype::uint8, {}, [](int64_t) { return 128; });
    cases.push_back({"per tensor uint8 rank-0 scale", "dequantize_linear", {x, s, zp}, {},
                     {dequantize(x, s, &zp, {}, f32)}});
  }
  {
    NDArray x = make(dtype::int8, {3, 5, 7}, [&](int64_t i) { return codes(i) - 128; });
    NDArray s = make(f32, {5}, [](int64_t i) { return 0.1 + 0.05 * double(i); });
    NDArray zp = make(dtype::int8, {5}, [](int64_t i) { return double(i * 7 - 12); });
    cases.push_back({"per axis int8 axis -2", "dequantize_linear", {x, s, zp}, ops::Attrs().set_int("axis", -2),
                     {dequantize(x, s, &zp, {-2, 0}, f32)}});
  }
  {
    NDArray x = make(dtype::int16, {2, 3, 7}, [](int64_t i) { return double((i * 811) % 20000 - 10000); });
    NDArray s = make(f32, {2, 3, 3}, [](int64_t i) { return 0.01 * double(i + 1); });
    NDArray zp = make(dtype::int16, {2, 3, 3}, [](int64_t i) { return double(i * 100 - 900); });
    cases.push_back({"blocked int16 axis 2 block 3 (short last block)", "dequantize_linear", {x, s, zp},
                     ops::Attrs().set_int("axis", 2).set_int("block_size", 3), {dequantize(x, s, &zp, {2, 3}, f32)}});
  }
  {
    NDArray x = make(dtype::int32, {4, 3}, [](int64_t i) { return double(i * 123457 - 700000); });
    NDArray s = make(dtype::float64, {1}, [](int64_t) { return 1e-3; });
    cases.push_back({"int32 no zero point float64 scale of one element", "dequantize_linear", {x, s}, {},
                     {dequantize(x, s, nullptr, {}, dtype::float64)}});
  }
  {
    NDArray x = make(dtype::uint16, {3, 4}, [](int64_t i) { return double((i * 5003) % 65536); });
    NDArray s = make(f32, {3}, [](int64_t i) { return 1e-4 * double(i + 1); });
    NDArray zp = make(dtype::uint16, {3}, [](int64_t i) { return double(30000 + i); });
    cases.push_back({"uint16 per axis 0 output_dtype float16", "dequantize_linear", {x, s, zp},
                     ops::Attrs().set_int("axis", 0).set_dtype("output_dtype", dtype::float16),
                     {dequantize(x, s, &zp, {0, 0}, dtype::float16)}, 1e-3, 1e-3});
  }
  {
    NDArray x = make(dtype::uint8, {5}, codes);
    NDArray s = make(dtype::float16, {}, [](int64_t) { return 0.25; });
    cases.push_back({"float16 scale gives float16, zero point left out", "dequantize_linear", {x, s, none}, {},
                     {dequantize(x, s, nullptr, {}, dtype::float16)}, 1e-3, 1e-3});
  }
  nnvm_test::check_ops(cases, "dequantize_linear");
}

TEST_CASE("quant ops: quantize_linear") {
  std::vector<OpCheck> cases;
  // Multiples of a quarter: with scale 0.5 every other quotient is a tie (x.5).
  auto quarters = [](int64_t i) { return double((i * 29) % 83 - 41) * 0.25; };
  {
    NDArray x = make(f32, {3, 5, 7}, [&](int64_t i) { return quarters(i) * (i % 11 == 0 ? 300 : 1); });
    NDArray s = make(f32, {}, [](int64_t) { return 0.5; }), zp = make(dtype::uint8, {}, [](int64_t) { return 100; });
    cases.push_back({"per tensor uint8 ties to even, saturating", "quantize_linear", {x, s, zp}, {},
                     {quantize(x, s, &zp, {}, dtype::uint8)}});
  }
  {
    NDArray x = make(f32, {3, 5, 7}, [&](int64_t i) { return quarters(i) * 7; });
    NDArray s = make(f32, {7}, [](int64_t i) { return 0.05 + 0.1 * double(i); });
    cases.push_back({"per axis -1 output_dtype int8, no zero point", "quantize_linear", {x, s},
                     ops::Attrs().set_int("axis", -1).set_dtype("output_dtype", dtype::int8),
                     {quantize(x, s, nullptr, {-1, 0}, dtype::int8)}});
  }
  {
    NDArray x = make(f32, {5, 3}, [&](int64_t i) { return quarters(i) * 900; });
    NDArray s = make(f32, {3, 3}, [](int64_t i) { return 0.5 + double(i); });
    NDArray zp = make(dtype::int16, {3, 3}, [](int64_t i) { return double(i * 1000 - 4000); });
    cases.push_back({"blocked int16 axis 0 block 2", "quantize_linear", {x, s, zp},
                     ops::Attrs().set_int("axis", 0).set_int("block_size", 2), {quantize(x, s, &zp, {0, 2}, dtype::int16)}});
  }
  {
    NDArray x = make(dtype::float64, {2, 3, 4}, [&](int64_t i) { return quarters(i) * 3001 + 1e-9; });
    NDArray s = make(dtype::float64, {3}, [](int64_t i) { return 0.5 * double(i + 1); });
    NDArray zp = make(dtype::uint16, {3}, [](int64_t i) { return double(20000 * i); });
    cases.push_back({"float64 per axis 1 uint16", "quantize_linear", {x, s, zp}, {},
                     {quantize(x, s, &zp, {1, 0}, dtype::uint16)}});
  }
  {
    NDArray x = make(dtype::float16, {4, 5}, [&](int64_t i) { return quarters(i) * 20; });
    NDArray s = make(dtype::float16, {}, [](int64_t) { return 0.75; });
    cases.push_back({"float16 input, default uint8", "quantize_linear", {x, s}, {},
                     {quantize(x, s, nullptr, {}, dtype::uint8)}});
  }
  {
    NDArray x = make(f32, {6}, [](int64_t i) { return i == 2 ? NAN : i == 4 ? INFINITY : i == 5 ? -INFINITY : double(i) * 1.3; });
    NDArray s = make(f32, {}, [](int64_t) { return 0.1; }), zp = make(dtype::int8, {}, [](int64_t) { return 3; });
    cases.push_back({"NaN and infinities", "quantize_linear", {x, s, zp}, {}, {quantize(x, s, &zp, {}, dtype::int8)}});
  }
  {
    NDArray x = make(f32, {3, 7}, [&](int64_t i) { return quarters(i) * 1.37; });
    NDArray s = make(f32, {}, [](int64_t) { return 0.1; });
    cases.push_back({"precision float16", "quantize_linear", {x, s}, ops::Attrs().set_dtype("precision", dtype::float16).set_int("saturate", 0),
                     {quantize(x, s, nullptr, {}, dtype::uint8, true)}});
  }
  nnvm_test::check_ops(cases, "quantize_linear");
}

TEST_CASE("quant ops: fake_quantize is dequantize_linear after quantize_linear") {
  std::vector<OpCheck> cases;
  NDArray x = make(f32, {2, 3, 4, 5}, [](int64_t i) {
    return i == 7 ? NAN : double((i * 37) % 97 - 48) * 0.13 + (i % 13 == 0 ? 1e3 : 0) - (i % 17 == 0 ? 1e3 : 0);
  });
  auto one = [](DataType t, double v, Dims shape) { return make(t, std::move(shape), [v](int64_t) { return v; }); };
  for (auto [t, zp_in, zp_out] : {std::tuple{dtype::uint8, 128.0, 120.0}, {dtype::int8, -3.0, 0.0}, {dtype::int16, 700.0, -9.0}}) {
    // Different scales and zero points on the two sides: each is read from its own input.
    NDArray ys = one(f32, 0.07, {}), yz = one(t, zp_in, {1}), xs = one(f32, 0.11, {1}), xz = one(t, zp_out, {});
    NDArray want = dequantize(quantize(x, ys, &yz, {}, t), xs, &xz, {}, f32);
    cases.push_back({"per tensor " + t.str(), "fake_quantize", {x, ys, yz, xs, xz}, {}, {want}});
  }
  nnvm_test::check_ops(cases, "fake_quantize");
  using T = ops::TensorType;
  T xt(f32, {3, 4}), s(f32, Dims{}), z(dtype::uint8, Dims{});
  CHECK(infer_error("fake_quantize", {xt, s, z, s, z}) == "(no error)");
  CHECK(infer_error("fake_quantize", {xt, T(f32, {4}), z, s, z}) == "nnvm.ops.input_shape");
  CHECK(infer_error("fake_quantize", {T(dtype::float64, {3, 4}), s, z, s, z}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("fake_quantize", {xt, s, T(dtype::int32, Dims{}), s, T(dtype::int32, Dims{})}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("fake_quantize", {xt, s, z, s, T(dtype::int8, Dims{})}) == "nnvm.ops.input_dtype");
}

TEST_CASE("quant ops: errors") {
  using T = ops::TensorType;
  T x(dtype::uint8, {3, 4}), xf(f32, {3, 4}), s(f32, Dims{}), s4(f32, {4});
  CHECK(infer_error("dequantize_linear", {xf, s}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("dequantize_linear", {x, T(dtype::int32, Dims{})}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("dequantize_linear", {x, s, T(dtype::int8, Dims{})}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("dequantize_linear", {x, s4}) == "(no error)");  // axis 1 has extent 4
  CHECK(infer_error("dequantize_linear", {x, s4}, ops::Attrs().set_int("axis", 0)) == "nnvm.ops.input_shape");
  CHECK(infer_error("dequantize_linear", {x, s4}, ops::Attrs().set_int("axis", 2)) == "nnvm.ops.attr");
  CHECK(infer_error("dequantize_linear", {x, T(f32, {3, 3})}, ops::Attrs().set_int("block_size", 2)) == "nnvm.ops.input_shape");
  CHECK(infer_error("dequantize_linear", {x, T(f32, {3, 2})}, ops::Attrs().set_int("block_size", 2)) == "(no error)");
  CHECK(infer_error("dequantize_linear", {x, s}, ops::Attrs().set_int("block_size", -1)) == "nnvm.ops.attr");
  CHECK(infer_error("dequantize_linear", {x, s}, ops::Attrs().set_dtype("output_dtype", dtype::int32)) == "nnvm.ops.attr");
  CHECK(infer_error("quantize_linear", {x, s}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("quantize_linear", {xf, s}, ops::Attrs().set_string("output_dtype", "float8e4m3")) == "nnvm.ops.attr");  // no such type
  CHECK(infer_error("quantize_linear", {xf, s}, ops::Attrs().set_dtype("output_dtype", dtype::int32)) == "nnvm.ops.attr");   // int32
  CHECK(infer_error("quantize_linear", {xf, s, T(dtype::uint8, Dims{})}, ops::Attrs().set_dtype("output_dtype", dtype::int8)) ==
        "nnvm.ops.attr");
  CHECK(infer_error("quantize_linear", {xf, s, T(dtype::int32, Dims{})}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("quantize_linear", {xf, T(f32, {2})}) == "nnvm.ops.input_shape");
  auto out = ops::infer_types(ops::get_op("quantize_linear"), {xf, s4, T(dtype::int16, {4})});
  CHECK(out[0].dtype == dtype::int16);
  auto deq = ops::infer_types(ops::get_op("dequantize_linear"), {x, T(dtype::float16, Dims{})});
  CHECK(deq[0].dtype == dtype::float16);
}

}  // namespace ops_quant_ops
