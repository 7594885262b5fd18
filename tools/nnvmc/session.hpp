// What every nnvmc command shares: the options the user gave, turned into import and compile
// options; the kernel compiler for --target; loading a model; the terminal progress line.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "nnvm/graph/graph.hpp"
#include "nnvm/target/target.hpp"
#include "nnvm/onnx/importer.hpp"

namespace nnvmc {

namespace nv = nnvm;

struct Options {
  std::string target = "host";             // host | c | llvm, optionally " -mcpu=NAME"
  int opt_level = 2;                        // 0: no graph passes; 2: the default pipeline
  int threads = 0;                          // 0: NNVM_NUM_THREADS or all cores
  std::vector<std::string> input_shapes;    // "name:1x3x224x224"
  std::string params;                       // MXNet: the .params file (default: found beside the symbol)
  std::vector<std::string> symbols;         // "N=1"
  std::vector<std::string> emit;            // c, ll, asm, stmt, dot, json, onnx
  std::string print_ir_after;               // a lowering pass name, or "all"
  bool print_pass_times = false;
  std::string out;                          // output file or directory
  // run: what an out-of-range gather index computed or given at run time does; "error" (run's
  // default) adds graph::add_index_checks, "clamp" reads the nearest valid element.
  std::string index_check = "error";
  // compile --target c-standalone: the C prefix (default: the model file's stem), what the
  // generated code favours (size or speed), and budgets checked before anything is written
  // ("" or a byte count, optionally with k/K or m/M for KiB/MiB).
  std::string name, opt_for = "size", max_ram, max_flash;
};

// A --target value, "KIND [-mcpu=NAME]": KIND is host, c or llvm ("host": llvm when nnvmc was
// built with it, else c); NAME is a CPU as GCC's -march and LLVM's -mcpu spell it, which sets
// the vector width schedules use. Without -mcpu, code is for this machine.
nv::target::Target parse_target(const std::string& spec);
// The same, normalized for printing: "llvm", "c -mcpu=x86-64-v3".
std::string resolve_target(const std::string& spec);
std::vector<std::string> available_targets();

nv::onnx_import::ImportOptions import_options(const Options& o);
// The model's graph; a directory holding model.onnx is accepted too.
nv::graph::Graph load_model(const std::string& path, const Options& o);
// The format of a model file, by its name: NAME-symbol.json is MXNet (its parameters are found
// beside it), .keras/.h5/.hdf5 Keras, .mlmodel/.mlpackage Core ML, anything else ONNX (a file,
// or a directory holding model.onnx).
enum class ModelFormat { onnx, mxnet, keras, coreml };
ModelFormat model_format(const std::string& path);
// The format's importer's support report; UserError nnvm.cli.model when nnvmc was built without
// that importer.
nv::importers::SupportReport model_support(const std::string& path, const Options& o);
nv::graph::CompileOptions compile_options(const Options& o, std::map<std::string, double>* pass_ms = nullptr);

// Parses "name:1x3x224x224" (UserError nnvm.cli.input_shape otherwise).
std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& s);
// Parses "N=1" (UserError nnvm.cli.symbol otherwise).
std::pair<std::string, int64_t> parse_symbol(const std::string& s);

// "[k/n] what" redrawn in place on a terminal for work longer than a second; silent otherwise.
class Progress {
 public:
  explicit Progress(size_t total);
  void update(size_t done, const std::string& what);
  void finish();

 private:
  size_t total_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace nnvmc
