// Schedules per target family: ops with no schedule of their own for a family get its generic
// recipe for their pattern. Kernels lowered for a GPU are checked in the interpreter (which runs
// bound loops serially) against plain loops written here, and their IR must bind every loop
// nest to blocks and threads; the GPU back ends that run them come later.
#include "support/pch.hpp"
#include "support/check.hpp"
#include "support/conv_reference.hpp"
#include "support/gpu_check.hpp"

namespace ops_family_schedules {

using namespace nnvm;

namespace {

std::vector<float> run(const ops::BuiltOp& built, std::vector<NDArray> inputs, std::vector<int64_t> shape) {
  NDArray out(dtype::float32, shape);
  std::fill(out.values<float>().begin(), out.values<float>().end(), NAN);
  std::vector<BufferView> views;
  for (auto& in : inputs) views.push_back(in.view());
  views.push_back(out.view());
  target::interpret(built.func, std::span<const BufferView>(views));
  auto v = out.values<float>();
  return {v.begin(), v.end()};
}

}  // namespace

using nnvm_test::count;

TEST_CASE("an op without a GPU schedule gets the generic GPU recipe: one thread per output element, or per reduced row") {
  const target::Target gpu = target::parse_target("cuda -arch=sm_90");
  REQUIRE(gpu.family == target::Family::gpu);
  CHECK(gpu.gpu.max_threads_per_block == 1024);

  // matmul: an out_fusable op with a CPU schedule of its own and none for GPUs. 37 x 29 outputs
  // are not a multiple of the block, so the last block is guarded.
  const ops::OpDef& matmul = ops::get_op("matmul");
  REQUIRE(matmul.cpu_schedule);
  REQUIRE(!matmul.gpu_schedule);
  NDArray a = nnvm_test::random_array(dtype::float32, {37, 11}, 1), b = nnvm_test::random_array(dtype::float32, {11, 29}, 2);
  auto built = ops::build(matmul, {{dtype::float32, {37, 11}}, {dtype::float32, {11, 29}}}, {}, gpu);
  std::string ir = ir::to_string(built.func);
  INFO(ir);
  CHECK(built.func.origin.find("op matmul, generic gpu recipe for out_fusable ops") == 0);
  CHECK(count(ir, "(blockIdx.x)") == 1);
  CHECK(count(ir, "(threadIdx.x)") == 1);
  CHECK(ir.find("parallel") == std::string::npos);
  std::vector<float> want(37 * 29, 0.0f);
  for (int i = 0; i < 37; ++i)
    for (int j = 0; j < 29; ++j) {
      float acc = 0;
      for (int k = 0; k < 11; ++k) acc += a.values<float>()[i * 11 + k] * b.values<float>()[k * 29 + j];
      want[i * 29 + j] = acc;
    }
  CHECK(nnvm_test::compare<float>(run(built, {a, b}, {37, 29}), want, 1e-5, 1e-5) == "");

  // softmax has a GPU schedule of its own: one kernel, a block per row (5 rows of 300) whose
  // 256 threads reduce the row's maximum and sum together, in shared memory.
  NDArray x = nnvm_test::random_array(dtype::float32, {5, 300}, 3);
  auto sm = ops::build(ops::get_op("softmax"), {{dtype::float32, {5, 300}}}, ops::Attrs().set_int("axis", 1), gpu);
  std::string sm_ir = ir::to_string(sm.func);
  INFO(sm_ir);
  CHECK(sm.func.origin.find("op softmax, gpu schedule") == 0);
  CHECK(count(sm_ir, "(blockIdx.x)") == 1);
  CHECK(count(sm_ir, "in shared") == 4);
  target::DeviceModule sm_module = target::split_host_device(sm.func, gpu);
  REQUIRE(sm_module.kernels.size() == 1);
  CHECK(sm_module.kernels[0].launch.grid[0] == 5);
  CHECK(sm_module.kernels[0].launch.block[0] == 256);
  std::vector<float> sm_want(5 * 300);
  for (int r = 0; r < 5; ++r) {
    const float* row = x.values<float>().data() + r * 300;
    float mx = *std::max_element(row, row + 300), sum = 0;
    for (int c = 0; c < 300; ++c) sum += std::exp(row[c] - mx);
    for (int c = 0; c < 300; ++c) sm_want[r * 300 + c] = std::exp(row[c] - mx) / sum;
  }
  CHECK(nnvm_test::compare<float>(run(sm, {x}, {5, 300}), sm_want, 1e-5, 1e-6) == "");

  // OpenCL's portable limit is 256 work-items per group.
  auto ocl = ops::build(ops::get_op("relu"), {{dtype::float32, {1000}}}, {}, target::parse_target("opencl"));
  CHECK(ir::to_string(ocl.func).find("256") != std::string::npos);
  // A GPU kernel cannot run through the C JIT.
  CHECK_THROWS_WITH(ops::jit(built, gpu), doctest::Contains("nnvm.ops.target"));
}

// The plain-loop reduction `combine` over the `k` elements of each of `rows` rows.
template <class Combine>
std::vector<float> reduce_rows(const NDArray& x, int64_t rows, int64_t k, float init, Combine combine) {
  std::vector<float> out(size_t(rows), init);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c) out[size_t(r)] = combine(out[size_t(r)], x.values<float>()[size_t(r * k + c)]);
  return out;
}

TEST_CASE("GPU reductions across the threads of a block: a tree in shared memory between barriers") {
  const target::Target gpu = target::parse_target("cuda -arch=sm_90");
  // A full sum of 1000 elements: one block of 256 threads (each adds up to 4 elements; the
  // last ones are guarded), then a tree of 8 halving steps, then one thread stores the result.
  NDArray x = nnvm_test::random_array(dtype::float32, {1000}, 5);
  auto total = ops::build(ops::get_op("reduce_sum"), {{dtype::float32, {1000}}}, ops::Attrs().set_int("keepdims", 0), gpu);
  std::string ir = ir::to_string(total.func);
  INFO(ir);
  CHECK(count(ir, "(threadIdx.x)") == 1 + 8 + 1);
  CHECK(count(ir, "barrier(shared)") == 9);
  target::DeviceModule m = target::split_host_device(total.func, gpu);
  REQUIRE(m.kernels.size() == 1);
  CHECK(m.kernels[0].launch.blocks() == 1);
  CHECK(m.kernels[0].launch.block[0] == 256);
  CHECK(m.kernels[0].shared_bytes == 256 * 4);
  double want = 0;
  for (float v : x.values<float>()) want += v;
  CHECK(nnvm_test::compare<float>(run(total, {x}, {}), std::vector<float>{float(want)}, 1e-5, 1e-4) == "");

  // By hand: max over rows of 250, two rows per block on threadIdx.y, 100 threads on each row
  // (not a power of two: the first step folds threads 64..99 onto 0..35), 3 elements each.
  te::Tensor X = te::placeholder({6, 250}, dtype::float32, "X");
  ir::IterVar k = te::reduce_axis(250, "k");
  te::Tensor Y = te::compute({6}, [&](auto& v) { return te::max_reduce(X(v[0], k.var()), {k}); }, "Y");
  schedule::Schedule s = schedule::create_schedule(Y);
  auto [rows, row] = s[Y].split(s[Y].axis(0), 2);
  auto [steps, lane] = s[Y].split(s[Y].reduce_axis(0), 100);
  s[Y].bind(rows, gpu::block_x);
  s[Y].bind(row, gpu::thread_y);
  s[Y].bind(lane, gpu::thread_x);
  lower::LowerOptions gpu_lowering;
  gpu_lowering.family = target::Family::gpu;
  ops::BuiltOp by_hand;
  by_hand.func = lower::lower(s, {X, Y}, "row_max", gpu_lowering);
  target::DeviceModule hm = target::split_host_device(by_hand.func, gpu);
  REQUIRE(hm.kernels.size() == 1);
  CHECK(hm.kernels[0].launch.grid[0] == 3);
  CHECK(hm.kernels[0].launch.block[0] == 100);
  CHECK(hm.kernels[0].launch.block[1] == 2);
  CHECK(hm.kernels[0].shared_bytes == 2 * 100 * 4);
  NDArray xs = nnvm_test::random_array(dtype::float32, {6, 250}, 6);
  std::vector<float> row_max = reduce_rows(xs, 6, 250, -INFINITY, [](float a, float b) { return std::max(a, b); });
  CHECK(nnvm_test::compare<float>(run(by_hand, {xs}, {6}), row_max, 0, 0) == "");

  // The kernels run on a real GPU runtime where one is configured (ctest gpu.opencl.ops):
  // the threads then reduce concurrently, with real barriers.
  const char* env = std::getenv("NNVM_TEST_GPU");
  if (env && std::string(env) == "opencl") {
    const target::Target opencl = target::parse_target("opencl");
    by_hand.func = lower::lower(s, {X, Y}, "row_max", gpu_lowering);
    auto cl_total = ops::build(ops::get_op("reduce_sum"), {{dtype::float32, {1000}}}, ops::Attrs().set_int("keepdims", 0), opencl);
    nnvm_test::gpu_check({cl_total.func, by_hand.func}, opencl, "cross_thread", [&](size_t f, auto&& call) {
      NDArray out(dtype::float32, f == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{6});
      std::vector<BufferView> views{f == 0 ? x.view() : xs.view(), out.view()};
      call(std::span<const BufferView>(views));
      auto got = out.values<float>();
      if (f == 0) CHECK(nnvm_test::compare<float>(std::vector<float>(got.begin(), got.end()), std::vector<float>{float(want)}, 1e-5, 1e-4) == "");
      else CHECK(nnvm_test::compare<float>(std::vector<float>(got.begin(), got.end()), row_max, 0, 0) == "");
    });
  }
}

TEST_CASE("GPU 2-D convolution: four output channels per thread in registers, ragged edges guarded") {
  const target::Target gpu = target::parse_target("cuda -arch=sm_90");
  // 18 output channels (not a multiple of 4 x 4 thread rows) over 3 x 9 x 10 with pads of 1.
  NDArray x = nnvm_test::random_array(dtype::float32, {1, 3, 9, 10}, 7), w = nnvm_test::random_array(dtype::float32, {18, 3, 3, 3}, 8);
  ops::Attrs attrs;
  attrs.set_ints("pads", {1, 1, 1, 1});
  auto built = ops::build(ops::get_op("conv"), {{dtype::float32, {1, 3, 9, 10}}, {dtype::float32, {18, 3, 3, 3}}}, attrs, gpu);
  std::string ir = ir::to_string(built.func);
  INFO(ir);
  CHECK(built.func.origin.find("op conv, gpu schedule") == 0);
  CHECK(count(ir, "in local") == 1);
  target::DeviceModule m = target::split_host_device(built.func, gpu);
  REQUIRE(m.kernels.size() == 2);  // the padded copy, the convolution
  CHECK(m.kernels[1].launch.block[0] == 16);  // the output width, 10, rounded up
  CHECK(m.kernels[1].launch.block[1] == 8);   // 18 channels in rows of 4 per thread
  CHECK(m.kernels[1].launch.grid[0] == 9);    // the output rows
  nnvm_test::Ref ref = nnvm_test::conv_ref(nnvm_test::to_ref(x), w, nullptr, 1, 1, 1);
  std::vector<float> want(ref.v.begin(), ref.v.end());
  CHECK(nnvm_test::compare<float>(run(built, {x, w}, {1, 18, 9, 10}), want, 1e-5, 1e-5) == "");
}

TEST_CASE("generic recipes of the other families: CPU vectorized and parallel, WASM without threads, MCU plain") {
  const ops::OpDef& relu = ops::get_op("relu");
  REQUIRE(!relu.cpu_schedule);  // relu is scheduled by the CPU family's elementwise recipe alone
  ops::TensorType big{dtype::float32, {129, 131}};
  std::string cpu = ir::to_string(ops::build(relu, {big}, {}, target::Target::for_cpu(target::Emitter::c, "x86-64-v3")).func);
  CHECK(cpu.find("vectorized") != std::string::npos);
  CHECK(cpu.find("parallel") != std::string::npos);
  std::string wasm = ir::to_string(ops::build(relu, {big}, {}, target::parse_target("wasm -msimd128")).func);
  CHECK(wasm.find("vectorized") != std::string::npos);
  CHECK(wasm.find("parallel") == std::string::npos);
  auto mcu_built = ops::build(relu, {big}, {}, target::parse_target("c-standalone -mcpu=cortex-m4"));
  std::string mcu = ir::to_string(mcu_built.func);
  CHECK(mcu.find("vectorized") == std::string::npos);
  CHECK(mcu.find("parallel") == std::string::npos);
  CHECK(mcu_built.func.origin.find("generic mcu recipe for elementwise ops") != std::string::npos);
  // Each still computes relu.
  NDArray x = nnvm_test::random_array(dtype::float32, {129, 131}, 4);
  std::vector<float> want(x.values<float>().begin(), x.values<float>().end());
  for (float& v : want) v = std::max(v, 0.0f);
  CHECK(nnvm_test::compare<float>(run(mcu_built, {x}, {129, 131}), want) == "");
}

TEST_CASE("targets parse into family, emitter and device, and print back") {
  using target::Emitter;
  using target::Family;
  struct Row {
    const char* spec;
    Family family;
    Emitter emitter;
    int vector_bits;
  };
  for (Row r : {Row{"c -mcpu=x86-64-v2", Family::cpu, Emitter::c, 128}, Row{"llvm -mcpu=znver3", Family::cpu, Emitter::llvm, 256},
                Row{"llvm -mcpu=x86-64-v4", Family::cpu, Emitter::llvm, 512}, Row{"cuda -arch=sm_90", Family::gpu, Emitter::cuda, 128},
                Row{"opencl", Family::gpu, Emitter::opencl, 128}, Row{"metal", Family::gpu, Emitter::metal, 128},
                Row{"c-standalone -mcpu=cortex-m4", Family::mcu, Emitter::c_standalone, 0},
                Row{"c-standalone -mcpu=cortex-m55", Family::mcu, Emitter::c_standalone, 128},
                Row{"wasm", Family::wasm, Emitter::wasm, 0}, Row{"wasm -msimd128", Family::wasm, Emitter::wasm, 128}}) {
    CAPTURE(r.spec);
    target::Target t = target::parse_target(r.spec);
    CHECK(t.family == r.family);
    CHECK(t.emitter == r.emitter);
    CHECK(t.vector_bits == r.vector_bits);
    CHECK(target::to_string(t) == r.spec);
  }
  CHECK(target::parse_target("cuda -arch=sm_90").gpu.arch == "sm_90");
  CHECK(target::parse_target("metal").gpu.shared_memory_bytes == 32 * 1024);
  CHECK(target::parse_target("llvm -mcpu=x86-64-v4").vector_registers == 32);
  CHECK(target::parse_target("c").vector_bits == target::Target::host_vector_bits());
  // Each error names the word it could not read.
  CHECK_THROWS_WITH(target::parse_target("vulkan"), doctest::Contains("unknown back end 'vulkan'; known: c, llvm, cuda"));
  CHECK_THROWS_WITH(target::parse_target("cuda -mcpu=x86-64-v3"), doctest::Contains("unknown option '-mcpu=x86-64-v3' (expected -arch=sm_NN"));
  CHECK_THROWS_WITH(target::parse_target("cuda -arch=sm_9x"), doctest::Contains("unknown option '-arch=sm_9x'"));
  CHECK_THROWS_WITH(target::parse_target("wasm -mcpu=x"), doctest::Contains("unknown option '-mcpu=x' (expected -msimd128)"));
  CHECK_THROWS_WITH(target::parse_target("llvm -mcpu=pentium-9000"), doctest::Contains("unknown CPU 'pentium-9000'"));
  CHECK_THROWS_WITH(target::parse_target("c-standalone -mcpu=cortex-m9"), doctest::Contains("unknown microcontroller 'cortex-m9'"));
}

}  // namespace ops_family_schedules
