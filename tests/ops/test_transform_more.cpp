// col2im, reverse_sequence, affine_grid, tensor_scatter and max_unpool (include/nnvm/ops/
// transform) through the interpreter, the C JIT and LLVM (when built), against plain loops
// written from the ONNX spec (most as the spec's own scatter-style loops, where the ops compute
// per output element), on the ONNX node tests' shapes and values and on every attribute; then
// their error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <functional>

namespace ops_transform_more {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;
using T = ops::TensorType;
const DataType f32 = dtype::float32, f64 = dtype::float64, i32 = dtype::int32, i64 = dtype::int64;

using nnvm_test::ravel;
using nnvm_test::unravel;
int64_t count(const Dims& s) { return nnvm_test::element_count(s); }

double get(const NDArray& a, int64_t i) { return nnvm_test::detail::element(a, i); }
void put(NDArray& a, int64_t i, double v) {
  DataType t = a.dtype();
  if (t == f32) a.data<float>()[i] = float(v);
  else if (t == f64) a.data<double>()[i] = v;
  else if (t == i32) a.data<int32_t>()[i] = int32_t(v);
  else a.data<int64_t>()[i] = int64_t(v);
}
NDArray filled(DataType t, Dims s, const std::function<double(int64_t)>& f) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) put(a, i, f(i));
  return a;
}
NDArray zeros(DataType t, Dims s) {
  return filled(t, std::move(s), [](int64_t) { return 0.0; });
}
NDArray values(DataType t, Dims s, const std::vector<double>& v) {
  return filled(t, std::move(s), [&](int64_t i) { return v[size_t(i)]; });
}
NDArray ints(const Dims& v, DataType t = i64) {
  return filled(t, {int64_t(v.size())}, [&](int64_t i) { return double(v[size_t(i)]); });
}
double wavy(int64_t i) { return double((i * 37) % 23) * 0.5 - 5; }

// Col2Im as the spec's loop: every column element (channel c, kernel offset k, block b) added
// to the image pixel it came from, when that pixel is not padding.
NDArray col2im_ref(const NDArray& in, const Dims& image, const Dims& block, Dims strides, Dims dil, Dims pads) {
  size_t r = image.size();
  if (strides.empty()) strides.assign(r, 1);
  if (dil.empty()) dil.assign(r, 1);
  if (pads.empty()) pads.assign(2 * r, 0);
  int64_t n_ = in.shape()[0], k_ = count(block), c_ = in.shape()[1] / k_;
  Dims blocks(r);
  for (size_t d = 0; d < r; ++d)
    blocks[d] = (image[d] + pads[d] + pads[r + d] - dil[d] * (block[d] - 1) - 1) / strides[d] + 1;
  Dims os{n_, c_};
  os.insert(os.end(), image.begin(), image.end());
  NDArray out = zeros(in.dtype(), os);
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t c = 0; c < c_; ++c)
      for (int64_t k = 0; k < k_; ++k)
        for (int64_t b = 0; b < count(blocks); ++b) {
          Dims kk = unravel(k, block), bb = unravel(b, blocks), pos{n, c};
          bool inside = true;
          for (size_t d = 0; d < r; ++d) {
            int64_t p = bb[d] * strides[d] - pads[d] + kk[d] * dil[d];
            inside = inside && p >= 0 && p < image[d];
            pos.push_back(p);
          }
          if (!inside) continue;
          int64_t o = ravel(pos, os);
          put(out, o, get(out, o) + get(in, (n * c_ * k_ + c * k_ + k) * count(blocks) + b));
        }
  return out;
}

// ReverseSequence as the spec states it: element t < len of sequence i goes to len - 1 - t. The
// op clamps lengths into [0, T], so this does too.
NDArray reverse_ref(const NDArray& x, const NDArray& lens, size_t batch_axis, size_t time_axis) {
  NDArray out = x;
  const Dims& s = x.shape();
  for (int64_t q = 0; q < x.numel(); ++q) {
    Dims idx = unravel(q, s);
    int64_t len = std::clamp<int64_t>(int64_t(get(lens, idx[batch_axis])), 0, s[time_axis]);
    if (idx[time_axis] >= len) continue;
    idx[time_axis] = len - 1 - idx[time_axis];
    put(out, ravel(idx, s), get(x, q));
  }
  return out;
}

// AffineGrid as the reference builds it: evenly spaced positions per axis (linspace), then
// theta times the homogeneous position (x, y[, z], 1) with x along the last axis.
NDArray affine_grid_ref(const NDArray& theta, const Dims& size, bool align) {
  size_t r = size.size() - 2;
  Dims spatial(size.begin() + 2, size.end()), os{size[0]};
  os.insert(os.end(), spatial.begin(), spatial.end());
  os.push_back(int64_t(r));
  std::vector<std::vector<double>> axis(r);
  for (size_t d = 0; d < r; ++d) {
    double n = double(spatial[d]);
    double step = align ? (n > 1 ? 2 / (n - 1) : 0) : 2 / n, start = align ? -1 : -1 + step / 2;
    for (int64_t i = 0; i < spatial[d]; ++i) axis[d].push_back(start + double(i) * step);
  }
  NDArray out(theta.dtype(), os);
  for (int64_t n = 0; n < size[0]; ++n)
    for (int64_t p = 0; p < count(spatial); ++p) {
      Dims idx = unravel(p, spatial);
      std::vector<double> pos;
      for (size_t k = 0; k < r; ++k) pos.push_back(axis[r - 1 - k][size_t(idx[r - 1 - k])]);
      pos.push_back(1);
      for (size_t j = 0; j < r; ++j) {
        double v = 0;
        for (size_t k = 0; k <= r; ++k)
          v += get(theta, (n * int64_t(r) + int64_t(j)) * int64_t(r + 1) + int64_t(k)) * pos[k];
        put(out, (n * count(spatial) + p) * int64_t(r) + int64_t(j), v);
      }
    }
  return out;
}

// TensorScatter as the spec's pseudocode; a linear write outside the cache (an error in ONNX)
// is dropped, as the op documents.
NDArray tensor_scatter_ref(const NDArray& cache, const NDArray& update, const NDArray* writes, int64_t axis,
                           bool circular) {
  const Dims& cs = cache.shape();
  const Dims& us = update.shape();
  size_t a = size_t(axis < 0 ? axis + int64_t(cs.size()) : axis);
  NDArray out = cache;
  for (int64_t u = 0; u < update.numel(); ++u) {
    Dims idx = unravel(u, us);
    int64_t pos = (writes ? int64_t(get(*writes, idx[0])) : 0) + idx[a];
    if (circular) pos %= cs[a];
    if (pos < 0 || pos >= cs[a]) continue;
    idx[a] = pos;
    put(out, ravel(idx, cs), get(update, u));
  }
  return out;
}

// MaxUnpool as the reference: X written at the flat positions I of the unpooled tensor, that
// tensor then zero-padded at the end of each axis to output_shape.
NDArray max_unpool_ref(const NDArray& x, const NDArray& idx, const Dims& unpooled, const Dims& output_shape) {
  NDArray y = zeros(x.dtype(), unpooled);
  for (int64_t i = 0; i < x.numel(); ++i) put(y, int64_t(get(idx, i)), get(x, i));
  if (output_shape.empty()) return y;
  NDArray out = zeros(x.dtype(), output_shape);
  for (int64_t i = 0; i < y.numel(); ++i) put(out, ravel(unravel(i, unpooled), output_shape), get(y, i));
  return out;
}

// MaxPool's two outputs (values and flat indices over the whole input, the first maximum of
// each window), to feed max_unpool what it unpools in practice.
std::pair<NDArray, NDArray> max_pool(const NDArray& x, const Dims& kernel, const Dims& strides, const Dims& pads) {
  const Dims& xs = x.shape();
  size_t r = xs.size() - 2;
  Dims os{xs[0], xs[1]}, spatial(xs.begin() + 2, xs.end());
  for (size_t d = 0; d < r; ++d) os.push_back((xs[2 + d] + pads[d] + pads[r + d] - kernel[d]) / strides[d] + 1);
  NDArray v(x.dtype(), os), ix(i64, os);
  Dims out_spatial(os.begin() + 2, os.end());
  for (int64_t o = 0; o < v.numel(); ++o) {
    Dims oi = unravel(o, os);
    double best = -INFINITY;
    int64_t where = -1;
    for (int64_t k = 0; k < count(kernel); ++k) {
      Dims ki = unravel(k, kernel), at{oi[0], oi[1]};
      bool inside = true;
      for (size_t d = 0; d < r; ++d) {
        int64_t p = oi[2 + d] * strides[d] - pads[d] + ki[d];
        inside = inside && p >= 0 && p < xs[2 + d];
        at.push_back(p);
      }
      if (!inside) continue;
      int64_t flat = ravel(at, xs);
      if (get(x, flat) > best) best = get(x, flat), where = flat;
    }
    put(v, o, best);
    put(ix, o, double(where));
  }
  return {v, ix};
}

ops::Attrs window_attrs(const Dims& strides, const Dims& dilations, const Dims& pads) {
  ops::Attrs a;
  if (!strides.empty()) a.set_ints("strides", strides);
  if (!dilations.empty()) a.set_ints("dilations", dilations);
  if (!pads.empty()) a.set_ints("pads", pads);
  return a;
}

}  // namespace

TEST_CASE("transform ops: col2im") {
  std::vector<OpCheck> cases;
  struct Case {
    std::string label;
    Dims in, image, block, strides, dilations, pads;
    DataType t = f32;
  };
  // The ONNX node tests' shapes (test_col2im*), then everything at once on two batches and
  // channels with uneven pads and a stride the image does not divide, a 1-D image and int32.
  for (const Case& c : std::vector<Case>{
           {"node test", {1, 5, 5}, {5, 5}, {1, 5}, {}, {}, {}},
           {"pads", {1, 5, 15}, {5, 5}, {1, 5}, {}, {}, {0, 1, 0, 1}},
           {"strides", {1, 9, 4}, {5, 5}, {3, 3}, {2, 2}, {}, {}},
           {"dilations", {1, 4, 5}, {6, 6}, {2, 2}, {}, {1, 5}, {}},
           {"5-D", {1, 10, 12}, {3, 4, 5}, {1, 1, 5}, {}, {}, {}},
           {"all attributes", {2, 12, 12}, {5, 6}, {2, 3}, {2, 1}, {2, 1}, {1, 0, 0, 2}, f64},
           {"1-D stride 2", {1, 3, 3}, {7}, {3}, {2}, {}, {}},
           {"int32 overlapping", {2, 8, 9}, {4, 4}, {2, 2}, {}, {}, {}, i32},
       }) {
    NDArray x = filled(c.t, c.in, wavy);
    cases.push_back({str_cat("col2im ", c.label), "col2im", {x, ints(c.image), ints(c.block)},
                     window_attrs(c.strides, c.dilations, c.pads),
                     {col2im_ref(x, c.image, c.block, c.strides, c.dilations, c.pads)}});
  }
  nnvm_test::check_ops(cases, "col2im");

  auto err = [](Dims in, Dims image, Dims block, ops::Attrs a = {}) {
    a.set_ints("image_shape", image).set_ints("block_shape", block);
    return infer_error("col2im", {T(f32, in), T(i64, {int64_t(image.size())}), T(i64, {int64_t(block.size())})}, a);
  };
  CHECK(err({1, 5, 5}, {5, 5}, {1, 5}) == "(no error)");
  CHECK(err({1, 6, 5}, {5, 5}, {1, 5}) == "nnvm.ops.input_shape");    // 6 rows, not a multiple of 5
  CHECK(err({1, 5, 6}, {5, 5}, {1, 5}) == "nnvm.ops.input_shape");    // 6 columns for 5 blocks
  CHECK(err({1, 5, 5}, {5, 5}, {1, 5, 1}) == "nnvm.ops.input_shape"); // block_shape of another rank
  CHECK(err({1, 5, 5}, {5, 0}, {1, 5}) == "nnvm.ops.input_shape");
  CHECK(err({1, 6, 1}, {5, 5}, {1, 6}) == "nnvm.ops.input_shape");    // the block spans more than the image
  CHECK(err({5, 5}, {5, 5}, {1, 5}) == "nnvm.ops.input_shape");
  CHECK(err({1, 5, 5}, {5, 5}, {1, 5}, ops::Attrs().set_ints("strides", {0, 1})) == "nnvm.ops.attr");
  CHECK(err({1, 5, 5}, {5, 5}, {1, 5}, ops::Attrs().set_ints("dilations", {1})) == "nnvm.ops.attr");
  CHECK(err({1, 5, 5}, {5, 5}, {1, 5}, ops::Attrs().set_ints("pads", {0, -1, 0, 1})) == "nnvm.ops.attr");
  // Hostile attributes overflow no arithmetic.
  CHECK(err({1, 5, 5}, {5, 5}, {1, 5}, ops::Attrs().set_ints("dilations", {1, int64_t(1) << 62})) ==
        "nnvm.ops.too_large");
  ops::Attrs shapes = ops::Attrs().set_ints("image_shape", {5, 5}).set_ints("block_shape", {1, 5});
  CHECK(infer_error("col2im", {T(dtype::boolean, {1, 5, 5}), T(i64, {2}), T(i64, {2})}, shapes) ==
        "nnvm.ops.input_dtype");
}

TEST_CASE("transform ops: reverse_sequence") {
  std::vector<OpCheck> cases;
  // The spec's two examples, with their outputs as the spec prints them.
  NDArray x = filled(f32, {4, 4}, [](int64_t i) { return double(i); });
  NDArray xt = filled(f32, {4, 4}, [](int64_t i) { return double(i % 4 * 4 + i / 4); });
  cases.push_back({"spec example time_axis 0", "reverse_sequence", {xt, ints({4, 3, 2, 1})},
                   ops::Attrs().set_int("batch_axis", 1).set_int("time_axis", 0),
                   {values(f32, {4, 4}, {3, 6, 9, 12, 2, 5, 8, 13, 1, 4, 10, 14, 0, 7, 11, 15})}});
  cases.push_back({"spec example time_axis 1", "reverse_sequence", {x, ints({1, 2, 3, 4})},
                   ops::Attrs().set_int("batch_axis", 0).set_int("time_axis", 1),
                   {values(f32, {4, 4}, {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12})}});
  // Rank 3 both ways round, with int32 and int64 data and lengths of 0, T and beyond T or below 0.
  NDArray x3 = filled(f32, {5, 3, 2}, wavy), l3 = ints({0, 5, 2}, i32);
  cases.push_back({"rank 3 time 0 batch 1", "reverse_sequence", {x3, l3}, {}, {reverse_ref(x3, l3, 1, 0)}});
  NDArray y3 = filled(i64, {3, 6, 2}, [](int64_t i) { return double(i * 7 % 50); }), m3 = ints({9, -2, 4});
  cases.push_back({"rank 3 time 1 batch 0, lengths out of range", "reverse_sequence", {y3, m3},
                   ops::Attrs().set_int("batch_axis", 0).set_int("time_axis", 1), {reverse_ref(y3, m3, 0, 1)}});
  nnvm_test::check_ops(cases, "reverse_sequence");

  auto err = [](Dims in, Dims lens, ops::Attrs a = {}, DataType lt = i64) {
    return infer_error("reverse_sequence", {T(f32, in), T(lt, lens)}, a);
  };
  CHECK(err({4, 3}, {3}) == "(no error)");
  CHECK(err({4, 3}, {4}) == "nnvm.ops.input_shape");  // lengths must match the batch axis (1)
  CHECK(err({4}, {4}) == "nnvm.ops.input_shape");
  CHECK(err({4, 3}, {3, 1}) == "nnvm.ops.input_shape");
  CHECK(err({4, 3}, {3}, {}, f32) == "nnvm.ops.input_dtype");
  CHECK(err({4, 3}, {4}, ops::Attrs().set_int("batch_axis", 0).set_int("time_axis", 0)) == "nnvm.ops.attr");
  CHECK(err({4, 3}, {4}, ops::Attrs().set_int("batch_axis", 2)) == "nnvm.ops.attr");
}

TEST_CASE("transform ops: affine_grid") {
  std::vector<OpCheck> cases;
  auto theta_of = [](DataType t, int64_t n, int64_t r) {
    return filled(t, {n, r, r + 1}, [](int64_t i) { return double((i * 13) % 11) * 0.3 - 1.4; });
  };
  // The node tests' sizes (test_affine_grid_*), 2-D and 3-D, both align_corners; a float64 theta;
  // axes of extent 1 (align_corners puts their one point at -1, otherwise at 0).
  struct Case {
    Dims size;
    bool align;
    DataType t = f32;
  };
  for (const Case& c : std::vector<Case>{{{2, 3, 5, 6}, false},
                                         {{2, 3, 5, 6}, true},
                                         {{2, 3, 4, 5, 6}, false},
                                         {{2, 3, 4, 5, 6}, true},
                                         {{3, 1, 7, 2}, false, f64},
                                         {{1, 1, 1, 4}, true},
                                         {{1, 2, 3, 1, 2}, false}}) {
    size_t r = c.size.size() - 2;
    NDArray theta = theta_of(c.t, c.size[0], int64_t(r));
    cases.push_back({str_cat(r, "-D size ", c.size[2], "x", c.size[3], " align_corners ", c.align), "affine_grid",
                     {theta, ints(c.size)}, ops::Attrs().set_int("align_corners", c.align),
                     {affine_grid_ref(theta, c.size, c.align)}});
  }
  nnvm_test::check_ops(cases, "affine_grid");

  auto err = [](Dims theta, Dims size, DataType t = f32) {
    ops::Attrs a = ops::Attrs().set_ints("size", size);
    return infer_error("affine_grid", {T(t, theta), T(i64, {int64_t(size.size())})}, a);
  };
  CHECK(err({2, 2, 3}, {2, 3, 5, 6}) == "(no error)");
  CHECK(err({2, 2, 3}, {2, 3, 4, 5, 6}) == "nnvm.ops.input_shape");  // a 2-D theta with a 3-D size
  CHECK(err({2, 3, 4}, {2, 3, 5, 6}) == "nnvm.ops.input_shape");
  CHECK(err({1, 2, 3}, {2, 3, 5, 6}) == "nnvm.ops.input_shape");     // batch extents differ
  CHECK(err({2, 2, 3}, {2, 3, 6}) == "nnvm.ops.input_shape");
  CHECK(err({2, 2, 3}, {2, 3, 0, 6}) == "nnvm.ops.input_shape");
  CHECK(err({2, 2, 3}, {2, 3, 5, 6}, i32) == "nnvm.ops.input_dtype");
  CHECK(err({2, 6}, {2, 3, 5, 6}) == "nnvm.ops.input_shape");
}

TEST_CASE("transform ops: tensor_scatter") {
  std::vector<OpCheck> cases;
  auto add = [&](const std::string& label, const NDArray& cache, const NDArray& update, std::optional<NDArray> writes,
                 int64_t axis, bool circular) {
    ops::Attrs a = ops::Attrs().set_int("axis", axis).set_string("mode", circular ? "circular" : "linear");
    std::vector<std::optional<NDArray>> in{cache, update};
    if (writes) in.push_back(*writes);
    cases.push_back({label, "tensor_scatter", in, a,
                     {tensor_scatter_ref(cache, update, writes ? &*writes : nullptr, axis, circular)}});
  };
  auto cache = [](DataType t, Dims s) { return filled(t, std::move(s), wavy); };
  auto update = [](DataType t, Dims s) { return filled(t, std::move(s), [](int64_t i) { return double(100 + i); }); };
  // The node tests (test_tensorscatter, _3d, _circular), then circular writes that wrap, a
  // sequence axis before other axes, int32 write indices, no write_indices, and linear writes
  // that run past the end or start before it (dropped).
  add("node test linear", cache(f32, {2, 1, 4, 5}), update(f32, {2, 1, 1, 5}), ints({1, 2}), -2, false);
  add("node test 3-D", cache(f32, {3, 4, 5}), update(f32, {3, 2, 5}), ints({1, 2, 0}), -2, false);
  add("node test circular", cache(f32, {2, 1, 4, 5}), update(f32, {2, 1, 2, 5}), ints({1, 3}), -2, true);
  add("circular wrapping", cache(f32, {3, 2, 4, 3}), update(f32, {3, 2, 3, 3}), ints({3, 2, 7}), 2, true);
  add("axis 1 of 4, int32 writes", cache(i64, {2, 5, 3, 2}), update(i64, {2, 2, 3, 2}), ints({0, 4}, i32), 1, true);
  add("no write_indices", cache(f64, {2, 4, 3}), update(f64, {2, 3, 3}), std::nullopt, 1, false);
  add("linear past the end and before 0", cache(f32, {3, 4, 2}), update(f32, {3, 2, 2}), ints({3, -1, 4}), -2, false);
  add("full overwrite, last axis", cache(f32, {2, 3}), update(f32, {2, 3}), ints({0, 0}), -1, false);
  nnvm_test::check_ops(cases, "tensor_scatter");

  auto err = [](Dims c, Dims u, Dims w, ops::Attrs a = {}, DataType wt = i64, DataType ut = f32) {
    std::vector<T> in{T(f32, c), T(ut, u)};
    if (!w.empty()) in.push_back(T(wt, w));
    return infer_error("tensor_scatter", in, a);
  };
  CHECK(err({2, 4, 5}, {2, 1, 5}, {2}) == "(no error)");
  CHECK(err({2, 4, 5}, {2, 1, 5}, {}) == "(no error)");
  CHECK(err({2, 4, 5}, {2, 5, 5}, {2}) == "nnvm.ops.input_shape");  // more updates than cache positions
  CHECK(err({2, 4, 5}, {2, 1, 6}, {2}) == "nnvm.ops.input_shape");
  CHECK(err({2, 4, 5}, {2, 1}, {2}) == "nnvm.ops.input_shape");
  CHECK(err({2, 4, 5}, {2, 1, 5}, {3}) == "nnvm.ops.input_shape");
  CHECK(err({2, 4, 5}, {2, 1, 5}, {2}, {}, f32) == "nnvm.ops.input_dtype");
  CHECK(err({2, 4, 5}, {2, 1, 5}, {2}, {}, i64, f64) == "nnvm.ops.input_dtype");
  CHECK(err({2, 4, 5}, {2, 4, 5}, {2}, ops::Attrs().set_int("axis", 0)) == "nnvm.ops.attr");
  CHECK(err({2, 4, 5}, {2, 4, 5}, {2}, ops::Attrs().set_int("axis", 3)) == "nnvm.ops.attr");
  CHECK(err({2, 4, 5}, {2, 1, 5}, {2}, ops::Attrs().set_string("mode", "ring")) == "nnvm.ops.attr");
}

TEST_CASE("transform ops: max_unpool") {
  std::vector<OpCheck> cases;
  // The node tests (test_maxunpool_export_*), values and outputs as they hold them.
  NDArray i22 = values(i64, {1, 1, 2, 2}, {5, 7, 13, 15});
  ops::Attrs k2 = ops::Attrs().set_ints("kernel_shape", {2, 2}).set_ints("strides", {2, 2});
  cases.push_back({"node test without output_shape", "max_unpool", {values(f32, {1, 1, 2, 2}, {1, 2, 3, 4}), i22}, k2,
                   {values(f32, {1, 1, 4, 4}, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4})}});
  std::vector<double> with(25, 0.0);
  with[6] = 5, with[8] = 6, with[16] = 7, with[18] = 8;
  cases.push_back({"node test with output_shape", "max_unpool",
                   {values(f32, {1, 1, 2, 2}, {5, 6, 7, 8}), i22, ints({1, 1, 5, 5})}, k2,
                   {values(f32, {1, 1, 5, 5}, with)}});
  // Unpooling what a max pool made: overlapping windows (kernel 3, stride 2) with pads, where
  // one element can be the maximum of two windows; a 3-D pool; a 1-D int32 pool with an
  // output_shape larger than the unpooled extent; fewer windows than fit in a kernel.
  struct Case {
    std::string label;
    Dims in, kernel, strides, pads, output_shape;
    DataType t = f32;
  };
  for (const Case& c : std::vector<Case>{
           {"2-D overlapping windows, pads", {2, 3, 5, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {}},
           {"2-D uneven pads, output_shape", {1, 2, 6, 5}, {2, 3}, {2, 1}, {0, 1, 0, 0}, {1, 2, 7, 8}},
           {"3-D", {1, 2, 4, 4, 4}, {2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}, {}},
           {"1-D int32, output_shape", {2, 2, 9}, {3}, {3}, {0, 0}, {2, 2, 11}, i32},
           {"1-D one window, kernel 3 stride 1", {1, 2, 3}, {3}, {1}, {0, 0}, {}},
           {"1-D two windows, kernel 4 stride 1, pads", {1, 1, 4}, {4}, {1}, {1, 0}, {}},
       }) {
    NDArray x = filled(c.t, c.in, [](int64_t i) { return double((i * 29) % 31) - 15; });
    auto [v, ix] = max_pool(x, c.kernel, c.strides, c.pads);
    size_t r = c.kernel.size();
    Dims unpooled{c.in[0], c.in[1]};
    for (size_t d = 0; d < r; ++d)
      unpooled.push_back((v.shape()[2 + d] - 1) * c.strides[d] - c.pads[d] - c.pads[r + d] + c.kernel[d]);
    ops::Attrs a = window_attrs(c.strides, {}, c.pads).set_ints("kernel_shape", c.kernel);
    std::vector<std::optional<NDArray>> in{v, ix};
    if (!c.output_shape.empty()) in.push_back(ints(c.output_shape));
    cases.push_back({c.label, "max_unpool", in, a, {max_unpool_ref(v, ix, unpooled, c.output_shape)}});
  }
  nnvm_test::check_ops(cases, "max_unpool");

  auto err = [](Dims x, Dims i, ops::Attrs a, Dims output_shape = {}, DataType it = i64) {
    std::vector<T> in{T(f32, x), T(it, i)};
    if (!output_shape.empty()) {
      in.push_back(T(i64, {int64_t(output_shape.size())}));
      a.set_ints("output_shape", output_shape);
    }
    return infer_error("max_unpool", in, a);
  };
  ops::Attrs k = ops::Attrs().set_ints("kernel_shape", {2, 2}).set_ints("strides", {2, 2});
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, k) == "(no error)");
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, k, {1, 1, 5, 4}) == "(no error)");
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, k, {1, 1, 3, 4}) == "nnvm.ops.input_shape");  // smaller than unpooled
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, k, {1, 2, 4, 4}) == "nnvm.ops.input_shape");  // channels differ
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, k, {1, 1, 4}) == "nnvm.ops.input_shape");
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 3}, k) == "nnvm.ops.input_shape");
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, k, {}, f32) == "nnvm.ops.input_dtype");
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, ops::Attrs()) == "nnvm.ops.attr");  // kernel_shape is required
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, ops::Attrs().set_ints("kernel_shape", {2})) == "nnvm.ops.attr");
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, ops::Attrs(k).set_ints("pads", {0, 0, 0})) == "nnvm.ops.attr");
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, ops::Attrs(k).set_ints("strides", {int64_t(1) << 62, 2})) ==
        "nnvm.ops.input_shape");  // the unpooled extent overflows
  // The unpooled extent (2 - 1) * 1 - 2 + 1 is 0.
  CHECK(err({1, 1, 2, 2}, {1, 1, 2, 2}, ops::Attrs().set_ints("kernel_shape", {1, 1}).set_ints("pads", {1, 1, 1, 1})) ==
        "nnvm.ops.input_shape");
}

}  // namespace ops_transform_more
