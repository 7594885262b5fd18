// Kernel signatures (kernel_signature.hpp): the parameter types a deploy artifact's kernels.so
// states for each kernel, in the deploy runtime's spelling, under symbols no kernel can take.
#include "support/pch.hpp"

#include <cstring>

#include "nnvm/target/c_jit.hpp"

namespace target_kernel_signature {

using namespace nnvm;
using namespace nnvm::ir;

namespace {

Expr idx(int64_t v) { return make_const(dtype::index, double(v)); }

// Y[i, j] = X[i, j] + B[j] (int32 B, cast): three parameters of two dtypes and ranks.
LoweredFunc add_kernel(const std::string& name) {
  Buffer X("X", dtype::float32, {idx(3), idx(5)}), B("B", dtype::int32, {idx(5)}), Y("Y", dtype::float32, {idx(3), idx(5)});
  Var i("i"), j("j");
  Stmt body = For::make(i, 0, idx(3), ForKind::serial,
                        For::make(j, 0, idx(5), ForKind::serial,
                                  Store::make(Y, Load::make(X, i * 5 + j) + cast(dtype::float32, Load::make(B, j)), i * 5 + j)));
  return {name, {X, B, Y}, {}, body, "signature test"};
}

}  // namespace

TEST_CASE("kernel_signature: each parameter's dtype and shape, as the runtime prints them") {
  CHECK(target::kernel_signature(add_kernel("k")) == "float32 [3x5];int32 [5];float32 [3x5]");
  Var n("n");
  Buffer S("S", dtype::int64, {n, idx(2)});
  CHECK(target::param_type_text(S) == "int64 [nx2]");
  CHECK(target::kernel_signature(LoweredFunc{"none", {}, {}, Evaluate::make(idx(0)), ""}) == "");
}

TEST_CASE("kernel_signature: compiled into the module, each kernel exports S_signature, even beside a kernel of that name") {
  // A kernel named "k_signature" must not take the symbol k's signature needs, in either order.
  std::vector<LoweredFunc> fns{add_kernel("k"), add_kernel("k_signature"), add_kernel("m_signature"), add_kernel("m")};
  target::CModule m = target::emit_c_module(fns);
  CHECK(m.symbols == std::vector<std::string>{"k", "k_signature_1", "m_signature", "m_1"});
  std::string source = m.source + target::signatures_c_source(fns, m.symbols);
  auto lib = target::detail::compile_c(source, {});
  for (size_t i = 0; i < fns.size(); ++i) {
    CAPTURE(m.symbols[i]);
    auto* sig = static_cast<const char*>(lib->symbol(m.symbols[i] + "_signature"));
    CHECK(std::string(sig) == "float32 [3x5];int32 [5];float32 [3x5]");
    CHECK(lib->symbol(m.symbols[i]) != lib->symbol(m.symbols[i] + "_signature"));
  }
}

}  // namespace target_kernel_signature
