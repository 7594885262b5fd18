// Where one layer's weights live in the file, and reading them in Keras' order (layer.weights):
//   - .keras (Keras 3): "layers/<snake_case class><_k>/vars/<i>" — named after the layer's class
//     and its position among the model's layers of that class, not after the layer's name — and
//     sublayers' vars below it ("multi_head_attention/query_dense/vars/0", "lstm/cell/vars/0");
//   - legacy .h5: "model_weights/<layer name>", whose attribute weight_names lists the datasets
//     in order.
#pragma once

#include <string>
#include <vector>

#include "h5_file.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

class LayerWeights {
 public:
  LayerWeights() = default;  // a file without weights
  static LayerWeights keras3(const H5File* file, std::string group) { return {file, std::move(group), false}; }
  static LayerWeights legacy(const H5File* file, std::string group) { return {file, std::move(group), true}; }

  // The weights: a .keras file's own vars, then each of `subgroups`' vars in that order; a
  // legacy file's weight_names in order (its own order already has the sublayers').
  std::vector<NDArray> read(const std::vector<std::string>& subgroups, const std::vector<std::string>& where) const;

  // The weights of a wrapped layer (Bidirectional's two directions): a .keras file's subgroup
  // `group` ("forward_layer"); in a legacy file, part `part` of `parts` equal slices of the
  // wrapper's weight_names (Keras lists the forward layer's, then the backward layer's).
  LayerWeights wrapped(const std::string& group, size_t part, size_t parts) const;

 private:
  LayerWeights(const H5File* file, std::string group, bool legacy) : file_(file), group_(std::move(group)), legacy_(legacy) {}
  // "<group>/vars/0", "<group>/vars/1", ... in numeric order; none when the group has no vars.
  void read_vars(const std::string& group, std::vector<NDArray>& out, const std::vector<std::string>& where) const;

  const H5File* file_ = nullptr;
  std::string group_;
  bool legacy_ = false;
  size_t part_ = 0, parts_ = 1;  // a legacy file's slice of weight_names
};

}  // namespace keras_import
NNVM_END_NAMESPACE
