// What every benchmark program in bench/ needs around its contenders: argument lists, the
// machine's description, statistics over repeated runs, result checks, and a scratch kernel
// cache. Header-only, for the bench programs alone.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nnvm/error.hpp>
#include <nnvm/target/target.hpp>

namespace bench {

// "1,2,4" -> {1, 2, 4}; anything but positive integers is an error naming the flag.
inline std::vector<int64_t> parse_positive_ints(const std::string& s, const std::string& flag) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v <= 0)
      throw std::runtime_error(nnvm::str_cat(flag, " takes positive integers separated by commas, got '", s, "'"));
    out.push_back(v);
  }
  return out;
}

// "llvm,c" -> {"llvm", "c"} (empty items dropped).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// The OpenMP runtime (oneDNN, Eigen) and OpenBLAS read their settings when they are loaded,
// before main runs, so the settings go in the environment and the program runs itself again.
// Passive waiting and a short OpenBLAS spin keep idle workers of one library off the cores while
// the next contender runs.
inline void set_environment_and_reexec(char** argv) {
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  if (wait && std::strcmp(wait, "passive") == 0 && std::getenv("OPENBLAS_THREAD_TIMEOUT")) return;
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("OPENBLAS_THREAD_TIMEOUT", "4", 0);  // 2^4 cycles of spinning, OpenBLAS's minimum
  execv("/proc/self/exe", argv);
  std::cerr << "note: could not re-execute with OMP_WAIT_POLICY=passive (" << std::strerror(errno)
            << "); idle library threads may spin\n";
}

// The CPU's name and the instruction set nnvm's kernels use on it (AVX-512, AVX2, SSE4.2): the
// numbers of one ISA say little about another, so every benchmark prints it.
inline std::string cpu_model() {
  std::string isa = " [nnvm kernels: " + nnvm::target::Target::host().isa_name() + ", " +
                    std::to_string(nnvm::target::Target::host_vector_bits()) + "-bit vectors]";
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2) + isa;
  return "unknown CPU" + isa;
}

inline std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a.empty() ? std::string("unknown") : a + " " + b + " " + c;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline double geomean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::log(x);
  return v.empty() ? NAN : std::exp(s / double(v.size()));
}

// max |x - ref| / max |ref| over `count` elements; NaN (an element never written) makes it NaN.
inline double max_rel_error(const float* x, const float* ref, size_t count) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < count; ++i) {
    double d = std::abs(double(x[i]) - double(ref[i]));
    if (std::isnan(d)) return NAN;
    err = std::max(err, d);
    scale = std::max(scale, std::abs(double(ref[i])));
  }
  return err / std::max(scale, 1e-30);
}

// A fresh directory for the C JIT's cache, so its compile times are real compiles; removed at exit.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (mkdtemp(tmpl.data())) path = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace bench
