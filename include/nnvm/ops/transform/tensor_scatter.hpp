// tensor_scatter (ONNX TensorScatter, a KV-cache update): past_cache (B, ..., M, ...) with update
// (B, ..., S, ...) written along `axis` (S <= M) from position write_indices[b] of each batch row
// b (0 when write_indices is left out); mode circular wraps positions modulo M. Written as a
// compute over the output: position t along `axis` takes update's element t - w (circular:
// (t - w) mod M) when that lies in [0, S), else past_cache's. A linear write outside [0, M) is dropped
// (ONNX calls it an error; a kernel cannot report one).
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// write_indices: undefined, or (B,) int32/int64. axis: any but the batch axis 0.
inline te::Tensor tensor_scatter(const te::Tensor& past_cache, const te::Tensor& update,
                                 const te::Tensor& write_indices, int64_t axis = -2, const std::string& mode = "linear",
                                 std::string name = "tensor_scatter") {
  using namespace transform_detail;
  if (mode != "linear" && mode != "circular")
    throw UserError("nnvm.ops.attr", str_cat("attribute 'mode' is '", mode, "' but must be linear or circular"),
                    {"attribute mode"});
  check_rank(past_cache, "past_cache", 2, SIZE_MAX);
  check_rank(update, "update", past_cache.rank());
  check_same_dtype(past_cache, "past_cache", update, "update");
  size_t a = normalize_axis(axis, past_cache.rank(), "axis");
  if (a == 0)
    throw UserError("nnvm.ops.attr", "attribute 'axis' names the batch axis 0; the sequence axis must come after it",
                    {"attribute axis"});
  for (size_t d = 0; d < past_cache.rank(); ++d)
    if (d != a)
      check_same_extent(update.shape()[d], past_cache.shape()[d], str_cat("axis ", d, " of update and past_cache"));
  int64_t m = const_extent(past_cache.shape()[a], str_cat("axis ", a, " of past_cache"));
  int64_t s = const_extent(update.shape()[a], str_cat("axis ", a, " of update"));
  if (s > m)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("update has ", s, " positions along axis ", a, ", more than past_cache's ", m),
                    {"input update"});
  if (write_indices.defined()) {
    check_rank(write_indices, "write_indices", 1);
    check_index_dtype(write_indices, "write_indices");
    check_same_extent(write_indices.shape()[0], past_cache.shape()[0],
                      "the extents of write_indices and the batch axis (0)");
  }
  return te::compute(
      past_cache.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr j = v[a];
        if (write_indices.defined()) j = j - ir::cast(dtype::int64, write_indices({v[0]}));
        // C's % keeps the dividend's sign; adding M once more makes it a true modulo.
        if (mode == "circular") j = (j % m + m) % m;
        std::vector<ir::Expr> at = exprs(v);
        at[a] = ir::min(ir::max(j, ir::Expr(int64_t(0))), ir::Expr(s - 1));
        return ir::select(j >= int64_t(0) && j < s, update(at), past_cache(exprs(v)));
      },
      std::move(name));
}

inline OpDef tensor_scatter_def() {
  return OpDef{
      .name = "tensor_scatter",
      .importer_names = {"onnx:TensorScatter"},
      .input_names = {"past_cache", "update", "write_indices"},
      .optional_inputs = 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            te::Tensor w = transform_detail::given(in, 2) ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{
                tensor_scatter(in[0], in[1], w, attrs.get_int("axis", -2), attrs.get_string("mode", "linear"))};
          },
      .doc = "past_cache with update written along attribute axis from write_indices[b] (mode linear or circular)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
