// One half of the two-file link test: both files include <nnvm/tensor.hpp> and use a bit of
// everything, so a header definition that is not inline (or a non-inline variable) appears in
// both objects and the link fails with a duplicate symbol. This half also holds main:
//
//   nnvm_header_odr_link          runs both halves; exit status 0 when every result is right
//   nnvm_header_odr_link --abi    prints kernel_abi_source() (see header.single_include_abi)
#include <nnvm/nnvm.hpp>

#include <cmath>
#include <cstring>
#include <iostream>

using namespace nnvm;

int run_odr_part_b();

namespace {

// The typed DSL with a symbolic extent: Y(i) = exp(X(i)) * 0.5 + 1, split and vectorized,
// checked through the interpreter, plus the untyped path, the simplifier and the printers.
int run_odr_part_a() {
  ir::Var n_var("n");
  auto X = placeholder<float>({n_var}, "X");
  auto Y = compute({n_var}, [&](auto i) { return exp(X(i)) * 0.5f + 1.0f; }, "Y");
  auto sch = schedule::create_schedule(Y);
  auto [outer, inner] = sch[Y].split(sch[Y].axis(0), 4);
  sch[Y].vectorize(inner);
  ir::LoweredFunc fn = lower::lower(sch, {X, Y}, "odr_exp");
  ir::verify(fn);

  const int64_t n = 10;  // not a multiple of 4: the tail is exercised too
  NDArray x(dtype::float32, {n}), y(dtype::float32, {n});
  for (int64_t i = 0; i < n; ++i) x.values<float>()[size_t(i)] = float(i) * 0.25f - 1.0f;
  target::interpret(fn, x, y);
  int failures = 0;
  for (int64_t i = 0; i < n; ++i) {
    float want = std::exp(x.values<float>()[size_t(i)]) * 0.5f + 1.0f;
    if (std::abs(y.values<float>()[size_t(i)] - want) > 1e-5f * std::abs(want)) ++failures;
  }

  ir::Var v("v");
  ir::Expr folded = ir::simplify((v + 3) * 2 - v * 2);
  if (ir::to_string(folded) != "6") ++failures;

  auto T = te::placeholder({ir::Expr(int64_t(3))}, dtype::int32, "T");
  auto U = te::compute({ir::Expr(int64_t(3))}, [&](const std::vector<ir::Var>& i) { return T(i[0]) * 2; }, "U");
  std::string c = target::emit_c(lower::lower(schedule::create_schedule(U), {T, U}, "odr_twice"));
  if (c.find("int32_t odr_twice(") == std::string::npos) ++failures;

  std::cout << "part a (" << ir::to_string(fn).size() << " chars of IR): " << (failures ? "FAILED" : "ok") << "\n";
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::strcmp(argv[1], "--abi") == 0) {
      std::cout << target::kernel_abi_source();
      return 0;
    }
    int failures = run_odr_part_a() + run_odr_part_b();
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
