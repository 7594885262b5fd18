// expect: compiles
// The same shapes as the failing cases, written correctly: proves the harness compiles good code.
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 64, 32>("A");
  auto B = placeholder<float, 32, 16>("B");
  auto H = placeholder<float16, 64>("H");
  auto k = reduce_axis<32>("k");
  auto C = compute<Shape<64, 16>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");
  auto D = compute<Shape<64>>([&](auto i) { return cast<float>(H(i)) * 2.0f + A(i, 0); }, "D");
  (void)C;
  (void)D;
}
