// The host/device split and the GPU source emitter (target/device_split.hpp, gpu_emitter.hpp):
// launches follow the bound loops, intermediates become device buffers, and the verifier's
// errors name the kernel. Numerics of GPU kernels are checked through OpenCL (ctest gpu.*).
#include "support/pch.hpp"

#include "support/check.hpp"

namespace target_gpu_split {

using namespace nnvm;
using namespace nnvm::ir;

namespace {
Expr i64(int64_t v) { return IntImm::make(dtype::index, v); }
}  // namespace

using nnvm_test::count;

TEST_CASE("gpu split: one kernel per stage nest, launch from the bound loops, intermediates as device buffers") {
  const target::Target cuda = target::parse_target("cuda -arch=sm_90");
  // A softmax of one row has no axis left for a block per row: the generic recipe, stage by stage.
  auto sm = ops::build(ops::get_op("softmax"), {{dtype::float32, {3000}}}, ops::Attrs().set_int("axis", 0), cuda);
  target::DeviceModule m = target::split_host_device(sm.func, cuda);
  REQUIRE(m.kernels.size() == 4);  // max, exp, sum, divide
  CHECK(m.temps.size() == 3);
  // The maximum: one block whose 256 threads reduce the row together.
  CHECK(m.kernels[0].launch.grid[0] == 1);
  CHECK(m.kernels[0].launch.block[0] == 256);
  // The elementwise stages: 3000 elements in blocks of 1024 threads.
  CHECK(m.kernels[1].launch.block[0] == 1024);
  CHECK(m.kernels[1].launch.grid[0] == 3);
  // The exp stage reads the input and the row maxima and writes its own buffer.
  REQUIRE(m.kernels[1].args.size() == 3);
  CHECK(m.buffer(m.kernels[1].args[0])->name == "X");
  CHECK(m.kernels[1].func.writes(2));
  CHECK(!m.kernels[1].func.writes(0));

  target::GpuProgram p = target::emit_gpu({sm.func}, cuda);
  CHECK(p.symbols[0][1] == "gpu_softmax_k1");
  CHECK(p.source.find("extern \"C\" __global__ void __launch_bounds__(1024) gpu_softmax_k1(") != std::string::npos);
  CHECK(p.source.find("// launch: grid (3, 1, 1), block (1024, 1, 1), 0 bytes of shared memory") != std::string::npos);
  // The CUDA function's blocks are over OpenCL's portable limit of 256 work-items.
  const target::Target opencl = target::parse_target("opencl");
  CHECK(nnvm_test::error_of([&] { target::emit_gpu({sm.func}, opencl); }).first == "nnvm.codegen.block_limit");
  // Built for OpenCL, the same kernel has work-groups of 256 and OpenCL's address spaces.
  auto sm_cl = ops::build(ops::get_op("softmax"), {{dtype::float32, {3000}}}, ops::Attrs().set_int("axis", 0), opencl);
  target::GpuProgram cl = target::emit_gpu({sm_cl.func}, opencl);
  CHECK(cl.source.find("__kernel __attribute__((reqd_work_group_size(256, 1, 1))) void gpu_softmax_k1(__global const float* restrict X") !=
        std::string::npos);

  // With rows (5 of 3000): one kernel, a block of 256 threads per row; the row's maximum and sum
  // and the two reductions' partial results live in shared memory.
  auto rows = ops::build(ops::get_op("softmax"), {{dtype::float32, {5, 3000}}}, ops::Attrs().set_int("axis", 1), cuda);
  INFO(ir::to_string(rows.func));
  target::DeviceModule rm = target::split_host_device(rows.func, cuda);
  REQUIRE(rm.kernels.size() == 1);
  CHECK(rm.temps.empty());
  CHECK(rm.kernels[0].launch.grid[0] == 5);
  CHECK(rm.kernels[0].launch.block[0] == 256);
  CHECK(rm.kernels[0].shared_bytes == (2 * 256 + 2) * 4);
}

TEST_CASE("gpu split: the verifier's errors") {
  const target::Target cuda = target::parse_target("cuda -arch=sm_90");
  Buffer A("A", dtype::float32, {i64(64)});
  Var t("t"), u("u");
  Stmt store = Store::make(A, make_const(dtype::float32, 1.0), t);
  auto fn = [&](Stmt body) { return LoweredFunc{"k", {A}, {}, body, "test"}; };

  // threadIdx.x bound inside a loop already bound to it (a stage computed at a thread's loop):
  // the same thread index, the shorter loop guarded.
  Stmt nested = For::make(t, i64(0), i64(8), ForKind::thread_binding,
                          For::make(u, i64(0), i64(4), ForKind::thread_binding, store, "threadIdx.x"), "threadIdx.x");
  target::DeviceModule nm = target::split_host_device(fn(nested), cuda);
  CHECK(nm.kernels.at(0).launch.block[0] == 8);
  CHECK(ir::to_string(nm.kernels[0].func.body).find("u < 4") != std::string::npos);

  // A block of 2048 threads on a device that allows 1024.
  Stmt big = For::make(t, i64(0), i64(2048), ForKind::thread_binding, store, "threadIdx.x");
  auto [id, message] = nnvm_test::error_of([&] { target::split_host_device(fn(big), cuda); });
  CHECK(id == "nnvm.codegen.block_limit");
  CHECK(message.find("2048") != std::string::npos);

  // A symbolic extent cannot size a launch.
  Var n("n");
  Stmt dynamic = For::make(t, i64(0), n, ForKind::thread_binding, store, "threadIdx.x");
  CHECK(nnvm_test::error_of([&] { target::split_host_device(fn(dynamic), cuda); }).first == "nnvm.codegen.launch_extent");

  // Shared memory over the target's 48 KiB, allocated at the block's loop.
  Buffer S("S", dtype::float32, {i64(16384)}, MemoryScope::shared);
  Stmt shared = For::make(t, i64(0), i64(4), ForKind::thread_binding,
                          Allocate::make(S, Store::make(S, make_const(dtype::float32, 0.0), i64(0))), "blockIdx.x");
  CHECK(nnvm_test::error_of([&] { target::split_host_device(fn(shared), cuda); }).first == "nnvm.codegen.shared_memory_limit");

  // Loops bound to one axis with different extents: the axis takes the larger, the other is guarded.
  Stmt two = Seq::make({For::make(t, i64(0), i64(64), ForKind::thread_binding, store, "threadIdx.x"),
                        For::make(u, i64(0), i64(16), ForKind::thread_binding,
                                  Store::make(A, make_const(dtype::float32, 2.0), u), "threadIdx.x")});
  Stmt one_kernel = For::make(Var("b"), i64(0), i64(1), ForKind::thread_binding, two, "blockIdx.x");
  target::DeviceModule m = target::split_host_device(fn(one_kernel), cuda);
  REQUIRE(m.kernels.size() == 1);
  CHECK(m.kernels[0].launch.block[0] == 64);
  CHECK(ir::to_string(m.kernels[0].func.body).find("u < 16") != std::string::npos);
}

TEST_CASE("gpu: dense in shared-memory tiles gets its barriers; a barrier under a condition is refused") {
  const target::Target cuda = target::parse_target("cuda -arch=sm_90");
  auto built = ops::build(ops::get_op("dense"), {{dtype::float32, {128, 64}}, {dtype::float32, {64, 128}}}, {}, cuda);
  std::string ir = ir::to_string(built.func.body);
  INFO(ir);
  // Two shared tiles, one barrier after they are loaded and one at the end of each step of k.
  CHECK(count(ir, "in shared") == 2);
  CHECK(count(ir, "barrier(shared)") == 2);
  target::DeviceModule m = target::split_host_device(built.func, cuda);
  REQUIRE(m.kernels.size() == 1);
  CHECK(m.kernels[0].launch.block[0] * m.kernels[0].launch.block[1] == 256);
  CHECK(m.kernels[0].shared_bytes == 2 * 64 * 16 * 4);
  std::string src = target::emit_gpu({built.func}, cuda).source;
  CHECK(count(src, "__syncthreads();") == 2);
  CHECK(count(src, "__shared__ float") == 2);
  // A product too small for tiles (64 outputs of 64 terms): each output is one block, its 64
  // threads reduce together through one shared buffer.
  auto small = ops::build(ops::get_op("dense"), {{dtype::float32, {8, 64}}, {dtype::float32, {64, 8}}}, {}, cuda);
  CHECK(count(ir::to_string(small.func.body), "in shared") == 1);
  target::DeviceModule sm = target::split_host_device(small.func, cuda);
  REQUIRE(sm.kernels.size() == 1);
  CHECK(sm.kernels[0].launch.grid[0] == 64);
  CHECK(sm.kernels[0].launch.block[0] == 64);

  // A shared buffer written and read inside a branch: the barrier would be skipped by some threads.
  Buffer S("S", dtype::float32, {i64(16)}, MemoryScope::shared), O("O", dtype::float32, {i64(16)});
  Var t("t");
  Stmt body = IfThenElse::make(t < i64(8), Seq::make({Store::make(S, make_const(dtype::float32, 1.0), t),
                                                       Store::make(O, Load::make(S, i64(15) - t), t)}));
  Stmt kernel = Allocate::make(S, For::make(t, i64(0), i64(16), ForKind::thread_binding, body, "threadIdx.x"));
  CHECK(nnvm_test::error_of([&] { lower::insert_barriers(kernel); }).first == "nnvm.codegen.divergent_barrier");
}

}  // namespace target_gpu_split
