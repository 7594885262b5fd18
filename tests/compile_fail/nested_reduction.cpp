// expect-error: a reduction must be the whole body of a compute; compute it as its own tensor
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 8, 8>("A");
  auto k = reduce_axis<8>("k");
  auto C = compute<Shape<8>>([&](auto i) { return sum(A(i, k), k) * 2.0f; }, "C");
  (void)C;
}
