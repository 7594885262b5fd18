// Every x86 vector width, not only this machine's: models compile for AVX-512, AVX2 and SSE
// targets (Target::for_cpu) on every back end, and run and match plain loops where this CPU can
// run them. The development machine has AVX-512 while CI's and users' often stop at AVX2, whose
// narrower registers change schedules (blocks, register tiles, buffer sizes): compiling at each
// width here catches what would otherwise fail only there.
#include "support/pch.hpp"
#include "support/check.hpp"
#include "support/conv_reference.hpp"

#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_graph.hpp"
#endif

namespace graph_isa_levels {

using namespace nnvm;
using graph::GraphBuilder;

namespace {

struct Level {
  std::string kind, cpu;
};

// C and LLVM (when built) at the host's width, AVX2 and SSE4.2.
std::vector<Level> levels() {
  std::vector<std::string> kinds{"c"};
#if NNVM_TEST_WITH_LLVM
  kinds.push_back("llvm");
#endif
  std::vector<Level> out;
  for (auto& k : kinds)
    for (const char* cpu : {"native", "x86-64-v3", "x86-64-v2"}) out.push_back({k, cpu});
  return out;
}

graph::CompileOptions options_for(const Level& l) {
  graph::CompileOptions o;
  o.target = target::parse_target(l.kind + " -mcpu=" + l.cpu);
#if NNVM_TEST_WITH_LLVM
  if (o.target.emitter == target::Emitter::llvm) o.compiler = codegen::llvm_kernel_compiler({.cpu = o.target.cpu});
#endif
  return o;
}

}  // namespace

#if defined(__x86_64__)
// ResNet-50's 512-channel 3x3 stride-2 conv: the input rows one output row reads (512 channels x
// 3 rows x 16 padded columns, 96 KiB) exceed the stack a parallel task may use, which on AVX2
// once made the emitters refuse the kernel (nnvm.codegen.allocate_size).
TEST_CASE("a 512-channel strided 3x3 conv + relu compiles at every x86 vector width and matches plain loops") {
  NDArray x = nnvm_test::random_array(dtype::float32, {1, 512, 14, 14}, 11);
  NDArray w = nnvm_test::random_array(dtype::float32, {16, 512, 3, 3}, 12);
  NDArray b = nnvm_test::random_array(dtype::float32, {16}, 13);
  GraphBuilder gb("wide_conv");
  auto in = gb.input("x", dtype::float32, {1, 512, 14, 14});
  auto conv = gb.op("conv", {in, gb.constant("w", w), gb.constant("b", b)},
                    ops::Attrs().set_ints("strides", {2, 2}).set_ints("pads", {1, 1, 1, 1}), "conv");
  gb.output(gb.op("relu", {conv}, {}, "relu"));
  graph::Graph g = gb.build();

  nnvm_test::Ref want = nnvm_test::conv_ref(nnvm_test::to_ref(x), w, &b, 2, 1, 1);
  std::vector<float> expected;
  for (double v : want.v) expected.push_back(float(std::max(v, 0.0)));

  for (const Level& l : levels()) {
    CAPTURE(l.kind);
    CAPTURE(l.cpu);
    graph::CompileOptions o = options_for(l);
    graph::CompiledModel m = graph::compile(g, o);
    if (!o.target.runs_here()) continue;  // compiled, as CI's narrower machines will run it
    auto out = m.run({x});
    REQUIRE(out.size() == 1);
    CHECK(out[0].shape() == std::vector<int64_t>{1, 16, 7, 7});
    std::string diff = nnvm_test::compare<float>(out[0].values<float>(), expected, 1e-4, 1e-4);
    CHECK_MESSAGE(diff.empty(), diff);
  }
}
#endif

TEST_CASE("Target::for_cpu takes the vector width from the CPU name and refuses unknown names") {
  CHECK(target::Target::for_cpu(target::Emitter::c, "x86-64-v3").vector_bits == 256);
  CHECK(target::Target::for_cpu(target::Emitter::llvm, "skylake-avx512").vector_bits == 512);
  CHECK(target::Target::for_cpu(target::Emitter::c, "x86-64-v2").vector_bits == 128);
  CHECK(target::Target::for_cpu(target::Emitter::c, "x86-64-v3").cpu == "x86-64-v3");
  CHECK(target::Target::for_cpu(target::Emitter::c, "native").vector_bits == target::Target::host_vector_bits());
  CHECK(target::Target::for_cpu(target::Emitter::c, "x86-64-v2").runs_here());
  try {
    target::Target::for_cpu(target::Emitter::c, "pentium-9000");
    FAIL("an unknown CPU was accepted");
  } catch (const UserError& e) {
    CHECK(e.id() == "nnvm.target.cpu");
    CHECK(std::string(e.what()).find("pentium-9000") != std::string::npos);
  }
}

}  // namespace graph_isa_levels
