#include "nnvm/importers/dtype_attributes.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

const DtypeAttribute* find_dtype_attribute(std::span<const DtypeAttribute> table, std::string_view op_type,
                                           std::string_view name) {
  for (auto& d : table)
    if (d.op_type == op_type && d.name == name) return &d;
  return nullptr;
}

void translate_dtype_codes(std::string_view format, std::span<const DtypeAttribute> table, const DtypeCodes& codes,
                           std::string_view op_type, ops::Attrs& attrs, const std::vector<std::string>& where) {
  for (auto& d : table) {
    const ops::AttrValue* v = d.op_type == op_type ? attrs.find(d.name) : nullptr;
    if (!v) continue;
    std::vector<std::string> at = where;
    at.push_back(str_cat("attribute ", d.name));
    const int64_t* code = std::get_if<int64_t>(v);
    if (!code)
      throw ImportError(str_cat("nnvm.", format, ".attribute"),
                        str_cat("the attribute is ", ops::attr_kind_name(*v), " but must be an int (a data type code)"), at);
    if (*code == codes.undefined && d.undefined_is_default) {
      attrs.erase(d.name);
      continue;
    }
    std::optional<DataType> t = codes.decode(*code);
    if (!t)
      throw ImportError(str_cat("nnvm.", format, ".unsupported"),
                        str_cat(op_type, " attribute '", d.name, "' is data type ", codes.name(*code),
                                ", which nnvm does not support"),
                        at);
    attrs.set_dtype(std::string(d.name), *t);
  }
}

}  // namespace importers
NNVM_END_NAMESPACE
