// expect-error: index extent does not match the tensor's extent on this axis
// A 64x32 times 48x16 matmul: the inner dimensions differ, so B(k, j) cannot take k.
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 64, 32>("A");
  auto B = placeholder<float, 48, 16>("B");
  auto k = reduce_axis<32>("k");
  auto C = compute<Shape<64, 16>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");
  (void)C;
}
