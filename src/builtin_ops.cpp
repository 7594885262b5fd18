// The built-in op list, compiled once for the libraries, tools and tests this build makes (the
// CMake library nnvm::ops). Those define NNVM_BUILTIN_OPS_COMPILED, so their registries call
// this function instead of generating code for every op's compute in each translation unit
// (see ops/registry.hpp).
#include "nnvm/ops/builtin.hpp"
#include "nnvm/ops/registry.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

std::vector<OpDef> compiled_builtin_ops() { return builtin_ops(); }

}  // namespace ops
NNVM_END_NAMESPACE
