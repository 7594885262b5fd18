// What the reductions and the ops built on them share: ONNX's axes / keepdims rules, the index
// plumbing between an input and its reduced output, dtype checks, and the stage lookup their
// default schedules use.
#pragma once

#include <cmath>
#include <functional>
#include <unordered_set>

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// An ONNX flag attribute (keepdims, exclusive, largest, ...): 0 or 1; "nnvm.ops.attr" otherwise.
inline bool flag_attr(const Attrs& attrs, const char* name, bool fallback) {
  int64_t v = attrs.get_int(name, fallback ? 1 : 0);
  if (v != 0 && v != 1)
    throw UserError("nnvm.ops.attr", str_cat("attribute '", name, "' is ", v, " but must be 0 or 1"),
                    {"attribute " + std::string(name)});
  return v == 1;
}

// The dimensions an ONNX Reduce* op folds, one flag per input dimension. The "axes" value input
// (an attribute here) absent or empty means every dimension, or none when noop_with_empty_axes
// is 1. Negative axes count from the back; an axis out of range or listed twice is
// "nnvm.ops.attr".
inline std::vector<bool> reduce_axes_mask(size_t rank, const Attrs& attrs) {
  std::vector<int64_t> axes = attrs.get_ints("axes", {});
  bool noop = flag_attr(attrs, "noop_with_empty_axes", false);
  std::vector<bool> mask(rank, axes.empty() && !noop);
  for (int64_t a : axes) {
    size_t d = normalize_axis(a, rank, "axes");
    if (mask[d])
      throw UserError("nnvm.ops.attr", str_cat("attribute 'axes' lists dimension ", d, " twice"), {"attribute axes"});
    mask[d] = true;
  }
  return mask;
}

// The extents after reducing `shape` over `mask`: reduced dimensions become 1 (keepdims) or go.
inline std::vector<ir::Expr> reduced_shape(const std::vector<ir::Expr>& shape, const std::vector<bool>& mask,
                                           bool keepdims) {
  std::vector<ir::Expr> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!mask[d])
      out.push_back(shape[d]);
    else if (keepdims)
      out.emplace_back(int64_t(1));
  }
  return out;
}

// The input index that output index `out` (of reduced_shape) reads, with the reduced dimensions
// at `r` (one expression per reduced dimension, in dimension order).
inline std::vector<ir::Expr> unreduced_index(const std::vector<ir::Var>& out, const std::vector<bool>& mask,
                                             bool keepdims, const std::vector<ir::Expr>& r) {
  std::vector<ir::Expr> idx;
  size_t o = 0, k = 0;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) {
      idx.push_back(r.at(k++));
      if (keepdims) ++o;
    } else {
      idx.emplace_back(out.at(o++));
    }
  }
  return idx;
}

// The index into a keepdims reduction of one dimension `axis` for input index `in`.
inline std::vector<ir::Expr> row_index(const std::vector<ir::Var>& in, size_t axis) {
  std::vector<ir::Expr> idx(in.begin(), in.end());
  idx[axis] = ir::Expr(int64_t(0));
  return idx;
}

inline std::vector<ir::Expr> as_index(const std::vector<ir::Var>& v) { return {v.begin(), v.end()}; }

// The type arithmetic on elements of type `t` runs in: float16 and bfloat16 are storage types and
// compute in float32; bool (only min/max take it) compares as uint8.
inline DataType compute_dtype(DataType t) {
  if (t.is_storage_only()) return dtype::float32;
  if (t.is_bool()) return dtype::uint8;
  return t;
}
// Element `idx` of `x`, in its compute_dtype.
inline ir::Expr load_compute(const te::Tensor& x, std::vector<ir::Expr> idx) {
  return ir::cast(compute_dtype(x.dtype()), x(std::move(idx)));
}

// Which element types an op takes; floats (float16/bfloat16 too) always.
struct DtypeRule {
  bool ints = false;  // integers of at least `int_bits` bits, signed or unsigned
  int int_bits = 32;
  bool bools = false;
};
// "nnvm.ops.input_dtype" unless `x`'s element type is one `rule` allows.
inline void check_reduce_dtype(const te::Tensor& x, const char* input, DtypeRule rule) {
  DataType t = x.dtype();
  bool ok = t.is_scalar() &&
            (t.is_float() || (rule.bools && t.is_bool()) || (rule.ints && t.is_integer() && t.bits >= rule.int_bits));
  if (!ok) {
    std::string want = !rule.ints          ? "a float"
                       : rule.int_bits > 8 ? str_cat("a float or an integer of at least ", rule.int_bits, " bits")
                                           : "a number";
    if (rule.bools) want += " or bool";
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", x.name(), ") is ", t, ", expected ", want),
                    {"input " + std::string(input)});
  }
}

// +inf / -inf in a float type, else the type's largest / smallest value: where max and min start,
// so that an input holding -inf still has -inf as its maximum.
inline ir::Expr highest_value(DataType t) { return t.is_float() ? ir::make_const(t, INFINITY) : ir::max_value(t); }
inline ir::Expr lowest_value(DataType t) { return t.is_float() ? ir::make_const(t, -INFINITY) : ir::min_value(t); }

// A reduction stage scheduled by schedule_reduction, anything else by schedule_injective.
inline void schedule_stage(schedule::Schedule& s, const te::Tensor& t, const Target& target) {
  if (t.op().reduce_axes.empty())
    schedule_injective(s[t], target);
  else
    schedule_reduction(s[t], target);
}

// The compute stage named `name` that `t`'s compute reads; how a default schedule finds the
// intermediate stages its op's compute made without touching the stages of an enclosing
// computation that feed the op.
inline te::Tensor stage_read_by(const te::Tensor& t, const std::string& name) {
  for (auto& in : t.op().inputs)
    if (in->name == name && in->op->kind == te::OpKind::compute) return te::Tensor(in);
  throw InternalError("nnvm.ops.schedule", str_cat("stage ", t.name(), " reads no stage named ", name));
}

// Schedules `outputs` and the intermediate stages the op made for them (schedule_stage each, the
// intermediates computed at root). By the convention of this family an intermediate is named
// after the output it feeds, "<output>_<what>", so the walk stops at the op's inputs.
inline void schedule_op_stages(schedule::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  std::unordered_set<const ir::ProducerNode*> done;
  std::function<void(const te::Tensor&, const std::string&)> visit = [&](const te::Tensor& t,
                                                                         const std::string& prefix) {
    if (!done.insert(t.get()).second) return;
    schedule_stage(s, t, target);
    for (auto& in : t.op().inputs)
      if (in->op->kind == te::OpKind::compute && in->name.rfind(prefix, 0) == 0) visit(te::Tensor(in), prefix);
  };
  for (auto& o : outputs) visit(o, o.name() + "_");
}

}  // namespace ops
NNVM_END_NAMESPACE
