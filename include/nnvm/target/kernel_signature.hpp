// What a compiled kernel states about its parameters, for a loader that must not trust its
// plan file: a deploy artifact's kernels.so exports, for each kernel symbol S, the C string
//   const char S_signature[] = "float32 [1x64x56x56];float32 [64]";
// (each parameter's dtype and shape in the deploy runtime's own spelling, in parameter order,
// ';' between them). The runtime compares model.json's parameter types with it, so an edited
// model.json cannot make a kernel read or write past the tensors it is given. Both back ends
// (the C emitter and LLVM object code) compile the same source from here into the library.
#pragma once

#include <string>
#include <vector>

#include "nnvm/ir/function.hpp"
#include "nnvm/ir/op.hpp"
#include "nnvm/ir/printer.hpp"
#include "nnvm/ir/simplify.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// The suffix of the exported signature string's symbol; emitters keep kernel symbols from
// colliding with it as they do with "_workspace_bytes".
inline constexpr const char* kSignatureSuffix = "_signature";

// "float32 [1x64]" for `b` (a symbolic extent is printed as its expression).
inline std::string param_type_text(const ir::Buffer& b) {
  std::string s = b->dtype.str() + " [";
  for (size_t d = 0; d < b->shape.size(); ++d) {
    ir::Expr e = ir::simplify(b->shape[d]);
    const int64_t* c = ir::as_const_int(e);
    s += (d ? "x" : "") + (c ? std::to_string(*c) : ir::to_string(e));
  }
  return s + "]";
}

// The signature of `fn`: its parameters' type texts joined by ';'.
inline std::string kernel_signature(const ir::LoweredFunc& fn) {
  std::string s;
  for (size_t p = 0; p < fn.params.size(); ++p) s += (p ? ";" : "") + param_type_text(fn.params[p]);
  return s;
}

// C99 source defining `<symbols[i]>_signature` for each kernel of `fns`.
inline std::string signatures_c_source(const std::vector<ir::LoweredFunc>& fns, const std::vector<std::string>& symbols) {
  std::string s = "\n/* Each kernel's parameter types, which the deploy runtime checks model.json against. */\n";
  for (size_t i = 0; i < fns.size(); ++i) {
    std::string text = kernel_signature(fns[i]);
    std::string quoted;
    for (char c : text) quoted += (c == '"' || c == '\\') ? std::string{'\\', c} : std::string(1, c);
    s += "const char " + symbols.at(i) + kSignatureSuffix + "[] = \"" + quoted + "\";\n";
  }
  return s;
}

}  // namespace target
NNVM_END_NAMESPACE
