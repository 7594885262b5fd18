// Reductions and the ops built on them (reduce_*, argmax/argmin, softmax/log_softmax/hardmax,
// cumsum/cumprod, top_k), each by registry name through the interpreter and the JITs, on odd
// shapes against plain loops written here; shape rules and error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <functional>

namespace ops_reduce_ops {

using namespace nnvm;
using nnvm_test::OpCheck;

namespace {

using Dims = std::vector<int64_t>;

int64_t count(const Dims& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

// Deterministic values in [lo, hi]; with step > 0 rounded to multiples of it (so rows have ties).
std::vector<double> values(int64_t n, uint32_t seed, double lo, double hi, double step = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  uint32_t s = seed * 2654435761u + 12345u;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = lo + (hi - lo) * double(s >> 8) / double(1u << 24);
    if (step > 0) x = std::round(x / step) * step;
  }
  return v;
}

NDArray make(DataType t, const Dims& shape, const std::vector<double>& v) {
  NDArray a(t, shape);
  void* p = a.raw();
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == dtype::float32)
      static_cast<float*>(p)[i] = float(v[i]);
    else if (t == dtype::float64)
      static_cast<double*>(p)[i] = v[i];
    else if (t == dtype::float16)
      static_cast<uint16_t*>(p)[i] = float16::from_float(float(v[i]));
    else if (t == dtype::int32)
      static_cast<int32_t*>(p)[i] = int32_t(v[i]);
    else if (t == dtype::int64)
      static_cast<int64_t*>(p)[i] = int64_t(v[i]);
    else if (t == dtype::uint64)
      static_cast<uint64_t*>(p)[i] = uint64_t(v[i]);
    else if (t == dtype::boolean)
      static_cast<uint8_t*>(p)[i] = v[i] != 0;
    else
      throw std::runtime_error("make: no writer for " + t.str());
  }
  return a;
}
// The values an array holds (after rounding to its dtype), as the references read them.
std::vector<double> read(const NDArray& a) {
  std::vector<double> v;
  for (int64_t i = 0; i < a.numel(); ++i) v.push_back(nnvm_test::detail::element(a, i));
  return v;
}
NDArray ints(const std::vector<int64_t>& v, const Dims& shape) { return NDArray::from<int64_t>(v, shape); }

// For each element of the reduced output (row-major), the flat indices of the input elements it
// combines, in input order (so along one axis: increasing index along that axis).
std::vector<std::vector<int64_t>> lines(const Dims& shape, const std::vector<bool>& mask) {
  Dims out_shape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!mask[d]) out_shape.push_back(shape[d]);
  std::vector<std::vector<int64_t>> out(size_t(count(out_shape)));
  Dims idx(shape.size(), 0);
  for (int64_t flat = 0; flat < count(shape); ++flat) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!mask[d]) o = o * shape[d] + idx[d];
    out[size_t(o)].push_back(flat);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

std::vector<bool> one_axis(size_t rank, int64_t axis) {
  std::vector<bool> m(rank, false);
  m[size_t(axis < 0 ? axis + int64_t(rank) : axis)] = true;
  return m;
}

Dims reduced(const Dims& shape, const std::vector<bool>& mask, bool keepdims) {
  Dims out;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!mask[d])
      out.push_back(shape[d]);
    else if (keepdims)
      out.push_back(1);
  return out;
}

using RowFn = std::function<double(const std::vector<double>&, DataType)>;

double max_of(const std::vector<double>& r) {
  double m = -INFINITY;
  for (double v : r) m = std::max(m, v);
  return m;
}

// The plain-loop meaning of each ONNX Reduce* op over one group of elements.
const std::map<std::string, RowFn>& reduce_refs() {
  static const std::map<std::string, RowFn> refs = {
      {"reduce_sum",
       [](auto& r, DataType) {
         double s = 0;
         for (double v : r) s += v;
         return s;
       }},
      {"reduce_mean",
       [](auto& r, DataType t) {
         double s = 0;
         for (double v : r) s += v;
         return t.is_float() ? s / double(r.size()) : std::trunc(s / double(r.size()));
       }},
      {"reduce_max", [](auto& r, DataType) { return max_of(r); }},
      {"reduce_min",
       [](auto& r, DataType) {
         double m = INFINITY;
         for (double v : r) m = std::min(m, v);
         return m;
       }},
      {"reduce_prod",
       [](auto& r, DataType) {
         double p = 1;
         for (double v : r) p *= v;
         return p;
       }},
      {"reduce_l1",
       [](auto& r, DataType) {
         double s = 0;
         for (double v : r) s += std::abs(v);
         return s;
       }},
      {"reduce_l2",
       [](auto& r, DataType) {
         double s = 0;
         for (double v : r) s += v * v;
         return std::sqrt(s);
       }},
      {"reduce_sum_square",
       [](auto& r, DataType) {
         double s = 0;
         for (double v : r) s += v * v;
         return s;
       }},
      {"reduce_log_sum",
       [](auto& r, DataType) {
         double s = 0;
         for (double v : r) s += v;
         return std::log(s);
       }},
      {"reduce_log_sum_exp",
       [](auto& r, DataType) {
         double m = max_of(r), s = 0;
         for (double v : r) s += std::exp(v - m);
         return m + std::log(s);
       }},
  };
  return refs;
}

// One Reduce* case: `axes` empty means the input is left out (all axes, or none with noop);
// `axes_attr_empty` passes an explicit empty list instead, as the graph layer does for an empty
// axes tensor.
OpCheck reduce_case(const std::string& op, DataType t, const Dims& shape, std::vector<int64_t> axes, int keepdims,
                    int noop = 0, double lo = -2, double hi = 2, uint32_t seed = 1, bool axes_attr_empty = false) {
  NDArray x = make(t, shape, values(count(shape), seed, lo, hi, t.is_float() ? 0 : 1));
  std::vector<double> xv = read(x);
  std::vector<bool> mask(shape.size(), axes.empty() && !noop);
  for (int64_t a : axes) mask[size_t(a < 0 ? a + int64_t(shape.size()) : a)] = true;
  std::vector<double> out;
  for (auto& line : lines(shape, mask)) {
    std::vector<double> row;
    for (int64_t i : line) row.push_back(xv[size_t(i)]);
    out.push_back(reduce_refs().at(op)(row, t));
  }
  OpCheck c{.label = str_cat(op, " ", t, " rank ", shape.size(), " axes ", axes.size(), " keepdims ", keepdims,
                             " noop ", noop),
            .op = op,
            .inputs = {x}};
  if (!axes.empty()) c.inputs.push_back(ints(axes, {int64_t(axes.size())}));
  if (axes_attr_empty) c.attrs.set_ints("axes", {});
  c.attrs.set_int("keepdims", keepdims).set_int("noop_with_empty_axes", noop);
  c.want = {make(t, reduced(shape, mask, keepdims), out)};
  if (t == dtype::float16) c.rtol = 2e-3;
  return c;
}

}  // namespace

TEST_CASE("reduce ops: every Reduce* on odd shapes, axes, keepdims and empty axes") {
  std::vector<OpCheck> cases;
  for (auto& [op, _] : reduce_refs()) {
    bool logsum = op == "reduce_log_sum";
    double lo = logsum ? 0.1 : op == "reduce_prod" ? 0.6 : -2, hi = logsum ? 2 : op == "reduce_prod" ? 1.4 : 2;
    cases.push_back(reduce_case(op, dtype::float32, {3, 5, 7}, {1}, 1, 0, lo, hi, 1));
    cases.push_back(reduce_case(op, dtype::float32, {3, 5, 7}, {-1, 0}, 0, 0, lo, hi, 2));
    cases.push_back(reduce_case(op, dtype::float32, {3, 5, 7}, {}, 1, 0, lo, hi, 3));
    cases.push_back(reduce_case(op, dtype::float32, {2, 3, 1, 5}, {}, 0, 0, lo, hi, 4));  // rank-0 result
    cases.push_back(reduce_case(op, dtype::float32, {3, 5}, {}, 1, 1, lo, hi, 5, true));  // noop
    cases.push_back(reduce_case(op, dtype::float64, {4, 3, 5}, {-3, 2}, 1, 0, lo, hi, 6));
  }
  // ONNX lets these take integers (and max/min bool): exact results. Products of 21 values in
  // [-1, 2] stay far from int32 overflow.
  for (DataType t : {dtype::int32, dtype::int64})
    for (std::string op :
         {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_l1", "reduce_sum_square"})
      cases.push_back(reduce_case(op, t, {3, 5, 7}, {0, -1}, t == dtype::int32 ? 1 : 0, 0, op == "reduce_prod" ? -1 : -3,
                                  op == "reduce_prod" ? 2 : 3, 7));
  for (std::string op : {"reduce_max", "reduce_min"})
    cases.push_back(reduce_case(op, dtype::boolean, {4, 3}, {1}, 1, 0, 0, 1, 8));
  cases.push_back(reduce_case("reduce_sum", dtype::float16, {3, 5}, {1}, 1, 0, -2, 2, 9));
  // log-sum-exp of large numbers stays finite (the maximum is subtracted before exp).
  cases.push_back(reduce_case("reduce_log_sum_exp", dtype::float32, {3, 5}, {1}, 0, 0, 1000, 1010, 10));
  nnvm_test::check_ops(cases, "reduce");
}

TEST_CASE("reduce family: infinities, output types and error ids") {
  // max of a row holding -inf and min of one holding +inf: the identities are infinities.
  NDArray x = make(dtype::float32, {2, 3}, {-INFINITY, -INFINITY, -INFINITY, 1, INFINITY, 2});
  nnvm_test::check_ops({OpCheck{.label = "max -inf",
                                .op = "reduce_max",
                                .inputs = {x, ints({1}, {1})},
                                .want = {make(dtype::float32, {2, 1}, {-INFINITY, INFINITY})}},
                        OpCheck{.label = "min +inf",
                                .op = "reduce_min",
                                .inputs = {x, ints({1}, {1})},
                                .want = {make(dtype::float32, {2, 1}, {-INFINITY, 1})}},
                        OpCheck{.label = "lse -inf",
                                .op = "reduce_log_sum_exp",
                                .inputs = {x, ints({1}, {1})},
                                .want = {make(dtype::float32, {2, 1}, {-INFINITY, INFINITY})}}},
                       "reduce_inf");

  auto& reg = ops::default_registry();
  CHECK(ops::get_op_by_importer_name("onnx:ReduceLogSumExp").name == "reduce_log_sum_exp");
  CHECK(ops::get_op_by_importer_name("onnx:ReduceSumSquare").name == "reduce_sum_square");
  ops::TensorType f(dtype::float32, {3, 5, 7}), axes(dtype::int64, {2});
  auto infer = [&](const std::string& op, std::vector<ops::TensorType> in, ops::Attrs attrs = {}) {
    return ops::infer_types(reg.get(op), in, attrs);
  };
  auto shape_of = [](const ops::TensorType& t) {
    Dims s;
    for (auto& e : t.shape) s.push_back(*ir::as_const_int(e));
    return s;
  };
  CHECK(shape_of(infer("reduce_sum", {f, axes}, ops::Attrs().set_ints("axes", {-1, 1}))[0]) == Dims{3, 1, 1});
  CHECK(shape_of(infer("reduce_sum", {f, axes}, ops::Attrs().set_ints("axes", {-1, 1}).set_int("keepdims", 0))[0]) ==
        Dims{3});
  CHECK(shape_of(infer("reduce_mean", {f}, ops::Attrs().set_int("keepdims", 0))[0]).empty());
  CHECK(shape_of(infer("reduce_mean", {f}, ops::Attrs().set_int("noop_with_empty_axes", 1))[0]) == Dims{3, 5, 7});

  auto id = [](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      return e.id();
    }
    return std::string("(no error)");
  };
  CHECK(id([&] { infer("reduce_sum", {f, axes}, ops::Attrs().set_ints("axes", {3})); }) == "nnvm.ops.attr");
  CHECK(id([&] { infer("reduce_sum", {f, axes}, ops::Attrs().set_ints("axes", {1, -2})); }) == "nnvm.ops.attr");
  CHECK(id([&] { infer("reduce_sum", {f}, ops::Attrs().set_int("keepdims", 2)); }) == "nnvm.ops.attr");
  CHECK(id([&] { infer("reduce_l2", {{dtype::int32, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  CHECK(id([&] { infer("reduce_log_sum_exp", {{dtype::int64, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  CHECK(id([&] { infer("reduce_sum", {{dtype::boolean, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  CHECK(id([&] { infer("reduce_sum", {{dtype::int8, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  CHECK(id([&] { infer("argmax", {f}, ops::Attrs().set_int("axis", -4)); }) == "nnvm.ops.attr");
  CHECK(id([&] { infer("argmin", {{dtype::boolean, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  CHECK(id([&] { infer("hardmax", {{dtype::int32, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  CHECK(id([&] { infer("log_softmax", {{dtype::float32, Dims{}}}); }) == "nnvm.ops.input_shape");
  ops::TensorType scalar_axis(dtype::int64, Dims{});
  CHECK(id([&] { infer("cumsum", {f, scalar_axis}); }) == "nnvm.ops.attr");  // the axis value is missing
  CHECK(id([&] { infer("cumsum", {f, scalar_axis}, ops::Attrs().set_ints("axis", {3})); }) == "nnvm.ops.attr");
  CHECK(id([&] {
          infer("cumprod", {f, scalar_axis}, ops::Attrs().set_ints("axis", {0}).set_int("reverse", 3));
        }) == "nnvm.ops.attr");
  ops::TensorType k(dtype::int64, {1});
  CHECK(id([&] { infer("top_k", {f, k}, ops::Attrs().set_ints("K", {8})); }) == "nnvm.ops.attr");
  CHECK(id([&] { infer("top_k", {f, k}, ops::Attrs().set_ints("K", {0})); }) == "nnvm.ops.attr");
  CHECK(id([&] { infer("top_k", {f, k}, ops::Attrs().set_ints("K", {2, 2})); }) == "nnvm.ops.attr");
  auto tk = infer("top_k", {f, k}, ops::Attrs().set_ints("K", {2}).set_int("axis", 1));
  CHECK(shape_of(tk[0]) == Dims{3, 2, 7});
  CHECK(tk[0].dtype == dtype::float32);
  CHECK(tk[1].dtype == dtype::int64);
  CHECK(infer("argmax", {f})[0].dtype == dtype::int64);
}

namespace {

OpCheck arg_case(const std::string& op, DataType t, const Dims& shape, int64_t axis, int keepdims, int last,
                 uint32_t seed) {
  NDArray x = make(t, shape, values(count(shape), seed, -2, 2, 1));  // integral values: many ties
  std::vector<double> xv = read(x), out;
  bool is_max = op == "argmax";
  for (auto& line : lines(shape, one_axis(shape.size(), axis))) {
    size_t best = 0;
    for (size_t p = 1; p < line.size(); ++p) {
      double v = xv[size_t(line[p])], b = xv[size_t(line[best])];
      if ((is_max ? v > b : v < b) || (last && v == b)) best = p;
    }
    out.push_back(double(best));
  }
  return OpCheck{
      .label = str_cat(op, " ", t, " axis ", axis, " keepdims ", keepdims, " last ", last),
      .op = op,
      .inputs = {x},
      .attrs = ops::Attrs().set_int("axis", axis).set_int("keepdims", keepdims).set_int("select_last_index", last),
      .want = {make(dtype::int64, reduced(shape, one_axis(shape.size(), axis), keepdims), out)}};
}

// softmax, log_softmax and hardmax: each row along `axis` maps to a row.
OpCheck row_case(const std::string& op, DataType t, const Dims& shape, int64_t axis, double lo, double hi, double step,
                 uint32_t seed) {
  NDArray x = make(t, shape, values(count(shape), seed, lo, hi, step));
  std::vector<double> xv = read(x), out(xv.size());
  for (auto& line : lines(shape, one_axis(shape.size(), axis))) {
    double m = -INFINITY, s = 0;
    size_t first = 0;
    for (size_t p = 0; p < line.size(); ++p)
      if (xv[size_t(line[p])] > m) m = xv[size_t(line[p])], first = p;
    for (int64_t i : line) s += std::exp(xv[size_t(i)] - m);
    for (size_t p = 0; p < line.size(); ++p) {
      double v = xv[size_t(line[p])];
      out[size_t(line[p])] = op == "softmax"       ? std::exp(v - m) / s
                             : op == "log_softmax" ? v - m - std::log(s)
                                                   : p == first;
    }
  }
  return OpCheck{.label = str_cat(op, " ", t, " axis ", axis, " range ", lo, ".. ", hi),
                 .op = op,
                 .inputs = {x},
                 .attrs = ops::Attrs().set_int("axis", axis),
                 .want = {make(t, shape, out)}};
}

OpCheck cumulative_case(const std::string& op, DataType t, const Dims& shape, int64_t axis, int exclusive, int reverse,
                        uint32_t seed) {
  bool prod = op == "cumprod";
  NDArray x = make(t, shape,
                   t.is_float() ? values(count(shape), seed, prod ? 0.5 : -2, prod ? 1.5 : 2)
                                : values(count(shape), seed, prod ? -2 : -5, prod ? 2 : 5, 1));
  std::vector<double> xv = read(x), out(xv.size());
  for (auto line : lines(shape, one_axis(shape.size(), axis))) {
    if (reverse) std::reverse(line.begin(), line.end());
    double acc = prod ? 1 : 0;
    for (int64_t i : line) {
      double v = xv[size_t(i)];
      if (!exclusive) acc = prod ? acc * v : acc + v;
      out[size_t(i)] = acc;
      if (exclusive) acc = prod ? acc * v : acc + v;
    }
  }
  // The axis comes as a rank-0 tensor, int32 or int64 as ONNX allows.
  NDArray ax = seed % 2 ? make(dtype::int32, {}, {double(axis)}) : make(dtype::int64, {}, {double(axis)});
  return OpCheck{.label = str_cat(op, " ", t, " axis ", axis, " exclusive ", exclusive, " reverse ", reverse),
                 .op = op,
                 .inputs = {x, ax},
                 .attrs = ops::Attrs().set_int("exclusive", exclusive).set_int("reverse", reverse),
                 .want = {make(t, shape, out)}};
}

OpCheck top_k_case(DataType t, const Dims& shape, int64_t k, int64_t axis, int largest, uint32_t seed) {
  NDArray x = make(t, shape, values(count(shape), seed, t == dtype::uint64 ? 0 : -3, 3, t.is_float() ? 0.5 : 1));
  std::vector<double> xv = read(x);
  std::vector<bool> mask = one_axis(shape.size(), axis);
  Dims out_shape = shape;
  out_shape[size_t(axis < 0 ? axis + int64_t(shape.size()) : axis)] = k;
  auto in_lines = lines(shape, mask), out_lines = lines(out_shape, mask);
  std::vector<double> vals(size_t(count(out_shape))), idx(vals.size());
  for (size_t o = 0; o < in_lines.size(); ++o) {
    std::vector<size_t> order(in_lines[o].size());
    for (size_t p = 0; p < order.size(); ++p) order[p] = p;
    // Stable: equal values keep the lower index first, as ONNX asks.
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      double va = xv[size_t(in_lines[o][a])], vb = xv[size_t(in_lines[o][b])];
      return largest ? va > vb : va < vb;
    });
    for (size_t p = 0; p < size_t(k); ++p) {
      vals[size_t(out_lines[o][p])] = xv[size_t(in_lines[o][order[p]])];
      idx[size_t(out_lines[o][p])] = double(order[p]);
    }
  }
  return OpCheck{.label = str_cat("top_k ", t, " k ", k, " axis ", axis, " largest ", largest),
                 .op = "top_k",
                 .inputs = {x, ints({k}, {1})},
                 .attrs = ops::Attrs().set_int("axis", axis).set_int("largest", largest),
                 .want = {make(t, out_shape, vals), make(dtype::int64, out_shape, idx)}};
}

}  // namespace

TEST_CASE("argmax, argmin: axes, keepdims, first and last of ties") {
  std::vector<OpCheck> cases;
  uint32_t seed = 20;
  for (std::string op : {"argmax", "argmin"})
    for (int64_t axis : {0, 1, -1})
      for (int last : {0, 1}) cases.push_back(arg_case(op, dtype::float32, {3, 5, 7}, axis, axis != 1, last, seed++));
  cases.push_back(arg_case("argmax", dtype::int32, {4, 5}, -2, 0, 1, seed++));
  cases.push_back(arg_case("argmin", dtype::float64, {6}, 0, 0, 0, seed++));  // rank-0 result
  nnvm_test::check_ops(cases, "arg_reduce");
}

TEST_CASE("softmax, log_softmax, hardmax along each axis, stable for large inputs") {
  std::vector<OpCheck> cases;
  uint32_t seed = 40;
  for (std::string op : {"softmax", "log_softmax", "hardmax"}) {
    for (int64_t axis : {0, 1, -1}) cases.push_back(row_case(op, dtype::float32, {3, 5, 7}, axis, -3, 3, 0, seed++));
    cases.push_back(row_case(op, dtype::float32, {4, 9}, -1, 1000, 1004, 0, seed++));
    cases.push_back(row_case(op, dtype::float64, {5, 3}, 0, -3, 3, 0, seed++));
  }
  cases.push_back(row_case("hardmax", dtype::float32, {3, 5, 7}, 1, -2, 2, 1, seed++));  // ties: the first max wins
  cases.push_back(row_case("log_softmax", dtype::float32, {2, 3}, -1, -300, 300, 0, seed++));
  nnvm_test::check_ops(cases, "softmax_family");
}

TEST_CASE("cumsum, cumprod: exclusive, reverse, negative axis, integers") {
  std::vector<OpCheck> cases;
  uint32_t seed = 60;
  for (std::string op : {"cumsum", "cumprod"}) {
    for (int exclusive : {0, 1})
      for (int reverse : {0, 1})
        cases.push_back(cumulative_case(op, dtype::float32, {3, 5, 7}, 1, exclusive, reverse, seed++));
    cases.push_back(cumulative_case(op, dtype::float64, {3, 5, 7}, -1, 1, 0, seed++));
    cases.push_back(cumulative_case(op, dtype::int32, {7}, 0, 1, 0, seed++));
    cases.push_back(cumulative_case(op, dtype::int64, {4, 3}, -2, 0, 1, seed++));
  }
  nnvm_test::check_ops(cases, "cumulative");
}

TEST_CASE("top_k: largest and smallest, ties keep input order, every axis") {
  std::vector<OpCheck> cases;
  uint32_t seed = 80;
  for (int largest : {1, 0}) {
    cases.push_back(top_k_case(dtype::float32, {3, 5, 7}, 3, -1, largest, seed++));
    cases.push_back(top_k_case(dtype::float32, {3, 5, 7}, 3, 0, largest, seed++));  // K = the whole axis
    cases.push_back(top_k_case(dtype::int32, {4, 9}, 1, 1, largest, seed++));
  }
  cases.push_back(top_k_case(dtype::uint64, {3, 4}, 3, 1, 1, seed++));
  cases.push_back(top_k_case(dtype::float64, {11}, 5, 0, 1, seed++));
  nnvm_test::check_ops(cases, "top_k");
}

}  // namespace ops_reduce_ops
