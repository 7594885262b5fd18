// Model files need not list their nodes in order; this finds one where every value is produced
// before it is read, and names what makes that impossible.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

// One node's value names as the file gives them; an empty name is an absent optional value.
struct NodeValues {
  std::vector<std::string> inputs, outputs;
};

// The node indices in an order where every input is in `available` (graph inputs, weights) or
// is produced by an earlier node. Nodes that are ready at the same time keep their file order,
// so an already sorted model keeps its order. ImportError "nnvm.<format>.graph" with `where` as
// context for a value nothing provides, a value produced twice or also in `available`, and a
// cycle, which the message lists node by node; `label(i)` names node i in messages.
std::vector<size_t> topological_order(std::string_view format, const std::vector<NodeValues>& nodes,
                                      const std::set<std::string>& available,
                                      const std::function<std::string(size_t)>& label,
                                      const std::vector<std::string>& where);

}  // namespace importers
NNVM_END_NAMESPACE
