// Operator attributes: the named, typed parameters of one use of an operator (Gemm's transB,
// Softmax's axis). The graph layer fills them from a model's attributes; kernel authors fill them
// with the typed setters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nnvm/error.hpp"
#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The five kinds a model file can carry (ONNX INT, FLOAT, STRING, INTS, FLOATS).
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

inline const char* attr_kind_name(const AttrValue& v) {
  static const char* const names[] = {"an int", "a float", "a string", "a list of ints", "a list of floats"};
  return names[v.index()];
}

// A name -> value map with typed getters. A getter without a default throws UserError
// "nnvm.ops.attr" when the attribute is missing; every getter throws it when the attribute has
// another kind. One widening is allowed because model files write `1` for `1.0`: an int (or an
// int list) is accepted where a float (float list) is asked for. A float is never read as an int.
class Attrs {
 public:
  // Typed setters (named, because an overloaded set("k", 1) would be ambiguous); they chain:
  // Attrs().set_int("transB", 1).set_float("alpha", 0.5).
  Attrs& set_int(std::string name, int64_t v) { return set(std::move(name), AttrValue(v)); }
  Attrs& set_float(std::string name, double v) { return set(std::move(name), AttrValue(v)); }
  Attrs& set_string(std::string name, std::string v) { return set(std::move(name), AttrValue(std::move(v))); }
  Attrs& set_ints(std::string name, std::vector<int64_t> v) { return set(std::move(name), AttrValue(std::move(v))); }
  Attrs& set_floats(std::string name, std::vector<double> v) { return set(std::move(name), AttrValue(std::move(v))); }
  // A data type is stored as its name ("float32"), so it prints, hashes and exports as text.
  Attrs& set_dtype(std::string name, DataType t) { return set_string(std::move(name), t.element_of().str()); }
  // For importers that already hold a variant. Replaces an existing value.
  Attrs& set(std::string name, AttrValue v) {
    values_.insert_or_assign(std::move(name), std::move(v));
    return *this;
  }

  // Removes the attribute if present (an importer dropping a value that means "not given").
  Attrs& erase(std::string_view name) {
    if (auto it = values_.find(name); it != values_.end()) values_.erase(it);
    return *this;
  }

  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  const AttrValue* find(std::string_view name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  // Sorted by name, for printing and for hashing a kernel cache key.
  const std::map<std::string, AttrValue, std::less<>>& values() const { return values_; }
  size_t size() const { return values_.size(); }

  int64_t get_int(std::string_view name) const { return *as<int64_t>(require(name), name, "an int"); }
  int64_t get_int(std::string_view name, int64_t fallback) const {
    auto* v = find(name);
    return v ? *as<int64_t>(*v, name, "an int") : fallback;
  }
  double get_float(std::string_view name) const { return to_float(require(name), name); }
  double get_float(std::string_view name, double fallback) const {
    auto* v = find(name);
    return v ? to_float(*v, name) : fallback;
  }
  const std::string& get_string(std::string_view name) const { return *as<std::string>(require(name), name, "a string"); }
  std::string get_string(std::string_view name, std::string fallback) const {
    auto* v = find(name);
    return v ? *as<std::string>(*v, name, "a string") : fallback;
  }
  const std::vector<int64_t>& get_ints(std::string_view name) const {
    return *as<std::vector<int64_t>>(require(name), name, "a list of ints");
  }
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback) const {
    auto* v = find(name);
    return v ? *as<std::vector<int64_t>>(*v, name, "a list of ints") : fallback;
  }
  std::vector<double> get_floats(std::string_view name) const { return to_floats(require(name), name); }
  std::vector<double> get_floats(std::string_view name, std::vector<double> fallback) const {
    auto* v = find(name);
    return v ? to_floats(*v, name) : fallback;
  }
  // A data type name as set_dtype stores it; "nnvm.ops.attr" for any other string.
  DataType get_dtype(std::string_view name) const { return to_dtype(require(name), name); }
  DataType get_dtype(std::string_view name, DataType fallback) const {
    auto* v = find(name);
    return v ? to_dtype(*v, name) : fallback;
  }

 private:
  static std::vector<std::string> where(std::string_view name) { return {"attribute " + std::string(name)}; }
  const AttrValue& require(std::string_view name) const {
    auto* v = find(name);
    if (!v) {
      std::string present;
      for (auto& [k, _] : values_) present += (present.empty() ? "" : ", ") + k;
      throw UserError("nnvm.ops.attr",
                      str_cat("required attribute '", name, "' is missing (given: ",
                              present.empty() ? "none" : present, ")"),
                      where(name));
    }
    return *v;
  }
  template <class T>
  static const T* as(const AttrValue& v, std::string_view name, const char* wanted) {
    if (auto* p = std::get_if<T>(&v)) return p;
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute '", name, "' is ", attr_kind_name(v), " but must be ", wanted), where(name));
  }
  static double to_float(const AttrValue& v, std::string_view name) {
    if (auto* i = std::get_if<int64_t>(&v)) return double(*i);
    return *as<double>(v, name, "a float");
  }
  static DataType to_dtype(const AttrValue& v, std::string_view name) {
    const std::string* s = std::get_if<std::string>(&v);
    if (auto t = s ? parse_dtype(*s) : std::nullopt) return *t;
    // An int here is usually a model format's type code that its importer did not translate.
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute '", name, "' is ", s ? "'" + *s + "'" : std::string(attr_kind_name(v)),
                            " but must name a data type: ", tensor_type_names()),
                    where(name));
  }
  static std::vector<double> to_floats(const AttrValue& v, std::string_view name) {
    if (auto* is = std::get_if<std::vector<int64_t>>(&v)) return std::vector<double>(is->begin(), is->end());
    return *as<std::vector<double>>(v, name, "a list of floats");
  }

  std::map<std::string, AttrValue, std::less<>> values_;
};

}  // namespace ops
NNVM_END_NAMESPACE
