#include "check.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "tensor_io.hpp"
#if NNVMC_WITH_OPENCL
#include "nnvm/graph/opencl_model.hpp"
#endif

namespace nnvmc {

namespace fs = std::filesystem;

namespace {

enum class Status { pass, fail, unsupported };
const char* status_word(Status s) { return s == Status::pass ? "pass" : s == Status::fail ? "fail" : "unsupported"; }

struct Result {
  Status status = Status::unsupported;
  std::string detail;
};

struct Case {
  std::string name, dir;
  std::vector<std::string> ops;            // op types the model uses
  std::vector<std::string> inputs;         // graph input names, in data-set order
  std::vector<std::string> outputs;        // graph output names, in data-set order
  // Inputs and outputs that are sequences of tensors: their files are SequenceProtos, and the
  // compiled model takes or gives one tensor per element, in order.
  std::set<std::string> sequences;
  // Inputs and outputs that are optionals: their files are OptionalProtos; the compiled model
  // takes or gives nothing for an empty one, else its tensor or its sequence's elements. An
  // input's presence is fixed at compile time, from test_data_set_0.
  std::set<std::string> optionals;
  std::set<std::string> empty_optionals;  // the optional inputs compiled as empty
  // Whether the tensor inputs' shapes were fixed to test_data_set_0's (a model whose inputs have
  // symbolic extents that no option binds: tried only once the model fails to compile without).
  bool shapes_from_data = false;
  // Graph inputs bound at compile time from test_data_set_0 (see bind_value_inputs), by name.
  std::map<std::string, nnvm::NDArray> bound;
  std::map<std::string, Result> results;   // by target
  // Per output: the absolute tolerance --quant-steps gives it (0 when it is not quantized).
  std::vector<double> quant_atol;
};

// Per-op tolerance overrides, applied when a case's model uses the op. Each states why.
struct Tolerance {
  const char* op;
  double rtol, atol;
  const char* why;
};
const Tolerance tolerance_overrides[] = {
    // The reference outputs were computed in float64 and rounded; float16 keeps 11 bits.
    {"Cast", 1e-3, 1e-3, "float16 results round to 11 significant bits"},
};

std::vector<std::string> find_cases(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (auto& p : paths) {
    if (fs::exists(fs::path(p) / "model.onnx")) {
      out.push_back(p);
      continue;
    }
    if (!fs::is_directory(p))
      throw nnvm::UserError("nnvm.cli.check", "'" + p + "' is neither a case folder (with model.onnx) nor a folder of cases");
    std::vector<std::string> sub;
    for (auto& e : fs::directory_iterator(p))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) sub.push_back(e.path().string());
    std::sort(sub.begin(), sub.end());
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

std::vector<std::string> sorted_files(const std::string& dir, const std::string& prefix) {
  std::vector<std::pair<int, std::string>> files;
  for (auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    auto ends = [&](const std::string& ext) { return n.size() > prefix.size() + ext.size() && n.ends_with(ext); };
    if (n.rfind(prefix, 0) == 0 && (ends(".pb") || ends(".npy")))
      files.push_back({std::atoi(n.c_str() + prefix.size()), e.path().string()});
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> out;
  for (auto& f : files) out.push_back(f.second);
  return out;
}

// An error message as one line of a report: line breaks become "; ".
std::string first_line(const std::string& s) {
  std::string line;
  for (char c : s) {
    if (c == '\n') {
      if (!line.empty() && line.back() != ' ') line += "; ";
      continue;
    }
    line += c;
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == ';')) line.pop_back();
  return line.size() > 400 ? line.substr(0, 400) + "..." : line;
}

// The graph input an error says must be known at compile time (its message ends "graph input
// NAME": graph::input_behind), or empty.
std::string compile_time_input(const nnvm::Error& e) {
  if (e.id() != "nnvm.graph.not_constant") return {};
  std::string msg = e.message();
  const std::string marker = "graph input ";
  size_t at = msg.rfind(marker);
  if (at == std::string::npos) return {};
  return msg.substr(at + marker.size());
}

// Empty when `got` matches `want`; else what differs, with the largest error.
std::string compare(const nnvm::NDArray& got, const nnvm::NDArray& want, double rtol, double atol) {
  if (got.dtype() != want.dtype()) return "dtype " + got.dtype().str() + ", expected " + want.dtype().str();
  if (got.shape() != want.shape())
    return "shape " + nnvm::graph::shape_text(got.shape()) + ", expected " + nnvm::graph::shape_text(want.shape());
  bool exact = !want.dtype().is_float();
  double worst = 0;
  int64_t bad = -1, bad_count = 0;
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = element(got, i), w = element(want, i);
    bool ok = exact ? g == w
              : std::isnan(w) ? std::isnan(g)
              : std::isinf(w) ? g == w
                              : std::abs(g - w) <= atol + rtol * std::abs(w);
    if (ok) continue;
    ++bad_count;
    double err = std::isnan(g) || std::isinf(g) ? INFINITY : std::abs(g - w);
    if (bad < 0 || err > worst) worst = err, bad = i;
  }
  if (bad < 0) return {};
  std::ostringstream s;
  s << bad_count << " of " << want.numel() << " elements differ; worst at " << bad << ": got " << element(got, bad)
    << ", expected " << element(want, bad) << " (max abs error " << worst << ")";
  return s.str();
}

// Runs every test_data_set of a compiled case; the result as "pass" or a failure description.
// Runs a model on one data set's inputs.
using Runner = std::function<std::vector<nnvm::NDArray>(const std::vector<nnvm::NDArray>&)>;

Result run_case(const Runner& run, const nnvm::graph::CompiledModel& model, const Case& c, double rtol, double atol) {
  std::vector<std::string> sets;
  for (auto& e : fs::directory_iterator(c.dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path().string());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return {Status::fail, "no test_data_set_* folder"};
  for (auto& set : sets) {
    std::vector<nnvm::NDArray> inputs, wants;
    auto files = sorted_files(set, "input_");
    for (size_t i = 0; i < files.size(); ++i) {
      if (i < c.inputs.size() && c.optionals.count(c.inputs[i])) {
        auto o = nnvm::onnx_import::read_optional_pb(files[i]);
        bool empty = o.holds == nnvm::onnx_import::OptionalValue::Holds::nothing;
        if (empty != bool(c.empty_optionals.count(c.inputs[i])))
          return {Status::unsupported, "optional input " + c.inputs[i] + (empty ? " holds a value" : " is empty") +
                                           " at compile time, and " + fs::path(set).filename().string() +
                                           (empty ? " gives it none" : " gives it one")};
        for (auto& e : o.elements) inputs.push_back(std::move(e));
        continue;
      }
      if (i < c.inputs.size() && c.sequences.count(c.inputs[i])) {
        for (auto& e : nnvm::onnx_import::read_sequence_pb(files[i])) inputs.push_back(std::move(e));
        continue;
      }
      nnvm::NDArray a = read_tensor(files[i]);
      auto b = i < c.inputs.size() ? c.bound.find(c.inputs[i]) : c.bound.end();
      if (b == c.bound.end()) {
        inputs.push_back(std::move(a));
      } else if (a.shape() != b->second.shape() || a.dtype() != b->second.dtype() ||
                 std::memcmp(a.raw(), b->second.raw(), a.nbytes()) != 0) {
        return {Status::unsupported, "input " + b->first + " is fixed at compile time, and " +
                                         fs::path(set).filename().string() + " gives it another value"};
      }
    }
    if (c.shapes_from_data)
      for (size_t k = 0; k < inputs.size() && k < model.input_slots().size(); ++k)
        if (inputs[k].shape() != model.slots()[model.input_slots()[k]].shape)
          return {Status::unsupported, "input " + model.slots()[model.input_slots()[k]].name +
                                           " has test_data_set_0's shape at compile time, and " +
                                           fs::path(set).filename().string() + " gives it another"};
    auto out_files = sorted_files(set, "output_");
    for (size_t k = 0; k < out_files.size(); ++k) {
      if (k < c.outputs.size() && c.optionals.count(c.outputs[k])) {
        for (auto& e : nnvm::onnx_import::read_optional_pb(out_files[k]).elements) wants.push_back(std::move(e));
        continue;
      }
      if (k >= c.outputs.size() || !c.sequences.count(c.outputs[k])) {
        wants.push_back(read_tensor(out_files[k]));
        continue;
      }
      for (auto& e : nnvm::onnx_import::read_sequence_pb(out_files[k])) wants.push_back(std::move(e));
    }
    auto outs = run(inputs);
    if (outs.size() != wants.size())
      return {Status::fail, "the model has " + std::to_string(outs.size()) + " outputs, the data set " +
                                std::to_string(wants.size())};
    for (size_t k = 0; k < outs.size(); ++k) {
      std::string d = compare(outs[k], wants[k], rtol, std::max(atol, k < c.quant_atol.size() ? c.quant_atol[k] : 0.0));
      if (!d.empty())
        return {Status::fail, fs::path(set).filename().string() + " output " + std::to_string(k) + " (" +
                                  model.slots()[model.output_slots()[k]].name + "): " + d};
    }
  }
  return {Status::pass, ""};
}

// The scale of the DequantizeLinear that makes `v`, when it is one constant float32; else 0.
double quantization_step(const nnvm::graph::Graph& g, const nnvm::graph::Value& v) {
  const nnvm::graph::Node& n = g.node(v);
  if (n.kind != nnvm::graph::NodeKind::op || n.op != "dequantize_linear" || n.inputs.size() < 2) return 0;
  const nnvm::graph::Node& scale = g.node(n.inputs[1]);
  if (scale.kind != nnvm::graph::NodeKind::constant || scale.data->dtype() != nnvm::dtype::float32 || scale.data->numel() != 1)
    return 0;
  return std::abs(double(scale.data->values<float>()[0]));
}

// The case's tolerances: the check's, widened by the overrides of the ops it uses.
std::pair<double, double> tolerance(const Case& c, const CheckOptions& check) {
  double rtol = check.rtol, atol = check.atol;
  for (auto& t : tolerance_overrides)
    if (std::find(c.ops.begin(), c.ops.end(), t.op) != c.ops.end()) rtol = std::max(rtol, t.rtol), atol = std::max(atol, t.atol);
  return {rtol, atol};
}

// Runs `fn` in a child process: a crash, a hang past `timeout_s` or an exception becomes a
// failed result instead of ending nnvmc. The child uses one thread (the pool is not forked).
Result isolated(const std::function<Result()>& fn, int timeout_s) {
  int fds[2];
  if (pipe(fds) != 0) return fn();
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return fn();
  }
  if (pid == 0) {
    close(fds[0]);
    Result r;
    try {
      r = fn();
    } catch (const std::exception& e) {
      r = {Status::fail, first_line(e.what())};
    }
    std::string msg = std::string(1, char('0' + int(r.status))) + r.detail;
    for (size_t off = 0; off < msg.size();) {
      ssize_t n = write(fds[1], msg.data() + off, msg.size() - off);
      if (n <= 0) break;
      off += size_t(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[4096];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  bool timed_out = false;
  for (;;) {
    int left = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, left) <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    msg.append(buf, size_t(n));
  }
  close(fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (timed_out) return {Status::fail, "timed out after " + std::to_string(timeout_s) + " s"};
  if (WIFSIGNALED(status)) return {Status::fail, std::string("crashed (") + strsignal(WTERMSIG(status)) + ")"};
  if (msg.empty()) return {Status::fail, "the case's process ended without a result"};
  return {Status(msg[0] - '0'), msg.substr(1)};
}

// Compiles a batch of prepared cases with `link` (one compiler call); when that fails, one by
// one, so that one bad kernel fails only its case. `linked` gets the case index of each model.
template <class Link>
auto link_batch(const std::vector<nnvm::graph::PreparedModel>& prepared, const std::vector<size_t>& ready,
                std::vector<Case>& cases, const std::string& target, std::vector<size_t>& linked, const Link& link) {
  decltype(link(prepared)) models;
  try {
    models = link(prepared);
    linked = ready;
  } catch (const std::exception&) {
    for (size_t k = 0; k < ready.size(); ++k) {
      try {
        models.push_back(std::move(link({prepared[k]}).front()));
        linked.push_back(ready[k]);
      } catch (const std::exception& e) {
        cases[ready[k]].results[target] = {Status::fail, "compile error: " + first_line(e.what())};
      }
    }
  }
  return models;
}

#if NNVMC_WITH_OPENCL
// The prepared cases of a batch on the OpenCL device, as one program (PoCL compiles slowly, so
// per program). Runs in this process: a forked child cannot use the parent's OpenCL driver
// threads, so a case that crashes the driver ends the check.
void check_opencl(std::vector<nnvm::graph::PreparedModel>& prepared, const std::vector<size_t>& ready,
                  std::vector<Case>& cases, const nnvm::target::Target& t, const std::string& target,
                  const CheckOptions& check) {
  static const nnvm::runtime::opencl::Device device = nnvm::runtime::opencl::Device::open();
  std::vector<size_t> linked;
  auto models = link_batch(prepared, ready, cases, target, linked, [&](std::vector<nnvm::graph::PreparedModel> p) {
    return nnvm::graph::link_opencl(std::move(p), t, device);
  });
  for (size_t k = 0; k < linked.size(); ++k) {
    Case& c = cases[linked[k]];
    auto [rtol, atol] = tolerance(c, check);
    auto run = [&](const std::vector<nnvm::NDArray>& in) { return models[k].run(in); };
    try {
      c.results[target] = run_case(run, models[k].model(), c, rtol, atol);
    } catch (const std::exception& e) {
      c.results[target] = {Status::fail, first_line(e.what())};
    }
  }
}
#endif

// The coverage record: results per case and emitter, a per-op summary and totals.
void write_coverage(const std::string& path, const std::vector<Case>& cases, const std::vector<std::string>& targets) {
  std::ofstream f(path);
  if (!f) throw nnvm::UserError("nnvm.cli.check", "cannot write the coverage record", {"file " + path});
  f << "# ONNX node conformance\n\n"
    << "Generated by `nnvmc check --targets " ;
  for (size_t i = 0; i < targets.size(); ++i) f << (i ? "," : "") << targets[i];
  f << " --coverage docs/onnx-coverage.md <suite>` (see README). Do not edit by hand: CI fails when a case "
       "marked pass here no longer passes. A pass whose reason names graph inputs fixed at compile time ran with "
       "those inputs bound to test_data_set_0's values, because their values decide shapes (nnvm compiles static "
       "shapes).\n\n";
  f << "## Totals\n\n| emitter | pass | fail | unsupported | total |\n|---|---|---|---|---|\n";
  for (auto& t : targets) {
    int n[3] = {0, 0, 0};
    for (auto& c : cases) ++n[int(c.results.at(t).status)];
    f << "| " << t << " | " << n[0] << " | " << n[1] << " | " << n[2] << " | " << cases.size() << " |\n";
  }
  f << "\n## Per op\n\nCases that use the op, by result on the first emitter (" << targets[0] << ").\n\n"
    << "| op | pass | fail | unsupported |\n|---|---|---|---|\n";
  std::map<std::string, std::array<int, 3>> per_op;
  for (auto& c : cases)
    for (auto& op : std::set<std::string>(c.ops.begin(), c.ops.end())) ++per_op[op][int(c.results.at(targets[0]).status)];
  for (auto& [op, n] : per_op) f << "| " << op << " | " << n[0] << " | " << n[1] << " | " << n[2] << " |\n";
  f << "\n## Cases\n\n| case |";
  for (auto& t : targets) f << " " << t << " |";
  f << " reason |\n|---|";
  for (size_t i = 0; i < targets.size(); ++i) f << "---|";
  f << "---|\n";
  for (auto& c : cases) {
    f << "| " << c.name << " |";
    std::string reason;
    for (auto& t : targets) {
      const Result& r = c.results.at(t);
      f << " " << status_word(r.status) << " |";
      if (reason.empty() && r.status != Status::pass) reason = r.detail;
    }
    if (reason.empty() && !c.bound.empty()) {
      reason = "passes with graph inputs fixed at compile time:";
      for (auto& [name, data] : c.bound) reason += " " + name;
    }
    if (reason.empty() && c.shapes_from_data) reason = "passes with input shapes fixed to test_data_set_0's";
    // The record is committed: name files from the case's folder, not from this machine's path.
    for (size_t at = 0; !c.dir.empty() && (at = reason.find(c.dir, at)) != std::string::npos; at += c.name.size())
      reason.replace(at, c.dir.size(), c.name);
    for (char& ch : reason)
      if (ch == '|' || ch == '\n') ch = ' ';
    f << " " << reason << " |\n";
  }
}

// Cases marked pass per emitter in a coverage record: {target -> names}.
std::map<std::string, std::set<std::string>> read_baseline(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw nnvm::UserError("nnvm.cli.check", "cannot read the baseline coverage record", {"file " + path});
  std::map<std::string, std::set<std::string>> passed;
  std::vector<std::string> columns;
  std::string line;
  bool in_cases = false;
  while (std::getline(f, line)) {
    if (line.rfind("## ", 0) == 0) in_cases = line == "## Cases";
    if (!in_cases || line.rfind("| ", 0) != 0) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) {
      size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    if (!cells.empty() && cells[0] == "case") {
      columns = cells;
      continue;
    }
    for (size_t i = 1; i + 1 < cells.size() && i < columns.size(); ++i)
      if (cells[i] == "pass") passed[columns[i]].insert(cells[0]);
  }
  return passed;
}

}  // namespace

int run_check(const std::vector<std::string>& paths, const Options& options, const CheckOptions& check) {
  std::vector<Case> cases;
  for (auto& dir : find_cases(paths)) cases.push_back({fs::path(dir).filename().string(), dir, {}, {}});
  std::vector<std::string> targets = check.targets.empty() ? std::vector<std::string>{options.target} : check.targets;
  for (auto& t : targets) {
    t = resolve_target(t);
    if (auto e = parse_target(t).emitter; e == nnvm::target::Emitter::cuda || e == nnvm::target::Emitter::metal)
      throw nnvm::UserError("nnvm.cli.target", "check runs the cases; nnvmc cannot run " + t + " kernels");
  }

  for (auto& c : cases) {
    try {
      auto report = nnvm::onnx_import::check_support(c.dir + "/model.onnx", import_options(options));
      for (auto& [op, n] : report.op_counts) c.ops.push_back(op);
      c.inputs = report.inputs;
      c.outputs = report.outputs;
      c.sequences = report.sequences;
      c.optionals = report.optionals;
    } catch (const std::exception&) {
    }
  }

  // Imports a case's model. ONNX test models often take values an op needs at compile time
  // (ReduceSum's axes, Reshape's shape) as graph inputs; those inputs are bound from
  // test_data_set_0, so the compiled model is specialized to them (run_case checks that the other
  // data sets agree).
  // Whether `e` asks for a graph input at compile time that is now bound (false: rethrow it).
  auto bind_from_test_data = [&](Case& c, const nnvm::Error& e) {
    std::string input = compile_time_input(e);
    auto at = std::find(c.inputs.begin(), c.inputs.end(), input);
    if (input.empty() || at == c.inputs.end() || c.bound.count(input)) return false;
    auto files = sorted_files(c.dir + "/test_data_set_0", "input_");
    size_t index = size_t(at - c.inputs.begin());
    if (index >= files.size()) return false;
    c.bound.emplace(input, read_tensor(files[index]));
    return true;
  };
  auto load_bound = [&](Case& c) {
    for (;;) {
      nnvm::onnx_import::ImportOptions io = import_options(options);
      io.constant_inputs = c.bound;
      // A sequence input's length and element shapes come from test_data_set_0 (run_case checks
      // that the other data sets agree: a different length is a different input count).
      auto files = sorted_files(c.dir + "/test_data_set_0", "input_");
      for (size_t i = 0; i < c.inputs.size() && i < files.size(); ++i)
        if (c.optionals.count(c.inputs[i])) {  // present or not as in test_data_set_0
          auto o = nnvm::onnx_import::read_optional_pb(files[i]);
          if (o.holds == nnvm::onnx_import::OptionalValue::Holds::nothing) {
            io.empty_optional_inputs.insert(c.inputs[i]);
            c.empty_optionals.insert(c.inputs[i]);
          } else if (o.holds == nnvm::onnx_import::OptionalValue::Holds::sequence) {
            auto& shapes = io.sequence_inputs[c.inputs[i]];
            for (auto& e : o.elements) shapes.push_back(e.shape());
          } else if (c.shapes_from_data) {
            io.input_shapes[c.inputs[i]] = o.elements.at(0).shape();
          }
        } else if (c.sequences.count(c.inputs[i])) {
          auto& shapes = io.sequence_inputs[c.inputs[i]];  // an empty sequence has none
          for (auto& e : nnvm::onnx_import::read_sequence_pb(files[i])) shapes.push_back(e.shape());
        } else if (c.shapes_from_data && !c.bound.count(c.inputs[i])) {
          io.input_shapes[c.inputs[i]] = read_tensor(files[i]).shape();
        }
      try {
        nnvm::graph::Graph g = nnvm::onnx_import::import_model(c.dir + "/model.onnx", io);
        c.quant_atol.clear();
        // N steps off, not N + 1: half a step more absorbs the float rounding of (q - zero point) * scale.
        for (auto& v : g.outputs)
          c.quant_atol.push_back(check.quant_steps > 0 ? (check.quant_steps + 0.5) * quantization_step(g, v) : 0.0);
        return g;
      } catch (const nnvm::Error& e) {
        if (!bind_from_test_data(c, e)) throw;
      }
    }
  };
  // load_bound, then prepare: a back end may need a value at compile time that import did not (an
  // If's condition where the back end runs no control nodes); it is bound the same way.
  // A model that still fails is tried once more with every tensor input shaped as in
  // test_data_set_0 (symbolic extents bound by the data, as a runtime that sees the data would);
  // when that fails too, the first error stands.
  auto prepare_bound = [&](Case& c, const nnvm::graph::CompileOptions& co) {
    std::exception_ptr first;
    for (;;) {
      try {
        return nnvm::graph::prepare(load_bound(c), co);
      } catch (const nnvm::Error& e) {
        if (bind_from_test_data(c, e)) continue;
        if (c.shapes_from_data || !(e.id() == "nnvm.compile.symbolic_extent" || e.id() == "nnvm.ops.broadcast")) {
          if (first) std::rethrow_exception(first);
          throw;
        }
        first = std::current_exception();
        c.shapes_from_data = true;
      }
    }
  };

  Progress progress(cases.size() * targets.size());
  size_t done = 0;
  int counts[3] = {0, 0, 0};
  for (auto& target : targets) {
    auto report = [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const Result& r = cases[i].results[target];
        ++counts[int(r.status)];
        if (check.quiet && r.status != Status::fail) continue;
        progress.finish();
        std::cout << status_word(r.status) << " " << cases[i].name << " [" << target << "]"
                  << (r.detail.empty() ? "" : ": " + r.detail) << "\n";
      }
      std::cout.flush();
    };
    Options o = options;
    o.target = target;
    nnvm::graph::CompileOptions co = compile_options(o);
    for (size_t begin = 0; begin < cases.size(); begin += size_t(std::max(1, check.batch))) {
      size_t end = std::min(cases.size(), begin + size_t(std::max(1, check.batch)));
      std::vector<size_t> ready;
      std::vector<nnvm::graph::PreparedModel> prepared;
      for (size_t i = begin; i < end; ++i) {
        Case& c = cases[i];
        progress.update(done + i - begin, target + " " + c.name);
        try {
          prepared.push_back(prepare_bound(c, co));
          ready.push_back(i);
        } catch (const nnvm::Error& e) {
          bool unsupported = e.id() == "nnvm.onnx.unsupported" || e.id().rfind("nnvm.ops.", 0) == 0 ||
                             e.id() == "nnvm.graph.not_constant" || e.id() == "nnvm.compile.symbolic_extent" ||
                             e.id() == "nnvm.compile.control_flow";
          c.results[target] = {unsupported ? Status::unsupported : Status::fail, first_line(e.what())};
        } catch (const std::exception& e) {
          c.results[target] = {Status::fail, std::string("internal error: ") + first_line(e.what())};
        }
      }
#if NNVMC_WITH_OPENCL
      if (co.target.emitter == nnvm::target::Emitter::opencl) {
        check_opencl(prepared, ready, cases, co.target, target, check);
        done += end - begin;
        report(begin, end);
        continue;
      }
#endif
      std::vector<size_t> linked;
      auto models = link_batch(prepared, ready, cases, target, linked, [&](std::vector<nnvm::graph::PreparedModel> p) {
        return nnvm::graph::link(std::move(p), co.compiler);
      });
      for (size_t k = 0; k < linked.size(); ++k) {
        Case& c = cases[linked[k]];
        auto [rtol, atol] = tolerance(c, check);
        progress.update(done + linked[k] - begin, target + " " + c.name);
        auto run = [&](const std::vector<nnvm::NDArray>& in) { return models[k].run(in, 1); };
        c.results[target] = isolated([&] { return run_case(run, models[k], c, rtol, atol); }, check.timeout_s);
      }
      done += end - begin;
      report(begin, end);
    }
  }
  progress.finish();
  std::cout << counts[0] << " passed, " << counts[1] << " failed, " << counts[2] << " unsupported\n";
  if (!check.coverage_out.empty()) write_coverage(check.coverage_out, cases, targets);
  // Against a baseline only regressions fail the run: the record already says which cases fail.
  int status = counts[1] > 0 && check.baseline.empty() ? 1 : 0;
  if (!check.baseline.empty()) {
    auto passed = read_baseline(check.baseline);
    int regressions = 0;
    for (auto& c : cases)
      for (auto& t : targets)
        if (passed[t].count(c.name) && c.results[t].status != Status::pass) {
          std::cout << "regression " << c.name << " [" << t << "]: passes in " << check.baseline << ", now "
                    << status_word(c.results[t].status) << "\n";
          ++regressions;
        }
    std::cout << regressions << " regressions against " << check.baseline << "\n";
    if (regressions) status = 1;
  }
  return status;
}

}  // namespace nnvmc
