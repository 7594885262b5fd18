#include "nnvm/importers/graph_assembly.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

GraphAssembly::GraphAssembly(std::string format, std::string graph_name, const ops::OpRegistry& registry,
                             FoldBudget budget)
    : format_(std::move(format)), registry_(registry), b_(std::move(graph_name), registry) {
  b_.fold_constants(true, budget);
}

const graph::Value* GraphAssembly::find(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

const ops::OpDef* GraphAssembly::find_op(std::string_view op_type) const {
  return registry_.find_by_importer_name(str_cat(format_, ":", op_type));
}

std::string GraphAssembly::op_name(std::string_view op_type, const std::vector<std::string>& where) const {
  if (const ops::OpDef* def = find_op(op_type)) return def->name;
  throw ImportError(str_cat("nnvm.", format_, ".unsupported"), str_cat("no nnvm op answers to ", format_, ":", op_type),
                    where);
}

void GraphAssembly::output(const std::string& name, const std::vector<std::string>& where) {
  const graph::Value* v = find(name);
  if (!v)
    throw ImportError(str_cat("nnvm.", format_, ".graph"),
                      str_cat("graph output '", printable(name), "' is not produced by any node, input or initializer"),
                      where);
  b_.output(*v);
}

}  // namespace importers
NNVM_END_NAMESPACE
