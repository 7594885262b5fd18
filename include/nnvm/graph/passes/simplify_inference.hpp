// Simplifications valid for inference: identity and inference-mode dropout disappear (their
// users read the input directly), a max pool whose Indices nobody reads stops computing them,
// and a batch normalization that follows a convolution with
// constant weights is folded into the convolution's weights and bias:
//   s = scale / sqrt(var + eps);  W'[o] = W[o] * s[o];  B'[o] = (B[o] - mean[o]) * s[o] + beta[o].
#pragma once

#include <cmath>

#include "nnvm/graph/passes/rewrite.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
inline bool is_float32_constant(const Graph& g, const Value& v) {
  if (!v.defined()) return false;
  const Node& n = g.node(v);
  return n.kind == NodeKind::constant && n.data->dtype() == dtype::float32;
}

// The folded conv for batch_norm node `bn` (old graph) reading conv node `conv`; npos if the
// pattern does not apply.
inline size_t fold_batch_norm(GraphRewriter& rw, const Graph& g, const Node& bn, const Node& conv) {
  if (conv.inputs.size() < 2 || bn.inputs.size() != 5) return Value::npos;
  for (size_t k = 1; k < 5; ++k)
    if (!is_float32_constant(g, bn.inputs[k])) return Value::npos;
  if (!is_float32_constant(g, conv.inputs[1])) return Value::npos;
  bool has_bias = conv.inputs.size() > 2 && conv.inputs[2].defined();
  if (has_bias && !is_float32_constant(g, conv.inputs[2])) return Value::npos;
  const NDArray& w = *g.node(conv.inputs[1]).data;
  int64_t out_channels = w.shape().at(0), per_channel = w.numel() / std::max<int64_t>(out_channels, 1);
  auto vec = [&](size_t k) { return g.node(bn.inputs[k]).data->values<float>(); };
  auto scale = vec(1), beta = vec(2), mean = vec(3), var = vec(4);
  if (int64_t(scale.size()) != out_channels || int64_t(beta.size()) != out_channels ||
      int64_t(mean.size()) != out_channels || int64_t(var.size()) != out_channels)
    return Value::npos;
  double eps = bn.attrs.get_float("epsilon", 1e-5);
  NDArray w2(dtype::float32, w.shape()), b2(dtype::float32, {out_channels});
  auto wv = w.values<float>();
  auto w2v = w2.values<float>();
  for (int64_t o = 0; o < out_channels; ++o) {
    double s = double(scale[size_t(o)]) / std::sqrt(double(var[size_t(o)]) + eps);
    for (int64_t j = 0; j < per_channel; ++j)
      w2v[size_t(o * per_channel + j)] = float(double(wv[size_t(o * per_channel + j)]) * s);
    double b = has_bias ? double(g.node(conv.inputs[2]).data->values<float>()[size_t(o)]) : 0.0;
    b2.values<float>()[size_t(o)] = float((b - double(mean[size_t(o)])) * s + double(beta[size_t(o)]));
  }
  Node folded = conv;
  folded.name = rw.fresh_name(conv.name + "_bn");
  folded.inputs = {rw.map(conv.inputs[0]), rw.add_constant(conv.name + "_w_bn", std::move(w2)),
                   rw.add_constant(conv.name + "_b_bn", std::move(b2))};
  return rw.add(std::move(folded));
}
}  // namespace detail

inline Graph simplify_inference(const Graph& g) {
  auto uses = use_counts(g);
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::op && n.op == "identity" && n.inputs.size() == 1) {
      rw.replace(i, {rw.map(n.inputs[0])});
      continue;
    }
    // Dropout's optional mask output must be unused: it is not a copy of the input.
    if (n.kind == NodeKind::op && n.op == "dropout" && (n.num_outputs() < 2 || uses[i][1] == 0)) {
      std::vector<Value> outs{rw.map(n.inputs[0])};
      if (n.num_outputs() > 1) outs.push_back(Value{});
      rw.replace(i, outs);
      continue;
    }
    // A max pool's Indices cost a second pass over the input; ONNX models rarely read them.
    if (n.kind == NodeKind::op && n.op == "max_pool" && n.num_outputs() == 2 && uses[i][1] == 0) {
      ops::Attrs attrs = n.attrs;
      attrs.set_int("compute_indices", 0);
      rw.keep_with(i, std::move(attrs));
      continue;
    }
    if (n.kind == NodeKind::op && n.op == "batch_norm" && n.num_outputs() == 1) {
      const Value& x = n.inputs[0];
      const Node& producer = g.node(x);
      if (producer.kind == NodeKind::op && producer.op == "conv" && uses[x.node][x.index] == 1) {
        size_t folded = detail::fold_batch_norm(rw, g, n, producer);
        if (folded != Value::npos) {
          rw.replace(i, {{folded, 0}});
          continue;
        }
      }
    }
    rw.keep(i);
  }
  // The conv the batch norm consumed may now be dead; dead-code elimination removes it.
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
