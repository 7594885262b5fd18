// Models at opsets 1 to 6 (the first ONNX releases' forms of the operators), built here, imported,
// compiled and run; each result is checked against a plain loop in the test. One case per version
// step in importers/onnx/legacy_adapters.cpp, then the later steps reached from opset 1.
#include "support/pch.hpp"

#include <cmath>

#include "onnx_test_util.hpp"

namespace onnx_legacy_opsets {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {

// Small signed values, different for each `phase`, none of them zero.
NDArray ramp(std::vector<int64_t> shape, int phase = 0, float scale = 0.25f) {
  NDArray a(dtype::float32, std::move(shape));
  auto v = a.values<float>();
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * (float(int((i * 7 + size_t(phase)) % 13) - 6) + 0.5f);
  return a;
}

std::vector<float> floats(const NDArray& a) {
  auto v = a.values<float>();
  return {v.begin(), v.end()};
}

// Within the project's fp32 tolerance (rtol 1e-3, atol 1e-5) everywhere; names the first miss.
void check_close(const NDArray& got, const std::vector<int64_t>& shape, const std::vector<float>& want) {
  REQUIRE(got.dtype() == dtype::float32);
  REQUIRE(got.shape() == shape);
  auto g = got.values<float>();
  REQUIRE(g.size() == want.size());
  size_t k = 0;
  while (k < want.size() && std::abs(g[k] - want[k]) <= 1e-5 + 1e-3 * std::abs(want[k])) ++k;
  CHECK_MESSAGE(k == want.size(), "element ", k, ": got ", (k < g.size() ? g[k] : 0), ", want ",
                (k < want.size() ? want[k] : 0));
}

graph::Graph import(const Model& m, const std::string& name) { return oi::import_model(m.save(scratch(name))); }

// Imports, compiles for the host and runs with `inputs` in graph-input order.
std::vector<NDArray> run(const Model& m, const std::string& name, const std::vector<NDArray>& inputs) {
  return graph::compile(import(m, name)).run(inputs);
}

bool any_attr(const graph::Graph& g, const std::string& name) {
  for (auto& node : g.nodes)
    if (node.attrs.has(name)) return true;
  return false;
}

// The reasons check_support gives, one per line.
std::string reasons(const Model& m, const std::string& name) {
  std::string s;
  for (auto& item : oi::check_support(m.save(scratch(name))).items) s += item.reason + "\n";
  return s;
}

}  // namespace

TEST_CASE("onnx opset 1: consumed_inputs leaves the graph and the ops compute as in version 6") {
  Model m(1);
  m.input("x", T::FLOAT, {2, 3});
  attr_ints(m.node("Relu", {"x"}, {"r"}, "relu"), "consumed_inputs", {0});
  attr_ints(m.node("Add", {"r", "x"}, {"s"}, "add"), "consumed_inputs", {0, 0});
  attr_ints(m.node("Sigmoid", {"s"}, {"y"}, "sigmoid"), "consumed_inputs", {0});
  m.output("y");
  graph::Graph g = import(m, "consumed_inputs");
  CHECK(!any_attr(g, "consumed_inputs"));
  NDArray x = ramp({2, 3});
  std::vector<float> want;
  for (float v : floats(x)) want.push_back(1.0f / (1.0f + std::exp(-(std::max(v, 0.0f) + v))));
  check_close(graph::compile(g).run({x})[0], {2, 3}, want);
}

TEST_CASE("onnx opset 6: broadcast = 1 aligns B with A at axis; the result equals the legacy rule") {
  Model m(6);
  m.input("a", T::FLOAT, {2, 3, 4, 5});
  m.input("b", T::FLOAT, {3, 4});
  m.input("c", T::FLOAT, {5});
  m.input("d", T::FLOAT, {1, 1});
  m.input("e", T::FLOAT, {2});
  auto* add = m.node("Add", {"a", "b"}, {"y_add"}, "add");
  attr_int(add, "broadcast", 1);
  attr_int(add, "axis", 1);
  attr_int(m.node("Mul", {"a", "c"}, {"y_mul"}, "mul"), "broadcast", 1);  // no axis: suffix
  auto* sub = m.node("Sub", {"a", "d"}, {"y_sub"}, "sub");
  attr_int(sub, "broadcast", 1);
  attr_int(sub, "axis", 0);  // one element: any axis
  auto* pow = m.node("Pow", {"a", "e"}, {"y_pow"}, "pow");
  attr_int(pow, "broadcast", 1);
  attr_int(pow, "axis", 0);
  auto* gt = m.node("Greater", {"a", "b"}, {"y_gt"}, "greater");
  attr_int(gt, "broadcast", 1);
  attr_int(gt, "axis", 1);
  for (const char* y : {"y_add", "y_mul", "y_sub", "y_pow", "y_gt"}) m.output(y);

  NDArray a = ramp({2, 3, 4, 5}), b = ramp({3, 4}, 3), c = ramp({5}, 5), d = ramp({1, 1}, 1), e(dtype::float32, {2});
  e.values<float>()[0] = 2.0f;
  e.values<float>()[1] = 3.0f;
  std::vector<NDArray> out = run(m, "legacy_broadcast", {a, b, c, d, e});
  REQUIRE(out.size() == 5);
  auto A = a.values<float>(), B = b.values<float>(), C = c.values<float>(), E = e.values<float>();
  float D = d.values<float>()[0];
  std::vector<float> w_add, w_mul, w_sub, w_pow;
  std::vector<bool> w_gt;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k)
        for (int64_t l = 0; l < 5; ++l) {
          float x = A[size_t(((i * 3 + j) * 4 + k) * 5 + l)];
          float bj = B[size_t(j * 4 + k)];
          w_add.push_back(x + bj);
          w_mul.push_back(x * C[size_t(l)]);
          w_sub.push_back(x - D);
          w_pow.push_back(std::pow(x, E[size_t(i)]));
          w_gt.push_back(x > bj);
        }
  check_close(out[0], {2, 3, 4, 5}, w_add);
  check_close(out[1], {2, 3, 4, 5}, w_mul);
  check_close(out[2], {2, 3, 4, 5}, w_sub);
  check_close(out[3], {2, 3, 4, 5}, w_pow);
  REQUIRE(out[4].dtype() == dtype::boolean);
  auto gt_values = out[4].values<bool>();
  CHECK(std::vector<bool>(gt_values.begin(), gt_values.end()) == w_gt);
}

TEST_CASE("onnx opset 6: without broadcast = 1 the shapes must be equal; bad axes are named") {
  auto model = [](int64_t opset, std::vector<int64_t> b_shape, std::optional<int64_t> axis) {
    Model m(opset);
    m.input("a", T::FLOAT, {2, 3});
    m.input("b", T::FLOAT, b_shape);
    auto* n = m.node("Add", {"a", "b"}, {"y"}, "legacy_add");
    if (axis) {
      attr_int(n, "broadcast", 1);
      attr_int(n, "axis", *axis);
    }
    m.output("y");
    return m;
  };
  NDArray a = ramp({2, 3}), b = ramp({2, 3}, 4);
  std::vector<float> want;
  for (size_t i = 0; i < 6; ++i) want.push_back(a.values<float>()[i] + b.values<float>()[i]);
  check_close(run(model(6, {2, 3}, std::nullopt), "equal_shapes", {a, b})[0], {2, 3}, want);

  auto [id, text] = error_of([&] { import(model(6, {3}, std::nullopt), "unequal"); });
  CHECK(id == "nnvm.onnx.shape");
  CHECK(text.find("broadcast = 1") != std::string::npos);
  CHECK(text.find("node legacy_add (Add)") != std::string::npos);
  CHECK(text.find("model.onnx") != std::string::npos);
  // From opset 7 the same node broadcasts numpy-style.
  CHECK_NOTHROW(import(model(7, {3}, std::nullopt), "numpy"));

  std::tie(id, text) = error_of([&] { import(model(6, {2, 3}, 1), "axis_past_end"); });
  CHECK(id == "nnvm.onnx.attribute");
  CHECK(text.find("axis 1") != std::string::npos);
  std::tie(id, text) = error_of([&] { import(model(6, {1, 2, 3}, 0), "b_bigger"); });
  CHECK(id == "nnvm.onnx.shape");
  CHECK(text.find("more axes than A") != std::string::npos);
}

TEST_CASE("onnx opset 6: Gemm's broadcast flag; without it C must be (M, N)") {
  auto model = [](int64_t broadcast, std::vector<int64_t> c_shape) {
    Model m(6);
    m.input("a", T::FLOAT, {2, 3});
    m.input("b", T::FLOAT, {4, 3});
    m.input("c", T::FLOAT, c_shape);
    auto* n = m.node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
    attr_int(n, "transB", 1);
    attr_int(n, "broadcast", broadcast);
    attr_float(n, "alpha", 0.5f);
    attr_float(n, "beta", 2.0f);
    m.output("y");
    return m;
  };
  NDArray a = ramp({2, 3}), b = ramp({4, 3}, 2);
  auto A = a.values<float>(), B = b.values<float>();
  auto want = [&](const NDArray& c, bool row) {
    std::vector<float> out;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 4; ++j) {
        float acc = 0;
        for (int64_t k = 0; k < 3; ++k) acc += A[size_t(i * 3 + k)] * B[size_t(j * 3 + k)];
        out.push_back(0.5f * acc + 2.0f * c.values<float>()[size_t(row ? j : i * 4 + j)]);
      }
    return out;
  };
  NDArray c_row = ramp({4}, 6), c_full = ramp({2, 4}, 7);
  check_close(run(model(1, {4}), "gemm_broadcast", {a, b, c_row})[0], {2, 4}, want(c_row, true));
  check_close(run(model(0, {2, 4}), "gemm_full", {a, b, c_full})[0], {2, 4}, want(c_full, false));
  CHECK(!any_attr(import(model(1, {4}), "gemm_attrs"), "broadcast"));
  auto [id, text] = error_of([&] { import(model(0, {4}), "gemm_bad_c"); });
  CHECK(id == "nnvm.onnx.shape");
  CHECK(text.find("(M, N) = (2, 4)") != std::string::npos);
}

TEST_CASE("onnx opset 6: Sum, Max, Min and Mean take inputs of one shape (before opset 8)") {
  Model m(6);
  for (const char* x : {"x", "y", "z"}) m.input(x, T::FLOAT, {2, 3});
  m.node("Sum", {"x", "y", "z"}, {"sum"});
  m.node("Max", {"x", "y", "z"}, {"max"});
  m.node("Min", {"x", "y"}, {"min"});
  m.node("Mean", {"x", "y", "z"}, {"mean"});
  for (const char* y : {"sum", "max", "min", "mean"}) m.output(y);
  NDArray x = ramp({2, 3}), y = ramp({2, 3}, 4), z = ramp({2, 3}, 9);
  std::vector<NDArray> out = run(m, "variadic6", {x, y, z});
  std::vector<float> w_sum, w_max, w_min, w_mean;
  for (size_t i = 0; i < 6; ++i) {
    float a = x.values<float>()[i], b = y.values<float>()[i], c = z.values<float>()[i];
    w_sum.push_back(a + b + c);
    w_max.push_back(std::max({a, b, c}));
    w_min.push_back(std::min(a, b));
    w_mean.push_back((a + b + c) / 3);
  }
  check_close(out[0], {2, 3}, w_sum);
  check_close(out[1], {2, 3}, w_max);
  check_close(out[2], {2, 3}, w_min);
  check_close(out[3], {2, 3}, w_mean);

  for (int64_t opset : {6, 7, 8}) {
    Model bad(opset);
    bad.input("x", T::FLOAT, {2, 3});
    bad.input("row", T::FLOAT, {3});
    bad.node("Max", {"x", "row"}, {"y"}, "max");
    bad.output("y");
    auto [id, text] = error_of([&] { import(bad, "variadic_shapes" + std::to_string(opset)); });
    CAPTURE(opset);
    if (opset < 8) {
      CHECK(id == "nnvm.onnx.shape");
      CHECK(text.find("Max before opset 8 takes inputs of one shape") != std::string::npos);
    } else {
      CHECK(id == "(no error)");
    }
  }
}

TEST_CASE("onnx opset 5: BatchNormalization with consumed_inputs and is_test, Dropout with is_test") {
  Model m(5);
  m.input("x", T::FLOAT, {2, 3, 2, 2});
  NDArray scale = ramp({3}, 1), bias = ramp({3}, 2), mean = ramp({3}, 3), var(dtype::float32, {3});
  for (size_t c = 0; c < 3; ++c) var.values<float>()[c] = 0.5f + float(c);
  for (auto& [name, arr] : std::vector<std::pair<std::string, NDArray*>>{
           {"scale", &scale}, {"bias", &bias}, {"mean", &mean}, {"var", &var}}) {
    auto* t = m.initializer(name, T::FLOAT, {3});
    for (float v : floats(*arr)) t->add_float_data(v);
  }
  auto* bn = m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"bn"}, "bn");
  attr_ints(bn, "consumed_inputs", {0, 0, 0, 1, 1});
  attr_int(bn, "is_test", 1);
  attr_float(bn, "epsilon", 1e-3f);
  attr_float(bn, "momentum", 0.9f);
  auto* drop = m.node("Dropout", {"bn"}, {"y"}, "drop");
  attr_int(drop, "is_test", 1);
  attr_float(drop, "ratio", 0.3f);
  m.output("y");
  graph::Graph g = import(m, "batchnorm5");
  CHECK(!any_attr(g, "is_test"));
  CHECK(!any_attr(g, "consumed_inputs"));
  NDArray x = ramp({2, 3, 2, 2});
  std::vector<float> want;
  for (size_t i = 0; i < 24; ++i) {
    size_t c = (i / 4) % 3;
    float s = scale.values<float>()[c], b = bias.values<float>()[c], mu = mean.values<float>()[c];
    float v = var.values<float>()[c];
    want.push_back(s * (x.values<float>()[i] - mu) / std::sqrt(v + 1e-3f) + b);
  }
  check_close(graph::compile(g).run({x})[0], {2, 3, 2, 2}, want);

  for (const char* op : {"BatchNormalization", "Dropout"}) {
    CAPTURE(op);
    Model training(6);
    training.input("x", T::FLOAT, {2, 3});
    for (const char* p : {"s", "b", "m", "v"}) training.input(p, T::FLOAT, {3});
    auto* n = std::string(op) == "Dropout" ? training.node(op, {"x"}, {"y"}, "train")
                                           : training.node(op, {"x", "s", "b", "m", "v"}, {"y"}, "train");
    attr_int(n, "is_test", 0);
    training.output("y");
    CHECK(reasons(training, "training").find(std::string(op) + " before opset 7 with is_test = 0 (training)") !=
          std::string::npos);
  }
  Model per_activation(6);
  per_activation.input("x", T::FLOAT, {2, 3});
  for (const char* p : {"s", "b", "m", "v"}) per_activation.input(p, T::FLOAT, {3});
  attr_int(per_activation.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}), "spatial", 0);
  per_activation.output("y");
  CHECK(reasons(per_activation, "spatial0").find("spatial = 0") != std::string::npos);
}

TEST_CASE("onnx opset 5: Cast names its target type") {
  auto model = [](const std::string& to) {
    Model m(5);
    m.input("x", T::FLOAT, {2, 3});
    attr_string(m.node("Cast", {"x"}, {"y"}, "cast"), "to", to);
    m.output("y");
    return m;
  };
  NDArray x = ramp({2, 3}, 0, 1.7f);
  for (const char* to : {"INT32", "int32"}) {
    CAPTURE(to);
    std::vector<NDArray> out = run(model(to), "cast5", {x});
    REQUIRE(out[0].dtype() == dtype::int32);
    for (size_t i = 0; i < 6; ++i) CHECK(out[0].values<int32_t>()[i] == int32_t(x.values<float>()[i]));
  }
  CHECK(reasons(model("FLOT"), "cast_unknown").find("Cast to 'FLOT', which is no TensorProto data type name") !=
        std::string::npos);
  CHECK(reasons(model("STRING"), "cast_string").find("Cast to ") != std::string::npos);
  CHECK(reasons(model("FLOAT"), "cast_float").empty());
}

TEST_CASE("onnx opsets 1-4: Concat's default axis, Pad's paddings, Reshape's shape attribute") {
  Model m(1);
  m.input("x", T::FLOAT, {2, 2});
  m.input("z", T::FLOAT, {2, 3});
  m.node("Concat", {"x", "z"}, {"cat"}, "concat");  // axis 1 by default
  auto* pad = m.node("Pad", {"z"}, {"padded"}, "pad");
  attr_ints(pad, "paddings", {0, 1, 1, 0});  // axis 0: 0 before, 1 after; axis 1: 1 before, 0 after
  attr_float(pad, "value", 9.5f);
  auto* reshape = m.node("Reshape", {"cat"}, {"flat"}, "reshape");
  attr_ints(reshape, "shape", {5, -1});
  attr_ints(reshape, "consumed_inputs", {0});
  for (const char* y : {"cat", "padded", "flat"}) m.output(y);
  NDArray x = ramp({2, 2}), z = ramp({2, 3}, 5);
  std::vector<NDArray> out = run(m, "concat_pad_reshape", {x, z});
  auto X = x.values<float>(), Z = z.values<float>();
  std::vector<float> cat;
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < 2; ++j) cat.push_back(X[i * 2 + j]);
    for (size_t j = 0; j < 3; ++j) cat.push_back(Z[i * 3 + j]);
  }
  check_close(out[0], {2, 5}, cat);
  std::vector<float> padded;
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 4; ++j) padded.push_back(i < 2 && j >= 1 ? Z[i * 3 + j - 1] : 9.5f);
  check_close(out[1], {3, 4}, padded);
  check_close(out[2], {5, 2}, cat);
}

TEST_CASE("onnx opset 1: Selu's version-1 defaults are spelled out") {
  Model m(1);
  m.input("x", T::FLOAT, {2, 3});
  m.node("Selu", {"x"}, {"y"}, "selu");
  m.output("y");
  graph::Graph g = import(m, "selu1");
  const graph::Node& selu = g.nodes[g.find("selu")];
  CHECK(selu.attrs.get_float("alpha") == double(1.6732f));
  CHECK(selu.attrs.get_float("gamma") == double(1.0507f));
  NDArray x = ramp({2, 3});
  std::vector<float> want;
  for (float v : floats(x)) want.push_back(1.0507f * (v > 0 ? v : 1.6732f * (std::exp(v) - 1)));
  check_close(graph::compile(g).run({x})[0], {2, 3}, want);
}

TEST_CASE("onnx opset 5: Tile repeats along one axis given as constant inputs") {
  Model m(5);
  m.input("x", T::FLOAT, {2, 3});
  m.initializer("tiles", T::FLOAT, {})->add_float_data(3);  // version 1 types them like the input
  m.initializer("axis", T::FLOAT, {})->add_float_data(1);
  m.node("Tile", {"x", "tiles", "axis"}, {"y"}, "tile");
  m.output("y");
  NDArray x = ramp({2, 3});
  std::vector<float> want;
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 9; ++j) want.push_back(x.values<float>()[i * 3 + j % 3]);
  check_close(run(m, "tile5", {x})[0], {2, 9}, want);

  Model dynamic(5);
  dynamic.input("x", T::FLOAT, {2, 3});
  dynamic.input("tiles", T::FLOAT, {});
  dynamic.initializer("axis", T::FLOAT, {})->add_float_data(0);
  dynamic.node("Tile", {"x", "tiles", "axis"}, {"y"}, "tile");
  dynamic.output("y");
  auto [id, text] = error_of([&] { import(dynamic, "tile_dynamic"); });
  CHECK(id == "nnvm.onnx.unsupported");
  CHECK(text.find("constant tiles") != std::string::npos);
}

TEST_CASE("onnx opset 6: Upsample's height_scale and width_scale, nearest and bilinear") {
  auto model = [](const std::string& mode, float h, float w) {
    Model m(6);
    m.input("x", T::FLOAT, {1, 2, 2, 3});
    auto* n = m.node("Upsample", {"x"}, {"y"}, "up");
    attr_float(n, "height_scale", h);
    attr_float(n, "width_scale", w);
    attr_string(n, "mode", mode);
    m.output("y");
    return m;
  };
  NDArray x = ramp({1, 2, 2, 3});
  auto X = x.values<float>();
  std::vector<float> nearest;
  for (size_t c = 0; c < 2; ++c)
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 9; ++j) nearest.push_back(X[(c * 2 + i / 2) * 3 + j / 3]);
  check_close(run(model("nearest", 2, 3), "upsample_nearest", {x})[0], {1, 2, 4, 9}, nearest);
  // Bilinear: output (i, j) reads the input at (i / 2, j / 2), clamped at the last row and column.
  std::vector<float> bilinear;
  for (size_t c = 0; c < 2; ++c)
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 6; ++j) {
        float y = float(i) / 2, xx = float(j) / 2;
        size_t y0 = size_t(y), x0 = size_t(xx), y1 = std::min<size_t>(y0 + 1, 1), x1 = std::min<size_t>(x0 + 1, 2);
        float fy = y - float(y0), fx = xx - float(x0);
        auto at = [&](size_t r, size_t q) { return X[(c * 2 + r) * 3 + q]; };
        bilinear.push_back((1 - fy) * ((1 - fx) * at(y0, x0) + fx * at(y0, x1)) +
                           fy * ((1 - fx) * at(y1, x0) + fx * at(y1, x1)));
      }
  check_close(run(model("bilinear", 2, 2), "upsample_bilinear", {x})[0], {1, 2, 4, 6}, bilinear);

  Model flat(6);
  flat.input("x", T::FLOAT, {2, 3});
  auto* n = flat.node("Upsample", {"x"}, {"y"}, "up");
  attr_float(n, "height_scale", 2);
  attr_float(n, "width_scale", 2);
  flat.output("y");
  auto [id, text] = error_of([&] { import(flat, "upsample_rank2"); });
  CHECK(id == "nnvm.onnx.shape");
  CHECK(text.find("(N, C, H, W)") != std::string::npos);
}

TEST_CASE("onnx opset 1: LpPool and GlobalLpPool take p as a float") {
  Model m(1);
  m.input("x", T::FLOAT, {1, 1, 3, 3});
  auto* lp = m.node("LpPool", {"x"}, {"pooled"}, "lp");
  attr_ints(lp, "kernel_shape", {2, 2});
  attr_float(lp, "p", 2.0f);
  attr_float(m.node("GlobalLpPool", {"x"}, {"global"}, "global_lp"), "p", 1.0f);
  m.output("pooled");
  m.output("global");
  NDArray x = ramp({1, 1, 3, 3});
  auto X = x.values<float>();
  std::vector<float> pooled;
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 2; ++j) {
      float acc = 0;
      for (size_t a = 0; a < 2; ++a)
        for (size_t b = 0; b < 2; ++b) acc += X[(i + a) * 3 + j + b] * X[(i + a) * 3 + j + b];
      pooled.push_back(std::sqrt(acc));
    }
  float l1 = 0;
  for (float v : X) l1 += std::abs(v);
  std::vector<NDArray> out = run(m, "lp_pool1", {x});
  check_close(out[0], {1, 1, 2, 2}, pooled);
  check_close(out[1], {1, 1, 1, 1}, {l1});

  Model fractional(1);
  fractional.input("x", T::FLOAT, {1, 1, 3, 3});
  attr_float(fractional.node("GlobalLpPool", {"x"}, {"y"}), "p", 2.5f);
  fractional.output("y");
  CHECK(reasons(fractional, "lp_fractional").find("GlobalLpPool before opset 2 with p = 2.5") != std::string::npos);
}

TEST_CASE("onnx opset 6: PRelu's slope of C values applies per channel") {
  Model m(6);
  m.input("x", T::FLOAT, {2, 3, 2, 2});
  m.input("slope", T::FLOAT, {3});
  m.node("PRelu", {"x", "slope"}, {"y"}, "prelu");
  m.output("y");
  NDArray x = ramp({2, 3, 2, 2}), slope = ramp({3}, 2);
  std::vector<float> want;
  for (size_t i = 0; i < 24; ++i) {
    float v = x.values<float>()[i];
    want.push_back(v < 0 ? v * slope.values<float>()[(i / 4) % 3] : v);
  }
  check_close(run(m, "prelu6", {x, slope})[0], {2, 3, 2, 2}, want);
}

TEST_CASE("onnx opset 1: the later steps apply too (Softmax, Slice, Squeeze, Clip, Split, ReduceMean, TopK)") {
  Model m(1);
  m.input("x", T::FLOAT, {2, 3, 4});
  m.node("Softmax", {"x"}, {"s"}, "softmax");  // version 1: rows of the input flattened at axis 1
  auto* slice = m.node("Slice", {"s"}, {"sl"}, "slice");
  attr_ints(slice, "starts", {1, 0});
  attr_ints(slice, "ends", {3, 2});
  attr_ints(slice, "axes", {1, 2});
  attr_ints(m.node("Unsqueeze", {"sl"}, {"u"}, "unsqueeze"), "axes", {0});  // (1, 2, 2, 2)
  attr_ints(m.node("Squeeze", {"u"}, {"sq"}, "squeeze"), "axes", {0});
  auto* clip = m.node("Clip", {"sq"}, {"c"}, "clip");
  attr_float(clip, "min", 0.02f);
  attr_float(clip, "max", 0.2f);
  attr_ints(clip, "consumed_inputs", {0});
  auto* split = m.node("Split", {"x"}, {"p", "q"}, "split");
  attr_int(split, "axis", 2);
  attr_ints(split, "split", {1, 3});
  auto* mean = m.node("ReduceMean", {"q"}, {"mean"}, "mean");
  attr_ints(mean, "axes", {1});
  attr_int(mean, "keepdims", 0);
  attr_int(m.node("TopK", {"q"}, {"top", "top_i"}, "topk"), "k", 2);
  for (const char* y : {"c", "p", "mean", "top"}) m.output(y);
  NDArray x = ramp({2, 3, 4});
  auto X = x.values<float>();
  std::vector<NDArray> out = run(m, "chain1", {x});

  std::vector<float> soft(24);
  for (size_t b = 0; b < 2; ++b) {  // each batch row of 12 is one softmax
    float total = 0;
    for (size_t k = 0; k < 12; ++k) total += std::exp(X[b * 12 + k]);
    for (size_t k = 0; k < 12; ++k) soft[b * 12 + k] = std::exp(X[b * 12 + k]) / total;
  }
  std::vector<float> clipped, first, means, top;
  for (size_t b = 0; b < 2; ++b)
    for (size_t r = 1; r < 3; ++r)
      for (size_t k = 0; k < 2; ++k) clipped.push_back(std::clamp(soft[b * 12 + r * 4 + k], 0.02f, 0.2f));
  for (size_t b = 0; b < 2; ++b)
    for (size_t r = 0; r < 3; ++r) first.push_back(X[b * 12 + r * 4]);
  for (size_t b = 0; b < 2; ++b)
    for (size_t k = 1; k < 4; ++k) means.push_back((X[b * 12 + k] + X[b * 12 + 4 + k] + X[b * 12 + 8 + k]) / 3);
  for (size_t b = 0; b < 2; ++b)
    for (size_t r = 0; r < 3; ++r) {
      std::vector<float> row{X[b * 12 + r * 4 + 1], X[b * 12 + r * 4 + 2], X[b * 12 + r * 4 + 3]};
      std::sort(row.begin(), row.end(), std::greater<>());
      top.push_back(row[0]);
      top.push_back(row[1]);
    }
  check_close(out[0], {2, 2, 2}, clipped);
  check_close(out[1], {2, 3, 1}, first);
  check_close(out[2], {2, 3}, means);
  check_close(out[3], {2, 3, 2}, top);
}

TEST_CASE("onnx: every opset from 1 imports; opset 0 and opsets past the newest are refused") {
  for (int64_t opset : {int64_t(0), oi::newest_opset + 1}) {
    Model m(opset);
    m.input("x", T::FLOAT, {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    auto [id, text] = error_of([&] { import(m, "opset_out_of_range"); });
    CAPTURE(opset);
    CHECK(id == "nnvm.onnx.unsupported");
    CHECK(text.find(str_cat("opset is ", opset, "; nnvm imports opsets 1 to ", oi::newest_opset)) != std::string::npos);
  }
  for (int64_t opset = 1; opset <= oi::newest_opset; ++opset) {
    Model m(opset);
    m.input("x", T::FLOAT, {2});
    m.node("Relu", {"x"}, {"y"});
    m.output("y");
    CAPTURE(opset);
    CHECK(oi::check_support(m.save(scratch("every_opset"))).supported());
  }
}

}  // namespace onnx_legacy_opsets
