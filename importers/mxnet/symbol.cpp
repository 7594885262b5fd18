#include "symbol.hpp"

#include <nlohmann/json.hpp>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

namespace {

using nlohmann::json;

// A JSON value of a node as a string: MXNet writes every parameter as a string, but hand-written
// and converted files hold numbers and booleans too.
std::string attr_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number()) return str_cat(v.get<double>());
  return v.dump();
}

Entry read_entry(const json& e, size_t limit, const std::string& what, const std::vector<std::string>& where) {
  // [node, index, version] in MXNet 1.x, [node, index] in older files.
  if (!e.is_array() || e.size() < 2 || e.size() > 3 || !e[0].is_number_integer() || !e[1].is_number_integer())
    throw ImportError("nnvm.mxnet.file", str_cat(what, " is not a [node, output] pair: ", e.dump()), where);
  const int64_t node = e[0].get<int64_t>(), index = e[1].get<int64_t>();
  if (node < 0 || uint64_t(node) >= limit)
    throw ImportError("nnvm.mxnet.graph",
                      str_cat(what, " refers to node ", node, ", which is ",
                              node < 0 ? "negative" : "not an earlier node (the file must list nodes in order)"),
                      where);
  if (index < 0 || index > 1024) throw ImportError("nnvm.mxnet.graph", str_cat(what, " names output ", index), where);
  return {size_t(node), size_t(index)};
}

}  // namespace

std::string node_label(const SymbolNode& n) { return str_cat("node ", printable(n.name), " (", printable(n.op), ")"); }

Symbol parse_symbol(const std::string& text, const std::string& file_label) {
  const std::vector<std::string> file{file_label};
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw ImportError("nnvm.mxnet.file", "the symbol file is not valid JSON", file);
  if (!doc.is_object() || !doc.contains("nodes") || !doc["nodes"].is_array() || !doc.contains("heads"))
    throw ImportError("nnvm.mxnet.file", "the JSON is not an MXNet symbol (it needs \"nodes\" and \"heads\")", file);
  Symbol s;
  const json& nodes = doc["nodes"];
  for (size_t i = 0; i < nodes.size(); ++i) {
    const json& jn = nodes[i];
    std::vector<std::string> where{file_label, str_cat("node ", i)};
    if (!jn.is_object() || !jn.contains("op") || !jn["op"].is_string() || !jn.contains("name") ||
        !jn["name"].is_string())
      throw ImportError("nnvm.mxnet.file", "a node needs a string \"op\" and \"name\"", where);
    SymbolNode n;
    n.op = jn["op"].get<std::string>();
    n.name = jn["name"].get<std::string>();
    where.back() = node_label(n);
    // MXNet 1.x writes "attrs"; 0.9 wrote "attr" and 0.8 "param" (parameters) beside "attr".
    for (const char* key : {"param", "attr", "attrs"}) {
      if (!jn.contains(key) || jn[key].is_null()) continue;
      if (!jn[key].is_object())
        throw ImportError("nnvm.mxnet.file", str_cat("the node's \"", key, "\" is not an object"), where);
      for (auto& [k, v] : jn[key].items()) (k.rfind("__", 0) == 0 ? n.hidden : n.attrs)[k] = attr_text(v);
    }
    if (jn.contains("inputs")) {
      if (!jn["inputs"].is_array()) throw ImportError("nnvm.mxnet.file", "the node's \"inputs\" is not a list", where);
      for (size_t k = 0; k < jn["inputs"].size(); ++k)
        n.inputs.push_back(read_entry(jn["inputs"][k], i, str_cat("input ", k), where));
    }
    if (n.op == "null" && !n.inputs.empty())
      throw ImportError("nnvm.mxnet.graph", "a variable (op \"null\") has inputs", where);
    s.nodes.push_back(std::move(n));
  }
  if (!doc["heads"].is_array() || doc["heads"].empty())
    throw ImportError("nnvm.mxnet.graph", "the symbol has no outputs (\"heads\" is empty)", file);
  for (size_t k = 0; k < doc["heads"].size(); ++k)
    s.heads.push_back(read_entry(doc["heads"][k], s.nodes.size(), str_cat("head ", k), file));
  if (doc.contains("attrs") && doc["attrs"].is_object() && doc["attrs"].contains("mxnet_version")) {
    const json& v = doc["attrs"]["mxnet_version"];
    if (v.is_array() && v.size() == 2 && v[1].is_number_integer()) s.mxnet_version = v[1].get<int64_t>();
  }
  return s;
}

}  // namespace mxnet_import
NNVM_END_NAMESPACE
