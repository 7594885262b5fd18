// max_pool: the largest element of each window (ONNX MaxPool), and the position of the first
// largest one in the window's row-major scan order (output Indices, int64), as an index into the
// flattened X that ignores padding: row-major (storage_order 0) or with the first spatial axis
// fastest (storage_order 1) within each (n, c) slice of D1 * D2 * ... elements.
// A window with no tap inside X (possible only with pads as large as the window) gives the
// lowest value of the dtype and the index of its slice's first element.
#pragma once

#include "nnvm/ops/conv/pooling.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// Three stages: Y, the smallest row-major spatial position in the window holding Y (an int64
// reduction), and Indices from it. float32, float64 and integer X.
inline std::vector<te::Tensor> max_pool(const te::Tensor& X, const WindowParams& p, int64_t storage_order = 0,
                                        const std::string& name = "max_pool") {
  Window w = pool_window(X, p);
  check_pool_dtype(X, true);
  if (storage_order != 0 && storage_order != 1)
    detail::bad_window_attr("storage_order",
                            str_cat("attribute 'storage_order' is ", storage_order, "; expected 0 or 1"));
  size_t n = w.rank();
  te::Tensor Y = window_reduce(
      X, w, ir::Combiner::max, [](ir::Expr x) { return x; }, name);
  // Strides of the spatial axes within one (n, c) slice, row-major and column-major.
  std::vector<int64_t> row(n, 1), col(n, 1);
  for (size_t d = n - 1; d-- > 0;) row[d] = row[d + 1] * w.in[d + 1];
  for (size_t d = 1; d < n; ++d) col[d] = col[d - 1] * w.in[d - 1];
  int64_t slice = row[0] * w.in[0];
  std::vector<ir::IterVar> taps;
  for (size_t d = 0; d < n; ++d) taps.push_back(te::reduce_axis(ir::Expr(w.kernel[d]), str_cat("rk", d)));
  std::vector<int64_t> lo(n, 0);
  te::Tensor pos = te::compute(
      Y.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> o(v.begin() + 2, v.end()), k, idx{v[0], v[1]};
        ir::Expr at(int64_t(0));
        for (auto& t : taps) k.push_back(t.var());
        for (size_t d = 0; d < n; ++d) {
          idx.push_back(w.tap(d, o[d], k[d]));
          at = at + idx.back() * ir::Expr(row[d]);
        }
        ir::Expr none(slice);
        ir::Expr source = ir::select(X(idx) == Y(std::vector<ir::Expr>(v.begin(), v.end())), at, none);
        return ir::Reduce::make(ir::Combiner::min, source, taps, none, window_guard(w, o, k, lo, w.in));
      },
      name + "_argmax");
  te::Tensor indices = te::compute(
      Y.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr at = pos(std::vector<ir::Expr>(v.begin(), v.end()));
        at = ir::select(at < ir::Expr(slice), at, ir::Expr(int64_t(0)));
        if (storage_order == 1 && n > 1) {
          ir::Expr moved(int64_t(0));
          for (size_t d = 0; d < n; ++d) {
            ir::Expr coord =
                d == 0 ? ir::Expr(at / ir::Expr(row[0])) : ir::Expr(at / ir::Expr(row[d]) % ir::Expr(w.in[d]));
            moved = moved + coord * ir::Expr(col[d]);
          }
          at = moved;
        }
        ir::Expr base = (ir::Expr(v[0]) * X.shape()[1] + ir::Expr(v[1])) * ir::Expr(slice);
        return ir::cast(dtype::int64, base + at);
      },
      name + "_indices");
  return {Y, indices};
}

inline OpDef max_pool_def() {
  return OpDef{
      .name = "max_pool",
      .importer_names = {"onnx:MaxPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            auto outs = max_pool(in[0], WindowParams::from(attrs), attrs.get_int("storage_order", 0));
            // compute_indices 0 (set by simplify_inference when nothing reads Indices): Y alone.
            if (attrs.get_int("compute_indices", 1) == 0) outs.resize(1);
            return outs;
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_pool(s, out[0], t);
            if (out.size() < 2) return;
            te::Tensor pos(out[1]->op->inputs.at(0));
            schedule_reduction(s[pos], t);
            schedule_injective(s[out[1]], t);
          },
      .doc =
          "largest element of each window, and its flat index (MaxPool; outputs Y, Indices; attributes "
          "kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, storage_order; compute_indices 0: Y only)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
