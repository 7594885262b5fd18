// The operator library: attributes, the registry, build → interpreter and C JIT for every
// built-in op against plain loops, a user-defined op joining with one call, and the error ids.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <thread>

#include "nnvm/ops/builtin.hpp"

namespace ops_registry {

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

// One built kernel with its inputs and the plain-loop reference for its (float32) output.
struct Case {
  std::string label;
  ops::BuiltOp built;
  std::vector<NDArray> inputs;
  std::vector<int64_t> out_shape;
  std::vector<float> want;
};

// Runs every case through the interpreter and (all in one compiler call) the C JIT; the emitted
// C must also pass the strict C99 flags.
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
      std::fill(out.values<float>().begin(), out.values<float>().end(), NAN);  // unwritten elements show
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

ops::BuildOptions options(std::string name, bool schedule = true) {
  ops::BuildOptions o;
  o.name = std::move(name);
  o.schedule = schedule;
  return o;
}

std::vector<float> relu_ref(const NDArray& x) {
  std::vector<float> y;
  for (float v : x.values<float>()) y.push_back(v > 0 ? v : 0.0f);
  return y;
}

// Gemm with double accumulation; C (may be empty) broadcasts from the right.
std::vector<float> dense_ref(const NDArray& A, const NDArray& B, const NDArray* C, bool ta, bool tb, double alpha,
                             double beta) {
  int64_t M = A.shape()[ta ? 1 : 0], K = A.shape()[ta ? 0 : 1], N = B.shape()[tb ? 0 : 1];
  auto a = A.values<float>(), b = B.values<float>();
  std::vector<float> y(size_t(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += double(a[size_t(ta ? k * M + i : i * K + k)]) * double(b[size_t(tb ? j * K + k : k * N + j)]);
      double bias = 0;
      if (C) {
        const auto& cs = C->shape();
        int64_t ci = 0;
        if (cs.size() == 1) ci = cs[0] == 1 ? 0 : j;
        if (cs.size() == 2) ci = (cs[0] == 1 ? 0 : i) * cs[1] + (cs[1] == 1 ? 0 : j);
        bias = beta * C->values<float>()[size_t(ci)];
      }
      y[size_t(i * N + j)] = float(alpha * acc + bias);
    }
  return y;
}

std::vector<float> softmax_ref(const NDArray& x, size_t axis) {
  const auto& s = x.shape();
  int64_t outer = 1, n = s[axis], inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= s[d];
  for (size_t d = axis + 1; d < s.size(); ++d) inner *= s[d];
  auto v = x.values<float>();
  std::vector<float> y(v.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t k) { return size_t((o * n + k) * inner + in); };
      double mx = -INFINITY, sum = 0;
      for (int64_t k = 0; k < n; ++k) mx = std::max(mx, double(v[at(k)]));
      for (int64_t k = 0; k < n; ++k) sum += std::exp(double(v[at(k)]) - mx);
      for (int64_t k = 0; k < n; ++k) y[at(k)] = float(std::exp(double(v[at(k)]) - mx) / sum);
    }
  return y;
}

// A user's op, written the way the example teaches: y = max(x * scale + shift, 0).
ops::OpDef scale_shift_relu_def(std::string name = "scale_shift_relu") {
  return ops::OpDef{
      .name = std::move(name),
      .importer_names = {"test:ScaleShiftRelu"},
      .input_names = {"X"},
      .pattern = ops::OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const ops::Attrs& attrs) {
            const te::Tensor& x = in[0];
            ops::check_float(x, "X");
            double scale = attrs.get_float("scale"), shift = attrs.get_float("shift", 0.0);
            return std::vector<te::Tensor>{te::compute(
                x.shape(),
                [&](const std::vector<ir::Var>& v) {
                  ir::Expr e = x(std::vector<ir::Expr>(v.begin(), v.end())) * scale + shift;
                  return ir::max(e, ir::make_zero(x.dtype()));
                },
                "y")};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const ops::Target& t) { ops::schedule_injective(s[out[0]], t); },
      .doc = "max(X * scale + shift, 0)",
  };
}

}  // namespace

TEST_CASE("attributes: typed getters, defaults, the int-as-float widening, and errors naming the attribute") {
  ops::Attrs a;
  a.set_int("axis", -1).set_float("alpha", 0.25).set_string("mode", "nearest").set_ints("perm", {1, 0, 2});
  a.set_floats("scales", {1.0, 2.5}).set_int("beta", 2);
  CHECK(a.size() == 6);
  CHECK(a.get_int("axis") == -1);
  CHECK(a.get_int("missing", 7) == 7);
  CHECK(a.get_float("alpha") == 0.25);
  CHECK(a.get_float("beta") == 2.0);  // model files write 2 for 2.0
  CHECK(a.get_string("mode") == "nearest");
  CHECK(a.get_ints("perm") == std::vector<int64_t>{1, 0, 2});
  CHECK(a.get_floats("perm") == std::vector<double>{1.0, 0.0, 2.0});
  CHECK(a.get_floats("scales") == std::vector<double>{1.0, 2.5});
  CHECK(a.get_string("none", "linear") == "linear");
  a.set_int("axis", 2);  // replaces
  CHECK(a.get_int("axis") == 2);

  CHECK(error_id([&] { a.get_int("alpha"); }) == "nnvm.ops.attr");  // a float is never truncated
  CHECK(error_id([&] { a.get_int("missing"); }) == "nnvm.ops.attr");
  CHECK(error_id([&] { a.get_ints("scales", {}); }) == "nnvm.ops.attr");
  std::string msg = error_text([&] { a.get_string("alpha"); });
  CHECK(msg.find("'alpha' is a float but must be a string") != std::string::npos);
  CHECK(msg.find("attribute alpha") != std::string::npos);
  CHECK(error_text([&] { a.get_int("group"); }).find("'group' is missing (given: alpha, axis") != std::string::npos);
}

TEST_CASE("the built-in ops are one sorted list, and the default registry holds them by name and importer name") {
  auto builtins = ops::builtin_ops();
  REQUIRE(builtins.size() >= 3);
  for (size_t i = 1; i < builtins.size(); ++i) CHECK(builtins[i - 1].name < builtins[i].name);
  for (auto& def : builtins) {
    CHECK_NOTHROW(ops::validate(def));
    // Every op is scheduled on CPUs: by a schedule of its own, or by the CPU family's generic
    // recipe, which vectorizes and parallelizes data-parallel ops and parallelizes reductions.
    // shape and size (opaque) write a handful of integers and stay plain loops.
    bool generic = def.pattern != ops::OpPattern::opaque && def.pattern != ops::OpPattern::out_fusable;
    CHECK_MESSAGE((def.cpu_schedule || generic || def.name == "shape" || def.name == "size"), def.name);
    const ops::OpDef* found = ops::default_registry().find(def.name);
    REQUIRE(found != nullptr);
    for (auto& n : def.importer_names) CHECK(ops::default_registry().find_by_importer_name(n) == found);
  }
  CHECK(ops::get_op_by_importer_name("onnx:Relu").name == "relu");
  CHECK(ops::get_op_by_importer_name("onnx:Gemm").name == "dense");
  CHECK(ops::get_op_by_importer_name("onnx:Softmax").name == "softmax");
  CHECK(ops::get_op("dense").input_names == std::vector<std::string>{"A", "B", "C"});
  auto names = ops::default_registry().names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  // A registry of one's own starts from the same list and does not see the default one's additions.
  CHECK(ops::OpRegistry::with_builtins().size() == builtins.size());
  CHECK(ops::OpRegistry().size() == 0);
}

TEST_CASE("relu: build, interpreter and C JIT on odd shapes, scheduled and plain") {
  std::vector<Case> cases;
  uint32_t seed = 10;
  for (auto shape : {std::vector<int64_t>{1}, {13}, {3, 37}, {2, 5, 9}, {129, 131}}) {
    for (bool sched : {true, false}) {
      NDArray x = nnvm_test::random_array(dtype::float32, shape, seed++);
      auto built = ops::build(ops::get_op("relu"), types_of(x), {}, {}, options(str_cat("relu_", cases.size()), sched));
      std::vector<float> want = relu_ref(x);
      cases.push_back({str_cat("relu rank ", shape.size(), sched ? " scheduled" : " plain"), built, {}, shape, want});
      cases.back().inputs.push_back(std::move(x));
    }
  }
  check_cases(cases, "relu");
  // The CPU recipe really vectorizes (with a scalar tail for 131 % 8) and goes parallel.
  auto sched = ops::build(ops::get_op("relu"), {{dtype::float32, {129, 131}}});
  std::string s = ir::to_string(sched.func);
  CHECK(s.find("ramp(") != std::string::npos);
  CHECK(s.find("parallel (") != std::string::npos);
  CHECK(sched.func.origin.find("op relu, generic cpu recipe for elementwise ops") == 0);

  // Integer inputs keep their dtype.
  NDArray xi = nnvm_test::random_array(dtype::int32, {4, 11}, 3, -5, 5), yi(dtype::int32, {4, 11}), yj(dtype::int32, {4, 11});
  auto bi = ops::build(ops::get_op("relu"), types_of(xi), {}, {}, options("relu_i32"));
  target::interpret(bi.func, xi, yi);
  ops::jit(bi)(xi, yj);
  for (size_t i = 0; i < 44; ++i) {
    int32_t want = std::max(xi.values<int32_t>()[i], 0);
    CHECK(yi.values<int32_t>()[i] == want);
    CHECK(yj.values<int32_t>()[i] == want);
  }
}

TEST_CASE("dense (Gemm): transposes, alpha/beta and every bias broadcast against a plain loop") {
  struct Variant {
    int64_t M, K, N;
    bool ta, tb;
    double alpha, beta;
    std::vector<int64_t> c_shape;  // {-1}: no bias
  };
  std::vector<Variant> variants{
      {13, 7, 9, false, false, 1.0, 1.0, {-1}},      {5, 17, 33, false, false, 1.0, 1.0, {33}},
      {6, 3, 19, true, false, 1.0, 1.0, {6, 1}},     {9, 10, 11, false, true, 0.5, 2.0, {9, 11}},
      {3, 5, 21, true, true, -1.5, 0.25, {}},        {17, 6, 5, false, false, 2.0, 1.0, {1, 5}},
      {1, 1, 1, false, false, 1.0, 1.0, {1, 1}},
  };
  std::vector<Case> cases;
  uint32_t seed = 100;
  for (auto& v : variants) {
    std::vector<NDArray> in;
    in.push_back(nnvm_test::random_array(dtype::float32, v.ta ? std::vector<int64_t>{v.K, v.M} : std::vector<int64_t>{v.M, v.K}, seed++));
    in.push_back(nnvm_test::random_array(dtype::float32, v.tb ? std::vector<int64_t>{v.N, v.K} : std::vector<int64_t>{v.K, v.N}, seed++));
    bool bias = v.c_shape != std::vector<int64_t>{-1};
    if (bias) in.push_back(nnvm_test::random_array(dtype::float32, v.c_shape, seed++));
    ops::Attrs attrs;
    attrs.set_int("transA", v.ta).set_int("transB", v.tb).set_float("alpha", v.alpha).set_float("beta", v.beta);
    std::vector<float> want = dense_ref(in[0], in[1], bias ? &in[2] : nullptr, v.ta, v.tb, v.alpha, v.beta);
    for (bool sched : {true, false}) {
      auto opt = options(str_cat("dense_", cases.size()), sched);
      std::string label = str_cat("dense M=", v.M, " K=", v.K, " N=", v.N, v.ta ? " transA" : "", v.tb ? " transB" : "",
                                  " alpha=", v.alpha, " beta=", v.beta, " bias rank ", bias ? int(v.c_shape.size()) : -1,
                                  sched ? " scheduled" : " plain");
      Case c{label, ops::build(ops::get_op("dense"), types_of(in), attrs, {}, opt), {}, {v.M, v.N}, want};
      for (auto& a : in) {
        NDArray copy(a.dtype(), a.shape());
        std::copy(a.values<float>().begin(), a.values<float>().end(), copy.values<float>().begin());
        c.inputs.push_back(std::move(copy));
      }
      cases.push_back(std::move(c));
    }
  }
  check_cases(cases, "dense");
}

TEST_CASE("dense over a symbolic batch: one kernel, many batch sizes; infer_types keeps the size variable") {
  ir::Var batch("batch");
  std::vector<ops::TensorType> types{{dtype::float32, {batch, ir::Expr(int64_t(12))}}, {dtype::float32, {12, 10}},
                                     {dtype::float32, {10}}};
  auto out = ops::infer_types(ops::get_op("dense"), types);
  REQUIRE(out.size() == 1);
  CHECK(out[0].dtype == dtype::float32);
  CHECK(out[0].shape[0].same_as(batch));
  CHECK(*ir::as_const_int(out[0].shape[1]) == 10);

  auto built = ops::build(ops::get_op("dense"), types, {}, {}, options("dense_batch"));
  REQUIRE(built.func.size_vars.size() == 1);
  auto kernel = ops::jit(built);
  for (int64_t b : {1, 5, 16}) {
    NDArray x = nnvm_test::random_array(dtype::float32, {b, 12}, uint32_t(b));
    NDArray w = nnvm_test::random_array(dtype::float32, {12, 10}, 2), c = nnvm_test::random_array(dtype::float32, {10}, 3);
    NDArray y1(dtype::float32, {b, 10}), y2(dtype::float32, {b, 10});
    target::interpret(built.func, x, w, c, y1);
    kernel(x, w, c, y2);
    auto want = dense_ref(x, w, &c, false, false, 1.0, 1.0);
    INFO("batch ", b);
    CHECK(nnvm_test::compare<float>(y1.values<float>(), want) == "");
    CHECK(nnvm_test::compare<float>(y2.values<float>(), want) == "");
  }
}

TEST_CASE("softmax: every axis of odd shapes against a plain loop") {
  std::vector<Case> cases;
  uint32_t seed = 200;
  struct V {
    std::vector<int64_t> shape;
    int64_t axis;
  };
  for (auto& v : {V{{7}, 0}, V{{5, 37}, -1}, V{{5, 37}, 0}, V{{3, 4, 9}, 1}, V{{2, 3, 17}, -1}, V{{64, 300}, 1}}) {
    // Wide inputs: exp would overflow without subtracting the maximum.
    NDArray x = nnvm_test::random_array(dtype::float32, v.shape, seed++, -60, 60);
    size_t axis = size_t(v.axis < 0 ? v.axis + int64_t(v.shape.size()) : v.axis);
    auto want = softmax_ref(x, axis);
    for (bool sched : {true, false}) {
      auto opt = options(str_cat("softmax_", cases.size()), sched);
      auto built = ops::build(ops::get_op("softmax"), types_of(x), ops::Attrs().set_int("axis", v.axis), {}, opt);
      NDArray copy(x.dtype(), x.shape());
      std::copy(x.values<float>().begin(), x.values<float>().end(), copy.values<float>().begin());
      cases.push_back({str_cat("softmax rank ", v.shape.size(), " axis ", v.axis, sched ? " scheduled" : " plain"),
                       std::move(built), {}, v.shape, want});
      cases.back().inputs.push_back(std::move(copy));
    }
  }
  check_cases(cases, "softmax");
}

TEST_CASE("a user's op joins the default registry with one call, then is found and run like a built-in") {
  const ops::OpDef& stored = ops::register_op(scale_shift_relu_def());
  CHECK(&ops::get_op("scale_shift_relu") == &stored);
  CHECK(&ops::get_op_by_importer_name("test:ScaleShiftRelu") == &stored);
  CHECK(stored.pattern == ops::OpPattern::elementwise);

  NDArray x = nnvm_test::random_array(dtype::float32, {6, 19}, 5);
  ops::Attrs attrs = ops::Attrs().set_float("scale", -2.0).set_int("shift", 1);  // an int where a float is read
  std::vector<float> want;
  for (float v : x.values<float>()) want.push_back(std::max(v * -2.0f + 1.0f, 0.0f));
  std::vector<Case> cases;
  for (bool sched : {true, false}) {
    NDArray copy(x.dtype(), x.shape());
    std::copy(x.values<float>().begin(), x.values<float>().end(), copy.values<float>().begin());
    auto opt = options(sched ? "ssr_fast" : "ssr_plain", sched);
    cases.push_back({opt.name, ops::build(ops::get_op_by_importer_name("test:ScaleShiftRelu"), types_of(x), attrs, {}, opt),
                     {}, {6, 19}, want});
    cases.back().inputs.push_back(std::move(copy));
  }
  check_cases(cases, "user_op");

  // Registering it again, or another op under its importer name, is refused and changes nothing.
  CHECK(error_id([] { ops::register_op(scale_shift_relu_def()); }) == "nnvm.ops.duplicate");
  std::string msg = error_text([] { ops::register_op(scale_shift_relu_def("other_op")); });
  CHECK(msg.find("importer name 'test:ScaleShiftRelu' already belongs to op 'scale_shift_relu'") != std::string::npos);
  CHECK(ops::default_registry().find("other_op") == nullptr);
}

TEST_CASE("errors: invalid definitions, unknown ops, attributes, input counts, shapes, targets") {
  ops::OpRegistry reg = ops::OpRegistry::with_builtins();
  auto with = [](auto change) {
    ops::OpDef d = scale_shift_relu_def();
    change(d);
    return d;
  };
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.compute = nullptr; })); }) == "nnvm.ops.invalid");
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.name = "Bad Name"; })); }) == "nnvm.ops.invalid");
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.name = ""; })); }) == "nnvm.ops.invalid");
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.importer_names = {"Relu"}; })); }) == "nnvm.ops.invalid");
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.optional_inputs = 2; })); }) == "nnvm.ops.invalid");
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.input_names = {"X", "X"}; })); }) == "nnvm.ops.invalid");
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.name = "relu"; d.importer_names = {}; })); }) ==
        "nnvm.ops.duplicate");
  CHECK(error_id([&] { reg.register_op(with([](auto& d) { d.importer_names = {"onnx:Relu"}; })); }) ==
        "nnvm.ops.duplicate");
  CHECK(reg.size() == ops::builtin_ops().size());  // nothing half-registered
  // A registry of one's own takes a user op without touching the default registry.
  reg.register_op(with([](auto& d) { d.name = "private_op"; d.importer_names = {"test:Private"}; }));
  CHECK(reg.find("private_op") != nullptr);
  CHECK(ops::default_registry().find("private_op") == nullptr);

  CHECK(error_id([&] { reg.get("conv2d"); }) == "nnvm.ops.unknown");
  CHECK(error_text([&] { reg.get("dens"); }).find("did you mean 'dense'?") != std::string::npos);
  CHECK(error_id([&] { reg.get_by_importer_name("onnx:NoSuchOp"); }) == "nnvm.ops.unknown");
  CHECK(reg.find("conv2d") == nullptr);

  const ops::OpDef& dense = reg.get("dense");
  ops::TensorType a{dtype::float32, {4, 3}}, b{dtype::float32, {3, 5}};
  // Input counts: Gemm takes 2 or 3.
  CHECK(error_id([&] { ops::build(dense, {a}); }) == "nnvm.ops.input_count");
  CHECK(error_text([&] { ops::build(dense, {a, b, b, b}); }).find("takes 2 to 3 inputs, got 4") != std::string::npos);
  CHECK(error_id([&] { ops::infer_types(reg.get("relu"), {}); }) == "nnvm.ops.input_count");
  // Shapes and dtypes, with the op as the outermost context.
  std::string shape_msg = error_text([&] { ops::build(dense, {a, ops::TensorType{dtype::float32, {4, 5}}}); });
  CHECK(shape_msg.find("[nnvm.ops.input_shape]") == 0);
  CHECK(shape_msg.find("(op dense") != std::string::npos);
  CHECK(error_id([&] { ops::build(dense, {a, ops::TensorType{dtype::float32, {3}}}); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { ops::build(dense, {a, b, ops::TensorType{dtype::float32, {4}}}); }) == "nnvm.ops.input_shape");
  CHECK(error_id([&] { ops::build(dense, {a, ops::TensorType{dtype::float64, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  CHECK(error_id([&] { ops::build(dense, {{dtype::boolean, {4, 3}}, {dtype::boolean, {3, 5}}}); }) == "nnvm.ops.input_dtype");
  ir::Var k1("k1"), k2("k2");  // different size variables cannot be shown equal
  CHECK(error_id([&] { ops::infer_types(dense, {{dtype::float32, {ir::Expr(int64_t(4)), k1}}, {dtype::float32, {k2, ir::Expr(int64_t(5))}}}); }) ==
        "nnvm.ops.input_shape");
  // Attributes: missing, wrong kind, out of range; the context names op and attribute.
  const ops::OpDef& user = reg.get("private_op");
  std::string attr_msg = error_text([&] { ops::build(user, {a}); });
  CHECK(attr_msg.find("[nnvm.ops.attr] required attribute 'scale' is missing") == 0);
  CHECK(attr_msg.find("(op private_op \u203a attribute scale)") != std::string::npos);
  CHECK(error_id([&] { ops::build(user, {a}, ops::Attrs().set_string("scale", "2")); }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::build(dense, {a, b}, ops::Attrs().set_float("transA", 1.0)); }) == "nnvm.ops.attr");
  CHECK(error_id([&] { ops::build(reg.get("softmax"), {a}, ops::Attrs().set_int("axis", 2)); }) == "nnvm.ops.attr");
  // The C JIT compiles for this CPU only (GPU builds: test_family_schedules.cpp).
  auto built = ops::build(dense, {a, b});
  CHECK(error_id([&] { ops::jit(built, target::parse_target("cuda")); }) == "nnvm.ops.target");
  CHECK(error_id([&] { ops::jit(built, target::parse_target("llvm")); }) == "nnvm.ops.target");
}

TEST_CASE("registration and lookup may run concurrently") {
  ops::OpRegistry reg = ops::OpRegistry::with_builtins();
  std::atomic<bool> lookups_ok{true};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 40; ++i) {
        ops::OpDef d = scale_shift_relu_def(str_cat("op_", t, "_", i));
        d.importer_names = {str_cat("test:Op", t, "_", i)};
        reg.register_op(std::move(d));
      }
    });
  threads.emplace_back([&] {
    for (int i = 0; i < 400; ++i) {
      const ops::OpDef* d = reg.find("relu");
      if (!d || d->name != "relu" || reg.find_by_importer_name("onnx:Gemm") == nullptr) lookups_ok = false;
      (void)reg.names();
    }
  });
  for (auto& th : threads) th.join();
  CHECK(lookups_ok);
  CHECK(reg.size() == ops::builtin_ops().size() + 120);
  CHECK(reg.get_by_importer_name("test:Op2_39").name == "op_2_39");
}

}  // namespace ops_registry
