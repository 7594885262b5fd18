// expect-error: float16 is a storage type: cast<float>() before arithmetic
#include "nnvm/te/dsl.hpp"

using namespace nnvm;

int main() {
  auto H = placeholder<float16, 64>("H");
  auto C = compute<Shape<64>>([&](auto i) { return H(i) * H(i); }, "C");
  (void)C;
}
