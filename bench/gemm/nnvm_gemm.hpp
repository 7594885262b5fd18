// The DSL matmul that bench_gemm measures: C[M, N] = A[M, K] * B[K, N], float32, row-major.
//
// Algorithm, as layout stages (computed at the root, inside the same kernel) plus one reduction:
//   Bp(jb, k, jj) = B(k, jb*W + jj)         B in column panels W wide, zero padded to N', K'
//   Ap(ib, k, ii) = A(ib*R + ii, k)         A in row panels R high, zero padded to M', K'
//   Cp(i, j)      = sum over k of Ap(i/R, k, i%R) * Bp(j/W, k, j%W)
//   C(i, j)       = Cp(i, j)                only when N is not a multiple of W (Cp is N' wide)
// Packing makes every micro-tile read contiguous memory (rows of A at a 4 KiB stride would
// share L1 sets at n = 1024) and padding makes the k and column splits exact.
// Schedule of Cp: k blocks of k_block steps outermost (a K-block of Bp stays in L2), then the
// parallel loop over row tiles, column tiles, the steps of the block, and the R x W micro-tile
// (rows unrolled, columns vectorized). M need not be a multiple of R: that split is partitioned
// into full tiles and a serial tail.
//
// The micro-tile stays in registers across the k loop because kernel arguments are restrict
// (see docs/lowered_ir.md). On AVX-512, 12 rows x 16 lanes (12 accumulators) measured best
// through the C emitter, 12 rows x 32 lanes or 8 x 48 (24 accumulators, two or three vectors a
// row, see llvm_tiling_for) through LLVM (bench_gemm.cpp says why). A row wider than one vector
// is split into vectors of this CPU's width, the vectors unrolled: LLVM makes poor code for a 48-lane
// vector type.
#pragma once

#include <nnvm/tensor.hpp>

#include <algorithm>
#include <string>

namespace bench {

struct GemmTiling {
  int64_t rows = 12;      // R: rows of C per micro-tile (unrolled loop)
  int64_t width = 16;     // W: columns per micro-tile and packed panel width (vector lanes)
  int64_t k_block = 128;  // reduction steps per cache block
  bool operator==(const GemmTiling&) const = default;
};

inline std::string describe(const GemmTiling& t) {
  return nnvm::str_cat("rows=", t.rows, " width=", t.width, " k_block=", t.k_block);
}

// The LLVM back end's micro-tile for an m x n result: 12 rows x 2 vectors or 8 rows x 3 vectors
// (24 accumulators either way; the second needs fewer loads per multiply-add), whichever pads
// the result less. Rows past a multiple of R run in a slower serial tail and columns past a
// multiple of W are computed into padding (then copied out), so the padded area is the cost:
// n = 1000 takes 8 x 48 (1000 x 1008 instead of 1008 x 1024), n = 1024 and 2048 take 12 x 32.
inline GemmTiling llvm_tiling_for(int64_t m, int64_t n) {
  const int64_t lanes = nnvm::target::Target::host().vector_lanes(nnvm::dtype::float32);
  auto padded_area = [&](int64_t rows, int64_t width) {
    return (m + rows - 1) / rows * rows * ((n + width - 1) / width * width);
  };
  GemmTiling wide{12, 2 * lanes, 128}, tall{8, 3 * lanes, 128};
  return padded_area(tall.rows, tall.width) < padded_area(wide.rows, wide.width) ? tall : wide;
}

// The kernel matmul(A, B, C) for these sizes and tiling.
inline nnvm::ir::LoweredFunc gemm_kernel(int64_t m, int64_t n, int64_t k, const GemmTiling& t,
                                         const std::string& name) {
  using namespace nnvm;
  const int64_t R = t.rows, W = t.width;
  // k is padded to whole cache blocks: a guarded tail inside the k loop would keep the C
  // compiler from holding the micro-tile in registers (measured 0.2-0.4 of OpenBLAS at n = 1023).
  // The blocks are evened out (at most k_block steps each) so the padding stays under one step
  // per block: k = 1000 runs 8 blocks of 125 rather than 8 of 128 (2.4% more work).
  const int64_t k_blocks = (k + t.k_block - 1) / t.k_block;
  const int64_t kb = (k + k_blocks - 1) / k_blocks, k_pad = kb * k_blocks;
  const int64_t m_tiles = (m + R - 1) / R, n_pad = (n + W - 1) / W * W;
  auto A = placeholder<float>({ir::Expr(m), ir::Expr(k)}, "A");
  auto B = placeholder<float>({ir::Expr(k), ir::Expr(n)}, "B");
  auto Bp = compute(
      {ir::Expr(n_pad / W), ir::Expr(k_pad), ir::Expr(W)},
      [&](auto jb, auto kk, auto jj) { return select(jb * W + jj < n && kk < k, B(kk, jb * W + jj), 0.0f); }, "Bp",
      {"jb", "k", "jj"});
  auto Ap = compute(
      {ir::Expr(m_tiles), ir::Expr(k_pad), ir::Expr(R)},
      [&](auto ib, auto kk, auto ii) { return select(ib * R + ii < m && kk < k, A(ib * R + ii, kk), 0.0f); }, "Ap",
      {"ib", "k", "ii"});
  auto kk = reduce_axis(ir::Expr(k_pad), "k");
  auto Cp = compute(
      {ir::Expr(m), ir::Expr(n_pad)},
      [&](auto i, auto j) { return sum(Ap(i / R, kk, i % R) * Bp(j / W, kk, j % W), kk); },
      n_pad == n ? "C" : "Cp", {"i", "j"});
  auto C = n_pad == n ? Cp
                      : compute({ir::Expr(m), ir::Expr(n)}, [&](auto i, auto j) { return Cp(i, j); }, "C", {"i", "j"});

  auto sch = schedule::create_schedule(C);
  auto s = sch[Cp];
  auto [io, ii] = s.split(s.axis(0), R);
  auto [jo, ji] = s.split(s.axis(1), W);
  auto [ko, ki] = s.split(s.reduce_axis(0), kb);
  s.reorder({ko, io, jo, ki, ii, ji});
  s.unroll(ii);
  const int64_t lanes = target::Target::host().vector_lanes(dtype::float32);
  if (W > lanes && W % lanes == 0) {
    auto [jv, jl] = s.split(ji, lanes);
    s.unroll(jv);
    s.vectorize(jl);
  } else {
    s.vectorize(ji);
  }
  s.parallel(io);

  auto p = sch[Bp];
  p.parallel(p.axis(0));
  p.vectorize(p.axis(2));
  sch[Ap].parallel(sch[Ap].axis(0));
  if (n_pad != n) {
    auto c = sch[C];
    auto [cjo, cji] = c.split(c.axis(1), 16);
    c.vectorize(cji);
    c.parallel(c.axis(0));
  }
  return lower::lower(sch, {A, B, C}, name);
}

}  // namespace bench
