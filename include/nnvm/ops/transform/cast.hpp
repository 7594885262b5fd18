// cast (ONNX Cast) and cast_like (ONNX CastLike): every element converted to another dtype.
// Float to integer truncates toward zero; a value outside the target's range is undefined (as in
// C; ONNX's saturate attribute only concerns float8 types, which nnvm lacks). Anything to bool
// is "!= 0"; bool to a number is 0 or 1. float16/bfloat16 convert through float32.
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor cast(const te::Tensor& x, DataType to, std::string name = "cast") {
  DataType from = x.dtype();
  if (!from.is_scalar() || from.is_handle())
    throw UserError("nnvm.ops.input_dtype", str_cat("input input (tensor ", x.name(), ") is ", from, ", expected a scalar type"),
                    {"input input"});
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(transform_detail::exprs(v));
        // Storage types have no conversions of their own but to and from float32.
        if (from.is_storage_only() && to.is_storage_only() && from != to) e = ir::cast(dtype::float32, e);
        return ir::cast(to, e);
      },
      std::move(name));
}

inline OpDef cast_def() {
  return OpDef{
      .name = "cast",
      .importer_names = {"onnx:Cast"},
      .input_names = {"input"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{cast(in[0], attrs.get_dtype("to"))};
          },
      .doc = "input converted to the dtype of attribute to (a data type name, e.g. float32)",
  };
}

inline OpDef cast_like_def() {
  return OpDef{
      .name = "cast_like",
      .importer_names = {"onnx:CastLike"},
      .input_names = {"input", "target_type"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            return std::vector<te::Tensor>{cast(in[0], in[1].dtype(), "cast_like")};
          },
      .doc = "input converted to the dtype of input target_type (whose data is not read)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
