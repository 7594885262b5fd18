// Read-only access to an HDF5 file held in memory (a legacy Keras .h5 model, or the
// model.weights.h5 inside a .keras archive), through the HDF5 C library (Debian: libhdf5-dev).
// Only what the Keras importer needs: groups and their children, string attributes and numeric
// datasets. Every failure is an ImportError "nnvm.keras.file" (or .weights) naming the file and
// the object; HDF5's own error printing is switched off. The serial HDF5 library is not thread
// safe, so every call here holds one process-wide lock.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nnvm/ndarray.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

class H5File {
 public:
  // Opens the HDF5 image `bytes`; `label` names it in errors ("file model.h5", "file m.keras ›
  // model.weights.h5"). Datasets larger than `max_dataset_bytes` are refused before reading.
  H5File(const std::string& bytes, std::string label, uint64_t max_dataset_bytes);
  ~H5File();
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;

  const std::string& label() const { return label_; }

  // Whether `path` ("layers/dense/vars") names a group or a dataset.
  bool exists(const std::string& path) const;
  bool is_group(const std::string& path) const;
  // The names of the group's members, in the file's name order.
  std::vector<std::string> children(const std::string& group) const;
  // A string attribute of object `path` ("/" is the file): nullopt when absent; an error when it
  // is not a string.
  std::optional<std::string> string_attribute(const std::string& path, const std::string& name) const;
  // A 1-D string array attribute (also: a scalar string as one element, an empty numeric array
  // as none, as h5py writes an empty list).
  std::vector<std::string> string_list_attribute(const std::string& path, const std::string& name) const;
  // A numeric dataset: floats of 8 bytes as float64, other floats (float16 included) as float32,
  // integers as int64. `where` is added to errors.
  NDArray dataset(const std::string& path, const std::vector<std::string>& where) const;

 private:
  [[noreturn]] void fail(const std::string& id, const std::string& what, const std::vector<std::string>& where) const;

  std::string label_;
  uint64_t max_dataset_bytes_;
  int64_t file_ = -1;  // hid_t
};

}  // namespace keras_import
NNVM_END_NAMESPACE
