// prelu(X, slope) = X if X >= 0 else slope * X. ONNX PRelu: slope broadcasts to X's shape
// (unidirectionally: the output always has X's shape).
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor prelu(const te::Tensor& x, const te::Tensor& slope, std::string name = "prelu") {
  check_same_dtypes({x, slope}, {"X", "slope"}, DtypeKind::number);
  std::vector<ir::Expr> shape = broadcast_shape_of({x, slope}, {"X", "slope"});
  bool stays = shape.size() == x.rank();
  for (size_t d = 0; stays && d < shape.size(); ++d) stays = same_extent(shape[d], x.shape()[d]);
  if (!stays)
    throw UserError(
        "nnvm.ops.broadcast",
        str_cat("input slope (tensor ", slope.name(), ") of shape ", detail::shape_string(slope.shape()),
                " must broadcast to the shape of X ", detail::shape_string(x.shape()), " without changing it"),
        {"input slope"});
  DataType t = x.dtype(), ct = arith_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        ir::Expr s = ir::cast(ct, slope(broadcast_indices(slope, v)));
        return ir::cast(t, ir::select(e < ir::make_zero(ct), e * s, e));
      },
      std::move(name));
}

inline OpDef prelu_def() {
  return OpDef{
      .name = "prelu",
      .importer_names = {"onnx:PRelu"},
      .input_names = {"X", "slope"},
      .pattern = OpPattern::broadcast,
      .compute = [](const std::vector<te::Tensor>& in,
                    const Attrs&) { return std::vector<te::Tensor>{prelu(in[0], in[1])}; },
      .doc = "X if X >= 0 else slope * X; slope broadcasts to X's shape",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
