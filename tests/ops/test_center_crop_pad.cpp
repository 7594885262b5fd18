// center_crop_pad (include/nnvm/ops/transform/center_crop_pad.hpp) against a plain loop: crops and
// pads of odd and even differences, axes subsets with negative axes, int and bool data; then its
// error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

namespace ops_center_crop_pad {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;

NDArray filled(DataType t, Dims s) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(i) * 0.5f - 3;
    else if (t == dtype::int32) a.data<int32_t>()[i] = int32_t(i * 7 % 31) - 15;
    else a.data<bool>()[i] = i % 3 == 0;
  }
  return a;
}

// Out[o] = X[o + start] where that is inside X, else 0; start = floor((n - m) / 2) for a crop and
// -floor((m - n) / 2) for a pad, per axis.
NDArray expect(const NDArray& x, const Dims& shape, std::vector<int64_t> axes) {
  Dims xs = x.shape(), ys = xs;
  if (axes.empty())
    for (size_t d = 0; d < xs.size(); ++d) axes.push_back(int64_t(d));
  Dims start(xs.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = size_t(axes[i] < 0 ? axes[i] + int64_t(xs.size()) : axes[i]);
    ys[a] = shape[i];
    start[a] = shape[i] <= xs[a] ? (xs[a] - shape[i]) / 2 : -((shape[i] - xs[a]) / 2);
  }
  NDArray y(x.dtype(), ys);
  size_t bytes = size_t(x.dtype().bytes());
  int64_t n = y.numel();
  for (int64_t o = 0; o < n; ++o) {
    int64_t rest = o, src = 0, stride = 1;
    bool inside = true;
    for (size_t d = ys.size(); d-- > 0;) {
      int64_t i = rest % ys[d] + start[d];
      rest /= ys[d];
      inside = inside && i >= 0 && i < xs[d];
      src += i * stride;
      stride *= xs[d];
    }
    auto* out = static_cast<uint8_t*>(y.raw()) + size_t(o) * bytes;
    if (inside) std::memcpy(out, static_cast<const uint8_t*>(x.raw()) + size_t(src) * bytes, bytes);
    else std::memset(out, 0, bytes);
  }
  return y;
}

NDArray i64s(std::vector<int64_t> v) { return NDArray::from<int64_t>(v, {int64_t(v.size())}); }

}  // namespace

TEST_CASE("transform ops: center_crop_pad") {
  std::vector<OpCheck> cases;
  NDArray x = filled(dtype::float32, {9, 6, 3});
  cases.push_back({"crop odd and even, keep", "center_crop_pad", {x, i64s({4, 3, 3})}, {}, {expect(x, {4, 3, 3}, {})}});
  cases.push_back({"pad odd and even", "center_crop_pad", {x, i64s({12, 9, 4})}, {}, {expect(x, {12, 9, 4}, {})}});
  cases.push_back({"crop one axis, pad another", "center_crop_pad", {x, i64s({5, 11, 2})}, {}, {expect(x, {5, 11, 2}, {})}});
  NDArray xi = filled(dtype::int32, {3, 7, 5});
  cases.push_back({"int32 axes 1 2", "center_crop_pad", {xi, i64s({4, 8})}, ops::Attrs().set_ints("axes", {1, 2}),
                   {expect(xi, {4, 8}, {1, 2})}});
  cases.push_back({"int32 negative axes -1 -3", "center_crop_pad", {xi, i64s({2, 6})}, ops::Attrs().set_ints("axes", {-1, -3}),
                   {expect(xi, {2, 6}, {-1, -3})}});
  NDArray xb = filled(dtype::boolean, {5, 4});
  cases.push_back({"bool pad", "center_crop_pad", {xb, i64s({8, 3})}, {}, {expect(xb, {8, 3}, {})}});
  nnvm_test::check_ops(cases, "center_crop_pad");

  ops::TensorType t(dtype::float32, {5, 4}), s2(dtype::int64, {2}), s1(dtype::int64, {1});
  ops::Attrs two = ops::Attrs().set_ints("shape", {3, 6});
  CHECK(infer_error("center_crop_pad", {t, s2}, two) == "(no error)");
  CHECK(infer_error("center_crop_pad", {t, s1}, ops::Attrs().set_ints("shape", {3})) == "nnvm.ops.input_shape");
  CHECK(infer_error("center_crop_pad", {t, s2}, ops::Attrs().set_ints("shape", {3, -1})) == "nnvm.ops.input_shape");
  CHECK(infer_error("center_crop_pad", {t, s2}, ops::Attrs(two).set_ints("axes", {0, 2})) == "nnvm.ops.attr");
  CHECK(infer_error("center_crop_pad", {t, s2}, ops::Attrs(two).set_ints("axes", {1, -1})) == "nnvm.ops.attr");
  auto out = ops::infer_types(ops::get_op("center_crop_pad"), {t, s2}, two);
  CHECK(*ir::as_const_int(out[0].shape[1]) == 6);
}

}  // namespace ops_center_crop_pad
