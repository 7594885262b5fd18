// one_hot (ONNX OneHot): a new axis of extent depth (value input) at `axis` of the output; the
// element is values[1] (on) where its position on that axis equals the index, else values[0]
// (off). A negative index counts from depth's end; an index out of [-depth, depth) matches no
// position, so its row is all off.
#pragma once

#include <cmath>

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// indices: any number type (floats truncate toward zero); values: two elements [off, on].
inline te::Tensor one_hot(const te::Tensor& indices, int64_t depth, const te::Tensor& values, int64_t axis = -1,
                          std::string name = "one_hot") {
  DataType it = indices.dtype();
  if (it.is_bool() || it.is_storage_only() || !it.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input indices (tensor ", indices.name(), ") is ", it, ", expected a number type"),
                    {"input indices"});
  if (depth < 1)
    throw UserError("nnvm.ops.input_shape", str_cat("input depth is ", depth, "; it must be at least 1"),
                    {"input depth"});
  check_rank(values, "values", 1);
  if (transform_detail::const_extent(values.shape()[0], "the extent of values") != 2)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input values has ", ir::to_string(values.shape()[0]), " elements, expected 2 (off, on)"),
                    {"input values"});
  size_t a = normalize_axis(axis, indices.rank() + 1, "axis");
  std::vector<ir::Expr> shape = indices.shape();
  shape.insert(shape.begin() + a, ir::Expr(depth));
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> at = transform_detail::exprs(v);
        at.erase(at.begin() + a);
        ir::Expr i = transform_detail::wrap_negative(indices(at), ir::Expr(depth));
        return ir::select(i == ir::Expr(v[a]), values(int64_t(1)), values(int64_t(0)));
      },
      std::move(name));
}

inline OpDef one_hot_def() {
  return OpDef{
      .name = "one_hot",
      .importer_names = {"onnx:OneHot"},
      .input_names = {"indices", "depth", "values"},
      .value_inputs = {"depth"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::vector<double> d = attrs.get_floats("depth");
            if (d.size() != 1)
              throw UserError("nnvm.ops.input_shape", str_cat("input depth has ", d.size(), " elements, expected one"),
                              {"input depth"});
            if (!(std::abs(d[0]) < 1e12))
              throw UserError("nnvm.ops.input_shape", str_cat("input depth is ", d[0]), {"input depth"});
            return std::vector<te::Tensor>{one_hot(in[0], int64_t(d[0]), in[2], attrs.get_int("axis", -1))};
          },
      .doc = "values[1] where the new axis (attribute axis) equals indices, values[0] elsewhere; depth is a value input",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
