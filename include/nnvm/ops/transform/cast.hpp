// cast (ONNX Cast) and cast_like (ONNX CastLike): every element converted to another dtype.
// Float to integer truncates toward zero; a value outside the target's range is undefined (as in
// C), except for int4/uint4/int2/uint2, which keep the low bits (the value wraps, as ONNX's
// reference does). Anything to bool is "!= 0"; bool to a number is 0 or 1. The storage types
// convert through float32. To a float8/float4 type (ir/small_float.hpp: round to nearest even),
// ONNX's `saturate` (default 1) clamps to the largest finite value first, infinity included;
// saturate=0 gives infinity or NaN as the format has them. To FLOAT8E8M0, `round_mode` picks
// the power of two: "up" (the default: the least one >= x), "down" or "nearest".
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct CastSpec {
  bool saturate = true;
  enum class Round { up, down, nearest } e8m0_round = Round::up;
};

namespace cast_detail {
// float32 `x` converted to float8/float4 type `to` as `spec` says.
inline ir::Expr to_small_float(ir::Expr x, DataType to, const CastSpec& spec) {
  auto f32 = [](double v) { return ir::make_const(dtype::float32, v); };
  if (const SmallFloatFormat* f = small_float_format(to)) {
    if (spec.saturate)  // NaN compares false and passes through
      x = ir::select(x > f32(f->max_value()), f32(f->max_value()), ir::select(x < f32(-f->max_value()), f32(-f->max_value()), x));
    return ir::cast(to, x);
  }
  const double top = std::ldexp(1.0, 127);  // FLOAT8E8M0's largest value
  if (spec.saturate) x = ir::select(x > f32(top), f32(top), x);
  ir::Expr r = ir::cast(to, x), rf = ir::cast(dtype::float32, r);
  switch (spec.e8m0_round) {
    case CastSpec::Round::up: return ir::select(rf < x, ir::cast(to, rf * f32(2.0)), r);
    case CastSpec::Round::down: return ir::select(rf > x, ir::cast(to, rf * f32(0.5)), r);
    case CastSpec::Round::nearest: break;
  }
  return r;
}
}  // namespace cast_detail

inline te::Tensor cast(const te::Tensor& x, DataType to, std::string name = "cast", CastSpec spec = {}) {
  DataType from = x.dtype();
  if (!from.is_scalar() || from.is_handle())
    throw UserError("nnvm.ops.input_dtype", str_cat("input input (tensor ", x.name(), ") is ", from, ", expected a scalar type"),
                    {"input input"});
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(transform_detail::exprs(v));
        if (from == to) return e;
        if (to.is_small_float())
          return cast_detail::to_small_float(e.dtype() == dtype::float32 ? e : ir::cast(dtype::float32, e), to, spec);
        // Storage types have no conversions of their own but to and from float32.
        if (from.is_storage_only() && to.is_storage_only()) e = ir::cast(dtype::float32, e);
        return ir::cast(to, e);
      },
      std::move(name));
}

// bit_cast (ONNX BitCast): each element's bits read as `to`, a type of the same width (numpy's
// view). bool is one byte holding 0 or 1, so it bit casts to and from the 8-bit integers as a
// conversion. The storage types (float16, bfloat16, float8, int4...) are refused: their
// elements are computed through float32, and no emitter keeps their raw bits yet.
inline te::Tensor bit_cast(const te::Tensor& x, DataType to, std::string name = "bit_cast") {
  DataType from = x.dtype();
  auto refuse = [&](const std::string& why) {
    throw UserError("nnvm.ops.attr", str_cat("bit cast of input (tensor ", x.name(), ", ", from, ") to ", to, ": ", why),
                    {"attribute to"});
  };
  if (!from.is_scalar() || from.is_handle() || !to.is_scalar() || to.is_handle()) refuse("both must be scalar types");
  if (from.is_storage_only() || to.is_storage_only()) refuse("storage types are not supported");
  if (from.bits != to.bits) refuse(str_cat("the widths differ (", from.bits, " and ", to.bits, " bits)"));
  return te::compute(
      x.shape(), [&](const std::vector<ir::Var>& v) { return ir::bit_cast(to, x(transform_detail::exprs(v))); },
      std::move(name));
}

// ONNX's saturate and round_mode attributes.
inline CastSpec cast_spec(const Attrs& attrs) {
  CastSpec spec;
  spec.saturate = attrs.get_int("saturate", 1) != 0;
  std::string mode = attrs.get_string("round_mode", "up");
  if (mode == "up") spec.e8m0_round = CastSpec::Round::up;
  else if (mode == "down") spec.e8m0_round = CastSpec::Round::down;
  else if (mode == "nearest") spec.e8m0_round = CastSpec::Round::nearest;
  else
    throw UserError("nnvm.ops.attr", str_cat("attribute 'round_mode' is '", mode, "'; expected up, down or nearest"),
                    {"attribute round_mode"});
  return spec;
}

inline OpDef cast_def() {
  return OpDef{
      .name = "cast",
      .importer_names = {"onnx:Cast"},
      .input_names = {"input"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{cast(in[0], attrs.get_dtype("to"), "cast", cast_spec(attrs))};
          },
      .doc = "input converted to the dtype of attribute to (a data type name, e.g. float32); saturate and round_mode "
             "as ONNX's for float8/float4",
  };
}

inline OpDef bit_cast_def() {
  return OpDef{
      .name = "bit_cast",
      .importer_names = {"onnx:BitCast"},
      .input_names = {"input"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{bit_cast(in[0], attrs.get_dtype("to"))};
          },
      .doc = "input's bits read as the dtype of attribute to, of the same width (not a storage type)",
  };
}

inline OpDef cast_like_def() {
  return OpDef{
      .name = "cast_like",
      .importer_names = {"onnx:CastLike"},
      .input_names = {"input", "target_type"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{cast(in[0], in[1].dtype(), "cast_like", cast_spec(attrs))};
          },
      .doc = "input converted to the dtype of input target_type (whose data is not read)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
