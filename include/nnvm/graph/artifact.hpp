// The deploy artifact: a compiled model saved as a directory that the tiny runtime
// (runtime/nnvm/runtime/nnvm_runtime.h, library nnvm_runtime) loads without the compiler:
//   kernels.so  every kernel, compiled as one shared library from one C module (the host C JIT's
//               compiler call and flags, so by default it runs on machines like this one:
//               -march=native; pass CJitOptions::extra_flags such as -march=x86-64-v2 to widen);
//   kernels.c   that module's source, for inspection;
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
#pragma once

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "nnvm/graph/executor.hpp"
#include "nnvm/target/c_jit.hpp"

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

inline void write_artifact_file(const std::string& path, const std::string& bytes) {
  try {
    target::detail::write_atomically(path, bytes);
  } catch (const BackendError& e) {
    throw BackendError("nnvm.artifact.write", e.message());
  }
}

}  // namespace detail

// Saves `model` as a deploy artifact in directory `dir` (created when missing; files there are
// replaced). The kernels are compiled again from their lowered IR with the C compiler (a cache
// hit when the model was compiled with it), whatever back end compiled them first.
// Errors: "nnvm.artifact.symbolic_kernel" for a kernel with a non-constant extent,
// "nnvm.artifact.write" when a file cannot be written, the C JIT's errors when compiling fails.
inline void save_artifact(const CompiledModel& model, const std::string& dir,
                          const target::CJitOptions& options = {}) {
  using detail::json_ints;
  using detail::json_string;
  std::vector<ir::LoweredFunc> funcs;
  for (auto& k : model.kernels()) funcs.push_back(k.func);

  std::string json = str_cat("{\"format\":\"nnvm.deploy\",\"version\":1,\n\"name\":", json_string(model.graph().name));
  std::string blob;
  std::string slots = "\"slots\":[";
  for (size_t s = 0; s < model.slots().size(); ++s) {
    const Slot& sl = model.slots()[s];
    slots += str_cat(s ? ",\n" : "\n", " {", detail::json_tensor(sl.name, sl.dtype, sl.shape), ",\"kind\":");
    if (sl.kind == Slot::Kind::input) {
      slots += str_cat("\"input\",\"input\":", sl.input_index, "}");
    } else if (sl.kind == Slot::Kind::constant) {
      blob.resize((blob.size() + 63) / 64 * 64, '\0');
      slots += str_cat("\"constant\",\"offset\":", blob.size(), ",\"bytes\":", sl.data->nbytes(), "}");
      blob.append(static_cast<const char*>(sl.data->raw()), sl.data->nbytes());
    } else if (sl.arena_offset != UINT64_MAX) {
      slots += str_cat("\"activation\",\"offset\":", sl.arena_offset, "}");
    } else {
      slots += "\"activation\"}";
    }
  }
  json += str_cat(",\n\"weights_bytes\":", blob.size(), ",\"arena_bytes\":", model.memory().arena_bytes,
                  ",\n\"kernels\":[");

  target::CModule module = target::emit_c_module(funcs);
  for (size_t k = 0; k < funcs.size(); ++k) {
    const ir::LoweredFunc& fn = funcs[k];
    json += str_cat(k ? ",\n" : "\n", " {\"symbol\":", json_string(module.symbols[k]),
                    ",\"num_size_vars\":", fn.size_vars.size(), ",\"params\":[");
    for (size_t p = 0; p < fn.params.size(); ++p)
      json += str_cat(p ? "," : "", "{\"dtype\":\"", fn.params[p]->dtype.str(),
                      "\",\"shape\":", json_ints(detail::artifact_param_shape(fn, p)), "}");
    json += "]}";
  }
  json += "],\n" + slots + "],\n\"steps\":[";
  for (size_t i = 0; i < model.steps().size(); ++i) {
    const Step& st = model.steps()[i];
    const Node& n = model.graph().nodes[st.nodes.at(0)];
    json += str_cat(i ? ",\n" : "\n", " {\"node\":", json_string(n.name), ",\"op\":", json_string(st.label),
                    ",\"kernel\":", st.kernel, ",\"inputs\":", json_ints(st.inputs), ",\"outputs\":",
                    json_ints(st.outputs), "}");
  }
  for (auto [key, list] : {std::pair{"inputs", &model.input_slots()}, std::pair{"outputs", &model.output_slots()}}) {
    json += str_cat("],\n\"", key, "\":[");
    for (size_t i = 0; i < list->size(); ++i) {
      const Slot& sl = model.slots()[(*list)[i]];
      json += str_cat(i ? ",\n" : "\n", " {", detail::json_tensor(sl.name, sl.dtype, sl.shape), ",\"slot\":",
                      (*list)[i], "}");
    }
  }
  json += "]}\n";

  try {
    target::detail::make_dirs(dir);
  } catch (const BackendError& e) {
    throw BackendError("nnvm.artifact.write", e.message());
  }
  std::string so;
  if (!funcs.empty()) {
    auto lib = target::detail::compile_c(module.source, options);
    std::ifstream in(lib->path, std::ios::binary);
    if (!in) throw BackendError("nnvm.artifact.write", "cannot read the compiled library " + lib->path);
    so.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  detail::write_artifact_file(dir + "/kernels.c", module.source);
  if (!so.empty()) detail::write_artifact_file(dir + "/kernels.so", so);
  detail::write_artifact_file(dir + "/weights.bin", blob);
  // Last, so that a directory with a model.json holds a complete artifact.
  detail::write_artifact_file(dir + "/model.json", json);
}

}  // namespace graph
NNVM_END_NAMESPACE
