// Layout alteration for CPUs: 2-D float32 convolutions with constant weights run in the blocked
// layout NCHW[x]c (conv_nchwc, depthwise_conv_nchwc), and the feature maps between them stay
// blocked, so layout transforms appear only where the chain meets an op that needs NCHW (a
// reshape, a graph output). TVM's AlterOpLayout for x86, in one walk over the graph:
//   - a convertible conv becomes the blocked op; its weights and bias are repacked here, once;
//   - max, average and global pools of a blocked value pool it blocked (see convert_pool);
//   - an elementwise op on a blocked value, and a broadcasting op whose operands are blocked
//     alike (a residual add) or are one element (a scalar), run on the blocked values;
//   - a channel concat of values blocked alike (SqueezeNet's fire modules, DenseNet's blocks,
//     Inception's branches) concatenates the blocks;
//   - any other consumer of a blocked value gets it back in NCHW through one layout_transform,
//     made on first use and shared.
// Block sizes: one, two or four vectors of output channels (several when they divide the channel
// count, for independent weight vectors per input load; one for what a depthwise conv reads, see
// output_block); a conv takes its input in whatever block its producer left it when that divides
// its channels, so chains need no repacking.
#pragma once

#include <optional>

#include "nnvm/graph/passes/rewrite.hpp"
#include "nnvm/ops/conv/layout_transform.hpp"
#include "nnvm/ops/conv/nchwc_schedule.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {

// A value of the new graph in the blocked layout NCHW{block}c.
struct BlockedValue {
  Value value;
  int64_t block = 0;
};

inline const NDArray* float32_constant(const Graph& g, const Value& v) {
  if (!v.defined()) return nullptr;
  const Node& n = g.node(v);
  return n.kind == NodeKind::constant && n.data->dtype() == dtype::float32 ? n.data.get() : nullptr;
}

// W (M, C, KH, KW) as (M / ob, C / ib, KH, KW, ib, ob).
inline NDArray pack_conv_weights(const NDArray& w, int64_t ib, int64_t ob) {
  auto s = w.shape();
  int64_t M = s[0], C = s[1], KH = s[2], KW = s[3];
  NDArray p(dtype::float32, {M / ob, C / ib, KH, KW, ib, ob});
  auto src = w.values<float>();
  auto dst = p.values<float>();
  size_t at = 0;
  for (int64_t mo = 0; mo < M / ob; ++mo)
    for (int64_t co = 0; co < C / ib; ++co)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          for (int64_t ci = 0; ci < ib; ++ci)
            for (int64_t mi = 0; mi < ob; ++mi)
              dst[at++] = src[size_t((((mo * ob + mi) * C + co * ib + ci) * KH + kh) * KW + kw)];
  return p;
}

// Depthwise W (C, 1, KH, KW) as (C / b, KH, KW, b).
inline NDArray pack_depthwise_weights(const NDArray& w, int64_t b) {
  auto s = w.shape();
  int64_t C = s[0], KH = s[2], KW = s[3];
  NDArray p(dtype::float32, {C / b, KH, KW, b});
  auto src = w.values<float>();
  auto dst = p.values<float>();
  size_t at = 0;
  for (int64_t co = 0; co < C / b; ++co)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t ci = 0; ci < b; ++ci) dst[at++] = src[size_t(((co * b + ci) * KH + kh) * KW + kw)];
  return p;
}

// A bias (M) as (M / ob, ob): the same elements in the same order.
inline NDArray pack_bias(const NDArray& b, int64_t ob) {
  NDArray p(dtype::float32, {b.shape()[0] / ob, ob});
  std::copy(b.values<float>().begin(), b.values<float>().end(), p.values<float>().begin());
  return p;
}

class LayoutAlteration {
 public:
  LayoutAlteration(const Graph& g, const target::Target& t)
      : g_(g),
        rw_(g),
        target_(t),
        lanes_(t.vector_lanes(dtype::float32)),
        uses_(use_counts(g)),
        feeds_depthwise_(depthwise_inputs(g)),
        blocked_(g.nodes.size()),
        pending_(g.nodes.size()) {}

  Graph run() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.kind == NodeKind::op && (convert_conv(i) || convert_pool(i) || convert_elementwise(i) || convert_concat(i)))
        continue;
      for (auto& v : n.inputs) plain(v);
      rw_.keep(i);
    }
    for (auto& v : g_.outputs) plain(v);
    return rw_.finish();
  }

 private:
  // Old value `v` in NCHW in the new graph; a blocked-only value gets its layout_transform here.
  Value plain(const Value& v) {
    if (v.defined() && pending_[v.node]) {
      pending_[v.node] = false;
      const BlockedValue& b = *blocked_[v.node];
      std::string layout = ops::ChannelLayout::blocked_by(2, b.block).to_string();
      rw_.replace(v.node, {transform(g_.nodes[v.node].name + "_nchw", b.value, layout, "NCHW")});
    }
    return rw_.map(v);
  }

  // Old value `v` (NCHW, 4-D) in NCHW{block}c in the new graph.
  Value in_block(const Value& v, int64_t block) {
    if (auto& b = blocked_[v.node]; b && b->block == block) return b->value;
    auto key = std::make_pair(v.node, block);
    if (auto it = repacked_.find(key); it != repacked_.end()) return it->second;
    std::string dst = ops::ChannelLayout::blocked_by(2, block).to_string();
    Value out = blocked_[v.node]
                    ? transform(g_.nodes[v.node].name + "_" + dst, blocked_[v.node]->value,
                                ops::ChannelLayout::blocked_by(2, blocked_[v.node]->block).to_string(), dst)
                    : transform(g_.nodes[v.node].name + "_" + dst, plain(v), "NCHW", dst);
    repacked_[key] = out;
    return out;
  }

  Value transform(const std::string& base, const Value& v, const std::string& src, const std::string& dst) {
    Attrs a;
    a.set_string("src_layout", src);
    a.set_string("dst_layout", dst);
    return rw_.add_op(base, "layout_transform", {v}, std::move(a));
  }

  // The block of a value's channels the conv reading it should use: the producer's, when it
  // divides `channels`; else the largest of two vectors, one vector, 4, 2, 1 that does.
  int64_t input_block(const Value& x, int64_t channels) const {
    if (auto& b = blocked_[x.node]; b && channels % b->block == 0) return b->block;
    for (int64_t c : {2 * lanes_, lanes_, int64_t(4), int64_t(2)})
      if (channels % c == 0) return c;
    return 1;
  }
  // The block of a conv's output channels: two or four vectors (ops::nchwc_output_block, for
  // several weight vectors per input load), except for a value a depthwise conv reads (node `i` in
  // `feeds_depthwise_`): a depthwise conv runs fastest on one-vector blocks (its padded input
  // rows stay in L1), and its producer's block is its own. Zero when nothing divides them.
  int64_t output_block(int64_t channels, size_t i) const {
    if (feeds_depthwise_[i]) return channels % lanes_ == 0 ? lanes_ : 0;
    auto shape = constant_shape(g_.nodes[i].types[0]);
    return ops::nchwc_output_block(channels, shape ? shape->back() : 1, target_);
  }

  // A conv node the pass can block: float32 2-D, constant weights and bias, one group or
  // depthwise (a group per channel).
  struct ConvForm {
    int64_t C = 0, M = 0;
    const NDArray* w = nullptr;
    const NDArray* bias = nullptr;
    bool depthwise = false;
  };
  static std::optional<ConvForm> blockable_conv(const Graph& g, const Node& n) {
    if (n.kind != NodeKind::op || n.op != "conv" || n.inputs.size() < 2 || n.num_outputs() != 1) return std::nullopt;
    const TensorType& xt = g.type(n.inputs[0]);
    auto xs = constant_shape(xt);
    ConvForm f;
    f.w = float32_constant(g, n.inputs[1]);
    bool has_bias = n.inputs.size() > 2 && n.inputs[2].defined();
    f.bias = has_bias ? float32_constant(g, n.inputs[2]) : nullptr;
    if (xt.dtype != dtype::float32 || !xs || xs->size() != 4 || !f.w || f.w->shape().size() != 4 || (has_bias && !f.bias))
      return std::nullopt;
    f.C = (*xs)[1];
    f.M = f.w->shape()[0];
    int64_t group = n.attrs.get_int("group", 1);
    f.depthwise = group > 1 && group == f.C && f.M == f.C && f.w->shape()[1] == 1;
    if (group != 1 && !f.depthwise) return std::nullopt;
    return f;
  }

  // By node: whether its output reaches a depthwise conv's input directly or through
  // elementwise and broadcast ops (MobileNet's expand conv -> clip -> depthwise conv).
  static std::vector<bool> depthwise_inputs(const Graph& g) {
    std::vector<bool> feeds(g.nodes.size());
    for (size_t i = g.nodes.size(); i-- > 0;) {
      const Node& n = g.nodes[i];
      if (n.kind != NodeKind::op) continue;
      auto conv = blockable_conv(g, n);
      const ops::OpPattern p = g.registry->get(n.op).pattern;
      bool passes_on = feeds[i] && (p == ops::OpPattern::elementwise || p == ops::OpPattern::broadcast);
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k].defined() && ((conv && conv->depthwise && k == 0) || passes_on)) feeds[n.inputs[k].node] = true;
    }
    return feeds;
  }

  bool convert_conv(size_t i) {
    const Node& n = g_.nodes[i];
    auto conv = lanes_ >= 2 ? blockable_conv(g_, n) : std::nullopt;
    if (!conv) return false;
    const auto [C, M, w, bias, depthwise] = *conv;
    // A depthwise conv keeps a one- or two-vector block its producer chose (no repacking), else
    // takes one vector.
    int64_t ob = output_block(M, i);
    if (depthwise) {
      auto& producer = blocked_[n.inputs[0].node];
      bool vector_block = producer && (producer->block == lanes_ || producer->block == 2 * lanes_);
      ob = vector_block ? producer->block : C % lanes_ == 0 ? lanes_ : 0;
    }
    if (ob == 0) return false;
    Attrs a;
    for (const char* k : {"strides", "dilations", "pads", "kernel_shape"})
      if (n.attrs.has(k)) a.set_ints(k, n.attrs.get_ints(k));
    if (n.attrs.has("auto_pad")) a.set_string("auto_pad", n.attrs.get_string("auto_pad"));
    std::vector<Value> in;
    if (depthwise) {
      in = {in_block(n.inputs[0], ob), rw_.add_constant(n.name + "_w_nchwc", pack_depthwise_weights(*w, ob))};
    } else {
      int64_t ib = input_block(n.inputs[0], C);
      in = {in_block(n.inputs[0], ib), rw_.add_constant(n.name + "_w_nchwc", pack_conv_weights(*w, ib, ob))};
    }
    if (bias) in.push_back(rw_.add_constant(n.name + "_b_nchwc", pack_bias(*bias, ob)));
    Value y = rw_.add_op(n.name + "_nchwc", depthwise ? "depthwise_conv_nchwc" : "conv_nchwc", std::move(in), a);
    mark_blocked(i, y, ob);
    return true;
  }

  // A 2-D pool of a blocked value stays blocked as a 3-D pool whose window is one element along
  // the channel block: kernel (KH, KW, 1), strides and dilations (.., 1), no pads on that axis;
  // a global pool becomes the pool whose window is the whole image. A max pool's Indices (flat
  // NCHW positions) would change meaning, so a max pool whose Indices are read stays in NCHW.
  bool convert_pool(size_t i) {
    const Node& n = g_.nodes[i];
    bool global = n.op == "global_average_pool" || n.op == "global_max_pool";
    if (!global && n.op != "average_pool" && n.op != "max_pool") return false;
    if (n.inputs.empty() || !n.inputs[0].defined() || !blocked_[n.inputs[0].node]) return false;
    if (n.num_outputs() > 1 && uses_[i][1] > 0) return false;
    const TensorType& xt = g_.type(n.inputs[0]);
    auto xs = constant_shape(xt);
    if (xt.dtype != dtype::float32 || !xs || xs->size() != 4) return false;
    Attrs a;
    if (global) {
      a.set_ints("kernel_shape", {(*xs)[2], (*xs)[3], 1});
    } else {
      if (!n.attrs.has("kernel_shape") || n.attrs.get_ints("kernel_shape").size() != 2) return false;
      auto widen = [&](const char* key, size_t rank) {
        if (!n.attrs.has(key)) return true;
        auto v = n.attrs.get_ints(key);
        if (v.size() != rank) return false;
        if (rank == 4) v = {v[0], v[1], 0, v[2], v[3], 0};  // pads: begins, then ends
        else v.push_back(1);
        a.set_ints(key, v);
        return true;
      };
      if (!widen("kernel_shape", 2) || !widen("strides", 2) || !widen("dilations", 2) || !widen("pads", 4))
        return false;
      for (const char* k : {"ceil_mode", "count_include_pad"})
        if (n.attrs.has(k)) a.set_int(k, n.attrs.get_int(k));
      if (n.attrs.has("auto_pad")) a.set_string("auto_pad", n.attrs.get_string("auto_pad"));
    }
    const BlockedValue& x = *blocked_[n.inputs[0].node];
    std::string op = n.op == "global_average_pool" ? "average_pool" : n.op == "global_max_pool" ? "max_pool" : n.op;
    if (op == "max_pool") a.set_int("compute_indices", 0);
    mark_blocked(i, rw_.add_op(n.name + "_nchwc", op, {x.value}, std::move(a)), x.block);
    return true;
  }

  // An elementwise op reading one blocked value (its other inputs compile-time values), or a
  // broadcast op whose operands are all blocked alike or single elements.
  bool convert_elementwise(size_t i) {
    const Node& n = g_.nodes[i];
    const ops::OpDef& def = g_.registry->get(n.op);
    if ((def.pattern != ops::OpPattern::elementwise && def.pattern != ops::OpPattern::broadcast) ||
        n.num_outputs() != 1 || g_.nodes[i].types[0].shape.size() != 4)
      return false;
    int64_t block = 0;
    bool any_blocked = false;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& v = n.inputs[k];
      if (!v.defined() || ops::is_value_input(def, k)) continue;
      if (auto& b = blocked_[v.node]; b && same_shape(g_.type(v), n.types[0])) {
        if (block != 0 && block != b->block) return false;
        block = b->block;
        any_blocked = true;
      } else if (!single_element(g_.type(v))) {
        return false;
      }
    }
    if (!any_blocked) return false;
    std::vector<Value> in;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& v = n.inputs[k];
      bool blocked_operand = v.defined() && !ops::is_value_input(def, k) && blocked_[v.node];
      in.push_back(!v.defined() ? v : blocked_operand ? blocked_[v.node]->value : plain(v));
    }
    mark_blocked(i, rw_.add_op(n.name + "_nchwc", n.op, std::move(in), n.attrs), block);
    return true;
  }

  // A concat along the channels (axis 1) of 4-D values that are all blocked with one block:
  // NCHW{b}c holds channel c at (c / b, c % b), so concatenating the channel blocks (axis 1 of
  // the 5-D layout) is the blocked form of the NCHW concat when every input's channels are a
  // whole number of blocks.
  bool convert_concat(size_t i) {
    const Node& n = g_.nodes[i];
    if (n.op != "concat" || n.inputs.empty() || n.types[0].shape.size() != 4) return false;
    int64_t axis = n.attrs.get_int("axis", 0);
    if (axis != 1 && axis != -3) return false;
    int64_t block = 0;
    std::vector<Value> in;
    for (auto& v : n.inputs) {
      if (!v.defined() || !blocked_[v.node]) return false;
      auto s = constant_shape(g_.type(v));
      const int64_t b = blocked_[v.node]->block;
      if (!s || (block != 0 && b != block) || (*s)[1] % b != 0) return false;
      block = b;
      in.push_back(blocked_[v.node]->value);
    }
    mark_blocked(i, rw_.add_op(n.name + "_nchwc", "concat", std::move(in), Attrs().set_int("axis", 1)), block);
    return true;
  }

  void mark_blocked(size_t i, const Value& v, int64_t block) {
    blocked_[i] = BlockedValue{v, block};
    pending_[i] = true;
  }

  static bool same_shape(const TensorType& a, const TensorType& b) {
    auto x = constant_shape(a), y = constant_shape(b);
    return x && y && *x == *y;
  }
  static bool single_element(const TensorType& t) {
    auto s = constant_shape(t);
    return s && s->size() <= 4 && std::all_of(s->begin(), s->end(), [](int64_t e) { return e == 1; });
  }

  const Graph& g_;
  GraphRewriter rw_;
  target::Target target_;
  int64_t lanes_;
  std::vector<std::vector<int>> uses_;                // by old node and output: its readers
  std::vector<bool> feeds_depthwise_;                 // by old node: see depthwise_inputs
  std::vector<std::optional<BlockedValue>> blocked_;  // by old node: its output in a blocked layout
  std::vector<bool> pending_;                         // blocked, and its NCHW form not made yet
  std::map<std::pair<size_t, int64_t>, Value> repacked_;
};

}  // namespace detail

// `g` with its convolutions in NCHW[x]c for CPU target `t` (unchanged for other targets).
inline Graph alter_layout(const Graph& g, const target::Target& t) {
  if (t.recipe_family() != target::Family::cpu) return g;
  return detail::LayoutAlteration(g, t).run();
}

}  // namespace graph
NNVM_END_NAMESPACE
