// expect-error: tensor has rank 2 but is indexed with 1 index
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<float, 64, 32>("A");
  auto C = compute<Shape<64>>([&](auto i) { return A(i) * 2.0f; }, "C");
  (void)C;
}
