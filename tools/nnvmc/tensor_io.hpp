// Tensors in and out of nnvmc: NumPy .npy files and ONNX TensorProto .pb files, generated
// inputs, and the one-line summaries `run` prints.
#pragma once

#include <string>

#include "nnvm/ndarray.hpp"

namespace nnvmc {

// Reads .npy (little-endian, C order, the dtypes nnvm has) or .pb (TensorProto). Errors name the
// file and what is wrong (UserError nnvm.cli.tensor_file).
nnvm::NDArray read_tensor(const std::string& path);
void write_npy(const std::string& path, const nnvm::NDArray& a);

// Deterministic inputs: floats uniform in [-1, 1), integers in [0, 4), bools alternating.
nnvm::NDArray generated_input(nnvm::DataType t, const std::vector<int64_t>& shape, uint32_t seed);

// "float32 [1x1000] min -3.1 max 9.2 mean 0.001 first [0.1, 0.2, ...]".
std::string summary(const nnvm::NDArray& a);

// The element as a double (any dtype nnvm has; float16/bfloat16 decoded).
double element(const nnvm::NDArray& a, int64_t i);

}  // namespace nnvmc
