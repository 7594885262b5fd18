// The global pools: one value per (n, c) over all spatial elements, output (N, C, 1, ...):
// global_average_pool, global_max_pool and global_lp_pool (ONNX GlobalAveragePool,
// GlobalMaxPool, GlobalLpPool with p default 2). Each is its windowed pool with one window
// covering the whole input.
#pragma once

#include "nnvm/ops/conv/average_pool.hpp"
#include "nnvm/ops/conv/lp_pool.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef global_average_pool_def() {
  return OpDef{
      .name = "global_average_pool",
      .importer_names = {"onnx:GlobalAveragePool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            return std::vector<te::Tensor>{average_pool(in[0], global_window(in[0]), false, "global_average_pool")};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc = "mean over all spatial elements of each channel (GlobalAveragePool)",
  };
}

inline OpDef global_lp_pool_def() {
  return OpDef{
      .name = "global_lp_pool",
      .importer_names = {"onnx:GlobalLpPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                lp_pool(in[0], global_window(in[0]), attrs.get_int("p", 2), "global_lp_pool")};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc = "p-norm over all spatial elements of each channel (GlobalLpPool; attribute p)",
  };
}

inline OpDef global_max_pool_def() {
  return OpDef{
      .name = "global_max_pool",
      .importer_names = {"onnx:GlobalMaxPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            check_pool_dtype(in[0], true);
            return std::vector<te::Tensor>{window_reduce(
                in[0], global_window(in[0]), ir::Combiner::max, [](ir::Expr x) { return x; }, "global_max_pool")};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc = "largest element over all spatial elements of each channel (GlobalMaxPool)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
