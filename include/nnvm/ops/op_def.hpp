// The definition of one operator: everything nnvm knows about it, in one value. Built-in ops
// and a user's own ops are the same kind of thing; the registry (registry.hpp) only stores them.
//
// Shape and dtype rules are not a separate function: `compute` checks its inputs and decides
// the output shapes and dtypes as it builds the output tensors, and `infer_types` runs it on
// placeholders. Building the compute is cheap (no lowering), and one function cannot drift
// from another that restates its rules.
//
// Attribute names: an op that answers to an importer name uses that format's attribute names
// (Gemm's transA, Softmax's axis), so an importer passes a node's attributes through unchanged.
#pragma once

#include <algorithm>
#include <functional>

#include "nnvm/ir/simplify.hpp"
#include "nnvm/ndarray.hpp"
#include "nnvm/ops/attrs.hpp"
#include "nnvm/schedule/schedule.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

using target::Target;

// How an op's outputs read its inputs; the graph layer decides what to fuse from it.
enum class OpPattern : uint8_t {
  elementwise,  // output[i] depends on input[i] only, same shape
  broadcast,    // elementwise after broadcasting inputs to a common shape
  injective,    // each output element reads a few input elements (transpose, reshape, slice)
  reduction,    // output elements combine many input elements along axes (sum, softmax)
  out_fusable,  // heavy compute whose output an elementwise op can follow in one loop (dense, conv)
  opaque,       // do not fuse
};
inline const char* pattern_name(OpPattern p) {
  static const char* const names[] = {"elementwise", "broadcast", "injective", "reduction", "out_fusable", "opaque"};
  return names[static_cast<int>(p)];
}

// The type of one tensor value: element type and extents (constants, or symbolic sizes such as
// a batch `Var`).
struct TensorType {
  DataType dtype;
  std::vector<ir::Expr> shape;
  // An optional input left out in the middle of the list (ONNX writes "" for it: Clip(X, "", max)).
  bool absent = false;

  TensorType() = default;
  TensorType(DataType t, std::vector<ir::Expr> s) : dtype(t), shape(std::move(s)) {}
  TensorType(DataType t, const std::vector<int64_t>& s) : dtype(t) {
    for (int64_t e : s) shape.emplace_back(e);
  }
  TensorType(DataType t, std::initializer_list<int64_t> s) : TensorType(t, std::vector<int64_t>(s)) {}
  static TensorType of(const te::Tensor& t) { return {t.dtype(), t.shape()}; }
  static TensorType none() {
    TensorType t;
    t.absent = true;
    return t;
  }
};

using ComputeFn = std::function<std::vector<te::Tensor>(const std::vector<te::Tensor>& inputs, const Attrs& attrs)>;
// Schedules the stages that produce `outputs` (as made by the op's compute) for `target`.
using ScheduleFn = std::function<void(schedule::Schedule& sch, const std::vector<te::Tensor>& outputs,
                                      const Target& target)>;
// Schedules the op's stages together with `epilogue`, the one output of a fused group whose other
// members (elementwise ops reading the op's single output, and their other inputs) are inlined
// into it: the op's result then never goes to memory (TVM's out-fusable epilogue). `epilogue`
// has the op's output shape. Returns false when it cannot, and the caller schedules as usual.
using FusedScheduleFn = std::function<bool(schedule::Schedule& sch, const std::vector<te::Tensor>& outputs,
                                           const te::Tensor& epilogue, const Target& target)>;

// An aggregate, so a definition reads as designated initializers:
//   OpDef{.name = "hard_swish", .importer_names = {"onnx:HardSwish"}, .input_names = {"X"},
//         .pattern = OpPattern::elementwise, .compute = ..., .cpu_schedule = ...}
struct OpDef {
  // Lowercase identifier, dots allowed for families ("dense", "image.resize"). Unique in a registry.
  std::string name;
  // "format:OpType" names importers look the op up by ("onnx:Gemm"); each unique in a registry.
  std::vector<std::string> importer_names;
  // One name per input, in order; they name the kernel's parameters and appear in errors.
  std::vector<std::string> input_names;
  // How many trailing inputs are optional (Gemm's C). Trailing ones may be left out; one in the
  // middle may be given as an undefined tensor (te::Tensor()), which the compute must accept.
  size_t optional_inputs = 0;
  // Inputs whose values must be known when the op is compiled, by input name (Reshape's shape,
  // Slice's starts). The graph layer takes them from constant producers and passes them to the
  // compute as attributes of the same name: integer and bool data as a list of ints, float data as
  // a list of floats (a scalar is a list of one). The compute still receives a placeholder at their
  // position but must not read it, and kernels do not take them as parameters.
  std::vector<std::string> value_inputs;
  OpPattern pattern = OpPattern::opaque;
  // Required. Checks ranks, extents, dtypes and attributes (UserError ids nnvm.ops.input_shape,
  // nnvm.ops.input_dtype, nnvm.ops.attr) and returns the output tensors (at least one).
  ComputeFn compute;
  // Optional: checks the data of inputs that are constants in the graph, for what ONNX calls an
  // error but a kernel cannot report (Gather's indices out of range). `data[i]` is the data of
  // input i, or null when it is not a constant; the types and attributes are infer_types'.
  // UserError (nnvm.ops.index_range) with "input <name>" as context.
  std::function<void(const std::vector<TensorType>& inputs, const std::vector<const NDArray*>& data,
                     const Attrs& attrs)>
      check_constants;
  // Optional, one per target family: the op's dedicated schedule. A family the op has none for
  // gets that family's generic recipe for the op's pattern (schedule_generic.hpp), so a new
  // family needs no change here unless an op wants a schedule of its own.
  ScheduleFn cpu_schedule;
  ScheduleFn gpu_schedule;
  // Optional, for out_fusable ops on CPUs: the schedule when elementwise ops follow in the same
  // kernel.
  FusedScheduleFn cpu_fused_schedule;
  // One line for listings and generated docs.
  std::string doc;
};

namespace detail {
inline bool valid_op_name(const std::string& s) {
  if (s.empty() || s.front() == '.' || s.back() == '.' || !(s.front() >= 'a' && s.front() <= 'z')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return true;
}
inline bool valid_importer_name(const std::string& s) {
  size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size() || s.find(':', colon + 1) != std::string::npos)
    return false;
  for (char c : s)
    if (c == ' ' || c == '\t' || c == '\n') return false;
  return true;
}

// Prepends `outer` to a UserError's context chain (outermost first: op › attribute).
[[noreturn]] inline void rethrow_with_context(const UserError& e, const std::string& outer) {
  std::vector<std::string> ctx{outer};
  ctx.insert(ctx.end(), e.context().begin(), e.context().end());
  throw UserError(e.id(), e.message(), std::move(ctx));
}
}  // namespace detail

// Throws UserError "nnvm.ops.invalid" naming what is wrong with `def`.
inline void validate(const OpDef& def) {
  auto bad = [&](const std::string& why) {
    throw UserError("nnvm.ops.invalid", why, {"op " + (def.name.empty() ? std::string("<unnamed>") : def.name)});
  };
  if (!detail::valid_op_name(def.name))
    bad(str_cat("op name '", def.name, "' must be a lowercase identifier (a-z, 0-9, '_', inner '.')"));
  if (!def.compute) bad("the op has no compute function");
  if (def.optional_inputs > def.input_names.size())
    bad(str_cat(def.optional_inputs, " optional inputs but only ", def.input_names.size(), " input names"));
  for (auto& v : def.value_inputs)
    if (std::find(def.input_names.begin(), def.input_names.end(), v) == def.input_names.end())
      bad(str_cat("value input '", v, "' is not one of the input names"));
  for (size_t i = 0; i < def.input_names.size(); ++i) {
    if (def.input_names[i].empty()) bad(str_cat("input ", i, " has an empty name"));
    for (size_t j = 0; j < i; ++j)
      if (def.input_names[i] == def.input_names[j]) bad(str_cat("input name '", def.input_names[i], "' appears twice"));
  }
  for (size_t i = 0; i < def.importer_names.size(); ++i) {
    if (!detail::valid_importer_name(def.importer_names[i]))
      bad(str_cat("importer name '", def.importer_names[i], "' must read format:OpType, e.g. onnx:Relu"));
    for (size_t j = 0; j < i; ++j)
      if (def.importer_names[i] == def.importer_names[j])
        bad(str_cat("importer name '", def.importer_names[i], "' appears twice"));
  }
}

// Runs the op's compute on `inputs` (placeholders, or tensors of an enclosing computation, as a
// TOPI function would be called). Checks the input count (UserError "nnvm.ops.input_count") and
// that the compute returned outputs; UserErrors from the compute get "op <name>" as the outermost
// context.
inline std::vector<te::Tensor> apply(const OpDef& def, const std::vector<te::Tensor>& inputs, const Attrs& attrs = {}) {
  std::string where = "op " + def.name;
  if (!def.compute) throw UserError("nnvm.ops.invalid", "the op has no compute function", {where});
  size_t most = def.input_names.size(), least = most - std::min(def.optional_inputs, most);
  if (inputs.size() < least || inputs.size() > most)
    throw UserError("nnvm.ops.input_count",
                    str_cat("takes ", least == most ? str_cat(most) : str_cat(least, " to ", most), " input",
                            most == 1 ? "" : "s", ", got ", inputs.size()),
                    {where});
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined() && i < least)
      throw UserError("nnvm.ops.input_count", str_cat("input ", i, " (", def.input_names[i], ") is required"), {where});
  std::vector<te::Tensor> outs;
  try {
    outs = def.compute(inputs, attrs);
  } catch (const UserError& e) {
    detail::rethrow_with_context(e, where);
  }
  if (outs.empty()) throw UserError("nnvm.ops.invalid", "the compute function returned no outputs", {where});
  for (auto& o : outs)
    if (!o.defined()) throw UserError("nnvm.ops.invalid", "the compute function returned an undefined tensor", {where});
  return outs;
}

// True when input `i` of `def` is one of its value inputs.
inline bool is_value_input(const OpDef& def, size_t i) {
  return i < def.input_names.size() &&
         std::find(def.value_inputs.begin(), def.value_inputs.end(), def.input_names[i]) != def.value_inputs.end();
}

// One placeholder per input, named after the op's input names; undefined for an absent input.
inline std::vector<te::Tensor> placeholders(const OpDef& def, const std::vector<TensorType>& inputs) {
  std::vector<te::Tensor> ph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].absent) {
      ph.emplace_back();
      continue;
    }
    std::vector<ir::Expr> shape = inputs[i].shape;
    // A value input is never read, so an empty one (ReduceSum's axes = []) needs no real extent;
    // tensors cannot have zero extents.
    if (is_value_input(def, i))
      for (auto& e : shape)
        if (ir::is_const_int(e, 0)) e = ir::Expr(int64_t(1));
    ph.push_back(te::placeholder(shape, inputs[i].dtype, i < def.input_names.size() ? def.input_names[i] : str_cat("in", i)));
  }
  return ph;
}

// The output types for inputs of the given types: the op's shape and dtype rule. Output extents
// are expressions of the input extents (simplified), so symbolic sizes flow through.
inline std::vector<TensorType> infer_types(const OpDef& def, const std::vector<TensorType>& inputs,
                                           const Attrs& attrs = {}) {
  std::vector<TensorType> out;
  std::vector<te::Tensor> ph = placeholders(def, inputs);
  for (auto& t : apply(def, ph, attrs)) {
    TensorType tt = TensorType::of(t);
    for (auto& e : tt.shape) e = ir::simplify(e);
    out.push_back(std::move(tt));
  }
  return out;
}

}  // namespace ops
NNVM_END_NAMESPACE
