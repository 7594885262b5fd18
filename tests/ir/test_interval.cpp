#include "support/pch.hpp"

#include "ir/random_ir.hpp"

namespace ir_interval {

using namespace nnvm;
using namespace nnvm::ir;

namespace {
Expr i8(int64_t v) { return IntImm::make(dtype::int8, v); }
}  // namespace

TEST_CASE("const_bound follows arithmetic") {
  Var i("i"), j("j"), y("y");
  IntervalMap r{{i.get(), Interval::range(0, 63)}, {j.get(), Interval::range(0, 7)}, {y.get(), Interval::range(-4, 4)}};
  CHECK(const_bound(Expr(5), r) == Interval::point(5));
  CHECK(const_bound(i * 8 + j, r) == Interval::range(0, 511));
  CHECK(const_bound(i - j, r) == Interval::range(-7, 63));
  CHECK(const_bound(i * y, r) == Interval::range(-252, 252));
  CHECK(const_bound(y * y, r) == Interval::range(0, 16));  // a square is never negative
  CHECK(const_bound(i / 8, r) == Interval::range(0, 7));
  CHECK(const_bound(y / 2, r) == Interval::range(-2, 2));
  CHECK(const_bound(i / y, r) == Interval::range(-63, 63));
  CHECK(const_bound(i % 8, r) == Interval::range(0, 7));
  CHECK(const_bound(j % 16, r) == Interval::range(0, 7));
  CHECK(const_bound(y % 3, r) == Interval::range(-2, 2));
  CHECK(const_bound(min(i, j + 10), r) == Interval::range(0, 17));
  CHECK(const_bound(max(i, j + 10), r) == Interval::range(10, 63));
  CHECK(const_bound(select(i < 3, j, i), r) == Interval::range(0, 63));
  CHECK(const_bound(select(const_true(), j, i), r) == Interval::range(0, 7));
  CHECK(const_bound(cast(dtype::int32, j), r) == Interval::range(0, 7));
  CHECK(const_bound(Ramp::make(i, Expr(2), 4), r) == Interval::range(0, 69));
  CHECK(const_bound(Ramp::make(j, Expr(-2), 4), r) == Interval::range(-6, 7));
  CHECK(const_bound(Broadcast::make(j, 4), r) == Interval::range(0, 7));
  Var t("t");
  CHECK(const_bound(Let::make(t, j * 2, t + 1), r) == Interval::range(1, 15));
}

TEST_CASE("const_bound handles unbounded variables and types") {
  Var i("i"), n("n");
  IntervalMap r{{i.get(), Interval::range(0, 63)}};
  CHECK(const_bound(n, r) == Interval::everything());
  CHECK(const_bound(i + n, r) == Interval::everything());
  CHECK(const_bound(max(n, i), r) == Interval{0, std::nullopt});
  CHECK(const_bound(min(n, i), r) == Interval{std::nullopt, 63});
  CHECK(const_bound(n % 8, r) == Interval::range(-7, 7));
  CHECK(const_bound(i / n, r) == Interval::range(-63, 63));
  // Unsigned, narrow and bool types are within their range.
  Var u("u", dtype::uint8), b("b", dtype::int8);
  CHECK(const_bound(u) == Interval::range(0, 255));
  CHECK(const_bound(b) == Interval::range(-128, 127));
  CHECK(const_bound(u < UIntImm::make(dtype::uint8, 3)) == Interval::range(0, 1));
  // A narrow sum that may wrap can be anything its type holds.
  IntervalMap rb{{b.get(), Interval::range(0, 100)}};
  CHECK(const_bound(b + i8(10), rb) == Interval::range(10, 110));
  CHECK(const_bound(b + i8(100), rb) == Interval::range(-128, 127));
  // A conversion that does not fit wraps.
  CHECK(const_bound(cast(dtype::int8, i * 4), r) == Interval::range(-128, 127));
  CHECK(const_bound(cast(dtype::int8, i), r) == Interval::range(0, 63));
  // Bounds that overflow int64 are dropped, not wrapped.
  Var big("big");
  IntervalMap rbig{{big.get(), Interval::range(0, INT64_MAX / 2 + 1)}};
  CHECK(const_bound(big * 4, rbig) == Interval{0, std::nullopt});
  // Floats are unbounded.
  CHECK(const_bound(FloatImm::make(dtype::float32, 1.0)) == Interval::everything());
}

TEST_CASE("can_prove decides affine comparisons and nothing it cannot prove") {
  Var i("i"), j("j"), n("n");
  IntervalMap r{{i.get(), Interval::range(0, 63)}, {j.get(), Interval::range(0, 7)}};
  CHECK(can_prove(i < 64, r));
  CHECK_FALSE(can_prove(i < 63, r));
  CHECK(can_prove(i >= 0, r));
  CHECK(can_prove(i * 8 + j < i * 8 + 8, r));
  CHECK(can_prove((i * 4 + j) - (j + i * 4) == 0));
  CHECK(can_prove(n + 1 > n));
  CHECK_FALSE(can_prove(n > 0));
  CHECK(can_prove(i != 64, r));
  CHECK(can_prove(!(i > 64), r));
  CHECK(can_prove(i < 64 && j < 8, r));
  CHECK_FALSE(can_prove(i < 64 && j < 7, r));
  CHECK(can_prove(i < 10 || j < 8, r));
  CHECK(can_prove(!(i > 70 || j > 9), r));
  CHECK(can_prove(const_true()));
  CHECK_FALSE(can_prove(const_false()));
  Var f("f", dtype::float32);
  CHECK_FALSE(can_prove(f == f));  // NaN
  // Narrow types: the difference could wrap, so each side is bounded alone.
  Var b("b", dtype::int8);
  IntervalMap rb{{b.get(), Interval::range(0, 100)}};
  CHECK(can_prove(b < i8(101), rb));
  CHECK_FALSE(can_prove(b + i8(100) > b, rb));
}

TEST_CASE("eval_sym_interval bounds index expressions symbolically") {
  Var io("i.outer"), ii("i.inner"), j("j"), n("n"), k("k");
  SymIntervalMap vars{{ii.get(), {Expr(0), Expr(15)}}};
  SymInterval s = eval_sym_interval(io * 16 + ii, vars);
  CHECK(to_string(s.min) == "i.outer*16");
  CHECK(to_string(s.max) == "(i.outer*16) + 15");
  // A variable of the map with symbolic bounds.
  vars[j.get()] = {Expr(0), n - 1};
  s = eval_sym_interval(j * 4 + ii - 1, vars);
  CHECK(to_string(s.min) == "-1");
  CHECK(to_string(s.max) == "(n*4) + 10");
  s = eval_sym_interval(io - ii, vars);
  CHECK(to_string(s.min) == "i.outer - 15");
  CHECK(to_string(s.max) == "i.outer");
  // Division by a positive constant and a remainder that cannot wrap.
  s = eval_sym_interval((io * 16 + ii) / 4, vars);
  CHECK(to_string(s.min) == "i.outer*4");
  CHECK(to_string(s.max) == "((i.outer*16) + 15)/4");  // i.outer may be negative: truncation
  s = eval_sym_interval((io * 16 + ii) / 4, vars, {{io.get(), Interval::range(0, 3)}});
  CHECK(to_string(s.max) == "(i.outer*4) + 3");
  s = eval_sym_interval(ii % 32, vars);
  CHECK(to_string(s.min) == "0");
  CHECK(to_string(s.max) == "15");
  s = eval_sym_interval(ii % 4, vars);
  CHECK(to_string(s.max) == "3");
  // Negative scale swaps the ends; min/max/select combine them.
  s = eval_sym_interval(io - ii * 2, vars);
  CHECK(to_string(s.min) == "i.outer - 30");
  s = eval_sym_interval(min(ii, Expr(4)), vars);
  CHECK(to_string(s.min) == "0");
  CHECK(to_string(s.max) == "4");
  // Constant ranges of other variables decide signs and simplify the ends.
  IntervalMap ranges{{io.get(), Interval::range(0, 3)}};
  s = eval_sym_interval(min(io * 16 + ii, Expr(100)), vars, ranges);
  CHECK(to_string(s.max) == "(i.outer*16) + 15");
  s = eval_sym_interval(ii * io, vars, ranges);
  CHECK(to_string(s.min) == "0");
  CHECK(to_string(s.max) == "i.outer*15");
  // What cannot be bounded is undefined.
  s = eval_sym_interval(ii * k, vars);
  CHECK_FALSE(s.is_bounded());
  Buffer A("A", dtype::int64, {Expr(16)});
  s = eval_sym_interval(Load::make(A, ii), vars);
  CHECK_FALSE(s.min.defined());
  // An expression without relaxed variables is its own point.
  s = eval_sym_interval(io * 2, vars);
  CHECK(s.is_point());
  CHECK(to_string(s.min) == "i.outer*2");
}

TEST_CASE("interval analysis is sound on random expressions") {
  // Every value a random expression takes at points of its variables' ranges lies within its
  // const_bound; a condition can_prove accepts holds at every point; the symbolic interval over
  // x contains every value once y and z are fixed.
  ir_test::RandomExpr gen{std::mt19937_64(7), {Var("x"), Var("y"), Var("z")}, dtype::int64};
  const int64_t lo[] = {0, -4, 0}, hi[] = {7, 4, 15};
  IntervalMap ranges;
  for (int v = 0; v < 3; ++v) ranges[gen.vars[size_t(v)].get()] = Interval::range(lo[v], hi[v]);
  SymIntervalMap sym{{gen.vars[0].get(), {Expr(0), Expr(7)}}};
  int proved = 0, bounded = 0;
  for (int n = 0; n < 1500; ++n) {
    Expr e = gen.gen(3);
    Expr c = gen.cond(2);
    Interval b = const_bound(e, ranges);
    bool provable = can_prove(c, ranges);
    proved += provable;
    SymInterval s = eval_sym_interval(e, sym);
    bounded += s.is_bounded();
    for (int p = 0; p < 16; ++p) {
      ir_test::Env env;
      for (int v = 0; v < 3; ++v) env[gen.vars[size_t(v)].get()] = gen.pick(int(lo[v]), int(hi[v]));
      INFO("expr: ", to_string(e), "  cond: ", to_string(c));
      INFO("x=", env[gen.vars[0].get()], " y=", env[gen.vars[1].get()], " z=", env[gen.vars[2].get()]);
      if (auto val = ir_test::eval(e, env)) {
        CHECK(b.contains(*val));
        if (s.min.defined()) {
          auto smin = ir_test::eval(s.min, env);
          if (smin) CHECK(*smin <= *val);
        }
        if (s.max.defined()) {
          auto smax = ir_test::eval(s.max, env);
          if (smax) CHECK(*val <= *smax);
        }
      }
      if (provable) {
        if (auto cv = ir_test::eval(c, env)) CHECK(*cv == 1);
      }
    }
  }
  // The checks above are only meaningful if the analyses answered often enough.
  CHECK(proved > 30);
  CHECK(bounded > 300);
}

}  // namespace ir_interval
