// expect-error: operands have different element types; use cast<T>() to convert
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 16>("A");
  auto B = placeholder<int32_t, 16>("B");
  auto C = compute<Shape<16>>([&](auto i) { return A(i) + B(i); }, "C");
  (void)C;
}
