// expect-error: a floating-point literal cannot meet an integer expression
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 8>("A");
  auto C = compute<Shape<8>>([&](auto i) { return A(i * 0.5); }, "C");
  (void)C;
}
