// QDQ pairs as one op: a dequantize_linear reading a quantize_linear, both per tensor, with
// integer (8- or 16-bit) steps and float32 values, becomes one fake_quantize
// (ops/quant/fake_quantize.hpp), which computes the same bits.
//
// Quantized models in QDQ form (ONNX Runtime's quantization tool, PyTorch's and TensorFlow's
// exporters) wrap every activation in such a pair. Left as two injective ops whose scales are
// inputs, each pair stops the convolution before it from fusing its epilogue and from keeping
// its blocked layout, so every layer pays a layout transform and an extra pass over memory.
// As one broadcast op with scalar parameters the pair fuses like a ReLU. Per-axis and blocked
// pairs (weights, which constant folding has already turned into float constants) are left as
// they are. A quantize_linear whose every reader was a pair becomes dead code.
#pragma once

#include "nnvm/graph/passes/rewrite.hpp"
#include "nnvm/ops/quant/quant_params.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {

// Whether quantize/dequantize node `n` has neither blocks nor a precision of its own.
inline bool default_quant_attrs(const Node& n) {
  return n.attrs.get_int("block_size", 0) == 0 && !n.attrs.has("precision");
}

// Whether `v` is a scalar or a one-element 1-D tensor of type `t`: what fake_quantize takes.
inline bool scalar_of(const Graph& g, const Value& v, DataType t) {
  if (!v.defined() || g.type(v).dtype != t) return false;
  auto s = detail::constant_shape(g.type(v));
  return s && (s->empty() || *s == std::vector<int64_t>{1});
}

}  // namespace detail

inline Graph fuse_qdq_pairs(const Graph& g) {
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& dq = g.nodes[i];
    if (dq.kind != NodeKind::op || dq.op != "dequantize_linear" || dq.inputs.size() < 2 || !dq.inputs[0].defined()) {
      rw.keep(i);
      continue;
    }
    const Node& q = g.node(dq.inputs[0]);
    // Zero points may be absent; present, they have the integer type.
    DataType step = q.kind == NodeKind::op ? q.types[0].dtype : DataType();
    auto zero_point_ok = [&](const Node& n) { return n.inputs.size() < 3 || !n.inputs[2].defined() || detail::scalar_of(g, n.inputs[2], step); };
    bool pair = q.kind == NodeKind::op && q.op == "quantize_linear" && q.inputs.size() >= 2 &&
                detail::default_quant_attrs(q) && detail::default_quant_attrs(dq) && ops::quant_integer(step, false) &&
                g.type(q.inputs[0]).dtype == dtype::float32 && dq.types[0].dtype == dtype::float32 &&
                detail::scalar_of(g, q.inputs[1], dtype::float32) && detail::scalar_of(g, dq.inputs[1], dtype::float32) &&
                zero_point_ok(q) && zero_point_ok(dq);
    if (!pair) {
      rw.keep(i);
      continue;
    }
    // ONNX's default zero point is 0 of the integer type.
    auto zero_point = [&](const Node& n, const std::string& side) {
      bool given = n.inputs.size() > 2 && n.inputs[2].defined();
      return given ? rw.map(n.inputs[2]) : rw.add_constant(dq.name + "_" + side + "_zero_point", NDArray(step, {}));
    };
    Value fused = rw.add_op(dq.name + "_pair", "fake_quantize",
                            {rw.map(q.inputs[0]), rw.map(q.inputs[1]), zero_point(q, "y"),
                             rw.map(dq.inputs[1]), zero_point(dq, "x")},
                            {});
    rw.replace(i, {fused});
  }
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
