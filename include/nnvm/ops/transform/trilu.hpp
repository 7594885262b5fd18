// trilu (ONNX Trilu): the upper (upper = 1, default) or lower triangle of each matrix in the
// last two axes, from diagonal k (value input, default 0; positive k is above the main
// diagonal); other elements become 0.
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor trilu(const te::Tensor& x, bool upper = true, int64_t k = 0, std::string name = "trilu") {
  check_rank(x, "input", 2, SIZE_MAX);
  DataType t = x.dtype();
  ir::Expr zero = t.is_storage_only() ? ir::cast(t, ir::make_zero(dtype::float32)) : ir::make_zero(t);
  size_t r = x.rank();
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr diag = v[r - 1] - v[r - 2];
        ir::Expr keep = upper ? diag >= k : diag <= k;
        return ir::select(keep, x(transform_detail::exprs(v)), zero);
      },
      std::move(name));
}

inline OpDef trilu_def() {
  return OpDef{
      .name = "trilu",
      .importer_names = {"onnx:Trilu"},
      .input_names = {"input", "k"},
      .optional_inputs = 1,
      .value_inputs = {"k"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            int64_t k = 0;
            if (transform_detail::given(in, 1)) {
              const auto& ks = attrs.get_ints("k");
              if (ks.size() != 1)
                throw UserError("nnvm.ops.input_shape", str_cat("input k has ", ks.size(), " elements, expected one"),
                                {"input k"});
              k = ks[0];
            }
            return std::vector<te::Tensor>{trilu(in[0], attrs.get_int("upper", 1) != 0, k)};
          },
      .doc = "upper (attribute upper = 1) or lower triangle of the last two axes from diagonal k, zeros elsewhere",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
