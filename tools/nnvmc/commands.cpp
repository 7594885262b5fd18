#include "commands.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "standalone.hpp"
#include "tensor_io.hpp"

#if NNVMC_WITH_LLVM
#include "nnvm/codegen/llvm_artifact.hpp"
#include "nnvm/codegen/llvm_jit.hpp"
#endif
#include "nnvm/graph/artifact.hpp"
#include "nnvm/graph/gpu_artifact.hpp"
#if NNVMC_WITH_OPENCL
#include "nnvm/graph/opencl_model.hpp"
#endif
#include "nnvm/graph/runtime_dtype.hpp"
#include "nnvm/graph/passes/index_checks.hpp"
#include "nnvm/onnx/export.hpp"
#include "nnvm/runtime/runtime.hpp"

namespace nnvmc {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct Loaded {
  nv::graph::CompiledModel model;
  std::vector<nv::graph::IndexCheck> index_checks;  // their flags follow the model's own outputs
  size_t num_outputs = 0;                           // the model's own outputs
  std::string name;
  std::map<std::string, double> pass_ms;
  double import_ms = 0, compile_ms = 0;
#if NNVMC_WITH_OPENCL
  std::shared_ptr<nv::graph::OpenCLModel> opencl;  // --target opencl: runs there; `model` has its slots
#endif

  std::vector<nv::NDArray> run(const std::vector<nv::NDArray>& inputs, int threads) const {
#if NNVMC_WITH_OPENCL
    if (opencl) return opencl->run(inputs);
#endif
    return model.run(inputs, threads);
  }
  void run_into(const std::vector<nv::NDArray>& inputs, std::vector<nv::NDArray>& outputs, int threads) const {
#if NNVMC_WITH_OPENCL
    if (opencl) {
      outputs = opencl->run(inputs);
      return;
    }
#endif
    model.run_into(inputs, outputs, threads);
  }
};

// `index_checks`: the graph gets nv::graph::add_index_checks (nnvmc run --index-check=error).
Loaded load_and_compile(const std::string& path, const Options& o, bool index_checks = false) {
  if (auto e = parse_target(o.target).emitter; e == nv::target::Emitter::c_standalone || e == nv::target::Emitter::wasm)
    throw nv::UserError("nnvm.cli.target", "--target " + o.target + " writes standalone C" +
                                               (e == nv::target::Emitter::wasm ? " and a .wasm module" : "") +
                                               ", which this command cannot run; use nnvmc compile MODEL --target " +
                                               o.target + " -o DIR");
  nv::target::Target target = parse_target(o.target);
  if (target.family == nv::target::Family::gpu && target.emitter != nv::target::Emitter::opencl)
    throw nv::UserError("nnvm.cli.target", "--target " + o.target + ": nnvmc cannot run " +
                                               nv::target::emitter_name(target.emitter) +
                                               " kernels (no device runtime for it yet); nnvmc compile MODEL --target " +
                                               o.target + " -o DIR writes their source");
  Loaded l;
  auto t0 = Clock::now();
  nv::graph::Graph g = load_model(path, o);
  l.import_ms = ms_since(t0);
  l.num_outputs = g.outputs.size();
  l.name = g.name;
  if (index_checks) l.index_checks = nv::graph::add_index_checks(g);
  t0 = Clock::now();
  nv::graph::CompileOptions co = compile_options(o, o.print_pass_times ? &l.pass_ms : nullptr);
#if NNVMC_WITH_OPENCL
  if (target.emitter == nv::target::Emitter::opencl) {
    l.opencl = std::make_shared<nv::graph::OpenCLModel>(
        nv::graph::compile_opencl(g, co, nv::runtime::opencl::Device::open()));
    l.model = l.opencl->model();
  } else
#endif
    l.model = nv::graph::compile(g, co);
  l.compile_ms = ms_since(t0);
  if (o.print_pass_times) {
    std::cerr << "import " << l.import_ms << " ms, compile " << l.compile_ms << " ms ("
              << l.model.kernels().size() << " kernels); lowering passes:\n";
    for (auto& [pass, ms] : l.pass_ms) std::cerr << "  " << pass << " " << ms << " ms\n";
  }
  return l;
}

std::vector<nv::NDArray> gather_inputs(const nv::graph::CompiledModel& m, const RunOptions& r) {
  std::vector<nv::NDArray> inputs;
  auto names = m.input_names();
  std::map<std::string, std::string> by_name;
  std::vector<std::string> positional;
  for (auto& spec : r.inputs) {
    size_t eq = spec.find('=');
    if (eq != std::string::npos && !fs::exists(spec)) by_name[spec.substr(0, eq)] = spec.substr(eq + 1);
    else positional.push_back(spec);
  }
  for (auto& [name, file] : by_name)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw nv::UserError("nnvm.cli.input", "the model has no input named '" + name + "'", {"--input " + name});
  if (positional.size() > names.size())
    throw nv::UserError("nnvm.cli.input", "got " + std::to_string(positional.size()) + " input files for a model with " +
                                              std::to_string(names.size()) + " inputs");
  for (size_t i = 0; i < names.size(); ++i) {
    const nv::graph::Slot& s = m.slots()[m.input_slots()[i]];
    if (by_name.count(names[i])) inputs.push_back(read_tensor(by_name[names[i]]));
    else if (i < positional.size()) inputs.push_back(read_tensor(positional[i]));
    else inputs.push_back(generated_input(s.dtype, s.shape, uint32_t(i + 1)));
  }
  return inputs;
}

void emit(const Loaded& l, const Options& o) {
  std::vector<nv::ir::LoweredFunc> fns;
  for (auto& k : l.model.kernels()) fns.push_back(k.func());
  std::string base = o.out.empty() ? "" : o.out + "/";
  auto write = [&](const std::string& what, const std::string& file, const std::string& text) {
    if (o.out.empty()) {
      std::cout << "// ---- " << what << "\n" << text << "\n";
      return;
    }
    std::ofstream f(base + file, std::ios::binary);
    f << text;
    if (!f.flush()) throw nv::UserError("nnvm.cli.output", "cannot write " + base + file);
    std::cerr << "wrote " << base + file << "\n";
  };
  for (auto& e : o.emit) {
    if (e == "c") write("C", "kernels.c", nv::target::emit_c(fns));
    else if (e == "stmt") {
      std::string text;
      for (auto& f : fns) text += "// kernel " + f.name + " (" + f.origin + ")\n" + nv::ir::to_string(f.body) + "\n";
      write("lowered IR", "kernels.stmt", text);
    } else if (e == "dot") write("graph (DOT)", "graph.dot", nv::graph::to_dot(l.model.graph()));
    else if (e == "json") write("optimized graph (JSON)", "graph.json", nv::graph::graph_json(l.model));
    else if (e == "onnx") {
      // A binary protobuf file: never printed to the terminal.
      if (o.out.empty()) throw nv::UserError("nnvm.cli.emit", "--emit=onnx writes graph.onnx, a binary file; give -o DIR");
      write("optimized graph (ONNX)", "graph.onnx", nv::onnx_export::export_model(l.model));
    }
#if NNVMC_WITH_LLVM
    else if (e == "ll") write("LLVM IR", "kernels.ll", nv::codegen::emit_llvm_ir(fns));
    else if (e == "asm") write("assembly", "kernels.s", nv::codegen::emit_asm(fns));
#else
    else if (e == "ll" || e == "asm")
      throw nv::UserError("nnvm.cli.emit", "--emit=" + e + " needs the LLVM back end; this nnvmc was built without it");
#endif
    else
      throw nv::UserError("nnvm.cli.emit", "unknown --emit kind '" + e + "'; kinds: c, ll, asm, stmt, dot, json, onnx");
  }
}

// A deploy artifact (a folder written by `nnvmc compile -o`), run by the runtime library alone.
bool is_artifact(const std::string& path) { return fs::is_directory(path) && fs::exists(fs::path(path) / "model.json"); }

struct Artifact {
  nv::runtime::Model model;
  std::vector<nv::NDArray> inputs;
};

Artifact load_artifact(const std::string& dir, const RunOptions& r) {
  Artifact a{nv::runtime::Model::load(dir), {}};
  auto infos = a.model.inputs();
  if (r.inputs.size() > infos.size())
    throw nv::UserError("nnvm.cli.input", "got " + std::to_string(r.inputs.size()) + " input files for an artifact with " +
                                              std::to_string(infos.size()) + " inputs");
  for (size_t i = 0; i < infos.size(); ++i) {
    if (i < r.inputs.size()) a.inputs.push_back(read_tensor(r.inputs[i]));
    else a.inputs.push_back(generated_input(nv::graph::dtype_from_runtime(infos[i].dtype), infos[i].shape, uint32_t(i + 1)));
  }
  return a;
}

std::vector<nv::NDArray> run_artifact_once(const Artifact& a, int threads) {
  std::vector<nv::runtime::TensorRef> in;
  for (auto& x : a.inputs) in.push_back({const_cast<void*>(x.raw()), nv::graph::runtime_dtype(x.dtype()), x.shape()});
  std::vector<nv::NDArray> outs;
  std::vector<nv::runtime::TensorRef> out;
  for (auto& info : a.model.outputs()) {
    outs.emplace_back(nv::graph::dtype_from_runtime(info.dtype), info.shape);
    out.push_back({outs.back().raw(), info.dtype, info.shape});
  }
  a.model.run(in, out, threads);
  return outs;
}

}  // namespace

int run_compile(const std::string& model, const Options& o) {
  if (auto e = parse_target(o.target).emitter; e == nv::target::Emitter::c_standalone || e == nv::target::Emitter::wasm) {
    if (!o.emit.empty()) throw nv::UserError("nnvm.cli.emit", "--emit does not apply to --target " + o.target + ", which writes C");
    return run_compile_standalone(model, o);
  }
  if (nv::target::Target t = parse_target(o.target); t.family == nv::target::Family::gpu) {
    if (!o.emit.empty()) throw nv::UserError("nnvm.cli.emit", "--emit does not apply to --target " + o.target);
    if (o.out.empty())
      throw nv::UserError("nnvm.cli.output", "--target " + o.target + " needs -o DIR for the kernels' source");
    auto t0 = Clock::now();
    nv::graph::PreparedModel p = nv::graph::prepare(load_model(model, o), compile_options(o));
    nv::graph::save_gpu_artifact(p, t, o.out);
    std::cerr << "compiled " << model << ": " << p.model.steps().size() << " kernel calls, " << p.funcs.size()
              << " functions, target " << resolve_target(o.target) << ", " << ms_since(t0) << " ms; wrote "
              << o.out << "\n";
    return 0;
  }
  Loaded l = load_and_compile(model, o);
  std::cerr << "compiled " << model << ": " << l.model.steps().size() << " kernel calls, " << l.model.kernels().size()
            << " kernels, target " << resolve_target(o.target) << ", " << l.compile_ms << " ms\n";
  if (!o.out.empty()) {
    fs::create_directories(o.out);
    // The --target's back end builds kernels.so from the kernels just compiled: the artifact
    // runs the code the in-process model runs.
#if NNVMC_WITH_LLVM
    nv::graph::save_artifact(l.model, o.out, nv::codegen::artifact_builder_for(l.model.target()));
#else
    nv::graph::save_artifact(l.model, o.out);
#endif
    std::cerr << "wrote the deploy artifact to " << o.out << "\n";
  }
  emit(l, o);
  return 0;
}

int run_run(const std::string& model, const Options& o, const RunOptions& r) {
  if (is_artifact(model)) {
    Artifact a = load_artifact(model, r);
    auto t0 = Clock::now();
    auto outs = run_artifact_once(a, o.threads);
    double ms = ms_since(t0);
    auto infos = a.model.outputs();
    for (size_t k = 0; k < outs.size(); ++k) {
      std::cout << "output " << k << " (" << nv::printable(infos[k].name) << "): " << summary(outs[k]) << "\n";
      if (!r.save_outputs.empty()) {
        fs::create_directories(r.save_outputs);
        write_npy(r.save_outputs + "/output_" + std::to_string(k) + ".npy", outs[k]);
      }
    }
    std::cout << "ran in " << ms << " ms (first run, deploy runtime)\n";
    return 0;
  }
  Loaded l = load_and_compile(model, o, o.index_check == "error");
  auto inputs = gather_inputs(l.model, r);
  auto t0 = Clock::now();
  auto outs = l.run(inputs, o.threads);
  double ms = ms_since(t0);
  nv::graph::raise_index_errors(l.index_checks, outs, l.name);
  outs.resize(l.num_outputs);
  for (size_t k = 0; k < outs.size(); ++k) {
    std::cout << "output " << k << " (" << nv::printable(l.model.slots()[l.model.output_slots()[k]].name) << "): " << summary(outs[k])
              << "\n";
    if (!r.save_outputs.empty()) {
      fs::create_directories(r.save_outputs);
      write_npy(r.save_outputs + "/output_" + std::to_string(k) + ".npy", outs[k]);
    }
  }
  std::cout << "ran in " << ms << " ms (first run)\n";
  return 0;
}

int run_bench(const std::string& model, const Options& o, const RunOptions& r) {
  if (is_artifact(model)) {
    if (r.profile || !r.trace.empty())
      throw nv::UserError("nnvm.cli.profile", "--profile and --trace need the model, not a deploy artifact");
    Artifact a = load_artifact(model, r);
    for (int i = 0; i < r.warmup; ++i) run_artifact_once(a, o.threads);
    std::vector<double> times;
    for (int i = 0; i < std::max(1, r.repeat); ++i) {
      auto t0 = Clock::now();
      run_artifact_once(a, o.threads);
      times.push_back(ms_since(t0));
    }
    std::sort(times.begin(), times.end());
    std::cout << model << " (deploy runtime): median " << times[times.size() / 2] << " ms, min " << times.front()
              << " ms, max " << times.back() << " ms over " << times.size() << " runs\n";
    return 0;
  }
  Loaded l = load_and_compile(model, o);
  auto inputs = gather_inputs(l.model, r);
  // Outputs made once and written in place, as a deployment runs a model over and over.
  auto outputs = l.run(inputs, o.threads);
  for (int i = 1; i < r.warmup; ++i) l.run_into(inputs, outputs, o.threads);
  std::vector<double> times;
  for (int i = 0; i < std::max(1, r.repeat); ++i) {
    auto t0 = Clock::now();
    l.run_into(inputs, outputs, o.threads);
    times.push_back(ms_since(t0));
  }
  std::sort(times.begin(), times.end());
  std::cout << model << ": median " << times[times.size() / 2] << " ms, min " << times.front() << " ms, max "
            << times.back() << " ms over " << times.size() << " runs (target " << resolve_target(o.target)
            << ", threads " << (o.threads ? std::to_string(o.threads) : std::string("default")) << ")\n";
  if (r.profile || !r.trace.empty()) {
#if NNVMC_WITH_OPENCL
    if (l.opencl) throw nv::UserError("nnvm.cli.profile", "--profile and --trace on opencl are not built yet");
#endif
    nv::graph::Profile prof;
    l.model.run_into(inputs, outputs, o.threads, &prof);
    if (r.profile) std::cout << prof.table();
    if (!r.trace.empty()) {
      std::ofstream(r.trace) << prof.chrome_trace();
      std::cerr << "wrote " << r.trace << "\n";
    }
  }
  return 0;
}

int run_inspect(const std::string& model, const Options& o) {
  auto report = model_support(model, o);
  std::cout << report.to_string() << "\n";
  std::cout << "op histogram:\n";
  std::vector<std::pair<int64_t, std::string>> ops;
  for (auto& [op, n] : report.op_counts) ops.push_back({-n, op});
  std::sort(ops.begin(), ops.end());
  for (auto& [n, op] : ops) std::cout << "  " << nv::printable(op) << " " << -n << "\n";
  if (!report.supported()) return 0;
  nv::graph::Graph g = load_model(model, o);
  int64_t params = 0;
  for (auto& n : g.nodes)
    if (n.kind == nv::graph::NodeKind::constant) params += n.data->numel();
  std::cout << "inputs:\n";
  for (size_t i : g.inputs()) std::cout << "  " << nv::printable(g.nodes[i].name) << ": " << nv::graph::to_string(g.nodes[i].types[0]) << "\n";
  std::cout << "outputs:\n";
  for (auto& v : g.outputs) std::cout << "  " << nv::printable(g.node(v).name) << ": " << nv::graph::to_string(g.type(v)) << "\n";
  std::cout << "parameters (after constant folding): " << params << "\n";
  std::cout << "nodes after import: " << g.nodes.size() << "\n";
  return 0;
}

}  // namespace nnvmc
