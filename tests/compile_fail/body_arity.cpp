// expect-error: the compute body must take one index variable per output dimension
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 8, 8>("A");
  auto C = compute<Shape<8, 8>>([&](auto i) { return A(i, i); }, "C");
  (void)C;
}
