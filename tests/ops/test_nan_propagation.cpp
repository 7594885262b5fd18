// NaN and infinities as ONNX (numpy) and IEEE 754-2019 have them: float min/max and everything
// built on them (relu, clip, Max/Min, max pooling, ReduceMax/Min) give NaN when any operand is
// NaN, whichever side it is on and wherever it sits in a reduction; max/min reductions start at
// -inf/+inf. Every case runs on the interpreter, the C JIT and LLVM (check_ops), and a max
// reduction gives the same under schedules that split, reorder or rfactor it. Expected values
// are written out here from the definitions.
#include "support/pch.hpp"
#include "support/op_check.hpp"
#include "support/schedule_harness.hpp"

namespace ops_nan_propagation {

using namespace nnvm;
using nnvm_test::OpCheck;

namespace {
const float nan_ = NAN, inf = INFINITY;

NDArray f32(const std::vector<float>& v, std::vector<int64_t> shape) { return NDArray::from(v, std::move(shape)); }
NDArray i64(const std::vector<int64_t>& v, std::vector<int64_t> shape) { return NDArray::from(v, std::move(shape)); }
}  // namespace

TEST_CASE("relu, clip, max and min propagate NaN from either operand") {
  NDArray x = f32({nan_, -1, 2, -inf, inf, 0.5f}, {6});
  NDArray y = f32({1, nan_, nan_, 3, -inf, 0.25f}, {6});
  nnvm_test::check_ops(
      {OpCheck{.label = "relu", .op = "relu", .inputs = {x}, .want = {f32({nan_, 0, 2, 0, inf, 0.5f}, {6})}},
       OpCheck{.label = "clip",
               .op = "clip",
               .inputs = {x},
               .attrs = ops::Attrs().set_float("min", -1.5).set_float("max", 1.5),
               .want = {f32({nan_, -1, 1.5f, -1.5f, 1.5f, 0.5f}, {6})}},
       OpCheck{.label = "max x,y", .op = "max", .inputs = {x, y}, .want = {f32({nan_, nan_, nan_, 3, inf, 0.5f}, {6})}},
       OpCheck{.label = "max y,x", .op = "max", .inputs = {y, x}, .want = {f32({nan_, nan_, nan_, 3, inf, 0.5f}, {6})}},
       OpCheck{.label = "min x,y", .op = "min", .inputs = {x, y}, .want = {f32({nan_, nan_, nan_, -inf, -inf, 0.25f}, {6})}},
       OpCheck{.label = "min y,x", .op = "min", .inputs = {y, x}, .want = {f32({nan_, nan_, nan_, -inf, -inf, 0.25f}, {6})}}},
      "nan_elementwise");
}

TEST_CASE("max pooling and max/min reductions give NaN for a window holding one, -inf/+inf for all-infinite ones") {
  // 1x1x4x4, 2x2 windows at stride 2: the NaN sits first, last and in the middle of its window.
  NDArray x = f32({nan_, 1, 2, 3,       //
                   4, 5, 6, nan_,       //
                   -inf, -inf, 8, 9,    //
                   -inf, -inf, nan_, 10},
                  {1, 1, 4, 4});
  nnvm_test::check_ops({OpCheck{.label = "max_pool 2x2",
                                .op = "max_pool",
                                .inputs = {x},
                                .attrs = ops::Attrs()
                                             .set_ints("kernel_shape", {2, 2})
                                             .set_ints("strides", {2, 2})
                                             .set_int("compute_indices", 0),
                                .want = {f32({nan_, nan_, -inf, nan_}, {1, 1, 2, 2})}}},
                       "nan_pool");
  // Rows of 9: the NaN at the start, the middle and the end; a row of -inf; a row of +inf.
  std::vector<float> v;
  for (int r = 0; r < 5; ++r)
    for (int k = 0; k < 9; ++k) v.push_back(r == 3 ? -inf : r == 4 ? inf : float(k));
  v[0] = nan_, v[9 + 4] = nan_, v[18 + 8] = nan_;
  NDArray rows = f32(v, {5, 9});
  nnvm_test::check_ops({OpCheck{.label = "reduce_max",
                                .op = "reduce_max",
                                .inputs = {rows, i64({1}, {1})},
                                .attrs = ops::Attrs().set_int("keepdims", 0),
                                .want = {f32({nan_, nan_, nan_, -inf, inf}, {5})}},
                        OpCheck{.label = "reduce_min",
                                .op = "reduce_min",
                                .inputs = {rows, i64({1}, {1})},
                                .attrs = ops::Attrs().set_int("keepdims", 0),
                                .want = {f32({nan_, nan_, nan_, -inf, inf}, {5})}}},
                       "nan_reduce");
}

TEST_CASE("a DSL max reduction starts at -inf and keeps a NaN under every schedule, rfactor included") {
  te::Tensor A = te::placeholder({4, 64}, dtype::float32, "A");
  auto k = te::reduce_axis(int64_t(64), "k");
  te::Tensor M = te::compute({4}, [&](auto& i) { return te::max_reduce(A({i[0], k.var()}), {k}); }, "M");
  nnvm_test::OpCase op{
      .name = "row_max",
      .inputs = {A},
      .output = M,
      .reference = [](const std::vector<NDArray>& in) {
        std::vector<float> out;
        for (int64_t r = 0; r < 4; ++r) {
          float m = -INFINITY;
          for (int64_t c = 0; c < 64; ++c) {
            float a = in[0].values<float>()[size_t(r * 64 + c)];
            m = (a > m || std::isnan(a) || std::isnan(m)) ? (std::isnan(m) ? m : a) : m;
          }
          out.push_back(m);
        }
        return out;
      }};
  std::vector<nnvm_test::ScheduleVariant> variants{
      {"default", [](schedule::Schedule&) {}},
      {"split reduce, inner first", [&](schedule::Schedule& s) {
         auto [ko, ki] = s[M].split(s[M].reduce_axis(0), 8);
         s[M].reorder({ki, s[M].axis(0), ko});
       }},
      {"rfactor inner 8", [&](schedule::Schedule& s) {
         auto [ko, ki] = s[M].split(s[M].reduce_axis(0), 8);
         (void)ko;
         te::Tensor MF = s.rfactor(M, ki);
         s[MF].vectorize(s[MF].axis(0));
       }},
      {"rfactor outer 3 parts, parallel", [&](schedule::Schedule& s) {
         auto [ko, ki] = s[M].split_nparts(s[M].reduce_axis(0), 3);
         (void)ki;
         te::Tensor MF = s.rfactor(M, ko);
         s[MF].parallel(s[MF].axis(0));
       }}};
  // Row 0 holds a NaN at column 0, row 1 at 37, row 2 at 63; row 3 is all -inf.
  nnvm_test::check_schedules(op, variants, 5, [](std::vector<NDArray>& in) {
    float* a = static_cast<float*>(in[0].raw());
    a[0] = NAN, a[64 + 37] = NAN, a[128 + 63] = NAN;
    for (int c = 0; c < 64; ++c) a[192 + c] = -INFINITY;
  });
}

}  // namespace ops_nan_propagation
