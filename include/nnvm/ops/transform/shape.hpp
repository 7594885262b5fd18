// shape (ONNX Shape) and size (ONNX Size): the input's extents as int64 data. Neither reads the
// input's elements; a symbolic extent becomes the size variable's value at run time.
#pragma once

#include <optional>

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Extents start .. end-1 (ONNX's start/end: negative counts from the end, both clamp to
// [0, rank]). An empty range is "nnvm.ops.input_shape": nnvm tensors cannot be empty.
inline te::Tensor shape_of(const te::Tensor& x, int64_t start = 0, std::optional<int64_t> end = std::nullopt,
                           std::string name = "shape") {
  int64_t r = int64_t(x.rank());
  auto clamp = [r](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + r : i, 0, r); };
  int64_t s = clamp(start), e = end ? clamp(*end) : r;
  if (e - s <= 0)
    throw UserError("nnvm.ops.input_shape", str_cat("extents ", s, " to ", e, " of a rank-", r,
                                                    " input are none: the shape would be an empty tensor"));
  std::vector<ir::Expr> dims(x.shape().begin() + s, x.shape().begin() + e);
  return te::compute(
      {ir::Expr(e - s)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr out = ir::cast(dtype::int64, dims.back());
        for (size_t d = dims.size() - 1; d-- > 0;)
          out = ir::select(v[0] == int64_t(d), ir::cast(dtype::int64, dims[d]), out);
        return out;
      },
      std::move(name));
}

// The element count as an int64 scalar.
inline te::Tensor size_of(const te::Tensor& x, std::string name = "size") {
  ir::Expr n = ir::cast(dtype::int64, transform_detail::product(x.shape()));
  return te::compute({}, [&](const std::vector<ir::Var>&) { return n; }, std::move(name));
}

inline OpDef shape_def() {
  return OpDef{
      .name = "shape",
      .importer_names = {"onnx:Shape"},
      .input_names = {"data"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::optional<int64_t> end;
            if (attrs.has("end")) end = attrs.get_int("end");
            return std::vector<te::Tensor>{shape_of(in[0], attrs.get_int("start", 0), end)};
          },
      .doc = "the extents of data (attributes start, end) as int64, without reading its elements",
  };
}

inline OpDef size_def() {
  return OpDef{
      .name = "size",
      .importer_names = {"onnx:Size"},
      .input_names = {"data"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) { return std::vector<te::Tensor>{size_of(in[0])}; },
      .doc = "the element count of data as an int64 scalar, without reading its elements",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
