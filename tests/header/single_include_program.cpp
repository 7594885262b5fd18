// A user's program that sees nnvm only through the generated single header (its include path
// is single_include/ alone): a scheduled matmul in the typed DSL, lowered, run through the
// interpreter and the C JIT, and checked against a plain loop.
//
//   nnvm_header_single_include          runs the check; exit status 0 when both agree
//   nnvm_header_single_include --abi    prints kernel_abi_source(), which the header.single_include_abi
//                                       test compares with the same text built from include/
#include <nnvm/nnvm.hpp>

#include <cmath>
#include <cstring>
#include <iostream>

using namespace nnvm;

namespace {

constexpr int64_t M = 24, K = 20, N = 32;

double max_error(const NDArray& c, const std::vector<double>& want) {
  double err = 0;
  for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(double(c.values<float>()[i]) - want[i]));
  return err;
}

int run() {
  auto A = placeholder<float, M, K>("A");
  auto B = placeholder<float, K, N>("B");
  auto k = reduce_axis<K>("k");
  auto C = compute<Shape<M, N>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");

  // Uneven factors on purpose (24 % 5, 20 % 3): the lowered code must guard the tails.
  auto sch = schedule::create_schedule(C);
  auto s = sch[C];
  auto [io, jo, ii, ji] = s.tile(s.axis(0), s.axis(1), 5, 8);
  auto [ko, ki] = s.split(s.reduce_axis(0), 3);
  s.reorder({io, jo, ko, ki, ii, ji});
  s.vectorize(ji);
  s.unroll(ki);
  s.parallel(io);
  ir::LoweredFunc fn = lower::lower(sch, {A, B, C}, "matmul_single_header");

  NDArray a(dtype::float32, {M, K}), b(dtype::float32, {K, N});
  for (int64_t i = 0; i < M * K; ++i) a.values<float>()[size_t(i)] = float((i * 7) % 11) - 5.0f;
  for (int64_t i = 0; i < K * N; ++i) b.values<float>()[size_t(i)] = float((i * 5) % 13) * 0.25f - 1.5f;
  std::vector<double> want(size_t(M * N), 0.0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t kk = 0; kk < K; ++kk)
        want[size_t(i * N + j)] += double(a.values<float>()[size_t(i * K + kk)]) * b.values<float>()[size_t(kk * N + j)];

  NDArray c_interp(dtype::float32, {M, N}), c_jit(dtype::float32, {M, N});
  std::fill(c_interp.values<float>().begin(), c_interp.values<float>().end(), NAN);
  std::fill(c_jit.values<float>().begin(), c_jit.values<float>().end(), NAN);
  target::interpret(fn, a, b, c_interp);
  target::jit_c(fn)(a, b, c_jit);

  // Inputs are small multiples of 1/4, so every partial sum is exact in float.
  double e_interp = max_error(c_interp, want), e_jit = max_error(c_jit, want);
  std::cout << "interpreter max |error| = " << e_interp << ", C JIT max |error| = " << e_jit << "\n";
  if (!(e_interp == 0 && e_jit == 0)) {
    std::cerr << "FAILED: results differ from the plain loop\n" << ir::to_string(fn) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::strcmp(argv[1], "--abi") == 0) {
      std::cout << target::kernel_abi_source();
      return 0;
    }
    return run();
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
