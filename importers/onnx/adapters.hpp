// Version adapters: nnvm's ops implement the newest version of each ONNX operator, so a node
// from an older opset is rewritten first (attributes that became inputs turn into constant
// inputs, changed defaults are spelled out, renamed operators get their new name). Variadic
// operators (Max, Min, Sum, Mean) with more inputs than their op takes become chains.
//
// Each adapter is one step of an operator's history, like ONNX's own version converter: it takes
// a node from before opset `below` to that opset's version. A node goes through every step its
// model's opset needs, oldest first. The steps out of opsets 1 to 6 are in legacy_adapters.cpp,
// the later ones in adapters.cpp.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "nnvm/graph/node.hpp"
#include "nnvm/importers/scalar_constant.hpp"

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

// A node as the importer is about to build it.
struct NodeBuild {
  std::string op_type;               // renamed by an adapter (Upsample -> Resize)
  std::vector<graph::Value> inputs;  // an undefined Value is an absent optional input
  ops::Attrs attrs;
  size_t num_outputs = 1;  // outputs the ONNX node declares
  const ::onnx::NodeProto* proto = nullptr;  // the node itself, for subgraph attributes
};

// What a rewrite may add to the graph being built.
class BuildContext {
 public:
  virtual ~BuildContext() = default;
  // A constant named after the node being built plus `suffix`.
  virtual graph::Value constant(const std::string& suffix, NDArray data) = 0;
  virtual ops::TensorType type(const graph::Value& v) = 0;
  // The value's data when it is a constant (an initializer, or folded), else nullptr.
  virtual const NDArray* data(const graph::Value& v) = 0;
  // The graph input a value is computed from, or "" (graph::input_behind).
  virtual std::string input_behind(const graph::Value& v) = 0;
  // Imports subgraph `g` in place: its inputs bound to `inputs` (in order), its nodes reading the
  // enclosing graph's values; returns its outputs. Names it defines are visible only inside it.
  // `what` names it in errors ("attribute score_mod").
  virtual std::vector<graph::Value> inline_graph(const ::onnx::GraphProto& g, const std::vector<graph::Value>& inputs,
                                                 const std::string& what) = 0;
  // How many inputs the op answering to onnx:<op_type> takes at most; 0 when none answers.
  virtual size_t max_inputs(const std::string& op_type) = 0;
  // One more op, by ONNX op type, named after the node plus `suffix`; its outputs.
  virtual std::vector<graph::Value> op(const std::string& op_type, std::vector<graph::Value> inputs, ops::Attrs attrs,
                                       const std::string& suffix) = 0;
};

struct VersionAdapter {
  std::string op_type;
  int64_t below = 0;    // applies when the model's default-domain opset is below this
  std::string becomes;  // the op type the node is built as after this step; empty: op_type
  // The rewrite always builds the node's outputs from other ops (or constants): no op needs to
  // answer to op_type or `becomes`, only to `also_needs`.
  bool builds = false;
  // Op types the rewrite always adds besides `becomes` (checked before building).
  std::vector<std::string> also_needs;
  // Why this node cannot be rewritten, or "" (checked before building); may be empty.
  std::function<std::string(const ::onnx::NodeProto&)> unsupported;
  // Rewrites `n` in place. Returns the node's outputs when it built them itself, else {} and
  // the importer builds `n`.
  std::function<std::vector<graph::Value>(NodeBuild& n, BuildContext& ctx)> rewrite;
};

// The adapters for op_type at the model's opset, in the order they apply (oldest step first).
std::vector<const VersionAdapter*> find_adapters(const std::string& op_type, int64_t opset);

// The op type a node of op_type is built as after `steps`.
std::string adapted_op_type(const std::string& op_type, const std::vector<const VersionAdapter*>& steps);

// The steps out of opsets 1 to 6 (legacy_adapters.cpp).
std::vector<VersionAdapter> legacy_adapters();

// Operators built from others: ONNX functions, integer products, float16 products run in
// float32 (composite_ops.cpp). Their rows apply at every opset (`below` is `always`).
std::vector<VersionAdapter> composite_ops();

// Operators whose output shapes depend on input values (windows, NonZero, Compress's
// condition), evaluated when the importer sees those values as constants (constant_ops.cpp).
std::vector<VersionAdapter> constant_ops();

// Operators of ai.onnx.ml and ai.onnx.preview.training built from default-domain ops, keyed
// "domain:OpType" (domain_ops.cpp).
std::vector<VersionAdapter> domain_ops();

// Runs `op_type` on n's inputs in float32 when the first is a storage float (float16, bfloat16):
// the float inputs are widened, the result rounded back once. Returns {} for other types (the
// caller builds the op as it is). MatMul, Gemm and Conv kernels accumulate in float32 or wider.
std::vector<graph::Value> in_float32(NodeBuild& n, BuildContext& ctx, const std::string& op_type);

// Building blocks for the tables.
constexpr int64_t always = std::numeric_limits<int64_t>::max();
ops::Attrs without(const ops::Attrs& attrs, std::string_view name);
void set_input(NodeBuild& n, size_t position, graph::Value v);
// Attribute `name` (ints) becomes an int64 1-D constant at input `position`; absent stays absent.
void ints_to_input(NodeBuild& n, BuildContext& ctx, const std::string& name, size_t position);
// Attribute `name` (a float) becomes a rank-0 constant of `dtype` at input `position`.
void float_to_input(NodeBuild& n, BuildContext& ctx, const std::string& name, size_t position, DataType dtype);
// Removes attributes that a later version dropped without changing what the op computes.
VersionAdapter dropping(std::string op, int64_t below, std::vector<std::string> attrs);
// "" when the node's integer attribute `name` is absent or not `value`, else `why`.
std::string refuse_int(const ::onnx::NodeProto& node, const std::string& name, int64_t value, const std::string& why);
// UserError "nnvm.onnx.shape" unless the inputs' shapes are the same (`why` says which rule);
// the importer adds the file and node to its context, as for an op's own errors.
void require_equal_shapes(const NodeBuild& n, BuildContext& ctx, const std::string& why);

// A rank-0 tensor of `dtype` holding `value` (importers::scalar_constant).
inline NDArray scalar(DataType dtype, double value) { return importers::scalar_constant("onnx", dtype, value); }

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
