// nnvmc compile --target wasm: the standalone C (graph/standalone_c.hpp) compiled to a wasm32
// module with no imports, plus the glue a page or node needs: wasm_api.c (static tensors in the
// module's memory and nnvm_run/nnvm_input/nnvm_output exports) and model.mjs (an ES module:
// load() instantiates model.wasm, run() takes and returns typed arrays).
#pragma once

#include <string>

#include "nnvm/graph/standalone_c.hpp"
#include "session.hpp"

namespace nnvmc {

std::string wasm_api_c(const nv::graph::StandaloneC& src);
std::string wasm_module_js(const nv::graph::StandaloneC& src);
// clang's flags for the module: wasm32-wasi, the strict C99 warnings as errors, -O2, and
// -msimd128 when `simd`.
std::string wasm_cflags(bool simd);
// Builds dir/model.wasm from model.c, weights.c and wasm_api.c there. BackendError
// "nnvm.standalone.wasm" (with the compiler's output) when it cannot.
void build_wasm(const std::string& dir, bool simd);

}  // namespace nnvmc
