// Optimizing, JIT-compiling and caching LLVM modules built by emitter.cpp, as target::Kernels.
#include <chrono>
#include <mutex>
#include <unordered_map>

#include <llvm/ADT/StringMap.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "compat.hpp"
#include "pipeline.hpp"
#include "nnvm/codegen/llvm_jit.hpp"
#include "nnvm/ir/printer.hpp"
#include "nnvm/target/kernel_call.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen {

namespace detail {

// The JIT session that owns a module's code, kept alive by the module's Kernels.
struct LlvmModule {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::vector<std::string> symbols;
  std::vector<std::pair<nnvm_kernel_fn, nnvm_workspace_bytes_fn>> entries;
};

// A compiled batch: the session and the module its Kernels share (code: the optimized IR).
struct Compiled {
  std::shared_ptr<const LlvmModule> session;
  std::shared_ptr<const target::KernelModule> module;
};

namespace {

void init_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// The target of `o`: the host CPU and its features unless a CPU is named.
llvm::orc::JITTargetMachineBuilder machine_builder(const LlvmOptions& o) {
  init_llvm();
  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(llvm::sys::getProcessTriple())};
  std::string cpu = o.cpu, features = o.features;
  if (cpu.empty()) {
    cpu = llvm::sys::getHostCPUName().str();
    if (features.empty()) features = host_features();
  }
  jtmb.setCPU(cpu);
  if (!features.empty()) {
    std::vector<std::string> list;
    for (size_t start = 0; start <= features.size();) {
      size_t end = features.find(',', start);
      if (end == std::string::npos) end = features.size();
      if (end > start) list.push_back(features.substr(start, end - start));
      start = end + 1;
    }
    jtmb.addFeatures(list);
  }
  jtmb.setCodeGenOptLevel(nnvm_llvm_compat::codegen_level(o.opt_level));
  return jtmb;
}

uint64_t fnv1a64(const std::string& s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Compiled compile(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& o) {
  auto start = std::chrono::steady_clock::now();
  auto jtmb = machine_builder(o);
  auto tm = check(jtmb.createTargetMachine(), "cannot create a target machine");
  Built b = build(fns, *tm, o.opt_level, true);
  auto mod = std::make_shared<LlvmModule>();
  auto module = std::make_shared<target::KernelModule>();
  module->emitter = target::Emitter::llvm;
  module->code = print(*b.module);
  mod->symbols = b.symbols;
  mod->jit = check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create(), "cannot start LLJIT");
  // libm and the half-precision conversion helpers come from the process.
  mod->jit->getMainJITDylib().addGenerator(
      check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(mod->jit->getDataLayout().getGlobalPrefix()),
            "cannot search the process for symbols"));
  if (auto err = mod->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(b.module), std::move(b.ctx))))
    throw BackendError("nnvm.codegen.llvm.jit", "cannot add the module to LLJIT: " + llvm_error(std::move(err)));
  for (auto& s : mod->symbols) {
    auto k = check(mod->jit->lookup(s), "cannot compile a kernel");
    auto w = check(mod->jit->lookup(s + "_workspace_bytes"), "cannot compile a kernel");
    mod->entries.emplace_back(reinterpret_cast<nnvm_kernel_fn>(nnvm_llvm_compat::symbol_address(k)),
                              reinterpret_cast<nnvm_workspace_bytes_fn>(nnvm_llvm_compat::symbol_address(w)));
  }
  module->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  module->keep_alive = mod;
  return {std::move(mod), std::move(module)};
}

}  // namespace
}  // namespace detail

std::vector<target::Kernel> jit_llvm(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options) {
  if (fns.empty()) return {};
  std::string key = str_cat(options.cpu, "\n", options.features, "\n", options.opt_level, "\n");
  for (auto& fn : fns) {
    key += fn.name + "\n" + ir::to_string(fn);
    for (auto& v : fn.size_vars) key += " " + v.name();
    key += "\n";
  }
  uint64_t h = detail::fnv1a64(key);

  static std::mutex mutex;
  static std::unordered_map<uint64_t, detail::Compiled> cache;
  detail::Compiled mod;
  bool hit = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(h); it != cache.end()) {
      mod = it->second;
      hit = true;
    } else {
      mod = detail::compile(fns, options);
      cache.emplace(h, mod);
    }
  }
  std::vector<target::Kernel> out;
  for (size_t i = 0; i < fns.size(); ++i) {
    auto [kernel, workspace_bytes] = mod.session->entries[i];
    out.emplace_back(mod.module, fns[i], mod.session->symbols[i], kernel, workspace_bytes, hit);
  }
  return out;
}
target::Kernel jit_llvm(const ir::LoweredFunc& fn, const LlvmOptions& options) {
  return std::move(jit_llvm(std::vector<ir::LoweredFunc>{fn}, options)[0]);
}

std::string emit_llvm_ir(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options, bool optimized) {
  auto tm = detail::check(detail::machine_builder(options).createTargetMachine(), "cannot create a target machine");
  return detail::print(*detail::build(fns, *tm, options.opt_level, optimized).module);
}
std::string emit_llvm_ir(const ir::LoweredFunc& fn, const LlvmOptions& options, bool optimized) {
  return emit_llvm_ir(std::vector<ir::LoweredFunc>{fn}, options, optimized);
}

std::string emit_asm(const std::vector<ir::LoweredFunc>& fns, const LlvmOptions& options) {
  auto tm = detail::check(detail::machine_builder(options).createTargetMachine(), "cannot create a target machine");
  auto built = detail::build(fns, *tm, options.opt_level, true);
  llvm::SmallString<0> text;
  llvm::raw_svector_ostream os(text);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile))
    throw BackendError("nnvm.codegen.llvm.asm", "the target cannot emit assembly");
  pm.run(*built.module);
  return std::string(text.str());
}
std::string emit_asm(const ir::LoweredFunc& fn, const LlvmOptions& options) {
  return emit_asm(std::vector<ir::LoweredFunc>{fn}, options);
}

}  // namespace codegen
NNVM_END_NAMESPACE
