// Ops that make a tensor from compile-time values: constant_of_shape (ONNX ConstantOfShape),
// range (ONNX Range) and eye_like (ONNX EyeLike).
#pragma once

#include <cmath>

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace transform_detail {
// One constant of dtype `t` (storage types through float32).
inline ir::Expr typed_const(DataType t, double v) {
  return t.is_storage_only() ? ir::cast(t, ir::make_const(dtype::float32, v)) : ir::make_const(t, v);
}
}  // namespace transform_detail

// Every element `value` (already of the output's dtype).
inline te::Tensor constant_of_shape(const std::vector<int64_t>& shape, const ir::Expr& value,
                                    std::string name = "constant_of_shape") {
  std::vector<ir::Expr> extents;
  for (size_t d = 0; d < shape.size(); ++d) {
    transform_detail::check_output_extent(shape[d], d, "input holds it");
    extents.emplace_back(shape[d]);
  }
  return te::compute(extents, [&](const std::vector<ir::Var>&) { return value; }, std::move(name));
}

namespace transform_detail {
// The range's length, "nnvm.ops.input_shape" when it is empty (nnvm tensors cannot be) or absurd.
inline int64_t range_length(double n, const std::string& what) {
  if (!(n >= 1 && n <= double(int64_t(1) << 40)))
    throw UserError("nnvm.ops.input_shape", str_cat(what, " has ", n, " elements; it must have 1 to 2^40"));
  return int64_t(n);
}
}  // namespace transform_detail

// start, start + delta, ... before limit: max(ceil((limit - start) / delta), 0) elements of the
// float dtype `t` (float16/bfloat16 computed in float32).
inline te::Tensor range(DataType t, double start, double limit, double delta, std::string name = "range") {
  std::string what = str_cat("range from ", start, " to ", limit, " by ", delta);
  int64_t n = transform_detail::range_length(std::ceil((limit - start) / delta), what);
  DataType ct = t.is_storage_only() ? dtype::float32 : t;
  return te::compute(
      {ir::Expr(n)},
      [&](const std::vector<ir::Var>& v) {
        return ir::cast(t, ir::make_const(ct, start) + ir::cast(ct, v[0]) * ir::make_const(ct, delta));
      },
      std::move(name));
}
// The same for an integer dtype `t`, counted exactly.
inline te::Tensor range(DataType t, int64_t start, int64_t limit, int64_t delta, std::string name = "range") {
  std::string what = str_cat("range from ", start, " to ", limit, " by ", delta);
  if (delta == 0) throw UserError("nnvm.ops.input_shape", what + " never ends", {"input delta"});
  bool up = delta > 0;
  uint64_t span = up ? uint64_t(limit) - uint64_t(start) : uint64_t(start) - uint64_t(limit);
  uint64_t step = up ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
  bool empty = up ? limit <= start : limit >= start;
  int64_t n = transform_detail::range_length(empty ? 0.0 : double(span / step + (span % step != 0)), what);
  return te::compute(
      {ir::Expr(n)},
      [&](const std::vector<ir::Var>& v) {
        return ir::make_int_const(t, start) + ir::cast(t, v[0]) * ir::make_int_const(t, delta);
      },
      std::move(name));
}

// A matrix of x's shape with ones on diagonal k (column - row == k) and zeros elsewhere.
inline te::Tensor eye_like(const te::Tensor& x, DataType t, int64_t k = 0, std::string name = "eye_like") {
  check_rank(x, "input", 2);
  ir::Expr one = transform_detail::typed_const(t, 1), zero = transform_detail::typed_const(t, 0);
  return te::compute(
      x.shape(), [&](const std::vector<ir::Var>& v) { return ir::select(v[1] - v[0] == k, one, zero); },
      std::move(name));
}

inline OpDef constant_of_shape_def() {
  return OpDef{
      .name = "constant_of_shape",
      .importer_names = {"onnx:ConstantOfShape"},
      .input_names = {"input"},
      .value_inputs = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>&, const Attrs& attrs) {
            // The importer passes ONNX's one-element tensor attribute `value` as the attribute
            // value (a list of one number) plus value_dtype (its data type).
            DataType t = attrs.get_dtype("value_dtype", dtype::float32);
            ir::Expr value = transform_detail::typed_const(t, 0);
            if (const AttrValue* v = attrs.find("value")) {
              if (auto* ints = std::get_if<std::vector<int64_t>>(v); ints && ints->size() == 1 && !t.is_float())
                value = ir::make_int_const(t, (*ints)[0]);
              else if (std::vector<double> f = attrs.get_floats("value"); f.size() == 1)
                value = transform_detail::typed_const(t, f[0]);
              else
                throw UserError("nnvm.ops.attr", str_cat("attribute 'value' has ", f.size(), " numbers, expected one"),
                                {"attribute value"});
            }
            return std::vector<te::Tensor>{constant_of_shape(attrs.get_ints("input"), value)};
          },
      .doc = "a tensor of the shape in value input input, filled with attribute value (dtype value_dtype; default "
             "float32 0)",
  };
}

inline OpDef eye_like_def() {
  return OpDef{
      .name = "eye_like",
      .importer_names = {"onnx:EyeLike"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            DataType t = attrs.get_dtype("dtype", in[0].dtype());
            return std::vector<te::Tensor>{eye_like(in[0], t, attrs.get_int("k", 0))};
          },
      .doc = "ones on diagonal k (attribute) of a matrix shaped like input, dtype attribute dtype or input's",
  };
}

inline OpDef range_def() {
  return OpDef{
      .name = "range",
      .importer_names = {"onnx:Range"},
      .input_names = {"start", "limit", "delta"},
      .value_inputs = {"start", "limit", "delta"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            DataType t = in[0].dtype();
            auto scalar = [&](size_t i, const char* name) {
              if (i > 0) check_same_dtype(in[0], "start", in[i], name);
              size_t n = t.is_float() ? attrs.get_floats(name).size() : attrs.get_ints(name).size();
              if (n != 1)
                throw UserError("nnvm.ops.input_shape", str_cat("input ", name, " has ", n, " elements, expected one"),
                                {str_cat("input ", name)});
            };
            scalar(0, "start"), scalar(1, "limit"), scalar(2, "delta");
            if (t.is_float())
              return std::vector<te::Tensor>{
                  range(t, attrs.get_floats("start")[0], attrs.get_floats("limit")[0], attrs.get_floats("delta")[0])};
            if (t.is_bool() || !t.is_scalar())
              throw UserError("nnvm.ops.input_dtype", str_cat("input start is ", t, ", expected a number"),
                              {"input start"});
            return std::vector<te::Tensor>{
                range(t, attrs.get_ints("start")[0], attrs.get_ints("limit")[0], attrs.get_ints("delta")[0])};
          },
      .doc = "start, start + delta, ... before limit (value inputs, one dtype)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
