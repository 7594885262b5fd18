// expect-error: tensor has rank 1 but is indexed with 3 indices
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  nnvm::ir::Var n("n");
  auto A = placeholder<float>({n}, "A");
  auto C = compute({n}, [&](auto i) { return A(i, i, 0); }, "C");
  (void)C;
}
