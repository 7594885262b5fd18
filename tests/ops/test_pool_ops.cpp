// The pools: max_pool (with Indices), average_pool, lp_pool and the global pools, 1-D to 3-D on
// odd shapes (strides, dilations, asymmetric pads, auto_pad, ceil_mode, count_include_pad,
// storage_order, integer inputs with ties) through check_ops, against plain loops written here;
// attribute, shape and dtype errors.
#include "support/pch.hpp"
#include "support/op_check.hpp"

namespace ops_pool_ops {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;

namespace {

using Ints = std::vector<int64_t>;

int64_t numel(const Ints& s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>()); }

Ints unflatten(int64_t flat, const Ints& dims) {
  Ints idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return idx;
}

// Values exactly representable in every dtype used here: small integers, or floats rounded to
// float32.
std::vector<double> random_values(DataType t, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);  // few distinct values: ties
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = t.is_float() ? double(float(dist(rng))) : double(small(rng));
  return v;
}

NDArray array(DataType t, const Ints& shape, const std::vector<double>& v) {
  NDArray a(t, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == dtype::float64)
      a.values<double>()[i] = v[i];
    else if (t == dtype::float32)
      a.values<float>()[i] = float(v[i]);
    else if (t == dtype::int32)
      a.values<int32_t>()[i] = int32_t(v[i]);
    else if (t == dtype::int64)
      a.values<int64_t>()[i] = int64_t(v[i]);
    else
      a.values<uint8_t>()[i] = uint8_t(v[i]);
  }
  return a;
}

// A pool's geometry as the test resolves it from the attributes, independently of the op.
struct Pool {
  Ints kernel, strides, dilations, pad_begin, pad_end;
  bool ceil_mode = false;
  std::string auto_pad = "NOTSET";

  Ints out(const Ints& in) {
    Ints o;
    for (size_t d = 0; d < in.size(); ++d) {
      int64_t span = (kernel[d] - 1) * dilations[d] + 1;
      if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
        int64_t out = (in[d] + strides[d] - 1) / strides[d];
        int64_t total = std::max<int64_t>(0, (out - 1) * strides[d] + span - in[d]);
        pad_begin[d] = auto_pad == "SAME_UPPER" ? total / 2 : (total + 1) / 2;
        pad_end[d] = total - pad_begin[d];
        o.push_back(out);
        continue;
      }
      double exact = double(in[d] + pad_begin[d] + pad_end[d] - span) / double(strides[d]) + 1;
      int64_t out = int64_t(ceil_mode ? std::ceil(exact) : std::floor(exact));
      if (ceil_mode && (out - 1) * strides[d] >= in[d] + pad_begin[d]) --out;  // starts in the end padding
      o.push_back(out);
    }
    return o;
  }
};

enum class Kind { max, average, average_with_pad, lp };

// Y (and, for max, the flat index of the first largest tap in row-major scan order) by visiting
// every tap of every window.
std::vector<std::vector<double>> ref_pool(const std::vector<double>& x, const Ints& xs, Pool g, Kind kind, int64_t p,
                                          int64_t storage_order, Ints* out_shape) {
  size_t n = xs.size() - 2;
  Ints in(xs.begin() + 2, xs.end()), out = g.out(in), ys{xs[0], xs[1]};
  ys.insert(ys.end(), out.begin(), out.end());
  *out_shape = ys;
  int64_t slice = numel(in);
  std::vector<double> y(size_t(numel(ys))), ind(size_t(numel(ys)));
  for (int64_t flat = 0; flat < numel(ys); ++flat) {
    Ints o = unflatten(flat, ys);
    double best = -INFINITY, sum = 0;
    int64_t best_at = -1, count = 0;
    for (int64_t kf = 0; kf < numel(g.kernel); ++kf) {
      Ints k = unflatten(kf, g.kernel), c(n);
      bool inside = true, counted = true;
      for (size_t d = 0; d < n; ++d) {
        c[d] = o[2 + d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
        inside &= c[d] >= 0 && c[d] < in[d];
        counted &= c[d] >= -g.pad_begin[d] && c[d] < in[d] + g.pad_end[d];
      }
      if (kind == Kind::average_with_pad ? counted : inside) ++count;
      if (!inside) continue;
      int64_t row = 0, col = 0, scale = 1;
      for (size_t d = 0; d < n; ++d) row = row * in[d] + c[d];
      for (size_t d = 0; d < n; ++d, scale *= in[d - 1]) col += c[d] * scale;
      double v = x[size_t((o[0] * xs[1] + o[1]) * slice + row)];
      if (v > best) best = v, best_at = (o[0] * xs[1] + o[1]) * slice + (storage_order ? col : row);
      sum += kind == Kind::lp ? std::pow(std::abs(v), double(p)) : v;
    }
    y[size_t(flat)] = kind == Kind::max  ? best
                      : kind == Kind::lp ? std::pow(sum, 1.0 / double(p))
                                         : sum / double(count);
    ind[size_t(flat)] = double(best_at);
  }
  return {y, ind};
}

struct PoolCase {
  std::string label, op;
  Ints x_shape;
  ops::Attrs attrs;
  Pool geometry;  // the attributes again, for the reference (empty kernel: global)
  DataType dtype = dtype::float32;
};

OpCheck pool_check(const PoolCase& c, uint32_t seed) {
  std::vector<double> x = random_values(c.dtype, numel(c.x_shape), seed);
  Pool g = c.geometry;
  size_t n = c.x_shape.size() - 2;
  if (g.kernel.empty())
    g = Pool{Ints(c.x_shape.begin() + 2, c.x_shape.end()), Ints(n, 1), Ints(n, 1), Ints(n, 0), Ints(n, 0)};
  Kind kind = c.op.find("max") != std::string::npos     ? Kind::max
              : c.op.find("lp") != std::string::npos    ? Kind::lp
              : c.attrs.get_int("count_include_pad", 0) ? Kind::average_with_pad
                                                        : Kind::average;
  Ints ys;
  auto ref = ref_pool(x, c.x_shape, g, kind, c.attrs.get_int("p", 2), c.attrs.get_int("storage_order", 0), &ys);
  OpCheck k{c.label, c.op, {array(c.dtype, c.x_shape, x)}, c.attrs, {array(c.dtype, ys, ref[0])}};
  if (c.op == "max_pool") k.want.push_back(array(dtype::int64, ys, ref[1]));
  return k;
}

ops::Attrs ints(std::initializer_list<std::pair<const char*, Ints>> values) {
  ops::Attrs a;
  for (auto& [k, v] : values) a.set_ints(k, v);
  return a;
}

std::vector<OpCheck> checks_of(const std::vector<PoolCase>& cases, uint32_t seed) {
  std::vector<OpCheck> out;
  for (auto& c : cases) out.push_back(pool_check(c, seed += 7));
  return out;
}

}  // namespace

TEST_CASE("max_pool: values and Indices, 1-D to 3-D, ceil_mode, auto_pad, storage_order, integer ties") {
  std::vector<PoolCase> cases{
      {"2-D strides, asymmetric pads",
       "max_pool",
       {2, 3, 7, 6},
       ints({{"kernel_shape", {3, 2}}, {"strides", {2, 1}}, {"pads", {1, 0, 1, 1}}}),
       {{3, 2}, {2, 1}, {1, 1}, {1, 0}, {1, 1}}},
      {"2-D ceil_mode",
       "max_pool",
       {1, 2, 6, 7},
       ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}}).set_int("ceil_mode", 1),
       {{3, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true}},
      {"ceil_mode drops a window starting in the end padding",
       "max_pool",
       {1, 1, 5, 5},
       ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}).set_int("ceil_mode", 1),
       {{2, 2}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true}},
      {"3-D dilated, storage_order 1",
       "max_pool",
       {1, 2, 5, 6, 4},
       ints({{"kernel_shape", {2, 2, 2}}, {"dilations", {2, 1, 2}}, {"pads", {0, 1, 1, 1, 0, 0}}})
           .set_int("storage_order", 1),
       {{2, 2, 2}, {1, 1, 1}, {2, 1, 2}, {0, 1, 1}, {1, 0, 0}}},
      {"1-D",
       "max_pool",
       {2, 3, 9},
       ints({{"kernel_shape", {3}}, {"strides", {2}}, {"pads", {1, 1}}}),
       {{3}, {2}, {1}, {1}, {1}}},
      {"SAME_UPPER",
       "max_pool",
       {1, 2, 7, 6},
       ints({{"kernel_shape", {2, 3}}, {"strides", {2, 2}}}).set_string("auto_pad", "SAME_UPPER"),
       {{2, 3}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, false, "SAME_UPPER"}},
      {"SAME_LOWER",
       "max_pool",
       {1, 2, 7, 6},
       ints({{"kernel_shape", {2, 2}}}).set_string("auto_pad", "SAME_LOWER"),
       {{2, 2}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false, "SAME_LOWER"}},
      {"VALID",
       "max_pool",
       {1, 2, 7, 8},
       ints({{"kernel_shape", {3, 2}}, {"strides", {2, 3}}, {"pads", {2, 2, 2, 2}}}).set_string("auto_pad", "VALID"),
       {{3, 2}, {2, 3}, {1, 1}, {0, 0}, {0, 0}}},
      {"uint8 ties pick the first in scan order",
       "max_pool",
       {1, 2, 5, 6},
       ints({{"kernel_shape", {2, 3}}, {"strides", {1, 2}}, {"pads", {1, 1, 1, 1}}}),
       {{2, 3}, {1, 2}, {1, 1}, {1, 1}, {1, 1}},
       dtype::uint8},
      {"int32 ties, storage_order 1",
       "max_pool",
       {2, 2, 5, 7},
       ints({{"kernel_shape", {3, 2}}, {"strides", {2, 2}}}).set_int("storage_order", 1),
       {{3, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}},
       dtype::int32},
      {"float64 dilation 3, ceil_mode",
       "max_pool",
       {1, 1, 7, 8},
       ints({{"kernel_shape", {2, 2}}, {"dilations", {3, 3}}, {"strides", {2, 2}}}).set_int("ceil_mode", 1),
       {{2, 2}, {2, 2}, {3, 3}, {0, 0}, {0, 0}, true},
       dtype::float64},
      {"global_max_pool 2-D", "global_max_pool", {2, 3, 5, 7}, {}, {}},
      {"global_max_pool 3-D int32", "global_max_pool", {1, 3, 3, 4, 5}, {}, {}, dtype::int32},
      {"global_max_pool 1-D float64", "global_max_pool", {2, 2, 9}, {}, {}, dtype::float64},
  };
  nnvm_test::check_ops(checks_of(cases, 1), "max_pool");
}

TEST_CASE("average_pool and lp_pool: pads, count_include_pad, ceil_mode, dilations, auto_pad; the global pools") {
  std::vector<PoolCase> cases{
      {"2-D asymmetric pads",
       "average_pool",
       {2, 3, 7, 6},
       ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 2, 2, 1}}}),
       {{3, 3}, {2, 2}, {1, 1}, {1, 2}, {2, 1}}},
      {"2-D asymmetric pads, count_include_pad",
       "average_pool",
       {2, 3, 7, 6},
       ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 2, 2, 1}}}).set_int("count_include_pad", 1),
       {{3, 3}, {2, 2}, {1, 1}, {1, 2}, {2, 1}}},
      // Height 6, pads 1 + 1, kernel 3, stride 2, ceil: 4 windows, the last one past the end pad.
      {"ceil_mode past the end pad, count_include_pad",
       "average_pool",
       {1, 2, 6, 5},
       ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}})
           .set_int("ceil_mode", 1)
           .set_int("count_include_pad", 1),
       {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true}},
      {"ceil_mode past the end pad",
       "average_pool",
       {1, 2, 6, 5},
       ints({{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}}).set_int("ceil_mode", 1),
       {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, true}},
      {"last window starts on the pad (ONNX case)",
       "average_pool",
       {1, 3, 2, 2},
       ints({{"kernel_shape", {3, 3}}, {"strides", {3, 3}}, {"pads", {1, 1, 1, 1}}})
           .set_int("ceil_mode", 1)
           .set_int("count_include_pad", 1),
       {{3, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, true}},
      {"3-D dilated, ceil_mode",
       "average_pool",
       {1, 1, 7, 6, 5},
       ints({{"kernel_shape", {2, 2, 2}}, {"dilations", {2, 2, 1}}, {"strides", {2, 1, 2}}}).set_int("ceil_mode", 1),
       {{2, 2, 2}, {2, 1, 2}, {2, 2, 1}, {0, 0, 0}, {0, 0, 0}, true}},
      {"1-D SAME_LOWER",
       "average_pool",
       {2, 2, 9},
       ints({{"kernel_shape", {4}}, {"strides", {2}}}).set_string("auto_pad", "SAME_LOWER"),
       {{4}, {2}, {1}, {0}, {0}, false, "SAME_LOWER"}},
      {"float64 SAME_UPPER, count_include_pad",
       "average_pool",
       {1, 2, 5, 6},
       ints({{"kernel_shape", {2, 3}}}).set_string("auto_pad", "SAME_UPPER").set_int("count_include_pad", 1),
       {{2, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false, "SAME_UPPER"},
       dtype::float64},
      {"lp p=1, 1-D pads",
       "lp_pool",
       {2, 3, 8},
       ints({{"kernel_shape", {3}}, {"pads", {2, 1}}}).set_int("p", 1),
       {{3}, {1}, {1}, {2}, {1}}},
      {"lp p=2 (default), 2-D strides, pads",
       "lp_pool",
       {1, 2, 7, 6},
       ints({{"kernel_shape", {3, 2}}, {"strides", {2, 2}}, {"pads", {1, 0, 0, 1}}}),
       {{3, 2}, {2, 2}, {1, 1}, {1, 0}, {0, 1}}},
      {"lp p=3, 3-D dilated",
       "lp_pool",
       {1, 2, 5, 4, 5},
       ints({{"kernel_shape", {2, 2, 2}}, {"dilations", {2, 1, 2}}}).set_int("p", 3),
       {{2, 2, 2}, {1, 1, 1}, {2, 1, 2}, {0, 0, 0}, {0, 0, 0}}},
      {"lp p=2, ceil_mode",
       "lp_pool",
       {1, 1, 6, 7},
       ints({{"kernel_shape", {2, 2}}, {"strides", {2, 2}}}).set_int("ceil_mode", 1),
       {{2, 2}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true}},
      {"global_average_pool 1-D", "global_average_pool", {2, 3, 7}, {}, {}},
      {"global_average_pool 2-D", "global_average_pool", {2, 3, 5, 7}, {}, {}},
      {"global_average_pool 3-D float64", "global_average_pool", {1, 2, 3, 4, 5}, {}, {}, dtype::float64},
      {"global_lp_pool p=2", "global_lp_pool", {2, 3, 5, 3}, {}, {}},
      {"global_lp_pool p=3, 3-D", "global_lp_pool", {1, 2, 3, 2, 3}, ops::Attrs().set_int("p", 3), {}},
  };
  nnvm_test::check_ops(checks_of(cases, 50), "pool");
}

TEST_CASE("pools: attribute, shape and dtype errors") {
  using ops::TensorType;
  auto err = [](const char* op, TensorType x, ops::Attrs a = {}) {
    return error_id([&] { ops::infer_types(ops::default_registry().get(op), {x}, a); });
  };
  TensorType x(dtype::float32, {1, 2, 5, 6});
  auto k = ints({{"kernel_shape", {3, 3}}});
  CHECK(err("max_pool", x, k) == "(no error)");
  auto types = ops::infer_types(ops::default_registry().get("max_pool"), {x}, k);
  REQUIRE(types.size() == 2);
  CHECK(types[1].dtype == dtype::int64);
  CHECK(err("max_pool", x) == "nnvm.ops.attr");  // kernel_shape is required
  CHECK(err("average_pool", x, ints({{"kernel_shape", {3}}})) == "nnvm.ops.attr");
  CHECK(err("lp_pool", x, ints({{"kernel_shape", {3, 0}}})) == "nnvm.ops.attr");
  CHECK(err("max_pool", x, ints({{"kernel_shape", {3, 3}}, {"pads", {1, 1, 1}}})) == "nnvm.ops.attr");
  CHECK(err("max_pool", x, ints({{"kernel_shape", {3, 3}}, {"strides", {0, 1}}})) == "nnvm.ops.attr");
  CHECK(err("max_pool", x, ops::Attrs(k).set_string("auto_pad", "same")) == "nnvm.ops.attr");
  CHECK(err("max_pool", x, ops::Attrs(k).set_int("storage_order", 2)) == "nnvm.ops.attr");
  CHECK(err("lp_pool", x, ops::Attrs(k).set_int("p", 0)) == "nnvm.ops.attr");
  CHECK(err("global_lp_pool", x, ops::Attrs().set_int("p", -1)) == "nnvm.ops.attr");
  // A 6-wide kernel on 5 rows: no output.
  CHECK(err("average_pool", x, ints({{"kernel_shape", {6, 1}}})) == "nnvm.ops.input_shape");
  CHECK(err("max_pool", x, ints({{"kernel_shape", {3, 3}}, {"dilations", {3, 1}}})) == "nnvm.ops.input_shape");
  CHECK(err("max_pool", TensorType(dtype::float32, {2, 5}), ops::Attrs().set_ints("kernel_shape", {2})) ==
        "nnvm.ops.input_shape");
  CHECK(err("global_max_pool", TensorType(dtype::float32, {2, 5})) == "nnvm.ops.input_shape");
  CHECK(err("average_pool", TensorType(dtype::int32, {1, 2, 5, 6}), k) == "nnvm.ops.input_dtype");
  CHECK(err("global_average_pool", TensorType(dtype::int32, {1, 2, 5, 6})) == "nnvm.ops.input_dtype");
  CHECK(err("max_pool", TensorType(dtype::boolean, {1, 2, 5, 6}), k) == "nnvm.ops.input_dtype");
  CHECK(err("max_pool", TensorType(dtype::uint8, {1, 2, 5, 6}), k) == "(no error)");
}

}  // namespace ops_pool_ops
