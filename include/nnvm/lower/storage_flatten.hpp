// Storage flattening: multi-dimensional tensor accesses become flat buffer accesses.
// Requires: output of schedule_ops. Ensures: no ProducerStore/ProducerLoad/ProducerRealize;
// argument tensors read and written through the given param buffers; realized intermediates
// become Allocates of the realized region, indexed relative to the region's min.
#pragma once

#include <unordered_map>

#include "nnvm/ir/functor.hpp"
#include "nnvm/te/operation.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

// Row-major flat offset of `indices` within a region of `extents` starting at `mins`.
inline ir::Expr flat_index(const std::vector<ir::Expr>& indices, const std::vector<ir::Expr>& mins,
                           const std::vector<ir::Expr>& extents) {
  ir::Expr offset(int64_t(0));
  for (size_t d = 0; d < indices.size(); ++d) {
    ir::Expr i = mins.empty() ? indices[d] : indices[d] - mins[d];
    offset = d == 0 ? i : offset * extents[d] + i;
  }
  return offset;
}

class StorageFlattener : public ir::IRMutator {
 public:
  using ArgMap = std::unordered_map<const ir::ProducerNode*, ir::Buffer>;
  explicit StorageFlattener(ArgMap args) : args_(std::move(args)) {}
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  struct Region {
    ir::Buffer buffer;
    std::vector<ir::Expr> mins, extents;
  };

  const Region& region(const ir::ProducerNode* t) {
    auto it = regions_.find(t);
    if (it != regions_.end()) return it->second;
    auto a = args_.find(t);
    if (a == args_.end())
      throw UserError("nnvm.lower.missing_arg",
                      str_cat("tensor ", t->name, " is read but is neither a kernel argument nor computed by the schedule; "
                                                 "pass it in the argument list"));
    return regions_[t] = Region{a->second, {}, a->second->shape};
  }

  ir::Expr visit(const ir::ProducerLoad* op, const ir::Expr&) override {
    std::vector<ir::Expr> idx;
    for (auto& i : op->indices) idx.push_back(mutate(i));
    const Region& r = region(op->tensor.get());
    return ir::Load::make(r.buffer, flat_index(idx, r.mins, r.extents));
  }
  ir::Stmt visit(const ir::ProducerStore* op, const ir::Stmt&) override {
    std::vector<ir::Expr> idx;
    for (auto& i : op->indices) idx.push_back(mutate(i));
    const Region& r = region(op->tensor.get());
    return ir::Store::make(r.buffer, mutate(op->value), flat_index(idx, r.mins, r.extents));
  }
  ir::Stmt visit(const ir::ProducerRealize* op, const ir::Stmt&) override {
    std::vector<ir::Expr> mins, extents;
    for (auto& b : op->bounds) {
      mins.push_back(mutate(b.min));
      extents.push_back(mutate(b.extent));
    }
    ir::Buffer buf(op->tensor->name, op->tensor->dtype, extents, op->scope);
    regions_[op->tensor.get()] = Region{buf, mins, extents};
    ir::Stmt body = mutate(op->body);
    regions_.erase(op->tensor.get());
    return ir::Allocate::make(buf, body);
  }

 private:
  ArgMap args_;
  std::unordered_map<const ir::ProducerNode*, Region> regions_;
};

inline ir::Stmt storage_flatten(const ir::Stmt& s, const StorageFlattener::ArgMap& args) {
  return StorageFlattener(args).mutate(s);
}

}  // namespace lower
NNVM_END_NAMESPACE
