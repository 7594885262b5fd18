// Kernels named after C library functions ("nan", "expf", "free", "j0") build and run on both
// emitters: their symbols take a suffix instead of clashing with <math.h> (a compile error) or
// capturing the library's own calls (an exported expf called by expf's users).
#include "support/pch.hpp"

#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_jit.hpp"
#endif

namespace target_reserved_names {

using namespace nnvm;

TEST_CASE("kernels named nan, expf, free and j0 build and compute exp on every emitter") {
  te::Tensor A = te::placeholder({8}, dtype::float32, "A");
  te::Tensor B = te::compute({8}, [&](auto& i) { return ir::call(ir::CallOp::exp, A(i[0])); }, "B");
  std::vector<ir::LoweredFunc> fns;
  for (const char* name : {"nan", "expf", "free", "j0"}) {
    auto s = schedule::create_schedule(B);
    fns.push_back(lower::lower(s, {A, B}, name));
  }
  NDArray x = NDArray::from(std::vector<float>{0, 1, -1, 2, 0.5f, -3, 4, 0.25f}, {8});
  auto check = [&](const std::string& who, auto&& call) {
    for (size_t f = 0; f < fns.size(); ++f) {
      NDArray y(dtype::float32, {8});
      std::vector<BufferView> views{x.view(), y.view()};
      call(f, std::span<const BufferView>(views));
      for (size_t i = 0; i < 8; ++i) {
        INFO(who, " kernel ", fns[f].name, " element ", i);
        CHECK(y.values<float>()[i] == doctest::Approx(std::exp(double(x.values<float>()[i]))).epsilon(1e-6));
      }
    }
  };
  auto c_kernels = target::jit_c(fns);
  check("C JIT", [&](size_t k, auto v) { c_kernels[k](v); });
  for (auto& sym : target::emit_c_module(fns).symbols) CHECK_FALSE(target::reserved_c_names().count(sym));
#if NNVM_TEST_WITH_LLVM
  auto llvm_kernels = codegen::jit_llvm(fns);
  check("LLVM JIT", [&](size_t k, auto v) { llvm_kernels[k](v); });
#endif
}

}  // namespace target_reserved_names
