// The GPU engines of the op checks (op_check.hpp): the kernels of one check group emitted as one
// GPU program (target::emit_gpu), then
//   opencl: built on the OpenCL device (PoCL's CPU device here) and run; the caller compares
//           every output with its plain-loop reference;
//   cuda:   compiled by nvcc ($NNVM_TEST_NVCC) to cubins for sm_80 and sm_90, warnings as errors
//           (ptxas runs as part of it); nothing runs on a machine without a GPU;
//   metal:  compiled as C++ by clang ($NNVM_TEST_METAL_CXX) against tests/support/metal/metal_stdlib,
//           which says what that check does not catch. Metal has no float64: a case with a
//           float64 buffer is reported and left out of the Metal source.
// The source is kept in the kernel cache directory as gpu_<group>.<cl|cu|metal> for reading.
#pragma once

#include <fstream>

#include "nnvm/target/gpu_emitter.hpp"
#include "support/check.hpp"
#if __has_include(<CL/cl.h>)
#include "nnvm/target/opencl_module.hpp"
#define NNVM_TEST_HAS_OPENCL 1
#endif

namespace nnvm_test {

// `run(k, call)` runs case k with `call(views)` running its kernel.
template <class Run>
void gpu_check(const std::vector<nnvm::ir::LoweredFunc>& fns, const nnvm::target::Target& target,
               const std::string& group, Run&& run) {
  using namespace nnvm;
  std::vector<ir::LoweredFunc> emitted;
  for (auto& f : fns) {
    bool float64 = false;
    for (auto& b : f.params) float64 |= b->dtype == dtype::float64;
    if (target.emitter == target::Emitter::metal && float64) MESSAGE(group, ": ", f.name, " has float64 buffers; not for Metal");
    else emitted.push_back(f);
  }
  target::GpuProgram program = target::emit_gpu(emitted, target);
  std::string dir = target::detail::cache_dir({});
  target::detail::make_dirs(dir);
  const char* ext = target.emitter == target::Emitter::cuda ? ".cu" : target.emitter == target::Emitter::metal ? ".metal" : ".cl";
  std::string path = dir + "/gpu_" + group + ext;
  std::ofstream(path) << program.source;
  INFO("GPU source: ", path);
  // Kernels one thread runs (a stage of one element that reduces nothing, or too little to
  // share out): listed so they are seen.
  for (size_t f = 0; f < program.modules.size(); ++f)
    for (size_t k = 0; k < program.modules[f].kernels.size(); ++k) {
      const target::LaunchDims& l = program.modules[f].kernels[k].launch;
      if (l.blocks() * l.threads_per_block() == 1) MESSAGE(group, ": ", program.symbols[f][k], " runs on one thread");
    }
  if (target.emitter == target::Emitter::opencl) {
#if NNVM_TEST_HAS_OPENCL
    static const runtime::opencl::Device device = runtime::opencl::Device::open();
    target::OpenCLModule module(program, device);
    for (size_t k = 0; k < fns.size(); ++k) run(k, [&](auto views) { module(k, views); });
#else
    FAIL("this test binary was built without the OpenCL headers (opencl-headers)");
#endif
    return;
  }
  if (target.emitter == target::Emitter::metal) {
    const char* cxx = std::getenv("NNVM_TEST_METAL_CXX");
    REQUIRE_MESSAGE(cxx != nullptr, "NNVM_TEST_METAL_CXX must name clang++ for the Metal checks");
    // clang refuses an address space on an automatic variable, so the kernels' threadgroup
    // arrays (declared at kernel scope, as Metal has them) are made static for this check.
    std::string checked = path + ".shim.cpp", text = program.source;
    for (size_t at = 0; (at = text.find("\n  threadgroup ", at)) != std::string::npos; at += 10)
      text.replace(at, 3, "\n  static ");
    std::ofstream(checked) << text;
    auto [status, output] = target::detail::run_command(
        str_cat(cxx, " -std=c++17 -fsyntax-only -Wall -Werror -Wno-unknown-attributes -Wno-unused-function -I",
                NNVM_TEST_SOURCE_DIR, "/tests/support/metal ", checked));
    CHECK_MESSAGE(status == 0, group, ": the Metal source does not compile as C++ against the shim (", path, "):\n", output);
    return;
  }
  REQUIRE(target.emitter == target::Emitter::cuda);
  const char* nvcc = std::getenv("NNVM_TEST_NVCC");
  REQUIRE_MESSAGE(nvcc != nullptr, "NNVM_TEST_NVCC must name nvcc for the CUDA checks");
  for (const char* arch : {"sm_80", "sm_90"}) {
    auto [status, output] = target::detail::run_command(
        str_cat(nvcc, " -arch=", std::string(arch), " -cubin -Werror all-warnings -o ", path, ".", arch, ".cubin ", path));
    CHECK_MESSAGE(status == 0, group, ": nvcc -arch=", std::string(arch), " refused ", path, ":\n", output);
  }
}

}  // namespace nnvm_test
