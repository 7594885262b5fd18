#include "nnvm/importers/topological_order.hpp"

#include <functional>
#include <map>
#include <queue>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

std::vector<size_t> topological_order(std::string_view format, const std::vector<NodeValues>& nodes,
                                      const std::set<std::string>& available,
                                      const std::function<std::string(size_t)>& label,
                                      const std::vector<std::string>& where) {
  const std::string id = str_cat("nnvm.", format, ".graph");
  auto quoted = [&](size_t i) { return "'" + printable(label(i)) + "'"; };
  const size_t n = nodes.size();
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (auto& out : nodes[i].outputs) {
      if (out.empty()) continue;
      if (available.count(out))
        throw ImportError(id,
                          str_cat("node ", quoted(i), " writes '", printable(out),
                                  "', which is also a graph input or initializer"),
                          where);
      if (auto [it, fresh] = producer.emplace(out, i); !fresh)
        throw ImportError(id,
                          str_cat("value '", printable(out), "' is written by both node ", quoted(it->second),
                                  " and node ", quoted(i)),
                          where);
    }
  std::vector<size_t> pending(n, 0);  // inputs still to be produced, per node
  std::vector<std::vector<size_t>> readers(n);
  for (size_t i = 0; i < n; ++i)
    for (auto& in : nodes[i].inputs) {
      if (in.empty() || available.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        throw ImportError(id,
                          str_cat("node ", quoted(i), " reads '", printable(in),
                                  "', which no node, graph input or initializer provides"),
                          where);
      readers[it->second].push_back(i);
      ++pending[i];
    }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;  // smallest index first
  for (size_t i = 0; i < n; ++i)
    if (!pending[i]) ready.push(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (size_t r : readers[i])
      if (--pending[r] == 0) ready.push(r);
  }
  if (order.size() == n) return order;
  // Every node left waits on another node left, so walking back from any of them reaches a cycle.
  size_t at = 0;
  while (!pending[at]) ++at;
  std::vector<size_t> walk;
  std::map<size_t, size_t> seen;  // node -> its position in walk
  while (!seen.count(at)) {
    seen[at] = walk.size();
    walk.push_back(at);
    for (auto& in : nodes[at].inputs)
      if (auto it = producer.find(in); !in.empty() && it != producer.end() && pending[it->second]) {
        at = it->second;
        break;
      }
  }
  // The walk went from readers to producers; the message goes with the data, producer -> reader,
  // from where the cycle was entered back to it.
  const size_t first = seen[at];
  std::string cycle = quoted(walk[first]);
  for (size_t k = walk.size(); k-- > first + 1;) cycle += " -> " + quoted(walk[k]);
  throw ImportError(id, str_cat("the nodes form a cycle: ", cycle, " -> ", quoted(walk[first])), where);
}

}  // namespace importers
NNVM_END_NAMESPACE
