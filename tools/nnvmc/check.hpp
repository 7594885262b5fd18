// `nnvmc check`: runs ONNX backend-style cases (a folder with model.onnx and
// test_data_set_*/input_*.pb, output_*.pb) and prints one line per case and target, then
// "N passed, N failed, N unsupported". Many cases are compiled in one compiler batch; each case
// runs in a child process, so a crash or a hang is one failed case, not a dead run.
#pragma once

#include <string>
#include <vector>

#include "session.hpp"

namespace nnvmc {

struct CheckOptions {
  std::vector<std::string> targets;  // emitters to run every case on (default: --target)
  double rtol = 1e-3, atol = 1e-5;
  // An output that a DequantizeLinear with a constant per-tensor scale makes may differ by this
  // many of its quantization steps (int8 models: each layer's requantization rounds, and a value
  // one step off in one implementation moves what the next layers round). 0: off.
  double quant_steps = 0;
  int batch = 48;                    // cases per compiler call
  int timeout_s = 120;               // per case and target
  std::string coverage_out;          // write the coverage record (markdown) here
  std::string baseline;              // fail when a case that passes in this record no longer does
  bool quiet = false;                // only failures and the summary
};

// Returns the process exit status: 0 when no case failed; with a baseline, 0 when no case that
// passes in the baseline stopped passing.
int run_check(const std::vector<std::string>& paths, const Options& options, const CheckOptions& check);

}  // namespace nnvmc
