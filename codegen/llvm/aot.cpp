// Object files and their C headers (nnvm/codegen/llvm_aot.hpp).
#include <mutex>

#include <llvm/IR/LegacyPassManager.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>

#include "compat.hpp"
#include "emitter.hpp"
#include "nnvm/codegen/llvm_aot.hpp"
#include "nnvm/ir/printer.hpp"
#include "nnvm/target/kernel_abi_source.hpp"
#include "pipeline.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen {
namespace {

// Every target this libLLVM was built with, since an object may be for any of them.
void init_all_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
  });
}

std::string registered_targets() {
  std::string names;
  for (const llvm::Target& t : llvm::TargetRegistry::targets()) names += (names.empty() ? "" : ", ") + std::string(t.getName());
  return names;
}

std::unique_ptr<llvm::TargetMachine> target_machine(const AotOptions& o) {
  init_all_targets();
  std::string given = o.triple.empty() ? llvm::sys::getProcessTriple() : o.triple;
  llvm::Triple triple(llvm::Triple::normalize(given));
  std::string why;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.str(), why);
  if (!target)
    throw BackendError("nnvm.codegen.llvm.triple", str_cat("unknown target triple '", given, "' (LLVM: ", why,
                                                           "); registered targets: ", registered_targets()));
  // The kernel ABI and the emitter assume 64-bit pointers and little-endian vectors; these
  // two are the ones built and tested.
  if (triple.getArch() != llvm::Triple::x86_64 && triple.getArch() != llvm::Triple::aarch64)
    throw BackendError("nnvm.codegen.llvm.triple",
                       str_cat("target triple '", given, "' has architecture '", triple.getArchName().str(),
                               "', which nnvm object files do not support (x86_64 and aarch64 only; registered targets: ",
                               registered_targets(), ")"));
  std::string cpu = o.cpu.empty() ? "generic" : o.cpu, features = o.features;
  if (cpu == "native") {
    llvm::Triple host(llvm::sys::getProcessTriple());
    if (triple.getArch() != host.getArch() || triple.getOS() != host.getOS())
      throw BackendError("nnvm.codegen.llvm.cpu", str_cat("CPU 'native' means this machine, but the triple is '", given, "'"));
    cpu = llvm::sys::getHostCPUName().str();
    if (features.empty()) features = detail::host_features();
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple.str(), "", ""));
  if (cpu != "generic" && (!sti || !sti->isCPUStringValid(cpu)))
    throw BackendError("nnvm.codegen.llvm.cpu",
                       str_cat("CPU '", cpu, "' is not known to LLVM's ", target->getName(), " target (triple '", given, "')"));
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple.str(), cpu, features, llvm::TargetOptions(), llvm::Reloc::PIC_, {},
      nnvm_llvm_compat::codegen_level(o.opt_level)));
  if (!tm) throw BackendError("nnvm.codegen.llvm.triple", str_cat("LLVM cannot create a target machine for '", given, "'"));
  return tm;
}

// Text safe inside a C block comment, one " * " line per input line.
std::string comment_lines(const std::string& text) {
  std::string out = " * ";
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') out += "\n * ";
    else if (text[i] == '*' && i + 1 < text.size() && text[i + 1] == '/') out += "* ";
    else out += text[i];
  }
  return out + "\n";
}

}  // namespace

void emit_object(const std::vector<ir::LoweredFunc>& fns, const std::string& object_path, const AotOptions& options) {
  auto tm = target_machine(options);
  auto built = detail::build(fns, *tm, options.opt_level, true);
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager pm;
  if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_ObjectFile))
    throw BackendError("nnvm.codegen.llvm.object_file",
                       str_cat("LLVM's ", tm->getTarget().getName(), " target cannot emit object files"));
  pm.run(*built.module);
  // Written only once complete, so a failed compile leaves no partial object behind.
  std::error_code ec;
  llvm::raw_fd_ostream out(object_path, ec);
  if (!ec) {
    out.write(bytes.data(), bytes.size());
    out.close();
    ec = out.error();
  }
  if (ec)
    throw BackendError("nnvm.codegen.llvm.object_file", str_cat("cannot write object file '", object_path, "': ", ec.message()));
}

std::vector<std::string> object_symbols(const std::vector<ir::LoweredFunc>& fns) { return detail::kernel_symbols(fns); }

std::string emit_c_header(const std::vector<ir::LoweredFunc>& fns) {
  std::vector<std::string> symbols = detail::kernel_symbols(fns);
  std::string guard = "NNVM_AOT";
  for (auto& s : symbols)
    for (char c : "_" + s) guard += char(std::toupper(static_cast<unsigned char>(c)));
  guard += "_H";
  std::string h = "/* Generated by nnvm (codegen::emit_c_header): the kernels of one object file. */\n#ifndef " +
                  guard + "\n#define " + guard + "\n\n" + target::kernel_abi_source() +
                  "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n";
  for (size_t i = 0; i < fns.size(); ++i) {
    const ir::LoweredFunc& fn = fns[i];
    std::string doc = str_cat(symbols[i], ": kernel ", fn.name, "\n");
    if (!fn.origin.empty()) doc += fn.origin + "\n";
    for (size_t a = 0; a < fn.params.size(); ++a) {
      const ir::Buffer& b = fn.params[a];
      std::string shape;
      for (auto& d : b->shape) shape += (shape.empty() ? "" : ", ") + ir::to_string(d);
      doc += str_cat("  args[", a, "]: ", b->name, " ", b->dtype.str(), "[", shape, "]\n");
    }
    if (fn.size_vars.empty()) {
      doc += "  sizes: none (pass NULL)";
    } else {
      doc += "  sizes:";
      for (size_t j = 0; j < fn.size_vars.size(); ++j) doc += str_cat(" [", j, "] ", fn.size_vars[j].name());
    }
    doc += "\nworkspace: at least " + symbols[i] + "_workspace_bytes(sizes) bytes, 64-byte aligned (NULL when 0); " +
           "env NULL runs parallel loops serially";
    h += "\n/*\n" + comment_lines(doc) + " */\n";
    h += "int32_t " + symbols[i] +
         "(void* const* args, const int64_t* sizes, void* workspace, uint64_t workspace_bytes,\n    const nnvm_kernel_env* env);\n";
    h += "uint64_t " + symbols[i] + "_workspace_bytes(const int64_t* sizes);\n";
  }
  h += "\n#ifdef __cplusplus\n}\n#endif\n#endif\n";
  return h;
}

}  // namespace codegen
NNVM_END_NAMESPACE
