// The ONNX importer: an .onnx file becomes a graph::Graph of registered ops.
//
//   auto report = onnx_import::check_support("model.onnx");   // what is missing, without throwing
//   graph::Graph g = onnx_import::import_model("model.onnx", {.symbols = {{"batch", 1}}});
//
// Nodes map to ops by importer name ("onnx:" + op_type); ops implement the newest ONNX version
// of their operator and the importer rewrites older versions (attributes that became inputs,
// changed defaults, broadcasting rules). Opsets 1 to 28 of the default domain are read. Every
// file is treated as hostile: sizes, shapes, tensor data and external-data paths are validated
// before use.
//
// Errors are ImportError (nnvm/error.hpp) with ids nnvm.onnx.file, nnvm.onnx.tensor,
// nnvm.onnx.external_data, nnvm.onnx.unsupported, nnvm.onnx.graph, nnvm.onnx.shape,
// nnvm.onnx.attribute; an op's own error (nnvm.ops.*, nnvm.graph.*) keeps its id. The context
// chain names the file, then the node, initializer or input, then the attribute.
//
// Needs the nnvm_onnx library (CMake target nnvm::onnx), which links protobuf and libonnx.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nnvm/graph/node.hpp"
#include "nnvm/importers/support_report.hpp"
#include "nnvm/ndarray.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import {

// The default-domain opsets the importer reads.
inline constexpr int64_t oldest_opset = 1;
inline constexpr int64_t newest_opset = 28;

struct ImportOptions {
  // Replaces the shape the model declares for a graph input, by input name (all extents >= 0).
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Graph inputs whose values are fixed when compiling, by name: they become constants, so ops
  // that need compile-time values (Reshape's shape, ReduceSum's axes) can read them, and the
  // compiled model no longer takes them. The test runner binds such inputs from a data set.
  std::map<std::string, NDArray> constant_inputs;
  // Binds symbolic extents (ONNX dim_param, e.g. "batch") to numbers; unbound ones stay ir::Var.
  std::map<std::string, int64_t> symbols;
  // The element shapes of each graph input that is a sequence of tensors, by input name. nnvm
  // compiles sequences whose length and element shapes are known at compile time: such an input
  // becomes one graph input per element, "<name>[k]", in order (a sequence output likewise
  // becomes one graph output per element).
  std::map<std::string, std::vector<std::vector<int64_t>>> sequence_inputs;
  // Graph inputs of optional type that are empty (None), by name. nnvm compiles optionals whose
  // presence is known at compile time: any other optional input holds its element and is taken
  // as that tensor (or sequence, per sequence_inputs). An empty optional graph output gives no
  // graph output.
  std::set<std::string> empty_optional_inputs;
  // Model and .pb files larger than this are rejected before parsing. Protobuf cannot parse 2 GiB
  // or more, so larger values are clamped to 2 GiB - 1; big weights belong in external data.
  uint64_t max_file_bytes = (2ull << 30) - 1;
  // Bytes of constants that constant folding may create during the import (FoldBudget);
  // nodes past it stay ops. Bounds what a small hostile file can cost in memory and time.
  uint64_t fold_budget_bytes = FoldBudget::default_bytes;
  // Where ops are looked up; nullptr means ops::default_registry().
  const ops::OpRegistry* registry = nullptr;
};

// What check_support reports (nnvm/importers/support_report.hpp): the ONNX domain of each item,
// opsets by domain, and ir_version as the file format's version.
using importers::SupportReport;
using importers::Unsupported;

// Reads the model and lists what cannot be imported. Throws only for files that cannot be read
// or parsed (nnvm.onnx.file).
SupportReport check_support(const std::string& path, const ImportOptions& options = {});

// The model as a graph with constant folding applied. Graph inputs are the model's inputs that
// are not initializers, in model order and under their ONNX names; g.outputs[k] is the model's
// k-th output. Op nodes carry the ONNX node name (or their first output's name when the node has
// none). Anything unsupported is reported in one ImportError (nnvm.onnx.unsupported) listing
// every item, before any node is built.
graph::Graph import_model(const std::string& path, const ImportOptions& options = {});

// A serialized TensorProto (the node test suite's test_data_set_*/input_0.pb), validated like an
// initializer; external data is resolved relative to the file's directory.
NDArray read_tensor_pb(const std::string& path, const ImportOptions& options = {});
// A serialized SequenceProto of tensors (a sequence input or output of the node test suite): its
// elements, in order.
std::vector<NDArray> read_sequence_pb(const std::string& path, const ImportOptions& options = {});
// A serialized OptionalProto (an optional input or output of the node test suite).
struct OptionalValue {
  enum class Holds { nothing, tensor, sequence } holds = Holds::nothing;
  std::vector<NDArray> elements;  // the tensor, or the sequence's elements in order
};
OptionalValue read_optional_pb(const std::string& path, const ImportOptions& options = {});

}  // namespace onnx_import
NNVM_END_NAMESPACE
