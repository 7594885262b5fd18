// dense: Y = alpha * A' * B' + beta * C, the ONNX Gemm. A' is A (M x K) or, with transA, A's
// transpose; B' likewise (K x N); the optional bias C broadcasts to (M, N) from the right
// (shape (), (N), (1, N), (M, 1), (M, N), ...). It owns onnx:Gemm; matmul.hpp (onnx:MatMul) shares
// its dtype rule and its tiled schedule.
#pragma once

#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/schedule_cpu.hpp"
#include "nnvm/ops/schedule_gpu.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// "nnvm.ops.input_dtype" unless `t` holds a type the matrix products compute in: float32, float64
// or a 32/64-bit integer (ONNX Gemm and MatMul; float16 would need a float32 accumulator stage).
inline void check_matmul_dtype(const te::Tensor& t, const char* input) {
  DataType d = t.dtype();
  bool ok = d.is_scalar() && !d.is_storage_only() && !d.is_bool() && !d.is_handle() &&
            (d.is_float() || d.bits == 32 || d.bits == 64);
  if (!ok)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", d,
                            ", expected float32, float64 or a 32/64-bit integer"),
                    {"input " + std::string(input)});
}

struct DenseParams {
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 1.0;
};

// One stage: the bias is the reduction's starting value, so Y is written once per element.
inline te::Tensor dense(const te::Tensor& A, const te::Tensor& B, const te::Tensor& C = {}, DenseParams p = {},
                        std::string name = "dense") {
  check_rank(A, "A", 2);
  check_rank(B, "B", 2);
  check_matmul_dtype(A, "A");
  check_same_dtype(A, "A", B, "B");
  // Integer products cannot take a fractional factor without changing the output type.
  for (auto [v, attr] : {std::pair{p.alpha, "alpha"}, std::pair{p.beta, "beta"}})
    if (!A.dtype().is_float() && v != std::floor(v))
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute '", attr, "' is ", v, " but must be a whole number for ", A.dtype(), " inputs"),
                      {std::string("attribute ") + attr});
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

// Register tiles over the last two axes of a matrix-product stage (one reduction axis): 4 rows
// by two SIMD vectors of columns, the reduction split by 4 and unrolled inside; the leading
// (batch) axes and the rows of tiles are fused into one loop spread over threads.
inline void schedule_matmul_tiles(schedule::Stage st, const Target& target) {
  size_t rank = st.tensor().rank();
  int lanes = target.vector_lanes(st.tensor().dtype());
  auto [io, jo, ii, ji] = st.tile(st.axis(rank - 2), st.axis(rank - 1), 4, 2 * lanes);
  auto [ko, ki] = st.split(st.reduce_axis(0), 4);
  std::vector<ir::IterVar> outer;
  for (size_t d = 0; d + 2 < rank; ++d) outer.push_back(st.axis(d));
  outer.push_back(io);
  std::vector<ir::IterVar> order = outer;
  order.insert(order.end(), {jo, ko, ki, ii, ji});
  st.reorder(order);
  st.vectorize(ji);
  st.unroll(ii);
  st.unroll(ki);
  ir::IterVar par = st.fuse(outer);
  if (detail::worth_parallel(st)) st.parallel(par);
}

inline void schedule_dense(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  schedule_matmul_tiles(s[Y], target);
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
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_dense(s, out[0], t); },
      .gpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            if (!gpu_schedule_matmul(s, out[0], t)) gpu_schedule_reduction(s[out[0]], t);
          },
      .doc = "alpha * A' * B' + beta * C (Gemm; attributes transA, transB, alpha, beta; floats and 32/64-bit ints)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
