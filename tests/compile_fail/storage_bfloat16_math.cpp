// expect-error: bfloat16 is a storage type: cast<float>() before arithmetic
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto H = placeholder<bfloat16, 64>("H");
  auto C = compute<Shape<64>>([&](auto i) { return exp(H(i)); }, "C");
  (void)C;
}
