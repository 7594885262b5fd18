// What an importer can and cannot import from a model file, decided before anything is built, so
// a user sees every gap at once (nnvmc inspect, check_support) instead of the first error.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

// One thing the importer cannot turn into nnvm ops.
struct Unsupported {
  std::string node;    // node name (or its first output), or the weight/input name
  std::string op;      // the format's op type; empty for a weight or graph input
  std::string domain;  // the op's domain when the format has several; "" for the default one
  int64_t opset = 0;   // the model's op-set version for that domain
  std::string dtypes;  // the declared types of the node's inputs where the model states them
  std::string reason;
};

struct SupportReport {
  std::string format;          // "ONNX", for the summary line
  std::string default_domain;  // how the summary names domain "" ("ai.onnx")
  std::vector<Unsupported> items;
  // Node count per op ("Relu", or "domain:Op" outside the default domain).
  std::map<std::string, int64_t> op_counts;
  int64_t ir_version = 0;                 // the file format's version
  std::map<std::string, int64_t> opsets;  // domain ("" is the default) -> version
  std::string producer;                   // the program that wrote the file, and its version
  std::vector<std::string> inputs;        // graph inputs that are not weights, in order
  std::vector<std::string> outputs;       // graph outputs, in order
  std::set<std::string> sequences;        // the inputs and outputs that are sequences of tensors (or optionals of one)
  std::set<std::string> optionals;        // the inputs and outputs that are optionals

  bool supported() const { return items.empty(); }
  // A summary line, then one line per unsupported item. Every name from the file is escaped.
  std::string to_string() const;
};

}  // namespace importers
NNVM_END_NAMESPACE
