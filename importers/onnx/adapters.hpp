// Version adapters: nnvm's ops implement the newest version of each ONNX operator, so a node
// from an older opset is rewritten first (attributes that became inputs turn into constant
// inputs, changed defaults are spelled out, renamed operators get their new name). Variadic
// operators (Max, Min, Sum, Mean) with more inputs than their op takes become chains.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <vector>

#include "nnvm/graph/node.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// A node as the importer is about to build it.
struct NodeBuild {
  std::string op_type;               // renamed by an adapter (Upsample -> Resize)
  std::vector<graph::Value> inputs;  // an undefined Value is an absent optional input
  ops::Attrs attrs;
  size_t num_outputs = 1;  // outputs the ONNX node declares
};

// What a rewrite may add to the graph being built.
class BuildContext {
 public:
  virtual ~BuildContext() = default;
  // A constant named after the node being built plus `suffix`.
  virtual graph::Value constant(const std::string& suffix, NDArray data) = 0;
  virtual ops::TensorType type(const graph::Value& v) = 0;
  // How many inputs the op answering to onnx:<op_type> takes at most; 0 when none answers.
  virtual size_t max_inputs(const std::string& op_type) = 0;
  // One more op, by ONNX op type, named after the node plus `suffix`; its outputs.
  virtual std::vector<graph::Value> op(const std::string& op_type, std::vector<graph::Value> inputs, ops::Attrs attrs,
                                       const std::string& suffix) = 0;
};

struct VersionAdapter {
  std::string op_type;
  int64_t below = 0;    // applies when the model's default-domain opset is below this
  std::string becomes;  // the op type the node is built as
  // Op types the rewrite always adds besides `becomes` (checked before building).
  std::vector<std::string> also_needs;
  // Why this node cannot be rewritten, or "" (checked before building); may be empty.
  std::function<std::string(const ::onnx::NodeProto&)> unsupported;
  // Rewrites `n` in place. Returns the node's outputs when it built them itself, else {} and
  // the importer builds `n`.
  std::function<std::vector<graph::Value>(NodeBuild& n, BuildContext& ctx)> rewrite;
};

// The adapter for op_type at the model's opset, or nullptr.
const VersionAdapter* find_adapter(const std::string& op_type, int64_t opset);

// A rank-0 tensor of `dtype` holding `value` (converted as a C++ cast would).
NDArray scalar(DataType dtype, double value);

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
