// nnvmc: the nnvm compiler driver. `nnvmc --help` lists the commands; every error names the
// value and what was expected, and ends with a non-zero exit status.
#include <CLI/CLI.hpp>
#include <iostream>

#include "check.hpp"
#include "commands.hpp"

namespace {

// Which files nnvmc reads as models (session.cpp: model_format).
constexpr const char* kModelHelp =
    "the model: .onnx (or a folder with model.onnx), NAME-symbol.json (MXNet), .keras or .h5 (Keras), .mlmodel or "
    ".mlpackage (Core ML)";

void add_common(CLI::App* cmd, nnvmc::Options& o) {
  cmd->add_option("--target", o.target, "host, c or llvm (host: llvm when built, else c), optionally with -mcpu=NAME (e.g. \"llvm -mcpu=x86-64-v3\"); default: this machine; compile also takes c-standalone [-mcpu=cortex-m4] (self-contained C99 for a microcontroller), wasm, and the GPU targets cuda [-arch=sm_90] and metal (their source); opencl also runs (run, bench, check) on an OpenCL device");
  cmd->add_option("--opt-level", o.opt_level, "graph optimization level (0-3)")->check(CLI::Range(0, 3));
  cmd->add_option("--threads", o.threads, "threads for parallel loops (0: NNVM_NUM_THREADS or all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--input-shape", o.input_shapes, "fix an input's shape: name:1x3x224x224 (repeatable)");
  cmd->add_option("--define-symbol", o.symbols, "bind a symbolic extent: N=1 (repeatable)");
  cmd->add_option("--params", o.params, "MXNet models (NAME-symbol.json): the parameter file; default: the one NAME-<epoch>.params beside it");
  cmd->add_option("--print-ir-after", o.print_ir_after, "print each kernel's IR after a lowering pass, or all");
  cmd->add_flag("--print-pass-times", o.print_pass_times, "print import, compile and per-pass times");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nnvmc: compile, run, benchmark, inspect and check models with nnvm"};
  app.require_subcommand(1);
  nnvmc::Options o;
  nnvmc::RunOptions r;
  nnvmc::CheckOptions c;
  std::string model;
  std::vector<std::string> cases, emit_list;

  auto* compile = app.add_subcommand("compile", "compile a model; -o DIR writes the deploy artifact");
  compile->add_option("model", model, kModelHelp)->required();
  add_common(compile, o);
  compile->add_option("-o,--output", o.out, "folder for the deploy artifact and emitted files");
  compile->add_option("--emit", emit_list,
                      "comma-separated: c (kernels.c), ll, asm, stmt (lowered IR), dot (graph.dot), json (graph.json: "
                      "the optimized graph with fused groups), onnx (graph.onnx, for Netron; needs -o)")
      ->delimiter(',');
  compile->add_option("--name", o.name, "c-standalone: the C prefix (NAME_run, NNVM_NAME_ARENA_BYTES); default: the model file's name");
  compile->add_option("--opt-for", o.opt_for, "c-standalone: size (default, -Os) or speed (-O2)")->check(CLI::IsMember({"size", "speed"}));
  compile->add_option("--max-ram", o.max_ram, "c-standalone: fail, writing nothing, when arena + static data + stack exceed this (bytes, or 256K)");
  compile->add_option("--max-flash", o.max_flash, "c-standalone: fail, writing nothing, when code + weights exceed this (bytes, or 1M)");

  auto* run = app.add_subcommand("run", "run a model once and print output summaries");
  run->add_option("model", model, std::string(kModelHelp) + ", or a deploy artifact folder")->required();
  add_common(run, o);
  run->add_option("-i,--input", r.inputs, "input files (.npy/.pb) in input order, or name=file; missing ones are generated");
  run->add_option("--save-outputs", r.save_outputs, "folder for output_<k>.npy");
  run->add_option("--index-check", o.index_check,
                  "a Gather/GatherElements/GatherND index outside its axis at run time: error (default; "
                  "the run fails naming the node) or clamp (read the nearest valid element, as compiled "
                  "models and deploy artifacts do); constant indices are always checked at import")
      ->check(CLI::IsMember({"error", "clamp"}));

  auto* bench = app.add_subcommand("bench", "time repeated runs: median, min, max");
  bench->add_option("model", model, std::string(kModelHelp) + ", or a deploy artifact folder")->required();
  add_common(bench, o);
  bench->add_option("-i,--input", r.inputs, "input files, as for run");
  bench->add_option("--repeat", r.repeat, "timed runs")->check(CLI::PositiveNumber);
  bench->add_option("--warmup", r.warmup, "untimed runs first")->check(CLI::NonNegativeNumber);
  bench->add_flag("--profile", r.profile, "print the per-op time table");
  bench->add_option("--trace", r.trace, "write a Chrome-trace JSON of one run");

  auto* inspect = app.add_subcommand("inspect", "op histogram, shapes, parameter count, support report");
  inspect->add_option("model", model, kModelHelp)->required();
  add_common(inspect, o);

  auto* check = app.add_subcommand("check", "run ONNX backend-style test cases");
  check->add_option("cases", cases, "case folders, or folders of cases")->required();
  add_common(check, o);
  check->add_option("--targets", c.targets, "emitters to check (comma-separated; default --target)")->delimiter(',');
  check->add_option("--rtol", c.rtol, "relative tolerance");
  check->add_option("--atol", c.atol, "absolute tolerance");
  check->add_option("--quant-steps", c.quant_steps,
                    "an output made by DequantizeLinear (per-tensor constant scale) may differ by this many of its steps")
      ->check(CLI::NonNegativeNumber);
  check->add_option("--batch", c.batch, "cases per compiler call")->check(CLI::PositiveNumber);
  check->add_option("--timeout", c.timeout_s, "seconds per case")->check(CLI::PositiveNumber);
  check->add_option("--coverage", c.coverage_out, "write the coverage record (markdown)");
  check->add_option("--baseline", c.baseline, "fail only when a case passing in this record stops passing");
  check->add_flag("-q,--quiet", c.quiet, "print only failures and the totals");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.emit = emit_list;
  try {
    if (*compile) return nnvmc::run_compile(model, o);
    if (*run) return nnvmc::run_run(model, o, r);
    if (*bench) return nnvmc::run_bench(model, o, r);
    if (*inspect) return nnvmc::run_inspect(model, o);
    if (*check) return nnvmc::run_check(cases, o, c);
  } catch (const std::bad_alloc&) {
    // Importer and compiler name the file and node where they can; this is the last resort.
    std::cerr << "nnvmc: error: [nnvm.cli.out_of_memory] memory ran out (model " << nnvm::printable(model) << ")\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "nnvmc: error: " << e.what() << "\n";
    return 1;
  }
  return 1;
}
