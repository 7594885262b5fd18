// lp_normalization (include/nnvm/ops/nn/lp_normalization.hpp) against a plain loop: L1 and L2
// along several axes, a zero slice (Y = 0 there), float64 and float16; then its error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_lp_normalization {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;

NDArray filled(DataType t, Dims s, bool zero_first_row = false) {
  NDArray a(t, s);
  int64_t inner = s.back();
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = zero_first_row && i < inner ? 0 : double((i * 37) % 23) * 0.25 - 2.5;
    if (t == dtype::float32) a.data<float>()[i] = float(v);
    else if (t == dtype::float64) a.data<double>()[i] = v;
    else a.values<float16>()[i] = float16(float(v));
  }
  return a;
}

// x / ||x||_p along `axis`, 0 where the norm is 0.
NDArray expect(const NDArray& x, int64_t axis, int p) {
  Dims s = x.shape();
  size_t a = size_t(axis < 0 ? axis + int64_t(s.size()) : axis);
  int64_t outer = 1, n = s[a], inner = 1;
  for (size_t d = 0; d < a; ++d) outer *= s[d];
  for (size_t d = a + 1; d < s.size(); ++d) inner *= s[d];
  NDArray y(x.dtype(), s);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      double norm = 0;
      for (int64_t k = 0; k < n; ++k) {
        double e = nnvm_test::detail::element(x, (o * n + k) * inner + in);
        norm += p == 1 ? std::fabs(e) : e * e;
      }
      if (p == 2) norm = std::sqrt(norm);
      for (int64_t k = 0; k < n; ++k) {
        int64_t i = (o * n + k) * inner + in;
        double v = norm == 0 ? 0 : nnvm_test::detail::element(x, i) / norm;
        if (x.dtype() == dtype::float32) y.data<float>()[i] = float(v);
        else if (x.dtype() == dtype::float64) y.data<double>()[i] = v;
        else y.values<float16>()[i] = float16(float(v));
      }
    }
  return y;
}

}  // namespace

TEST_CASE("nn ops: lp_normalization") {
  const DataType f32 = dtype::float32;
  std::vector<OpCheck> cases;
  NDArray x = filled(f32, {3, 5, 7});
  cases.push_back({"L2 default axis -1", "lp_normalization", {x}, {}, {expect(x, -1, 2)}});
  cases.push_back({"L1 axis 1", "lp_normalization", {x}, ops::Attrs().set_int("axis", 1).set_int("p", 1), {expect(x, 1, 1)}});
  NDArray z = filled(f32, {4, 5}, true);
  cases.push_back({"L2 axis -1 with a zero row", "lp_normalization", {z}, {}, {expect(z, -1, 2)}});
  cases.push_back({"L1 axis 0 with zeros", "lp_normalization", {z}, ops::Attrs().set_int("axis", 0).set_int("p", 1), {expect(z, 0, 1)}});
  NDArray d = filled(dtype::float64, {2, 3, 5});
  cases.push_back({"float64 axis -2", "lp_normalization", {d}, ops::Attrs().set_int("axis", -2), {expect(d, -2, 2)}});
  NDArray h = filled(dtype::float16, {3, 7});
  cases.push_back({"float16", "lp_normalization", {h}, {}, {expect(h, -1, 2)}, 2e-3, 1e-3});
  nnvm_test::check_ops(cases, "lp_normalization");

  ops::TensorType t(f32, {3, 4});
  CHECK(infer_error("lp_normalization", {t}, ops::Attrs().set_int("p", 3)) == "nnvm.ops.attr");
  CHECK(infer_error("lp_normalization", {t}, ops::Attrs().set_int("axis", 2)) == "nnvm.ops.attr");
  CHECK(infer_error("lp_normalization", {ops::TensorType(dtype::int32, {3, 4})}, {}) == "nnvm.ops.input_dtype");
  CHECK(infer_error("lp_normalization", {t}, ops::Attrs().set_int("axis", -2).set_int("p", 1)) == "(no error)");
}

}  // namespace ops_lp_normalization
