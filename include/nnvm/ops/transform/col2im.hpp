// col2im (ONNX Col2Im, PyTorch's fold): input (N, C * prod(block_shape), L) holds, per channel
// and kernel offset k, one column of L sliding blocks; image_shape and block_shape (value inputs,
// r >= 1 values each) give the output (N, C, image_shape...). Block b (row-major over the block
// grid) with offset k lands on image position b * strides - pads_begin + k * dilations; positions
// in the padding are dropped, and overlapping blocks add up.
//
// Written as a compute over the output, not a scatter: pixel p sums, over the kernel offsets k,
// the block b with b * strides = p + pads_begin - k * dilations when one exists (divisible by the
// stride and inside the block grid). The condition guards every read, so no read leaves input.
#pragma once

#include "nnvm/ops/conv/window.hpp"
#include "nnvm/ops/elementwise/dtypes.hpp"
#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct Col2ImSpec {
  std::vector<int64_t> image_shape, block_shape;
  std::vector<int64_t> strides, dilations, pads;  // empty: ONNX's defaults (1, 1, 0)
};

inline te::Tensor col2im(const te::Tensor& input, const Col2ImSpec& spec, std::string name = "col2im") {
  using namespace transform_detail;
  check_rank(input, "input", 3);
  check_input_kind(input, "input", DtypeKind::number);
  size_t r = spec.image_shape.size();
  if (r == 0 || spec.block_shape.size() != r)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("inputs image_shape and block_shape have ", r, " and ", spec.block_shape.size(),
                            " values; they need the same number, at least one"),
                    {"input block_shape"});
  for (auto [values, what] : {std::pair{&spec.image_shape, "image_shape"}, std::pair{&spec.block_shape, "block_shape"}})
    for (int64_t v : *values)
      if (v < 1 || uint64_t(v) > max_tensor_bytes)
        throw UserError("nnvm.ops.input_shape", str_cat("input ", what, " holds ", v, "; extents must lie in [1, 2^48]"),
                        {str_cat("input ", what)});
  std::vector<int64_t> strides = spatial_ints(spec.strides, "strides", r, 1, 1);
  std::vector<int64_t> dilations = spatial_ints(spec.dilations, "dilations", r, 1, 1);
  auto [pad_begin, pad_end] = split_window_pads(spec.pads, r);
  // Attributes and value inputs may be hostile: this arithmetic must not overflow.
  auto checked = [](int64_t a, int64_t b, bool add) {
    int64_t v;
    if (add ? __builtin_add_overflow(a, b, &v) : __builtin_mul_overflow(a, b, &v))
      throw UserError("nnvm.ops.too_large", "the window attributes and shapes overflow 64-bit extents");
    return v;
  };
  std::vector<int64_t> blocks(r);
  int64_t kernel_size = 1, block_count = 1;
  for (size_t d = 0; d < r; ++d) {
    int64_t span = checked(spec.block_shape[d] - 1, dilations[d], false) + 1;
    int64_t room = checked(checked(spec.image_shape[d], pad_begin[d], true), pad_end[d], true) - span;
    if (room < 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("axis ", d, ": a block spans ", span, " pixels, the padded image only ", room + span),
                      {"input block_shape"});
    blocks[d] = room / strides[d] + 1;
    kernel_size = checked(kernel_size, spec.block_shape[d], false);
    block_count = checked(block_count, blocks[d], false);
  }
  int64_t rows = const_extent(input.shape()[1], "axis 1 of input");
  if (rows % kernel_size != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("axis 1 of input has extent ", rows, ", not a multiple of prod(block_shape) = ",
                            kernel_size),
                    {"input input"});
  if (const_extent(input.shape()[2], "axis 2 of input") != block_count)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("axis 2 of input has extent ", ir::to_string(input.shape()[2]), " but the block grid ",
                            list_string(blocks), " has ", block_count, " blocks"),
                    {"input input"});

  std::vector<ir::Expr> shape{input.shape()[0], ir::Expr(rows / kernel_size)};
  for (int64_t e : spec.image_shape) shape.emplace_back(e);
  std::vector<ir::Expr> kernel_extents(spec.block_shape.begin(), spec.block_shape.end());
  std::vector<ir::Expr> block_extents(blocks.begin(), blocks.end());
  DataType t = input.dtype(), at = arith_type(t);
  te::Tensor sum = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::IterVar> k;
        std::vector<ir::Expr> kv, b;
        ir::Expr cond;
        for (size_t d = 0; d < r; ++d) {
          k.push_back(te::reduce_axis(ir::Expr(spec.block_shape[d]), str_cat("k", d)));
          kv.push_back(k.back()->var);
          ir::Expr q = v[2 + d] + pad_begin[d] - kv[d] * dilations[d];
          ir::Expr in = q >= int64_t(0) && q <= (blocks[d] - 1) * strides[d];
          if (strides[d] != 1) in = in && q % strides[d] == int64_t(0);
          cond = cond.defined() ? (cond && in) : in;
          b.push_back(strides[d] == 1 ? q : q / strides[d]);
        }
        ir::Expr row = v[1] * kernel_size + ravel(kv, kernel_extents);
        ir::Expr value = ir::cast(at, input({v[0], row, ravel(b, block_extents)}));
        return ir::Reduce::make(ir::Combiner::sum, value, k, ir::Expr(), cond);
      },
      at == t ? name : name + "_sum");
  if (at == t) return sum;
  return te::compute(
      shape, [&](const std::vector<ir::Var>& v) { return ir::cast(t, sum(exprs(v))); }, std::move(name));
}

inline OpDef col2im_def() {
  return OpDef{
      .name = "col2im",
      .importer_names = {"onnx:Col2Im"},
      .input_names = {"input", "image_shape", "block_shape"},
      .value_inputs = {"image_shape", "block_shape"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            Col2ImSpec spec{attrs.get_ints("image_shape"), attrs.get_ints("block_shape"),
                            attrs.get_ints("strides", {}), attrs.get_ints("dilations", {}), attrs.get_ints("pads", {})};
            return std::vector<te::Tensor>{col2im(in[0], spec)};
          },
      .doc = "sliding blocks (columns) summed back into an image (value inputs image_shape, block_shape; "
             "attributes strides, dilations, pads)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
