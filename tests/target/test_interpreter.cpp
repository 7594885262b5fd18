#include "support/pch.hpp"
#include "support/check.hpp"

#include <cmath>
#include <random>
#include <utility>

namespace target_interpreter {

using namespace nnvm;
using namespace nnvm::ir;
using target::interpret;
using nnvm_test::error_id;

namespace {

template <class F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

LoweredFunc make_fn(std::string name, std::vector<Buffer> params, Stmt body, std::vector<Var> size_vars = {}) {
  LoweredFunc fn;
  fn.name = std::move(name);
  fn.params = std::move(params);
  fn.size_vars = std::move(size_vars);
  fn.body = std::move(body);
  return fn;
}

Stmt loop(const Var& v, Expr extent, Stmt body, ForKind kind = ForKind::serial) {
  return For::make(v, 0, std::move(extent), kind, std::move(body));
}

template <class T>
NDArray array_of(const std::vector<T>& values) {
  return NDArray::from(values, {int64_t(values.size())});
}

// Same bits, or both NaN.
template <class T>
bool same_value(T a, T b) {
  if constexpr (std::is_floating_point_v<T>)
    if (std::isnan(a) && std::isnan(b)) return true;
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// C[i, j] = sum_k A[i, k] * B[k, j] as init + accumulate stores; the row count is `rows`.
Stmt matmul_body(const Buffer& A, const Buffer& B, const Buffer& C, Expr rows, int64_t K, int64_t N) {
  Var i("i"), j("j"), k("k");
  Expr c_index = i * N + j;
  DataType t = C->dtype;
  Stmt init = Store::make(C, make_zero(t), c_index);
  Stmt update = Store::make(C, Load::make(C, c_index) + Load::make(A, i * K + k) * Load::make(B, k * N + j), c_index);
  return loop(i, rows, loop(j, N, Seq::make({init, loop(k, K, update)})));
}

template <class T>
std::vector<T> reference_matmul(const std::vector<T>& a, const std::vector<T>& b, int64_t M, int64_t K, int64_t N) {
  std::vector<T> c(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T acc = 0;
      for (int64_t k = 0; k < K; ++k) acc = T(acc + T(a[size_t(i * K + k)] * b[size_t(k * N + j)]));
      c[size_t(i * N + j)] = acc;
    }
  return c;
}

}  // namespace

TEST_CASE("interpreter: float32 matmul loop nest matches a plain loop exactly") {
  const int64_t M = 32, K = 48, N = 40;
  Buffer A("A", dtype::float32, {M, K}), B("B", dtype::float32, {K, N}), C("C", dtype::float32, {M, N});
  LoweredFunc fn = make_fn("matmul", {A, B, C}, matmul_body(A, B, C, M, K, N));
  // Quarter-integers keep every product and partial sum exact, so FMA contraction in either
  // the interpreter or the reference cannot make them differ.
  std::mt19937 rng(1);
  std::uniform_int_distribution<int> q(-12, 12);
  std::vector<float> a(size_t(M * K)), b(size_t(K * N));
  for (auto& x : a) x = float(q(rng)) / 4;
  for (auto& x : b) x = float(q(rng)) / 4;
  NDArray na = NDArray::from(a, {M, K}), nb = NDArray::from(b, {K, N}), nc(dtype::float32, {M, N});
  interpret(fn, na, nb, nc);
  std::vector<float> expect = reference_matmul(a, b, M, K, N);
  auto got = nc.values<float>();
  CHECK(std::equal(got.begin(), got.end(), expect.begin()));
}

TEST_CASE("interpreter: int32 matmul with a symbolic row count bound from the arguments") {
  const int64_t K = 6, N = 5;
  Var n("n");
  Buffer A("A", dtype::int32, {n, K}), B("B", dtype::int32, {K, N}), C("C", dtype::int32, {n, N});
  LoweredFunc fn = make_fn("matmul_n", {A, B, C}, matmul_body(A, B, C, n, K, N), {n});
  for (int64_t rows : {1, 3, 7}) {
    std::vector<int32_t> a(size_t(rows * K)), b(size_t(K * N));
    for (size_t x = 0; x < a.size(); ++x) a[x] = int32_t(x * 7 % 11) - 5;
    for (size_t x = 0; x < b.size(); ++x) b[x] = int32_t(x * 5 % 13) - 6;
    NDArray na = NDArray::from(a, {rows, K}), nb = NDArray::from(b, {K, N}), nc(dtype::int32, {rows, N});
    interpret(fn, na, nb, nc);
    std::vector<int32_t> expect = reference_matmul(a, b, rows, K, N);
    auto got = nc.values<int32_t>();
    CHECK(std::equal(got.begin(), got.end(), expect.begin()));
  }
}

TEST_CASE("interpreter: vector loads, stores, broadcast, select and cast") {
  const int64_t n = 64;
  const int L = 8;
  Buffer A("A", dtype::float32, {n}), B("B", dtype::float32, {n}), I("I", dtype::int32, {n});
  Buffer G("G", dtype::int64, {n}), C("C", dtype::float32, {n}), T("T", dtype::float32, {n});
  Buffer P("P", dtype::float32, {n}), M("M", dtype::boolean, {n}), Q("Q", dtype::int32, {n});
  Var i("i");
  Expr ramp = Ramp::make(i * L, 1, L);
  Expr a = Load::make(A, ramp), b = Load::make(B, ramp);
  // C = a > b ? a * 2 : float(I)
  Stmt select_store = Store::make(C, select(a > b, a * Broadcast::make(2.0f, L), cast(dtype::float32, Load::make(I, ramp))), ramp);
  // T = 8x8 transpose of A through a stride-8 ramp
  Stmt transpose = Store::make(T, Load::make(A, Ramp::make(i, Expr(int64_t(8)), L)), ramp);
  // P = A gathered through the permutation G, then squared through a vector let
  Var g("g", dtype::float32.with_lanes(L));
  Stmt gather = Store::make(P, Let::make(g, Load::make(A, Load::make(G, ramp)), g * g), ramp);
  Stmt mask = Store::make(M, a < b, ramp);
  Stmt to_int = Store::make(Q, cast(dtype::int32, a * 4.0f), ramp);
  LoweredFunc fn = make_fn("vec", {A, B, I, G, C, T, P, M, Q},
                           loop(i, n / L, Seq::make({select_store, transpose, gather, mask, to_int})));

  std::vector<float> va(n), vb(n);
  std::vector<int32_t> vi(n);
  std::vector<int64_t> vg(n);
  for (int64_t k = 0; k < n; ++k) {
    va[size_t(k)] = float(k % 9) * 0.75f - 3.1f;
    vb[size_t(k)] = float(k % 5) - 2.0f;
    vi[size_t(k)] = int32_t(k * 3 - 50);
    vg[size_t(k)] = (k * 37 + 11) % n;
  }
  NDArray na = array_of(va), nb = array_of(vb), ni = array_of(vi), ng = array_of(vg);
  NDArray nc(dtype::float32, {n}), nt(dtype::float32, {n}), np(dtype::float32, {n}), nm(dtype::boolean, {n}),
      nq(dtype::int32, {n});
  interpret(fn, na, nb, ni, ng, nc, nt, np, nm, nq);
  for (size_t k = 0; k < size_t(n); ++k) {
    float expect_c = va[k] > vb[k] ? va[k] * 2.0f : float(vi[k]);
    CHECK(nc.values<float>()[k] == expect_c);
    CHECK(nt.values<float>()[k] == va[(k % 8) * 8 + k / 8]);
    float gathered = va[size_t(vg[k])];
    CHECK(np.values<float>()[k] == gathered * gathered);
    CHECK(nm.values<bool>()[k] == (va[k] < vb[k]));
    CHECK(nq.values<int32_t>()[k] == int32_t(va[k] * 4.0f));
  }
}

TEST_CASE("interpreter: 64-lane and wider vectors") {
  for (int lanes : {64, 100}) {
    Buffer A("A", dtype::int16, {lanes}), B("B", dtype::int16, {lanes});
    // B = reverse(A) + 1000, wrapping at 16 bits
    Expr rev = Load::make(A, Ramp::make(Expr(int64_t(lanes - 1)), Expr(int64_t(-1)), lanes));
    Stmt body = Store::make(B, rev + Broadcast::make(IntImm::make(dtype::int16, 1000), lanes),
                            Ramp::make(Expr(int64_t(0)), Expr(int64_t(1)), lanes));
    LoweredFunc fn = make_fn("wide", {A, B}, body);
    std::vector<int16_t> va(static_cast<size_t>(lanes));
    for (int k = 0; k < lanes; ++k) va[size_t(k)] = int16_t(32000 - 700 * k);
    NDArray na = array_of(va), nb(dtype::int16, {lanes});
    interpret(fn, na, nb);
    for (int k = 0; k < lanes; ++k)
      CHECK(nb.values<int16_t>()[size_t(k)] == int16_t(int32_t(va[size_t(lanes - 1 - k)]) + 1000));
  }
}

TEST_CASE("interpreter: scratch allocations") {
  Var n("n"), i("i");
  Buffer A("A", dtype::float32, {n}), B("B", dtype::float32, {n});
  Buffer T("T", dtype::float32, {n}, MemoryScope::local);
  SUBCASE("written, then read reversed") {
    Stmt fill = loop(i, n, Store::make(T, Load::make(A, i) * 2.0f, i));
    Var j("j");
    Stmt read = loop(j, n, Store::make(B, Load::make(T, n - 1 - j), j));
    LoweredFunc fn = make_fn("scratch", {A, B}, Allocate::make(T, Seq::make({fill, read})), {n});
    std::vector<float> va{1.5f, -2.0f, 3.25f, 0.5f, 9.0f};
    NDArray na = array_of(va), nb(dtype::float32, {5});
    interpret(fn, na, nb);
    for (size_t k = 0; k < 5; ++k) CHECK(nb.values<float>()[k] == va[4 - k] * 2.0f);
  }
  SUBCASE("an allocation inside a loop is fresh in every iteration") {
    Buffer acc("acc", dtype::float32, {1}, MemoryScope::local);
    Stmt body = Seq::make({Store::make(acc, Load::make(A, i), 0),
                           Store::make(B, Load::make(acc, 0) + 1.0f, i)});
    LoweredFunc fn = make_fn("fresh", {A, B}, loop(i, n, Allocate::make(acc, body)), {n});
    NDArray na = array_of(std::vector<float>{1, 2, 3}), nb(dtype::float32, {3});
    interpret(fn, na, nb);
    CHECK(nb.values<float>()[2] == 4.0f);
  }
  SUBCASE("reading scratch before writing it gives NaN or garbage") {
    Buffer U("U", dtype::int32, {n}, MemoryScope::local), Bi("Bi", dtype::int32, {n});
    Stmt body = Allocate::make(T, Allocate::make(U, loop(i, n, Seq::make({Store::make(B, Load::make(T, i), i),
                                                                         Store::make(Bi, Load::make(U, i), i)}))));
    LoweredFunc fn = make_fn("uninit", {B, Bi}, body, {n});
    NDArray nb(dtype::float32, {4}), ni(dtype::int32, {4});
    interpret(fn, nb, ni);
    for (size_t k = 0; k < 4; ++k) {
      CHECK(std::isnan(nb.values<float>()[k]));
      CHECK(ni.values<int32_t>()[k] == int32_t(0xCDCDCDCDu));
    }
  }
}

namespace {
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
    case CallOp::copysign: return std::copysign(x, y);
    case CallOp::isnan:
    case CallOp::isinf:
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
void check_float_calls() {
  const std::vector<T> xs{T(-2.5), T(-1), T(-0.3), T(-0.0), T(0.2), T(0.5), T(0.999), T(1), T(1.5), T(2.5),
                          T(3.7), T(10), std::numeric_limits<T>::infinity(), std::numeric_limits<T>::quiet_NaN()};
  std::vector<T> ys(xs.size());
  for (size_t k = 0; k < xs.size(); ++k) ys[k] = xs[(k * 5 + 3) % xs.size()];
  const int64_t n = int64_t(xs.size());
  DataType t = dtype_v<T>;
  for (int o = 0; o <= int(CallOp::copysign); ++o) {
    CallOp op = CallOp(o);
    CAPTURE(call_op_name(op));
    CAPTURE(t);
    bool predicate = op == CallOp::isnan || op == CallOp::isinf;
    Buffer X("X", t, {n}), Y("Y", t, {n}), Out("Out", predicate ? dtype::boolean : t, {n});
    Var i("i");
    Expr x = Load::make(X, i), y = Load::make(Y, i);
    Expr value = call_op_arity(op) == 2 ? call(op, x, y) : call(op, x);
    LoweredFunc fn = make_fn("call", {X, Y, Out}, loop(i, n, Store::make(Out, value, i)));
    NDArray nx = array_of(xs), ny = array_of(ys), nout(Out->dtype, {n});
    interpret(fn, nx, ny, nout);
    for (size_t k = 0; k < xs.size(); ++k) {
      CAPTURE(xs[k]);
      if (op == CallOp::isnan) CHECK(nout.values<bool>()[k] == std::isnan(xs[k]));
      else if (op == CallOp::isinf) CHECK(nout.values<bool>()[k] == std::isinf(xs[k]));
      else CHECK(same_value(nout.values<T>()[k], reference_call(op, xs[k], ys[k])));
    }
  }
}
}  // namespace

TEST_CASE("interpreter: every CallOp matches <cmath> in the argument's precision") {
  check_float_calls<float>();
  check_float_calls<double>();
}

TEST_CASE("interpreter: vector calls and integer abs") {
  Buffer X("X", dtype::float32, {8}), Y("Y", dtype::float32, {8});
  Buffer I("I", dtype::int8, {4}), J("J", dtype::int8, {4});
  Expr ramp8 = Ramp::make(Expr(int64_t(0)), Expr(int64_t(1)), 8), ramp4 = Ramp::make(Expr(int64_t(0)), Expr(int64_t(1)), 4);
  Stmt body = Seq::make({Store::make(Y, call(CallOp::sigmoid, Load::make(X, ramp8)), ramp8),
                         Store::make(J, call(CallOp::abs, Load::make(I, ramp4)), ramp4)});
  LoweredFunc fn = make_fn("vcall", {X, Y, I, J}, body);
  std::vector<float> xs{-4, -1, -0.5f, 0, 0.25f, 1, 3, 20};
  std::vector<int8_t> is{-128, -5, 0, 127};
  NDArray nx = array_of(xs), ny(dtype::float32, {8}), ni = array_of(is), nj(dtype::int8, {4});
  interpret(fn, nx, ny, ni, nj);
  for (size_t k = 0; k < 8; ++k) CHECK(ny.values<float>()[k] == 1.0f / (1.0f + std::exp(-xs[k])));
  for (size_t k = 0; k < 4; ++k) CHECK(nj.values<int8_t>()[k] == int8_t(std::abs(int(is[k]))));
}

namespace {
// Runs out = a op b elementwise for every binary arithmetic op and compares with C semantics:
// operands promoted, result converted back (so narrow types wrap), division truncating.
template <class T>
void check_int_arith(std::vector<T> a, std::vector<T> b) {
  const int64_t n = int64_t(a.size());
  DataType t = dtype_v<T>;
  Buffer A("A", t, {n}), B("B", t, {n});
  Var i("i");
  Expr x = Load::make(A, i), y = Load::make(B, i);
  // The last two check that intermediate results wrap too, not just stored ones.
  std::vector<Expr> exprs{x + y, x - y, x * y, x / y, x % y, min(x, y), max(x, y), (x + y) / 3, select(x * y < 0, x, y)};
  std::vector<Buffer> outs;
  std::vector<Stmt> stores;
  for (size_t e = 0; e < exprs.size(); ++e) {
    outs.emplace_back("O" + std::to_string(e), t, std::vector<Expr>{Expr(n)});
    stores.push_back(Store::make(outs.back(), exprs[e], i));
  }
  std::vector<Expr> compares{x == y, x != y, x < y, x <= y, x > y, x >= y};
  for (size_t e = 0; e < compares.size(); ++e) {
    outs.emplace_back("C" + std::to_string(e), dtype::boolean, std::vector<Expr>{Expr(n)});
    stores.push_back(Store::make(outs.back(), compares[e], i));
  }
  std::vector<Buffer> params{A, B};
  params.insert(params.end(), outs.begin(), outs.end());
  LoweredFunc fn = make_fn("arith", params, loop(i, n, Seq::make(stores)));
  std::vector<NDArray> arrays;
  arrays.push_back(array_of(a));
  arrays.push_back(array_of(b));
  for (auto& o : outs) arrays.emplace_back(o->dtype, std::vector<int64_t>{n});
  std::vector<BufferView> views;
  for (auto& arr : arrays) views.push_back(arr.view());
  interpret(fn, views);
  using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  for (size_t k = 0; k < a.size(); ++k) {
    CAPTURE(t);
    CAPTURE(+a[k]);
    CAPTURE(+b[k]);
    W p = W(a[k]), q = W(b[k]);
    // Add, sub and mul go through uint64 so that int64 wraps instead of overflowing here.
    T sum = T(uint64_t(p) + uint64_t(q)), product = T(uint64_t(p) * uint64_t(q));
    T expect[] = {sum, T(uint64_t(p) - uint64_t(q)), product, T(p / q), T(p % q), a[k] < b[k] ? a[k] : b[k],
                  a[k] > b[k] ? a[k] : b[k], T(W(sum) / W(3)), std::cmp_less(product, 0) ? a[k] : b[k]};
    for (size_t e = 0; e < exprs.size(); ++e) CHECK(+arrays[2 + e].values<T>()[k] == +expect[e]);
    bool expect_cmp[] = {a[k] == b[k], a[k] != b[k], a[k] < b[k], a[k] <= b[k], a[k] > b[k], a[k] >= b[k]};
    for (size_t e = 0; e < compares.size(); ++e) CHECK(arrays[2 + exprs.size() + e].values<bool>()[k] == expect_cmp[e]);
  }
}
}  // namespace

TEST_CASE("interpreter: integer arithmetic wraps narrow types and truncates division") {
  check_int_arith<int8_t>({100, -128, -7, 7, -128, 127, 0, 4}, {100, -1, 2, -2, 3, -128, 5, 4});
  check_int_arith<uint8_t>({200, 3, 255, 17, 0}, {100, 5, 255, 4, 9});
  check_int_arith<int16_t>({30000, -7, -32768, 255}, {30000, 3, -1, -256});
  check_int_arith<uint16_t>({65535, 1, 40000}, {65535, 2, 3});
  check_int_arith<int32_t>({-7, 7, 2000000000, -2147483647 - 1}, {2, -2, 3, -1});
  check_int_arith<uint32_t>({4000000000u, 3u, 0u}, {3u, 5u, 7u});
  check_int_arith<int64_t>({-7, int64_t(1) << 62, -123456789012345, -3}, {2, 4, -1000, -3});
  check_int_arith<uint64_t>({~uint64_t(0), 5, 9}, {3, 2, 9});
}

namespace {
// Float arithmetic in the type's own precision, min/max as the contract defines them (a NaN
// operand gives NaN), a*b + c fused, Mod as fmod, and a scalar Let.
template <class T>
void check_float_arith() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<T> dist(T(-3), T(3));
  std::vector<T> a{T(1), std::numeric_limits<T>::quiet_NaN(), T(-0.0), T(5.5), T(-7.25)};
  std::vector<T> b{std::numeric_limits<T>::quiet_NaN(), T(1), T(0.0), T(-2), T(0)};
  for (int k = 0; k < 40; ++k) {
    a.push_back(dist(rng));
    b.push_back(dist(rng));
  }
  const int64_t n = int64_t(a.size());
  DataType t = dtype_v<T>;
  Buffer A("A", t, {n}), B("B", t, {n});
  Var i("i"), w("w", t);
  Expr x = Load::make(A, i), y = Load::make(B, i);
  std::vector<Expr> exprs{min(x, y), max(x, y), x % y, x / y, x * y + x, Let::make(w, x - y, w * w + y)};
  std::vector<Buffer> params{A, B};
  std::vector<Stmt> stores;
  for (size_t e = 0; e < exprs.size(); ++e) {
    params.emplace_back("O" + std::to_string(e), t, std::vector<Expr>{Expr(n)});
    stores.push_back(Store::make(params.back(), exprs[e], i));
  }
  LoweredFunc fn = make_fn("float_arith", params, loop(i, n, Seq::make(stores)));
  std::vector<BufferView> views;
  std::vector<NDArray> arrays;
  arrays.push_back(array_of(a));
  arrays.push_back(array_of(b));
  for (size_t e = 0; e < exprs.size(); ++e) arrays.emplace_back(t, std::vector<int64_t>{n});
  for (auto& arr : arrays) views.push_back(arr.view());
  interpret(fn, views);
  for (size_t k = 0; k < a.size(); ++k) {
    CAPTURE(t);
    CAPTURE(a[k]);
    CAPTURE(b[k]);
    // min/max propagate a NaN from either side; a*b + c is one fused multiply-add.
    T diff = a[k] - b[k];
    T expect[] = {a[k] < b[k] || a[k] != a[k] ? a[k] : b[k], a[k] > b[k] || a[k] != a[k] ? a[k] : b[k],
                  std::fmod(a[k], b[k]), a[k] / b[k], std::fma(a[k], b[k], a[k]), std::fma(diff, diff, b[k])};
    for (size_t e = 0; e < exprs.size(); ++e) CHECK(same_value(arrays[2 + e].values<T>()[k], expect[e]));
  }
}
}  // namespace

TEST_CASE("interpreter: float arithmetic stays in the type's precision") {
  check_float_arith<float>();
  check_float_arith<double>();
}

TEST_CASE("interpreter: INT64_MIN / -1 wraps instead of trapping") {
  Buffer A("A", dtype::int64, {1}), Q("Q", dtype::int64, {1}), R("R", dtype::int64, {1});
  Expr a = Load::make(A, 0), minus_one = IntImm::make(dtype::int64, -1);
  LoweredFunc fn = make_fn("int64_min", {A, Q, R}, Seq::make({Store::make(Q, a / minus_one, 0), Store::make(R, a % minus_one, 0)}));
  NDArray na = array_of(std::vector<int64_t>{std::numeric_limits<int64_t>::min()}), nq(dtype::int64, {1}), nr(dtype::int64, {1});
  interpret(fn, na, nq, nr);
  CHECK(nq.values<int64_t>()[0] == std::numeric_limits<int64_t>::min());
  CHECK(nr.values<int64_t>()[0] == 0);
}

TEST_CASE("interpreter: casts convert like C") {
  Var i("i");
  const int64_t n = 6;
  Buffer F("F", dtype::float32, {n}), W("W", dtype::int64, {n});
  Buffer to_i8("to_i8", dtype::int8, {n}), wrap_i8("wrap_i8", dtype::int8, {n}), to_u32("to_u32", dtype::uint32, {n});
  Buffer to_b("to_b", dtype::boolean, {n}), back("back", dtype::float64, {n}), to_f32("to_f32", dtype::float32, {n});
  Expr f = Load::make(F, i), w = Load::make(W, i);
  Stmt body = Seq::make({Store::make(to_i8, cast(dtype::int8, f), i), Store::make(wrap_i8, cast(dtype::int8, w), i),
                         Store::make(to_u32, cast(dtype::uint32, w), i), Store::make(to_b, cast(dtype::boolean, f), i),
                         Store::make(back, cast(dtype::float64, cast(dtype::boolean, w)), i),
                         Store::make(to_f32, cast(dtype::float32, w), i)});
  LoweredFunc fn = make_fn("casts", {F, W, to_i8, wrap_i8, to_u32, to_b, back, to_f32}, loop(i, n, body));
  std::vector<float> vf{-2.7f, 2.7f, 0.0f, -0.4f, 100.9f, -127.5f};
  // The last value rounds differently to float32 directly than through float64.
  std::vector<int64_t> vw{300, -1, 0, 255, 16777217, (int64_t(1) << 60) + (int64_t(1) << 36) + 1};
  NDArray nf = array_of(vf), nw = array_of(vw);
  NDArray o1(dtype::int8, {n}), o2(dtype::int8, {n}), o3(dtype::uint32, {n}), o4(dtype::boolean, {n}),
      o5(dtype::float64, {n}), o6(dtype::float32, {n});
  interpret(fn, nf, nw, o1, o2, o3, o4, o5, o6);
  for (size_t k = 0; k < size_t(n); ++k) {
    CHECK(o1.values<int8_t>()[k] == int8_t(vf[k]));
    CHECK(o2.values<int8_t>()[k] == int8_t(vw[k]));
    CHECK(o3.values<uint32_t>()[k] == uint32_t(vw[k]));
    CHECK(o4.values<bool>()[k] == (vf[k] != 0.0f));
    CHECK(o5.values<double>()[k] == (vw[k] != 0 ? 1.0 : 0.0));
    CHECK(o6.values<float>()[k] == float(vw[k]));  // one rounding, not two through double
  }
}

TEST_CASE("interpreter: float16 and bfloat16 round trip through stores and casts") {
  const int64_t n = 7;
  std::vector<float> vf{0.0f, 1.0f, -2.5f, 3.14159f, 65504.0f, 1e-7f, 70000.0f};
  Var i("i"), j("j");
  for (DataType half : {dtype::float16, dtype::bfloat16}) {
    CAPTURE(half);
    Buffer F("F", dtype::float32, {n}), H("H", half, {n}), Back("Back", dtype::float32, {n});
    Buffer Direct("Direct", dtype::float32, {n});
    // H = half(F); Back = float(H) through memory; Direct = float(half(F)) without a store between.
    Stmt body = Seq::make({loop(i, n, Seq::make({Store::make(H, cast(half, Load::make(F, i)), i),
                                                 Store::make(Direct, cast(dtype::float32, cast(half, Load::make(F, i))), i)})),
                           loop(j, n, Store::make(Back, cast(dtype::float32, Load::make(H, j)), j))});
    LoweredFunc fn = make_fn("half", {F, H, Back, Direct}, body);
    NDArray nf = array_of(vf), nh(half, {n}), nback(dtype::float32, {n}), ndirect(dtype::float32, {n});
    interpret(fn, nf, nh, nback, ndirect);
    for (size_t k = 0; k < size_t(n); ++k) {
      CAPTURE(vf[k]);
      uint16_t bits = half == dtype::float16 ? float16(vf[k]).bits : bfloat16(vf[k]).bits;
      float rounded = half == dtype::float16 ? float16::to_float(bits) : bfloat16::to_float(bits);
      uint16_t stored;
      std::memcpy(&stored, static_cast<const std::byte*>(nh.raw()) + 2 * k, 2);
      CHECK(stored == bits);
      CHECK(same_value(nback.values<float>()[k], rounded));
      CHECK(same_value(ndirect.values<float>()[k], rounded));
    }
  }
}

TEST_CASE("interpreter: loop kinds, conditionals, lets and barriers") {
  Var i("i"), v("v", dtype::int32);
  const int64_t n = 12;
  Buffer A("A", dtype::int32, {n}), B("B", dtype::int32, {n});
  for (ForKind kind : {ForKind::serial, ForKind::parallel, ForKind::vectorized, ForKind::unrolled,
                       ForKind::thread_binding}) {
    CAPTURE(for_kind_name(kind));
    // for i in [2, 12): let v = A[i] * 3 in if (i % 2 == 0) B[i] = v else B[i] = -v; barrier
    Expr twice = Load::make(A, i) * IntImm::make(dtype::int32, 3);
    Stmt branch = IfThenElse::make(i % 2 == 0, Store::make(B, v, i), Store::make(B, -v, i));
    Stmt body = Seq::make({LetStmt::make(v, twice, branch), Barrier::make(), Evaluate::make(Load::make(A, i))});
    LoweredFunc fn = make_fn("kinds", {A, B},
                             For::make(i, 2, n - 2, kind, body, kind == ForKind::thread_binding ? "threadIdx.x" : ""));
    std::vector<int32_t> va(n);
    for (size_t k = 0; k < size_t(n); ++k) va[k] = int32_t(k * k) - 20;
    NDArray na = array_of(va), nb(dtype::int32, {n});
    interpret(fn, na, nb);
    for (size_t k = 0; k < size_t(n); ++k) {
      int32_t expect = k < 2 ? 0 : (k % 2 == 0 ? va[k] * 3 : -va[k] * 3);
      CHECK(nb.values<int32_t>()[k] == expect);
    }
  }
}

TEST_CASE("interpreter: a let's value sees the outer binding of the variable it shadows") {
  Buffer A("A", dtype::int64, {1}), V("V", dtype::int64, {4});
  Var x("x"), v("v", dtype::int64.with_lanes(4));
  // let x = A[0] in (let x = x + 1 in x * 10) + x
  Expr a = Load::make(A, 0);
  Expr scalar = Let::make(x, a, Let::make(x, x + 1, x * 10) + x);
  // let v = ramp(A[0], 1, 4) in (let v = v * 2 in v + 1) + v
  Expr ramp = Ramp::make(a, Expr(int64_t(1)), 4);
  Expr vector = Let::make(v, ramp, Let::make(v, v * 2, v + 1) + v);
  Expr all = Ramp::make(Expr(int64_t(0)), Expr(int64_t(1)), 4);
  LoweredFunc fn = make_fn("shadow", {A, V}, Seq::make({Store::make(V, vector, all), Store::make(A, scalar, 0)}));
  NDArray na = array_of(std::vector<int64_t>{5}), nv(dtype::int64, {4});
  interpret(fn, na, nv);
  CHECK(na.values<int64_t>()[0] == (5 + 1) * 10 + 5);
  for (int64_t k = 0; k < 4; ++k) CHECK(nv.values<int64_t>()[size_t(k)] == (5 + k) * 2 + 1 + (5 + k));
}

TEST_CASE("interpreter: a scalar select evaluates only the chosen branch, a vector select both") {
  Var i("i");
  Buffer A("A", dtype::float32, {4}), B("B", dtype::float32, {6});
  // B[i] = i < 4 ? A[i] : -1 over 6 elements: the guarded load is never out of bounds.
  Stmt guarded = loop(i, 6, Store::make(B, select(i < 4, Load::make(A, i), Expr(-1.0f)), i));
  NDArray na = array_of(std::vector<float>{1, 2, 3, 4}), nb(dtype::float32, {6});
  interpret(make_fn("guarded", {A, B}, guarded), na, nb);
  CHECK(nb.values<float>()[3] == 4.0f);
  CHECK(nb.values<float>()[5] == -1.0f);
  Expr ramp = Ramp::make(Expr(int64_t(2)), Expr(int64_t(1)), 4);
  Stmt vector = Store::make(B, select(ramp < Broadcast::make(Expr(int64_t(4)), 4), Load::make(A, ramp),
                                      Broadcast::make(Expr(-1.0f), 4)), ramp);
  CHECK(error_id([&] { interpret(make_fn("vguarded", {A, B}, vector), na, nb); }) == "nnvm.interp.out_of_bounds");
}

TEST_CASE("interpreter: out-of-bounds loads and stores are reported with buffer, index and size") {
  Var i("i");
  Buffer A("A", dtype::float32, {8}), B("B", dtype::float32, {8});
  NDArray na(dtype::float32, {8}), nb(dtype::float32, {8});
  LoweredFunc load_past_end = make_fn("load_oob", {A, B}, loop(i, 9, Store::make(B, Load::make(A, i), i / 2)));
  std::string text = error_text([&] { interpret(load_past_end, na, nb); });
  CHECK(text.find("[nnvm.interp.out_of_bounds]") != std::string::npos);
  CHECK(text.find("buffer A at index 8") != std::string::npos);
  CHECK(text.find("8 elements") != std::string::npos);
  CHECK(text.find("load_oob") != std::string::npos);
  LoweredFunc store_past_end = make_fn("store_oob", {A, B}, loop(i, 8, Store::make(B, Load::make(A, i), i + 1)));
  CHECK(error_text([&] { interpret(store_past_end, na, nb); }).find("store of buffer B at index 8") != std::string::npos);
  LoweredFunc negative = make_fn("neg", {A, B}, loop(i, 8, Store::make(B, Load::make(A, i - 1), i)));
  CHECK(error_id([&] { interpret(negative, na, nb); }) == "nnvm.interp.out_of_bounds");
  Expr ramp = Ramp::make(Expr(int64_t(4)), Expr(int64_t(1)), 8);
  LoweredFunc vec = make_fn("vec_oob", {A, B}, Store::make(B, Load::make(A, Ramp::make(Expr(int64_t(0)), Expr(int64_t(1)), 8)), ramp));
  CHECK(error_id([&] { interpret(vec, na, nb); }) == "nnvm.interp.out_of_bounds");
}

TEST_CASE("interpreter: bad arguments fail with the ids of bind_arguments") {
  Var n("n"), i("i");
  Buffer A("A", dtype::float32, {n, 3}), B("B", dtype::float32, {n, 3});
  LoweredFunc fn = make_fn("copy", {A, B}, loop(i, n * 3, Store::make(B, Load::make(A, i), i)), {n});
  NDArray a(dtype::float32, {2, 3}), b(dtype::float32, {2, 3});
  NDArray wrong_dtype(dtype::float64, {2, 3}), wrong_rank(dtype::float32, {6}), wrong_shape(dtype::float32, {2, 4}),
      other_n(dtype::float32, {5, 3});
  CHECK(error_id([&] { interpret(fn, a, wrong_dtype); }) == "nnvm.call.dtype");
  CHECK(error_id([&] { interpret(fn, a, wrong_rank); }) == "nnvm.call.rank");
  CHECK(error_id([&] { interpret(fn, a, wrong_shape); }) == "nnvm.call.shape");
  CHECK(error_id([&] { interpret(fn, a, other_n); }) == "nnvm.call.size_conflict");
  CHECK(error_id([&] { interpret(fn, a); }) == "nnvm.call.arg_count");
  CHECK(error_id([&] { interpret(fn, a, b.view()); }) == "(no error)");
}

TEST_CASE("interpreter: broken kernels are internal errors") {
  Var i("i"), j("j");
  Buffer A("A", dtype::int32, {4}), B("B", dtype::int32, {4});
  NDArray na = array_of(std::vector<int32_t>{4, 5, 6, 7}), nb(dtype::int32, {4});
  SUBCASE("unbound variable, including a loop variable used after its loop") {
    LoweredFunc free_var = make_fn("free", {A, B}, loop(i, 4, Store::make(B, Load::make(A, j), i)));
    CHECK(error_id([&] { interpret(free_var, na, nb); }) == "nnvm.interp.unbound_var");
    Stmt after = Seq::make({loop(i, 4, Store::make(B, Load::make(A, i), i)), Store::make(B, IntImm::make(dtype::int32, 0), i)});
    CHECK(error_id([&] { interpret(make_fn("after", {A, B}, after), na, nb); }) == "nnvm.interp.unbound_var");
  }
  SUBCASE("a reduction that lowering did not remove") {
    IterVar k(Var("k"), Range{0, 4}, IterKind::reduce);
    Expr sum = Reduce::make(Combiner::sum, Load::make(A, k.var()), {k});
    LoweredFunc fn = make_fn("unlowered", {A, B}, Store::make(B, sum, 0));
    CHECK(error_id([&] { interpret(fn, na, nb); }) == "nnvm.interp.unlowered");
  }
  SUBCASE("a buffer that is neither a parameter nor allocated") {
    Buffer stray("stray", dtype::int32, {4});
    LoweredFunc fn = make_fn("stray", {A, B}, loop(i, 4, Store::make(B, Load::make(stray, i), i)));
    CHECK(error_id([&] { interpret(fn, na, nb); }) == "nnvm.interp.unbound_buffer");
  }
  SUBCASE("integer division by zero is a user error naming the kernel") {
    NDArray zeros(dtype::int32, {4});
    LoweredFunc fn = make_fn("divide", {A, B}, loop(i, 4, Store::make(B, Load::make(A, i) / Load::make(B, i), i)));
    CHECK(error_id([&] { interpret(fn, na, zeros); }) == "nnvm.interp.div_by_zero");
    CHECK(error_text([&] { interpret(fn, na, zeros); }).find("kernel divide") != std::string::npos);
    CHECK_THROWS_AS(interpret(fn, na, zeros), UserError);
  }
}

}  // namespace target_interpreter
