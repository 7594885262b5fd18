// A model compiled for a GPU target, saved as a directory (nnvmc compile --target cuda|opencl|
// metal -o DIR):
//   kernels.cu | kernels.cl | kernels.metal  every kernel of the model as one source
//               (target::emit_gpu), each with a comment naming its op, schedule and launch;
//   model.json  the CPU artifact's document (graph/artifact.hpp) with format "nnvm.deploy.gpu":
//               "kernels" lists the model's functions (one per fused op; "symbol" is the
//               function's name), and one more member, "launches": per function, its kernels in
//               launch order, [{"symbol" (in the source), "grid", "block" ([x, y, z]),
//               "shared_bytes", "args" (buffer indices: the function's parameters first, in
//               "kernels"' order, then its "temps"), "temps" per function: [{"dtype", "shape"}]
//               (device buffers for intermediates, allocated once)}];
//   weights.bin every constant, as in the CPU artifact.
// The deploy runtime does not load these yet; graph/opencl_model.hpp runs OpenCL models in
// process.
#pragma once

#include "nnvm/graph/artifact.hpp"
#include "nnvm/graph/prepare.hpp"
#include "nnvm/target/gpu_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
inline std::string json_dims(const int64_t (&d)[3]) { return json_ints(std::vector<int64_t>{d[0], d[1], d[2]}); }

inline std::string launches_json(const target::GpuProgram& p) {
  std::string json = "\"launches\":[";
  for (size_t f = 0; f < p.modules.size(); ++f) {
    const target::DeviceModule& m = p.modules[f];
    json += str_cat(f ? ",\n" : "\n", " {\"function\":", json_string(m.name), ",\"temps\":[");
    for (size_t t = 0; t < m.temps.size(); ++t) {
      std::vector<int64_t> shape;
      for (auto& e : m.temps[t]->shape) shape.push_back(*ir::as_const_int(e));  // static: checked by the split
      json += str_cat(t ? "," : "", "{\"dtype\":\"", m.temps[t]->dtype.str(), "\",\"shape\":", json_ints(shape), "}");
    }
    json += "],\"kernels\":[";
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      const target::DeviceKernel& kernel = m.kernels[k];
      json += str_cat(k ? "," : "", "\n  {\"symbol\":", json_string(p.symbols[f][k]),
                      ",\"grid\":", json_dims(kernel.launch.grid), ",\"block\":", json_dims(kernel.launch.block),
                      ",\"shared_bytes\":", kernel.shared_bytes, ",\"args\":", json_ints(kernel.args), "}");
    }
    json += "]}";
  }
  return json + "]";
}
}  // namespace detail

// Saves a model prepared for `target` (a GPU target) in `dir` (created when missing). Errors:
// the emitter's (nnvm.codegen.*), "nnvm.artifact.write" when a file cannot be written.
NNVM_COMPILER_INLINE void save_gpu_artifact(const PreparedModel& prepared, const target::Target& target,
                                            const std::string& dir);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE void save_gpu_artifact(const PreparedModel& prepared, const target::Target& target,
                                            const std::string& dir) {
  refuse_control_nodes(prepared.model.graph(), "the GPU artifact");
  target::GpuProgram program = target::emit_gpu(prepared.funcs, target);
  std::vector<std::string> names;
  for (auto& m : program.modules) names.push_back(m.name);
  std::string blob;
  std::string json = detail::model_json(prepared.model, prepared.funcs, names, &blob, false, "nnvm.deploy.gpu");
  json.insert(json.size() - 2, ",\n" + detail::launches_json(program));  // before the closing "}\n"
  try {
    target::detail::make_dirs(dir);
  } catch (const BackendError& e) {
    throw BackendError("nnvm.artifact.write", e.message());
  }
  const char* ext = target.emitter == target::Emitter::cuda ? "cu" : target.emitter == target::Emitter::opencl ? "cl" : "metal";
  detail::write_artifact_file(str_cat(dir, "/kernels.", ext), program.source);
  detail::write_artifact_file(dir + "/weights.bin", blob);
  detail::write_artifact_file(dir + "/model.json", json);
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
