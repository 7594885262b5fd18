// Imports a one-node ONNX model (y = Relu(x), x float[5]) with nnvm::onnx, compiles it with the
// host C compiler and runs it; exits 0 when the result is right. The model is written here in
// protobuf's wire format, so the program needs neither a model file nor protobuf's headers.
#include <nnvm/onnx/importer.hpp>
#include <nnvm/nnvm.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

namespace {

std::string varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out += char(0x80 | (v & 0x7f));
  return out + char(v);
}
// Field `number` as a varint (wire type 0) or as bytes / a nested message (wire type 2).
std::string field(int number, uint64_t v) { return varint(uint64_t(number) << 3) + varint(v); }
std::string field(int number, const std::string& bytes) {
  return varint(uint64_t(number) << 3 | 2) + varint(bytes.size()) + bytes;
}

// ValueInfoProto{name, type: TypeProto{tensor_type: {elem_type: FLOAT (1), shape: [n]}}}.
std::string float_vector(const std::string& name, int64_t n) {
  std::string shape = field(1, field(1, uint64_t(n)));  // TensorShapeProto.dim.dim_value
  return field(1, name) + field(2, field(1, field(1, uint64_t(1)) + field(2, shape)));
}

std::string relu_model() {
  std::string node = field(1, "x") + field(2, "y") + field(3, "relu") + field(4, "Relu");
  std::string graph = field(1, node) + field(2, "consumer") + field(11, float_vector("x", 5)) +
                      field(12, float_vector("y", 5));
  // ModelProto{ir_version: 8, graph, opset_import: {domain: "", version: 14}}
  return field(1, uint64_t(8)) + field(7, graph) + field(8, field(2, uint64_t(14)));
}

}  // namespace

int main() {
  using namespace nnvm;
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("nnvm_consumer_relu_" + std::to_string(getpid()) + ".onnx");
  std::ofstream(path, std::ios::binary) << relu_model();
  graph::Graph g = onnx_import::import_model(path.string());
  std::filesystem::remove(path);
  graph::CompiledModel model = graph::compile(g);
  NDArray x(dtype::float32, {5});
  const float in[5] = {-2.0f, -0.5f, 0.0f, 1.5f, 3.0f};
  for (int k = 0; k < 5; ++k) x.values<float>()[size_t(k)] = in[k];
  std::vector<NDArray> y = model.run({x});
  if (y.size() != 1 || y[0].shape() != std::vector<int64_t>{5}) return std::puts("wrong output shape"), 1;
  for (int k = 0; k < 5; ++k)
    if (y[0].values<float>()[size_t(k)] != (in[k] > 0.0f ? in[k] : 0.0f)) return std::puts("wrong result"), 1;
  return 0;
}
