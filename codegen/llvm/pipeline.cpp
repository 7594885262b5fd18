#include "pipeline.hpp"

#include <llvm/ADT/StringMap.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>

#include "compat.hpp"
#include "nnvm/lower/interchange_reductions.hpp"
#include "emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

std::string llvm_error(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

Built build(const std::vector<ir::LoweredFunc>& fns, llvm::TargetMachine& tm, int opt_level, bool optimize) {
  Built b;
  b.ctx = std::make_unique<llvm::LLVMContext>();
  b.module = std::make_unique<llvm::Module>("nnvm", *b.ctx);
  b.module->setDataLayout(tm.createDataLayout());
  b.module->setTargetTriple(tm.getTargetTriple().str());
  // LLVM's loop vectorizer takes innermost loops only: a reduction nest no schedule ordered gets
  // its data-parallel loop moved innermost first (lower/interchange_reductions.hpp), which GCC's
  // outer-loop vectorizer does by itself on the C emitter's path.
  std::vector<ir::LoweredFunc> prepared = fns;
  if (optimize && opt_level >= 2)
    for (auto& fn : prepared) fn.body = lower::interchange_reductions(fn.body);
  b.symbols = build_module(*b.module, prepared, tm.getTargetCPU().str(), tm.getTargetFeatureString().str());
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*b.module, &os))
    throw InternalError("nnvm.codegen.llvm.invalid_ir", "the LLVM emitter produced invalid IR: " + os.str());
  if (optimize && opt_level > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    // LLVM's own defaults leave the loop and SLP vectorizers off (clang turns them on): without
    // them an unscheduled loop nest stays scalar, many times slower than GCC's code for the
    // same nest through the C emitter.
    llvm::PipelineTuningOptions tuning;
    tuning.LoopVectorization = opt_level >= 2;
    tuning.SLPVectorization = opt_level >= 2;
    tuning.LoopUnrolling = true;
    llvm::PassBuilder pb(&tm, tuning);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = opt_level == 1 ? llvm::OptimizationLevel::O1
                                    : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                     : llvm::OptimizationLevel::O3;
    pb.buildPerModuleDefaultPipeline(level).run(*b.module, mam);
  }
  return b;
}

std::string print(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return os.str();
}

std::string host_features() {
  std::string features;
  llvm::StringMap<bool> host;
  if (llvm::sys::getHostCPUFeatures(host))
    for (auto& f : host) features += (features.empty() ? "" : ",") + std::string(f.second ? "+" : "-") + f.first().str();
  return features;
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
