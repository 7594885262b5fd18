#include "nnvm/importers/unique_names.hpp"

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

std::string UniqueNames::claim(const std::string& base, size_t outputs) {
  const std::string stem = base.empty() ? "node" : base;
  auto clashes = [&](const std::string& s) {
    if (used_.count(s)) return true;
    for (size_t k = 1; k < outputs; ++k)
      if (used_.count(str_cat(s, ":", k))) return true;
    return false;
  };
  std::string name = stem;
  for (size_t k = 1; clashes(name); ++k) name = str_cat(stem, "_", k);
  used_.insert(name);
  for (size_t k = 1; k < outputs; ++k) used_.insert(str_cat(name, ":", k));
  return name;
}

}  // namespace importers
NNVM_END_NAMESPACE
