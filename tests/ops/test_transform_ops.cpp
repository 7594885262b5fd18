// Layout and indexing ops (include/nnvm/ops/transform): each through the interpreter, the C JIT
// and LLVM (when built) on odd shapes and several dtypes, against references computed here with
// plain loops; then the error ids for bad axes, shapes and attributes.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>

namespace ops_transform_ops {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;

using nnvm_test::ravel;
using nnvm_test::unravel;
int64_t count(const Dims& s) { return nnvm_test::element_count(s); }

// float16 bits of a value that float16 holds exactly (a normal number or zero).
uint16_t half_bits(double v) {
  uint16_t sign = v < 0 ? 0x8000 : 0;
  v = std::fabs(v);
  if (v == 0) return sign;
  int e;
  double m = std::frexp(v, &e);
  return uint16_t(sign | ((e + 14) << 10) | uint16_t(std::lround((2 * m - 1) * 1024)));
}

// Writes `v` into element i of any dtype (floats to integers truncate, as C does).
void set(NDArray& a, int64_t i, double v) {
  void* p = a.raw();
  DataType t = a.dtype();
  if (t == dtype::float32) static_cast<float*>(p)[i] = float(v);
  else if (t == dtype::float64) static_cast<double*>(p)[i] = v;
  else if (t == dtype::int64) static_cast<int64_t*>(p)[i] = int64_t(v);
  else if (t == dtype::int32) static_cast<int32_t*>(p)[i] = int32_t(v);
  else if (t == dtype::int8) static_cast<int8_t*>(p)[i] = int8_t(v);
  else if (t == dtype::uint8) static_cast<uint8_t*>(p)[i] = uint8_t(v);
  else if (t == dtype::boolean) static_cast<uint8_t*>(p)[i] = v != 0;
  else if (t == dtype::float16) static_cast<uint16_t*>(p)[i] = half_bits(v);
  else throw std::runtime_error("set: no writer for " + t.str());
}
double get(const NDArray& a, int64_t i) { return nnvm_test::detail::element(a, i); }

// Distinct, exactly representable values: quarters for floats, small integers for integers,
// a pattern for bool. Unsigned and bool stay non-negative.
NDArray iota(DataType t, Dims s, int salt = 0) {
  NDArray a(t, std::move(s));
  for (int64_t i = 0; i < a.numel(); ++i) {
    int64_t k = (i * 37 + salt * 11) % 101;
    double v = t.is_bool() ? double(k % 3 == 0) : t.is_uint() ? double(k) : t.is_float() ? (k - 50) * 0.25 : double(k - 50);
    set(a, i, v);
  }
  return a;
}
NDArray ints(Dims s, std::vector<int64_t> v, DataType t = dtype::int64) {
  NDArray a(t, std::move(s));
  for (size_t i = 0; i < v.size(); ++i)
    if (t == dtype::int64) a.data<int64_t>()[i] = v[i];  // exact beyond 2^53 (INT64_MAX ends)
    else set(a, int64_t(i), double(v[i]));
  return a;
}
NDArray vec(std::vector<int64_t> v) { return ints({int64_t(v.size())}, v); }
NDArray scalar(DataType t, double v) {
  NDArray a(t, {});
  set(a, 0, v);
  return a;
}

// The reference for data movement: output element o copies element map(o's index) of `in`, or
// takes `fill` where map returns -1. Any dtype (elements are copied as bytes).
template <class F>
NDArray take(const NDArray& in, const Dims& out_shape, F&& map, double fill = 0) {
  NDArray out(in.dtype(), out_shape);
  size_t w = size_t(in.dtype().bytes());
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t src = map(unravel(o, out_shape));
    if (src < 0) set(out, o, fill);
    else std::memcpy(static_cast<std::byte*>(out.raw()) + size_t(o) * w,
                     static_cast<const std::byte*>(in.raw()) + size_t(src) * w, w);
  }
  return out;
}

// Element-wise reference of any dtype pair.
template <class F>
NDArray map_values(const NDArray& in, DataType to, F&& f) {
  NDArray out(to, in.shape());
  for (int64_t i = 0; i < in.numel(); ++i) set(out, i, f(get(in, i)));
  return out;
}

const DataType f32 = dtype::float32, i64 = dtype::int64, i32 = dtype::int32;

}  // namespace

TEST_CASE("transform ops: reshape, flatten, squeeze, unsqueeze, transpose") {
  std::vector<OpCheck> cases;
  // Reshapes keep row-major order: output element o is input element o.
  auto same_order = [](const NDArray& x, Dims out) { return take(x, out, [&](const Dims& i) { return ravel(i, out); }); };
  struct R {
    DataType t;
    Dims in;
    std::vector<int64_t> spec;
    Dims out;
    int64_t allowzero = 0;
  };
  for (auto& r : std::vector<R>{{f32, {3, 5, 7}, {7, -1, 3}, {7, 5, 3}},
                                {i64, {3, 5, 7}, {0, -1}, {3, 35}},
                                {dtype::boolean, {3, 5, 7}, {-1}, {105}},
                                {dtype::float16, {5, 21}, {0, 3, 7}, {5, 3, 7}},  // 0 copies the input extent
                                {i32, {3, 5, 7}, {15, 7}, {15, 7}, 1},
                                {f32, {}, {1, 1}, {1, 1}}}) {
    NDArray x = iota(r.t, r.in);
    ops::Attrs a;
    if (r.allowzero) a.set_int("allowzero", 1);
    cases.push_back({str_cat("reshape to ", r.out.size(), "-d ", r.t), "reshape", {x, vec(r.spec)}, a, {same_order(x, r.out)}});
  }
  NDArray x = iota(f32, {3, 5, 7});
  for (auto [axis, rows] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {-1, 15}, {-3, 1}, {3, 105}, {1, 3}})
    cases.push_back({str_cat("flatten axis ", axis), "flatten", {x}, ops::Attrs().set_int("axis", axis),
                     {same_order(x, {rows, 105 / rows})}});
  NDArray xb = iota(dtype::boolean, {3, 5, 7});
  cases.push_back({"flatten bool default", "flatten", {xb}, {}, {same_order(xb, {3, 35})}});

  NDArray s = iota(i32, {3, 1, 5, 1});
  cases.push_back({"squeeze all", "squeeze", {s}, {}, {same_order(s, {3, 5})}});
  cases.push_back({"squeeze axis -1", "squeeze", {s, vec({-1})}, {}, {same_order(s, {3, 1, 5})}});
  NDArray one = iota(f32, {1, 1});
  cases.push_back({"squeeze to scalar", "squeeze", {one}, {}, {same_order(one, {})}});
  NDArray u = iota(f32, {3, 5});
  cases.push_back({"unsqueeze 0 and -1", "unsqueeze", {u, vec({0, -1})}, {}, {same_order(u, {1, 3, 5, 1})}});
  cases.push_back({"unsqueeze middle", "unsqueeze", {u, vec({1})}, {}, {same_order(u, {3, 1, 5})}});

  // transpose: output index i reads input index j with j[perm[d]] = i[d].
  auto transposed = [](const NDArray& in, std::vector<int64_t> perm) {
    Dims out;
    for (int64_t p : perm) out.push_back(in.shape()[size_t(p)]);
    return take(in, out, [&](const Dims& i) {
      Dims j(i.size());
      for (size_t d = 0; d < i.size(); ++d) j[size_t(perm[d])] = i[d];
      return ravel(j, in.shape());
    });
  };
  NDArray t3 = iota(i32, {3, 5, 7}), t4 = iota(dtype::float64, {2, 3, 5, 7});
  cases.push_back({"transpose default", "transpose", {t3}, {}, {transposed(t3, {2, 1, 0})}});
  cases.push_back({"transpose 1,2,0", "transpose", {t3}, ops::Attrs().set_ints("perm", {1, 2, 0}), {transposed(t3, {1, 2, 0})}});
  cases.push_back({"transpose nchw->nhwc", "transpose", {t4}, ops::Attrs().set_ints("perm", {0, 2, 3, 1}),
                   {transposed(t4, {0, 2, 3, 1})}});
  nnvm_test::check_ops(cases, "transform_reshape");

  // Symbolic extents flow through reshape's 0 and -1 and through flatten.
  ir::Var n("n");
  auto ty = ops::infer_types(ops::get_op("reshape"), {{f32, {ir::Expr(n), ir::Expr(int64_t(6)), ir::Expr(int64_t(5))}}, {i64, {2}}},
                             ops::Attrs().set_ints("shape", {0, -1}));
  REQUIRE(ty[0].shape.size() == 2);
  CHECK(ir::deep_equal(ty[0].shape[0], ir::Expr(n)));
  CHECK(ir::is_const_int(ty[0].shape[1], 30));
  ty = ops::infer_types(ops::get_op("reshape"), {{f32, {ir::Expr(n), ir::Expr(int64_t(4)), ir::Expr(int64_t(6))}}, {i64, {3}}},
                        ops::Attrs().set_ints("shape", {0, -1, 3}));
  CHECK(ir::deep_equal(ty[0].shape[0], ir::Expr(n)));
  CHECK(ir::is_const_int(ty[0].shape[1], 8));
  ty = ops::infer_types(ops::get_op("flatten"), {{f32, {ir::Expr(n), ir::Expr(int64_t(4)), ir::Expr(int64_t(6))}}});
  CHECK(ir::deep_equal(ty[0].shape[0], ir::Expr(n)));
  CHECK(ir::is_const_int(ty[0].shape[1], 24));
}

TEST_CASE("transform ops: concat, split, slice") {
  std::vector<OpCheck> cases;
  // concat along `axis`: output position p reads input k at p[axis] - offset_k.
  auto concatenated = [](const std::vector<NDArray>& xs, size_t axis) {
    Dims out = xs[0].shape();
    out[axis] = 0;
    for (auto& x : xs) out[axis] += x.shape()[axis];
    NDArray want(xs[0].dtype(), out);
    for (int64_t o = 0; o < want.numel(); ++o) {
      Dims i = unravel(o, out);
      size_t k = 0;
      while (i[axis] >= xs[k].shape()[axis]) i[axis] -= xs[k++].shape()[axis];
      set(want, o, get(xs[k], ravel(i, xs[k].shape())));
    }
    return want;
  };
  std::vector<NDArray> c3{iota(f32, {3, 2, 7}, 1), iota(f32, {3, 5, 7}, 2), iota(f32, {3, 1, 7}, 3)};
  cases.push_back({"concat 3 inputs axis -2", "concat", {c3[0], c3[1], c3[2]}, ops::Attrs().set_int("axis", -2),
                   {concatenated(c3, 1)}});
  std::vector<NDArray> c2{iota(i64, {2, 3}, 4), iota(i64, {5, 3}, 5)};
  cases.push_back({"concat int64 axis 0", "concat", {c2[0], c2[1]}, ops::Attrs().set_int("axis", 0), {concatenated(c2, 0)}});
  cases.push_back({"concat one input", "concat", {c2[0]}, ops::Attrs().set_int("axis", 1), {c2[0]}});
  // DenseNet-121 joins 25 inputs (every earlier layer of its third block).
  std::vector<NDArray> c25;
  for (int k = 0; k < 25; ++k) c25.push_back(iota(i32, {2, 1 + k % 3}, k));
  std::vector<std::optional<NDArray>> in25(c25.begin(), c25.end());
  cases.push_back({"concat 25 inputs", "concat", in25, ops::Attrs().set_int("axis", 1), {concatenated(c25, 1)}});

  // split: piece k along `axis` starts at the sum of the earlier sizes.
  auto pieces = [](const NDArray& x, size_t axis, std::vector<int64_t> sizes) {
    std::vector<NDArray> out;
    int64_t begin = 0;
    for (int64_t sz : sizes) {
      Dims s = x.shape();
      s[axis] = sz;
      out.push_back(take(x, s, [&](Dims i) {
        i[axis] += begin;
        return ravel(i, x.shape());
      }));
      begin += sz;
    }
    return out;
  };
  NDArray sx = iota(f32, {3, 10, 7});
  cases.push_back({"split sizes axis 1", "split", {sx, vec({2, 5, 3})}, ops::Attrs().set_int("axis", 1), pieces(sx, 1, {2, 5, 3})});
  cases.push_back({"split num_outputs uneven axis -1", "split", {sx}, ops::Attrs().set_int("axis", -1).set_int("num_outputs", 3),
                   pieces(sx, 2, {3, 3, 1})});
  NDArray sy = iota(dtype::boolean, {5, 2});
  cases.push_back({"split num_outputs default axis", "split", {sy}, ops::Attrs().set_int("num_outputs", 5),
                   pieces(sy, 0, {1, 1, 1, 1, 1})});

  // slice: the ONNX clamping rules written out per axis.
  auto sliced = [](const NDArray& x, std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                   std::vector<int64_t> steps) {
    size_t r = x.shape().size();
    Dims first(r, 0), step(r, 1), out = x.shape();
    for (size_t k = 0; k < starts.size(); ++k) {
      size_t a = size_t(axes[k] < 0 ? axes[k] + int64_t(r) : axes[k]);
      int64_t n = x.shape()[a], st = steps[k], b = starts[k], e = ends[k];
      if (b < 0) b += n;
      if (e < 0) e += n;
      b = st > 0 ? std::clamp<int64_t>(b, 0, n) : std::clamp<int64_t>(b, 0, n - 1);
      e = st > 0 ? std::clamp<int64_t>(e, 0, n) : std::clamp<int64_t>(e, -1, n - 1);
      int64_t len = 0;
      for (int64_t i = b; st > 0 ? i < e : i > e; i += st) ++len;
      first[a] = b, step[a] = st, out[a] = len;
    }
    return take(x, out, [&](Dims i) {
      for (size_t d = 0; d < r; ++d) i[d] = first[d] + i[d] * step[d];
      return ravel(i, x.shape());
    });
  };
  NDArray x = iota(f32, {5, 7, 9});
  const int64_t big = INT64_MAX, small = INT64_MIN;
  cases.push_back({"slice axes 0,2 end past bounds", "slice", {x, vec({1, -4}), vec({4, 100}), vec({0, 2})}, {},
                   {sliced(x, {1, -4}, {4, 100}, {0, 2}, {1, 1})}});
  cases.push_back({"slice default axes with steps", "slice", {x, vec({0, 1}), vec({5, big}), std::nullopt, vec({2, 3})}, {},
                   {sliced(x, {0, 1}, {5, big}, {0, 1}, {2, 3})}});
  cases.push_back({"slice negative step to the start", "slice", {x, vec({-1}), vec({small}), vec({-2}), vec({-2})}, {},
                   {sliced(x, {-1}, {small}, {-2}, {-2})}});
  cases.push_back({"slice negative step clamped start", "slice", {x, vec({100, 7}), vec({1, -100}), vec({2, 0}), vec({-3, -1})},
                   {}, {sliced(x, {100, 7}, {1, -100}, {2, 0}, {-3, -1})}});
  NDArray xi = iota(i32, {5, 7});
  cases.push_back({"slice int32 start before 0", "slice", {xi, vec({-100}), vec({3}), vec({-1})}, {},
                   {sliced(xi, {-100}, {3}, {-1}, {1})}});
  nnvm_test::check_ops(cases, "transform_join");
}

TEST_CASE("transform ops: pad, expand, tile, depth_to_space, space_to_depth, trilu") {
  std::vector<OpCheck> cases;
  // pad: index j = i - begin, mapped by the mode (numpy's rules) or -1 for the constant.
  auto padded = [](const NDArray& x, const std::string& mode, std::vector<int64_t> pads, std::vector<int64_t> axes, double c) {
    size_t r = x.shape().size();
    Dims before(r, 0), out = x.shape();
    for (size_t k = 0; k < axes.size(); ++k) {
      size_t a = size_t(axes[k] < 0 ? axes[k] + int64_t(r) : axes[k]);
      before[a] = pads[k];
      out[a] += pads[k] + pads[k + axes.size()];
    }
    return take(x, out, [&](Dims i) -> int64_t {
      for (size_t d = 0; d < r; ++d) {
        int64_t n = x.shape()[d], j = i[d] - before[d];
        if (mode == "constant" && (j < 0 || j >= n)) return -1;
        if (mode == "edge") j = std::clamp<int64_t>(j, 0, n - 1);
        while (mode == "wrap" && j < 0) j += n;
        if (mode == "wrap") j %= n;
        while (mode == "reflect" && (j < 0 || j >= n)) j = j < 0 ? -j : 2 * (n - 1) - j;
        i[d] = j;
      }
      return ravel(i, x.shape());
    }, c);
  };
  NDArray p = iota(f32, {3, 5});
  for (std::string mode : {"constant", "edge", "reflect", "wrap"})
    cases.push_back({"pad " + mode, "pad", {p, vec({1, 2, 2, 1})}, ops::Attrs().set_string("mode", mode),
                     {padded(p, mode, {1, 2, 2, 1}, {0, 1}, 0)}});
  cases.push_back({"pad constant value, axis -1 with crop", "pad", {p, vec({3, -1}), scalar(f32, 2.5), vec({-1})}, {},
                   {padded(p, "constant", {3, -1}, {-1}, 2.5)}});
  cases.push_back({"pad reflect wider than the axis", "pad", {p, vec({0, 7, 0, 9})}, ops::Attrs().set_string("mode", "reflect"),
                   {padded(p, "reflect", {0, 7, 0, 9}, {0, 1}, 0)}});
  cases.push_back({"pad wrap wider than the axis", "pad", {p, vec({4, 0, 0, 6})}, ops::Attrs().set_string("mode", "wrap"),
                   {padded(p, "wrap", {4, 0, 0, 6}, {0, 1}, 0)}});
  NDArray pi = iota(i32, {2, 3, 5});
  cases.push_back({"pad int32 edge, axes 1 only", "pad", {pi, vec({2, 3}), std::nullopt, vec({1})},
                   ops::Attrs().set_string("mode", "edge"), {padded(pi, "edge", {2, 3}, {1}, 0)}});
  cases.push_back({"pad int32 constant -7", "pad", {pi, vec({0, 1, 1, 1, 0, 2}), scalar(i32, -7)}, {},
                   {padded(pi, "constant", {0, 1, 1, 1, 0, 2}, {0, 1, 2}, -7)}});

  // expand and tile: output index maps back by broadcasting (extent 1 reads 0) or modulo.
  auto broadcast_to = [](const NDArray& x, Dims out) {
    return take(x, out, [&](const Dims& i) {
      Dims j;
      size_t skip = out.size() - x.shape().size();
      for (size_t d = 0; d < x.shape().size(); ++d) j.push_back(x.shape()[d] == 1 ? 0 : i[skip + d]);
      return ravel(j, x.shape());
    });
  };
  NDArray e1 = iota(f32, {3, 1}), e2 = iota(i64, {1, 5});
  cases.push_back({"expand to higher rank", "expand", {e1, vec({2, 1, 5})}, {}, {broadcast_to(e1, {2, 3, 5})}});
  cases.push_back({"expand both ways", "expand", {e2, vec({3, 1})}, {}, {broadcast_to(e2, {3, 5})}});
  NDArray tl = iota(dtype::uint8, {3, 2});
  cases.push_back({"tile", "tile", {tl, vec({2, 3})}, {}, {take(tl, {6, 6}, [&](const Dims& i) {
                     return ravel({i[0] % 3, i[1] % 2}, tl.shape());
                   })}});

  // depth_to_space / space_to_depth: ONNX's reshape-transpose-reshape written as index maps.
  NDArray d = iota(f32, {2, 8, 3, 5});
  int64_t b = 2, co = 2;
  for (std::string mode : {"DCR", "CRD"})
    cases.push_back({"depth_to_space " + mode, "depth_to_space", {d}, ops::Attrs().set_int("blocksize", b).set_string("mode", mode),
                     {take(d, {2, co, 6, 10}, [&](const Dims& i) {
                       int64_t bh = i[2] % b, bw = i[3] % b;
                       int64_t c = mode == "DCR" ? (bh * b + bw) * co + i[1] : i[1] * b * b + bh * b + bw;
                       return ravel({i[0], c, i[2] / b, i[3] / b}, d.shape());
                     })}});
  NDArray sd = iota(i32, {2, 3, 4, 6});
  cases.push_back({"space_to_depth", "space_to_depth", {sd}, ops::Attrs().set_int("blocksize", 2),
                   {take(sd, {2, 12, 2, 3}, [&](const Dims& i) {
                     int64_t blk = i[1] / 3, c = i[1] % 3;
                     return ravel({i[0], c, i[2] * 2 + blk / 2, i[3] * 2 + blk % 2}, sd.shape());
                   })}});

  // trilu: keep j - i >= k (upper) or <= k (lower), zero elsewhere.
  NDArray tr = iota(f32, {3, 5, 7});
  struct T {
    bool upper;
    std::optional<int64_t> k;
  };
  for (auto [upper, k] : std::vector<T>{{true, std::nullopt}, {true, -1}, {false, 2}, {false, -10}, {true, 6}}) {
    std::vector<std::optional<NDArray>> in{tr};
    if (k) in.push_back(scalar(i64, double(*k)));
    int64_t kk = k.value_or(0);
    cases.push_back({str_cat("trilu upper=", upper, " k=", kk), "trilu", in, ops::Attrs().set_int("upper", upper),
                     {take(tr, tr.shape(), [&](const Dims& i) {
                       int64_t diag = i[2] - i[1];
                       return (upper ? diag >= kk : diag <= kk) ? ravel(i, tr.shape()) : -1;
                     })}});
  }
  nnvm_test::check_ops(cases, "transform_pad");
}

TEST_CASE("transform ops: gather, gather_elements, gather_nd") {
  std::vector<OpCheck> cases;
  auto wrap_clamp = [](int64_t i, int64_t n) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n - 1); };
  NDArray g = iota(f32, {5, 7, 3});
  NDArray gi = ints({2, 4}, {0, 6, -1, -7, 3, 2, 100, -100});  // the last two out of range: clamped
  cases.push_back({"gather axis 1, out-of-range clamps", "gather", {g, gi}, ops::Attrs().set_int("axis", 1),
                   {take(g, {5, 2, 4, 3}, [&](const Dims& i) {
                     int64_t j = wrap_clamp(int64_t(get(gi, ravel({i[1], i[2]}, {2, 4}))), 7);
                     return ravel({i[0], j, i[3]}, g.shape());
                   })}});
  NDArray gs = scalar(i32, -2);
  cases.push_back({"gather int32 scalar index axis -1", "gather", {g, gs}, ops::Attrs().set_int("axis", -1),
                   {take(g, {5, 7}, [&](const Dims& i) { return ravel({i[0], i[1], 1}, g.shape()); })}});
  NDArray gb = iota(dtype::boolean, {6});
  NDArray gbi = ints({3, 2}, {5, 0, -1, 2, 2, 3}, i32);
  cases.push_back({"gather 1-d bool data", "gather", {gb, gbi}, {},
                   {take(gb, {3, 2}, [&](const Dims& i) { return wrap_clamp(int64_t(get(gbi, ravel(i, {3, 2}))), 6); })}});

  NDArray ge = iota(f32, {4, 6});
  NDArray gei = ints({3, 5}, {0, 5, -1, 2, 3, -6, 1, 4, 4, 0, 2, 2, -3, 5, 1});
  cases.push_back({"gather_elements axis 1, smaller indices", "gather_elements", {ge, gei}, ops::Attrs().set_int("axis", -1),
                   {take(ge, {3, 5}, [&](const Dims& i) {
                     return ravel({i[0], wrap_clamp(int64_t(get(gei, ravel(i, {3, 5}))), 6)}, ge.shape());
                   })}});
  NDArray gei0 = ints({2, 6}, {0, 3, -1, 2, 1, 1, 3, 3, 0, -4, 2, 9}, i32);
  cases.push_back({"gather_elements axis 0", "gather_elements", {ge, gei0}, {},
                   {take(ge, {2, 6}, [&](const Dims& i) {
                     return ravel({wrap_clamp(int64_t(get(gei0, ravel(i, {2, 6}))), 4), i[1]}, ge.shape());
                   })}});

  NDArray gn = iota(i32, {3, 4, 5});
  NDArray gni = ints({2, 2}, {1, 3, -1, 0});
  cases.push_back({"gather_nd K=2", "gather_nd", {gn, gni}, {},
                   {take(gn, {2, 5}, [&](const Dims& i) {
                     return ravel({wrap_clamp(int64_t(get(gni, i[0] * 2)), 3), wrap_clamp(int64_t(get(gni, i[0] * 2 + 1)), 4), i[1]},
                                  gn.shape());
                   })}});
  NDArray gnb = ints({3, 2, 1}, {0, 3, 2, 1, -1, 1});
  cases.push_back({"gather_nd batch_dims 1", "gather_nd", {gn, gnb}, ops::Attrs().set_int("batch_dims", 1),
                   {take(gn, {3, 2, 5}, [&](const Dims& i) {
                     return ravel({i[0], wrap_clamp(int64_t(get(gnb, ravel({i[0], i[1], 0}, {3, 2, 1}))), 4), i[2]}, gn.shape());
                   })}});
  NDArray gnf = ints({3}, {2, -1, 4}, i32);
  cases.push_back({"gather_nd full coordinates", "gather_nd", {gn, gnf}, {},
                   {take(gn, {}, [&](const Dims&) { return ravel({2, 3, 4}, gn.shape()); })}});
  nnvm_test::check_ops(cases, "transform_gather");
}

TEST_CASE("transform ops: scatter_elements and scatter_nd with every reduction") {
  std::vector<OpCheck> cases;
  auto combine = [](const std::string& red, double acc, double u) {
    if (red == "add") return acc + u;
    if (red == "mul") return acc * u;
    if (red == "max") return std::max(acc, u);
    if (red == "min") return std::min(acc, u);
    return u;  // none: the last update wins
  };
  NDArray data = iota(f32, {4, 6});
  // Duplicate targets in every row; -1 counts from the end.
  NDArray idx = ints({3, 4}, {0, 2, 2, -1, 5, 5, 5, 0, 1, 3, -6, 1});
  NDArray upd = iota(f32, {3, 4}, 7);
  for (std::string red : {"none", "add", "mul", "max", "min"}) {
    NDArray want = data;
    for (int64_t q = 0; q < 12; ++q) {
      Dims i = unravel(q, {3, 4});
      int64_t j = int64_t(get(idx, q));
      int64_t o = ravel({i[0], j < 0 ? j + 6 : j}, {4, 6});
      set(want, o, combine(red, get(want, o), get(upd, q)));
    }
    cases.push_back({"scatter_elements axis 1 " + red, "scatter_elements", {data, idx, upd},
                     ops::Attrs().set_int("axis", -1).set_string("reduction", red), {want}});
  }
  NDArray di = iota(i32, {5, 3});
  NDArray ii = ints({2, 3}, {4, 0, -1, 4, 1, 2}, i32), ui = iota(i32, {2, 3}, 3);
  NDArray wi = di;
  for (int64_t q = 0; q < 6; ++q) {
    int64_t j = int64_t(get(ii, q));
    set(wi, ravel({j < 0 ? j + 5 : j, q % 3}, {5, 3}), get(ui, q));
  }
  cases.push_back({"scatter_elements axis 0 int32", "scatter_elements", {di, ii, ui}, {}, {wi}});

  NDArray nd = iota(f32, {4, 5, 3});
  NDArray nidx = ints({3, 1}, {1, -1, 1});  // row 1 twice
  NDArray nupd = iota(f32, {3, 5, 3}, 5);
  for (std::string red : {"none", "add", "mul", "max", "min"}) {
    NDArray want = nd;
    for (int64_t q = 0; q < nupd.numel(); ++q) {
      Dims i = unravel(q, nupd.shape());
      int64_t r = int64_t(get(nidx, i[0]));
      int64_t o = ravel({r < 0 ? r + 4 : r, i[1], i[2]}, nd.shape());
      set(want, o, combine(red, get(want, o), get(nupd, q)));
    }
    cases.push_back({"scatter_nd rows " + red, "scatter_nd", {nd, nidx, nupd}, ops::Attrs().set_string("reduction", red), {want}});
  }
  NDArray eidx = ints({2, 3}, {0, 4, 2, 3, 1, 0}), eupd = iota(f32, {2}, 9);
  NDArray ew = nd;
  set(ew, ravel({0, 4, 2}, nd.shape()), get(eupd, 0));
  set(ew, ravel({3, 1, 0}, nd.shape()), get(eupd, 1));
  cases.push_back({"scatter_nd elements", "scatter_nd", {nd, eidx, eupd}, {}, {ew}});
  NDArray one_idx = ints({2}, {2, 3}), one_upd = iota(f32, {3}, 4);
  NDArray ow = nd;
  for (int64_t c = 0; c < 3; ++c) set(ow, ravel({2, 3, c}, nd.shape()), get(one_upd, c));
  cases.push_back({"scatter_nd one index row", "scatter_nd", {nd, one_idx, one_upd}, {}, {ow}});
  nnvm_test::check_ops(cases, "transform_scatter");
}

TEST_CASE("transform ops: cast, cast_like, shape, size, constant_of_shape, range, one_hot, eye_like") {
  std::vector<OpCheck> cases;
  NDArray xf(f32, {3, 5, 7});
  for (int64_t i = 0; i < xf.numel(); ++i) set(xf, i, (i % 2 ? -1 : 1) * ((i * 7) % 23) * 0.75);  // fractions, zeros
  struct C {
    const NDArray* in;
    DataType to;
  };
  NDArray xi = iota(i32, {3, 5}), xb = iota(dtype::boolean, {3, 5}), xu = iota(dtype::uint8, {3, 5});
  NDArray xh = iota(dtype::float16, {3, 5});
  for (auto [in, to] : std::vector<C>{{&xf, i32}, {&xf, i64}, {&xf, dtype::boolean}, {&xf, dtype::float64}, {&xf, dtype::float16},
                                      {&xb, f32}, {&xb, i32}, {&xi, dtype::float64}, {&xi, dtype::boolean}, {&xi, dtype::int8},
                                      {&xu, f32}, {&xh, f32}, {&xh, i32}}) {
    auto ref = [to](double v) { return to.is_bool() ? double(v != 0) : to.is_float() ? v : std::trunc(v); };
    cases.push_back({str_cat("cast ", in->dtype(), " to ", to), "cast", {*in}, ops::Attrs().set_dtype("to", to),
                     {map_values(*in, to, ref)}});
  }
  cases.push_back({"cast_like float to int64", "cast_like", {xf, ints({1}, {0})}, {},
                   {map_values(xf, i64, [](double v) { return std::trunc(v); })}});

  cases.push_back({"shape", "shape", {xf}, {}, {vec({3, 5, 7})}});
  cases.push_back({"shape start 1", "shape", {xf}, ops::Attrs().set_int("start", 1), {vec({5, 7})}});
  cases.push_back({"shape end -1", "shape", {xf}, ops::Attrs().set_int("end", -1), {vec({3, 5})}});
  cases.push_back({"shape clamped", "shape", {xf}, ops::Attrs().set_int("start", -10).set_int("end", 100), {vec({3, 5, 7})}});
  cases.push_back({"size", "size", {xi}, {}, {scalar(i64, 15)}});

  auto filled = [](DataType t, Dims s, double v) {
    NDArray a(t, std::move(s));
    for (int64_t i = 0; i < a.numel(); ++i) set(a, i, v);
    return a;
  };
  cases.push_back({"constant_of_shape default", "constant_of_shape", {vec({3, 4})}, {}, {filled(f32, {3, 4}, 0)}});
  cases.push_back({"constant_of_shape float", "constant_of_shape", {vec({2, 3, 5})},
                   ops::Attrs().set_floats("value", {2.5}).set_dtype("value_dtype", f32), {filled(f32, {2, 3, 5}, 2.5)}});
  cases.push_back({"constant_of_shape int64", "constant_of_shape", {vec({7})},
                   ops::Attrs().set_ints("value", {-9}).set_dtype("value_dtype", i64), {filled(i64, {7}, -9)}});

  auto ranged = [](DataType t, double start, double limit, double delta) {
    int64_t n = int64_t(std::ceil((limit - start) / delta));
    NDArray a(t, {n});
    for (int64_t i = 0; i < n; ++i) set(a, i, start + double(i) * delta);
    return a;
  };
  cases.push_back({"range float", "range", {scalar(f32, 1), scalar(f32, 7.3), scalar(f32, 0.5)}, {}, {ranged(f32, 1, 7.3, 0.5)}});
  cases.push_back({"range int32 negative delta", "range", {scalar(i32, 10), scalar(i32, -2), scalar(i32, -3)}, {},
                   {ranged(i32, 10, -2, -3)}});
  cases.push_back({"range int64", "range", {scalar(i64, -4), scalar(i64, 9), scalar(i64, 2)}, {}, {ranged(i64, -4, 9, 2)}});

  // one_hot: on where the new axis's position equals the (wrapped) index; out of range is all off.
  NDArray oi = ints({3, 4}, {0, 4, -1, -5, 5, -6, 2, 3, 1, 1, 0, 2});
  NDArray ov(f32, {2});
  set(ov, 0, 0.5), set(ov, 1, 3);
  for (int64_t axis : {-1, 0, 1}) {
    Dims out{3, 4};
    size_t a = size_t(axis < 0 ? axis + 3 : axis);
    out.insert(out.begin() + int64_t(a), 5);
    NDArray want(f32, out);
    for (int64_t o = 0; o < want.numel(); ++o) {
      Dims i = unravel(o, out);
      int64_t pos = i[a];
      i.erase(i.begin() + int64_t(a));
      int64_t v = int64_t(get(oi, ravel(i, {3, 4})));
      set(want, o, (v < 0 ? v + 5 : v) == pos ? 3 : 0.5);
    }
    cases.push_back({str_cat("one_hot axis ", axis), "one_hot", {oi, scalar(f32, 5), ov}, ops::Attrs().set_int("axis", axis), {want}});
  }

  for (auto [k, t] : std::vector<std::pair<int64_t, DataType>>{{1, i32}, {-2, f32}, {0, dtype::boolean}}) {
    NDArray shape_src = iota(f32, {4, 6});
    NDArray want(t, {4, 6});
    for (int64_t o = 0; o < 24; ++o) set(want, o, o % 6 - o / 6 == k ? 1 : 0);
    ops::Attrs a = ops::Attrs().set_int("k", k);
    if (t != f32) a.set_dtype("dtype", t);
    cases.push_back({str_cat("eye_like k=", k, " ", t), "eye_like", {shape_src}, a, {want}});
  }
  nnvm_test::check_ops(cases, "transform_misc");
}

TEST_CASE("transform ops: importer names") {
  for (auto [onnx, name] : std::vector<std::pair<std::string, std::string>>{
           {"onnx:Reshape", "reshape"}, {"onnx:Flatten", "flatten"}, {"onnx:Transpose", "transpose"},
           {"onnx:Concat", "concat"}, {"onnx:Split", "split"}, {"onnx:Slice", "slice"}, {"onnx:Pad", "pad"},
           {"onnx:Gather", "gather"}, {"onnx:GatherElements", "gather_elements"}, {"onnx:GatherND", "gather_nd"},
           {"onnx:ScatterElements", "scatter_elements"}, {"onnx:Scatter", "scatter_elements"},
           {"onnx:ScatterND", "scatter_nd"}, {"onnx:Expand", "expand"}, {"onnx:Squeeze", "squeeze"},
           {"onnx:Unsqueeze", "unsqueeze"}, {"onnx:Tile", "tile"}, {"onnx:DepthToSpace", "depth_to_space"},
           {"onnx:SpaceToDepth", "space_to_depth"}, {"onnx:Trilu", "trilu"}, {"onnx:Cast", "cast"},
           {"onnx:CastLike", "cast_like"}, {"onnx:Shape", "shape"}, {"onnx:Size", "size"},
           {"onnx:ConstantOfShape", "constant_of_shape"}, {"onnx:Range", "range"}, {"onnx:OneHot", "one_hot"},
           {"onnx:EyeLike", "eye_like"}})
    CHECK(ops::get_op_by_importer_name(onnx).name == name);
}

TEST_CASE("transform ops: error ids for bad axes, shapes, dtypes and attributes") {
  using ops::Attrs;
  ops::TensorType x{f32, {3, 5, 7}}, shp{i64, {2}}, idx{i64, {2}};
  const std::string shape_e = "nnvm.ops.input_shape", attr_e = "nnvm.ops.attr", dtype_e = "nnvm.ops.input_dtype";
  CHECK(infer_error("reshape", {x, shp}, Attrs().set_ints("shape", {4, 25})) == shape_e);
  CHECK(infer_error("reshape", {x, shp}, Attrs().set_ints("shape", {-1, -1})) == shape_e);
  CHECK(infer_error("reshape", {x, shp}, Attrs().set_ints("shape", {4, -1})) == shape_e);  // 105 is not a multiple of 4
  CHECK(infer_error("reshape", {x, shp}, Attrs().set_ints("shape", {0, 0, 0, 0})) == shape_e);
  CHECK(infer_error("reshape", {x, shp}, Attrs().set_ints("shape", {105, 0}).set_int("allowzero", 1)) == shape_e);
  // The shape of a scalar, or an empty start..end: an empty tensor, which nnvm cannot make.
  ops::TensorType scalar{f32, std::vector<int64_t>{}};
  CHECK(infer_error("shape", {scalar}, Attrs()) == shape_e);
  CHECK(infer_error("shape", {x}, Attrs().set_int("start", 2).set_int("end", 1)) == shape_e);
  CHECK(infer_error("flatten", {x}, Attrs().set_int("axis", 4)) == attr_e);
  CHECK(infer_error("flatten", {x}, Attrs().set_int("axis", -4)) == attr_e);
  CHECK(infer_error("transpose", {x}, Attrs().set_ints("perm", {0, 0, 1})) == attr_e);
  CHECK(infer_error("transpose", {x}, Attrs().set_ints("perm", {0, 1})) == attr_e);
  CHECK(infer_error("squeeze", {x, idx}, Attrs().set_ints("axes", {1})) == shape_e);
  CHECK(infer_error("squeeze", {x, idx}, Attrs().set_ints("axes", {3})) == attr_e);
  CHECK(infer_error("unsqueeze", {x, idx}, Attrs().set_ints("axes", {0, -5})) == attr_e);  // the same axis twice
  CHECK(infer_error("concat", {x, {f32, {3, 4, 7}}}, Attrs().set_int("axis", 2)) == shape_e);
  CHECK(infer_error("concat", {x, {i32, {3, 5, 7}}}, Attrs().set_int("axis", 0)) == dtype_e);
  CHECK(infer_error("concat", {x, x}, Attrs().set_int("axis", -4)) == attr_e);
  CHECK(infer_error("split", {x, {i64, {2}}}, Attrs().set_int("axis", 1).set_ints("split", {2, 2})) == shape_e);
  CHECK(infer_error("split", {x}, Attrs().set_int("axis", 1)) == attr_e);  // no split, no num_outputs
  CHECK(infer_error("split", {x}, Attrs().set_int("num_outputs", 9)) == attr_e);
  ops::TensorType one{i64, {1}};
  CHECK(infer_error("slice", {x, one, one, one}, Attrs().set_ints("starts", {0}).set_ints("ends", {2}).set_ints("axes", {3})) == attr_e);
  CHECK(infer_error("slice", {x, one, one, one, one},
                    Attrs().set_ints("starts", {0}).set_ints("ends", {2}).set_ints("axes", {0}).set_ints("steps", {0})) == attr_e);
  CHECK(infer_error("slice", {x, one, one}, Attrs().set_ints("starts", {2}).set_ints("ends", {1})) == shape_e);  // empty
  CHECK(infer_error("pad", {x, {i64, {6}}}, Attrs().set_ints("pads", {1, 1, 1, 1, 1, 1}).set_string("mode", "mirror")) == attr_e);
  CHECK(infer_error("pad", {x, {i64, {4}}}, Attrs().set_ints("pads", {1, 1, 1, 1})) == shape_e);
  CHECK(infer_error("pad", {x, {i64, {6}}}, Attrs().set_ints("pads", {0, 0, -4, 0, 0, -4})) == shape_e);  // cropped past empty
  CHECK(infer_error("gather", {x, {f32, {2}}}) == dtype_e);
  CHECK(infer_error("gather", {x, idx}, Attrs().set_int("axis", 3)) == attr_e);
  CHECK(infer_error("gather_elements", {x, {i64, {3, 6, 7}}}, Attrs().set_int("axis", 0)) == shape_e);
  CHECK(infer_error("gather_elements", {x, {i64, {3, 5}}}) == shape_e);
  CHECK(infer_error("gather_nd", {x, {i64, {2, 4}}}) == shape_e);  // 4 coordinates into a rank-3 tensor
  CHECK(infer_error("gather_nd", {x, {i64, {3, 1}}}, Attrs().set_int("batch_dims", 2)) == attr_e);
  ops::TensorType sidx{i64, {3, 5, 7}};
  CHECK(infer_error("scatter_elements", {x, sidx, x}, Attrs().set_string("reduction", "mean")) == attr_e);
  CHECK(infer_error("scatter_elements", {x, sidx, {f32, {3, 5, 6}}}) == shape_e);
  CHECK(infer_error("scatter_elements", {x, sidx, {i32, {3, 5, 7}}}) == dtype_e);
  CHECK(infer_error("scatter_elements", {{dtype::boolean, {3}}, {i64, {3}}, {dtype::boolean, {3}}},
                    Attrs().set_string("reduction", "add")) == dtype_e);
  CHECK(infer_error("scatter_nd", {x, {i64, {2, 2}}, {f32, {2, 6}}}) == shape_e);
  CHECK(infer_error("expand", {x, idx}, Attrs().set_ints("shape", {4, 7})) == shape_e);
  CHECK(infer_error("tile", {x, idx}, Attrs().set_ints("repeats", {2, 2})) == shape_e);
  ops::TensorType img{f32, {1, 6, 4, 4}};
  CHECK(infer_error("depth_to_space", {img}, Attrs().set_int("blocksize", 2)) == shape_e);  // 6 channels, not a multiple of 4
  CHECK(infer_error("depth_to_space", {img}, Attrs().set_int("blocksize", 1).set_string("mode", "RCD")) == attr_e);
  CHECK(infer_error("space_to_depth", {img}, Attrs().set_int("blocksize", 3)) == shape_e);
  CHECK(infer_error("trilu", {{f32, {5}}}) == shape_e);
  CHECK(infer_error("cast", {x}, Attrs().set_string("to", "string")) == attr_e);  // no such data type
  CHECK(infer_error("cast", {x}, Attrs().set_int("to", 1)) == attr_e);  // a format's code, not a name
  CHECK(infer_error("cast", {x}) == attr_e);                            // `to` is required
  CHECK(infer_error("shape", {x}, Attrs().set_int("start", 2).set_int("end", 1)) == shape_e);
  ops::TensorType s0{i64, std::vector<int64_t>{}};
  CHECK(infer_error("range", {s0, s0, s0}, Attrs().set_ints("start", {0}).set_ints("limit", {5}).set_ints("delta", {0})) == shape_e);
  CHECK(infer_error("range", {s0, s0, s0}, Attrs().set_ints("start", {5}).set_ints("limit", {0}).set_ints("delta", {1})) == shape_e);
  CHECK(infer_error("one_hot", {idx, s0, {f32, {3}}}, Attrs().set_ints("depth", {4})) == shape_e);
  CHECK(infer_error("one_hot", {idx, s0, {f32, {2}}}, Attrs().set_ints("depth", {4}).set_int("axis", 2)) == attr_e);
  CHECK(infer_error("eye_like", {x}) == shape_e);
  CHECK(infer_error("constant_of_shape", {idx}, Attrs().set_ints("input", {2, 3}).set_string("value_dtype", "float8e4m3")) == attr_e);
}

}  // namespace ops_transform_ops
