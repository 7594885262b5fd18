// rotary_embedding (include/nnvm/ops/nn/rotary_embedding.hpp) against a plain loop over heads and
// pairs: 4-D and 3-D X, halves and interleaved pairs, partial rotation, caches by position_ids
// (including out-of-table positions, clamped) or per batch and step; then its error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_rotary_embedding {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;

NDArray filled(DataType t, Dims s, double scale, int64_t salt) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = double((i * 37 + salt) % 29) * scale - 1;
    if (t == dtype::float32) a.data<float>()[i] = float(v);
    else a.values<float16>()[i] = float16(float(v));
  }
  return a;
}

struct Ref {
  bool interleaved = false;
  int64_t rot = 0, heads = 0;
};

NDArray expect(const NDArray& x, const NDArray& cosc, const NDArray& sinc, const NDArray* pos, const Ref& r) {
  using nnvm_test::detail::element;
  const Dims& s = x.shape();
  bool three = s.size() == 3;
  int64_t B = s[0], H = three ? r.heads : s[1], S = three ? s[1] : s[2], D = three ? s[2] / r.heads : s[3];
  int64_t rot = r.rot ? r.rot : D, half = rot / 2;
  NDArray y(x.dtype(), s);
  auto at = [&](int64_t b, int64_t h, int64_t q, int64_t j) {
    return three ? (b * S + q) * H * D + h * D + j : ((b * H + h) * S + q) * D + j;
  };
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t q = 0; q < S; ++q)
        for (int64_t j = 0; j < D; ++j) {
          double v = element(x, at(b, h, q, j));
          if (j < rot) {
            int64_t i = r.interleaved ? j / 2 : j % half;
            bool first = r.interleaved ? j % 2 == 0 : j < half;
            int64_t j1 = r.interleaved ? 2 * i : i, j2 = r.interleaved ? 2 * i + 1 : i + half;
            int64_t row = b * S + q;
            if (pos) row = std::clamp<int64_t>(int64_t(element(*pos, b * S + q)), 0, cosc.shape()[0] - 1);
            double c = element(cosc, row * half + i), sn = element(sinc, row * half + i);
            double x1 = element(x, at(b, h, q, j1)), x2 = element(x, at(b, h, q, j2));
            v = first ? c * x1 - sn * x2 : sn * x1 + c * x2;
          }
          if (x.dtype() == dtype::float32) y.data<float>()[at(b, h, q, j)] = float(v);
          else y.values<float16>()[at(b, h, q, j)] = float16(float(v));
        }
  return y;
}

ops::Attrs attrs_of(const Ref& r) {
  ops::Attrs a;
  if (r.interleaved) a.set_int("interleaved", 1);
  if (r.rot) a.set_int("rotary_embedding_dim", r.rot);
  if (r.heads) a.set_int("num_heads", r.heads);
  return a;
}

}  // namespace

TEST_CASE("nn ops: rotary_embedding") {
  const DataType f32 = dtype::float32;
  std::vector<OpCheck> cases;
  NDArray pos = NDArray::from<int64_t>({0, 3, 7, 2, 11, 5, 1, 9, 4, -2, 40, 6}, {2, 6});
  NDArray x4 = filled(f32, {2, 3, 6, 10}, 0.07, 0);
  for (Ref r : {Ref{false, 0, 0}, Ref{true, 0, 0}, Ref{false, 6, 0}, Ref{true, 4, 0}}) {
    int64_t half = (r.rot ? r.rot : 10) / 2;
    NDArray c = filled(f32, {12, half}, 0.05, 3), s = filled(f32, {12, half}, 0.06, 5);
    cases.push_back({str_cat("4-D positions interleaved ", r.interleaved, " dim ", r.rot), "rotary_embedding",
                     {x4, c, s, pos}, attrs_of(r), {expect(x4, c, s, &pos, r)}});
    NDArray cb = filled(f32, {2, 6, half}, 0.05, 7), sb = filled(f32, {2, 6, half}, 0.06, 11);
    cases.push_back({str_cat("4-D per step interleaved ", r.interleaved, " dim ", r.rot), "rotary_embedding",
                     {x4, cb, sb}, attrs_of(r), {expect(x4, cb, sb, nullptr, r)}});
  }
  NDArray x3 = filled(f32, {2, 6, 12}, 0.07, 1);
  for (Ref r : {Ref{false, 0, 3}, Ref{true, 2, 2}}) {
    int64_t half = (r.rot ? r.rot : 12 / r.heads) / 2;
    NDArray c = filled(f32, {12, half}, 0.05, 3), s = filled(f32, {12, half}, 0.06, 5);
    cases.push_back({str_cat("3-D num_heads ", r.heads, " interleaved ", r.interleaved), "rotary_embedding",
                     {x3, c, s, pos}, attrs_of(r), {expect(x3, c, s, &pos, r)}});
  }
  NDArray xh = filled(dtype::float16, {1, 2, 3, 4}, 0.07, 2);
  NDArray ch = filled(dtype::float16, {1, 3, 2}, 0.05, 3), sh = filled(dtype::float16, {1, 3, 2}, 0.06, 5);
  cases.push_back({"float16", "rotary_embedding", {xh, ch, sh}, {}, {expect(xh, ch, sh, nullptr, {})}, 2e-3, 2e-3});
  nnvm_test::check_ops(cases, "rotary_embedding");

  using T = ops::TensorType;
  T x(f32, {2, 3, 6, 8}), c(f32, {10, 4}), p(dtype::int64, {2, 6});
  CHECK(infer_error("rotary_embedding", {x, c, c, p}) == "(no error)");
  CHECK(infer_error("rotary_embedding", {x, T(f32, {10, 3}), T(f32, {10, 3}), p}) == "nnvm.ops.input_shape");
  CHECK(infer_error("rotary_embedding", {x, c, c, T(dtype::int32, {2, 6})}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("rotary_embedding", {x, c, c, T(dtype::int64, {2, 5})}) == "nnvm.ops.input_shape");
  CHECK(infer_error("rotary_embedding", {x, c, c}) == "nnvm.ops.input_shape");  // per-step caches must be 3-D
  CHECK(infer_error("rotary_embedding", {x, c, c, p}, ops::Attrs().set_int("rotary_embedding_dim", 5)) == "nnvm.ops.attr");
  CHECK(infer_error("rotary_embedding", {T(f32, {2, 6, 12}), c, c, p}) == "nnvm.ops.attr");  // 3-D needs num_heads
  CHECK(infer_error("rotary_embedding", {T(dtype::int32, {2, 3, 6, 8}), c, c, p}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("rotary_embedding", {x, T(dtype::float64, {10, 4}), c, p}) == "nnvm.ops.input_dtype");
}

}  // namespace ops_rotary_embedding
