// transpose (ONNX Transpose): output axis d is input axis perm[d]; perm defaults to reversing
// the axes.
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// `perm` empty: reversed axes. Otherwise a permutation of [0, rank) ("nnvm.ops.attr").
inline te::Tensor transpose(const te::Tensor& x, std::vector<int64_t> perm = {}, std::string name = "transpose") {
  size_t rank = x.rank();
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(int64_t(d));
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < int64_t(rank) && !seen[size_t(p)];
    if (ok) seen[size_t(p)] = true;
  }
  if (!ok)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'perm' is ", transform_detail::list_string(perm),
                            " but must be a permutation of the ", rank, " axes of input data"),
                    {"attribute perm"});
  std::vector<ir::Expr> shape;
  for (int64_t p : perm) shape.push_back(x.shape()[size_t(p)]);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(rank);
        for (size_t d = 0; d < rank; ++d) idx[size_t(perm[d])] = v[d];
        return x(idx);
      },
      std::move(name));
}

inline OpDef transpose_def() {
  return OpDef{
      .name = "transpose",
      .importer_names = {"onnx:Transpose"},
      .input_names = {"data"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{transpose(in[0], attrs.get_ints("perm", {}))};
          },
      .doc = "data with its axes permuted by attribute perm (default: reversed)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
