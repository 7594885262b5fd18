// The nnvmc commands other than check: compile, run, bench, inspect. Each returns the exit status.
#pragma once

#include <string>
#include <vector>

#include "session.hpp"

namespace nnvmc {

struct RunOptions {
  std::vector<std::string> inputs;  // files (.npy/.pb) in input order, or name=file
  std::string save_outputs;         // folder for output_<k>.npy
  int repeat = 20, warmup = 3;      // bench
  bool profile = false;             // bench: per-op table
  std::string trace;                // bench: Chrome-trace JSON file
};

int run_compile(const std::string& model, const Options& o);
int run_run(const std::string& model, const Options& o, const RunOptions& r);
int run_bench(const std::string& model, const Options& o, const RunOptions& r);
int run_inspect(const std::string& model, const Options& o);

}  // namespace nnvmc
