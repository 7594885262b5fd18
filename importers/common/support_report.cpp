#include "nnvm/importers/support_report.hpp"

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

std::string SupportReport::to_string() const {
  std::string s = str_cat(format, " model:");
  // Formats without versioned op sets (MXNet) leave ir_version 0 and opsets empty.
  if (ir_version != 0 || !opsets.empty()) {
    s += str_cat(" ir_version ", ir_version, ", opsets");
    for (auto& [domain, version] : opsets) s += str_cat(" ", domain.empty() ? default_domain : printable(domain), "=", version);
    if (!producer.empty()) s += ",";
  }
  if (!producer.empty()) s += " producer " + printable(producer);
  s += "; ops:";
  for (auto& [op, count] : op_counts) s += str_cat(" ", printable(op), " x", count);
  s += str_cat("\n", items.empty() ? "everything is supported" : str_cat(items.size(), " unsupported:"));
  for (auto& u : items) {
    s += "\n  ";
    if (!u.node.empty()) s += "'" + printable(u.node) + "' ";
    if (!u.op.empty())
      s += str_cat("(", u.domain.empty() ? "" : printable(u.domain) + ":", printable(u.op),
                   u.opset ? str_cat(", opset ", u.opset) : "", ") ");
    if (!u.dtypes.empty()) s += "[" + u.dtypes + "] ";
    s += printable(u.reason);
  }
  return s;
}

}  // namespace importers
NNVM_END_NAMESPACE
