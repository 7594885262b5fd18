// concat (ONNX Concat): inputs joined along `axis`. ONNX takes any number of inputs; this op
// takes 1 to 256 (inputs0 .. inputs255, all after the first optional): DenseNets join every
// earlier layer of a block (DenseNet-121: 25 inputs, DenseNet-264: 65).
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline constexpr size_t concat_max_inputs = 256;

// Each output element reads exactly one input: a chain of selects on the axis index, which
// only evaluates the chosen branch, so no read leaves its input.
inline te::Tensor concat(const std::vector<te::Tensor>& xs, int64_t axis, std::string name = "concat") {
  if (xs.empty()) throw UserError("nnvm.ops.input_shape", "concat needs at least one input");
  for (size_t k = 0; k < xs.size(); ++k)
    if (!xs[k].defined())
      throw UserError("nnvm.ops.input_shape", str_cat("input inputs", k, " is absent; concat takes no gaps"),
                      {str_cat("input inputs", k)});
  const te::Tensor& first = xs[0];
  if (first.rank() == 0)
    throw UserError("nnvm.ops.input_shape", "input inputs0 has rank 0; concat needs rank 1 or more", {"input inputs0"});
  size_t a = normalize_axis(axis, first.rank(), "axis");
  std::vector<ir::Expr> offsets{ir::Expr(int64_t(0))};
  for (size_t k = 0; k < xs.size(); ++k) {
    std::string in = str_cat("inputs", k);
    check_rank(xs[k], in.c_str(), first.rank());
    check_same_dtype(first, "inputs0", xs[k], in.c_str());
    for (size_t d = 0; d < first.rank(); ++d)
      if (d != a) check_same_extent(first.shape()[d], xs[k].shape()[d], str_cat("axis ", d, " of inputs0 and ", in));
    offsets.push_back(ir::simplify(offsets.back() + xs[k].shape()[a]));
  }
  std::vector<ir::Expr> shape = first.shape();
  shape[a] = offsets.back();
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        auto read = [&](size_t k) {
          std::vector<ir::Expr> idx = transform_detail::exprs(v);
          idx[a] = idx[a] - offsets[k];
          return xs[k](idx);
        };
        ir::Expr e = read(xs.size() - 1);
        for (size_t k = xs.size() - 1; k-- > 0;) e = ir::select(v[a] < offsets[k + 1], read(k), e);
        return e;
      },
      std::move(name));
}

inline OpDef concat_def() {
  std::vector<std::string> names;
  for (size_t k = 0; k < concat_max_inputs; ++k) names.push_back(str_cat("inputs", k));
  return OpDef{
      .name = "concat",
      .importer_names = {"onnx:Concat"},
      .input_names = std::move(names),
      .optional_inputs = concat_max_inputs - 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{concat(in, attrs.get_int("axis"))};
          },
      .doc = "inputs0 .. inputsN (1 to 256 inputs) joined along attribute axis",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
