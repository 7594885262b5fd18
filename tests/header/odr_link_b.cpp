// The other half of the two-file link test (see odr_link_a.cpp): a reduction scheduled with
// split, reorder and parallel, run through the interpreter and the C JIT.
#include <nnvm/nnvm.hpp>

#include <iostream>

using namespace nnvm;

int run_odr_part_b() {
  constexpr int64_t R = 6, L = 9;
  auto A = placeholder<int32_t, R, L>("A");
  auto k = reduce_axis<L>("k");
  auto S = compute<Shape<R>>([&](auto i) { return sum(A(i, k) * 3, k); }, "S");
  auto sch = schedule::create_schedule(S);
  auto [ko, ki] = sch[S].split(sch[S].reduce_axis(0), 2);
  sch[S].reorder({sch[S].axis(0), ko, ki});
  sch[S].parallel(sch[S].axis(0));
  ir::LoweredFunc fn = lower::lower(sch, {A, S}, "odr_row_sum");

  NDArray a(dtype::int32, {R, L}), s_interp(dtype::int32, {R}), s_jit(dtype::int32, {R});
  for (int64_t i = 0; i < R * L; ++i) a.values<int32_t>()[size_t(i)] = int32_t((i * 13) % 17) - 8;
  target::interpret(fn, a, s_interp);
  target::jit_c(fn)(a, s_jit);

  int failures = 0;
  for (int64_t i = 0; i < R; ++i) {
    int32_t want = 0;
    for (int64_t j = 0; j < L; ++j) want += a.values<int32_t>()[size_t(i * L + j)] * 3;
    failures += s_interp.values<int32_t>()[size_t(i)] != want;
    failures += s_jit.values<int32_t>()[size_t(i)] != want;
  }
  std::cout << "part b (" << target::emit_c(fn).size() << " bytes of C): " << (failures ? "FAILED" : "ok") << "\n";
  return failures;
}
