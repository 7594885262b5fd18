#include "support/pch.hpp"

#include "ir/random_ir.hpp"

namespace ir_simplify {

using namespace nnvm;
using namespace nnvm::ir;

namespace {

std::string simp(const Expr& e, const IntervalMap& ranges = {}) { return to_string(simplify(e, ranges)); }
std::string simp(const Stmt& s) { return to_string(simplify(s)); }
Expr i32(int64_t v) { return IntImm::make(dtype::int32, v); }
Expr f32(double v) { return FloatImm::make(dtype::float32, v); }

}  // namespace

TEST_CASE("simplify folds integer constants of every width") {
  CHECK(simp(Expr(3) + 4) == "7");
  CHECK(simp(Expr(3) * Expr(-5) - 2) == "-17");
  CHECK(simp(i32(3) + i32(4)) == "7i32");
  // C truncates toward zero.
  CHECK(simp(Expr(-7) / 2) == "-3");
  CHECK(simp(Expr(-7) % 2) == "-1");
  CHECK(simp(Expr(7) % -2) == "1");
  CHECK(simp(min(Expr(3), Expr(-2))) == "-2");
  CHECK(simp(max(i32(3), i32(-2))) == "3i32");
  // Types narrower than 32 bits wrap.
  Expr a8 = IntImm::make(dtype::int8, 100);
  CHECK(simp(a8 + a8) == "-56i8");
  CHECK(simp(IntImm::make(dtype::int16, 300) * IntImm::make(dtype::int16, 300)) ==
        std::to_string(int16_t(uint16_t(90000 & 0xffff))) + "i16");
  Expr u8 = UIntImm::make(dtype::uint8, 250);
  CHECK(simp(u8 + UIntImm::make(dtype::uint8, 10)) == "4u8");
  CHECK(simp(UIntImm::make(dtype::uint8, 3) - UIntImm::make(dtype::uint8, 5)) == "254u8");
  CHECK(simp(UIntImm::make(dtype::uint32, 7) / UIntImm::make(dtype::uint32, 2)) == "3u32");
  // Division by zero is undefined at run time: it is left alone.
  CHECK(simp(Expr(7) / 0) == "7/0");
  CHECK(simp(Expr(7) % 0) == "7%0");
  CHECK(simp(Expr(3) < 4) == "true");
  CHECK(simp(i32(3) == i32(4)) == "false");
}

TEST_CASE("simplify folds bool logic") {
  Var x("x");
  CHECK(simp(const_true() && const_false()) == "false");
  CHECK(simp(const_true() || const_false()) == "true");
  CHECK(simp(!const_false()) == "true");
  CHECK(simp((x < 3) && const_true()) == "x < 3");
  CHECK(simp((x < 3) && const_false()) == "false");
  CHECK(simp((x < 3) || const_true()) == "true");
  CHECK(simp((x < 3) || const_false()) == "x < 3");
  CHECK(simp(!!(x < 3)) == "x < 3");
  CHECK(simp(!(x < 3)) == "x >= 3");
  CHECK(simp(EQ::make(const_true(), const_false())) == "false");
}

TEST_CASE("simplify folds floats in the dtype's precision") {
  Expr third = simplify(f32(1.0) / f32(3.0));
  REQUIRE(third.as<FloatImm>() != nullptr);
  CHECK(third.as<FloatImm>()->value == double(1.0f / 3.0f));
  CHECK(to_string(third) == "0.33333334f");
  Expr third64 = simplify(Expr(1.0) / Expr(3.0));
  CHECK(third64.as<FloatImm>()->value == 1.0 / 3.0);
  CHECK(simp(Expr(1.5) + Expr(2.25)) == "3.75");
  CHECK(simp(f32(7.5) % f32(2.0)) == "1.5f");
  CHECK(simp(min(f32(1.0), f32(-2.0))) == "-2.0f");
  CHECK(simp(f32(1.0) < f32(2.0)) == "true");
  // Float identities that would be wrong for -0.0 or NaN stay.
  Var x("x", dtype::float32);
  CHECK(simp(x * f32(0.0)) == "x*0.0f");
  CHECK(simp(x + f32(0.0)) == "x + 0.0f");
  CHECK(simp(x - x) == "x - x");
  CHECK(simp(x * f32(1.0)) == "x");
  CHECK(simp(x - f32(0.0)) == "x");
  CHECK(simp(x / f32(1.0)) == "x");
}

TEST_CASE("simplify folds casts of constants") {
  CHECK(simp(cast(dtype::int8, Expr(300))) == "44i8");
  CHECK(simp(cast(dtype::uint8, Expr(-1))) == "255u8");
  CHECK(simp(cast(dtype::float32, Expr(3))) == "3.0f");
  CHECK(simp(cast(dtype::int32, f32(2.7))) == "2i32");
  CHECK(simp(cast(dtype::int32, f32(-2.7))) == "-2i32");
  CHECK(simp(cast(dtype::boolean, Expr(2))) == "true");
  CHECK(simp(cast(dtype::int64, const_true())) == "1");
  CHECK(simp(cast(dtype::float64, f32(0.1))) == to_string(FloatImm::make(dtype::float64, double(0.1f))));
  // Out of range is undefined behaviour in C: not folded.
  CHECK(simp(cast(dtype::int8, f32(1000.0))) == "int8(1000.0f)");
  Var i("i");
  IntervalMap r{{i.get(), Interval::range(0, 100)}};
  CHECK(simp(cast(dtype::int64, cast(dtype::int32, i)), r) == "i");
  CHECK(simp(cast(dtype::int64, cast(dtype::int32, i))) == "int64(int32(i))");
}

TEST_CASE("simplify puts integer index arithmetic in a canonical affine form") {
  Var i("i"), j("j"), x("x"), n("n"), io("i.outer"), ii("i.inner");
  CHECK(simp((i * 4 + j) - (j + i * 4)) == "0");
  CHECK(simp(x * 2 + x * 3) == "x*5");
  CHECK(simp((i + 1) * 4 - 4) == "i*4");
  CHECK(simp(j + i * 4) == "(i*4) + j");
  CHECK(simp(i * 4 + j) == simp(j + i * 4));
  CHECK(simp(x + 0) == "x");
  CHECK(simp(x * 1) == "x");
  CHECK(simp(x * 0) == "0");
  CHECK(simp(x - x) == "0");
  CHECK(simp(x + 5 - 7) == "x - 2");
  CHECK(simp(5 - x) == "5 - x");
  CHECK(simp(0 - x - 3) == "0 - x - 3");
  CHECK(simp((io * 16 + ii) * 64 + j) == "(i.outer*1024) + (i.inner*64) + j");
  // Products of non-constants are terms; their operands are ordered.
  CHECK(simp(n * i + j - i * n) == "j");
  CHECK(simp(i * n + j) == "(i*n) + j");
  // A sum times a single term distributes, so symbolic strides cancel too; a sum times a sum
  // stays one term.
  CHECK(simp((i + 1) * n - n) == "i*n");
  CHECK(simp((io * 16 + ii) * (n * 2) + j) == "(i.outer*n*32) + (i.inner*n*2) + j");
  CHECK(simp((io * 16 + ii) * n - (io * n * 16 + ii * n)) == "0");
  CHECK(simp((i + 1) * (j + 1)) == "(i + 1)*(j + 1)");
  // Narrow types wrap, which affine arithmetic respects.
  Var b("b", dtype::int8);
  CHECK(simp(b * IntImm::make(dtype::int8, 100) + b * IntImm::make(dtype::int8, 100)) == "0i8 - (b*56i8)");
}

TEST_CASE("simplify removes div and mod by constants using known bounds") {
  Var i("i"), j("j"), x("x");
  IntervalMap r{{i.get(), Interval::range(0, 63)}, {j.get(), Interval::range(0, 7)}, {x.get(), Interval::range(0, 7)}};
  CHECK(simp((i * 8 + j) / 8, r) == "i");
  CHECK(simp((i * 8 + j) % 8, r) == "j");
  CHECK(simp((i * 8 + j + 8) / 8, r) == "i + 1");
  CHECK(simp((i * 8 + j + 9) / 8, r) == "((j + 1)/8) + i + 1");  // j + 1 may reach 8
  CHECK(simp((i * 8 + j + 9) % 8, r) == "(j + 1)%8");
  CHECK(simp(x / 8, r) == "0");
  CHECK(simp(x % 8, r) == "x");
  CHECK(simp((i * 16) / 8) == "i*2");  // exact: holds for any sign
  CHECK(simp((i * 16) % 8) == "0");
  CHECK(simp((i / 4) / 2) == "i/8");
  CHECK(simp((i % 16) % 4) == "i%4");
  CHECK(simp(i / 1) == "i");
  CHECK(simp(i % 1) == "0");
  // Without bounds, truncation makes these unsafe.
  CHECK(simp((i * 8 + j) / 8) == "((i*8) + j)/8");
  CHECK(simp((i * 8 + j) % 8) == "((i*8) + j)%8");
}

TEST_CASE("simplify removes min, max, select and comparisons that interval analysis decides") {
  Var i("i"), j("j");
  IntervalMap r{{i.get(), Interval::range(0, 63)}, {j.get(), Interval::range(0, 7)}};
  CHECK(simp(min(i, Expr(100)), r) == "i");
  CHECK(simp(max(i, Expr(100)), r) == "100");
  CHECK(simp(min(i, Expr(100))) == "min(i, 100)");
  CHECK(simp(min(Expr(100), i)) == "min(i, 100)");
  CHECK(simp(min(i + 1, i + 3)) == "i + 1");
  CHECK(simp(max(i, i)) == "i");
  CHECK(simp(min(min(i, Expr(4)), Expr(8))) == "min(i, 4)");
  CHECK(simp(i < 64, r) == "true");
  CHECK(simp(i >= 64, r) == "false");
  CHECK(simp(i * 8 + j < i * 8 + 8, r) == "true");
  CHECK(simp(i < 32, r) == "i < 32");
  Var a("a", dtype::float32), b("b", dtype::float32);
  CHECK(simp(select(i < 100, a, b), r) == "a");
  CHECK(simp(select(i > 100, a, b), r) == "b");
  CHECK(simp(select(i < 10, a, a)) == "a");
  CHECK(simp(select(i < 10, a, b)) == "select(i < 10, a, b)");
  // The true branch knows its condition.
  CHECK(simp(select(i < 10, min(i, Expr(20)), Expr(0))) == "select(i < 10, i, 0)");
}

TEST_CASE("simplify folds broadcasts and ramps") {
  Var i("i");
  CHECK(simp(Broadcast::make(Expr(2), 4) + Broadcast::make(Expr(3), 4)) == "x4(5)");
  CHECK(simp(Broadcast::make(f32(2.0), 4) * Broadcast::make(f32(3.0), 4)) == "x4(6.0f)");
  CHECK(simp(Ramp::make(Expr(0), Expr(1), 4) + Broadcast::make(i, 4)) == "ramp(i, 1, 4)");
  CHECK(simp(Ramp::make(i, Expr(1), 4) + Ramp::make(Expr(2), Expr(3), 4)) == "ramp(i + 2, 4, 4)");
  CHECK(simp(Ramp::make(i, Expr(1), 4) * Broadcast::make(Expr(8), 4)) == "ramp(i*8, 8, 4)");
  CHECK(simp(Ramp::make(i, Expr(1), 4) - Ramp::make(i, Expr(1), 4)) == "x4(0)");
  CHECK(simp(Ramp::make(i, Expr(0), 4)) == "x4(i)");
  IntervalMap r{{i.get(), Interval::range(0, 15)}};
  CHECK(simp(Ramp::make(i * 8, Expr(1), 8) / Broadcast::make(Expr(8), 8), r) == "x8(i)");
  CHECK(simp(Ramp::make(i * 8, Expr(1), 8) % Broadcast::make(Expr(8), 8), r) == "ramp(0, 1, 8)");
  CHECK(simp(Ramp::make(i * 8, Expr(1), 8) / Broadcast::make(Expr(4), 8), r) == "ramp(i*8, 1, 8)/x8(4)");
  CHECK(simp(cast(dtype::float32, Broadcast::make(Expr(2), 4))) == "x4(2.0f)");
}

TEST_CASE("simplify of let expressions substitutes trivial values and drops unused ones") {
  Var x("x"), y("y"), i("i");
  CHECK(simp(Let::make(x, Expr(3), x + i)) == "i + 3");
  CHECK(simp(Let::make(x, i, x * 2)) == "i*2");
  CHECK(simp(Let::make(x, i * i, y)) == "y");
  CHECK(simp(Let::make(x, i * i, x + x)) == "let x = i*i in x*2");
}

TEST_CASE("simplify of statements uses loop ranges and removes dead code") {
  Buffer A("A", dtype::float32, {Expr(64)});
  Var i("i"), j("j");
  auto store = [&](Expr idx) { return Store::make(A, f32(1.0), idx); };
  // Loop ranges bound the body's variables.
  Stmt s = For::make(i, Expr(0), Expr(64), ForKind::serial, store(min(i, Expr(100))));
  CHECK(simp(s) == "for (i, 0, 64) {\n  A[i] = 1.0f\n}\n");
  // A symbolic extent only gives the lower bound.
  Var n("n");
  s = For::make(i, Expr(0), n, ForKind::serial, store(max(i, Expr(0)) + min(i, Expr(5))));
  CHECK(simp(s) == "for (i, 0, n) {\n  A[min(i, 5) + i] = 1.0f\n}\n");
  // Extent 0 disappears, extent 1 becomes a substitution.
  CHECK(simp(For::make(i, Expr(0), Expr(0), ForKind::serial, store(i))) == "");
  CHECK(simp(For::make(i, Expr(3), Expr(1), ForKind::parallel, store(i * 2))) == "A[6] = 1.0f\n");
  // Thread bindings keep their extent-1 loop: the launch shape depends on it.
  CHECK(simp(For::make(i, Expr(0), Expr(1), ForKind::thread_binding, store(i), "threadIdx.x")) ==
        "bound (threadIdx.x) (i, 0, 1) {\n  A[0] = 1.0f\n}\n");
  // Provable ifs go; the kept branch of an undecided if knows its condition.
  Stmt body = IfThenElse::make(i < 100, store(i), store(Expr(0)));
  CHECK(simp(For::make(i, Expr(0), Expr(64), ForKind::serial, body)) == "for (i, 0, 64) {\n  A[i] = 1.0f\n}\n");
  body = IfThenElse::make(i >= 100, store(i), store(Expr(0)));
  CHECK(simp(For::make(i, Expr(0), Expr(64), ForKind::serial, body)) == "for (i, 0, 64) {\n  A[0] = 1.0f\n}\n");
  body = IfThenElse::make(i < 10, store(min(i, Expr(20))));
  CHECK(simp(For::make(i, Expr(0), Expr(64), ForKind::serial, body)) ==
        "for (i, 0, 64) {\n  if (i < 10) {\n    A[i] = 1.0f\n  }\n}\n");
  // An empty then-branch turns the if around.
  CHECK(simp(IfThenElse::make(i < 10, Evaluate::make(Expr(0)), store(i))) == "if (i >= 10) {\n  A[i] = 1.0f\n}\n");
  // Constant Evaluates are dropped, sequences flattened, empty loops removed.
  Stmt seq = Seq::make({Evaluate::make(Expr(0)), store(Expr(1)),
                        make_stmt<Seq>(std::vector<Stmt>{store(Expr(2)), Evaluate::make(Expr(7))}),
                        For::make(j, Expr(0), Expr(8), ForKind::serial, Evaluate::make(Expr(1)))});
  Stmt out = simplify(seq);
  REQUIRE(out.as<Seq>() != nullptr);
  CHECK(out.as<Seq>()->seq.size() == 2);
  CHECK(to_string(out) == "A[1] = 1.0f\nA[2] = 1.0f\n");
  // A let of a constant is substituted; of an expression it is kept with the value's bounds.
  Var x("x");
  CHECK(simp(LetStmt::make(x, Expr(4), store(x * 2))) == "A[8] = 1.0f\n");
  s = For::make(i, Expr(0), Expr(8), ForKind::serial,
                LetStmt::make(x, i * 4, store(min(x, Expr(40)))));
  CHECK(simp(s) == "for (i, 0, 8) {\n  let x = i*4\n  A[x] = 1.0f\n}\n");
}

TEST_CASE("simplify leaves an already simple tree shared") {
  Var i("i");
  Expr e = i * 4 + 1;
  Expr once = simplify(e);
  CHECK(simplify(once).same_as(once));
  Buffer A("A", dtype::float32, {Expr(64)});
  Stmt s = For::make(i, Expr(0), Expr(16), ForKind::serial, Store::make(A, f32(1.0), i * 4 + 1));
  Stmt t = simplify(s);
  CHECK(simplify(t).same_as(t));
}

namespace {

// Simplifies many random expressions over variables with known ranges, and checks at random
// points of those ranges that the simplified expression has the original's value whenever the
// original is defined.
void check_value_preserved(DataType t, uint64_t seed, int count) {
  ir_test::RandomExpr gen{std::mt19937_64(seed), {Var("x", t), Var("y", t), Var("z", t)}, t};
  const int64_t lo[] = {0, -4, 0}, hi[] = {7, 4, 15};
  IntervalMap ranges;
  for (int v = 0; v < 3; ++v) ranges[gen.vars[size_t(v)].get()] = Interval::range(lo[v], hi[v]);
  int compared = 0;
  for (int n = 0; n < count; ++n) {
    Expr e = gen.gen(4);
    Expr s = simplify(e, ranges);
    CHECK(s.dtype() == e.dtype());
    for (int p = 0; p < 24; ++p) {
      ir_test::Env env;
      for (int v = 0; v < 3; ++v) env[gen.vars[size_t(v)].get()] = gen.pick(int(lo[v]), int(hi[v]));
      auto want = ir_test::eval(e, env);
      if (!want) continue;
      auto got = ir_test::eval(s, env);
      ++compared;
      if (!got || *got != *want) {
        INFO("original:   ", to_string(e));
        INFO("simplified: ", to_string(s));
        INFO("x=", env[gen.vars[0].get()], " y=", env[gen.vars[1].get()], " z=", env[gen.vars[2].get()]);
        CHECK(got == want);
        return;
      }
    }
  }
  CHECK(compared > count * 12);
}

}  // namespace

TEST_CASE("simplify never changes the value of an int64 expression") { check_value_preserved(dtype::int64, 1, 3000); }
TEST_CASE("simplify never changes the value of an int32 expression") { check_value_preserved(dtype::int32, 2, 1000); }
TEST_CASE("simplify never changes the value of a wrapping int8 expression") {
  check_value_preserved(dtype::int8, 3, 2000);
}

}  // namespace ir_simplify
