// expect-error: index extent does not match the tensor's extent on this axis
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 32>("A");
  auto C = compute<Shape<64>>([&](auto i) { return A(i) * 2.0f; }, "C");
  (void)C;
}
