// Lesson 2: a new operator in your own code.
//
// An operator is one value, an `ops::OpDef`: its name, the importer names it answers to, its
// inputs, a compute (how each output element is made) and a default schedule (how the loops
// run on a target). Built-in ops are written exactly like this; yours joins them with one call,
// and from then on the graph layer and the ONNX importer find it like any other.
//
// We write squared ReLU, the activation of the Primer transformer, which ONNX does not have:
//     squared_relu(x) = alpha * max(x, 0)^2        (alpha = 1 by default)
//
//   ./02_new_operator          a 1024 x 4096 input
//   ./02_new_operator --quick  a 128 x 1000 input (what CI runs)
#include <nnvm/nnvm.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>

using namespace nnvm;

namespace {

// 1. The compute. It gets the op's inputs as tensors of any rank and its attributes, checks
//    them, and returns the outputs. There is no separate shape function: the output shape is
//    decided here (the same as X), and ops::infer_types runs this code on placeholders.
std::vector<te::Tensor> squared_relu_compute(const std::vector<te::Tensor>& inputs, const ops::Attrs& attrs) {
  const te::Tensor& x = inputs[0];
  ops::check_float(x, "X");  // a clear nnvm.ops.input_dtype error for an int tensor
  // Attributes have defaults; a model's node may pass alpha.
  double alpha = attrs.get_float("alpha", 1.0);
  return {te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& index) {
        ir::Expr v = x(std::vector<ir::Expr>(index.begin(), index.end()));
        ir::Expr r = ir::max(v, ir::make_zero(v.dtype()));
        return r * r * alpha;
      },
      "squared_relu")};
}

// 2. The schedule for CPU targets (other families, e.g. GPUs, get their generic recipe for an
//    elementwise op until the op gives them one of its own). The innermost axis is split by the SIMD width and
//    vectorized (the lowering peels a scalar tail when the width does not divide it); the other
//    axes are fused into one loop whose iterations run on the thread pool. (Fusing *all* axes and
//    then splitting would put a div/mod into every index and defeat the vectorizer.)
void squared_relu_schedule(schedule::Schedule& sch, const std::vector<te::Tensor>& outputs, const ops::Target& target) {
  schedule::Stage s = sch[outputs[0]];
  const auto& axes = outputs[0].op().axis;
  auto [outer, lanes] = s.split(axes.back(), target.vector_lanes(outputs[0].dtype()));
  s.vectorize(lanes);
  if (axes.size() >= 2) s.parallel(s.fuse(std::vector<ir::IterVar>(axes.begin(), axes.end() - 1)));
  else s.parallel(outer);
}

// 3. The definition, as designated initializers: everything about the op in one place.
ops::OpDef squared_relu_def() {
  return ops::OpDef{
      .name = "squared_relu",
      // The ONNX importer finds an op by "onnx:<node op type>": a model whose node is named
      // SquaredRelu (a custom op in its default domain) imports through this op.
      .importer_names = {"onnx:SquaredRelu"},
      .input_names = {"X"},
      .pattern = ops::OpPattern::elementwise,  // the graph layer may fuse it into its producer
      .compute = squared_relu_compute,
      .cpu_schedule = squared_relu_schedule,
      .doc = "alpha * max(X, 0)^2; alpha = 1 by default",
  };
}

// Median time of one call; num_threads 0 means the thread pool's default (all cores).
double median_ms(const target::Kernel& kernel, NDArray& x, NDArray& y, int reps, int num_threads) {
  std::vector<BufferView> args{x.view(), y.view()};
  kernel.call(args, num_threads);  // warm-up: starts the pool's workers, faults the pages in
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    kernel.call(args, num_threads);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int run(int64_t rows, int64_t cols, int reps) {
  // 4. One call makes the op known to everything that uses the default registry.
  ops::register_op(squared_relu_def());

  // An importer meeting a SquaredRelu node finds it by importer name; a user by name.
  const ops::OpDef& op = ops::get_op_by_importer_name("onnx:SquaredRelu");
  std::cout << "== registered '" << op.name << "' (" << op.doc << ")\n   the registry now holds:";
  for (auto& name : ops::default_registry().names()) std::cout << " " << name;
  std::cout << "\n\n";

  // 5. Build it for a concrete input type: placeholders, compute, default schedule, lowering.
  //    The unscheduled build is the plain loop nest, kept to measure what the schedule buys.
  std::vector<ops::TensorType> input{{dtype::float32, {rows, cols}}};
  ops::BuildOptions plain_options;
  plain_options.schedule = false;
  plain_options.name = "squared_relu_plain";
  ops::BuiltOp fast = ops::build(op, input);
  ops::BuiltOp plain = ops::build(op, input, {}, {}, plain_options);
  std::cout << "== loop nest with the default schedule\n" << ir::to_string(fast.func) << "\n";

  // 6. Compile both with the system C compiler (one call), run, check against a plain loop.
  auto kernels = ops::jit(std::vector<ops::BuiltOp>{plain, fast});
  NDArray x(dtype::float32, {rows, cols}), y(dtype::float32, {rows, cols});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-5, 5);
  for (auto& v : x.values<float>()) v = dist(rng);
  std::vector<float> want;
  for (float v : x.values<float>()) want.push_back(v > 0 ? v * v : 0.0f);

  // The C compiler already vectorizes a plain elementwise loop by itself, so here the schedule
  // buys mostly the threads; the third row shows that part. (Heavy ops such as dense gain far
  // more from their schedules: see the quickstart.)
  std::cout << "== results (" << rows << " x " << cols << ", median of " << reps << " runs)\n";
  struct Row {
    const char* label;
    const target::Kernel& kernel;
    int threads;
  };
  const Row rows_to_time[] = {{"unscheduled", kernels[0], 1},
                              {"default schedule, 1 thread", kernels[1], 1},
                              {"default schedule, all threads", kernels[1], 0}};
  double base = 0;
  int failures = 0;
  for (const Row& row : rows_to_time) {
    std::fill(y.values<float>().begin(), y.values<float>().end(), NAN);  // a skipped element shows
    double ms = median_ms(row.kernel, x, y, reps, row.threads);
    if (base == 0) base = ms;
    double max_err = 0;
    for (size_t i = 0; i < want.size(); ++i) max_err = std::max(max_err, double(std::abs(y.values<float>()[i] - want[i])));
    bool ok = max_err <= 1e-5;
    failures += !ok;
    std::cout << "  " << row.label << ": " << ms << " ms (" << base / ms << "x), max |error| vs plain loop = " << max_err
              << (ok ? " (ok)" : " (WRONG)") << "\n";
  }

  // 7. Mistakes are errors with stable ids, naming the op and what is wrong.
  try {
    ops::build(op, {{dtype::int32, {4, 4}}});
  } catch (const UserError& e) {
    std::cout << "\n== a wrong input type is reported as\n  " << e.what() << "\n";
  }
  try {
    ops::register_op(squared_relu_def());
  } catch (const UserError& e) {
    std::cout << "== registering the op twice is reported as\n  " << e.what() << "\n";
  }
  return failures ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    return quick ? run(128, 1000, 5) : run(1024, 4096, 10);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
