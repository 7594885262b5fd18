// What every importer's tests do with a real model: compile it for each CPU back end, at the
// host's vector width and at AVX2's (which CI's and users' machines may be limited to), run it
// on the input the framework was given, and compare each output with the framework's own. Also
// a scratch folder for the hostile files the tests derive from the committed models.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "support/check.hpp"
#if NNVM_TEST_WITH_LLVM
#include "nnvm/codegen/llvm_graph.hpp"
#endif

namespace nnvm_test {

// c, c at x86-64-v3, and, when the test links LLVM (NNVM_TEST_WITH_LLVM), llvm likewise.
inline std::vector<std::pair<std::string, nnvm::graph::CompileOptions>> cpu_engines() {
  namespace nv = nnvm;
  std::vector<std::pair<std::string, nv::graph::CompileOptions>> engines;
  for (const char* spec : {"c", "c -mcpu=x86-64-v3"}) {
    nv::graph::CompileOptions c;
    c.target = nv::target::parse_target(spec);
    engines.emplace_back(spec, c);
  }
#if NNVM_TEST_WITH_LLVM
  for (const char* cpu : {"", "x86-64-v3"}) {
    nv::graph::CompileOptions llvm;
    llvm.target = nv::target::parse_target(std::string("llvm") + (*cpu ? std::string(" -mcpu=") + cpu : ""));
    nv::codegen::LlvmOptions lo;
    lo.cpu = cpu;
    llvm.compiler = nv::codegen::llvm_kernel_compiler(lo);
    engines.emplace_back(nv::target::to_string(llvm.target), llvm);
  }
#endif
  return engines;
}

// Every output of `g` on every engine against the framework's float32 outputs: within `rtol`
// relative plus `atol_scale` of the output's largest magnitude, at least 1 (random-weight
// logits reach ~10-100).
inline void check_against_framework(const nnvm::graph::Graph& g, const std::vector<nnvm::NDArray>& inputs,
                                    const std::vector<nnvm::NDArray>& expected, double rtol = 1e-3,
                                    double atol_scale = 1e-4) {
  for (auto& [engine, options] : cpu_engines()) {
    CAPTURE(engine);
    nnvm::graph::CompiledModel m = nnvm::graph::compile(g, options);
    std::vector<nnvm::NDArray> out = m.run(inputs);
    REQUIRE(out.size() == expected.size());
    for (size_t k = 0; k < out.size(); ++k) {
      CAPTURE(k);
      REQUIRE(out[k].shape() == expected[k].shape());
      REQUIRE(out[k].dtype() == nnvm::dtype::float32);
      const nnvm::NDArray& got = out[k];
      auto want = expected[k].values<float>();
      double scale = 0;
      for (float v : want) scale = std::max(scale, double(std::abs(v)));
      CHECK(compare(got.values<float>(), want, rtol, atol_scale * std::max(scale, 1.0)) == "");
    }
  }
}

// This process's scratch folder for `suite` ("mxnet"), made if needed; all of them are removed
// when the process exits.
inline std::filesystem::path scratch_dir(const std::string& suite) {
  struct Root {
    std::filesystem::path dir = std::filesystem::temp_directory_path() / ("nnvm_tests_" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  };
  static Root root;
  std::filesystem::path dir = root.dir / suite;
  std::filesystem::create_directories(dir);
  return dir;
}

// A file named `name` holding `bytes` in the scratch folder for `suite`.
inline std::string scratch_file(const std::string& suite, const std::string& name, const std::string& bytes) {
  std::filesystem::path p = scratch_dir(suite) / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p.string();
}

}  // namespace nnvm_test
