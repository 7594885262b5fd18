#include "support/pch.hpp"

namespace ir_printer {

using namespace nnvm;
using namespace nnvm::ir;

namespace {
Expr f32(double v) { return FloatImm::make(dtype::float32, v); }
}  // namespace

TEST_CASE("printer golden: a matmul kernel") {
  Var n("n");
  Buffer A("A", dtype::float32, {Expr(64), Expr(32)});
  Buffer B("B", dtype::float32, {Expr(32), n});
  Buffer C("C", dtype::float32, {Expr(64), n});
  Var i("i"), j("j"), k("k");
  Expr c_idx = i * n + j;
  Stmt update = Store::make(C, Load::make(C, c_idx) + Load::make(A, i * 32 + k) * Load::make(B, k * n + j), c_idx);
  Stmt body = For::make(
      i, Expr(0), Expr(64), ForKind::parallel,
      For::make(j, Expr(0), n, ForKind::serial,
                Seq::make({Store::make(C, f32(0.0), c_idx),
                           For::make(k, Expr(0), Expr(32), ForKind::unrolled, update)})));
  LoweredFunc f{"matmul", {A, B, C}, {n}, body, "matmul, default schedule"};
  const char* expected =
      "// matmul, default schedule\n"
      "kernel matmul(A: float32[64, 32], B: float32[32, n], C: float32[64, n]) {\n"
      "  parallel (i, 0, 64) {\n"
      "    for (j, 0, n) {\n"
      "      C[(i*n) + j] = 0.0f\n"
      "      unrolled (k, 0, 32) {\n"
      "        C[(i*n) + j] = C[(i*n) + j] + (A[(i*32) + k]*B[(k*n) + j])\n"
      "      }\n"
      "    }\n"
      "  }\n"
      "}\n";
  CHECK(to_string(f) == expected);
  std::ostringstream os;
  os << f;
  CHECK(os.str() == expected);
}

TEST_CASE("printer gives distinct objects that share a name distinct names, in order of appearance") {
  Var i1("i"), i2("i"), i3("i_1");
  Buffer T1("T", dtype::float32, {Expr(4)}), T2("T", dtype::float32, {Expr(4)});
  Stmt inner = Store::make(T2, Load::make(T1, i1) + Load::make(T1, i3), i2);
  Stmt s = Allocate::make(
      T1, Allocate::make(T2, For::make(i1, Expr(0), Expr(4), ForKind::serial,
                                       For::make(i2, Expr(0), Expr(4), ForKind::vectorized,
                                                 For::make(i3, Expr(0), Expr(2), ForKind::serial, inner)))));
  CHECK(to_string(s) ==
        "allocate T[float32 * 4] in global {\n"
        "  allocate T_1[float32 * 4] in global {\n"
        "    for (i, 0, 4) {\n"
        "      vectorized (i_1, 0, 4) {\n"
        "        for (i_1_1, 0, 2) {\n"
        "          T_1[i_1] = T[i] + T[i_1_1]\n"
        "        }\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
  // Names restart for each printed object, and the same var keeps one name.
  CHECK(to_string(i2 + i1) == "i + i_1");
  CHECK(to_string(i1 + i1) == "i + i");
  // Deterministic: two independent builds of the same IR print the same text.
  auto build = [] {
    Var a("a"), b("a");
    return to_string(Let::make(a, Expr(1), a + b));
  };
  CHECK(build() == build());
  CHECK(build() == "let a = 1 in a + a_1");
}

TEST_CASE("printer shows constants with their types") {
  CHECK(to_string(Expr(3)) == "3");
  CHECK(to_string(Expr(-3)) == "-3");
  CHECK(to_string(IntImm::make(dtype::int32, 3)) == "3i32");
  CHECK(to_string(IntImm::make(dtype::int8, -3)) == "-3i8");
  CHECK(to_string(IntImm::make(dtype::int16, 3)) == "3i16");
  CHECK(to_string(UIntImm::make(dtype::uint8, 7)) == "7u8");
  CHECK(to_string(UIntImm::make(dtype::uint64, 7)) == "7u64");
  CHECK(to_string(f32(1.5)) == "1.5f");
  CHECK(to_string(f32(1.0)) == "1.0f");
  CHECK(to_string(f32(0.1)) == "0.1f");  // shortest text that reads back as the same float
  CHECK(to_string(Expr(1.5)) == "1.5");
  CHECK(to_string(Expr(0.1)) == "0.1");
  CHECK(to_string(Expr(2.0)) == "2.0");
  CHECK(to_string(f32(1e20)) == "1e+20f");
  CHECK(to_string(FloatImm::make(dtype::float16, 1.5)) == "float16(1.5)");
  CHECK(to_string(f32(std::numeric_limits<double>::infinity())) == "float32(inf)");
  CHECK(to_string(Expr(std::nan(""))) == "float64(nan)");
  CHECK(to_string(const_true()) == "true");
  CHECK(to_string(const_false()) == "false");
}

TEST_CASE("printer parenthesizes by precedence") {
  Var a("a"), b("b"), c("c"), d("d");
  CHECK(to_string(a + b + c) == "a + b + c");
  CHECK(to_string(a + (b + c)) == "a + (b + c)");
  CHECK(to_string(a - (b - c)) == "a - (b - c)");
  CHECK(to_string((a + b) * c) == "(a + b)*c");
  CHECK(to_string(a * b + c) == "(a*b) + c");
  CHECK(to_string(a * b * c) == "a*b*c");
  CHECK(to_string(a / b * c) == "(a/b)*c");
  CHECK(to_string(a % (b * c)) == "a%(b*c)");
  CHECK(to_string(a * -3) == "a*(-3)");
  CHECK(to_string(a - -3) == "a - (-3)");
  CHECK(to_string(a < -3) == "a < -3");
  CHECK(to_string(a + b < c) == "a + b < c");
  CHECK(to_string((a < b) == (c < d)) == "(a < b) == (c < d)");
  CHECK(to_string((a < b) && (c < d)) == "a < b && c < d");
  CHECK(to_string((a < b) || ((c < d) && (a < d))) == "a < b || (c < d && a < d)");
  CHECK(to_string(!(a < b)) == "!(a < b)");
  CHECK(to_string(!!(a < b)) == "!!(a < b)");
  CHECK(to_string(Let::make(d, a, d + 1) * 2) == "(let d = a in d + 1)*2");
}

TEST_CASE("printer spells every expression node") {
  Var x("x"), i("i");
  Var f("f", dtype::float32);
  Buffer A("A", dtype::float32, {Expr(16)});
  CHECK(to_string(Ramp::make(i * 4, Expr(1), 4)) == "ramp(i*4, 1, 4)");
  CHECK(to_string(Broadcast::make(f, 8)) == "x8(f)");
  CHECK(to_string(cast(dtype::float32, x)) == "float32(x)");
  CHECK(to_string(cast(dtype::float32, Ramp::make(i, Expr(1), 4))) == "float32x4(ramp(i, 1, 4))");
  CHECK(to_string(call(CallOp::exp, f)) == "exp(f)");
  CHECK(to_string(call(CallOp::pow, f, f32(2.0))) == "pow(f, 2.0f)");
  CHECK(to_string(select(x < 3, f, f32(0.0))) == "select(x < 3, f, 0.0f)");
  CHECK(to_string(Let::make(i, x + 1, i * i)) == "let i = x + 1 in i*i");
  CHECK(to_string(min(x, Expr(3))) == "min(x, 3)");
  CHECK(to_string(max(x, Expr(3))) == "max(x, 3)");
  CHECK(to_string(Load::make(A, Ramp::make(i, Expr(1), 4))) == "A[ramp(i, 1, 4)]");
  CHECK(to_string(x != 3) == "x != 3");
  CHECK(to_string(x >= 3) == "x >= 3");
}

TEST_CASE("printer spells every statement node") {
  Var i("i"), tx("tx"), x("x");
  Buffer A("A", dtype::float32, {Expr(32)});
  Buffer S("S", dtype::float32, {Expr(4), Expr(8)}, MemoryScope::shared);
  Stmt st = Store::make(A, Load::make(S, tx), tx);
  Stmt s = Seq::make({
      For::make(tx, Expr(0), Expr(32), ForKind::thread_binding,
                Allocate::make(S, Seq::make({Barrier::make(), st})), "threadIdx.x"),
      IfThenElse::make(i < 4, st, IfThenElse::make(i < 8, Evaluate::make(call(CallOp::exp, f32(1.0))), st)),
      LetStmt::make(x, i * 2, Store::make(A, f32(2.0), x)),
  });
  CHECK(to_string(s) ==
        "bound (threadIdx.x) (tx, 0, 32) {\n"
        "  allocate S[float32 * 4 * 8] in shared {\n"
        "    barrier(shared)\n"
        "    A[tx] = S[tx]\n"
        "  }\n"
        "}\n"
        "if (i < 4) {\n"
        "  A[tx] = S[tx]\n"
        "} else if (i < 8) {\n"
        "  exp(1.0f)\n"
        "} else {\n"
        "  A[tx] = S[tx]\n"
        "}\n"
        "let x = i*2\n"
        "A[x] = 2.0f\n");
  std::ostringstream os;
  os << st;
  CHECK(os.str() == "A[tx] = S[tx]\n");
}

TEST_CASE("printer shows tensor definitions and tensor-level nodes") {
  auto A = te::placeholder({Expr(64), Expr(32)}, dtype::float32, "A");
  auto B = te::placeholder({Expr(32), Var("n")}, dtype::float32, "B");
  auto k = te::reduce_axis(Expr(32), "k");
  auto C = te::compute({Expr(64), B.shape()[1]},
                       [&](const std::vector<Var>& ax) { return te::sum(A(ax[0], k.var()) * B(k.var(), ax[1]), {k}); },
                       "C");
  CHECK(to_string(A) == "placeholder A: float32[64, 32]");
  CHECK(to_string(B) == "placeholder B: float32[32, n]");
  CHECK(to_string(C) == "C(i, j) = sum(A(i, k)*B(k, j), axis=[k])");
  auto M = te::compute({Expr(64)},
                       [&](const std::vector<Var>& ax) { return te::max_reduce(A(ax[0], k.var()), {k}, f32(0.0)); },
                       "M");
  CHECK(to_string(M) == "M(i) = max(A(i, k), axis=[k], init=0.0f)");

  Var i("i");
  Stmt realize = make_stmt<ProducerRealize>(
      C.node_ptr(), std::vector<Range>{{Expr(0), Expr(64)}, {Expr(0), Expr(8)}}, MemoryScope::local,
      make_stmt<ProducerStore>(C.node_ptr(), A(i, Expr(0)), std::vector<Expr>{i, Expr(0)}));
  CHECK(to_string(realize) == "realize C((0, 64), (0, 8)) in local {\n  C(i, 0) = A(i, 0)\n}\n");
}

}  // namespace ir_printer
