// rotary_embedding: ONNX RotaryEmbedding (opset 23). X is (batch, heads, seq, head_size), or
// (batch, seq, hidden) with attribute num_heads giving head_size = hidden / num_heads. The first
// rotary_embedding_dim (default: all) elements of each head are rotated pairwise by the angle
// whose cosine and sine the caches hold; the rest pass through. Pairs are (j, j + dim/2) by
// default, or (2i, 2i + 1) with interleaved = 1:
//   y1 = cos * x1 - sin * x2,   y2 = sin * x1 + cos * x2.
// With position_ids (batch, seq) the caches are (max_position, dim/2) tables indexed by position;
// without, they are (batch, seq, dim/2). A position outside the table is clamped into it (ONNX
// leaves it undefined; kernels cannot fail). float16/bfloat16 compute in float32.
#pragma once

#include "nnvm/ops/nn/moments.hpp"
#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct RotarySpec {
  bool interleaved = false;
  int64_t rotary_dim = 0;  // 0: head_size
  int64_t num_heads = 0;   // required for 3-D X
};

// `position_ids` may be undefined (absent).
inline te::Tensor rotary_embedding(const te::Tensor& x, const te::Tensor& cos_cache, const te::Tensor& sin_cache,
                                   const te::Tensor& position_ids, const RotarySpec& spec,
                                   std::string name = "rotary_embedding") {
  using transform_detail::const_extent;
  check_rank(x, "X", 3, 4);
  check_norm_float(x, "X");
  check_same_dtype(x, "X", cos_cache, "cos_cache");
  check_same_dtype(x, "X", sin_cache, "sin_cache");
  bool three_d = x.rank() == 3;
  int64_t last = const_extent(x.shape().back(), "the last axis of input X");
  int64_t head = last;
  if (three_d) {
    if (spec.num_heads <= 0 || last % spec.num_heads != 0)
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute 'num_heads' is ", spec.num_heads, " but a 3-D X needs a positive divisor of its hidden size ", last),
                      {"attribute num_heads"});
    head = last / spec.num_heads;
  }
  int64_t rot = spec.rotary_dim == 0 ? head : spec.rotary_dim;
  if (rot <= 0 || rot > head || rot % 2 != 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'rotary_embedding_dim' is ", spec.rotary_dim, " but must be even and at most the head size ", head),
                    {"attribute rotary_embedding_dim"});
  int64_t half = rot / 2;
  ir::Expr batch = x.shape()[0], seq = x.shape()[three_d ? 1 : 2];
  bool by_position = position_ids.defined();
  if (by_position) {
    if (position_ids.dtype() != dtype::int64)
      throw UserError("nnvm.ops.input_dtype",
                      str_cat("input position_ids (tensor ", position_ids.name(), ") is ", position_ids.dtype(), ", expected int64"),
                      {"input position_ids"});
    check_rank(position_ids, "position_ids", 2);
    check_same_extent(position_ids.shape()[0], batch, "the batch extents of position_ids and X");
    check_same_extent(position_ids.shape()[1], seq, "the sequence extents of position_ids and X");
  }
  for (auto [c, input] : {std::pair{cos_cache, "cos_cache"}, std::pair{sin_cache, "sin_cache"}}) {
    check_rank(c, input, by_position ? 2 : 3);
    if (!by_position) {
      check_same_extent(c.shape()[0], batch, str_cat("the batch extents of ", input, " and X"));
      check_same_extent(c.shape()[1], seq, str_cat("the sequence extents of ", input, " and X"));
    }
    if (const_extent(c.shape().back(), str_cat("the last axis of input ", input)) != half)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axis of input ", input, " has extent ", ir::to_string(c.shape().back()),
                              ", expected rotary_embedding_dim / 2 = ", half),
                      {str_cat("input ", input)});
  }
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr k = v.back();
        ir::Expr j = three_d ? k % head : k;   // index within the head
        ir::Expr base = k - j;                 // the head's first element on X's last axis
        ir::Expr s = v[three_d ? 1 : 2];
        // Which half of its pair j is, the pair's other element and the cache column; indices are
        // clamped so the unused ones (j >= rot) stay in bounds too.
        ir::Expr first = spec.interleaved ? j % int64_t(2) == int64_t(0) : j < half;
        ir::Expr other = spec.interleaved ? ir::select(first, j + int64_t(1), j - int64_t(1))
                                          : ir::select(first, j + half, j - half);
        ir::Expr col = spec.interleaved ? j / int64_t(2) : ir::select(first, j, j - half);
        other = ir::min(other, ir::Expr(head - 1));
        col = ir::min(col, ir::Expr(half - 1));
        std::vector<ir::Expr> at;
        if (by_position) {
          ir::Expr pos = position_ids({v[0], s});
          ir::Expr n = cos_cache.shape()[0];
          at = {ir::min(ir::max(pos, ir::Expr(int64_t(0))), n - int64_t(1)), col};
        } else {
          at = {v[0], s, col};
        }
        ir::Expr c = ir::cast(ct, cos_cache(at)), sn = ir::cast(ct, sin_cache(at));
        ir::Expr xj = ir::cast(ct, x(idx));
        std::vector<ir::Expr> oi = idx;
        oi.back() = base + other;
        ir::Expr xo = ir::cast(ct, x(oi));
        ir::Expr rotated = ir::select(first, c * xj - sn * xo, sn * xo + c * xj);
        return ir::cast(t, ir::select(j < rot, rotated, xj));
      },
      std::move(name));
}

inline OpDef rotary_embedding_def() {
  return OpDef{
      .name = "rotary_embedding",
      .importer_names = {"onnx:RotaryEmbedding"},
      .input_names = {"X", "cos_cache", "sin_cache", "position_ids"},
      .optional_inputs = 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            RotarySpec spec;
            spec.interleaved = attrs.get_int("interleaved", 0) != 0;
            spec.rotary_dim = attrs.get_int("rotary_embedding_dim", 0);
            spec.num_heads = attrs.get_int("num_heads", 0);
            te::Tensor pos = in.size() > 3 ? in[3] : te::Tensor();
            return std::vector<te::Tensor>{rotary_embedding(in[0], in[1], in[2], pos, spec)};
          },
      .doc = "X's heads rotated pairwise by the angles of cos_cache/sin_cache (by position_ids when given)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
