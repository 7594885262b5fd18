// Unique, valid identifiers for generated C-family source: the emitters' locals and module
// symbols, and a standalone model's parameter names (graph/standalone_c.hpp).
#pragma once

#include <cctype>
#include <set>
#include <string>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// Unique, valid C identifiers: `i.outer` becomes `i_outer`, a second `i` becomes `i_1`.
class NameTable {
 public:
  void reserve(const std::string& name) { used_.insert(name); }
  bool taken(const std::string& name) const { return used_.count(name) != 0; }
  std::string fresh(const std::string& hint) {
    std::string base = sanitize(hint), name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }
  static std::string sanitize(const std::string& hint) {
    std::string s;
    for (char c : hint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    // Leading digits are invalid, leading underscores are reserved, nnvm_ is the emitter's.
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '_' ||
        s.rfind("nnvm_", 0) == 0 || s.rfind("NNVM_", 0) == 0)
      s = "v" + s;
    return s;
  }

 private:
  std::set<std::string> used_;
};

}  // namespace target
NNVM_END_NAMESPACE
