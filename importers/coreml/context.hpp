// What the NeuralNetwork layer table and the MIL op table share: the importers' NodeEmitter
// (ops and constants under the layer's or op's name, shapes, errors that name the file, the
// layer and the attribute) and an affine helper.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnvm/importers/node_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

// A name from the file, escaped and quoted for messages: 'conv1'.
inline std::string quote(std::string_view s) { return "'" + printable(s) + "'"; }

// The shared emitter (importers/common) with the one helper both tables add.
class Context : public importers::NodeEmitter {
 public:
  using NodeEmitter::NodeEmitter;

  // x * scale + shift, skipping the identity parts; `suffix` names the intermediate nodes.
  graph::Value affine(graph::Value x, double scale, double shift, const std::string& suffix);
};

}  // namespace coreml_import
NNVM_END_NAMESPACE
