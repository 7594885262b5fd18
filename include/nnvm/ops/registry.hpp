// The operator registry: op definitions by name and by importer name ("onnx:Relu").
//
// There is one default registry, made with the built-in ops on first use (a function-local
// static, so no static initializers run), and a user's op joins it with one call:
//   ops::register_op(OpDef{.name = "hard_swish", ...});
// Code that must not see other code's ops (tests, a plugin host) makes its own OpRegistry.
//
// Thread safety: registration and lookup may run concurrently (a shared mutex guards the maps).
// Ops are never removed or replaced, so an `const OpDef&` a lookup returned stays valid, and
// unchanged, for as long as the registry exists.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "nnvm/ops/op_def.hpp"
// The built-in op list, unless the program links it compiled (NNVM_BUILTIN_OPS_COMPILED, below):
// parsing every op's compute costs about 4 s per translation unit.
#ifndef NNVM_BUILTIN_OPS_COMPILED
#include "nnvm/ops/builtin.hpp"
#endif

NNVM_BEGIN_NAMESPACE
namespace ops {

#ifdef NNVM_BUILTIN_OPS_COMPILED
// Defined once in the CMake library nnvm::ops (src/builtin_ops.cpp), which defines this macro
// for everything that links it. Without it, every translation unit that reaches the default
// registry generates code for every op's compute (about 60 % of an importer file's compile
// time); header-only users, who do not define the macro, get builtin_ops() inline as before.
std::vector<OpDef> compiled_builtin_ops();
#endif

namespace detail {
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace detail

class OpRegistry {
 public:
  // An empty registry; with_builtins() for one holding the built-in ops.
  OpRegistry() = default;
  OpRegistry(const OpRegistry& other) {
    std::shared_lock lock(other.mutex_);
    by_name_ = other.by_name_;
    by_importer_name_ = other.by_importer_name_;
  }
  OpRegistry& operator=(const OpRegistry&) = delete;

  static OpRegistry with_builtins() {
    OpRegistry r;
#ifdef NNVM_BUILTIN_OPS_COMPILED
    for (auto& def : compiled_builtin_ops()) r.register_op(std::move(def));
#else
    for (auto& def : builtin_ops()) r.register_op(std::move(def));
#endif
    return r;
  }

  // Adds `def` and returns the stored definition. Throws UserError "nnvm.ops.invalid" for a
  // malformed definition (see validate) and "nnvm.ops.duplicate" when its name or one of its
  // importer names is taken; on error nothing is added.
  const OpDef& register_op(OpDef def) {
    validate(def);
    std::unique_lock lock(mutex_);
    if (by_name_.count(def.name))
      throw UserError("nnvm.ops.duplicate", str_cat("an op named '", def.name, "' is already registered"),
                      {"op " + def.name});
    for (auto& n : def.importer_names)
      if (auto it = by_importer_name_.find(n); it != by_importer_name_.end())
        throw UserError("nnvm.ops.duplicate",
                        str_cat("importer name '", n, "' already belongs to op '", it->second->name, "'"),
                        {"op " + def.name});
    auto stored = std::make_shared<const OpDef>(std::move(def));
    by_name_.emplace(stored->name, stored);
    for (auto& n : stored->importer_names) by_importer_name_.emplace(n, stored);
    return *stored;
  }

  // nullptr when absent.
  const OpDef* find(std::string_view name) const {
    std::shared_lock lock(mutex_);
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second.get();
  }
  const OpDef* find_by_importer_name(std::string_view importer_name) const {
    std::shared_lock lock(mutex_);
    auto it = by_importer_name_.find(importer_name);
    return it == by_importer_name_.end() ? nullptr : it->second.get();
  }
  // Like find, but a missing op is UserError "nnvm.ops.unknown" (with a close name, if any).
  const OpDef& get(std::string_view name) const {
    if (auto* d = find(name)) return *d;
    throw UserError("nnvm.ops.unknown", str_cat("no op named '", name, "' is registered", suggestion(name, names())));
  }
  const OpDef& get_by_importer_name(std::string_view importer_name) const {
    if (auto* d = find_by_importer_name(importer_name)) return *d;
    throw UserError("nnvm.ops.unknown", str_cat("no op answers to importer name '", importer_name, "'",
                                                suggestion(importer_name, importer_names())));
  }

  // Sorted.
  std::vector<std::string> names() const {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    for (auto& [n, _] : by_name_) out.push_back(n);
    return out;
  }
  std::vector<std::string> importer_names() const {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    for (auto& [n, _] : by_importer_name_) out.push_back(n);
    return out;
  }
  // Every definition, sorted by name.
  std::vector<const OpDef*> ops() const {
    std::shared_lock lock(mutex_);
    std::vector<const OpDef*> out;
    for (auto& [_, d] : by_name_) out.push_back(d.get());
    return out;
  }
  size_t size() const {
    std::shared_lock lock(mutex_);
    return by_name_.size();
  }

 private:
  static std::string suggestion(std::string_view wanted, const std::vector<std::string>& known) {
    std::string best;
    size_t best_d = 3;  // only close names: a typo, not an unrelated op
    for (auto& k : known)
      if (size_t d = detail::edit_distance(wanted, k); d < best_d) best_d = d, best = k;
    return best.empty() ? "" : str_cat("; did you mean '", best, "'?");
  }

  mutable std::shared_mutex mutex_;
  std::map<std::string, std::shared_ptr<const OpDef>, std::less<>> by_name_, by_importer_name_;
};

// The process-wide registry, holding the built-in ops from its first use.
inline OpRegistry& default_registry() {
  static OpRegistry registry = OpRegistry::with_builtins();
  return registry;
}

// The one call that makes a user's op visible to everything that uses the default registry
// (the graph layer, importers, ops::get_op). Returns the stored definition.
inline const OpDef& register_op(OpDef def) { return default_registry().register_op(std::move(def)); }
// Lookups in the default registry.
inline const OpDef& get_op(std::string_view name) { return default_registry().get(name); }
inline const OpDef& get_op_by_importer_name(std::string_view importer_name) {
  return default_registry().get_by_importer_name(importer_name);
}

}  // namespace ops
NNVM_END_NAMESPACE
