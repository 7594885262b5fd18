#include "support/pch.hpp"
#include "support/check.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "nnvm/target/c_jit.hpp"

namespace target_c_emitter {

using namespace nnvm;
using namespace nnvm::ir;

namespace {

Expr i64(int64_t v) { return IntImm::make(dtype::index, v); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Odd corners of the C dialect in one kernel: 3-lane (padded) vectors, bool vector logic, float
// vector mod, sigmoid/rsqrt/round/abs, uint16 products, int8 wrap, huge int64 constants, NaN and
// infinity literals, bfloat16 casts, a let, an unused let, an if, a barrier, an evaluate, and
// two loops whose variables share a name (and one named like a C keyword).
LoweredFunc corners_kernel() {
  Var n("n");
  Buffer F("F", dtype::float32, {i64(6)}), G("G", dtype::float32, {i64(6)}), U("U", dtype::uint16, {n}),
      S("S", dtype::int8, {n}), L("L", dtype::int64, {n}), D("D", dtype::float64, {i64(3)}),
      Bf("Bf", dtype::bfloat16, {i64(3)}), Bo("Bo", dtype::boolean, {i64(3)});
  Expr v = Load::make(F, Ramp::make(i64(0), i64(2), 3));  // a stride-2 gather
  Expr w = Load::make(F, Ramp::make(i64(3), i64(1), 3));
  Expr mask = ((v < w) && !(v == w)) || (w > 100.0f);
  Var lv("lv", v.dtype());
  Stmt vec = Seq::make({
      Store::make(G, Let::make(lv, v, select(mask, call(CallOp::fmod, lv, w), call(CallOp::sigmoid, w))),
                  Ramp::make(i64(0), i64(1), 3)),
      Store::make(G, call(CallOp::rsqrt, w) + call(CallOp::round, v) + max(v, w), Ramp::make(i64(3), i64(1), 3)),
      Store::make(Bo, mask, Ramp::make(i64(0), i64(1), 3)),
      Store::make(Bf, cast(dtype::bfloat16, w), Ramp::make(i64(0), i64(1), 3)),
  });
  Var i("i"), i2("i"), kw("int"), unused("unused");
  Expr u = Load::make(U, i);
  Stmt scalar = For::make(i, 0, n, ForKind::serial, Seq::make({
      Store::make(U, u * u, i),
      Store::make(S, Load::make(S, i) * make_const(dtype::int8, 3) + call(CallOp::abs, Load::make(S, i)), i),
      LetStmt::make(unused, i64(1), Store::make(L, i64(INT64_MIN) + i64(5000000000) * i, i)),
      IfThenElse::make(i == 0, Store::make(D, make_const(dtype::float64, NAN), i64(0)),
                       Store::make(D, make_const(dtype::float64, -INFINITY), i64(1))),
      Barrier::make(),
      Evaluate::make(Load::make(L, i)),
  }));
  Stmt again = For::make(i2, 0, n, ForKind::serial,
                         For::make(kw, 0, i64(1), ForKind::serial, Store::make(L, Load::make(L, i2) + kw, i2 + kw)));
  return {"corners", {F, G, U, S, L, D, Bf, Bo}, {n}, Seq::make({vec, scalar, again}), "corner cases\\ of C"};
}


}  // namespace

TEST_CASE("c_emitter: readable, deterministic output") {
  Var n("n"), a("i.outer"), b("i.outer"), c("float");
  Buffer X("X", dtype::float32, {n}), Y("Y.out", dtype::float32, {n});
  Stmt body = For::make(a, 0, n, ForKind::serial,
                        For::make(b, 0, i64(1), ForKind::serial,
                                  For::make(c, 0, i64(1), ForKind::serial,
                                            Store::make(Y, Load::make(X, a + b + c) * 2.0f + 1.0f, a))));
  LoweredFunc f{"my kernel", {X, Y}, {n}, body, "scale by 2, plus 1 (default schedule)"};
  std::string src = target::emit_c(f);
  CHECK(src == target::emit_c(f));
  CHECK(contains(src, "my_kernel: scale by 2, plus 1 (default schedule)"));
  CHECK(contains(src, "int32_t my_kernel(void* const* args, const int64_t* sizes, void* workspace, "
                      "uint64_t workspace_bytes, const nnvm_kernel_env* env) {"));
  CHECK(contains(src, "uint64_t my_kernel_workspace_bytes(const int64_t* sizes) {"));
  CHECK(contains(src, "for (int64_t i_outer = 0; i_outer < n; ++i_outer) {"));
  CHECK(contains(src, "for (int64_t i_outer_1 = 0; i_outer_1 < 1; ++i_outer_1) {"));
  CHECK(contains(src, "for (int64_t float_1 = 0;"));
  CHECK(contains(src, "static int32_t my_kernel_body(const float* restrict X, float* restrict Y_out, "
                      "const int64_t* sizes, void* workspace, uint64_t workspace_bytes, const nnvm_kernel_env* env) {"));
  CHECK(contains(src, "return my_kernel_body((const float*)args[0], (float*)args[1], sizes, workspace, workspace_bytes, env);"));
  CHECK(contains(src, "Y_out[i_outer] = X[i_outer + i_outer_1 + float_1] * 2.0f + 1.0f;"));
  CHECK(contains(src, "#ifndef NNVM_KERNEL_ABI_H"));
  CHECK(nnvm_test::strict_compile(src, "strict_readable") == "");
}

TEST_CASE("c_emitter: a loop extent that binds looser than '<' is parenthesized") {
  Var n("n"), i("i");
  Buffer Y("Y", dtype::float32, {n});
  LoweredFunc f{"clamped", {Y}, {n}, For::make(i, 0, min(n, i64(1)), ForKind::serial, Store::make(Y, 1.0f, i)), ""};
  CHECK(contains(target::emit_c(f), "for (int64_t i = 0; i < (n < 1 ? n : 1); ++i) {"));
}

TEST_CASE("c_emitter: the ABI text is kernel_abi.h's, and both compile together") {
  const std::string& abi = target::kernel_abi_source();
  CHECK(contains(abi, "typedef struct nnvm_kernel_env {\n  void* pool;\n  nnvm_parallel_for_fn parallel_for;\n} nnvm_kernel_env;"));
  CHECK(contains(abi, "NNVM_STATUS_WORKSPACE_TOO_SMALL = 1"));
  // The source tree from the build (not __FILE__, which a compiler cache may make relative).
  std::string src = std::string("#include \"") + NNVM_TEST_SOURCE_DIR + "/include/nnvm/runtime/kernel_abi.h\"\n" + target::emit_c(corners_kernel());
  CHECK(nnvm_test::strict_compile(src, "strict_with_header") == "");
}

TEST_CASE("c_emitter: vectors use typedefs, memcpy for contiguous access, per-lane initializers otherwise") {
  std::string src = target::emit_c(corners_kernel());
  CHECK(contains(src, "typedef float nnvm_float32x3 __attribute__((vector_size(16)));"));
  CHECK(contains(src, "typedef uint8_t nnvm_uint8x3 __attribute__((vector_size(4)));"));
  CHECK(contains(src, "__builtin_memcpy(&"));
  // A vector built lane by lane is one initializer with each lane spelled out (never lane stores
  // into a temporary, which compilers assemble through memory): here the stride-2 gather.
  CHECK(contains(src, "((nnvm_float32x3){F[2 * (0)], F[2 * (1)], F[2 * (2)]})"));
  CHECK(!contains(src, "for (int lane = 0"));
  CHECK(contains(src, "static inline uint16_t nnvm_f32_to_bf16(float f)"));
  CHECK(!contains(src, "nnvm_f32_to_f16"));  // helpers only when used
  CHECK(contains(src, "(-INT64_C(9223372036854775807) - 1)"));
  CHECK(contains(src, "// Kernel corners (corner cases/ of C)"));
  CHECK(nnvm_test::strict_compile(src, "strict_corners") == "");
}

TEST_CASE("c_emitter: corner-case kernel computes what plain C++ computes") {
  auto k = target::jit_c(corners_kernel());
  int64_t n = 4;
  NDArray F(dtype::float32, {6}), G(dtype::float32, {6}), U(dtype::uint16, {n}), S(dtype::int8, {n}),
      L(dtype::int64, {n}), D(dtype::float64, {3}), Bf(dtype::bfloat16, {3}), Bo(dtype::boolean, {3});
  std::vector<float> f = {1.5f, -2.0f, 3.25f, 3.0f, 0.5f, 7.5f};
  std::copy(f.begin(), f.end(), F.data<float>());
  std::vector<uint16_t> u = {300, 65535, 7, 256};
  std::vector<int8_t> s = {100, -128, -3, 50};
  std::copy(u.begin(), u.end(), U.data<uint16_t>());
  std::copy(s.begin(), s.end(), S.data<int8_t>());
  k(F, G, U, S, L, D, Bf, Bo);
  for (int l = 0; l < 3; ++l) {
    float v = f[size_t(2 * l)], w = f[size_t(3 + l)];
    bool mask = ((v < w) && !(v == w)) || (w > 100.0f);
    CHECK(G.data<float>()[l] == doctest::Approx(mask ? std::fmod(v, w) : 1.0f / (1.0f + std::exp(-w))));
    CHECK(G.data<float>()[3 + l] == doctest::Approx(1.0f / std::sqrt(w) + std::nearbyint(v) + (v > w ? v : w)));
    CHECK(Bo.data<bool>()[l] == mask);
    CHECK(Bf.values<bfloat16>()[size_t(l)].bits == bfloat16(w).bits);
  }
  for (int64_t i = 0; i < n; ++i) {
    CHECK(U.data<uint16_t>()[i] == uint16_t(uint32_t(u[size_t(i)]) * u[size_t(i)]));
    int8_t si = s[size_t(i)];
    CHECK(S.data<int8_t>()[i] == int8_t(si * 3 + int8_t(si < 0 ? -si : si)));
    CHECK(L.data<int64_t>()[i] == INT64_MIN + 5000000000 * i + (i == 0 ? 0 : 0));
  }
  CHECK(std::isnan(D.data<double>()[0]));
  CHECK(D.data<double>()[1] == -INFINITY);
}

TEST_CASE("c_emitter: a 16-lane gather is spelled out, 16-lane arithmetic stays a loop, and both compute right") {
  // Y[j..j+16) = max(X[16 * (j..j+16)], 0) as one 16-lane gather and one 16-lane NaN-propagating max.
  Buffer X("X", dtype::float32, {i64(256)}), Y("Y", dtype::float32, {i64(16)});
  Expr gathered = Load::make(X, Ramp::make(i64(0), i64(16), 16));
  Expr zero = Broadcast::make(make_const(dtype::float32, 0.0f), 16);
  Var g("g", gathered.dtype());
  Stmt body = Store::make(Y, Let::make(g, gathered, select(g > zero || g != g, g, zero)), Ramp::make(i64(0), i64(1), 16));
  LoweredFunc f{"gather16", {X, Y}, {}, body, "gather16"};
  std::string src = target::emit_c(f);
  CAPTURE(src);
  CHECK(contains(src, "((nnvm_float32x16){X[16 * (0)], X[16 * (1)]"));
  CHECK(contains(src, "for (int lane = 0; lane < 16; ++lane)"));
  CHECK(nnvm_test::strict_compile(src, "strict_gather16") == "");
  auto k = target::jit_c(f);
  NDArray in(dtype::float32, {256}), out(dtype::float32, {16});
  for (int i = 0; i < 256; ++i) in.data<float>()[i] = float(i % 7) - 3.0f;
  in.data<float>()[16 * 5] = NAN;
  k(in, out);
  for (int l = 0; l < 16; ++l) {
    float x = in.data<float>()[16 * l];
    if (l == 5) CHECK(std::isnan(out.data<float>()[l]));
    else CHECK(out.data<float>()[l] == (x > 0 ? x : 0.0f));
  }
}

TEST_CASE("c_emitter: rejected kernels name the problem") {
  auto id_of = [](const LoweredFunc& f) -> std::string {
    try {
      target::emit_c(f);
    } catch (const Error& e) {
      return e.id();
    }
    return "no error";
  };
  Var n("n"), i("i"), j("j");
  Buffer O("O", dtype::float32, {n});
  Buffer big("big", dtype::float32, {n});
  Stmt private_symbolic = For::make(i, 0, n, ForKind::parallel,
                                    Allocate::make(big, Store::make(O, make_const(dtype::float32, 0), i)));
  CHECK(id_of({"p", {O}, {n}, private_symbolic, ""}) == "nnvm.codegen.allocate_size");
  Buffer tmp("tmp", dtype::float32, {i + 1});
  Stmt loop_sized = For::make(i, 0, n, ForKind::serial, Allocate::make(tmp, Store::make(O, Load::make(tmp, i64(0)), i)));
  CHECK(id_of({"q", {O}, {n}, loop_sized, ""}) == "nnvm.codegen.allocate_size");
  Stmt bound = For::make(j, 0, n, ForKind::thread_binding, Store::make(O, make_const(dtype::float32, 1), j), "blockIdx.x");
  CHECK(id_of({"r", {O}, {n}, bound, ""}) == "nnvm.codegen.thread_binding");
}

}  // namespace target_c_emitter
