// The back half every importer shares: a graph builder that folds constants as nodes arrive,
// node names made unique, the model's value names bound to graph values, and ops found by
// importer name ("<format>:<op type>", e.g. "onnx:Relu"). A format's importer reads its file,
// translates each node's attributes and adds the node here.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nnvm/graph/builder.hpp"
#include "nnvm/importers/unique_names.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

class GraphAssembly {
 public:
  // `format` is the lowercase name used in importer names and error ids ("onnx").
  GraphAssembly(std::string format, std::string graph_name, const ops::OpRegistry& registry, FoldBudget budget);

  graph::GraphBuilder& builder() { return b_; }
  const graph::Graph& graph() const { return b_.graph(); }
  const std::string& format() const { return format_; }

  // A graph node name not used yet (UniqueNames::claim).
  std::string claim(const std::string& base, size_t outputs = 1) { return names_.claim(base, outputs); }

  // Binds the model's value `name` to `v`. Each name is bound once; the importer's topological
  // order has rejected a value produced twice.
  void define(const std::string& name, graph::Value v) { values_[name] = v; }
  // The value `name` is bound to, or nullptr.
  const graph::Value* find(const std::string& name) const;

  // The registered op that answers to "<format>:<op_type>", or nullptr.
  const ops::OpDef* find_op(std::string_view op_type) const;
  // Its name; ImportError "nnvm.<format>.unsupported" with `where` when no op answers.
  std::string op_name(std::string_view op_type, const std::vector<std::string>& where) const;

  // Makes model value `name` a graph output; ImportError "nnvm.<format>.graph" with `where` when
  // nothing produced it.
  void output(const std::string& name, const std::vector<std::string>& where);

 private:
  std::string format_;
  const ops::OpRegistry& registry_;
  graph::GraphBuilder b_;
  UniqueNames names_;
  std::map<std::string, graph::Value> values_;
};

}  // namespace importers
NNVM_END_NAMESPACE
