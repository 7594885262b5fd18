// Evaluating one op node at compile time, for constant folding: the op is built for its input
// types (value inputs as attributes), lowered without a schedule and run by the reference
// interpreter. The interpreter runs the same compute the kernels run, so a folded constant
// equals what the compiled model would have computed, and folding needs no C compiler.
#pragma once

#include <optional>
#include <set>

#include "nnvm/graph/infer.hpp"
#include "nnvm/ops/build.hpp"
#include "nnvm/target/interpreter.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
// The placeholders the outputs' computes read, directly or through intermediate stages.
inline std::set<const te::TensorNode*> read_placeholders(const std::vector<te::Tensor>& outputs) {
  std::set<const te::TensorNode*> seen, placeholders;
  std::vector<const te::TensorNode*> work;
  for (auto& o : outputs) work.push_back(o.get());
  while (!work.empty()) {
    const te::TensorNode* t = work.back();
    work.pop_back();
    if (!seen.insert(t).second) continue;
    if (t->op->kind == te::OpKind::placeholder) placeholders.insert(t);
    for (auto& in : t->op->inputs) work.push_back(in.get());
  }
  return placeholders;
}

inline std::vector<int64_t> constant_shape(const TensorType& t, const Graph& g, const Node& n) {
  std::vector<int64_t> shape;
  for (auto& e : t.shape) {
    auto c = ir::simplified_const_int(e);
    if (!c) throw UserError("nnvm.graph.not_constant", "a folded value has a symbolic extent", where(g, &n));
    shape.push_back(*c);
  }
  return shape;
}

// Runs `f`, a step of folding node `n`. Lowering and the interpreter know the tensor or buffer
// that went wrong but not the node being folded, so their errors get "graph › node › constant
// folding" in front (an error that already names the graph is passed on as it is).
template <class F>
auto folding(const Graph& g, const Node& n, F&& f) -> decltype(f()) {
  auto named = [](const Error& e) { return !e.context().empty() && e.context()[0].rfind("graph ", 0) == 0; };
  auto at_node = [&](const Error& e) {
    std::vector<std::string> ctx = where(g, &n);
    ctx.push_back("constant folding");
    ctx.insert(ctx.end(), e.context().begin(), e.context().end());
    return ctx;
  };
  try {
    return f();
  } catch (const InternalError& e) {
    if (named(e)) throw;
    throw InternalError(e.id(), e.message(), at_node(e));
  } catch (const UserError& e) {
    if (named(e)) throw;
    throw UserError(e.id(), e.message(), at_node(e));
  }
}

// The op of node `n` built for folding: its compute lowered without a schedule.
inline ops::BuiltOp build_for_folding(const Graph& g, const Node& n, const ops::OpDef& def) {
  return folding(g, n, [&] { return ops::build(def, input_types(g, n), node_attrs(g, n, def), {}, {.schedule = false}); });
}
}  // namespace detail

// The bytes of node `n`'s outputs together, or nullopt when an extent is symbolic.
inline std::optional<uint64_t> output_bytes(const Node& n) {
  uint64_t total = 0;
  for (auto& t : n.types) {
    std::vector<int64_t> extents;
    for (auto& d : t.shape) {
      auto c = ir::simplified_const_int(d);
      if (!c) return std::nullopt;
      extents.push_back(*c);
    }
    // Inference already bounded each output (nnvm.graph.too_large), so this cannot fail or wrap.
    total += checked_tensor_bytes(extents, uint64_t(t.dtype.bytes())).value_or(max_tensor_bytes);
  }
  return total;
}

// True when node `n` can be folded: every input its computed outputs actually read is a
// constant (a Shape op reads none), and its outputs have constant extents.
inline bool foldable(const Graph& g, const Node& n) {
  if (n.kind != NodeKind::op) return false;
  const ops::OpDef& def = g.registry->get(n.op);
  for (auto& t : n.types)
    for (auto& e : t.shape)
      if (!ir::simplified_const_int(e)) return false;
  ops::BuiltOp b = detail::build_for_folding(g, n, def);
  auto reads = detail::read_placeholders(b.outputs);
  for (size_t k : b.kernel_inputs)
    if (reads.count(b.inputs[k].get()) && g.node(n.inputs[k]).kind != NodeKind::constant) return false;
  return true;
}

// The outputs of op node `n`, computed by the interpreter from its constant inputs. Inputs the
// compute does not read (Shape's) are given as zeroed buffers of the right type.
NNVM_COMPILER_INLINE std::vector<NDArray> evaluate(const Graph& g, const Node& n);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE std::vector<NDArray> evaluate(const Graph& g, const Node& n) {
  const ops::OpDef& def = g.registry->get(n.op);
  ops::BuiltOp b = detail::build_for_folding(g, n, def);
  auto reads = detail::read_placeholders(b.outputs);
  std::vector<NDArray> outs;
  for (auto& t : n.types) outs.emplace_back(t.dtype, detail::constant_shape(t, g, n));
  std::vector<NDArray> unread;
  std::vector<BufferView> views;
  for (size_t k : b.kernel_inputs) {
    const Node& p = g.node(n.inputs[k]);
    if (p.kind == NodeKind::constant) {
      views.push_back(const_cast<NDArray&>(*p.data).view());
    } else if (!reads.count(b.inputs[k].get())) {
      // A real (zeroed) buffer: a smaller one would look like it overlapped the outputs.
      unread.emplace_back(g.type(n.inputs[k]).dtype, detail::constant_shape(g.type(n.inputs[k]), g, n));
      views.push_back(unread.back().view());
    } else {
      throw UserError("nnvm.graph.not_constant",
                      str_cat("input ", k, " (", def.input_names[k], ") is not a constant"), detail::where(g, &n));
    }
  }
  for (auto& o : outs) views.push_back(o.view());
  detail::folding(g, n, [&] { target::interpret(b.func, std::span<const BufferView>(views)); });
  return outs;
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
