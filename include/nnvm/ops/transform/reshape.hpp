// reshape (ONNX Reshape, opset 14+) and flatten (ONNX Flatten): the input's elements in
// row-major order under a new shape.
#pragma once

#include <optional>

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// `x` read in row-major order as a tensor of `shape` (same element count, not checked here).
inline te::Tensor reshape_to(const te::Tensor& x, const std::vector<ir::Expr>& shape, std::string name) {
  using namespace transform_detail;
  return te::compute(
      shape, [&](const std::vector<ir::Var>& v) { return x(unravel(ravel(exprs(v), shape), x.shape())); },
      std::move(name));
}

// ONNX's shape spec: 0 copies the input's extent at that position (unless `allowzero`, where it
// would mean an empty axis, which nnvm refuses), one -1 takes what is left.
inline te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& spec, bool allowzero = false,
                          std::string name = "reshape") {
  using namespace transform_detail;
  std::vector<ir::Expr> shape;
  ir::Expr known(int64_t(1));
  std::optional<size_t> infer;
  for (size_t d = 0; d < spec.size(); ++d) {
    int64_t s = spec[d];
    if (s == -1) {
      if (infer)
        throw UserError("nnvm.ops.input_shape", str_cat("input shape has -1 at positions ", *infer, " and ", d,
                                                        "; at most one extent can be inferred"),
                        {"input shape"});
      infer = d;
      shape.emplace_back();
      continue;
    }
    if (s == 0 && !allowzero) {
      if (d >= x.rank())
        throw UserError("nnvm.ops.input_shape",
                        str_cat("input shape[", d, "] is 0 (copy the input's extent) but input data has rank ",
                                x.rank()),
                        {"input shape"});
      shape.push_back(x.shape()[d]);
    } else if (s <= 0) {
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input shape[", d, "] is ", s, "; extents must be positive (nnvm tensors cannot be empty)"),
                      {"input shape"});
    } else {
      shape.emplace_back(s);
    }
    known = known * shape.back();
  }
  ir::Expr total = product(x.shape());
  known = ir::simplify(known);
  auto mismatch = [&] {
    return UserError("nnvm.ops.input_shape",
                     str_cat("input data has ", ir::to_string(total), " elements but shape ", list_string(spec),
                             " holds ", infer ? "a multiple of " : "", ir::to_string(known)),
                     {"input shape"});
  };
  if (infer) {
    // Cancel the symbolic extents the output keeps (a batch `n` copied by 0) so that the
    // inferred extent comes out constant when the rest is.
    std::vector<ir::Expr> in_left = x.shape(), out_left;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (d == *infer) continue;
      auto it = std::find_if(in_left.begin(), in_left.end(), [&](const ir::Expr& e) {
        return !ir::simplified_const_int(e) && same_extent(e, shape[d]);
      });
      if (it != in_left.end()) in_left.erase(it);
      else out_left.push_back(shape[d]);
    }
    ir::Expr t = product(in_left), k = product(out_left);
    auto *tc = ir::as_const_int(t), *kc = ir::as_const_int(k);
    if (tc && kc && *tc % *kc != 0) throw mismatch();
    shape[*infer] = tc && kc ? ir::Expr(*tc / *kc) : ir::simplify(t / k);
  } else if (!same_extent(total, known)) {
    throw mismatch();
  }
  return reshape_to(x, shape, std::move(name));
}

// 2-D result: the axes before `axis` (in [-rank, rank]) fold into rows, the rest into columns.
inline te::Tensor flatten(const te::Tensor& x, int64_t axis = 1, std::string name = "flatten") {
  using namespace transform_detail;
  int64_t r = int64_t(x.rank());
  if (axis < -r || axis > r)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'axis' is ", axis, " but must lie in [", -r, ", ", r, "]"),
                    {"attribute axis"});
  size_t a = size_t(axis < 0 ? axis + r : axis);
  return reshape_to(x, {product(x.shape(), 0, a), product(x.shape(), a)}, std::move(name));
}

inline OpDef flatten_def() {
  return OpDef{
      .name = "flatten",
      .importer_names = {"onnx:Flatten"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{flatten(in[0], attrs.get_int("axis", 1))};
          },
      .doc = "2-D view of input: axes before attribute axis (default 1) as rows, the rest as columns",
  };
}

inline OpDef reshape_def() {
  return OpDef{
      .name = "reshape",
      .importer_names = {"onnx:Reshape"},
      .input_names = {"data", "shape"},
      .value_inputs = {"shape"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                reshape(in[0], attrs.get_ints("shape"), attrs.get_int("allowzero", 0) != 0)};
          },
      .doc = "data in row-major order under the shape given by value input shape (0 copies, one -1 inferred)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
