// importers::topological_order, which every importer runs before it builds a node: the order it
// finds is checked against the data-flow rule directly (each input produced earlier), and each
// malformed graph against the message a user needs (which node, which value, the whole cycle).
#include "support/pch.hpp"

#include <algorithm>
#include <random>
#include <set>

#include "nnvm/importers/topological_order.hpp"

namespace importers_topological_order {

using namespace nnvm;
using importers::NodeValues;

namespace {

std::vector<std::string> labels_of(const std::vector<NodeValues>& nodes) {
  std::vector<std::string> l;
  for (size_t i = 0; i < nodes.size(); ++i) l.push_back(str_cat("n", i));
  return l;
}

std::vector<size_t> order(const std::vector<NodeValues>& nodes, const std::set<std::string>& available) {
  auto labels = labels_of(nodes);
  return importers::topological_order("fmt", nodes, available, [&](size_t i) { return labels[i]; }, {"file m.fmt"});
}

// The ImportError's id and message, or "(no error)".
std::pair<std::string, std::string> error_of(const std::vector<NodeValues>& nodes, const std::set<std::string>& available) {
  try {
    order(nodes, available);
  } catch (const ImportError& e) {
    CHECK(e.context() == std::vector<std::string>{"file m.fmt"});
    return {e.id(), e.message()};
  }
  return {"(no error)", ""};
}

// Whether every input of every node is available or produced by a node earlier in `o`.
bool respects_data_flow(const std::vector<NodeValues>& nodes, const std::set<std::string>& available,
                        const std::vector<size_t>& o) {
  std::set<std::string> have = available;
  std::set<size_t> seen;
  for (size_t i : o) {
    if (!seen.insert(i).second) return false;
    for (auto& in : nodes[i].inputs)
      if (!in.empty() && !have.count(in)) return false;
    have.insert(nodes[i].outputs.begin(), nodes[i].outputs.end());
  }
  return seen.size() == nodes.size();
}

}  // namespace

TEST_CASE("importers: a sorted graph keeps its file order") {
  std::vector<NodeValues> g = {{{"x"}, {"a"}}, {{"a"}, {"b"}}, {{"a", "b"}, {"c"}}};
  CHECK(order(g, {"x"}) == std::vector<size_t>{0, 1, 2});
}

TEST_CASE("importers: an unsorted graph is put in data-flow order, ties in file order") {
  // Node 0 reads what node 3 writes; nodes 1 and 2 only need the input and keep their order.
  std::vector<NodeValues> g = {{{"d", "x"}, {"out"}}, {{"x"}, {"b"}}, {{"x"}, {"c"}}, {{"b", "c"}, {"d"}}};
  std::vector<size_t> o = order(g, {"x"});
  CHECK(respects_data_flow(g, {"x"}, o));
  CHECK(o == std::vector<size_t>{1, 2, 3, 0});
}

TEST_CASE("importers: empty names are absent optional values, weights are available") {
  std::vector<NodeValues> g = {{{"x", "", "w"}, {"a", ""}}, {{"a", ""}, {"y"}}};
  CHECK(order(g, {"x", "w"}) == std::vector<size_t>{0, 1});
}

TEST_CASE("importers: random DAGs in shuffled file order come out in a valid order") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    size_t n = 1 + rng() % 30;
    std::vector<NodeValues> g(n);
    for (size_t i = 0; i < n; ++i) {
      g[i].outputs = {str_cat("v", i)};
      g[i].inputs = {"x"};
      for (size_t j = 0; j < i; ++j)
        if (rng() % 4 == 0) g[i].inputs.push_back(str_cat("v", j));
    }
    std::vector<NodeValues> shuffled = g;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::vector<size_t> o = order(shuffled, {"x"});
    CHECK(respects_data_flow(shuffled, {"x"}, o));
  }
}

TEST_CASE("importers: a value nothing provides names the node and the value") {
  auto [id, msg] = error_of({{{"x"}, {"a"}}, {{"a", "ghost"}, {"b"}}}, {"x"});
  CHECK(id == "nnvm.fmt.graph");
  CHECK(msg == "node 'n1' reads 'ghost', which no node, graph input or initializer provides");
}

TEST_CASE("importers: a value written twice names both writers") {
  auto [id, msg] = error_of({{{"x"}, {"a"}}, {{"x"}, {"a"}}}, {"x"});
  CHECK(id == "nnvm.fmt.graph");
  CHECK(msg == "value 'a' is written by both node 'n0' and node 'n1'");
  auto [id2, msg2] = error_of({{{"x"}, {"x"}}}, {"x"});
  CHECK(msg2 == "node 'n0' writes 'x', which is also a graph input or initializer");
}

TEST_CASE("importers: a cycle is listed node by node, in data-flow order") {
  // n1 -> n2 -> n3 -> n1, with n0 and n4 outside the cycle (n4 waits on it).
  std::vector<NodeValues> g = {{{"x"}, {"a"}}, {{"a", "d"}, {"b"}}, {{"b"}, {"c"}}, {{"c"}, {"d"}}, {{"d"}, {"e"}}};
  auto [id, msg] = error_of(g, {"x"});
  CHECK(id == "nnvm.fmt.graph");
  CHECK(msg == "the nodes form a cycle: 'n1' -> 'n2' -> 'n3' -> 'n1'");
  // A node that reads its own output.
  auto [id2, msg2] = error_of({{{"x", "s"}, {"s"}}}, {"x"});
  CHECK(msg2 == "the nodes form a cycle: 'n0' -> 'n0'");
}

TEST_CASE("importers: names from the file are escaped in messages") {
  auto [id, msg] = error_of({{{"bad\nname"}, {"a"}}}, {});
  CHECK(msg.find('\n') == std::string::npos);
  CHECK(msg.find("bad") != std::string::npos);
}

}  // namespace importers_topological_order
