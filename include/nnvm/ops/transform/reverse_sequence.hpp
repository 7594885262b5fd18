// reverse_sequence (ONNX ReverseSequence): for each index i along batch_axis, the first
// sequence_lens[i] elements along time_axis are reversed and the rest copied. sequence_lens is a
// tensor read by the kernel; a length outside [0, T] (T: the time extent) is clamped into it, so
// no read leaves input (ONNX leaves such lengths undefined).
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// input: rank >= 2; sequence_lens: (batch extent,), int32 or int64. ONNX allows only the axes 0
// and 1; any two different axes work here.
inline te::Tensor reverse_sequence(const te::Tensor& input, const te::Tensor& sequence_lens, int64_t batch_axis = 1,
                                   int64_t time_axis = 0, std::string name = "reverse_sequence") {
  using namespace transform_detail;
  check_rank(input, "input", 2, SIZE_MAX);
  check_rank(sequence_lens, "sequence_lens", 1);
  check_index_dtype(sequence_lens, "sequence_lens");
  size_t b = normalize_axis(batch_axis, input.rank(), "batch_axis");
  size_t t = normalize_axis(time_axis, input.rank(), "time_axis");
  if (b == t)
    throw UserError("nnvm.ops.attr", str_cat("attributes 'batch_axis' and 'time_axis' both name axis ", b),
                    {"attribute time_axis"});
  check_same_extent(sequence_lens.shape()[0], input.shape()[b], "the extent of sequence_lens and input's batch axis");
  return te::compute(
      input.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr time = input.shape()[t];
        ir::Expr len = ir::min(ir::max(ir::cast(dtype::int64, sequence_lens({v[b]})), ir::Expr(int64_t(0))), time);
        std::vector<ir::Expr> at = exprs(v);
        at[t] = ir::select(v[t] < len, len - int64_t(1) - v[t], ir::Expr(v[t]));
        return input(at);
      },
      std::move(name));
}

inline OpDef reverse_sequence_def() {
  return OpDef{
      .name = "reverse_sequence",
      .importer_names = {"onnx:ReverseSequence"},
      .input_names = {"input", "sequence_lens"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                reverse_sequence(in[0], in[1], attrs.get_int("batch_axis", 1), attrs.get_int("time_axis", 0))};
          },
      .doc = "the first sequence_lens[i] elements along time_axis reversed, for each i along batch_axis",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
