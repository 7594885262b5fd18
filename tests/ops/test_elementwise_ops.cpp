// Elementwise and broadcast ops: each built-in through ops::build, the interpreter and the C JIT
// (one compiler call per group) on odd shapes against plain loops; broadcasting of static and
// symbolic shapes; attribute and shape errors.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <cmath>

namespace ops_elementwise_ops {

using namespace nnvm;
using nnvm_test::error_id;

namespace {

template <class F>
std::string error_text(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

struct Case {
  std::string label;
  ops::BuiltOp built;
  std::vector<NDArray> inputs;
  std::vector<int64_t> out_shape;
  std::vector<float> want;
};

void check_cases(std::vector<Case>& cases, const std::string& group) {
  std::vector<ops::BuiltOp> built;
  for (auto& c : cases) built.push_back(c.built);
  auto kernels = ops::jit(built);
  std::vector<ir::LoweredFunc> fns;
  for (auto& b : built) fns.push_back(b.func);
  std::string strict = nnvm_test::strict_compile(target::emit_c(fns), "ops_" + group);
  CHECK_MESSAGE(strict.empty(), group, ": emitted C fails the strict flags:\n", strict);
  for (size_t i = 0; i < cases.size(); ++i) {
    for (int engine = 0; engine < 2; ++engine) {
      NDArray out(dtype::float32, cases[i].out_shape);
      std::fill(out.values<float>().begin(), out.values<float>().end(), NAN);
      std::vector<BufferView> views;
      for (auto& in : cases[i].inputs) views.push_back(in.view());
      views.push_back(out.view());
      if (engine == 0) target::interpret(cases[i].built.func, std::span<const BufferView>(views));
      else kernels[i].call(std::span<const BufferView>(views));
      INFO(cases[i].label, engine == 0 ? " (interpreter)" : " (C JIT)");
      std::string diff = nnvm_test::compare<float>(out.values<float>(), cases[i].want);
      CHECK_MESSAGE(diff.empty(), diff);
    }
  }
}

std::vector<ops::TensorType> types_of(const std::vector<NDArray>& arrays) {
  std::vector<ops::TensorType> out;
  for (auto& a : arrays) out.emplace_back(a.dtype(), a.shape());
  return out;
}

std::vector<ops::TensorType> types_of(const NDArray& a) { return {ops::TensorType(a.dtype(), a.shape())}; }

ops::BuildOptions named(std::string name) {
  ops::BuildOptions o;
  o.name = std::move(name);
  return o;
}

struct UnaryVariant {
  std::string op;
  ops::Attrs attrs;
  double lo, hi;  // input range, inside the function's domain
  std::function<double(double)> ref;
};

// Output element i of a right-aligned broadcast reads these flat input offsets.
size_t broadcast_offset(const std::vector<int64_t>& in, const std::vector<int64_t>& out, size_t flat) {
  std::vector<int64_t> idx(out.size());
  for (size_t d = out.size(); d-- > 0;) {
    idx[d] = int64_t(flat) % out[d];
    flat /= size_t(out[d]);
  }
  size_t off = 0, skip = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d) off = off * size_t(in[d]) + size_t(in[d] == 1 ? 0 : idx[skip + d]);
  return off;
}

}  // namespace

TEST_CASE("unary elementwise ops: every built-in on an odd shape, interpreter and C JIT against <cmath>") {
  const double inv_sqrt2 = 1.0 / std::sqrt(2.0);
  std::vector<UnaryVariant> variants{
      {"abs", {}, -3, 3, [](double x) { return std::fabs(x); }},
      {"ceil", {}, -3, 3, [](double x) { return std::ceil(x); }},
      {"cos", {}, -3, 3, [](double x) { return std::cos(x); }},
      {"erf", {}, -2, 2, [](double x) { return std::erf(x); }},
      {"exp", {}, -3, 3, [](double x) { return std::exp(x); }},
      {"floor", {}, -3, 3, [](double x) { return std::floor(x); }},
      {"log", {}, 0.1, 5, [](double x) { return std::log(x); }},
      {"neg", {}, -3, 3, [](double x) { return -x; }},
      {"reciprocal", {}, 0.5, 4, [](double x) { return 1.0 / x; }},
      {"sigmoid", {}, -5, 5, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
      {"sin", {}, -3, 3, [](double x) { return std::sin(x); }},
      {"sqrt", {}, 0.01, 9, [](double x) { return std::sqrt(x); }},
      {"tanh", {}, -3, 3, [](double x) { return std::tanh(x); }},
      {"leaky_relu", {}, -3, 3, [](double x) { return x >= 0 ? x : 0.01 * x; }},
      {"leaky_relu", ops::Attrs().set_float("alpha", 0.3), -3, 3, [](double x) { return x >= 0 ? x : 0.3 * x; }},
      {"hard_sigmoid", {}, -4, 4, [](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); }},
      {"hard_sigmoid", ops::Attrs().set_float("alpha", 0.5).set_float("beta", 0.25), -4, 4,
       [](double x) { return std::max(0.0, std::min(1.0, 0.5 * x + 0.25)); }},
      {"softplus", {}, -20, 20, [](double x) { return std::log(1.0 + std::exp(x)); }},
      {"gelu", {}, -4, 4, [&](double x) { return 0.5 * x * (1.0 + std::erf(x * inv_sqrt2)); }},
      {"gelu", ops::Attrs().set_string("approximate", "tanh"), -4, 4,
       [](double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }},
      {"clip", ops::Attrs().set_float("min", -0.5).set_float("max", 0.75), -2, 2,
       [](double x) { return std::min(std::max(x, -0.5), 0.75); }},
      {"clip", ops::Attrs().set_int("max", 1), -2, 2, [](double x) { return std::min(x, 1.0); }},
  };
  std::vector<Case> cases;
  uint32_t seed = 300;
  std::vector<int64_t> shape{3, 5, 7};
  for (auto& v : variants) {
    NDArray x = nnvm_test::random_array(dtype::float32, shape, seed++, v.lo, v.hi);
    std::vector<float> want;
    for (float e : x.values<float>()) want.push_back(float(v.ref(double(e))));
    auto built = ops::build(ops::get_op(v.op), types_of(x), v.attrs, {}, named(str_cat("un_", cases.size())));
    cases.push_back({str_cat(v.op, " ", cases.size()), std::move(built), {}, shape, std::move(want)});
    cases.back().inputs.push_back(std::move(x));
  }
  // Clip with its bounds as inputs (opset 11): a rank-0 min and a one-element max.
  {
    std::vector<NDArray> in;
    in.push_back(nnvm_test::random_array(dtype::float32, shape, seed++, -2, 2));
    in.emplace_back(dtype::float32, std::vector<int64_t>{});
    in.emplace_back(dtype::float32, std::vector<int64_t>{1});
    in[1].values<float>()[0] = -0.25f;
    in[2].values<float>()[0] = 0.5f;
    std::vector<float> want;
    for (float e : in[0].values<float>()) want.push_back(std::min(std::max(e, -0.25f), 0.5f));
    auto built = ops::build(ops::get_op_by_importer_name("onnx:Clip"), types_of(in), {}, {}, named("clip_inputs"));
    cases.push_back({"clip with bound inputs", std::move(built), std::move(in), shape, std::move(want)});
  }
  check_cases(cases, "unary");

  for (auto& [onnx, name] : std::vector<std::pair<std::string, std::string>>{
           {"onnx:Exp", "exp"}, {"onnx:Erf", "erf"}, {"onnx:LeakyRelu", "leaky_relu"}, {"onnx:HardSigmoid", "hard_sigmoid"},
           {"onnx:Softplus", "softplus"}, {"onnx:Gelu", "gelu"}, {"onnx:Reciprocal", "reciprocal"}, {"onnx:Neg", "neg"}})
    CHECK(ops::get_op_by_importer_name(onnx).name == name);
  // The default schedule vectorizes an odd innermost extent, with a scalar tail.
  auto sched = ops::build(ops::get_op("exp"), {{dtype::float32, {3, 5, 37}}});
  CHECK(ir::to_string(sched.func).find("ramp(") != std::string::npos);
}

TEST_CASE("unary ops: integer inputs where they make sense, and dtype/attribute errors") {
  NDArray x = nnvm_test::random_array(dtype::int32, {5, 3}, 7, -9, 9), y1(dtype::int32, {5, 3}), y2(dtype::int32, {5, 3});
  auto b_abs = ops::build(ops::get_op("abs"), types_of(x), {}, {}, named("abs_i32"));
  auto b_neg = ops::build(ops::get_op("neg"), types_of(x), {}, {}, named("neg_i32"));
  auto kernels = ops::jit(std::vector<ops::BuiltOp>{b_abs, b_neg});
  target::interpret(b_abs.func, x, y1);
  kernels[1](x, y2);
  for (size_t i = 0; i < 15; ++i) {
    CHECK(y1.values<int32_t>()[i] == std::abs(x.values<int32_t>()[i]));
    CHECK(y2.values<int32_t>()[i] == -x.values<int32_t>()[i]);
  }
  ops::TensorType i32{dtype::int32, {4}}, f32{dtype::float32, {4}};
  CHECK(error_id([&] { ops::build(ops::get_op("exp"), {i32}); }) == "nnvm.ops.input_dtype");
  CHECK(error_id([&] { ops::build(ops::get_op("gelu"), {f32}, ops::Attrs().set_string("approximate", "fast")); }) ==
        "nnvm.ops.attr");
  CHECK(error_id([&] { ops::build(ops::get_op("leaky_relu"), {f32}, ops::Attrs().set_string("alpha", "x")); }) ==
        "nnvm.ops.attr");
  std::string msg = error_text([&] { ops::build(ops::get_op("clip"), {f32, {dtype::float32, {2}}}); });
  CHECK(msg.find("[nnvm.ops.input_shape]") == 0);
  CHECK(msg.find("input min") != std::string::npos);
  CHECK(error_id([&] { ops::build(ops::get_op("clip"), {f32, {dtype::float64, {}}}); }) == "nnvm.ops.input_dtype");
}

TEST_CASE("broadcast binary ops: equal, stretched and scalar-like shapes, interpreter and C JIT against plain loops") {
  struct Op {
    std::string name;
    double lo;  // positive bases for pow, non-zero divisors for div
    std::function<double(double, double)> ref;
  };
  std::vector<Op> ops_{
      {"add", -3, [](double a, double b) { return a + b; }},
      {"sub", -3, [](double a, double b) { return a - b; }},
      {"mul", -3, [](double a, double b) { return a * b; }},
      {"div", 0.5, [](double a, double b) { return a / b; }},
      {"pow", 0.5, [](double a, double b) { return std::pow(a, b); }},
      {"min", -3, [](double a, double b) { return std::min(a, b); }},
      {"max", -3, [](double a, double b) { return std::max(a, b); }},
  };
  using Shape = std::vector<int64_t>;
  std::vector<std::pair<Shape, Shape>> pairs{
      {{3, 5, 7}, {3, 5, 7}}, {{3, 1, 7}, {5, 1}}, {{1}, {2, 3, 5}}, {{4, 1}, {1, 9}}, {{3, 5, 7}, {7}}};
  std::vector<Case> cases;
  uint32_t seed = 500;
  for (size_t o = 0; o < ops_.size(); ++o)
    for (size_t p = 0; p < pairs.size(); ++p) {
      if (o > 0 && p != 0 && p != 1 + o % (pairs.size() - 1)) continue;  // add: every pair; others: two
      auto& [sa, sb] = pairs[p];
      std::vector<NDArray> in;
      in.push_back(nnvm_test::random_array(dtype::float32, sa, seed++, ops_[o].lo, 3));
      in.push_back(nnvm_test::random_array(dtype::float32, sb, seed++, ops_[o].name == "pow" ? -2 : ops_[o].lo, 3));
      Shape out(std::max(sa.size(), sb.size()));
      for (size_t d = 0; d < out.size(); ++d) {
        size_t r = out.size() - d;
        int64_t ea = r <= sa.size() ? sa[sa.size() - r] : 1, eb = r <= sb.size() ? sb[sb.size() - r] : 1;
        out[d] = std::max(ea, eb);
      }
      size_t n = 1;
      for (int64_t e : out) n *= size_t(e);
      std::vector<float> want(n);
      for (size_t i = 0; i < n; ++i)
        want[i] = float(ops_[o].ref(double(in[0].values<float>()[broadcast_offset(sa, out, i)]),
                                    double(in[1].values<float>()[broadcast_offset(sb, out, i)])));
      auto built = ops::build(ops::get_op(ops_[o].name), types_of(in), {}, {}, named(str_cat("bin_", cases.size())));
      cases.push_back({str_cat(ops_[o].name, " ", pairs[p].first.size(), "-d with ", pairs[p].second.size(), "-d"),
                       std::move(built), std::move(in), out, std::move(want)});
    }
  check_cases(cases, "broadcast");
  for (auto& [onnx, name] : std::vector<std::pair<std::string, std::string>>{
           {"onnx:Add", "add"}, {"onnx:Sub", "sub"}, {"onnx:Mul", "mul"}, {"onnx:Div", "div"},
           {"onnx:Pow", "pow"}, {"onnx:Min", "min"}, {"onnx:Max", "max"}})
    CHECK(ops::get_op_by_importer_name(onnx).name == name);
  CHECK(ops::get_op("add").pattern == ops::OpPattern::broadcast);
  auto sched = ops::build(ops::get_op("add"), {{dtype::float32, {3, 5, 37}}, {dtype::float32, {5, 1}}});
  CHECK(ir::to_string(sched.func).find("ramp(") != std::string::npos);
}

TEST_CASE("broadcast shapes: symbolic extents, and mismatches naming both shapes and the axis") {
  ir::Var n("n"), m("m");
  ir::Expr one(int64_t(1)), seven(int64_t(7));
  auto out = ops::infer_types(ops::get_op("mul"), {{dtype::float32, {n, one}}, {dtype::float32, {one, seven}}});
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].shape.size() == 2);
  CHECK(out[0].shape[0].same_as(n));
  CHECK(*ir::as_const_int(out[0].shape[1]) == 7);
  auto same = ops::broadcast_shape({n, seven}, {seven});
  CHECK(same[0].same_as(n));

  // One kernel for every n.
  auto built = ops::build(ops::get_op("add"), {{dtype::float32, {n, seven}}, {dtype::float32, {seven}}}, {}, {},
                          named("add_sym"));
  auto kernel = ops::jit(built);
  for (int64_t rows : {1, 6}) {
    NDArray a = nnvm_test::random_array(dtype::float32, {rows, 7}, uint32_t(rows)),
            b = nnvm_test::random_array(dtype::float32, {7}, 9), y(dtype::float32, {rows, 7});
    kernel(a, b, y);
    std::vector<float> want;
    for (int64_t i = 0; i < rows * 7; ++i) want.push_back(a.values<float>()[size_t(i)] + b.values<float>()[size_t(i % 7)]);
    INFO("rows ", rows);
    CHECK(nnvm_test::compare<float>(y.values<float>(), want) == "");
  }

  std::string msg = error_text([] { ops::build(ops::get_op("add"), {{dtype::float32, {3, 4}}, {dtype::float32, {5}}}); });
  CHECK(msg.find("[nnvm.ops.broadcast]") == 0);
  CHECK(msg.find("(3, 4)") != std::string::npos);
  CHECK(msg.find("(5,)") != std::string::npos);
  CHECK(msg.find("axis 1") != std::string::npos);
  CHECK(msg.find("op add") != std::string::npos);
  CHECK(error_id([] { ops::build(ops::get_op("max"), {{dtype::float32, {2, 3, 5}}, {dtype::float32, {3, 1, 1}}}); }) ==
        "nnvm.ops.broadcast");
  CHECK(error_id([&] { ops::broadcast_shape({n}, {m}); }) == "nnvm.ops.broadcast");
  CHECK(error_id([&] { ops::broadcast_shape({n}, {seven}); }) == "nnvm.ops.broadcast");
  CHECK(error_id([] { ops::build(ops::get_op("add"), {{dtype::float32, {3}}, {dtype::float64, {3}}}); }) ==
        "nnvm.ops.input_dtype");
  CHECK(error_id([] { ops::build(ops::get_op("pow"), {{dtype::boolean, {3}}, {dtype::int32, {3}}}); }) ==
        "nnvm.ops.input_dtype");
}

}  // namespace ops_elementwise_ops
