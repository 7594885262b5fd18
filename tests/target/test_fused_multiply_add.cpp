// a*b + c is one fused multiply-add on every back end and in the interpreter (docs/lowered_ir.md):
// inputs chosen so that rounding the product first gives a different answer (0 instead of
// 2^-24) show all three agree bit for bit, and agree with std::fma.
#include "support/pch.hpp"

#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_jit.hpp"
#endif

namespace target_fused_multiply_add {

using namespace nnvm;

TEST_CASE("the interpreter, the C JIT and LLVM fuse a*b + c, c + a*b and a*b - c alike") {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: rounded to float the 2^-24 is lost (a tie to even).
  const float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f);
  const int64_t n = 16;  // wide enough to be vectorized
  te::Tensor A = te::placeholder({n}, dtype::float32, "A"), B = te::placeholder({n}, dtype::float32, "B");
  te::Tensor C = te::placeholder({n}, dtype::float32, "C");
  te::Tensor Y = te::compute({n}, [&](auto& i) { return A(i[0]) * B(i[0]) + C(i[0]); }, "Y");
  te::Tensor Z = te::compute({n}, [&](auto& i) { return C(i[0]) + A(i[0]) * B(i[0]); }, "Z");
  te::Tensor W = te::compute({n}, [&](auto& i) { return A(i[0]) * B(i[0]) - (-C(i[0])); }, "W");
  std::vector<ir::LoweredFunc> fns;
  for (auto& [out, vectorized] : std::vector<std::pair<te::Tensor, bool>>{{Y, false}, {Z, true}, {W, true}}) {
    auto s = schedule::create_schedule(out);
    if (vectorized) s[out].vectorize(s[out].axis(0));
    fns.push_back(lower::lower(s, {A, B, C, out}, out.name() + (vectorized ? "_vec" : "")));
  }
  NDArray xa = NDArray::from(std::vector<float>(n, a), {n}), xc = NDArray::from(std::vector<float>(n, c), {n});
  const float fused = std::fma(a, a, c);
  REQUIRE(fused == 0x1p-24f);
  volatile float product = a * a;  // rounded on its own, as an unfused multiply-add would
  REQUIRE(product + c != fused);

  auto run = [&](const std::string& who, size_t f, auto&& call) {
    NDArray out(dtype::float32, {n});
    std::vector<BufferView> views{xa.view(), xa.view(), xc.view(), out.view()};
    call(f, std::span<const BufferView>(views));
    for (float v : out.values<float>()) {
      INFO(who, " ", fns[f].name);
      CHECK(v == fused);
    }
  };
  for (size_t f = 0; f < fns.size(); ++f) run("interpreter", f, [&](size_t k, auto v) { target::interpret(fns[k], v); });
  target::Target host = target::Target::host(target::Emitter::c);
  if (!host.runs_here() || host.vector_bits < 256) return;  // the emitters fuse only where FMA exists
  auto c_kernels = target::jit_c(fns);
  for (size_t f = 0; f < fns.size(); ++f) run("C JIT", f, [&](size_t k, auto v) { c_kernels[k](v); });
#if NNVM_TEST_WITH_LLVM
  auto llvm_kernels = codegen::jit_llvm(fns);
  for (size_t f = 0; f < fns.size(); ++f) run("LLVM JIT", f, [&](size_t k, auto v) { llvm_kernels[k](v); });
#endif
}

}  // namespace target_fused_multiply_add
