// The deploy artifact: a compiled model saved as a directory that the tiny runtime
// (nnvm/runtime/nnvm_runtime.h, library nnvm_runtime) loads without the compiler:
//   kernels.so  every kernel, compiled as one shared library by an ArtifactBuilder from the very
//               lowered kernels the model runs in process (same schedules, same vector width):
//               by default the C emitter with the C JIT's flags for the model's target CPU
//               (-O3 -march=Target::cpu, "native" when empty), or LLVM object code
//               (codegen/llvm_artifact.hpp). Each kernel S exports S, S_workspace_bytes and
//               S_signature, its parameter types (target/kernel_signature.hpp), which the
//               runtime checks model.json against;
//   kernels.c   the C module's source, for inspection (the C builder only);
//   model.json  the plan: kernels, value slots, steps, inputs and outputs (format below);
//   weights.bin every constant, each at a 64-byte aligned offset.
//
// model.json (format "nnvm.deploy", version 1), integers only, dtypes as DataType::str():
//   {"format", "version", "name", "weights_bytes", "arena_bytes" (the planned activations),
//    "kernels": [{"symbol", "num_size_vars", "params": [{"dtype", "shape"}]}],
//    "slots":   [{"kind": "input"|"constant"|"activation", "name", "dtype", "shape",
//                 "input" (kind input: position in "inputs"), "offset", "bytes" (kind constant:
//                 in weights.bin), "offset" (kind activation, when planned: in the arena; the
//                 model outputs have none and get their own memory)}],
//    "steps":   [{"node" (the first fused node), "op" (the fused ops, "dense+relu"), "kernel",
//                 "inputs", "outputs"}],   // slot indices, in kernel parameter order
//    "inputs":  [{"name", "dtype", "shape", "slot"}], "outputs": [same]}
//
// graph_json() (nnvmc --emit=json) writes the same document for readers of the optimized graph,
// with one more member per step: "members", the step's op nodes (several for a fused group), each
// {"name", "op", "attrs" ({name: int, float, string or list}; non-finite floats as the strings
// "inf", "-inf", "nan"), "inputs" (slot per op input, -1 for an absent optional one; values read
// at compile time, such as Reshape's shape, are constant slots), "outputs"}. Its floats make it
// no deploy file: the runtime's reader takes integers only.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>

#include "nnvm/graph/executor.hpp"
#include "nnvm/target/c_jit.hpp"
#include "nnvm/target/kernel_signature.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') out += {'\\', ch};
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += ch;
  }
  return out + "\"";
}

inline std::string json_ints(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out + "]";
}
inline std::string json_ints(const std::vector<size_t>& v) {
  return json_ints(std::vector<int64_t>(v.begin(), v.end()));
}

inline std::string json_tensor(const std::string& name, DataType t, const std::vector<int64_t>& shape) {
  return str_cat("\"name\":", json_string(name), ",\"dtype\":\"", t.str(), "\",\"shape\":", json_ints(shape));
}

// A kernel parameter's extents; every one must be a constant (compile() binds symbolic sizes).
inline std::vector<int64_t> artifact_param_shape(const ir::LoweredFunc& fn, size_t p) {
  std::vector<int64_t> shape;
  for (size_t d = 0; d < fn.params[p]->shape.size(); ++d) {
    ir::Expr e = ir::simplify(fn.params[p]->shape[d]);
    auto* c = ir::as_const_int(e);
    if (!c)
      throw UserError("nnvm.artifact.symbolic_kernel",
                      str_cat("parameter ", p, " (", fn.params[p]->name, ") axis ", d, " has extent ",
                              ir::to_string(e), "; the deploy runtime runs kernels with static shapes only"),
                      {"kernel " + fn.name});
    shape.push_back(*c);
  }
  return shape;
}

inline std::string json_number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline std::string json_attrs(const Attrs& attrs) {
  std::string out = "{";
  for (auto& [name, v] : attrs.values()) {
    out += (out.size() > 1 ? "," : "") + json_string(name) + ":";
    if (auto* i = std::get_if<int64_t>(&v)) out += std::to_string(*i);
    else if (auto* f = std::get_if<double>(&v)) out += json_number(*f);
    else if (auto* s = std::get_if<std::string>(&v)) out += json_string(*s);
    else if (auto* is = std::get_if<std::vector<int64_t>>(&v)) out += json_ints(*is);
    else {
      std::string list;
      for (double x : std::get<std::vector<double>>(v)) list += (list.empty() ? "" : ",") + json_number(x);
      out += "[" + list + "]";
    }
  }
  return out + "}";
}

// Each node's first slot: compile() numbers every node's outputs in node order.
inline std::vector<int64_t> first_slots(const CompiledModel& model) {
  const Graph& g = model.graph();
  std::vector<int64_t> first(g.nodes.size() + 1, 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) first[i + 1] = first[i] + int64_t(g.nodes[i].num_outputs());
  if (size_t(first.back()) != model.slots().size())
    throw InternalError("nnvm.artifact.slots", str_cat("the graph has ", first.back(), " values but the model ",
                                                       model.slots().size(), " slots"));
  return first;
}

// A step's op nodes for graph_json: ,"members":[...].
inline std::string json_members(const CompiledModel& model, const Step& st, const std::vector<int64_t>& first_slot) {
  const Graph& g = model.graph();
  std::string out = ",\"members\":[";
  for (size_t m = 0; m < st.nodes.size(); ++m) {
    const Node& n = g.nodes[st.nodes[m]];
    std::vector<int64_t> ins, outs;
    for (auto& v : n.inputs) ins.push_back(v.defined() ? first_slot[v.node] + int64_t(v.index) : -1);
    for (size_t k = 0; k < n.num_outputs(); ++k) outs.push_back(first_slot[st.nodes[m]] + int64_t(k));
    out += str_cat(m ? "," : "", "{\"name\":", json_string(n.name), ",\"op\":", json_string(n.op),
                   ",\"attrs\":", json_attrs(n.attrs), ",\"inputs\":", json_ints(ins), ",\"outputs\":",
                   json_ints(outs), "}");
  }
  return out + "]";
}

// The model.json document (format above) for kernels named `symbols` (the C module's), with
// "members" in each step when asked (graph_json). `weights`, when given, receives weights.bin.
// `funcs`: the model's lowered kernels (a CPU model's are its compiled kernels'; a GPU model's
// come from prepare()). `format`: "nnvm.deploy", or a GPU artifact's own.
inline std::string model_json(const CompiledModel& model, const std::vector<ir::LoweredFunc>& funcs,
                              const std::vector<std::string>& symbols, std::string* weights, bool members,
                              const std::string& format = "nnvm.deploy") {
  refuse_control_nodes(model.graph(), "the deploy artifact");
  std::string json = str_cat("{\"format\":", json_string(format), ",\"version\":1,\n\"name\":", json_string(model.graph().name));
  uint64_t weights_bytes = 0;
  std::string slots = "\"slots\":[";
  for (size_t s = 0; s < model.slots().size(); ++s) {
    const Slot& sl = model.slots()[s];
    slots += str_cat(s ? ",\n" : "\n", " {", json_tensor(sl.name, sl.dtype, sl.shape), ",\"kind\":");
    if (sl.kind == Slot::Kind::input) {
      slots += str_cat("\"input\",\"input\":", sl.input_index, "}");
    } else if (sl.kind == Slot::Kind::constant) {
      weights_bytes = (weights_bytes + 63) / 64 * 64;
      slots += str_cat("\"constant\",\"offset\":", weights_bytes, ",\"bytes\":", sl.data->nbytes(), "}");
      if (weights) {
        weights->resize(weights_bytes, '\0');
        weights->append(static_cast<const char*>(sl.data->raw()), sl.data->nbytes());
      }
      weights_bytes += sl.data->nbytes();
    } else if (sl.arena_offset != UINT64_MAX) {
      slots += str_cat("\"activation\",\"offset\":", sl.arena_offset, "}");
    } else {
      slots += "\"activation\"}";
    }
  }
  json += str_cat(",\n\"weights_bytes\":", weights_bytes, ",\"arena_bytes\":", model.memory().arena_bytes,
                  ",\n\"kernels\":[");
  for (size_t k = 0; k < funcs.size(); ++k) {
    const ir::LoweredFunc& fn = funcs[k];
    json += str_cat(k ? ",\n" : "\n", " {\"symbol\":", json_string(symbols.at(k)),
                    ",\"num_size_vars\":", fn.size_vars.size(), ",\"params\":[");
    for (size_t p = 0; p < fn.params.size(); ++p)
      json += str_cat(p ? "," : "", "{\"dtype\":\"", fn.params[p]->dtype.str(),
                      "\",\"shape\":", json_ints(artifact_param_shape(fn, p)), "}");
    json += "]}";
  }
  json += "],\n" + slots + "],\n\"steps\":[";
  std::vector<int64_t> first_slot = members ? first_slots(model) : std::vector<int64_t>{};
  for (size_t i = 0; i < model.steps().size(); ++i) {
    const Step& st = model.steps()[i];
    const Node& n = model.graph().nodes[st.nodes.at(0)];
    json += str_cat(i ? ",\n" : "\n", " {\"node\":", json_string(n.name), ",\"op\":", json_string(st.label),
                    ",\"kernel\":", st.kernel, ",\"inputs\":", json_ints(st.inputs), ",\"outputs\":",
                    json_ints(st.outputs), members ? json_members(model, st, first_slot) : "", "}");
  }
  for (auto [key, list] : {std::pair{"inputs", &model.input_slots()}, std::pair{"outputs", &model.output_slots()}}) {
    json += str_cat("],\n\"", key, "\":[");
    for (size_t i = 0; i < list->size(); ++i) {
      const Slot& sl = model.slots()[(*list)[i]];
      json += str_cat(i ? ",\n" : "\n", " {", json_tensor(sl.name, sl.dtype, sl.shape), ",\"slot\":",
                      (*list)[i], "}");
    }
  }
  return json + "]}\n";
}

inline std::vector<ir::LoweredFunc> kernel_funcs(const CompiledModel& model) {
  std::vector<ir::LoweredFunc> funcs;
  for (auto& k : model.kernels()) funcs.push_back(k.func());
  return funcs;
}

inline void write_artifact_file(const std::string& path, const std::string& bytes) {
  try {
    target::detail::write_atomically(path, bytes);
  } catch (const BackendError& e) {
    throw BackendError("nnvm.artifact.write", e.message());
  }
}

inline std::string read_binary_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BackendError("nnvm.artifact.write", "cannot read the compiled library " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace detail

// A built kernels.so: the library's bytes, each kernel's exported symbol (in kernel order), and
// sources saved beside it for inspection (file name, text).
struct ArtifactLibrary {
  std::string so;
  std::vector<std::string> symbols;
  std::vector<std::pair<std::string, std::string>> sources;
};
// Builds kernels.so for a model's lowered kernels (never empty): each kernel exported under its
// symbol S with S_workspace_bytes and S_signature (target::signatures_c_source).
using ArtifactBuilder = std::function<ArtifactLibrary(const std::vector<ir::LoweredFunc>&)>;

// The C emitter's kernels.so, compiled as the C JIT compiles (its flags, `options.cpu` as
// -march, and its cache), with the signatures in the same module; kernels.c holds the source.
inline ArtifactBuilder c_artifact_builder(target::CJitOptions options = {}) {
  return [options](const std::vector<ir::LoweredFunc>& fns) {
    target::CModule module = target::emit_c_module(fns);
    std::string source = module.source + target::signatures_c_source(fns, module.symbols);
    auto lib = target::detail::compile_c(source, options);
    return ArtifactLibrary{detail::read_binary_file(lib->path), module.symbols, {{"kernels.c", source}}};
  };
}

// Saves `model` as a deploy artifact in directory `dir` (created when missing; files there are
// replaced), its kernels.so made by `build` from the model's lowered kernels.
// Errors: "nnvm.artifact.symbolic_kernel" for a kernel with a non-constant extent,
// "nnvm.artifact.write" when a file cannot be written, the builder's when compiling fails.
NNVM_COMPILER_INLINE void save_artifact(const CompiledModel& model, const std::string& dir,
                                        const ArtifactBuilder& build);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE void save_artifact(const CompiledModel& model, const std::string& dir,
                                        const ArtifactBuilder& build) {
  std::vector<ir::LoweredFunc> funcs = detail::kernel_funcs(model);
  for (auto& fn : funcs)  // symbolic kernels are refused before anything is compiled
    for (size_t p = 0; p < fn.params.size(); ++p) detail::artifact_param_shape(fn, p);
  ArtifactLibrary lib;
  if (!funcs.empty()) lib = build(funcs);
  if (lib.symbols.size() != funcs.size())
    throw InternalError("nnvm.artifact.symbols", str_cat("the artifact builder named ", lib.symbols.size(),
                                                         " symbols for ", funcs.size(), " kernels"));
  std::string blob;
  std::string json = detail::model_json(model, funcs, lib.symbols, &blob, false);
  try {
    target::detail::make_dirs(dir);
  } catch (const BackendError& e) {
    throw BackendError("nnvm.artifact.write", e.message());
  }
  for (auto& [name, text] : lib.sources) detail::write_artifact_file(dir + "/" + name, text);
  // A kernels.c left by an earlier save with the C builder would no longer describe kernels.so.
  if (std::none_of(lib.sources.begin(), lib.sources.end(), [](auto& s) { return s.first == "kernels.c"; }))
    std::remove((dir + "/kernels.c").c_str());
  if (!lib.so.empty()) detail::write_artifact_file(dir + "/kernels.so", lib.so);
  detail::write_artifact_file(dir + "/weights.bin", blob);
  // Last, so that a directory with a model.json holds a complete artifact.
  detail::write_artifact_file(dir + "/model.json", json);
}
#endif  // NNVM_COMPILER_DEFINITIONS

// Saves `model` with the C emitter's kernels (c_artifact_builder), compiled for `options.cpu`,
// or for the CPU the model was compiled for (CompiledModel::target) when that is empty.
inline void save_artifact(const CompiledModel& model, const std::string& dir, target::CJitOptions options = {}) {
  if (options.cpu.empty()) options.cpu = model.target().cpu;
  save_artifact(model, dir, c_artifact_builder(std::move(options)));
}

// The compiled model's optimized graph as JSON for readers (nnvmc --emit=json): model.json's
// document with each step's member nodes (format at the top). Writes nothing.
// Errors: "nnvm.artifact.symbolic_kernel" for a kernel with a non-constant extent.
inline std::string graph_json(const CompiledModel& model) {
  std::vector<ir::LoweredFunc> funcs = detail::kernel_funcs(model);
  return detail::model_json(model, funcs, target::emit_c_module(funcs).symbols, nullptr, true);
}

}  // namespace graph
NNVM_END_NAMESPACE
