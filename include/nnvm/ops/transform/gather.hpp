// The gathers: gather (ONNX Gather), gather_elements (ONNX GatherElements) and gather_nd (ONNX
// GatherND). Index tensors are int32 or int64; a negative index counts from the end of its axis.
// ONNX calls an index out of range an error: constant indices are checked when the graph is
// built (check_constants, nnvm.ops.index_range); at run time a kernel cannot report one, so it
// clamps to the nearest valid index and never reads outside the data. Reading from an axis of
// extent 0 has nothing to clamp to and is refused (nnvm.ops.empty_axis).
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// out[i.., j.., k..] = data[i.., indices[j..], k..] with j.. over indices' axes at `axis`.
inline te::Tensor gather(const te::Tensor& data, const te::Tensor& indices, int64_t axis = 0,
                         std::string name = "gather") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_index_dtype(indices, "indices");
  size_t a = normalize_axis(axis, data.rank(), "axis"), q = indices.rank();
  std::vector<ir::Expr> shape(data.shape().begin(), data.shape().begin() + a);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + a + 1, data.shape().end());
  check_readable_axis(data.shape()[a], shape, str_cat("axis ", a, " of data"));
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.begin() + a);
        ir::Expr i = indices(std::vector<ir::Expr>(v.begin() + a, v.begin() + a + q));
        idx.push_back(wrap_clamp(i, data.shape()[a]));
        idx.insert(idx.end(), v.begin() + a + q, v.end());
        return data(idx);
      },
      std::move(name));
}

// out[p] = data[p with p[axis] = indices[p]]; indices has data's rank and, off `axis`, extents
// no larger than data's.
inline te::Tensor gather_elements(const te::Tensor& data, const te::Tensor& indices, int64_t axis = 0,
                                  std::string name = "gather_elements") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", data.rank());
  check_index_dtype(indices, "indices");
  size_t a = normalize_axis(axis, data.rank(), "axis");
  for (size_t d = 0; d < data.rank(); ++d) {
    if (d == a) continue;
    auto ci = ir::simplified_const_int(indices.shape()[d]), cd = ir::simplified_const_int(data.shape()[d]);
    bool ok = ci && cd ? *ci <= *cd : same_extent(indices.shape()[d], data.shape()[d]);
    if (!ok)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("indices axis ", d, " has extent ", ir::to_string(indices.shape()[d]),
                              ", more than data's ", ir::to_string(data.shape()[d])),
                      {"input indices"});
  }
  check_readable_axis(data.shape()[a], indices.shape(), str_cat("axis ", a, " of data"));
  return te::compute(
      indices.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx = exprs(v);
        idx[a] = wrap_clamp(indices(exprs(v)), data.shape()[a]);
        return data(idx);
      },
      std::move(name));
}

// indices' last axis (constant extent K) holds coordinates into data's axes b .. b+K-1 (b =
// batch_dims, axes shared by data and indices): out[j.., k..] = data[j[:b].., indices[j..],
// k..] where j runs over indices' axes but the last, k over data's axes after b+K.
inline te::Tensor gather_nd(const te::Tensor& data, const te::Tensor& indices, int64_t batch_dims = 0,
                            std::string name = "gather_nd") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", 1, SIZE_MAX);
  check_index_dtype(indices, "indices");
  size_t q = indices.rank(), r = data.rank();
  if (batch_dims < 0 || size_t(batch_dims) >= std::min(q, r))
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'batch_dims' is ", batch_dims, " but must lie in [0, ", std::min(q, r), ")"),
                    {"attribute batch_dims"});
  size_t b = size_t(batch_dims);
  for (size_t d = 0; d < b; ++d)
    check_same_extent(data.shape()[d], indices.shape()[d], str_cat("batch axis ", d, " of data and indices"));
  int64_t k = const_extent(indices.shape()[q - 1], "the last axis of indices");
  if (k < 1 || size_t(k) > r - b)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axis of indices has extent ", k, " but data has ", r - b,
                            " axes after the batch axes"),
                    {"input indices"});
  std::vector<ir::Expr> shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + b + k, data.shape().end());
  for (int64_t j = 0; j < k; ++j) check_readable_axis(data.shape()[b + j], shape, str_cat("axis ", b + j, " of data"));
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.begin() + b), at(v.begin(), v.begin() + (q - 1));
        at.emplace_back(int64_t(0));
        for (int64_t j = 0; j < k; ++j) {
          at.back() = ir::Expr(j);
          idx.push_back(wrap_clamp(indices(at), data.shape()[b + j]));
        }
        idx.insert(idx.end(), v.begin() + (q - 1), v.end());
        return data(idx);
      },
      std::move(name));
}

inline OpDef gather_def() {
  return OpDef{
      .name = "gather",
      .importer_names = {"onnx:Gather"},
      .input_names = {"data", "indices"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{gather(in[0], in[1], attrs.get_int("axis", 0))};
          },
      .check_constants =
          [](const std::vector<TensorType>& in, const std::vector<const NDArray*>& data, const Attrs& attrs) {
            using namespace transform_detail;
            size_t a = normalize_axis(attrs.get_int("axis", 0), in[0].shape.size(), "axis");
            if (data[1]) check_index_values(*data[1], {extent_or_unknown(in[0], a)}, "indices", str_cat("axis ", a, " of data"));
          },
      .doc = "data indexed along attribute axis by indices (negative wrap, out of range clamps)",
  };
}

inline OpDef gather_elements_def() {
  return OpDef{
      .name = "gather_elements",
      .importer_names = {"onnx:GatherElements"},
      .input_names = {"data", "indices"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{gather_elements(in[0], in[1], attrs.get_int("axis", 0))};
          },
      .check_constants =
          [](const std::vector<TensorType>& in, const std::vector<const NDArray*>& data, const Attrs& attrs) {
            using namespace transform_detail;
            size_t a = normalize_axis(attrs.get_int("axis", 0), in[0].shape.size(), "axis");
            if (data[1]) check_index_values(*data[1], {extent_or_unknown(in[0], a)}, "indices", str_cat("axis ", a, " of data"));
          },
      .doc = "data[p with p[axis] = indices[p]] for every position p of indices",
  };
}

inline OpDef gather_nd_def() {
  return OpDef{
      .name = "gather_nd",
      .importer_names = {"onnx:GatherND"},
      .input_names = {"data", "indices"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{gather_nd(in[0], in[1], attrs.get_int("batch_dims", 0))};
          },
      .check_constants =
          [](const std::vector<TensorType>& in, const std::vector<const NDArray*>& data, const Attrs& attrs) {
            using namespace transform_detail;
            if (!data[1]) return;
            // Coordinate j of each index (indices' last axis) addresses data's axis batch_dims + j.
            size_t b = size_t(attrs.get_int("batch_dims", 0));
            int64_t k = extent_or_unknown(in[1], in[1].shape.size() - 1);
            std::vector<int64_t> extents;
            for (int64_t j = 0; j < k; ++j) extents.push_back(extent_or_unknown(in[0], b + size_t(j)));
            check_index_values(*data[1], extents, "indices", str_cat("data's axes ", b, " to ", b + size_t(k) - 1));
          },
      .doc = "slices of data at the coordinates in indices' last axis (attribute batch_dims)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
