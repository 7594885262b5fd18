// depth_to_space (ONNX DepthToSpace) and space_to_depth (ONNX SpaceToDepth) on NCHW tensors:
// blocks of blocksize x blocksize pixels trade places with groups of channels.
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace transform_detail {
inline int64_t check_blocksize(const te::Tensor& x, int64_t b) {
  check_rank(x, "input", 4);
  if (b <= 0)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'blocksize' is ", b, " but must be positive"),
                    {"attribute blocksize"});
  return b;
}
}  // namespace transform_detail

// (N, C, H, W) -> (N, C/b², H*b, W*b). Mode DCR reads channel (bh*b + bw)*C/b² + c; CRD reads
// c*b² + bh*b + bw, where (bh, bw) is the output pixel's place in its block.
inline te::Tensor depth_to_space(const te::Tensor& x, int64_t blocksize, const std::string& mode = "DCR",
                                 std::string name = "depth_to_space") {
  using namespace transform_detail;
  int64_t b = check_blocksize(x, blocksize);
  if (mode != "DCR" && mode != "CRD")
    throw UserError("nnvm.ops.attr", str_cat("attribute 'mode' is '", mode, "' but must be DCR or CRD"),
                    {"attribute mode"});
  int64_t c = const_extent(x.shape()[1], "the channel axis of input");
  if (c % (b * b) != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input has ", c, " channels, not a multiple of blocksize² = ", b * b), {"input input"});
  int64_t co = c / (b * b);
  const auto& s = x.shape();
  return te::compute(
      {s[0], ir::Expr(co), ir::simplify(s[2] * b), ir::simplify(s[3] * b)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr bh = v[2] % b, bw = v[3] % b;
        ir::Expr ch = mode == "DCR" ? (bh * b + bw) * co + v[1] : v[1] * (b * b) + bh * b + bw;
        return x(v[0], ch, v[2] / b, v[3] / b);
      },
      std::move(name));
}

// (N, C, H, W) -> (N, C*b², H/b, W/b): output channel (bh*b + bw)*C + c holds pixel (bh, bw) of
// each block of channel c (the inverse of depth_to_space DCR).
inline te::Tensor space_to_depth(const te::Tensor& x, int64_t blocksize, std::string name = "space_to_depth") {
  using namespace transform_detail;
  int64_t b = check_blocksize(x, blocksize);
  int64_t c = const_extent(x.shape()[1], "the channel axis of input");
  int64_t h = const_extent(x.shape()[2], "the height axis of input");
  int64_t w = const_extent(x.shape()[3], "the width axis of input");
  if (h % b != 0 || w % b != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input's spatial extents ", h, " x ", w, " are not multiples of blocksize ", b),
                    {"input input"});
  return te::compute(
      {x.shape()[0], ir::Expr(c * b * b), ir::Expr(h / b), ir::Expr(w / b)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr blk = v[1] / c, ch = v[1] % c;
        return x(v[0], ch, v[2] * b + blk / b, v[3] * b + blk % b);
      },
      std::move(name));
}

inline OpDef depth_to_space_def() {
  return OpDef{
      .name = "depth_to_space",
      .importer_names = {"onnx:DepthToSpace"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                depth_to_space(in[0], attrs.get_int("blocksize"), attrs.get_string("mode", "DCR"))};
          },
      .doc = "NCHW channels moved into blocksize x blocksize spatial blocks (attribute mode DCR or CRD)",
  };
}

inline OpDef space_to_depth_def() {
  return OpDef{
      .name = "space_to_depth",
      .importer_names = {"onnx:SpaceToDepth"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{space_to_depth(in[0], attrs.get_int("blocksize"))};
          },
      .doc = "NCHW blocksize x blocksize spatial blocks moved into channels",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
