// An MXNet symbol file read into plain structs, validated: every input entry names an earlier
// node (MXNet writes nodes in topological order, so a later one is a hostile or broken file).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

// An output of a node: `node` indexes Symbol::nodes.
struct Entry {
  size_t node = 0;
  size_t index = 0;
};

struct SymbolNode {
  std::string op;  // "null" for a variable (a data input or a parameter)
  std::string name;
  // The op's parameters as MXNet writes them: strings such as "(3, 3)", "True", "relu". Hidden
  // attributes ("__shape__", "__lr_mult__", ...) are kept apart.
  std::map<std::string, std::string> attrs, hidden;
  std::vector<Entry> inputs;
};

struct Symbol {
  std::vector<SymbolNode> nodes;
  std::vector<Entry> heads;
  int64_t mxnet_version = 0;  // from "attrs": {"mxnet_version": ["int", N]}; 0 when absent
};

// Parses `text` (the contents of `file_label`, for messages). ImportError "nnvm.mxnet.file" for
// text that is not JSON or not a symbol, "nnvm.mxnet.graph" for references out of order or range.
Symbol parse_symbol(const std::string& text, const std::string& file_label);

// "node 'conv0' (Convolution)", the context entry for a node in messages.
std::string node_label(const SymbolNode& n);

}  // namespace mxnet_import
NNVM_END_NAMESPACE
