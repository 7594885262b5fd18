// How ONNX QuantizeLinear and DequantizeLinear lay out their scale and zero point over the
// tensor X they apply to: one value for all of X (a scalar or a 1-element tensor), one per index
// of X's `axis` (a 1-D tensor), or one per block of `block_size` consecutive indices along
// `axis` (a tensor of X's rank whose extent on `axis` is ceil(X's extent / block_size) and equal
// elsewhere; the last block may be short).
#pragma once

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct QuantLayout {
  int64_t axis_attr = 1;   // as given, for messages
  size_t axis = 0;         // normalized; X's rank when axis_attr lies outside it
  int64_t block_size = 0;  // 0: not blocked
};

namespace quant_detail {

inline bool one_element(const te::Tensor& p) {
  for (auto& e : p.shape())
    if (!ir::is_const_int(ir::simplify(e), 1)) return false;
  return true;
}

inline int64_t const_extent_of(const ir::Expr& e, const std::string& what) {
  if (auto c = ir::simplified_const_int(e)) return *c;
  throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent, got ", ir::to_string(e)));
}

}  // namespace quant_detail

// Reads attributes axis (default 1) and block_size (default 0) for X; "nnvm.ops.attr" for a
// negative block_size. The axis is checked only where a layout needs it (check_quant_param): a
// per-tensor scale ignores it, so X may be a scalar or 1-D under the default axis 1.
inline QuantLayout quant_layout(const te::Tensor& x, const Attrs& attrs) {
  QuantLayout l;
  l.block_size = attrs.get_int("block_size", 0);
  if (l.block_size < 0)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'block_size' is ", l.block_size, " but must be >= 0"),
                    {"attribute block_size"});
  l.axis_attr = attrs.get_int("axis", 1);
  int64_t r = int64_t(x.rank());
  l.axis = l.axis_attr < -r || l.axis_attr >= r ? x.rank() : size_t(l.axis_attr < 0 ? l.axis_attr + r : l.axis_attr);
  return l;
}

// "nnvm.ops.input_shape" unless `p` (input `input`) fits one of the three layouts for X.
inline void check_quant_param(const te::Tensor& p, const char* input, const te::Tensor& x, const QuantLayout& l) {
  using quant_detail::const_extent_of;
  if (quant_detail::one_element(p) && p.rank() <= 1) return;
  auto bad = [&](const std::string& why) {
    throw UserError("nnvm.ops.input_shape", str_cat("input ", input, " (tensor ", p.name(), ") ", why),
                    {"input " + std::string(input)});
  };
  if (l.axis >= x.rank())
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'axis' is ", l.axis_attr, " but must lie in [", -int64_t(x.rank()),
                            ", ", x.rank(), ") for a per-axis or blocked ", input),
                    {"attribute axis"});
  if (l.block_size == 0) {
    if (p.rank() != 1 || !same_extent(p.shape()[0], x.shape()[l.axis]))
      bad(str_cat("must be a scalar or 1-D with the extent of X's axis ", l.axis, " (",
                  ir::to_string(x.shape()[l.axis]), "); give block_size for blocked quantization"));
    return;
  }
  if (p.rank() != x.rank()) bad(str_cat("has rank ", p.rank(), " but blocked quantization needs X's rank ", x.rank()));
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d != l.axis) {
      if (!same_extent(p.shape()[d], x.shape()[d]))
        bad(str_cat("has extent ", ir::to_string(p.shape()[d]), " on axis ", d, " but X has ", ir::to_string(x.shape()[d])));
      continue;
    }
    int64_t n = const_extent_of(x.shape()[d], str_cat("axis ", d, " of input X"));
    int64_t blocks = (n + l.block_size - 1) / l.block_size;
    if (const_extent_of(p.shape()[d], str_cat("axis ", d, " of input ", input)) != blocks)
      bad(str_cat("has extent ", ir::to_string(p.shape()[d]), " on axis ", d, ", expected ceil(", n, " / block_size ",
                  l.block_size, ") = ", blocks));
  }
}

// The element of `p` (checked by check_quant_param) that applies to X at index `v`.
inline ir::Expr read_quant_param(const te::Tensor& p, const QuantLayout& l, const std::vector<ir::Var>& v) {
  if (quant_detail::one_element(p) && p.rank() <= 1)
    return p(std::vector<ir::Expr>(p.rank(), ir::Expr(int64_t(0))));
  if (l.block_size == 0) return p({ir::Expr(v[l.axis])});
  std::vector<ir::Expr> idx(v.begin(), v.end());
  idx[l.axis] = ir::Expr(v[l.axis]) / l.block_size;
  return p(idx);
}

// The integer types nnvm quantizes to and from: 8 and 16 bits (and int32 for DequantizeLinear).
inline bool quant_integer(DataType t, bool allow_int32) {
  return t == dtype::int8 || t == dtype::uint8 || t == dtype::int16 || t == dtype::uint16 ||
         (allow_int32 && t == dtype::int32);
}
// The narrow quantized types: int4, uint4, int2, uint2 and the float8/float4 types but
// FLOAT8E8M0 (a scale type, not a quantized one).
inline bool quant_narrow(DataType t) {
  return t.is_scalar() && (t.is_sub_byte_int() || (t.is_small_float() && t.code != DataType::Code::Float8E8M0));
}

}  // namespace ops
NNVM_END_NAMESPACE
