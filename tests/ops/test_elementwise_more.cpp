// The ONNX elementwise and broadcast ops beyond the basic arithmetic: activations, trigonometry,
// rounding, classification, logic, bitwise ops, comparisons, Mod, PRelu, Where, the variadic
// folds, Dropout/Identity, and integer arithmetic. Each through the interpreter, the C JIT (and
// LLVM when built) against plain loops, on odd shapes and several dtypes; errors by id.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <limits>
#include <random>

namespace ops_elementwise_more {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;

// Uniform values in [lo, hi): integers are floored, bools are "value > 0".
template <class T>
NDArray make(Dims s, uint32_t seed, double lo, double hi) {
  NDArray a(dtype_v<T>, std::move(s));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  for (auto& v : a.values<T>()) {
    double x = d(rng);
    if constexpr (std::is_same_v<T, bool>)
      v = x > 0;
    else if constexpr (std::is_integral_v<T>)
      v = T(std::floor(x));
    else
      v = T(x);
  }
  return a;
}

Dims broadcast(Dims a, const Dims& b) {
  if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
  for (size_t k = 0; k < b.size(); ++k) {
    int64_t& e = a[a.size() - b.size() + k];
    if (e == 1) e = b[k];
  }
  return a;
}

// The flat offset in an input of shape `in` that output element `flat` of shape `out` reads.
size_t offset(const Dims& in, const Dims& out, size_t flat) {
  std::vector<int64_t> idx(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    idx[d] = int64_t(flat) % out[d];
    flat /= size_t(out[d]);
  }
  size_t off = 0, skip = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) off = off * size_t(in[d]) + size_t(in[d] == 1 ? 0 : idx[skip + d]);
  return off;
}

// want[i] = f(offsets of element i in each input), over the inputs' broadcast shape.
template <class O, class F>
NDArray bmap(const std::vector<const NDArray*>& ins, F f) {
  Dims out;
  for (auto* a : ins) out = broadcast(out, a->shape());
  NDArray r(dtype_v<O>, out);
  auto rv = r.values<O>();
  std::vector<size_t> off(ins.size());
  for (size_t i = 0; i < rv.size(); ++i) {
    for (size_t k = 0; k < ins.size(); ++k) off[k] = offset(ins[k]->shape(), out, i);
    rv[i] = f(off);
  }
  return r;
}
template <class O, class A, class F>
NDArray map1(const NDArray& a, F f) {
  return bmap<O>({&a}, [&](const std::vector<size_t>& o) { return O(f(a.values<A>()[o[0]])); });
}
template <class O, class A, class B = A, class F>
NDArray map2(const NDArray& a, const NDArray& b, F f) {
  return bmap<O>({&a, &b},
                 [&](const std::vector<size_t>& o) { return O(f(a.values<A>()[o[0]], b.values<B>()[o[1]])); });
}

// Python's remainder: the sign of the divisor.
template <class T>
T py_mod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>)
      if (b == -1) return 0;  // INT_MIN % -1 would trap
    T r = T(a % b);
    if constexpr (std::is_signed_v<T>) return r != 0 && ((r < 0) != (b < 0)) ? T(r + b) : r;
    return r;
  }
}

template <class T>
T shift(T x, T y, bool left) {
  using U = std::make_unsigned_t<T>;
  constexpr uint64_t bits = sizeof(T) * 8;
  if (uint64_t(y) >= bits) return (!left && std::is_signed_v<T> && x < 0) ? T(-1) : T(0);
  return left ? T(U(U(x) << y)) : T(x >> y);
}

}  // namespace

TEST_CASE("more unary float ops: activations, trigonometry, rounding, classification") {
  const Dims s{3, 5, 7};
  uint32_t seed = 900;
  std::vector<OpCheck> cases;
  auto unary = [&](std::string op, ops::Attrs attrs, double lo, double hi, auto ref) {
    NDArray x = make<float>(s, seed++, lo, hi);
    NDArray want = map1<float, float>(x, [&](float v) { return float(ref(double(v))); });
    cases.push_back(OpCheck{op + " " + std::to_string(cases.size()), op, {x}, attrs, {want}});
  };
  const double selu_a = 1.67326319217681884765625, selu_g = 1.05070102214813232421875;
  unary("elu", {}, -3, 3, [](double x) { return x > 0 ? x : std::exp(x) - 1; });
  unary("elu", ops::Attrs().set_float("alpha", 0.5), -3, 3,
        [](double x) { return x > 0 ? x : 0.5 * (std::exp(x) - 1); });
  unary("selu", {}, -3, 3, [&](double x) { return selu_g * (x > 0 ? x : selu_a * (std::exp(x) - 1)); });
  unary("selu", ops::Attrs().set_float("alpha", 2).set_float("gamma", 3), -3, 3,
        [](double x) { return 3 * (x > 0 ? x : 2 * (std::exp(x) - 1)); });
  unary("celu", ops::Attrs().set_float("alpha", 2), -4, 4,
        [](double x) { return std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)); });
  unary("hard_swish", {}, -5, 5, [](double x) { return x * std::max(0.0, std::min(1.0, x / 6 + 0.5)); });
  unary("softsign", {}, -5, 5, [](double x) { return x / (1 + std::fabs(x)); });
  unary("mish", {}, -30, 30, [](double x) { return x * std::tanh(std::log1p(std::exp(x))); });
  unary("swish", {}, -30, 30, [](double x) { return x / (1 + std::exp(-x)); });
  unary("swish", ops::Attrs().set_float("alpha", 0.5), -30, 30, [](double x) { return x / (1 + std::exp(-0.5 * x)); });
  unary("thresholded_relu", {}, -3, 3, [](double x) { return x > 1 ? x : 0; });
  unary("thresholded_relu", ops::Attrs().set_float("alpha", -0.5), -3, 3, [](double x) { return x > -0.5 ? x : 0; });
  unary("shrink", {}, -2, 2, [](double x) { return x < -0.5 ? x : x > 0.5 ? x : 0; });
  unary("shrink", ops::Attrs().set_float("bias", 1.5).set_float("lambd", 1), -3, 3, [](double x) {
    return x < -1 ? x + 1.5 : x > 1 ? x - 1.5 : 0;
  });
  unary("sign", {}, -2, 2, [](double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; });
  unary("tan", {}, -1.4, 1.4, [](double x) { return std::tan(x); });
  unary("asin", {}, -0.99, 0.99, [](double x) { return std::asin(x); });
  unary("acos", {}, -0.99, 0.99, [](double x) { return std::acos(x); });
  unary("atan", {}, -5, 5, [](double x) { return std::atan(x); });
  unary("sinh", {}, -3, 3, [](double x) { return std::sinh(x); });
  unary("cosh", {}, -3, 3, [](double x) { return std::cosh(x); });
  unary("asinh", {}, -5, 5, [](double x) { return std::asinh(x); });
  unary("acosh", {}, 1, 5, [](double x) { return std::acosh(x); });
  unary("atanh", {}, -0.95, 0.95, [](double x) { return std::atanh(x); });
  unary("identity", {}, -3, 3, [](double x) { return x; });
  {
    // Round: halves tie to even, so the inputs are multiples of 1/4 (exact in float).
    NDArray x = make<float>(s, seed++, -12, 12);
    for (auto& v : x.values<float>()) v = std::floor(v) / 4;
    NDArray want = map1<float, float>(x, [](float v) {
      float f = std::floor(v), d = v - f;
      return d > 0.5f || (d == 0.5f && std::fmod(f, 2.0f) != 0) ? f + 1 : f;
    });
    cases.push_back(OpCheck{"round ties to even", "round", {x}, {}, {want}});
  }
  {
    NDArray x = make<double>({4, 9}, seed++, -3, 3);
    cases.push_back(OpCheck{"elu float64",
                            "elu",
                            {x},
                            {},
                            {map1<double, double>(x, [](double v) { return v > 0 ? v : std::expm1(v); })},
                            1e-9,
                            1e-12});
    NDArray y = make<double>({4, 9}, seed++, -1.4, 1.4);
    cases.push_back(OpCheck{
        "tan float64", "tan", {y}, {}, {map1<double, double>(y, [](double v) { return std::tan(v); })}, 1e-9, 1e-12});
  }
  {
    // NaN and both infinities among ordinary values.
    NDArray x = make<float>({5, 7}, seed++, -3, 3);
    auto v = x.values<float>();
    for (size_t i = 0; i < v.size(); i += 3) v[i] = i % 9 == 0 ? NAN : i % 9 == 3 ? INFINITY : -INFINITY;
    cases.push_back(OpCheck{"isnan", "isnan", {x}, {}, {map1<bool, float>(x, [](float e) { return std::isnan(e); })}});
    cases.push_back(OpCheck{"isinf", "isinf", {x}, {}, {map1<bool, float>(x, [](float e) { return std::isinf(e); })}});
    cases.push_back(OpCheck{"isinf positive only",
                            "isinf",
                            {x},
                            ops::Attrs().set_int("detect_negative", 0),
                            {map1<bool, float>(x, [](float e) { return e == INFINITY; })}});
    cases.push_back(OpCheck{"isinf negative only",
                            "isinf",
                            {x},
                            ops::Attrs().set_int("detect_positive", 0),
                            {map1<bool, float>(x, [](float e) { return e == -INFINITY; })}});
    cases.push_back(OpCheck{"sign keeps NaN", "sign", {x}, {}, {map1<float, float>(x, [](float e) {
                              return std::isnan(e) ? e : e > 0 ? 1.f : e < 0 ? -1.f : 0.f;
                            })}});
    NDArray h(dtype::float16, {5, 7});
    for (size_t i = 0; i < v.size(); ++i) h.values<float16>()[i] = float16(v[i]);
    cases.push_back(
        OpCheck{"isinf float16", "isinf", {h}, {}, {map1<bool, float>(x, [](float e) { return std::isinf(e); })}});
  }
  nnvm_test::check_ops(cases, "unary_more");

  for (auto& [onnx, name] :
       std::vector<std::pair<std::string, std::string>>{{"onnx:Elu", "elu"},
                                                        {"onnx:Selu", "selu"},
                                                        {"onnx:Celu", "celu"},
                                                        {"onnx:HardSwish", "hard_swish"},
                                                        {"onnx:Softsign", "softsign"},
                                                        {"onnx:Mish", "mish"},
                                                        {"onnx:Swish", "swish"},
                                                        {"onnx:ThresholdedRelu", "thresholded_relu"},
                                                        {"onnx:Shrink", "shrink"},
                                                        {"onnx:Round", "round"},
                                                        {"onnx:IsNaN", "isnan"},
                                                        {"onnx:IsInf", "isinf"},
                                                        {"onnx:Acosh", "acosh"},
                                                        {"onnx:Sign", "sign"},
                                                        {"onnx:Identity", "identity"},
                                                        {"onnx:Dropout", "dropout"},
                                                        {"onnx:Not", "not"},
                                                        {"onnx:BitwiseNot", "bitwise_not"}})
    CHECK(ops::get_op_by_importer_name(onnx).name == name);
}

TEST_CASE("unary ops on integers and bools; Dropout and Identity; dtype and attribute errors") {
  uint32_t seed = 1000;
  std::vector<OpCheck> cases;
  {
    NDArray a = make<int32_t>({3, 5, 7}, seed++, -9, 9), b = make<int8_t>({6, 5}, seed++, -128, 128),
            c = make<uint8_t>({5, 3}, seed++, 0, 4), d = make<int64_t>({7}, seed++, -1e12, 1e12);
    cases.push_back(OpCheck{
        "sign int32", "sign", {a}, {}, {map1<int32_t, int32_t>(a, [](int32_t x) { return (x > 0) - (x < 0); })}});
    cases.push_back(
        OpCheck{"sign uint8", "sign", {c}, {}, {map1<uint8_t, uint8_t>(c, [](uint8_t x) { return x > 0; })}});
    cases.push_back(OpCheck{
        "abs int8", "abs", {b}, {}, {map1<int8_t, int8_t>(b, [](int8_t x) { return int8_t(x < 0 ? -x : x); })}});
    cases.push_back(OpCheck{"abs uint8", "abs", {c}, {}, {c}});
    cases.push_back(OpCheck{"neg int64", "neg", {d}, {}, {map1<int64_t, int64_t>(d, [](int64_t x) { return -x; })}});
    cases.push_back(OpCheck{"shrink int32",
                            "shrink",
                            {a},
                            ops::Attrs().set_float("bias", 1.5).set_float("lambd", 2.5),
                            {map1<int32_t, int32_t>(a, [](int32_t x) {
                              return int32_t(x < -2.5 ? x + 1.5 : x > 2.5 ? x - 1.5 : 0.0);
                            })}});
    cases.push_back(OpCheck{
        "bitwise_not int8", "bitwise_not", {b}, {}, {map1<int8_t, int8_t>(b, [](int8_t x) { return int8_t(~x); })}});
    cases.push_back(OpCheck{"bitwise_not uint8", "bitwise_not", {c}, {}, {map1<uint8_t, uint8_t>(c, [](uint8_t x) {
                              return uint8_t(~x);
                            })}});
    NDArray u = make<uint16_t>({3, 11}, seed++, 0, 65536);
    cases.push_back(OpCheck{"bitwise_not uint16", "bitwise_not", {u}, {}, {map1<uint16_t, uint16_t>(u, [](uint16_t x) {
                              return uint16_t(~x);
                            })}});
    cases.push_back(OpCheck{
        "bitwise_not int64", "bitwise_not", {d}, {}, {map1<int64_t, int64_t>(d, [](int64_t x) { return ~x; })}});
    cases.push_back(OpCheck{"identity int64", "identity", {d}, {}, {d}});
  }
  {
    NDArray p = make<bool>({3, 1, 7}, seed++, -1, 1);
    cases.push_back(OpCheck{"not", "not", {p}, {}, {map1<bool, bool>(p, [](bool x) { return !x; })}});
    cases.push_back(OpCheck{"identity bool", "identity", {p}, {}, {p}});
  }
  {
    NDArray x = make<float>({3, 4, 5}, seed++, -2, 2);
    NDArray all_true = map1<bool, float>(x, [](float) { return true; });
    NDArray ratio = NDArray::from<float>({0.25f}, {}), off = NDArray::from<bool>({false}, {});
    cases.push_back(OpCheck{"dropout", "dropout", {x}, {}, {x, all_true}});
    cases.push_back(OpCheck{"dropout ratio, training_mode false", "dropout", {x, ratio, off}, {}, {x, all_true}});
    cases.push_back(OpCheck{"dropout without ratio", "dropout", {x, std::nullopt, off}, {}, {x, all_true}});
    NDArray zero = NDArray::from<float>({0.0f}, {}), on = NDArray::from<bool>({true}, {});
    cases.push_back(OpCheck{"dropout training, ratio 0", "dropout", {x, zero, on}, {}, {x, all_true}});
  }
  nnvm_test::check_ops(cases, "unary_int");

  ops::TensorType f32{dtype::float32, {4}}, i32{dtype::int32, {4}}, b8{dtype::boolean, {4}};
  CHECK(infer_error("dropout", {f32, {dtype::float32, {}}, {dtype::boolean, {}}},
                    ops::Attrs().set_ints("training_mode", {1})) == "nnvm.ops.attr");  // default ratio 0.5
  CHECK(infer_error("dropout", {f32, {dtype::float32, {}}, {dtype::boolean, {}}},
                    ops::Attrs().set_ints("training_mode", {1}).set_floats("ratio", {0.25})) == "nnvm.ops.attr");
  CHECK(infer_error("not", {f32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("bitwise_not", {f32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("bitwise_not", {b8}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("isnan", {i32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("sign", {b8}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("elu", {i32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("celu", {f32}, ops::Attrs().set_float("alpha", 0)) == "nnvm.ops.attr");
  CHECK(infer_error("isinf", {f32}, ops::Attrs().set_string("detect_positive", "yes")) == "nnvm.ops.attr");
  auto mask = ops::infer_types(ops::get_op("dropout"), {{dtype::float16, {2, 3}}});
  REQUIRE(mask.size() == 2);
  CHECK(mask[0].dtype == dtype::float16);
  CHECK(mask[1].dtype == dtype::boolean);
}

TEST_CASE("integer arithmetic, Mod, Pow with mixed dtypes") {
  uint32_t seed = 1100;
  std::vector<OpCheck> cases;
  {
    // Divisors include 0 and -1 (defined as 0 and negation) and the most negative dividend.
    NDArray a = make<int32_t>({3, 5, 7}, seed++, -50, 50), b = make<int32_t>({5, 1}, seed++, -4, 4);
    a.values<int32_t>()[0] = std::numeric_limits<int32_t>::min();
    b.values<int32_t>()[0] = -1;
    b.values<int32_t>()[1] = 0;
    auto div = [](int32_t x, int32_t y) { return y == 0 ? 0 : y == -1 ? int32_t(0u - uint32_t(x)) : x / y; };
    cases.push_back(OpCheck{"div int32", "div", {a, b}, {}, {map2<int32_t, int32_t>(a, b, div)}});
    cases.push_back(OpCheck{"mod int32", "mod", {a, b}, {}, {map2<int32_t, int32_t>(a, b, py_mod<int32_t>)}});
    cases.push_back(
        OpCheck{"mod int32 fmod",
                "mod",
                {a, b},
                ops::Attrs().set_int("fmod", 1),
                {map2<int32_t, int32_t>(a, b, [](int32_t x, int32_t y) { return y == 0 || y == -1 ? 0 : x % y; })}});
  }
  {
    NDArray a = make<int8_t>({6, 7}, seed++, -128, 128), b = make<int8_t>({7}, seed++, -9, 9);
    b.values<int8_t>()[0] = 0;
    cases.push_back(OpCheck{"mod int8", "mod", {a, b}, {}, {map2<int8_t, int8_t>(a, b, py_mod<int8_t>)}});
    cases.push_back(OpCheck{"div int8", "div", {a, b}, {}, {map2<int8_t, int8_t>(a, b, [](int8_t x, int8_t y) {
                              return y == 0 ? 0 : int8_t(x / y);
                            })}});
    cases.push_back(OpCheck{"add int8 wraps", "add", {a, a}, {}, {map2<int8_t, int8_t>(a, a, [](int8_t x, int8_t y) {
                              return int8_t(x + y);
                            })}});
    cases.push_back(OpCheck{
        "sub int8", "sub", {a, b}, {}, {map2<int8_t, int8_t>(a, b, [](int8_t x, int8_t y) { return int8_t(x - y); })}});
  }
  {
    NDArray a = make<uint16_t>({5, 3}, seed++, 0, 65536), b = make<uint16_t>({1, 3}, seed++, 1, 300);
    cases.push_back(OpCheck{"mod uint16", "mod", {a, b}, {}, {map2<uint16_t, uint16_t>(a, b, py_mod<uint16_t>)}});
    cases.push_back(
        OpCheck{"mul uint16 wraps", "mul", {a, a}, {}, {map2<uint16_t, uint16_t>(a, a, [](uint16_t x, uint16_t y) {
                  return uint16_t(uint32_t(x) * y);
                })}});
    cases.push_back(
        OpCheck{"div uint16", "div", {a, b}, {}, {map2<uint16_t, uint16_t>(a, b, [](uint16_t x, uint16_t y) {
                  return x / y;
                })}});
    NDArray c = make<uint64_t>({9}, seed++, 0, 1.8e19), d = make<uint64_t>({2, 9}, seed++, 0, 1.8e19);
    cases.push_back(
        OpCheck{"add uint64 wraps", "add", {c, d}, {}, {map2<uint64_t, uint64_t>(c, d, [](uint64_t x, uint64_t y) {
                  return x + y;
                })}});
    NDArray e = make<int64_t>({4, 5}, seed++, -1e15, 1e15), f = make<int64_t>({4, 1}, seed++, -1e6, 1e6);
    cases.push_back(OpCheck{"mul int64", "mul", {e, f}, {}, {map2<int64_t, int64_t>(e, f, [](int64_t x, int64_t y) {
                              return int64_t(uint64_t(x) * uint64_t(y));
                            })}});
    cases.push_back(OpCheck{"mod int64", "mod", {e, f}, {}, {map2<int64_t, int64_t>(e, f, py_mod<int64_t>)}});
  }
  {
    NDArray a = make<float>({3, 5, 7}, seed++, -10, 10), b = make<float>({5, 7}, seed++, -4, 4);
    cases.push_back(OpCheck{"mod float32 fmod",
                            "mod",
                            {a, b},
                            ops::Attrs().set_int("fmod", 1),
                            {map2<float, float>(a, b, [](float x, float y) { return std::fmod(x, y); })}});
    NDArray c = make<double>({4, 6}, seed++, -10, 10), d = make<double>({6}, seed++, -4, 4);
    cases.push_back(
        OpCheck{"mod float64 python", "mod", {c, d}, {}, {map2<double, double>(c, d, py_mod<double>)}, 1e-9, 1e-12});
  }
  {
    NDArray base = make<float>({3, 5}, seed++, 0.5, 3), ei = make<int32_t>({5}, seed++, -3, 4);
    cases.push_back(OpCheck{
        "pow float32 ^ int32", "pow", {base, ei}, {}, {map2<float, float, int32_t>(base, ei, [](float x, int32_t y) {
          return std::pow(x, float(y));
        })}});
    NDArray ib = make<int32_t>({4, 3}, seed++, -5, 6), fe = make<float>({3}, seed++, 0, 4);
    for (auto& v : fe.values<float>()) v = std::floor(v);
    cases.push_back(OpCheck{
        "pow int32 ^ float32", "pow", {ib, fe}, {}, {map2<int32_t, int32_t, float>(ib, fe, [](int32_t x, float y) {
          return int32_t(std::pow(double(x), double(y)));
        })}});
    NDArray lb = make<int64_t>({7}, seed++, -20, 20), le = make<int64_t>({2, 7}, seed++, 0, 9);
    cases.push_back(
        OpCheck{"pow int64 ^ int64", "pow", {lb, le}, {}, {map2<int64_t, int64_t>(lb, le, [](int64_t x, int64_t y) {
                  return int64_t(std::pow(double(x), double(y)));
                })}});
    NDArray fb = make<float>({2, 3}, seed++, 0.5, 2), ue = make<uint64_t>({1}, seed++, 0, 5);
    cases.push_back(OpCheck{
        "pow float32 ^ uint64", "pow", {fb, ue}, {}, {map2<float, float, uint64_t>(fb, ue, [](float x, uint64_t y) {
          return std::pow(x, float(y));
        })}});
  }
  nnvm_test::check_ops(cases, "int_arith");

  ops::TensorType f32{dtype::float32, {4}}, i32{dtype::int32, {4}}, b8{dtype::boolean, {4}};
  CHECK(infer_error("mod", {i32, i32}, ops::Attrs().set_int("fmod", 2)) == "nnvm.ops.attr");
  CHECK(infer_error("mod", {i32, f32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("pow", {b8, f32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("pow", {f32, b8}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("add", {b8, b8}) == "nnvm.ops.input_dtype");
  auto t = ops::infer_types(ops::get_op("pow"), {{dtype::int64, {3, 1}}, {dtype::float32, {4}}});
  CHECK(t[0].dtype == dtype::int64);
  CHECK(t[0].shape.size() == 2);
}

TEST_CASE("comparisons, logic, bitwise ops and shifts with broadcasting") {
  uint32_t seed = 1200;
  std::vector<OpCheck> cases;
  {
    // Small value ranges so that equal pairs occur.
    NDArray a = make<int8_t>({3, 5, 7}, seed++, -3, 3), b = make<int8_t>({5, 1}, seed++, -3, 3);
    cases.push_back(OpCheck{
        "equal int8", "equal", {a, b}, {}, {map2<bool, int8_t>(a, b, [](int8_t x, int8_t y) { return x == y; })}});
    cases.push_back(
        OpCheck{"less int8", "less", {a, b}, {}, {map2<bool, int8_t>(a, b, [](int8_t x, int8_t y) { return x < y; })}});
    NDArray c = make<uint16_t>({4, 6}, seed++, 0, 4), d = make<uint16_t>({6}, seed++, 0, 4);
    cases.push_back(OpCheck{
        "less_or_equal uint16", "less_or_equal", {c, d}, {}, {map2<bool, uint16_t>(c, d, [](uint16_t x, uint16_t y) {
          return x <= y;
        })}});
    cases.push_back(OpCheck{"greater_or_equal uint16",
                            "greater_or_equal",
                            {c, d},
                            {},
                            {map2<bool, uint16_t>(c, d, [](uint16_t x, uint16_t y) { return x >= y; })}});
    NDArray e = make<float>({2, 3, 4}, seed++, -2, 2), f = make<float>({3, 1}, seed++, -2, 2);
    for (auto* arr : {&e, &f})
      for (auto& v : arr->values<float>()) v = std::floor(v);
    cases.push_back(OpCheck{
        "equal float32", "equal", {e, f}, {}, {map2<bool, float>(e, f, [](float x, float y) { return x == y; })}});
    cases.push_back(OpCheck{
        "greater float32", "greater", {e, f}, {}, {map2<bool, float>(e, f, [](float x, float y) { return x > y; })}});
    NDArray g = make<int64_t>({5}, seed++, -3, 3), h = make<int64_t>({3, 1}, seed++, -3, 3);
    cases.push_back(
        OpCheck{"greater int64", "greater", {g, h}, {}, {map2<bool, int64_t>(g, h, [](int64_t x, int64_t y) {
                  return x > y;
                })}});
    NDArray p = make<bool>({3, 1, 7}, seed++, -1, 1), q = make<bool>({5, 1}, seed++, -1, 1);
    cases.push_back(
        OpCheck{"equal bool", "equal", {p, q}, {}, {map2<bool, bool>(p, q, [](bool x, bool y) { return x == y; })}});
    cases.push_back(OpCheck{"and", "and", {p, q}, {}, {map2<bool, bool>(p, q, [](bool x, bool y) { return x && y; })}});
    cases.push_back(OpCheck{"or", "or", {p, q}, {}, {map2<bool, bool>(p, q, [](bool x, bool y) { return x || y; })}});
    cases.push_back(OpCheck{"xor", "xor", {p, q}, {}, {map2<bool, bool>(p, q, [](bool x, bool y) { return x != y; })}});
  }
  {
    NDArray a = make<int16_t>({3, 5, 7}, seed++, -32768, 32768), b = make<int16_t>({7}, seed++, -32768, 32768);
    cases.push_back(
        OpCheck{"bitwise_and int16", "bitwise_and", {a, b}, {}, {map2<int16_t, int16_t>(a, b, [](int16_t x, int16_t y) {
                  return int16_t(x & y);
                })}});
    NDArray c = make<uint64_t>({3, 4, 5}, seed++, 0, 1.8e19), d = make<uint64_t>({5}, seed++, 0, 1.8e19);
    cases.push_back(OpCheck{
        "bitwise_or uint64", "bitwise_or", {c, d}, {}, {map2<uint64_t, uint64_t>(c, d, [](uint64_t x, uint64_t y) {
          return x | y;
        })}});
    NDArray e = make<uint8_t>({2, 3, 4, 5}, seed++, 0, 256), f = make<uint8_t>({3, 4, 5}, seed++, 0, 256);
    cases.push_back(
        OpCheck{"bitwise_xor uint8", "bitwise_xor", {e, f}, {}, {map2<uint8_t, uint8_t>(e, f, [](uint8_t x, uint8_t y) {
                  return uint8_t(x ^ y);
                })}});
    NDArray g = make<int32_t>({6, 5}, seed++, -1e9, 1e9);
    cases.push_back(OpCheck{"bitwise_and int32", "bitwise_and", {g, g}, {}, {g}});
  }
  // Shift amounts run past the bit width: 0 (or the sign bits for a signed right shift).
  auto shifts = [&](auto tag, double hi, int64_t bits) {
    using T = decltype(tag);
    NDArray x = make<T>({3, 11}, seed++, std::is_signed_v<T> ? -hi : 0, hi),
            y = make<T>({11}, seed++, 0, double(bits) + 3);
    std::string name = dtype_v<T>.str();
    for (bool left : {true, false})
      cases.push_back(OpCheck{str_cat("bit_shift ", left ? "left " : "right ", name),
                              "bit_shift",
                              {x, y},
                              ops::Attrs().set_string("direction", left ? "LEFT" : "RIGHT"),
                              {map2<T, T>(x, y, [left](T a, T b) { return shift<T>(a, b, left); })}});
  };
  shifts(uint8_t{}, 256, 8);
  shifts(uint16_t{}, 65536, 16);
  shifts(uint32_t{}, 4e9, 32);
  shifts(uint64_t{}, 1.8e19, 64);
  shifts(int32_t{}, 2e9, 32);
  nnvm_test::check_ops(cases, "logic_bits");

  ops::TensorType f32{dtype::float32, {4}}, i32{dtype::int32, {4}}, i64{dtype::int64, {4}}, b8{dtype::boolean, {4}};
  CHECK(infer_error("bit_shift", {i32, i32}) == "nnvm.ops.attr");
  CHECK(infer_error("bit_shift", {i32, i32}, ops::Attrs().set_string("direction", "UP")) == "nnvm.ops.attr");
  CHECK(infer_error("bit_shift", {f32, f32}, ops::Attrs().set_string("direction", "LEFT")) == "nnvm.ops.input_dtype");
  CHECK(infer_error("bitwise_and", {f32, f32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("bitwise_or", {i32, i64}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("and", {i32, i32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("equal", {i32, i64}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("less", {{dtype::float32, {3, 4}}, {dtype::float32, {5}}}) == "nnvm.ops.broadcast");
  auto t = ops::infer_types(ops::get_op("less"), {{dtype::float16, {3, 1}}, {dtype::float16, {4}}});
  CHECK(t[0].dtype == dtype::boolean);
  // The bitwise IR calls take integers only.
  CHECK(error_id([] { ir::call(ir::CallOp::shift_left, ir::Expr(1.0f), ir::Expr(1.0f)); }) == "nnvm.ir.call_dtype");
}

TEST_CASE("PRelu, Where, and the variadic Sum, Mean, Max, Min") {
  uint32_t seed = 1300;
  std::vector<OpCheck> cases;
  {
    NDArray x = make<float>({3, 4, 5}, seed++, -3, 3), s5 = make<float>({5}, seed++, -1, 1),
            s41 = make<float>({4, 1}, seed++, -1, 1);
    auto prelu = [](float a, float s) { return a < 0 ? a * s : a; };
    cases.push_back(OpCheck{"prelu slope (5)", "prelu", {x, s5}, {}, {map2<float, float>(x, s5, prelu)}});
    cases.push_back(OpCheck{"prelu slope (4, 1)", "prelu", {x, s41}, {}, {map2<float, float>(x, s41, prelu)}});
    NDArray xi = make<int32_t>({2, 7}, seed++, -9, 9), si = make<int32_t>({7}, seed++, -3, 3);
    cases.push_back(
        OpCheck{"prelu int32", "prelu", {xi, si}, {}, {map2<int32_t, int32_t>(xi, si, [](int32_t a, int32_t s) {
                  return a < 0 ? a * s : a;
                })}});
  }
  {
    NDArray c = make<bool>({3, 1, 7}, seed++, -1, 1), x = make<float>({5, 7}, seed++, -3, 3),
            y = make<float>({3, 5, 1}, seed++, -3, 3);
    auto where = [](const NDArray& c, const NDArray& x, const NDArray& y, auto tag) {
      using T = decltype(tag);
      return bmap<T>({&c, &x, &y}, [&](const std::vector<size_t>& o) {
        return c.values<bool>()[o[0]] ? x.values<T>()[o[1]] : y.values<T>()[o[2]];
      });
    };
    cases.push_back(OpCheck{"where float32", "where", {c, x, y}, {}, {where(c, x, y, float{})}});
    NDArray xi = make<int64_t>({7}, seed++, -1e12, 1e12), yi = make<int64_t>({5, 1}, seed++, -9, 9);
    cases.push_back(OpCheck{"where int64", "where", {c, xi, yi}, {}, {where(c, xi, yi, int64_t{})}});
    NDArray xb = make<bool>({1}, seed++, -1, 1), yb = make<bool>({3, 5, 7}, seed++, -1, 1);
    cases.push_back(OpCheck{"where bool", "where", {c, xb, yb}, {}, {where(c, xb, yb, bool{})}});
  }
  {
    NDArray a = make<float>({3, 5, 7}, seed++, -3, 3), b = make<float>({5, 1}, seed++, -3, 3),
            c = make<float>({7}, seed++, -3, 3);
    auto fold = [](std::vector<const NDArray*> ins, auto tag, auto f) {
      using T = decltype(tag);
      return bmap<T>(ins, [&](const std::vector<size_t>& o) {
        T acc = ins[0]->values<T>()[o[0]];
        for (size_t k = 1; k < ins.size(); ++k) acc = f(acc, ins[k]->values<T>()[o[k]]);
        return acc;
      });
    };
    auto add = [](auto x, auto y) { return decltype(x)(x + y); };
    auto mx = [](auto x, auto y) { return std::max(x, y); };
    auto mn = [](auto x, auto y) { return std::min(x, y); };
    cases.push_back(OpCheck{"sum of one", "sum", {a}, {}, {a}});
    cases.push_back(OpCheck{"sum of three", "sum", {a, b, c}, {}, {fold({&a, &b, &c}, float{}, add)}});
    NDArray mean = fold({&a, &b, &c}, float{}, add);
    for (auto& v : mean.values<float>()) v /= 3;
    cases.push_back(OpCheck{"mean of three", "mean", {a, b, c}, {}, {mean}});
    cases.push_back(OpCheck{"mean of one", "mean", {b}, {}, {b}});
    cases.push_back(OpCheck{"max of one", "max", {c}, {}, {c}});
    cases.push_back(OpCheck{"min of three float32", "min", {a, b, c}, {}, {fold({&a, &b, &c}, float{}, mn)}});
    std::vector<NDArray> i8;
    for (Dims s : {Dims{2, 1, 5}, Dims{3, 1}, Dims{5}, Dims{2, 3, 5}}) i8.push_back(make<int8_t>(s, seed++, -128, 128));
    cases.push_back(OpCheck{"max of four int8",
                            "max",
                            {i8[0], i8[1], i8[2], i8[3]},
                            {},
                            {fold({&i8[0], &i8[1], &i8[2], &i8[3]}, int8_t{}, mx)}});
    NDArray u = make<uint32_t>({4, 3}, seed++, 0, 4e9), v = make<uint32_t>({3}, seed++, 0, 4e9);
    cases.push_back(OpCheck{"min uint32", "min", {u, v}, {}, {fold({&u, &v}, uint32_t{}, mn)}});
    NDArray p = make<int32_t>({4, 3}, seed++, -1e6, 1e6), q = make<int32_t>({1, 3}, seed++, -1e6, 1e6);
    cases.push_back(OpCheck{"sum int32", "sum", {p, q, p}, {}, {fold({&p, &q, &p}, int32_t{}, add)}});
    std::vector<NDArray> eight;
    for (int k = 0; k < 8; ++k) eight.push_back(make<double>({k % 2 ? 3 : 1, 2}, seed++, -1, 1));
    std::vector<std::optional<NDArray>> in8(eight.begin(), eight.end());
    std::vector<const NDArray*> p8;
    for (auto& e : eight) p8.push_back(&e);
    cases.push_back(OpCheck{"sum of eight float64", "sum", in8, {}, {fold(p8, double{}, add)}, 1e-9, 1e-12});
  }
  nnvm_test::check_ops(cases, "prelu_where_fold");

  ops::TensorType f32{dtype::float32, {4}}, i32{dtype::int32, {4}}, b8{dtype::boolean, {4}};
  CHECK(infer_error("prelu", {{dtype::float32, {4, 5}}, {dtype::float32, {3, 4, 5}}}) == "nnvm.ops.broadcast");
  CHECK(infer_error("prelu", {{dtype::float32, {4, 1}}, {dtype::float32, {5}}}) == "nnvm.ops.broadcast");
  CHECK(infer_error("prelu", {f32, i32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("where", {f32, f32, f32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("where", {b8, f32, {dtype::float64, {4}}}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("mean", {i32, i32}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("sum", {}) == "nnvm.ops.input_count");
  CHECK(infer_error("max", {f32, ops::TensorType::none(), f32}) == "nnvm.ops.input_count");
  CHECK(infer_error("sum", {f32, f32, {dtype::float32, {3}}}) == "nnvm.ops.broadcast");
  for (auto& [onnx, name] :
       std::vector<std::pair<std::string, std::string>>{{"onnx:Sum", "sum"},
                                                        {"onnx:Mean", "mean"},
                                                        {"onnx:Max", "max"},
                                                        {"onnx:Min", "min"},
                                                        {"onnx:Mod", "mod"},
                                                        {"onnx:PRelu", "prelu"},
                                                        {"onnx:Where", "where"},
                                                        {"onnx:BitShift", "bit_shift"},
                                                        {"onnx:GreaterOrEqual", "greater_or_equal"},
                                                        {"onnx:LessOrEqual", "less_or_equal"},
                                                        {"onnx:Xor", "xor"},
                                                        {"onnx:BitwiseXor", "bitwise_xor"}})
    CHECK(ops::get_op_by_importer_name(onnx).name == name);
}

}  // namespace ops_elementwise_more
