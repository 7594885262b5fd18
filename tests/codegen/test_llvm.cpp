#include "support/pch.hpp"

#include <cmath>
#include <limits>
#include <regex>

#include "nnvm/codegen/llvm_jit.hpp"

namespace codegen_llvm {

using namespace nnvm;
using namespace nnvm::ir;
using target::Kernel;

namespace {

Expr f32(double v) { return make_const(dtype::float32, v); }
Expr idx(int64_t v) { return make_const(dtype::index, double(v)); }

template <class T>
void fill(NDArray& a, T (*f)(int64_t)) {
  auto v = a.values<T>();
  for (int64_t i = 0; i < int64_t(v.size()); ++i) v[i] = f(i);
}

template <class E>
std::string error_id(auto&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.id();
  }
  return "no error";
}

// C[i, j] = sum_k A[i, k] * B[k, j]: parallel i, a per-iteration stack accumulator.
constexpr int64_t kM = 37, kN = 19, kK = 23;
LoweredFunc matmul_kernel() {
  Buffer A("A", dtype::float32, {idx(kM), idx(kK)}), B("B", dtype::float32, {idx(kK), idx(kN)}),
      C("C", dtype::float32, {idx(kM), idx(kN)});
  Buffer acc("acc", dtype::float32, {idx(1)});
  Var i("i"), j("j"), k("k");
  Stmt update = Store::make(acc, Load::make(acc, idx(0)) + Load::make(A, i * kK + k) * Load::make(B, k * kN + j), idx(0));
  Stmt inner = Seq::make({Store::make(acc, f32(0), idx(0)), For::make(k, 0, idx(kK), ForKind::serial, update),
                          Store::make(C, Load::make(acc, idx(0)), i * kN + j)});
  Stmt body = For::make(i, 0, idx(kM), ForKind::parallel,
                        Allocate::make(acc, For::make(j, 0, idx(kN), ForKind::serial, inner)));
  return {"matmul", {A, B, C}, {}, body, "llvm test matmul, parallel i"};
}

// Symbolic n, 8 lanes plus a scalar tail: Y = x > 0 ? 2x : exp(x); Z = int32(4x) / 3;
// R = reversed 8-lane groups (a gather); M = !(x < -1) ? min(x, 0.5) : -1; S[2i] = x (a scatter).
LoweredFunc vector_kernel() {
  Var n("n");
  Buffer X("X", dtype::float32, {n}), Y("Y", dtype::float32, {n}), Z("Z", dtype::int32, {n}),
      R("R", dtype::float32, {n}), M("M", dtype::float32, {n}), S("S", dtype::float32, {n * 2});
  auto body_for = [&](Expr index, Expr gather_index, Expr scatter_index) {
    Expr x = Load::make(X, index);
    return Seq::make({Store::make(Y, select(x > 0.0f, x * 2.0f, call(CallOp::exp, x)), index),
                      Store::make(Z, cast(dtype::int32, x * 4.0f) / 3, index),
                      Store::make(R, Load::make(X, gather_index), index),
                      Store::make(M, select(!(x < -1.0f), min(x, 0.5f), x * 0.0f - 1.0f), index),
                      Store::make(S, x, scatter_index)});
  };
  Var io("i.outer"), t("i.tail");
  Expr base = io * 8;
  Stmt vec = For::make(io, 0, n / 8, ForKind::parallel,
                       body_for(Ramp::make(base, idx(1), 8), Ramp::make(base + 7, idx(-1), 8), Ramp::make(base * 2, idx(2), 8)));
  Stmt tail = For::make(t, n / 8 * 8, n % 8, ForKind::serial, body_for(t, t, t * 2));
  return {"vectors", {X, Y, Z, R, M, S}, {n}, Seq::make({vec, tail}), "llvm test vectors"};
}

// Two workspace buffers over symbolic n: T = 2A, U[0..2n) = (i, -i); B[i] = T[n-1-i] + U[2i+1].
LoweredFunc workspace_kernel() {
  Var n("n");
  Buffer A("A", dtype::float32, {n}), B("B", dtype::float32, {n});
  Buffer T("T", dtype::float32, {n}), U("U", dtype::int64, {idx(2), n});
  Var i("i"), j("i"), k("i");
  Stmt fill_t = For::make(i, 0, n, ForKind::serial, Store::make(T, Load::make(A, i) * 2.0f, i));
  Stmt fill_u = For::make(j, 0, n, ForKind::parallel,
                          Seq::make({Store::make(U, j, j * 2), Store::make(U, idx(0) - j, j * 2 + 1)}));
  Stmt out = For::make(k, 0, n, ForKind::serial,
                       Store::make(B, Load::make(T, n - 1 - k) + cast(dtype::float32, Load::make(U, k * 2 + 1)), k));
  return {"scratch", {A, B}, {n}, Allocate::make(T, Allocate::make(U, Seq::make({fill_t, fill_u, out}))), "llvm test workspace"};
}

// float16 and bfloat16 storage, scalar and x4: H = f16(f32(A) * 0.5 + 1), G = bf16(f32(A) - 3), F = f16(f64(A) / 3).
LoweredFunc half_kernel() {
  Var n("n");
  Buffer A("A", dtype::float16, {n}), H("H", dtype::float16, {n}), G("G", dtype::bfloat16, {n}),
      F("F", dtype::float16, {n});
  auto body_for = [&](Expr index) {
    Expr a = cast(dtype::float32, Load::make(A, index));
    Expr d = cast(dtype::float64, Load::make(A, index));
    return Seq::make({Store::make(H, cast(dtype::float16, a * 0.5f + 1.0f), index),
                      Store::make(G, cast(dtype::bfloat16, a - 3.0f), index),
                      Store::make(F, cast(dtype::float16, d / make_const(d.dtype(), 3.0)), index)});
  };
  Var io("io"), t("t");
  Stmt vec = For::make(io, 0, n / 4, ForKind::serial, body_for(Ramp::make(io * 4, idx(1), 4)));
  Stmt tail = For::make(t, n / 4 * 4, n % 4, ForKind::serial, body_for(t));
  return {"half", {A, H, G, F}, {n}, Seq::make({vec, tail}), "llvm test f16/bf16 storage"};
}

// uint8 wraps, int8 division of -128 by -1, int32 division truncates, a guarded load past the
// end, float->int conversions that saturate, bool storage.
LoweredFunc integer_kernel() {
  Var n("n");
  Buffer A("A", dtype::uint8, {n}), B("B", dtype::int32, {n}), C("C", dtype::uint8, {n}), D("D", dtype::int32, {n}),
      E("E", dtype::int32, {n}), Q("Q", dtype::int8, {n}), W("W", dtype::float32, {n}), I("I", dtype::int32, {n}),
      P("P", dtype::boolean, {n});
  Var i("i"), s("s", dtype::int32);
  Expr a = Load::make(A, i), b = Load::make(B, i), w = Load::make(W, i);
  Expr next = select(i < n - 1, Load::make(B, i + 1), make_const(dtype::int32, 100));
  Expr q = cast(dtype::int8, b);
  return {"integers",
          {A, B, C, D, E, Q, W, I, P},
          {n},
          For::make(i, 0, n, ForKind::serial,
                    Seq::make({
                        Store::make(C, a * a + make_const(dtype::uint8, 200), i),
                        LetStmt::make(s, b * 3, Store::make(D, s / 4 + s % 5 + max(s, make_const(dtype::int32, -4)), i)),
                        Store::make(E, next, i),
                        Store::make(Q, q / make_const(dtype::int8, -1) + q % make_const(dtype::int8, 7), i),
                        Store::make(I, cast(dtype::int32, w), i),
                        Store::make(P, (b > 0) && !(w < 0.0f), i),
                    })),
          "llvm test integers"};
}

// A parallel loop nested in a parallel loop (the inner one runs serially), with a nonzero min.
LoweredFunc nested_kernel() {
  Buffer O("O", dtype::int32, {idx(16), idx(8)});
  Var i("i"), j("j");
  Stmt body = For::make(i, 2, idx(14), ForKind::parallel,
                        For::make(j, 0, idx(8), ForKind::parallel,
                                  Store::make(O, cast(dtype::int32, i * 10 + j), i * 8 + j)));
  return {"nested", {O}, {}, body, "llvm test nested parallel"};
}

std::vector<LoweredFunc> all_kernels() {
  return {matmul_kernel(), vector_kernel(), workspace_kernel(), half_kernel(), integer_kernel(), nested_kernel()};
}

// Every test kernel in one LLVM module.
const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> k = codegen::jit_llvm(all_kernels());
  return k;
}

}  // namespace

TEST_CASE("llvm: parallel matmul matches a plain loop") {
  const Kernel& k = kernels()[0];
  NDArray A(dtype::float32, {kM, kK}), B(dtype::float32, {kK, kN}), C(dtype::float32, {kM, kN});
  fill<float>(A, [](int64_t i) { return float((i * 7) % 11) - 5.0f; });
  fill<float>(B, [](int64_t i) { return float((i * 3) % 13) * 0.25f; });
  for (int threads : {1, 3, 0}) {
    std::vector<BufferView> args{A.view(), B.view(), C.view()};
    k.call(args, threads);
    for (int64_t i = 0; i < kM; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        float ref = 0;
        for (int64_t q = 0; q < kK; ++q) ref += A.data<float>()[i * kK + q] * B.data<float>()[q * kN + j];
        CHECK(C.data<float>()[i * kN + j] == doctest::Approx(ref).epsilon(1e-5));
      }
  }
  // env == NULL runs the parallel loop serially.
  void* raw[] = {A.raw(), B.raw(), C.raw()};
  std::fill_n(C.data<float>(), kM * kN, -1.0f);
  CHECK(k.raw_function()(raw, nullptr, nullptr, 0, nullptr) == NNVM_STATUS_OK);
  CHECK(C.data<float>()[kM * kN - 1] != -1.0f);
}

TEST_CASE("llvm: vector select, cast, call, gather, scatter and tail") {
  const Kernel& k = kernels()[1];
  for (int64_t n : {int64_t(0), int64_t(5), int64_t(64), int64_t(83)}) {
    NDArray X(dtype::float32, {n}), Y(dtype::float32, {n}), Z(dtype::int32, {n}), R(dtype::float32, {n}),
        M(dtype::float32, {n}), S(dtype::float32, {2 * n});
    fill<float>(X, [](int64_t i) { return float(i % 9) * 0.375f - 1.5f; });
    fill<float>(S, [](int64_t) { return 7.0f; });
    k(X, Y, Z, R, M, S);
    const float* x = X.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      float xi = x[i];
      CHECK(Y.data<float>()[i] == (xi > 0 ? xi * 2 : std::exp(xi)));
      CHECK(Z.data<int32_t>()[i] == int32_t(xi * 4) / 3);
      int64_t src = i < n / 8 * 8 ? i / 8 * 8 + 7 - i % 8 : i;
      CHECK(R.data<float>()[i] == x[src]);
      CHECK(M.data<float>()[i] == (!(xi < -1) ? (xi < 0.5f ? xi : 0.5f) : -1.0f));
      CHECK(S.data<float>()[2 * i] == xi);
      CHECK(S.data<float>()[2 * i + 1] == 7.0f);
    }
  }
}

TEST_CASE("llvm: global allocations come from the workspace, sized as the C JIT sizes them") {
  const Kernel& k = kernels()[2];
  int64_t n = 29;
  int64_t sizes[] = {n};
  auto align = [](uint64_t b) { return (b + 63) / 64 * 64; };
  CHECK(k.workspace_bytes(sizes) == align(4 * n) + align(8 * 2 * n));
  CHECK(k.workspace_bytes(sizes) == target::jit_c(workspace_kernel()).workspace_bytes(sizes));
  NDArray A(dtype::float32, {n}), B(dtype::float32, {n});
  fill<float>(A, [](int64_t i) { return float(i) + 0.5f; });
  k(A, B);
  for (int64_t i = 0; i < n; ++i) CHECK(B.data<float>()[i] == 2 * A.data<float>()[n - 1 - i] - float(i));
  void* args[] = {A.raw(), B.raw()};
  CHECK(k.raw_function()(args, sizes, nullptr, 0, nullptr) == NNVM_STATUS_WORKSPACE_TOO_SMALL);
}

TEST_CASE("llvm: float16 and bfloat16 storage round to nearest even") {
  const Kernel& k = kernels()[3];
  int64_t n = 23;
  NDArray A(dtype::float16, {n}), H(dtype::float16, {n}), G(dtype::bfloat16, {n}), F(dtype::float16, {n});
  auto a = A.values<float16>();
  for (int64_t i = 0; i < n; ++i) a[i] = float16(float(i) * 1.37f - 9.0f + (i == 3 ? 70000.0f : 0.0f));
  a[5].bits = 0x7e01;  // a NaN
  a[6].bits = 0x0003;  // a subnormal
  k(A, H, G, F);
  for (int64_t i = 0; i < n; ++i) {
    float ai = float(a[i]);
    INFO("i = ", i);
    CHECK(H.values<float16>()[i].bits == float16(ai * 0.5f + 1.0f).bits);
    CHECK(G.values<bfloat16>()[i].bits == bfloat16(ai - 3.0f).bits);
    CHECK(F.values<float16>()[i].bits == float16(float(double(ai) / 3.0)).bits);
  }
}

TEST_CASE("llvm: narrow integers wrap, division truncates, conversions saturate, bools are bytes") {
  const Kernel& k = kernels()[4];
  int64_t n = 17;
  NDArray A(dtype::uint8, {n}), B(dtype::int32, {n}), C(dtype::uint8, {n}), D(dtype::int32, {n}),
      E(dtype::int32, {n}), Q(dtype::int8, {n}), W(dtype::float32, {n}), I(dtype::int32, {n}), P(dtype::boolean, {n});
  fill<uint8_t>(A, [](int64_t i) { return uint8_t(i * 15); });
  fill<int32_t>(B, [](int64_t i) { return int32_t(i * 5 - 40 - (i == 0 ? 88 : 0)); });  // B[0] = -128
  fill<float>(W, [](int64_t i) { return float(i - 8) * 0.7f; });
  W.data<float>()[1] = 3e9f;
  W.data<float>()[2] = std::numeric_limits<float>::quiet_NaN();
  W.data<float>()[3] = -1e30f;
  k(A, B, C, D, E, Q, W, I, P);
  for (int64_t i = 0; i < n; ++i) {
    INFO("i = ", i);
    uint8_t a = A.data<uint8_t>()[i];
    int32_t b = B.data<int32_t>()[i], s = b * 3;
    int8_t q = int8_t(b);
    float w = W.data<float>()[i];
    CHECK(C.data<uint8_t>()[i] == uint8_t(a * a + 200));
    CHECK(D.data<int32_t>()[i] == s / 4 + s % 5 + (s > -4 ? s : -4));
    CHECK(E.data<int32_t>()[i] == (i < n - 1 ? B.data<int32_t>()[i + 1] : 100));
    CHECK(Q.data<int8_t>()[i] == int8_t(int8_t(q / -1) + q % 7));
    // Saturate to int64 (NaN: 0), then wrap to 32 bits.
    int64_t sat = std::isnan(w) ? 0 : w >= 9.2e18f ? INT64_MAX : w <= -9.2e18f ? INT64_MIN : int64_t(w);
    CHECK(I.data<int32_t>()[i] == int32_t(uint32_t(uint64_t(sat))));
    CHECK(static_cast<const uint8_t*>(P.raw())[i] == uint8_t(b > 0 && !(w < 0)));
  }
}

namespace {

// The interpreter's rule for float -> integer, written out: saturate to int64 (NaN: 0), then keep
// the low bits.
template <class Int, class F>
Int saturate_then_wrap(F w) {
  int64_t sat = std::isnan(w) ? 0
                : w >= F(0x1p63) ? INT64_MAX
                : w <= F(-0x1p63) ? INT64_MIN
                                  : int64_t(w);
  return Int(uint64_t(sat));
}

// O_T[i] = T(X[i]) for T in int8, uint8, int16, int32, uint32, as 16-lane vectors.
template <class F>
LoweredFunc vector_conversion_kernel(int64_t n) {
  DataType t = dtype_v<F>;
  Buffer X("X", t, {idx(n)});
  std::vector<Buffer> outs{Buffer("O8", dtype::int8, {idx(n)}), Buffer("OU8", dtype::uint8, {idx(n)}),
                           Buffer("O16", dtype::int16, {idx(n)}), Buffer("O32", dtype::int32, {idx(n)}),
                           Buffer("OU32", dtype::uint32, {idx(n)})};
  Var i("i");
  Expr index = Ramp::make(i * 16, idx(1), 16);
  std::vector<Stmt> stores;
  for (auto& o : outs) stores.push_back(Store::make(o, cast(o->dtype.with_lanes(16), Load::make(X, index)), index));
  std::vector<Buffer> params{X};
  params.insert(params.end(), outs.begin(), outs.end());
  return {str_cat("convert_", t), params, {}, For::make(i, 0, idx(n / 16), ForKind::serial, Seq::make(stores)),
          "llvm test vector conversions"};
}

template <class F>
void check_vector_conversions(const std::string& cpu) {
  // The first 16 lanes all lie inside int32 (one vector conversion); each later group of 16 has a
  // lane outside it, NaN or an infinity, so the whole vector takes the exact path.
  const std::vector<double> values{
      0, 1.5, -1.5, -0.7, 0.7, 127.9, 128.2, -128.9, -129.5, 255.9, 256.5, 32767.5, -32769.5, 65535.9, 2147483520, -2147483520,
      2147483648.0, -2147483904.0, 3e9, -3e9, 4294967296.0 + 512, -4294967808.0, 1e10, -1e10, 0x1p40 + 0x1p18, -(0x1p40 + 0x1p18),
      9.2e18, -9.2e18, 0x1p63, -0x1p63, 1e19, -1e19,
      NAN, INFINITY, -INFINITY, -1, 1, 200.5, -200.5, 70000.7, -70000.7, 0x1p31 - 128, -0x1p31 + 128, 0x1p32 - 256, 1e30, -1e30, 3.99, -2147483648.0};
  const int64_t n = int64_t(values.size());
  codegen::LlvmOptions options;
  options.cpu = cpu;
  auto ks = codegen::jit_llvm(std::vector<LoweredFunc>{vector_conversion_kernel<F>(n)}, options);
  NDArray X(dtype_v<F>, {n}), O8(dtype::int8, {n}), OU8(dtype::uint8, {n}), O16(dtype::int16, {n}),
      O32(dtype::int32, {n}), OU32(dtype::uint32, {n});
  for (int64_t i = 0; i < n; ++i) X.data<F>()[i] = F(values[size_t(i)]);
  ks[0](X, O8, OU8, O16, O32, OU32);
  for (int64_t i = 0; i < n; ++i) {
    F w = X.data<F>()[i];
    INFO(dtype_v<F>, " on ", cpu.empty() ? "the host" : cpu, ", lane ", i, ": ", w);
    CHECK(O8.data<int8_t>()[i] == saturate_then_wrap<int8_t>(w));
    CHECK(OU8.data<uint8_t>()[i] == saturate_then_wrap<uint8_t>(w));
    CHECK(O16.data<int16_t>()[i] == saturate_then_wrap<int16_t>(w));
    CHECK(O32.data<int32_t>()[i] == saturate_then_wrap<int32_t>(w));
    CHECK(OU32.data<uint32_t>()[i] == saturate_then_wrap<uint32_t>(w));
  }
}

}  // namespace

TEST_CASE("llvm: vector float -> narrow integer conversions saturate to int64 and wrap, as scalars do") {
  // The host's vector width, AVX2 and SSE4.2: each lowers the 16-lane vectors differently.
  for (std::string cpu : {"", "x86-64-v3", "x86-64-v2"}) {
    check_vector_conversions<float>(cpu);
    check_vector_conversions<double>(cpu);
  }
}

TEST_CASE("llvm: a parallel loop inside a parallel loop") {
  const Kernel& k = kernels()[5];
  NDArray O(dtype::int32, {16, 8});
  fill<int32_t>(O, [](int64_t) { return int32_t(-1); });
  std::vector<BufferView> args{O.view()};
  k.call(args, 4);
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 8; ++j) CHECK(O.data<int32_t>()[i * 8 + j] == (i >= 2 && i < 16 ? i * 10 + j : -1));
}

namespace {

// out[i] = op(x[i] (, y[i])) in T, scalar loop and 4-lane vector loop over the same data.
template <class T>
LoweredFunc call_kernel(CallOp op, bool vector) {
  DataType t = dtype_v<T>;
  DataType out_t = (op == CallOp::isnan || op == CallOp::isinf) ? dtype::boolean : t;
  constexpr int64_t n = 12;
  Buffer X("X", t, {idx(n)}), Y("Y", t, {idx(n)}), O("O", out_t, {idx(n)});
  Var i("i");
  Expr index = vector ? Ramp::make(i * 4, idx(1), 4) : Expr(i);
  std::vector<Expr> args{Load::make(X, index)};
  if (call_op_arity(op) == 2) args.push_back(Load::make(Y, index));
  Stmt body = For::make(i, 0, idx(vector ? n / 4 : n), ForKind::serial, Store::make(O, Call::make(op, args), index));
  return {str_cat(call_op_name(op), vector ? "_x4" : ""), {X, Y, O}, {}, body, "llvm test call"};
}

template <class T>
T reference_call(CallOp op, T x, T y) {
  switch (op) {
    case CallOp::exp: return std::exp(x);
    case CallOp::exp2: return std::exp2(x);
    case CallOp::log: return std::log(x);
    case CallOp::log2: return std::log2(x);
    case CallOp::log1p: return std::log1p(x);
    case CallOp::expm1: return std::expm1(x);
    case CallOp::sqrt: return std::sqrt(x);
    case CallOp::rsqrt: return T(1) / std::sqrt(x);
    case CallOp::tanh: return std::tanh(x);
    case CallOp::erf: return std::erf(x);
    case CallOp::sigmoid: return T(1) / (T(1) + std::exp(-x));
    case CallOp::pow: return std::pow(x, y);
    case CallOp::abs: return std::fabs(x);
    case CallOp::floor: return std::floor(x);
    case CallOp::ceil: return std::ceil(x);
    case CallOp::round: return std::nearbyint(x);
    case CallOp::trunc: return std::trunc(x);
    case CallOp::sin: return std::sin(x);
    case CallOp::cos: return std::cos(x);
    case CallOp::tan: return std::tan(x);
    case CallOp::asin: return std::asin(x);
    case CallOp::acos: return std::acos(x);
    case CallOp::atan: return std::atan(x);
    case CallOp::atan2: return std::atan2(x, y);
    case CallOp::sinh: return std::sinh(x);
    case CallOp::cosh: return std::cosh(x);
    case CallOp::asinh: return std::asinh(x);
    case CallOp::acosh: return std::acosh(x);
    case CallOp::atanh: return std::atanh(x);
    case CallOp::fmod: return std::fmod(x, y);
    case CallOp::isnan: return std::isnan(x);
    case CallOp::isinf: return std::isinf(x);
    case CallOp::copysign: return std::copysign(x, y);
    case CallOp::bitwise_and:
    case CallOp::bitwise_or:
    case CallOp::bitwise_xor:
    case CallOp::bitwise_not:
    case CallOp::shift_left:
    case CallOp::shift_right: break;  // not float calls
  }
  return T(0);
}

template <class T>
void check_every_call() {
  std::vector<LoweredFunc> fns;
  std::vector<CallOp> ops;
  for (int o = 0; o <= int(CallOp::copysign); ++o)
    for (bool vector : {false, true}) {
      fns.push_back(call_kernel<T>(CallOp(o), vector));
      ops.push_back(CallOp(o));
    }
  auto ks = codegen::jit_llvm(fns);
  for (size_t f = 0; f < fns.size(); ++f) {
    CallOp op = ops[f];
    NDArray X(dtype_v<T>, {12}), Y(dtype_v<T>, {12});
    bool is_class = op == CallOp::isnan || op == CallOp::isinf;
    NDArray O(is_class ? dtype::boolean : dtype_v<T>, {12});
    for (int64_t i = 0; i < 12; ++i) {
      // Inside every op's domain (acosh needs x >= 1), with halves for round and negatives.
      T x = T(i) * T(0.075) + T(0.05) - (i % 3 == 0 ? T(0.4) : T(0)) + (op == CallOp::acosh ? T(1.5) : T(0));
      if (op == CallOp::round) x = T(i) * T(0.5) - T(2.5);
      X.data<T>()[i] = x;
      Y.data<T>()[i] = T(1.25) - T(i) * T(0.2);
    }
    if (is_class) {
      X.data<T>()[1] = std::numeric_limits<T>::quiet_NaN();
      X.data<T>()[2] = -std::numeric_limits<T>::infinity();
    }
    ks[f](X, Y, O);
    for (int64_t i = 0; i < 12; ++i) {
      T want = reference_call<T>(op, X.data<T>()[i], Y.data<T>()[i]);
      INFO(fns[f].name, " (", dtype_v<T>, ") at x = ", X.data<T>()[i]);
      if (is_class) {
        CHECK(static_cast<const uint8_t*>(O.raw())[i] == uint8_t(want != 0));
      } else {
        // The same C math library, called in the same precision: equal up to an ulp (a vector
        // intrinsic may be expanded differently from the scalar call).
        T got = O.data<T>()[i];
        T tol = std::numeric_limits<T>::epsilon() * std::max(T(1), std::fabs(want));
        CHECK((std::isnan(want) ? std::isnan(got) : std::fabs(got - want) <= tol));
      }
    }
  }
}

}  // namespace

TEST_CASE("llvm: every math call matches <cmath>, scalar and vector, float32 and float64") {
  check_every_call<float>();
  check_every_call<double>();
}

TEST_CASE("llvm: math library calls are pure to the optimizer") {
  // O[i] = tanh(X[0]) + tanh(X[0]) * Y[i]: with the libm declaration marked as not touching
  // memory, the two equal calls merge and move out of the loop, leaving one call in the kernel.
  constexpr int64_t n = 37;
  Buffer X("X", dtype::float32, {idx(1)}), Y("Y", dtype::float32, {idx(n)}), O("O", dtype::float32, {idx(n)});
  Var i("i");
  auto t = [&] { return Call::make(CallOp::tanh, {Load::make(X, idx(0))}); };
  Stmt body = For::make(i, 0, idx(n), ForKind::serial, Store::make(O, t() + t() * Load::make(Y, i), i));
  auto ks = codegen::jit_llvm(std::vector<LoweredFunc>{{"tanh_twice", {X, Y, O}, {}, body, "llvm test pure call"}});
  std::string ir = ks[0].code();
  size_t calls = 0;
  for (size_t at = 0; (at = ir.find("call float @tanhf", at)) != std::string::npos; ++at) ++calls;
  CHECK(calls == 1);
  NDArray x(dtype::float32, {1}), y(dtype::float32, {n}), o(dtype::float32, {n});
  x.data<float>()[0] = 0.3f;
  fill<float>(y, [](int64_t k) { return float(k) * 0.25f - 2.0f; });
  ks[0](x, y, o);
  for (int64_t k = 0; k < n; ++k)
    CHECK(o.data<float>()[k] == doctest::Approx(std::tanh(0.3f) * (1.0f + y.data<float>()[k])).epsilon(1e-6));
}

TEST_CASE("llvm: wrong arguments are user errors, GPU loops back-end errors") {
  const Kernel& k = kernels()[2];
  NDArray A(dtype::float32, {8}), B(dtype::float64, {8}), C(dtype::float32, {9}), D(dtype::float32, {8});
  CHECK(error_id<UserError>([&] { k(A, B); }) == "nnvm.call.dtype");
  CHECK(error_id<UserError>([&] { k(A, C); }) == "nnvm.call.size_conflict");
  CHECK(error_id<UserError>([&] { k(A); }) == "nnvm.call.arg_count");
  CHECK(error_id<UserError>([&] { k(A, D); }) == "no error");
  CHECK(error_id<UserError>([&] { Kernel()(A); }) == "nnvm.call.undefined_kernel");

  Buffer O("O", dtype::float32, {idx(4)});
  Var t("tx");
  LoweredFunc bound{"bound", {O}, {}, For::make(t, 0, idx(4), ForKind::thread_binding, Store::make(O, f32(1), t), "threadIdx.x"), ""};
  CHECK(error_id<BackendError>([&] { codegen::jit_llvm(bound); }) == "nnvm.codegen.thread_binding");

  Var n("n"), i("i");
  Buffer big("big", dtype::float32, {n}, MemoryScope::local), X("X", dtype::float32, {n});
  LoweredFunc priv{"private", {X}, {n},
                   For::make(i, 0, n, ForKind::parallel, Allocate::make(big, Store::make(X, f32(0), i))), ""};
  CHECK(error_id<BackendError>([&] { codegen::jit_llvm(priv); }) == "nnvm.codegen.allocate_size");
}

TEST_CASE("llvm: batched modules, symbols, the cache, IR and assembly") {
  LoweredFunc a = workspace_kernel(), b = workspace_kernel();
  auto ks = codegen::jit_llvm({a, b});
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].symbol() == "scratch");
  CHECK(ks[1].symbol() == "scratch_1");
  CHECK(ks[0].compile_ms() > 0);
  auto again = codegen::jit_llvm({a, b});
  CHECK(again[0].from_cache());
  CHECK(reinterpret_cast<void*>(again[0].raw_function()) == reinterpret_cast<void*>(ks[0].raw_function()));
  NDArray A(dtype::float32, {4}), B(dtype::float32, {4});
  fill<float>(A, [](int64_t i) { return float(i); });
  ks[1](A, B);
  CHECK(B.data<float>()[0] == 6.0f);

  std::string ir = codegen::emit_llvm_ir(matmul_kernel(), {}, false);
  CHECK(ir.find("define i32 @matmul(") != std::string::npos);
  CHECK(ir.find("define i64 @matmul_workspace_bytes(") != std::string::npos);
  CHECK(ir.find("@llvm.fmuladd.f32") != std::string::npos);
  CHECK(ir.find("matmul_parallel_0") != std::string::npos);
  CHECK(ir.find("fast") == std::string::npos);  // no fast-math flags
  CHECK(codegen::emit_asm(matmul_kernel()).find("matmul:") != std::string::npos);
}

namespace {

// O[i] = sum_k X[i, k] * W[k], accumulated in O itself (the naive reduction's shape): only
// knowing that O never overlaps X or W lets LLVM keep O[i] in a register across the k loop.
LoweredFunc reduction_kernel(ForKind outer) {
  Var n("n");
  Buffer X("X", dtype::float32, {n, idx(kK)}), W("W", dtype::float32, {idx(kK)}), O("O", dtype::float32, {n});
  Var i("i"), k("k");
  Stmt update = Store::make(O, Load::make(O, i) + Load::make(X, i * kK + k) * Load::make(W, k), i);
  Stmt body = For::make(i, 0, n, outer,
                        Seq::make({Store::make(O, f32(0), i), For::make(k, 0, idx(kK), ForKind::serial, update)}));
  return {outer == ForKind::parallel ? "rowdot_par" : "rowdot", {X, W, O}, {n}, body, "llvm test reduction"};
}

}  // namespace

TEST_CASE("llvm: kernel buffers are noalias, in the kernel body and in parallel bodies") {
  LoweredFunc serial = reduction_kernel(ForKind::serial), par = reduction_kernel(ForKind::parallel);
  std::string ir = codegen::emit_llvm_ir({serial, par}, {}, false);
  // LLVM 15+ spells buffer pointers `ptr`; LLVM 14's typed pointers come out as `i8*`.
  auto has = [&](std::string pattern) {
    for (size_t at = 0; (at = pattern.find("PTR", at)) != std::string::npos;) pattern.replace(at, 3, "(ptr|i8\\*)");
    return std::regex_search(ir, std::regex(pattern));
  };
  CHECK(has(R"(define internal i32 @rowdot_body\(PTR noalias %X, PTR noalias %W, PTR noalias %O, PTR %sizes,)"));
  // The outlined parallel body gets the captured buffers, in first-use order, as parameters.
  CHECK(has(R"(define internal i32 @rowdot_par_parallel_0_body\(i64 %0, i64 %1, PTR noalias %O, PTR noalias %X, )"
            R"(PTR noalias %W\))"));
  CHECK(has(R"(define i32 @rowdot\(PTR %args,)"));

  // Optimized, the bodies are inlined into their entry points; the noalias facts survive as
  // scoped alias metadata.
  auto ks = codegen::jit_llvm({serial, par});
  CHECK(ks[0].code().find("!noalias !") != std::string::npos);
  CHECK(ks[0].code().find("!alias.scope !") != std::string::npos);

  int64_t n = 13;
  NDArray X(dtype::float32, {n, kK}), W(dtype::float32, {kK});
  fill<float>(X, [](int64_t i) { return float((i * 5) % 17) * 0.5f - 3.0f; });
  fill<float>(W, [](int64_t i) { return float(i % 4) - 1.5f; });
  for (auto& k : ks) {
    NDArray O(dtype::float32, {n});
    fill<float>(O, [](int64_t) { return 99.0f; });
    k(X, W, O);
    for (int64_t i = 0; i < n; ++i) {
      float ref = 0;
      for (int64_t q = 0; q < kK; ++q) ref += X.data<float>()[i * kK + q] * W.data<float>()[q];
      CHECK(O.data<float>()[i] == doctest::Approx(ref).epsilon(1e-5));
    }
  }
}

TEST_CASE("llvm: a kernel named like another kernel's internal function keeps its symbol") {
  LoweredFunc a = nested_kernel(), b = nested_kernel(), c = nested_kernel();
  b.name = "nested_body";
  c.name = "nested_parallel_0";
  auto ks = codegen::jit_llvm({a, b, c});
  REQUIRE(ks.size() == 3);
  CHECK(ks[1].symbol() == "nested_body");
  CHECK(ks[2].symbol() == "nested_parallel_0");
  for (auto& k : ks) {
    NDArray O(dtype::int32, {16, 8});
    fill<int32_t>(O, [](int64_t) { return int32_t(-1); });
    k(O);
    for (int64_t i = 0; i < 16; ++i)
      for (int64_t j = 0; j < 8; ++j) CHECK(O.data<int32_t>()[i * 8 + j] == (i >= 2 ? i * 10 + j : -1));
  }
}

}  // namespace codegen_llvm
