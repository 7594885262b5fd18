// The kernel ABI (nnvm/runtime/kernel_abi.h) as C source text, for pasting into
// generated C and generated headers so that they stand alone.
#pragma once

#include <string>

#include "nnvm/config.hpp"
#include "nnvm/runtime/kernel_abi.h"

NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {
#define NNVM_KERNEL_ABI_STR_(...) #__VA_ARGS__
#define NNVM_KERNEL_ABI_STR(...) NNVM_KERNEL_ABI_STR_(__VA_ARGS__)
// Lays the one-line stringified declarations out one per line, with braces indented.
inline std::string format_c_decls(const std::string& text) {
  std::string out;
  int indent = 0, paren = 0;
  bool at_start = true;
  auto newline = [&] {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
    at_start = true;
  };
  auto put = [&](char c) {
    if (at_start) {
      if (c == ' ') return;
      out.append(size_t(indent), ' ');
      at_start = false;
    }
    out += c;
  };
  for (char c : text) {
    if (c == '{') {
      put('{');
      indent += 2;
      newline();
    } else if (c == '}') {
      if (!at_start) newline();
      indent -= 2;
      put('}');
    } else if ((c == ';' || (c == ',' && indent > 0)) && paren == 0) {
      put(c);
      newline();
    } else {
      paren += c == '(' ? 1 : c == ')' ? -1 : 0;
      put(c);
    }
  }
  return out;
}
}  // namespace detail

// kernel_abi.h's declarations under its own include guard, for pasting into generated C so
// that the source stands alone. The text comes from the NNVM_KERNEL_ABI_DECLS macro, the only
// definition of the ABI.
inline const std::string& kernel_abi_source() {
  static const std::string text =
      "#ifndef NNVM_KERNEL_ABI_H\n#define NNVM_KERNEL_ABI_H\n#include <stdint.h>\n" +
      detail::format_c_decls(NNVM_KERNEL_ABI_STR(NNVM_KERNEL_ABI_DECLS)) + "#endif\n";
  return text;
}
#undef NNVM_KERNEL_ABI_STR
#undef NNVM_KERNEL_ABI_STR_

}  // namespace target
NNVM_END_NAMESPACE
