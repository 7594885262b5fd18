// The reference tensors of tests/models/coreml: NumPy .npy files (version 1, little-endian
// float32, C order), as scripts/models/coreml/make_coreml_models.py writes them.
#pragma once

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "nnvm/ndarray.hpp"
#include "support/check.hpp"

namespace coreml_tests {

inline nnvm::NDArray read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() >= 10);
  REQUIRE(bytes.compare(0, 6, "\x93NUMPY") == 0);
  const size_t header_len = size_t(uint8_t(bytes[8])) | size_t(uint8_t(bytes[9])) << 8;
  const std::string header = bytes.substr(10, header_len);
  REQUIRE_MESSAGE(header.find("'descr': '<f4'") != std::string::npos, path);
  REQUIRE_MESSAGE(header.find("'fortran_order': False") != std::string::npos, path);
  // 'shape': (1, 3, 16, 16), or (5,) or ().
  const size_t open = header.find('(', header.find("'shape'")), close = header.find(')', open);
  std::vector<int64_t> shape;
  std::istringstream dims(header.substr(open + 1, close - open - 1));
  for (std::string part; std::getline(dims, part, ',');)
    if (part.find_first_not_of(' ') != std::string::npos) shape.push_back(std::stoll(part));
  nnvm::NDArray a(nnvm::dtype::float32, shape);
  REQUIRE(bytes.size() == 10 + header_len + a.nbytes());
  std::memcpy(a.raw(), bytes.data() + 10 + header_len, a.nbytes());
  return a;
}

}  // namespace coreml_tests
