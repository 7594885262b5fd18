// JIT-compiles a small vectorized kernel with the LLVM back end (nnvm::llvm) and runs it; exits
// 0 when the result is right.
#include <nnvm/codegen/llvm_jit.hpp>
#include <nnvm/tensor.hpp>

#include <cstdio>

int main() {
  using namespace nnvm;
  auto A = placeholder<float, 8>("A");
  auto B = compute<Shape<8>>([&](auto i) { return A(i) * 2.0f + 1.0f; }, "B");
  auto s = schedule::create_schedule(B);
  auto [o, i] = s[B].split(s[B].axis(0), 4);
  s[B].vectorize(i);
  target::Kernel kernel = codegen::jit_llvm(lower::lower(s, {A, B}, "affine"));
  NDArray a(dtype::float32, {8}), b(dtype::float32, {8});
  for (int k = 0; k < 8; ++k) a.values<float>()[size_t(k)] = float(k);
  kernel(a, b);
  for (int k = 0; k < 8; ++k)
    if (b.values<float>()[size_t(k)] != 2.0f * float(k) + 1.0f) return std::puts("wrong result"), 1;
  return 0;
}
