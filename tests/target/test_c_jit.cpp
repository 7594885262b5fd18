#include "support/pch.hpp"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <thread>

#include "nnvm/target/c_jit.hpp"

namespace target_c_jit {

using namespace nnvm;
using namespace nnvm::ir;
using target::Kernel;

namespace {

Expr f32(double v) { return make_const(dtype::float32, v); }
Expr idx(int64_t v) { return make_const(dtype::index, double(v)); }

// C[i, j] = sum_k A[i, k] * B[k, j] with a parallel i loop and a per-iteration accumulator.
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
  return {"matmul", {A, B, C}, {}, body, "test matmul, parallel i"};
}

// Vectorized elementwise over symbolic n, 8 lanes, with a scalar tail loop:
//   Y = x > 0 ? x * 2 : exp(x);  Z = int32(x * 4) / 3 (lane-wise integer division);
//   R = reversed 8-lane groups of X (a stride -1 gather); M = min(x, 0.5) when !(x < -1) else -1.
LoweredFunc elementwise_kernel() {
  Var n("n");
  Buffer X("X", dtype::float32, {n}), Y("Y", dtype::float32, {n}), Z("Z", dtype::int32, {n}),
      R("R", dtype::float32, {n}), M("M", dtype::float32, {n});
  auto body_for = [&](Expr index, Expr gather_index) {
    Expr x = Load::make(X, index);
    std::vector<Stmt> s;
    s.push_back(Store::make(Y, select(x > 0.0f, x * 2.0f, call(CallOp::exp, x)), index));
    s.push_back(Store::make(Z, cast(dtype::int32, x * 4.0f) / 3, index));
    s.push_back(Store::make(R, Load::make(X, gather_index), index));
    s.push_back(Store::make(M, select(!(x < -1.0f), min(x, 0.5f), x * 0.0f - 1.0f), index));
    return Seq::make(s);
  };
  Var io("i.outer"), t("i.tail");
  Expr base = io * 8;
  Stmt vec = For::make(io, 0, n / 8, ForKind::parallel,
                       body_for(Ramp::make(base, idx(1), 8), Ramp::make(base + 7, idx(-1), 8)));
  Stmt tail = For::make(t, n / 8 * 8, n % 8, ForKind::serial, body_for(t, t));
  return {"elementwise", {X, Y, Z, R, M}, {n}, Seq::make({vec, tail}), "test elementwise, vectorized by 8"};
}

// Two workspace buffers over symbolic n: T = 2 * A, U[0..2n) = (i, -i); B[i] = T[n-1-i] + U[2i+1].
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
  Stmt body = Allocate::make(T, Allocate::make(U, Seq::make({fill_t, fill_u, out})));
  return {"scratch", {A, B}, {n}, body, "test global scratch"};
}

// float16 and bfloat16 storage: H = f16(f32(A) * 0.5 + 1), G = bf16(f32(A) - 3), scalar and x4.
LoweredFunc half_kernel() {
  Var n("n");
  Buffer A("A", dtype::float16, {n}), H("H", dtype::float16, {n}), G("G", dtype::bfloat16, {n});
  auto body_for = [&](Expr index) {
    Expr a = cast(dtype::float32, Load::make(A, index));
    return Seq::make({Store::make(H, cast(dtype::float16, a * 0.5f + 1.0f), index),
                      Store::make(G, cast(dtype::bfloat16, a - 3.0f), index)});
  };
  Var io("io"), t("t");
  Stmt vec = For::make(io, 0, n / 4, ForKind::serial, body_for(Ramp::make(io * 4, idx(1), 4)));
  Stmt tail = For::make(t, n / 4 * 4, n % 4, ForKind::serial, body_for(t));
  return {"half", {A, H, G}, {n}, Seq::make({vec, tail}), "test f16/bf16 storage"};
}

// Integer semantics: uint8 wraps, int32 division truncates, a guarded load past the end, lets.
LoweredFunc integer_kernel() {
  Var n("n");
  Buffer A("A", dtype::uint8, {n}), B("B", dtype::int32, {n}), C("C", dtype::uint8, {n}), D("D", dtype::int32, {n}),
      E("E", dtype::int32, {n});
  Var i("i"), s("s", dtype::int32);
  Expr a = Load::make(A, i), b = Load::make(B, i);
  Expr next = select(i < n - 1, Load::make(B, i + 1), make_const(dtype::int32, 100));
  Stmt body = Seq::make({
      Store::make(C, a * a + make_const(dtype::uint8, 200), i),
      LetStmt::make(s, b * 3, Store::make(D, s / 4 + s % 5 + max(s, make_const(dtype::int32, -4)), i)),
      Store::make(E, next, i),
  });
  return {"integers", {A, B, C, D, E}, {n}, For::make(i, 0, n, ForKind::serial, body), "test integer semantics"};
}

// A parallel loop nested in a parallel loop (the inner one runs serially).
LoweredFunc nested_kernel() {
  Buffer O("O", dtype::int32, {idx(16), idx(8)});
  Var i("i"), j("j");
  Stmt body = For::make(i, 0, idx(16), ForKind::parallel,
                        For::make(j, 0, idx(8), ForKind::parallel,
                                  Store::make(O, cast(dtype::int32, i * 10 + j), i * 8 + j)));
  return {"nested", {O}, {}, body, "test nested parallel"};
}

std::vector<LoweredFunc> all_kernels() {
  return {matmul_kernel(), elementwise_kernel(), workspace_kernel(), half_kernel(), integer_kernel(), nested_kernel()};
}

// Every test kernel, compiled in one compiler call.
const std::vector<Kernel>& kernels() {
  static const std::vector<Kernel> k = target::jit_c(all_kernels());
  return k;
}

template <class T>
void fill(NDArray& a, T (*f)(int64_t)) {
  auto v = a.values<T>();
  for (int64_t i = 0; i < int64_t(v.size()); ++i) v[i] = f(i);
}

}  // namespace

TEST_CASE("c_jit: parallel matmul matches a plain loop") {
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
}

TEST_CASE("c_jit: vector select, cast, call, gather and tail") {
  const Kernel& k = kernels()[1];
  for (int64_t n : {int64_t(0), int64_t(5), int64_t(64), int64_t(83)}) {
    NDArray X(dtype::float32, {n}), Y(dtype::float32, {n}), Z(dtype::int32, {n}), R(dtype::float32, {n}),
        M(dtype::float32, {n});
    fill<float>(X, [](int64_t i) { return float(i % 9) * 0.375f - 1.5f; });
    k(X, Y, Z, R, M);
    const float* x = X.data<float>();
    for (int64_t i = 0; i < n; ++i) {
      float xi = x[i];
      CHECK(Y.data<float>()[i] == doctest::Approx(xi > 0 ? xi * 2 : std::exp(xi)).epsilon(1e-6));
      CHECK(Z.data<int32_t>()[i] == int32_t(xi * 4) / 3);
      int64_t src = i < n / 8 * 8 ? i / 8 * 8 + 7 - i % 8 : i;
      CHECK(R.data<float>()[i] == x[src]);
      CHECK(M.data<float>()[i] == (!(xi < -1) ? (xi < 0.5f ? xi : 0.5f) : -1.0f));
    }
  }
}

TEST_CASE("c_jit: global allocations come from the workspace") {
  const Kernel& k = kernels()[2];
  int64_t n = 29;
  int64_t sizes[] = {n};
  auto align = [](uint64_t b) { return (b + 63) / 64 * 64; };
  CHECK(k.workspace_bytes(sizes) == align(4 * n) + align(8 * 2 * n));
  NDArray A(dtype::float32, {n}), B(dtype::float32, {n});
  fill<float>(A, [](int64_t i) { return float(i) + 0.5f; });
  k(A, B);
  for (int64_t i = 0; i < n; ++i) CHECK(B.data<float>()[i] == 2 * A.data<float>()[n - 1 - i] - float(i));

  // Driven through the raw ABI, too little workspace is a status, not a crash.
  void* args[] = {A.raw(), B.raw()};
  CHECK(k.raw_function()(args, sizes, nullptr, 0, nullptr) == NNVM_STATUS_WORKSPACE_TOO_SMALL);
}

TEST_CASE("c_jit: float16 and bfloat16 storage round to nearest even") {
  const Kernel& k = kernels()[3];
  int64_t n = 23;
  NDArray A(dtype::float16, {n}), H(dtype::float16, {n}), G(dtype::bfloat16, {n});
  auto a = A.values<float16>();
  for (int64_t i = 0; i < n; ++i) a[i] = float16(float(i) * 1.37f - 9.0f + (i == 3 ? 70000.0f : 0.0f));
  k(A, H, G);
  for (int64_t i = 0; i < n; ++i) {
    float ai = float(a[i]);
    CHECK(H.values<float16>()[i].bits == float16(ai * 0.5f + 1.0f).bits);
    CHECK(G.values<bfloat16>()[i].bits == bfloat16(ai - 3.0f).bits);
  }
}

TEST_CASE("c_jit: narrow integers wrap, division truncates, guarded loads stay in bounds") {
  const Kernel& k = kernels()[4];
  int64_t n = 17;
  NDArray A(dtype::uint8, {n}), B(dtype::int32, {n}), C(dtype::uint8, {n}), D(dtype::int32, {n}),
      E(dtype::int32, {n});
  fill<uint8_t>(A, [](int64_t i) { return uint8_t(i * 15); });
  fill<int32_t>(B, [](int64_t i) { return int32_t(i * 5 - 40); });
  k(A, B, C, D, E);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t a = A.data<uint8_t>()[i];
    int32_t b = B.data<int32_t>()[i], s = b * 3;
    CHECK(C.data<uint8_t>()[i] == uint8_t(a * a + 200));
    CHECK(D.data<int32_t>()[i] == s / 4 + s % 5 + (s > -4 ? s : -4));
    CHECK(E.data<int32_t>()[i] == (i < n - 1 ? B.data<int32_t>()[i + 1] : 100));
  }
}

TEST_CASE("c_jit: a parallel loop inside a parallel loop") {
  const Kernel& k = kernels()[5];
  NDArray O(dtype::int32, {16, 8});
  std::vector<BufferView> args{O.view()};
  k.call(args, 4);
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j < 8; ++j) CHECK(O.data<int32_t>()[i * 8 + j] == i * 10 + j);
}

TEST_CASE("c_jit: every test kernel compiles with -std=c99 -Wall -Wextra -Werror -pedantic") {
  std::string src = target::emit_c(all_kernels());
  std::string dir = target::detail::cache_dir({});
  target::detail::make_dirs(dir);
  std::string path = dir + "/strict_c_jit_test.c";
  std::ofstream(path) << src;
  const char* cc = std::getenv("CC");
  auto [status, output] = target::detail::run_command(
      str_cat(cc && *cc ? cc : "cc", " -std=c99 -Wall -Wextra -Werror -pedantic -c ", path, " -o ", path, ".o"));
  INFO(output);
  CHECK(status == 0);
}

TEST_CASE("c_jit: wrong arguments are user errors") {
  const Kernel& k = kernels()[2];
  NDArray A(dtype::float32, {8}), B(dtype::float64, {8}), C(dtype::float32, {9}), D(dtype::float32, {8});
  auto id_of = [&](auto&&... args) -> std::string {
    try {
      k(args...);
    } catch (const UserError& e) {
      return e.id();
    }
    return "no error";
  };
  CHECK(id_of(A, B) == "nnvm.call.dtype");
  CHECK(id_of(A, C) == "nnvm.call.size_conflict");
  CHECK(id_of(A) == "nnvm.call.arg_count");
  CHECK(id_of(A, D) == "no error");
}

TEST_CASE("c_jit: batched modules, symbol clashes and the cache") {
  LoweredFunc a = workspace_kernel(), b = workspace_kernel();
  auto ks = target::jit_c({a, b});
  REQUIRE(ks.size() == 2);
  CHECK(ks[0].symbol() == "scratch");
  CHECK(ks[1].symbol() == "scratch_1");
  CHECK(ks[0].library_path() == ks[1].library_path());
  CHECK(target::jit_c(a).code() == target::jit_c(a).code());
  NDArray A(dtype::float32, {4}), B(dtype::float32, {4});
  fill<float>(A, [](int64_t i) { return float(i); });
  ks[1](A, B);
  CHECK(B.data<float>()[0] == 6.0f);
}

TEST_CASE("c_jit: compiler failures report the compiler's output and the source") {
  target::CJitOptions opt;
  opt.extra_flags = {"-fnnvm-no-such-flag"};
  try {
    target::jit_c(nested_kernel(), opt);
    FAIL("expected a compile failure");
  } catch (const BackendError& e) {
    CHECK(e.id() == "nnvm.codegen.c.compile_failed");
    std::string msg = e.what();
    CHECK(msg.find("nnvm-no-such-flag") != std::string::npos);
    CHECK(msg.find(".c") != std::string::npos);
  }
}

TEST_CASE("c_jit: thread-bound loops are rejected") {
  Buffer O("O", dtype::float32, {idx(4)});
  Var t("tx");
  LoweredFunc f{"bound", {O}, {}, For::make(t, 0, idx(4), ForKind::thread_binding, Store::make(O, f32(1), t), "threadIdx.x"), ""};
  try {
    target::jit_c(f);
    FAIL("expected an error");
  } catch (const BackendError& e) {
    CHECK(e.id() == "nnvm.codegen.thread_binding");
  }
}

TEST_CASE("thread pool: back-to-back loops with spinning and with sleeping workers") {
  // Spinning workers see the next job without being woken; sleeping ones (spin 0) are woken.
  // Either way every element is counted exactly once in every loop.
  for (int spin_us : {0, 50, 100000}) {
    runtime::ThreadPool pool(3, spin_us);
    std::vector<std::atomic<int>> count(97);
    auto body = [](int64_t b, int64_t e, void* c) -> int32_t {
      auto* v = static_cast<std::vector<std::atomic<int>>*>(c);
      for (int64_t i = b; i < e; ++i) (*v)[size_t(i)]++;
      return 0;
    };
    for (int rep = 0; rep < 2000; ++rep) REQUIRE(pool.parallel_for(97, body, &count, 1 + rep % 3) == 0);
    for (auto& c : count) CHECK(c.load() == 2000);
  }
}

TEST_CASE("thread pool: chunks cover the range once, nest serially, propagate status") {
  using runtime::ThreadPool;
  ThreadPool pool(4);
  struct Hits {
    std::vector<std::atomic<int>> count = std::vector<std::atomic<int>>(1000);
    std::atomic<int> nested_calls{0};
    std::set<std::thread::id> threads;
    std::mutex m;
  } hits;
  auto body = [](int64_t b, int64_t e, void* c) -> int32_t {
    auto* h = static_cast<Hits*>(c);
    for (int64_t i = b; i < e; ++i) h->count[size_t(i)]++;
    std::lock_guard<std::mutex> lk(h->m);
    h->threads.insert(std::this_thread::get_id());
    return 0;
  };
  CHECK(pool.parallel_for(1000, body, &hits) == 0);
  for (auto& c : hits.count) CHECK(c.load() == 1);
  CHECK(hits.threads.size() <= 4);

  // A parallel_for inside a chunk runs serially: one call covering the whole inner range.
  struct Outer {
    ThreadPool* pool;
    std::atomic<int> inner_calls{0}, wrong{0};
  } outer{&pool};
  auto outer_body = [](int64_t b, int64_t e, void* c) -> int32_t {
    auto* o = static_cast<Outer*>(c);
    for (int64_t i = b; i < e; ++i) {
      int32_t st = o->pool->parallel_for(
          50,
          [](int64_t ib, int64_t ie, void* cc) -> int32_t {
            auto* oo = static_cast<Outer*>(cc);
            oo->inner_calls++;
            if (ib != 0 || ie != 50) oo->wrong++;
            return 0;
          },
          o);
      if (st) return st;
    }
    return 0;
  };
  CHECK(pool.parallel_for(8, outer_body, &outer) == 0);
  CHECK(outer.inner_calls.load() == 8);
  CHECK(outer.wrong.load() == 0);

  // The failing chunk's status comes back, through the C entry point too.
  auto failing = [](int64_t b, int64_t e, void*) -> int32_t { return b <= 500 && 500 < e ? 7 : 0; };
  CHECK(pool.parallel_for(1000, failing, nullptr) == 7);
  runtime::PoolRef ref{&pool, 2};
  CHECK(nnvm_pool_parallel_for(&ref, 1000, failing, nullptr) == 7);
  CHECK(nnvm_pool_parallel_for(&ref, 0, failing, nullptr) == 0);
}

TEST_CASE("thread pool: NNVM_NUM_THREADS sets the default size") {
  const char* old = std::getenv("NNVM_NUM_THREADS");
  std::string saved = old ? old : "";
  setenv("NNVM_NUM_THREADS", "3", 1);
  CHECK(runtime::default_num_threads() == 3);
  setenv("NNVM_NUM_THREADS", "zero", 1);
  CHECK(runtime::default_num_threads() >= 1);
  if (old) setenv("NNVM_NUM_THREADS", saved.c_str(), 1);
  else unsetenv("NNVM_NUM_THREADS");
}

}  // namespace target_c_jit
