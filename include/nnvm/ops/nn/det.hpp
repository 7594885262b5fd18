// det: ONNX Det (opset 11 and 22). X has shape [*, M, M]; the output [*] holds the determinant
// of each M x M matrix, as numpy.linalg.det computes it: LU factorization with partial pivoting
// (the row of the largest |a[i,k]|, the first of equal ones, is swapped up at step k), the
// determinant the product of the pivots, negated once per swap. A column with no nonzero pivot
// gives a zero pivot and so a zero determinant, with no division by zero on the way. A 0 x 0
// matrix has determinant 1 (numpy's). float16/bfloat16 compute in float32 and round back.
//
// M must be a constant of at most det_max_extent: step k is its own stages over the batch (the
// largest |pivot|, its row, then the (M-k-1)^2 Schur complement with the pivot row and column
// dropped), so the stage count grows with M. Cost O(M^3 / 3) per matrix, like LU.
#pragma once

#include "nnvm/ops/nn/moments.hpp"
#include "nnvm/ops/reduce/reduce_common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The largest matrix extent M det accepts (3 * (M - 1) + 1 stages).
inline constexpr int64_t det_max_extent = 64;

// Stages, for step k < M - 1 of the elimination: "<name>_max<k>" (the largest |a[i,0]| of the
// step's matrix), "<name>_pivot<k>" (the first row holding it), "<name>_lu<k+1>" (the next
// step's matrix: rows swapped, eliminated, the pivot row and column dropped); then name, the
// product of the signed pivots, cast to X's type.
inline te::Tensor det(const te::Tensor& x, std::string name = "det") {
  check_rank(x, "X", 2, 8);
  DataType t = x.dtype();
  if (t != dtype::float16 && t != dtype::bfloat16 && t != dtype::float32 && t != dtype::float64)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input X (tensor ", x.name(), ") is ", t, ", expected float16, bfloat16, float32 or float64"),
                    {"input X"});
  size_t r = x.rank();
  std::optional<int64_t> rows = ir::simplified_const_int(x.shape()[r - 2]);
  std::optional<int64_t> cols = ir::simplified_const_int(x.shape()[r - 1]);
  if (!rows || !cols)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last two axes of input X (tensor ", x.name(), ") must be constant extents, got ",
                            ir::to_string(x.shape()[r - 2]), " and ", ir::to_string(x.shape()[r - 1])),
                    {"input X"});
  if (*rows != *cols)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X (tensor ", x.name(), ") holds ", *rows, " x ", *cols,
                            " matrices, expected square ones"),
                    {"input X"});
  const int64_t m = *rows;
  if (m > det_max_extent)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X (tensor ", x.name(), ") holds ", m, " x ", m, " matrices; det takes at most ",
                            det_max_extent, " x ", det_max_extent, " (one set of stages per elimination step)"),
                    {"input X"});
  DataType ct = norm_compute_type(t);
  std::vector<ir::Expr> batch(x.shape().begin(), x.shape().end() - 2);
  auto at = [](const std::vector<ir::Var>& b, ir::Expr i, ir::Expr j) {
    std::vector<ir::Expr> idx(b.begin(), b.end());
    idx.push_back(std::move(i));
    idx.push_back(std::move(j));
    return idx;
  };
  auto batch_of = [&](const std::vector<ir::Var>& v) { return std::vector<ir::Var>(v.begin(), v.begin() + ptrdiff_t(batch.size())); };
  if (m == 0)
    return te::compute(batch, [&](const std::vector<ir::Var>&) { return ir::cast(t, ir::make_const(ct, 1.0)); }, std::move(name));

  // a[k]: the matrix of step k, (m - k) x (m - k); step 0 reads X itself.
  std::vector<te::Tensor> lu;
  auto a = [&](size_t k, const std::vector<ir::Var>& b, ir::Expr i, ir::Expr j) {
    return k == 0 ? ir::cast(ct, x(at(b, std::move(i), std::move(j)))) : lu[k - 1](at(b, std::move(i), std::move(j)));
  };
  std::vector<te::Tensor> pivots;  // the pivot row of each step but the last (whose one row is the pivot)
  ir::Expr zero = ir::make_zero(ct);
  for (int64_t k = 0; k + 1 < m; ++k) {
    size_t s = size_t(k);
    int64_t n = m - k;
    auto i = te::reduce_axis(ir::Expr(n), "i");
    te::Tensor best = te::compute(
        batch,
        [&](const std::vector<ir::Var>& b) {
          return ir::Reduce::make(ir::Combiner::max, ir::call(ir::CallOp::abs, a(s, b, i.var(), ir::Expr(int64_t(0)))),
                                  {i}, zero);
        },
        str_cat(name, "_max", k));
    // The search starts from the last row, so a NaN column (no row equal to its maximum) still
    // gives a valid row.
    auto q = te::reduce_axis(ir::Expr(n), "q");
    te::Tensor pivot = te::compute(
        batch,
        [&](const std::vector<ir::Var>& b) {
          ir::Expr hit = ir::call(ir::CallOp::abs, a(s, b, q.var(), ir::Expr(int64_t(0)))) ==
                         best(std::vector<ir::Expr>(b.begin(), b.end()));
          return ir::Reduce::make(ir::Combiner::min, q.var(), {q}, ir::Expr(n - 1), hit);
        },
        str_cat(name, "_pivot", k));
    pivots.push_back(pivot);
    // Row i of the next matrix is row i + 1 of the swapped one: the old row 0 where the pivot
    // row was. A zero pivot means a zero column (its largest magnitude is 0), whose multipliers
    // are all 0: dividing by 1 instead keeps them so. The guard tests |pivot| rather than the
    // pivot: the same test, and as a math call it keeps this stage's buffer where the
    // microcontroller recipe computes cheap stages in place (schedule_mcu.hpp). In place, each
    // step would recompute the last one at its five reads, 5^M terms.
    std::vector<ir::Expr> next_shape = batch;
    next_shape.push_back(ir::Expr(n - 1));
    next_shape.push_back(ir::Expr(n - 1));
    lu.push_back(te::compute(
        next_shape,
        [&](const std::vector<ir::Var>& v) {
          std::vector<ir::Var> b = batch_of(v);
          ir::Expr p = pivot(std::vector<ir::Expr>(b.begin(), b.end()));
          ir::Expr row = ir::Expr(v[batch.size()]) + int64_t(1), col = ir::Expr(v[batch.size() + 1]) + int64_t(1);
          ir::Expr src = ir::select(row == p, ir::Expr(int64_t(0)), row);
          ir::Expr pv = a(s, b, p, ir::Expr(int64_t(0)));
          ir::Expr safe = ir::select(ir::call(ir::CallOp::abs, pv) == zero, ir::make_const(ct, 1.0), pv);
          return a(s, b, src, col) - a(s, b, src, ir::Expr(int64_t(0))) / safe * a(s, b, p, col);
        },
        str_cat(name, "_lu", k + 1)));
  }
  return te::compute(
      batch,
      [&](const std::vector<ir::Var>& b) {
        ir::Expr prod = a(size_t(m - 1), b, ir::Expr(int64_t(0)), ir::Expr(int64_t(0)));
        for (size_t k = pivots.size(); k-- > 0;) {
          ir::Expr p = pivots[k](std::vector<ir::Expr>(b.begin(), b.end()));
          ir::Expr pv = a(k, b, p, ir::Expr(int64_t(0)));
          prod = ir::select(p == int64_t(0), pv, -pv) * prod;
        }
        return ir::cast(t, prod);
      },
      std::move(name));
}

inline OpDef det_def() {
  return OpDef{
      .name = "det",
      .importer_names = {"onnx:Det"},
      .input_names = {"X"},
      .pattern = OpPattern::opaque,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs&) { return std::vector<te::Tensor>{det(in[0])}; },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                         const Target& t) { schedule_stages(s, out, t); },
      .doc = "determinant of each M x M matrix in X [*, M, M] by LU with partial pivoting; M <= 64",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
