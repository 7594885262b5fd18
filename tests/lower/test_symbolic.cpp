// Symbolic sizes: one kernel, lowered once, runs at every size its arguments bind.
#include "support/pch.hpp"
#include "support/check.hpp"

namespace lower_symbolic {

using namespace nnvm;

TEST_CASE("a scheduled matmul over symbolic sizes runs at many sizes through interpreter and C JIT") {
  ir::Var n("n"), kk("kk"), m("m");
  te::Tensor A = te::placeholder({n, kk}, dtype::float32, "A");
  te::Tensor B = te::placeholder({kk, m}, dtype::float32, "B");
  auto k = te::reduce_axis(kk, "k");
  te::Tensor C = te::compute({n, m}, [&](auto& v) { return te::sum(A(v[0], k.var()) * B(k.var(), v[1]), {k}); }, "C");
  auto s = schedule::create_schedule(C);
  auto st = s[C];
  auto [io, jo, ii, ji] = st.tile(st.axis(0), st.axis(1), 4, 8);
  st.reorder({io, jo, k, ii, ji});
  st.vectorize(ji);
  st.unroll(ii);
  st.parallel(io);
  auto fn = lower::lower(s, {A, B, C}, "matmul_sym");
  REQUIRE(fn.size_vars.size() == 3);
  auto kernel = target::jit_c(fn);

  for (auto [rows, inner, cols] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {5, 3, 17}, {16, 8, 32}, {13, 7, 9}}) {
    NDArray a = nnvm_test::random_array(dtype::float32, {rows, inner}, 3);
    NDArray b = nnvm_test::random_array(dtype::float32, {inner, cols}, 4);
    std::vector<float> want(size_t(rows * cols), 0.0f);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t q = 0; q < inner; ++q)
          want[size_t(i * cols + j)] += a.values<float>()[size_t(i * inner + q)] * b.values<float>()[size_t(q * cols + j)];
    NDArray c1(dtype::float32, {rows, cols}), c2(dtype::float32, {rows, cols});
    target::interpret(fn, a, b, c1);
    kernel(a, b, c2);
    INFO("n=", rows, " kk=", inner, " m=", cols);
    CHECK(nnvm_test::compare<float>(c1.values<float>(), want) == "");
    CHECK(nnvm_test::compare<float>(c2.values<float>(), want) == "");
  }

  // Sizes that disagree between arguments are a clear error, not an out-of-bounds access.
  NDArray a(dtype::float32, {4, 3}), b(dtype::float32, {5, 2}), c(dtype::float32, {4, 2});
  for (auto run : {std::function<void()>([&] { target::interpret(fn, a, b, c); }), std::function<void()>([&] { kernel(a, b, c); })}) {
    try {
      run();
      FAIL("expected nnvm.call.size_conflict");
    } catch (const UserError& e) {
      CHECK(e.id() == "nnvm.call.size_conflict");
      CHECK(std::string(e.what()).find("argument 1 (B)") != std::string::npos);
    }
  }
}

TEST_CASE("an output extent that is an expression of symbolic sizes is checked at call time") {
  ir::Var n("n");
  te::Tensor X = te::placeholder({n}, dtype::float32, "X");
  te::Tensor Y = te::compute({n * 2}, [&](auto& v) { return X(v[0] / 2); }, "Y");
  auto s = schedule::create_schedule(Y);
  auto fn = lower::lower(s, {X, Y}, "repeat2");
  NDArray x = nnvm_test::random_array(dtype::float32, {5}, 9), y(dtype::float32, {10}), bad(dtype::float32, {9});
  target::interpret(fn, x, y);
  for (int64_t i = 0; i < 10; ++i) CHECK(y.values<float>()[size_t(i)] == x.values<float>()[size_t(i / 2)]);
  try {
    target::interpret(fn, x, bad);
    FAIL("expected nnvm.call.shape");
  } catch (const UserError& e) {
    CHECK(e.id() == "nnvm.call.shape");
  }
}

TEST_CASE("overlapping argument buffers are rejected, since kernels treat them as restrict") {
  te::Tensor X = te::placeholder({8}, dtype::float32, "X");
  te::Tensor Y = te::compute({8}, [&](auto& v) { return X(v[0]) + 1.0f; }, "Y");
  auto fn = lower::lower(schedule::create_schedule(Y), {X, Y}, "inc");
  NDArray a(dtype::float32, {16});
  BufferView first{a.raw(), dtype::float32, {8}}, shifted{a.data<float>() + 4, dtype::float32, {8}},
      disjoint{a.data<float>() + 8, dtype::float32, {8}};
  try {
    target::interpret(fn, std::vector<BufferView>{first, shifted});
    FAIL("expected nnvm.call.aliasing");
  } catch (const UserError& e) {
    CHECK(e.id() == "nnvm.call.aliasing");
  }
  target::interpret(fn, std::vector<BufferView>{first, disjoint});
  for (int i = 0; i < 8; ++i) CHECK(a.values<float>()[size_t(8 + i)] == a.values<float>()[size_t(i)] + 1.0f);
}

}  // namespace lower_symbolic
