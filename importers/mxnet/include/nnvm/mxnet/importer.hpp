// The MXNet importer: a symbol file (`<prefix>-symbol.json`, as HybridBlock.export and
// mx.model.save_checkpoint write it) and its parameter file (`<prefix>-<epoch>.params`) become a
// graph::Graph of registered ops.
//
//   graph::Graph g = mxnet_import::import_model("resnet18_v1-symbol.json", "resnet18_v1-0000.params",
//                                               {.input_shapes = {{"data", {1, 3, 224, 224}}}});
//
// The symbol JSON of MXNet 1.x ("attrs") and the older spellings ("attr", "param", two-element
// input entries) are read. Ops map onto nnvm's ops through a table (importers/mxnet/convert_*.cpp);
// training-only parts are dropped as MXNet's own inference does: a *Output op's label input,
// Dropout, BatchNorm's batch statistics. Every file is treated as hostile: sizes, node references,
// shapes and array data are validated before use.
//
// Errors are ImportError with ids nnvm.mxnet.file, nnvm.mxnet.params, nnvm.mxnet.graph,
// nnvm.mxnet.shape, nnvm.mxnet.attribute and nnvm.mxnet.unsupported; an op's own error
// (nnvm.ops.*, nnvm.graph.*) keeps its id. The context names the file, then the node, then the
// attribute.
//
// Needs the nnvm_mxnet library (CMake target nnvm::mxnet), which uses nlohmann-json.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nnvm/graph/node.hpp"
#include "nnvm/importers/support_report.hpp"
#include "nnvm/ndarray.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

struct ImportOptions {
  // The shape of each data input (a variable the parameter file does not hold), by name. MXNet's
  // symbol file does not store input shapes unless the model declared them (`__shape__`), so
  // every other input must be named here.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // The element type of a data input, by name; float32 (MXNet's default) when absent, or the
  // symbol's `__dtype__` when it declares one.
  std::map<std::string, DataType> input_dtypes;
  // Symbol files larger than this are rejected before parsing.
  uint64_t max_symbol_bytes = 256ull << 20;
  // Parameter files larger than this are rejected before a byte is read.
  uint64_t max_params_bytes = 8ull << 30;
  // Bytes of constants that constant folding may create during the import (FoldBudget).
  uint64_t fold_budget_bytes = FoldBudget::default_bytes;
  // Where ops are looked up; nullptr means ops::default_registry().
  const ops::OpRegistry* registry = nullptr;
};

// One array of an NDArray file, with the name it was saved under ("" for a saved list).
struct NamedArray {
  std::string name;
  NDArray data;
};

// Reads an MXNet NDArray file (a `.params` file, or what mx.nd.save writes) in file order.
// Dense arrays of float16/32/64, bfloat16, (u)int8/16/32/64 and bool are read; sparse arrays and
// other types are refused (nnvm.mxnet.params, naming the array). Keys keep their "arg:"/"aux:"
// prefixes.
std::vector<NamedArray> read_ndarray_file(const std::string& path, uint64_t max_bytes = 8ull << 30);

// Reads the symbol and lists what cannot be imported (ops without a table entry or with
// attribute values nnvm does not implement). Throws only for files that cannot be read or parsed.
importers::SupportReport check_support(const std::string& symbol_json, const ImportOptions& options = {});

// The model as a graph with constant folding applied. Graph inputs are the symbol's variables
// that are neither parameters nor label inputs, in node order and under their MXNet names;
// g.outputs[k] is the symbol's k-th head. Parameters are matched by name, with or without the
// "arg:"/"aux:" prefixes. `params` may be empty for a symbol without parameters.
graph::Graph import_model(const std::string& symbol_json, const std::string& params,
                          const ImportOptions& options = {});

}  // namespace mxnet_import
NNVM_END_NAMESPACE
