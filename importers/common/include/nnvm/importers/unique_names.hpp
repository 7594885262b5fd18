// Graph node names for an importer: model files may repeat a name, leave it empty, or use one
// that the graph builder derives for another node's extra outputs ("<name>:<k>").
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

class UniqueNames {
 public:
  // A name not used yet: `base` ("node" when empty), else base_1, base_2, ... A node with
  // `outputs` outputs also claims "<name>:1" ... "<name>:<outputs-1>", the names the builder
  // gives its further outputs when it folds the node to constants.
  std::string claim(const std::string& base, size_t outputs = 1);
  bool taken(const std::string& name) const { return used_.count(name) != 0; }

 private:
  std::set<std::string> used_;
};

}  // namespace importers
NNVM_END_NAMESPACE
