// lower::interchange_reductions, which the LLVM back end runs so that an unscheduled reduction
// nest gets a vectorizable innermost loop: the IR it makes (golden), that it changes no value
// (bit for bit against the untouched nest, and against a plain loop), and the nests it must leave
// alone (a loop a schedule marked, a strided output, an update that reads a neighbour).
#include "support/pch.hpp"
#include "support/check.hpp"

#include <cstring>

#include "nnvm/lower/interchange_reductions.hpp"

namespace lower_interchange_reductions {

using namespace nnvm;

namespace {

struct Matmul {
  te::Tensor A = te::placeholder({4, 5}, dtype::float32, "A");
  te::Tensor B = te::placeholder({5, 3}, dtype::float32, "B");
  te::IterVar k = te::reduce_axis(5, "k");
  te::Tensor C = te::compute({4, 3}, [&](auto& v) { return te::sum(A(v[0], k.var()) * B(k.var(), v[1]), {k}); }, "C");
};

ir::LoweredFunc interchanged(ir::LoweredFunc fn) {
  fn.body = lower::interchange_reductions(fn.body);
  return fn;
}

}  // namespace

TEST_CASE("interchange_reductions moves the data-parallel loop inside the reduction loop") {
  Matmul m;
  ir::LoweredFunc fn = lower::lower(schedule::create_schedule(m.C), {m.A, m.B, m.C}, "matmul");
  CHECK(ir::to_string(fn.body) ==
        "for (i, 0, 4) {\n"
        "  for (j, 0, 3) {\n"
        "    C[(i*3) + j] = 0.0f\n"
        "    for (k, 0, 5) {\n"
        "      C[(i*3) + j] = C[(i*3) + j] + (A[(i*5) + k]*B[(k*3) + j])\n"
        "    }\n"
        "  }\n"
        "}\n");
  CHECK(ir::to_string(lower::interchange_reductions(fn.body)) ==
        "for (i, 0, 4) {\n"
        "  for (j, 0, 3) {\n"
        "    C[(i*3) + j] = 0.0f\n"
        "  }\n"
        "  for (k, 0, 5) {\n"
        "    for (j_1, 0, 3) {\n"  // a fresh loop variable, which the printer names apart
        "      C[(i*3) + j_1] = C[(i*3) + j_1] + (A[(i*5) + k]*B[(k*3) + j_1])\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("interchange_reductions keeps every value bit for bit, several reduction loops included") {
  // A 3x3 convolution: three reduction loops (rc, ry, rx) under the output's innermost axis.
  te::Tensor X = te::placeholder({3, 9, 10}, dtype::float32, "X");
  te::Tensor W = te::placeholder({4, 3, 3, 3}, dtype::float32, "W");
  auto rc = te::reduce_axis(3, "rc"), ry = te::reduce_axis(3, "ry"), rx = te::reduce_axis(3, "rx");
  te::Tensor Y = te::compute(
      {4, 7, 8},
      [&](auto& v) {
        return te::sum(X(rc.var(), v[1] + ry.var(), v[2] + rx.var()) * W(v[0], rc.var(), ry.var(), rx.var()), {rc, ry, rx});
      },
      "Y");
  ir::LoweredFunc fn = lower::lower(schedule::create_schedule(Y), {X, W, Y}, "conv");
  ir::LoweredFunc moved = interchanged(fn);
  REQUIRE(ir::to_string(moved.body) != ir::to_string(fn.body));
  NDArray x = nnvm_test::random_array(dtype::float32, {3, 9, 10}, 1), w = nnvm_test::random_array(dtype::float32, {4, 3, 3, 3}, 2);
  NDArray y0(dtype::float32, {4, 7, 8}), y1(dtype::float32, {4, 7, 8});
  target::interpret(fn, x, w, y0);
  target::interpret(moved, x, w, y1);
  CHECK(std::memcmp(y0.raw(), y1.raw(), y0.nbytes()) == 0);
  // And the meaning, against a plain loop.
  std::vector<float> want;
  auto X_ = x.values<float>(), W_ = w.values<float>();
  for (int o = 0; o < 4; ++o)
    for (int h = 0; h < 7; ++h)
      for (int q = 0; q < 8; ++q) {
        float acc = 0;
        for (int c = 0; c < 3; ++c)
          for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx)
              acc += X_[size_t((c * 9 + h + dy) * 10 + q + dx)] * W_[size_t(((o * 3 + c) * 3 + dy) * 3 + dx)];
        want.push_back(acc);
      }
  CHECK(nnvm_test::compare<float>(y1.values<float>(), want).empty());
}

TEST_CASE("interchange_reductions leaves alone what a schedule decided or what it cannot prove") {
  Matmul m;
  // A parallel (or vectorized, unrolled, bound) data-parallel loop is the schedule's choice.
  auto s = schedule::create_schedule(m.C);
  s[m.C].parallel(s[m.C].axis(1));
  ir::Stmt parallel = lower::lower(s, {m.A, m.B, m.C}, "p").body;
  CHECK(ir::to_string(lower::interchange_reductions(parallel)) == ir::to_string(parallel));
  // With i innermost the output is written with stride 3: moving i in gains nothing.
  auto t = schedule::create_schedule(m.C);
  t[m.C].reorder({t[m.C].axis(1), t[m.C].axis(0)});
  ir::Stmt strided = lower::lower(t, {m.A, m.B, m.C}, "t").body;
  CHECK(ir::to_string(lower::interchange_reductions(strided)) == ir::to_string(strided));
  // An update that reads its neighbour X[j+1] depends on the order of j: moving j inside the k
  // loop would read values of a later k.
  ir::Buffer X("X", dtype::float32, {ir::Expr(9)});
  ir::Var j("j"), k("k");
  ir::Stmt neighbour = ir::For::make(
      j, 0, 8, ir::ForKind::serial,
      ir::Seq::make({ir::Store::make(X, ir::Expr(0.0f), j),
                     ir::For::make(k, 0, 4, ir::ForKind::serial,
                                   ir::Store::make(X, ir::Load::make(X, j) + ir::Load::make(X, j + 1), j))}));
  CHECK(ir::to_string(lower::interchange_reductions(neighbour)) == ir::to_string(neighbour));
}

}  // namespace lower_interchange_reductions
