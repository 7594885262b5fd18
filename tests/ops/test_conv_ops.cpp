// conv and conv_transpose: 1-D, 2-D and 3-D cases on odd shapes (strides, dilations, asymmetric
// pads, auto_pad, groups, depthwise, bias, output_padding, output_shape) through check_ops,
// against plain loops written here (conv as a direct sum, conv_transpose as a scatter); shape,
// attribute and dtype errors.
#include "support/pch.hpp"
#include "support/op_check.hpp"

namespace ops_conv_ops {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::error_id;

namespace {

using Ints = std::vector<int64_t>;

int64_t numel(const Ints& s) { return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>()); }

// Row-major multi-index of `flat` within `dims`.
Ints unflatten(int64_t flat, const Ints& dims) {
  Ints idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = flat % dims[d];
    flat /= dims[d];
  }
  return idx;
}

std::vector<double> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

NDArray array(DataType t, const Ints& shape, const std::vector<double>& v) {
  NDArray a(t, shape);
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == dtype::float64)
      a.values<double>()[i] = v[i];
    else
      a.values<float>()[i] = float(v[i]);
  }
  return a;
}

// Values as the op sees them (rounded to float32 when t is float32).
std::vector<double> rounded(DataType t, std::vector<double> v) {
  if (t == dtype::float32)
    for (auto& x : v) x = double(float(x));
  return v;
}

struct Tensor {
  Ints shape;
  std::vector<double> v;
  double at(const Ints& idx) const {
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
    return v[size_t(flat)];
  }
};

struct Geometry {
  Ints strides, dilations, pad_begin, pad_end;  // resolved
};

// Direct convolution: for each output, the sum over its group's channels and the kernel taps
// that fall inside X.
Tensor ref_conv(const Tensor& x, const Tensor& w, const std::vector<double>* bias, const Geometry& g, int64_t group) {
  size_t n = x.shape.size() - 2;
  int64_t M = w.shape[0], Cg = w.shape[1], Mg = M / group;
  Ints out{x.shape[0], M}, kernel(w.shape.begin() + 2, w.shape.end());
  for (size_t d = 0; d < n; ++d) {
    int64_t span = (kernel[d] - 1) * g.dilations[d] + 1;
    out.push_back((x.shape[2 + d] + g.pad_begin[d] + g.pad_end[d] - span) / g.strides[d] + 1);
  }
  Tensor y{out, std::vector<double>(size_t(numel(out)))};
  for (int64_t flat = 0; flat < numel(out); ++flat) {
    Ints o = unflatten(flat, out);
    int64_t m = o[1];
    double acc = bias ? (*bias)[size_t(m)] : 0.0;
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t kf = 0; kf < numel(kernel); ++kf) {
        Ints k = unflatten(kf, kernel), xi{o[0], (m / Mg) * Cg + c}, wi{m, c};
        bool inside = true;
        for (size_t d = 0; d < n; ++d) {
          int64_t i = o[2 + d] * g.strides[d] - g.pad_begin[d] + k[d] * g.dilations[d];
          inside &= i >= 0 && i < x.shape[2 + d];
          xi.push_back(i);
          wi.push_back(k[d]);
        }
        if (inside) acc += x.at(xi) * w.at(wi);
      }
    y.v[size_t(flat)] = acc;
  }
  return y;
}

// Transposed convolution as a scatter: every input element adds X * W at output coordinate
// i * stride + k * dilation - pad_begin, when that lies in the output.
Tensor ref_conv_transpose(const Tensor& x, const Tensor& w, const std::vector<double>* bias, const Geometry& g,
                          int64_t group, const Ints& out_spatial) {
  size_t n = x.shape.size() - 2;
  int64_t C = x.shape[1], Mg = w.shape[1], Cg = C / group, M = Mg * group;
  Ints out{x.shape[0], M}, kernel(w.shape.begin() + 2, w.shape.end());
  out.insert(out.end(), out_spatial.begin(), out_spatial.end());
  Tensor y{out, std::vector<double>(size_t(numel(out)))};
  for (int64_t flat = 0; flat < numel(out); ++flat)
    y.v[size_t(flat)] = bias ? (*bias)[size_t(unflatten(flat, out)[1])] : 0.0;
  for (int64_t xf = 0; xf < numel(x.shape); ++xf) {
    Ints xi = unflatten(xf, x.shape);
    int64_t c = xi[1], grp = c / Cg;
    for (int64_t mm = 0; mm < Mg; ++mm)
      for (int64_t kf = 0; kf < numel(kernel); ++kf) {
        Ints k = unflatten(kf, kernel), yi{xi[0], grp * Mg + mm}, wi{c, mm};
        bool inside = true;
        for (size_t d = 0; d < n; ++d) {
          int64_t o = xi[2 + d] * g.strides[d] + k[d] * g.dilations[d] - g.pad_begin[d];
          inside &= o >= 0 && o < out_spatial[d];
          yi.push_back(o);
          wi.push_back(k[d]);
        }
        if (!inside) continue;
        int64_t yf = 0;
        for (size_t d = 0; d < out.size(); ++d) yf = yf * out[d] + yi[d];
        y.v[size_t(yf)] += x.v[size_t(xf)] * w.at(wi);
      }
  }
  return y;
}

struct ConvCase {
  std::string label;
  Ints x_shape, w_shape;
  bool bias;
  ops::Attrs attrs;
  Geometry geometry;  // the pads auto_pad resolves to are written out by hand here
  int64_t group = 1;
  DataType dtype = dtype::float32;
};

OpCheck conv_check(const ConvCase& c, uint32_t seed) {
  Tensor x{c.x_shape, rounded(c.dtype, random_values(numel(c.x_shape), seed))};
  Tensor w{c.w_shape, rounded(c.dtype, random_values(numel(c.w_shape), seed + 1))};
  std::vector<double> b = rounded(c.dtype, random_values(c.w_shape[0], seed + 2));
  Tensor y = ref_conv(x, w, c.bias ? &b : nullptr, c.geometry, c.group);
  OpCheck k{c.label,
            "conv",
            {array(c.dtype, x.shape, x.v), array(c.dtype, w.shape, w.v)},
            c.attrs,
            {array(c.dtype, y.shape, y.v)}};
  if (c.bias) k.inputs.push_back(array(c.dtype, {c.w_shape[0]}, b));
  return k;
}

struct TransposeCase {
  std::string label;
  Ints x_shape, w_shape;
  bool bias;
  ops::Attrs attrs;
  Geometry geometry;
  Ints out_spatial;
  int64_t group = 1;
  DataType dtype = dtype::float32;
};

OpCheck transpose_check(const TransposeCase& c, uint32_t seed) {
  Tensor x{c.x_shape, rounded(c.dtype, random_values(numel(c.x_shape), seed))};
  Tensor w{c.w_shape, rounded(c.dtype, random_values(numel(c.w_shape), seed + 1))};
  int64_t M = c.w_shape[1] * c.group;
  std::vector<double> b = rounded(c.dtype, random_values(M, seed + 2));
  Tensor y = ref_conv_transpose(x, w, c.bias ? &b : nullptr, c.geometry, c.group, c.out_spatial);
  OpCheck k{c.label,
            "conv_transpose",
            {array(c.dtype, x.shape, x.v), array(c.dtype, w.shape, w.v)},
            c.attrs,
            {array(c.dtype, y.shape, y.v)}};
  if (c.bias) k.inputs.push_back(array(c.dtype, {M}, b));
  return k;
}

template <class F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

ops::Attrs ints(std::initializer_list<std::pair<const char*, Ints>> values) {
  ops::Attrs a;
  for (auto& [k, v] : values) a.set_ints(k, v);
  return a;
}

}  // namespace

TEST_CASE("conv: 1-D, 2-D, 3-D, strides, dilations, asymmetric pads, auto_pad, groups, depthwise") {
  std::vector<ConvCase> cases{
      {"2-D strided, dilated, asymmetric pads, bias",
       {2, 3, 7, 6},
       {4, 3, 3, 2},
       true,
       ints({{"strides", {2, 1}}, {"dilations", {1, 2}}, {"pads", {1, 0, 2, 1}}}),
       {{2, 1}, {1, 2}, {1, 0}, {2, 1}}},
      {"2-D no pads, kernel_shape given",
       {1, 2, 5, 19},
       {3, 2, 3, 3},
       false,
       ints({{"kernel_shape", {3, 3}}}),
       {{1, 1}, {1, 1}, {0, 0}, {0, 0}}},
      {"2-D pads 1, wide output (vector tail)",
       {1, 2, 5, 19},
       {3, 2, 3, 3},
       true,
       ints({{"pads", {1, 1, 1, 1}}}),
       {{1, 1}, {1, 1}, {1, 1}, {1, 1}}},
      {"1-D stride 2, pads [1, 2], bias",
       {2, 3, 11},
       {5, 3, 3},
       true,
       ints({{"strides", {2}}, {"pads", {1, 2}}}),
       {{2}, {1}, {1}, {2}}},
      {"1-D dilation 3", {1, 2, 13}, {3, 2, 3}, false, ints({{"dilations", {3}}}), {{1}, {3}, {0}, {0}}},
      {"3-D dilated, asymmetric pads",
       {1, 2, 5, 4, 6},
       {3, 2, 2, 3, 2},
       true,
       ints({{"dilations", {2, 1, 1}}, {"pads", {1, 0, 1, 0, 1, 1}}, {"strides", {1, 1, 2}}}),
       {{1, 1, 2}, {2, 1, 1}, {1, 0, 1}, {0, 1, 1}}},
      {"grouped (2 groups, 2 outputs each)",
       {1, 6, 7, 5},
       {4, 3, 3, 3},
       true,
       ints({{"pads", {1, 1, 1, 1}}}).set_int("group", 2),
       {{1, 1}, {1, 1}, {1, 1}, {1, 1}},
       2},
      {"depthwise",
       {2, 4, 6, 7},
       {4, 1, 3, 3},
       true,
       ints({{"pads", {1, 1, 1, 1}}}).set_int("group", 4),
       {{1, 1}, {1, 1}, {1, 1}, {1, 1}},
       4},
      {"depthwise, multiplier 2, stride 2",
       {1, 3, 7, 7},
       {6, 1, 3, 3},
       false,
       ints({{"pads", {0, 1, 1, 0}}, {"strides", {2, 2}}}).set_int("group", 3),
       {{2, 2}, {1, 1}, {0, 1}, {1, 0}},
       3},
      // SAME: out = ceil(7 / 2) = 4, total pad (4 - 1) * 2 + 3 - 7 = 2 -> 1 + 1; width 6: out 3,
      // total 2 * 2 + 3 - 6 = 1, at the end.
      {"auto_pad SAME_UPPER stride 2",
       {1, 2, 7, 6},
       {3, 2, 3, 3},
       false,
       ints({{"strides", {2, 2}}}).set_string("auto_pad", "SAME_UPPER"),
       {{2, 2}, {1, 1}, {1, 0}, {1, 1}}},
      // Kernel 2: total pad 1 per axis, at the end (UPPER) or at the beginning (LOWER).
      {"auto_pad SAME_UPPER odd padding",
       {1, 2, 5, 6},
       {2, 2, 2, 2},
       true,
       ops::Attrs().set_string("auto_pad", "SAME_UPPER"),
       {{1, 1}, {1, 1}, {0, 0}, {1, 1}}},
      {"auto_pad SAME_LOWER odd padding",
       {1, 2, 5, 6},
       {2, 2, 2, 2},
       true,
       ops::Attrs().set_string("auto_pad", "SAME_LOWER"),
       {{1, 1}, {1, 1}, {1, 1}, {0, 0}}},
      {"auto_pad VALID ignores pads",
       {1, 2, 7, 8},
       {2, 2, 3, 2},
       false,
       ints({{"strides", {2, 3}}, {"pads", {5, 5, 5, 5}}}).set_string("auto_pad", "VALID"),
       {{2, 3}, {1, 1}, {0, 0}, {0, 0}}},
      {"float64, 2-D pads",
       {1, 3, 5, 5},
       {2, 3, 3, 3},
       true,
       ints({{"pads", {2, 1, 0, 1}}}),
       {{1, 1}, {1, 1}, {2, 1}, {0, 1}},
       1,
       dtype::float64},
  };
  std::vector<OpCheck> checks;
  uint32_t seed = 10;
  for (auto& c : cases) checks.push_back(conv_check(c, seed += 3));
  nnvm_test::check_ops(checks, "conv");
}

TEST_CASE("conv_transpose: strides, pads, dilations, groups, output_padding, output_shape, auto_pad") {
  std::vector<TransposeCase> cases{
      // full extent = stride * (in - 1) + output_padding + (k - 1) * dilation + 1, less the pads.
      {"2-D default, bias", {1, 2, 3, 4}, {2, 3, 3, 3}, true, {}, {{1, 1}, {1, 1}, {0, 0}, {0, 0}}, {5, 6}},
      {"2-D strides [3, 2], asymmetric pads",
       {2, 1, 3, 3},
       {1, 2, 3, 3},
       false,
       ints({{"strides", {3, 2}}, {"pads", {1, 2, 0, 1}}}),
       {{3, 2}, {1, 1}, {1, 2}, {0, 1}},
       {8, 4}},
      {"2-D output_padding",
       {1, 1, 3, 3},
       {1, 2, 3, 3},
       true,
       ints({{"strides", {3, 2}}, {"output_padding", {1, 1}}}),
       {{3, 2}, {1, 1}, {0, 0}, {0, 0}},
       {10, 8}},
      {"2-D dilations 2",
       {1, 1, 3, 4},
       {1, 1, 2, 2},
       false,
       ints({{"dilations", {2, 2}}}),
       {{1, 1}, {2, 2}, {0, 0}, {0, 0}},
       {5, 6}},
      {"group 2, one output each",
       {2, 4, 3, 3},
       {4, 1, 3, 3},
       true,
       ops::Attrs().set_int("group", 2),
       {{1, 1}, {1, 1}, {0, 0}, {0, 0}},
       {5, 5},
       2},
      {"group 2, two outputs each, stride 2",
       {1, 4, 3, 2},
       {4, 2, 2, 3},
       false,
       ints({{"strides", {2, 2}}}).set_int("group", 2),
       {{2, 2}, {1, 1}, {0, 0}, {0, 0}},
       {6, 5},
       2},
      {"1-D stride 2, pads",
       {1, 2, 5},
       {2, 2, 3},
       true,
       ints({{"strides", {2}}, {"pads", {1, 0}}}),
       {{2}, {1}, {1}, {0}},
       {10}},
      {"3-D strides",
       {1, 1, 3, 2, 3},
       {1, 2, 2, 3, 2},
       true,
       ints({{"strides", {2, 1, 2}}}),
       {{2, 1, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
       {6, 4, 6}},
      // output_shape [10, 8] is past the full extent [9, 7]: no pads, the extra row/column is bias only.
      {"output_shape larger than full",
       {1, 1, 3, 3},
       {1, 2, 3, 3},
       true,
       ints({{"strides", {3, 2}}, {"output_shape", {10, 8}}}),
       {{3, 2}, {1, 1}, {0, 0}, {0, 0}},
       {10, 8}},
      // Full [9, 7] cropped to [6, 4]: total 3 per axis, NOTSET puts the odd one at the beginning.
      {"output_shape smaller than full, pads ignored",
       {1, 1, 3, 3},
       {1, 2, 3, 3},
       false,
       ints({{"strides", {3, 2}}, {"output_shape", {1, 2, 6, 4}}, {"pads", {4, 4, 4, 4}}}),
       {{3, 2}, {1, 1}, {2, 2}, {1, 1}},
       {6, 4}},
      // SAME: out = in * stride = [6, 8]; full [7, 9]: total 1, at the end (UPPER) / beginning (LOWER).
      {"auto_pad SAME_UPPER",
       {1, 2, 3, 4},
       {2, 1, 3, 3},
       false,
       ints({{"strides", {2, 2}}}).set_string("auto_pad", "SAME_UPPER"),
       {{2, 2}, {1, 1}, {0, 0}, {1, 1}},
       {6, 8}},
      {"auto_pad SAME_LOWER",
       {1, 2, 3, 4},
       {2, 1, 3, 3},
       false,
       ints({{"strides", {2, 2}}}).set_string("auto_pad", "SAME_LOWER"),
       {{2, 2}, {1, 1}, {1, 1}, {0, 0}},
       {6, 8}},
      {"float64, stride 2, dilation 2",
       {1, 2, 3, 3},
       {2, 2, 2, 3},
       true,
       ints({{"strides", {2, 2}}, {"dilations", {2, 2}}, {"pads", {1, 0, 0, 1}}}),
       {{2, 2}, {2, 2}, {1, 0}, {0, 1}},
       {6, 8},
       1,
       dtype::float64},
  };
  std::vector<OpCheck> checks;
  uint32_t seed = 100;
  for (auto& c : cases) checks.push_back(transpose_check(c, seed += 3));
  nnvm_test::check_ops(checks, "conv_transpose");
}

TEST_CASE("conv and conv_transpose: shape, attribute and dtype errors") {
  using ops::TensorType;
  auto& reg = ops::default_registry();
  auto conv = [&](std::vector<TensorType> in, ops::Attrs a = {}) {
    return error_id([&] { ops::infer_types(reg.get("conv"), in, a); });
  };
  TensorType x(dtype::float32, {1, 4, 5, 5}), w(dtype::float32, {6, 2, 3, 3});
  CHECK(conv({x, w}, ops::Attrs().set_int("group", 2)) == "(no error)");
  CHECK(ops::infer_types(reg.get("conv"), {x, w}, ops::Attrs().set_int("group", 2))[0].shape.size() == 4);
  // Channels: X has 4, W wants 2 per group.
  CHECK(conv({x, w}) == "nnvm.ops.input_shape");
  CHECK(conv({x, w}, ops::Attrs().set_int("group", 3)) == "nnvm.ops.input_shape");
  CHECK(conv({TensorType(dtype::float32, {1, 6, 5, 5}), TensorType(dtype::float32, {5, 2, 3, 3})},
             ops::Attrs().set_int("group", 3)) == "nnvm.ops.input_shape");  // 5 outputs, 3 groups
  CHECK(conv({x, w}, ops::Attrs().set_int("group", 0)) == "nnvm.ops.attr");
  CHECK(conv({x, TensorType(dtype::float32, {6, 4, 3})}) == "nnvm.ops.input_shape");  // W rank
  CHECK(conv({x, w, TensorType(dtype::float32, {5})}, ops::Attrs().set_int("group", 2)) == "nnvm.ops.input_shape");
  CHECK(conv({x, w}, ints({{"kernel_shape", {3, 2}}}).set_int("group", 2)) == "nnvm.ops.attr");
  CHECK(conv({x, w}, ints({{"pads", {1, 1}}}).set_int("group", 2)) == "nnvm.ops.attr");
  CHECK(conv({x, w}, ints({{"pads", {1, 1, -1, 1}}}).set_int("group", 2)) == "nnvm.ops.attr");
  CHECK(conv({x, w}, ints({{"strides", {1, 0}}}).set_int("group", 2)) == "nnvm.ops.attr");
  CHECK(conv({x, w}, ints({{"dilations", {1}}}).set_int("group", 2)) == "nnvm.ops.attr");
  CHECK(conv({x, w}, ops::Attrs().set_int("group", 2).set_string("auto_pad", "SAME")) == "nnvm.ops.attr");
  // A 3x3 kernel with dilation 3 spans 7 > 5: no output.
  CHECK(conv({x, w}, ints({{"dilations", {3, 1}}}).set_int("group", 2)) == "nnvm.ops.input_shape");
  CHECK(conv({TensorType(dtype::int32, {1, 4, 5, 5}), TensorType(dtype::int32, {6, 2, 3, 3})},
             ops::Attrs().set_int("group", 2)) == "nnvm.ops.input_dtype");
  CHECK(conv({TensorType(dtype::float32, {4, 5}), w}) == "nnvm.ops.input_shape");
  // A symbolic batch flows through; a symbolic spatial extent cannot (pads arithmetic).
  ir::Var batch("n"), height("h");
  auto sym =
      ops::infer_types(reg.get("conv"), {TensorType(dtype::float32, {batch, ir::Expr(4), ir::Expr(5), ir::Expr(5)}), w},
                       ops::Attrs().set_int("group", 2));
  CHECK(ir::to_string(sym[0].shape[0]) == "n");
  CHECK(conv({TensorType(dtype::float32, {ir::Expr(1), ir::Expr(4), height, ir::Expr(5)}), w},
             ops::Attrs().set_int("group", 2)) == "nnvm.ops.input_shape");
  std::string text = error_text([&] {
    ops::infer_types(reg.get("conv"), {x, w}, ints({{"pads", {1, 1}}}).set_int("group", 2));
  });
  CHECK(text.find("pads") != std::string::npos);
  text = error_text([&] {
    ops::infer_types(reg.get("conv"), {x, w}, ints({{"kernel_shape", {3, 2}}}).set_int("group", 2));
  });
  CHECK(text.find("kernel_shape") != std::string::npos);

  auto convt = [&](std::vector<TensorType> in, ops::Attrs a = {}) {
    return error_id([&] { ops::infer_types(reg.get("conv_transpose"), in, a); });
  };
  TensorType tx(dtype::float32, {1, 4, 3, 3}), tw(dtype::float32, {4, 2, 3, 3});
  CHECK(convt({tx, tw}, ops::Attrs().set_int("group", 2)) == "(no error)");
  CHECK(convt({TensorType(dtype::float32, {1, 3, 3, 3}), tw}) == "nnvm.ops.input_shape");  // C != W's first axis
  CHECK(convt({tx, tw}, ops::Attrs().set_int("group", 3)) == "nnvm.ops.input_shape");
  CHECK(convt({tx, tw}, ints({{"strides", {2, 2}}, {"output_padding", {2, 0}}})) == "nnvm.ops.attr");
  CHECK(convt({tx, tw}, ints({{"pads", {3, 3, 2, 2}}})) == "nnvm.ops.input_shape");  // crops all 5
  CHECK(convt({tx, tw}, ints({{"output_shape", {4}}})) == "nnvm.ops.attr");
  CHECK(convt({tx, tw}, ints({{"kernel_shape", {2, 2}}})) == "nnvm.ops.attr");
  CHECK(convt({tx, tw, TensorType(dtype::float32, {4})}) == "nnvm.ops.input_shape");  // M is 2
}

}  // namespace ops_conv_ops
