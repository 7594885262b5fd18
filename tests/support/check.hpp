// Helpers shared by the schedule/lowering tests: deterministic random inputs and an
// element-wise comparison against an independent reference with rtol/atol.
#pragma once

#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "nnvm/nnvm.hpp"

namespace nnvm_test {

// How many op nodes of `op` graph `g` holds (what a graph pass left).
inline size_t count_ops(const nnvm::graph::Graph& g, const std::string& op) {
  size_t n = 0;
  for (auto& node : g.nodes) n += node.kind == nnvm::graph::NodeKind::op && node.op == op;
  return n;
}

inline nnvm::NDArray random_array(nnvm::DataType t, std::vector<int64_t> shape, uint32_t seed,
                                  double lo = -1.0, double hi = 1.0) {
  nnvm::NDArray a(t, std::move(shape));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  if (t == nnvm::dtype::float32) for (auto& v : a.values<float>()) v = float(dist(rng));
  else if (t == nnvm::dtype::float64) for (auto& v : a.values<double>()) v = dist(rng);
  else if (t == nnvm::dtype::int32) for (auto& v : a.values<int32_t>()) v = int32_t(std::floor(dist(rng)));
  else if (t == nnvm::dtype::int64) for (auto& v : a.values<int64_t>()) v = int64_t(std::floor(dist(rng)));
  else throw std::runtime_error("random_array: unsupported dtype " + t.str());
  return a;
}

// Returns an empty string when every element matches within |a-b| <= atol + rtol*|b| (a NaN
// wants a NaN, an infinity the same infinity), else a description of the first mismatch.
template <class T>
std::string compare(std::span<const T> got, std::span<const T> want, double rtol = 1e-3, double atol = 1e-5) {
  if (got.size() != want.size()) return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double g = double(got[i]), w = double(want[i]);
    bool ok = std::isnan(w) ? std::isnan(g) : std::isinf(w) ? g == w : std::abs(g - w) <= atol + rtol * std::abs(w);
    if (!ok)
      return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " + std::to_string(w);
  }
  return {};
}

// Compiles C source with the strictest flags generated kernels promise to pass; returns the
// compiler's output on failure, an empty string on success.
inline std::string strict_compile(const std::string& src, const std::string& name) {
  std::string dir = nnvm::target::detail::cache_dir({});
  nnvm::target::detail::make_dirs(dir);
  std::string path = dir + "/" + name + ".c";
  std::ofstream(path) << src;
  const char* cc = std::getenv("CC");
  auto [status, output] = nnvm::target::detail::run_command(nnvm::str_cat(
      cc && *cc ? cc : "cc", " -std=c99 -Wall -Wextra -Werror -pedantic -c ", path, " -o ", path, ".o"));
  return status == 0 ? "" : output.empty() ? "failed" : output;
}

// How many times `what` occurs in `s` (overlapping occurrences too).
inline size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// The id and message of the nnvm::Error that `f` throws; {"(no error)", ""} when it throws none.
template <class F>
std::pair<std::string, std::string> error_of(F&& f) {
  try {
    f();
  } catch (const nnvm::Error& e) {
    return {e.id(), e.message()};
  }
  return {"(no error)", ""};
}

// Just the id of the nnvm::Error that `f` throws; "(no error)" when it throws none.
template <class F>
std::string error_id(F&& f) {
  return error_of(f).first;
}

// Row-major index arithmetic for reference loops: element count, flat index -> index, and back.
inline int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  return n;
}
inline std::vector<int64_t> unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}
inline int64_t ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}

}  // namespace nnvm_test
