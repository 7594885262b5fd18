#include "weights.hpp"

#include <algorithm>
#include <charconv>

NNVM_BEGIN_NAMESPACE
namespace keras_import {

void LayerWeights::read_vars(const std::string& group, std::vector<NDArray>& out,
                             const std::vector<std::string>& where) const {
  const std::string vars = group + "/vars";
  if (!file_->is_group(vars)) return;
  std::vector<std::pair<int64_t, std::string>> numbered;
  for (auto& name : file_->children(vars)) {
    int64_t k = -1;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), k);
    if (ec != std::errc() || end != name.data() + name.size() || k < 0)
      throw ImportError("nnvm.keras.weights", str_cat("the weight ", printable(vars + "/" + name), " is not numbered"),
                        where);
    numbered.emplace_back(k, name);
  }
  std::sort(numbered.begin(), numbered.end());
  for (size_t i = 0; i < numbered.size(); ++i) {
    if (numbered[i].first != int64_t(i))
      throw ImportError("nnvm.keras.weights", str_cat(printable(vars), " has no weight ", i), where);
    out.push_back(file_->dataset(vars + "/" + numbered[i].second, where));
  }
}

std::vector<NDArray> LayerWeights::read(const std::vector<std::string>& subgroups,
                                        const std::vector<std::string>& where) const {
  std::vector<NDArray> out;
  if (!file_) return out;
  if (legacy_) {
    if (!file_->is_group(group_)) return out;
    std::vector<std::string> names = file_->string_list_attribute(group_, "weight_names");
    if (names.size() % parts_ != 0)
      throw ImportError("nnvm.keras.weights",
                        str_cat("the wrapper's ", names.size(), " weights do not split into ", parts_, " equal parts"),
                        where);
    const size_t each = names.size() / parts_;
    for (size_t k = part_ * each; k < (part_ + 1) * each; ++k) out.push_back(file_->dataset(group_ + "/" + names[k], where));
    return out;
  }
  if (!file_->is_group(group_)) return out;
  read_vars(group_, out, where);
  for (auto& sub : subgroups) read_vars(group_ + "/" + sub, out, where);
  return out;
}

LayerWeights LayerWeights::wrapped(const std::string& group, size_t part, size_t parts) const {
  if (!legacy_) return LayerWeights(file_, group_ + "/" + group, false);
  LayerWeights w(file_, group_, true);
  w.part_ = part;
  w.parts_ = parts;
  return w;
}

}  // namespace keras_import
NNVM_END_NAMESPACE
