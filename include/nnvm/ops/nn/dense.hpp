// dense: Y = alpha * A' * B' + beta * C, the ONNX Gemm. A' is A (M x K) or, with transA, A's
// transpose; B' likewise (K x N); the optional bias C broadcasts to (M, N) from the right
// (shape (), (N), (1, N), (M, 1), (M, N), ...).
#pragma once

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct DenseParams {
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 1.0;
};

// One stage: the bias is the reduction's starting value, so Y is written once per element.
inline te::Tensor dense(const te::Tensor& A, const te::Tensor& B, const te::Tensor& C = {}, DenseParams p = {},
                        std::string name = "dense") {
  check_rank(A, "A", 2);
  check_rank(B, "B", 2);
  check_float(A, "A");
  check_same_dtype(A, "A", B, "B");
  ir::Expr M = A.shape()[p.trans_a ? 1 : 0], K = A.shape()[p.trans_a ? 0 : 1];
  ir::Expr KB = B.shape()[p.trans_b ? 1 : 0], N = B.shape()[p.trans_b ? 0 : 1];
  check_same_extent(K, KB, str_cat("the inner extents of A", p.trans_a ? " (transposed)" : "", " and B",
                                   p.trans_b ? " (transposed)" : ""));
  // For each axis of C (right-aligned to (M, N)): false when it has extent 1, so reads index 0.
  std::vector<bool> c_follows;
  if (C.defined()) {
    check_rank(C, "C", 0, 2);
    check_same_dtype(A, "A", C, "C");
    const ir::Expr out[2] = {M, N};
    for (size_t d = 0; d < C.rank(); ++d) {
      const ir::Expr& want = out[2 - C.rank() + d];
      bool one = ir::is_const_int(ir::simplify(C.shape()[d]), 1);
      if (!one && !same_extent(C.shape()[d], want))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("bias C axis ", d, " has extent ", ir::to_string(C.shape()[d]),
                                "; it must be 1 or equal the output's ", ir::to_string(want)),
                        {"input C"});
      c_follows.push_back(!one);
    }
  }
  DataType t = A.dtype();
  auto k = te::reduce_axis(K, "k");
  return te::compute(
      {M, N},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr a = p.trans_a ? A(k.var(), v[0]) : A(v[0], k.var());
        ir::Expr b = p.trans_b ? B(v[1], k.var()) : B(k.var(), v[1]);
        ir::Expr prod = p.alpha == 1.0 ? a * b : a * b * ir::make_const(t, p.alpha);
        ir::Expr init;
        if (C.defined()) {
          std::vector<ir::Expr> idx;
          for (size_t d = 0; d < C.rank(); ++d)
            idx.push_back(c_follows[d] ? ir::Expr(v[2 - C.rank() + d]) : ir::Expr(int64_t(0)));
          init = C(idx);
          if (p.beta != 1.0) init = init * ir::make_const(t, p.beta);
        }
        return te::sum(prod, {k}, init);
      },
      std::move(name));
}

// Register tiles: 4 rows by two SIMD vectors of columns, the reduction split by 4 and unrolled
// inside, rows of tiles spread over threads.
inline void schedule_dense(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  require_cpu(target, "dense");
  auto st = s[Y];
  int lanes = target.vector_lanes(Y.dtype());
  auto [io, jo, ii, ji] = st.tile(st.axis(0), st.axis(1), 4, 2 * lanes);
  auto [ko, ki] = st.split(st.reduce_axis(0), 4);
  st.reorder({io, jo, ko, ki, ii, ji});
  st.vectorize(ji);
  st.unroll(ii);
  st.unroll(ki);
  if (detail::worth_parallel(st)) st.parallel(io);
}

inline OpDef dense_def() {
  return OpDef{
      .name = "dense",
      .importer_names = {"onnx:Gemm"},
      .input_names = {"A", "B", "C"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            DenseParams p{attrs.get_int("transA", 0) != 0, attrs.get_int("transB", 0) != 0,
                          attrs.get_float("alpha", 1.0), attrs.get_float("beta", 1.0)};
            return std::vector<te::Tensor>{dense(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), p)};
          },
      .default_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_dense(s, out[0], t); },
      .doc = "alpha * A' * B' + beta * C (Gemm; attributes transA, transB, alpha, beta)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
