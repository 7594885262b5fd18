// Transpose sinking: transposes move down through the ops that do not care about axis order, and a
// transpose meeting its inverse disappears. Channels-last models (Keras, TensorFlow exports)
// reach the graph as channels-first ops wrapped in layout transposes,
//   x_nhwc -> T(0,3,1,2) -> conv -> T(0,2,3,1) -> relu -> T(0,3,1,2) -> conv -> T(0,2,3,1) -> ...
// and after this pass only the transposes at the model's edges (or before an op that needs the
// channels-last order, such as a flatten) remain; the convolutions then meet their batch norms
// and the blocked layout (alter_layout) as in any channels-first model. ONNX Runtime's
// transpose optimizer and TVM's ConvertLayout do the same work.
//
// One walk in node order. A transpose is not emitted at once: its value is kept pending as
// "base transposed by perm", and a consumer that can absorb it does so:
//   - another transpose composes with it (the identity result is the base itself);
//   - an elementwise or broadcast op whose operands are all pending with one perm, are rank 0,
//     or are constants (reshaped and transposed here into the base's order; constant folding
//     finishes them) runs on the bases, and its result is pending with the same perm;
//   - a concat of values pending with one perm concatenates the bases on the mapped axis.
// Any other consumer, and a graph output, gets the transpose, made once on first use; another
// transpose still composes with the pending one. A value stays pending only while all its
// consumers absorb transposes, so sinking never adds a transpose where the input had one shared
// by several consumers.
#pragma once

#include <numeric>
#include <optional>

#include "nnvm/graph/passes/rewrite.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {

// A value of the old graph that equals transpose(base, perm), base in the new graph.
struct PendingTranspose {
  Value base;
  std::vector<int64_t> perm;  // output axis d is base axis perm[d]
};

inline bool is_identity_perm(const std::vector<int64_t>& perm) {
  for (size_t d = 0; d < perm.size(); ++d)
    if (perm[d] != int64_t(d)) return false;
  return true;
}

inline std::vector<int64_t> inverse_perm(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) inv[size_t(perm[d])] = int64_t(d);
  return inv;
}

// The transpose's perm with ONNX's default (reversed axes) filled in; nullopt if it is not a
// permutation of `rank` axes (the op's own checks report that later).
inline std::optional<std::vector<int64_t>> transpose_perm(const Node& n, size_t rank) {
  std::vector<int64_t> perm = n.attrs.get_ints("perm", {});
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(int64_t(d));
  if (perm.size() != rank) return std::nullopt;
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= int64_t(rank) || seen[size_t(p)]) return std::nullopt;
    seen[size_t(p)] = true;
  }
  return perm;
}

// Ops that may take a pending transpose as an input (whether they do depends on their other
// operands, decided when they are reached).
inline bool absorbs_transposes(const Graph& g, const Node& n) {
  if (n.kind != NodeKind::op || n.num_outputs() != 1) return false;
  if (n.op == "transpose" || n.op == "concat") return true;
  const ops::OpDef& def = g.registry->get(n.op);
  if (def.pattern != ops::OpPattern::elementwise && def.pattern != ops::OpPattern::broadcast) return false;
  for (size_t k = 0; k < n.inputs.size(); ++k)
    if (ops::is_value_input(def, k)) return false;
  return true;
}

}  // namespace detail

NNVM_COMPILER_INLINE Graph sink_transposes(const Graph& g);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE Graph sink_transposes(const Graph& g) {
  using detail::PendingTranspose;
  // Whether every consumer of node i (graph outputs included) can absorb a transpose.
  std::vector<bool> all_absorb(g.nodes.size(), true);
  for (auto& n : g.nodes) {
    bool absorbs = detail::absorbs_transposes(g, n);
    for (auto& v : n.inputs)
      if (v.defined() && !absorbs) all_absorb[v.node] = false;
  }
  for (auto& v : g.outputs) all_absorb[v.node] = false;

  GraphRewriter rw(g);
  std::vector<std::optional<PendingTranspose>> pending(g.nodes.size());
  auto pending_of = [&](const Value& v) -> const PendingTranspose* {
    return v.defined() && v.index == 0 && pending[v.node] && !rw.mapped(v.node) ? &*pending[v.node] : nullptr;
  };
  // Emits the transpose of pending node i (once); afterwards rw.map reads it as any value.
  auto materialize = [&](size_t i) {
    if (!pending[i] || rw.mapped(i)) return;
    const PendingTranspose& p = *pending[i];
    rw.replace(i, {rw.add_op(g.nodes[i].name, "transpose", {p.base}, Attrs().set_ints("perm", p.perm))});
  };
  auto materialize_inputs = [&](const Node& n) {
    for (auto& v : n.inputs)
      if (v.defined()) materialize(v.node);
  };
  // Old node i's output is transpose(base, perm): pending, or the base itself for the identity.
  auto set_result = [&](size_t i, Value base, std::vector<int64_t> perm) {
    if (detail::is_identity_perm(perm)) {
      rw.replace(i, {base});
      return;
    }
    pending[i] = PendingTranspose{base, std::move(perm)};
    if (!all_absorb[i]) materialize(i);
  };
  // A copy of old node i on new inputs, its types inferred again.
  auto add_copy = [&](size_t i, std::vector<Value> inputs, Attrs attrs) {
    Node n = g.nodes[i];
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.types = detail::infer_node(rw.result(), n);
    return Value{rw.add(std::move(n)), 0};
  };
  // A non-pending operand of an op that runs on bases transposed by `perm` (rank r): rank 0 is
  // unchanged; a constant is broadcast to rank r and put in the base's axis order; anything
  // else cannot follow (nullopt).
  auto operand_in_base_order = [&](const Value& v, const std::vector<int64_t>& perm,
                                   const std::string& base_name) -> std::optional<Value> {
    if (!v.defined()) return v;
    const TensorType& t = g.type(v);
    if (t.shape.empty()) return rw.map(v);
    if (g.node(v).kind != NodeKind::constant || t.shape.size() > perm.size()) return std::nullopt;
    Value c = rw.map(v);
    if (t.shape.size() < perm.size()) {
      std::vector<int64_t> shape(perm.size() - t.shape.size(), 1);
      for (int64_t e : g.node(v).data->shape()) shape.push_back(e);
      NDArray s(dtype::int64, {int64_t(shape.size())});
      std::copy(shape.begin(), shape.end(), s.values<int64_t>().begin());
      c = rw.add_op(base_name + "/reshape", "reshape", {c, rw.add_constant(base_name + "/shape", std::move(s))}, {});
    }
    return rw.add_op(base_name + "/transpose", "transpose", {c}, Attrs().set_ints("perm", detail::inverse_perm(perm)));
  };

  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind != NodeKind::op || !detail::absorbs_transposes(g, n)) {
      if (n.kind == NodeKind::op || n.kind == NodeKind::control) materialize_inputs(n);
      rw.keep(i);
      continue;
    }
    if (n.op == "transpose") {
      const Value& x = n.inputs.at(0);
      auto perm = detail::transpose_perm(n, g.type(x).shape.size());
      if (!perm) {
        materialize_inputs(n);
        rw.keep(i);
        continue;
      }
      // transpose(transpose(b, q), p): output axis d is b's axis q[p[d]]. This holds even when
      // transpose(b, q) was made for another consumer: reading b saves a transpose here.
      Value base;
      std::vector<int64_t> composed = *perm;
      if (const PendingTranspose* in = x.index == 0 && pending[x.node] ? &*pending[x.node] : nullptr) {
        base = in->base;
        for (size_t d = 0; d < composed.size(); ++d) composed[d] = in->perm[size_t((*perm)[d])];
      } else {
        base = rw.map(x);
      }
      set_result(i, base, std::move(composed));
      continue;
    }
    // Elementwise, broadcast or concat: the perm of the first pending operand decides.
    const PendingTranspose* first = nullptr;
    for (auto& v : n.inputs)
      if ((first = pending_of(v))) break;
    const size_t rank = n.types.at(0).shape.size();
    bool follows = first && first->perm.size() == rank;
    std::vector<Value> inputs;
    if (follows) {
      const std::vector<int64_t> perm = first->perm;
      for (auto& v : n.inputs) {
        if (const PendingTranspose* p = pending_of(v)) {
          follows = p->perm == perm;
          inputs.push_back(p->base);
        } else if (n.op == "concat") {
          follows = false;
        } else if (auto c = operand_in_base_order(v, perm, n.name)) {
          inputs.push_back(*c);
        } else {
          follows = false;
        }
        if (!follows) break;
      }
    }
    if (!follows) {
      materialize_inputs(n);
      rw.keep(i);
      continue;
    }
    const std::vector<int64_t> perm = first->perm;
    Attrs attrs = n.attrs;
    if (n.op == "concat") {
      int64_t axis = attrs.get_int("axis", 0);
      if (axis < 0) axis += int64_t(rank);
      attrs.set_int("axis", perm.at(size_t(axis)));
    }
    set_result(i, add_copy(i, std::move(inputs), std::move(attrs)), perm);
  }
  for (auto& v : g.outputs) materialize(v.node);
  return rw.finish();
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
