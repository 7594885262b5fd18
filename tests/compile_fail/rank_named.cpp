// expect-error: tensor has rank 2 but is indexed with 1 index
// expect-also: tensor_named<'A'>
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto A = placeholder<"A", float, 64, 32>();
  auto C = compute<Shape<64>>([&](auto i) { return A(i) * 2.0f; }, "C");
  (void)C;
}
