// Per-kernel timings of one model run: a table (name, op, shape, time, % of total) and Chrome's
// trace-event JSON (open it at chrome://tracing or ui.perfetto.dev).
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

struct ProfileEntry {
  std::string node, op;
  std::vector<int64_t> shape;  // of the first output
  double start_us = 0;         // from the start of the run
  double duration_us = 0;
};

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

struct Profile {
  std::vector<ProfileEntry> entries;

  double total_us() const {
    double t = 0;
    for (auto& e : entries) t += e.duration_us;
    return t;
  }

  // One line per kernel call, slowest first.
  std::string table() const {
    std::vector<const ProfileEntry*> order;
    for (auto& e : entries) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(),
                     [](auto* a, auto* b) { return a->duration_us > b->duration_us; });
    double total = std::max(total_us(), 1e-9);
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-32s %-20s %-22s %12s %7s\n", "node", "op", "shape", "time (us)", "%");
    out += line;
    for (auto* e : order) {
      std::snprintf(line, sizeof line, "%-32s %-20s %-22s %12.1f %6.1f%%\n", e->node.c_str(), e->op.c_str(),
                    shape_text(e->shape).c_str(), e->duration_us, 100.0 * e->duration_us / total);
      out += line;
    }
    std::snprintf(line, sizeof line, "%-76s %12.1f %6.1f%%\n", "total", total_us(), 100.0);
    return out + line;
  }

  // Trace-event format: one complete ("X") event per kernel call.
  std::string chrome_trace() const {
    auto quote = [](const std::string& s) {
      std::string q = "\"";
      for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        q += c;
      }
      return q + "\"";
    };
    std::string out = "{\"traceEvents\":[";
    for (size_t i = 0; i < entries.size(); ++i) {
      auto& e = entries[i];
      out += str_cat(i ? "," : "", "\n{\"name\":", quote(e.node), ",\"cat\":", quote(e.op),
                     ",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":", e.start_us, ",\"dur\":", e.duration_us,
                     ",\"args\":{\"shape\":", quote(shape_text(e.shape)), "}}");
    }
    return out + "\n]}\n";
  }
};

}  // namespace graph
NNVM_END_NAMESPACE
