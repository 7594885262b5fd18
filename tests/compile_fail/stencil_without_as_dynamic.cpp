// expect-error: write A(as_dynamic(i))
// A 3-point stencil reads A(i) from a longer axis: the error says how to read part of an axis.
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 66>("A");
  auto B = compute<Shape<64>>([&](auto i) { return A(i) + A(i + 1) + A(i + 2); }, "B");
  (void)B;
}
