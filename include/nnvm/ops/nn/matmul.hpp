// matmul: the NumPy matrix product, ONNX MatMul. A 1-D A is a row vector and a 1-D B a column
// vector, and that axis is dropped from the result; the leading (batch) axes of rank > 2
// operands broadcast against each other as NumPy does: (2, 1, 3, 4) x (5, 4, 6) -> (2, 5, 3, 6).
#pragma once

#include "nnvm/ops/broadcast/broadcast.hpp"
#include "nnvm/ops/nn/dense.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor matmul(const te::Tensor& A, const te::Tensor& B, std::string name = "matmul") {
  check_rank(A, "A", 1, 8);
  check_rank(B, "B", 1, 8);
  check_matmul_dtype(A, "A");
  check_same_dtype(A, "A", B, "B");
  bool a_vec = A.rank() == 1, b_vec = B.rank() == 1;
  ir::Expr K = A.shape().back(), KB = B.shape()[b_vec ? 0 : B.rank() - 2];
  check_same_extent(K, KB, "the inner extents of A (its last axis) and B (its second-to-last axis)");
  std::vector<ir::Expr> a_batch(A.shape().begin(), A.shape().end() - (a_vec ? 1 : 2));
  std::vector<ir::Expr> b_batch(B.shape().begin(), B.shape().end() - (b_vec ? 1 : 2));
  std::vector<ir::Expr> shape;
  try {
    shape = broadcast_shape(a_batch, b_batch);
  } catch (const UserError& e) {
    throw UserError("nnvm.ops.input_shape", "the batch axes of A and B: " + e.message(), {"input B"});
  }
  size_t nb = shape.size();
  if (!a_vec) shape.push_back(A.shape()[A.rank() - 2]);
  if (!b_vec) shape.push_back(B.shape().back());
  // Reads the batch part of an operand at output position v: right-aligned, extent 1 reads 0.
  auto batch_idx = [nb](const std::vector<ir::Expr>& batch, const std::vector<ir::Var>& v) {
    std::vector<ir::Expr> idx;
    for (size_t d = 0; d < batch.size(); ++d)
      idx.push_back(ir::is_const_int(ir::simplify(batch[d]), 1) ? ir::Expr(int64_t(0))
                                                               : ir::Expr(v[nb - batch.size() + d]));
    return idx;
  };
  auto k = te::reduce_axis(K, "k");
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> ai = batch_idx(a_batch, v), bi = batch_idx(b_batch, v);
        if (!a_vec) ai.push_back(v[nb]);
        ai.push_back(k.var());
        bi.push_back(k.var());
        if (!b_vec) bi.push_back(v.back());
        return te::sum(A(ai) * B(bi), {k});
      },
      std::move(name));
}

// Matrix results (rank >= 2) take dense's register tiles over their last two axes; a vector or
// scalar result is a plain reduction per element.
inline void schedule_matmul(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  te::Tensor a(Y.op().inputs.at(0)), b(Y.op().inputs.at(Y.op().inputs.size() - 1));
  if (a.rank() >= 2 && b.rank() >= 2) schedule_matmul_tiles(s[Y], target);
  else schedule_reduction(s[Y], target);
}

inline OpDef matmul_def() {
  return OpDef{
      .name = "matmul",
      .importer_names = {"onnx:MatMul"},
      .input_names = {"A", "B"},
      .pattern = OpPattern::out_fusable,
      .compute = [](const std::vector<te::Tensor>& in,
                    const Attrs&) { return std::vector<te::Tensor>{matmul(in[0], in[1])}; },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_matmul(s, out[0], t); },
      .doc = "NumPy matrix product of A and B (1-D operands, broadcast batch axes; floats and 32/64-bit ints)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
