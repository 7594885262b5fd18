// Schedules per target family: ops with no schedule of their own for a family get its generic
// recipe for their pattern. Kernels lowered for a GPU are checked in the interpreter (which runs
// bound loops serially) against plain loops written here, and their IR must bind every loop
// nest to blocks and threads; the GPU back ends that run them come later.
#include "support/pch.hpp"
#include "support/check.hpp"

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

TEST_CASE("an op without a GPU schedule gets the generic GPU recipe: one thread per output element") {
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

  // softmax: a reduction op of several stages; every stage is its own bound loop nest.
  NDArray x = nnvm_test::random_array(dtype::float32, {5, 300}, 3);
  auto sm = ops::build(ops::get_op("softmax"), {{dtype::float32, {5, 300}}}, ops::Attrs().set_int("axis", 1), gpu);
  std::string sm_ir = ir::to_string(sm.func);
  INFO(sm_ir);
  CHECK(count(sm_ir, "(blockIdx.x)") >= 3);
  CHECK(count(sm_ir, "(blockIdx.x)") == count(sm_ir, "(threadIdx.x)"));
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
