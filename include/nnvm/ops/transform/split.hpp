// split (ONNX Split, opset 18): the input cut into consecutive pieces along `axis`, one output
// per piece.
//
// How many outputs: the value input `split` lists the piece sizes; otherwise the attribute
// `num_outputs` gives the count and pieces are ceil(n / num_outputs) long, the last one shorter
// (opset 18). An opset-13 node with neither has as many equal pieces as it has outputs, which
// the op cannot see, so the importer sets `num_outputs` from the node's output count; an
// uneven extent then gets the opset-18 pieces instead of ONNX's error.
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// One output per entry of `sizes`, which must be positive and sum to the axis's extent.
inline std::vector<te::Tensor> split(const te::Tensor& x, int64_t axis, const std::vector<int64_t>& sizes,
                                     std::string name = "split") {
  using namespace transform_detail;
  check_rank(x, "input", 1, SIZE_MAX);
  size_t a = normalize_axis(axis, x.rank(), "axis");
  int64_t n = const_extent(x.shape()[a], str_cat("the split axis ", a, " of input"));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s <= 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("split sizes ", list_string(sizes), " hold ", s, "; pieces must not be empty"),
                      {"input split"});
    total += s;
  }
  if (sizes.empty() || total != n)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("split sizes ", list_string(sizes), " sum to ", total, " but axis ", a, " has extent ", n),
                    {"input split"});
  std::vector<te::Tensor> out;
  int64_t begin = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<ir::Expr> shape = x.shape();
    shape[a] = ir::Expr(sizes[k]);
    out.push_back(te::compute(
        shape,
        [&](const std::vector<ir::Var>& v) {
          std::vector<ir::Expr> idx = exprs(v);
          idx[a] = idx[a] + begin;
          return x(idx);
        },
        str_cat(name, k)));
    begin += sizes[k];
  }
  return out;
}

// The opset-18 pieces for `count` outputs over extent n.
inline std::vector<int64_t> split_sizes(int64_t n, int64_t count) {
  if (count <= 0 || count > n)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'num_outputs' is ", count, " but must lie in [1, ", n,
                            "] (the extent of the split axis)"),
                    {"attribute num_outputs"});
  int64_t piece = (n + count - 1) / count;
  std::vector<int64_t> sizes(size_t(count), piece);
  sizes.back() = n - piece * (count - 1);
  if (sizes.back() <= 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'num_outputs' is ", count, ": pieces of ", piece, " leave nothing for the last of ",
                            "the ", n, " elements"),
                    {"attribute num_outputs"});
  return sizes;
}

inline OpDef split_def() {
  return OpDef{
      .name = "split",
      .importer_names = {"onnx:Split"},
      .input_names = {"input", "split"},
      .optional_inputs = 1,
      .value_inputs = {"split"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            int64_t axis = attrs.get_int("axis", 0);
            if (transform_detail::given(in, 1)) return split(in[0], axis, attrs.get_ints("split"));
            if (!attrs.has("num_outputs"))
              throw UserError("nnvm.ops.attr",
                              "split needs value input split or attribute num_outputs (the importer sets it from the "
                              "node's output count)",
                              {"attribute num_outputs"});
            check_rank(in[0], "input", 1, SIZE_MAX);
            size_t a = normalize_axis(axis, in[0].rank(), "axis");
            int64_t n = transform_detail::const_extent(in[0].shape()[a], str_cat("the split axis ", a, " of input"));
            return split(in[0], axis, split_sizes(n, attrs.get_int("num_outputs")));
          },
      .doc = "input cut along attribute axis into pieces: value input split, or attribute num_outputs "
             "(ceil-sized pieces)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
