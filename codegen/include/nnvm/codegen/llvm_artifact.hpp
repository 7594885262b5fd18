// The LLVM back end as the deploy artifact's builder (graph::save_artifact): kernels.so is LLVM
// object code for the model's target CPU, made by the same module builder, optimization
// pipeline and level as jit_llvm, so the deployed kernels are the JIT's kernels. The system C
// compiler ($CC, else cc) links the object with the kernels' signatures into the shared library.
// Part of the optional nnvm::llvm library; no LLVM header leaks through this one.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "nnvm/codegen/llvm_aot.hpp"
#include "nnvm/graph/artifact.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen {

// kernels.so through emit_object with `options` (cpu empty: "native", this machine's CPU and
// features, as jit_llvm), plus kernels.h (emit_c_header) beside it for inspection.
// Errors: emit_object's, and "nnvm.artifact.link" when the C compiler cannot link the library.
inline graph::ArtifactBuilder llvm_artifact_builder(AotOptions options = {}) {
  if (options.cpu.empty()) options.cpu = "native";
  return [options](const std::vector<ir::LoweredFunc>& fns) {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "nnvm_artifact_XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw BackendError("nnvm.artifact.link", "cannot create a temporary folder from " + tmpl);
    struct Remove {
      std::string dir;
      ~Remove() {
        std::error_code ec;
        fs::remove_all(dir, ec);
      }
    } scratch{tmpl};
    std::string object = tmpl + "/kernels.o", signatures = tmpl + "/signatures.c", library = tmpl + "/kernels.so";
    emit_object(fns, object, options);
    graph::ArtifactLibrary lib;
    lib.symbols = object_symbols(fns);
    std::ofstream(signatures) << target::signatures_c_source(fns, lib.symbols);
    using target::detail::shell_quote;
    std::string cc = target::detail::plan_c_compile("", {}).cc;
    std::string cmd = str_cat(cc, " -shared -fPIC -o ", shell_quote(library), " ", shell_quote(object), " ",
                              shell_quote(signatures), " -lm");
    auto [status, output] = target::detail::run_command(cmd);
    if (status != 0)
      throw BackendError("nnvm.artifact.link",
                         str_cat("the C compiler could not link kernels.so (exit status ", status, ")\ncommand: ", cmd, "\n", output));
    lib.so = graph::detail::read_binary_file(library);
    lib.sources.emplace_back("kernels.h", emit_c_header(fns));
    return lib;
  };
}

// The artifact builder for the back end `t` names: LLVM object code for the LLVM emitter (for
// t.cpu), else the C emitter with the C JIT's flags (graph::c_artifact_builder).
inline graph::ArtifactBuilder artifact_builder_for(const target::Target& t) {
  if (t.emitter == target::Emitter::llvm) {
    AotOptions o;
    o.cpu = t.cpu;
    return llvm_artifact_builder(o);
  }
  target::CJitOptions c;
  c.cpu = t.cpu;
  return graph::c_artifact_builder(c);
}

}  // namespace codegen
NNVM_END_NAMESPACE
