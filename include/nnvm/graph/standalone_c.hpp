// A prepared model as self-contained C99 for microcontrollers and WebAssembly (nnvmc compile
// --target c-standalone): three files and no runtime at all.
//   model.h    one run function, `int32_t NAME_run(inputs..., outputs..., void* arena)`, with
//              typed pointers, each tensor's shape in a comment and its element count as a
//              macro, and the arena's size as a compile-time constant (NNVM_NAME_ARENA_BYTES),
//              so that a caller can declare a static arena or static_assert on it;
//   model.c    the kernels (the C emitter's, as a standalone module: static, serial) and the
//              call sequence, every tensor at an offset fixed at compile time;
//   weights.c  every constant as a const array (so it stays in flash), 16-byte aligned.
// No malloc, no threads, no stdio, no file I/O: the run touches its arguments, the arena, the
// stack and the weights; libm only for the functions the kernels call.
//
// The arena holds the planned activations (passes/memory_plan.hpp: tensors whose lifetimes do
// not overlap share bytes) and, after them, the scratch of the step that needs the most. An
// elementwise step writes its output over an input of the same type and shape that dies there
// (in place: one buffer for both, the kernel's parameters not restrict). Model outputs are
// computed straight into the caller's buffers, which must not overlap the inputs or each other.
#pragma once

#include <cctype>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "nnvm/graph/prepare.hpp"
#include "nnvm/target/c_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace graph {

// What a standalone model needs, in bytes, as the generator knows it (no compiler involved).
struct StandaloneFootprint {
  uint64_t arena_bytes = 0;         // NNVM_NAME_ARENA_BYTES: activations + workspace
  uint64_t activation_bytes = 0;    // the planned activations (the arena's first part)
  uint64_t workspace_bytes = 0;     // the largest kernel scratch (the arena's second part)
  uint64_t intermediate_bytes = 0;  // every intermediate tensor added up: the arena without planning
  uint64_t weights_bytes = 0;       // the constants' data
  uint64_t io_bytes = 0;            // the caller's input and output buffers
  size_t in_place_steps = 0;        // elementwise steps that write over a dying input
};

struct StandaloneC {
  std::string name;  // the C prefix: NAME_run, NNVM_NAME_...
  std::string model_h, model_c, weights_c;
  StandaloneFootprint footprint;
  // The run function's tensor parameters, in order: inputs, then outputs.
  struct Port {
    std::string param, tensor;  // the C parameter's name, the model's name for the tensor
    DataType dtype;
    std::vector<int64_t> shape;
  };
  std::vector<Port> inputs, outputs;
};

namespace detail {

inline std::string upper(std::string s) {
  for (char& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

inline std::string shape_comment(DataType t, const std::vector<int64_t>& shape) {
  std::string s = t.str() + " [";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Text safe inside a /* */ comment on one line.
inline std::string comment_safe(const std::string& s) {
  std::string out;
  for (char c : printable(s)) {
    if (c == '/' && !out.empty() && out.back() == '*') out += ' ';
    out += c == '\n' || c == '\r' ? ' ' : c;
  }
  return out;
}

inline uint64_t element_count(const std::vector<int64_t>& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) n *= uint64_t(d);
  return n;
}

// One element of a constant as a C initializer, exact: float32 with 9 significant digits and
// float64 with 17 round-trip; float16/bfloat16 as their bits (the kernels' storage type).
inline std::string c_literal(const NDArray& a, size_t i, bool* uses_math) {
  const DataType t = a.dtype();
  const char* p = static_cast<const char*>(a.raw()) + i * size_t(t.bytes());
  char buf[48];
  auto floating = [&](double v, const char* fmt, const char* suffix) -> std::string {
    if (std::isnan(v) || std::isinf(v)) {
      *uses_math = true;
      return std::isnan(v) ? "NAN" : v > 0 ? "INFINITY" : "-INFINITY";
    }
    std::snprintf(buf, sizeof buf, fmt, v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s + suffix;
  };
  auto read = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (t.code) {
    case DataType::Code::Float:
      if (t.bits == 32) return floating(read(float{}), "%.9g", "f");
      if (t.bits == 64) return floating(read(double{}), "%.17g", "");
      return std::to_string(read(uint16_t{}));
    case DataType::Code::BFloat: return std::to_string(read(uint16_t{}));
    case DataType::Code::Bool: return std::to_string(int(read(uint8_t{}) != 0));
    case DataType::Code::Int:
      if (t.bits <= 8) return std::to_string(read(int8_t{}));
      if (t.bits == 16) return std::to_string(read(int16_t{}));
      if (t.bits == 32) {
        int32_t v = read(int32_t{});
        return v == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(v);
      } else {
        int64_t v = read(int64_t{});
        if (v == INT64_MIN) return "(-INT64_C(9223372036854775807) - 1)";
        return v >= INT32_MIN && v <= INT32_MAX ? std::to_string(v) : "INT64_C(" + std::to_string(v) + ")";
      }
    case DataType::Code::UInt:
      if (t.bits <= 8) return std::to_string(read(uint8_t{}));
      if (t.bits == 16) return std::to_string(read(uint16_t{}));
      if (t.bits == 32) return std::to_string(read(uint32_t{})) + "u";
      return "UINT64_C(" + std::to_string(read(uint64_t{})) + ")";
    case DataType::Code::Handle: break;
    default: return std::to_string(read(uint8_t{}));  // the float8/float4 types: their bits
  }
  throw InternalError("nnvm.standalone.dtype", "a constant of type " + t.str() + " has no C spelling");
}

// Whether every op of `st` is elementwise or broadcast: output element i reads element i of
// each input shaped like the output, so writing it over such an input is safe in any order.
inline bool pointwise_step(const CompiledModel& m, const Step& st) {
  const Graph& g = m.graph();
  for (size_t i : st.nodes) {
    ops::OpPattern p = g.registry->get(g.nodes[i].op).pattern;
    if (p != ops::OpPattern::elementwise && p != ops::OpPattern::broadcast) return false;
  }
  return true;
}

// The arena with in-place steps: per slot its offset (UINT64_MAX outside the arena).
struct InPlacePlan {
  std::vector<uint64_t> offsets;
  uint64_t arena_bytes = 0;
  std::set<size_t> kernels;  // kernels some in-place step calls
  size_t steps = 0;
};

// prepare()'s plan, redone with each pointwise step's output sharing the buffer of an input
// of the same dtype and shape whose last reader it is (chains share one buffer).
inline InPlacePlan plan_in_place(const CompiledModel& m) {
  const auto& slots = m.slots();
  ActivationLifetimes act = activation_lifetimes(m.steps(), slots, m.output_slots());
  std::map<size_t, size_t> index;  // slot -> its entry in `act`
  for (size_t b = 0; b < act.slots.size(); ++b) index[act.slots[b]] = b;
  std::vector<size_t> owner(act.slots.size());  // the entry whose buffer an entry uses
  for (size_t b = 0; b < owner.size(); ++b) owner[b] = b;
  InPlacePlan plan;
  for (size_t st = 0; st < m.steps().size(); ++st) {
    const Step& step = m.steps()[st];
    if (step.outputs.size() != 1 || !index.count(step.outputs[0]) || !pointwise_step(m, step)) continue;
    const size_t out = index.at(step.outputs[0]);
    for (size_t s : step.inputs) {
      auto it = index.find(s);
      if (it == index.end() || slots[s].dtype != slots[step.outputs[0]].dtype ||
          slots[s].shape != slots[step.outputs[0]].shape)
        continue;
      BufferLifetime& host = act.lifetimes[owner[it->second]];
      if (host.last != st) continue;  // read again later
      host.last = act.lifetimes[out].last;
      act.lifetimes[out].bytes = 0;  // planned as part of its host
      owner[out] = owner[it->second];
      plan.kernels.insert(step.kernel);
      ++plan.steps;
      break;
    }
  }
  MemoryPlan mp = plan_memory(act.lifetimes);
  plan.arena_bytes = mp.arena_bytes;
  plan.offsets.assign(slots.size(), UINT64_MAX);
  for (size_t b = 0; b < act.slots.size(); ++b) plan.offsets[act.slots[b]] = mp.offsets[owner[b]];
  return plan;
}

}  // namespace detail

// The standalone C files for `prepared` under the C prefix `name` (a C identifier; NameTable
// sanitizes it). Throws InternalError when a kernel has a symbolic extent (prepare() binds them).
NNVM_COMPILER_INLINE StandaloneC emit_standalone_c(const PreparedModel& prepared, const std::string& name);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE StandaloneC emit_standalone_c(const PreparedModel& prepared, const std::string& name) {
  const CompiledModel& m = prepared.model;
  refuse_control_nodes(m.graph(), "standalone C");
  StandaloneC out;
  out.name = target::NameTable::sanitize(name.empty() ? "model" : name);
  const std::string prefix = out.name, macro = "NNVM_" + detail::upper(prefix);
  StandaloneFootprint& fp = out.footprint;

  const detail::InPlacePlan in_place_plan = detail::plan_in_place(m);
  fp.in_place_steps = in_place_plan.steps;
  target::CModule module =
      target::emit_c_module(prepared.funcs, {.standalone = true, .aliasing_kernels = in_place_plan.kernels});
  std::vector<uint64_t> workspace;
  for (auto& fn : prepared.funcs) {
    workspace.push_back(target::constant_workspace_bytes(fn));
    fp.workspace_bytes = std::max(fp.workspace_bytes, workspace.back());
  }
  fp.activation_bytes = (in_place_plan.arena_bytes + 63) / 64 * 64;
  fp.intermediate_bytes = m.memory().unplanned_bytes;
  // At least 8 bytes, so that a static arena of this size is a valid C array.
  fp.arena_bytes = std::max<uint64_t>(fp.activation_bytes + fp.workspace_bytes, 8);

  // Parameter names: the model's input and output names as C identifiers, unique, clear of
  // the run function's own names and of C's.
  target::NameTable params;
  for (auto& w : target::reserved_c_names()) params.reserve(w);
  for (const char* w : {"arena", "a", "workspace", "args", "status"}) params.reserve(w);
  const target::Dialect& c = target::c_dialect();
  std::vector<std::string> in_names, out_names;
  std::string signature, docs, sizes;
  auto add_param = [&](size_t slot, bool is_input, size_t k) {
    const Slot& sl = m.slots()[slot];
    // "/Softmax" reads better as "Softmax" than as NameTable's "v_Softmax".
    std::string pname = sl.name.substr(std::min(sl.name.size(), sl.name.find_first_not_of("/_.:-")));
    pname = params.fresh(pname.empty() ? std::string(is_input ? "input" : "output") : pname);
    (is_input ? in_names : out_names).push_back(pname);
    (is_input ? out.inputs : out.outputs).push_back({pname, sl.name, sl.dtype, sl.shape});
    signature += str_cat(signature.empty() ? "" : ", ", is_input ? "const " : "", c.scalar_type(sl.dtype), "* ", pname);
    std::string what = str_cat(is_input ? "input " : "output ", k);
    docs += str_cat(" *   ", pname, ": ", what, " '", detail::comment_safe(sl.name), "', ", detail::shape_comment(sl.dtype, sl.shape),
                    sl.dtype.code == DataType::Code::Float && sl.dtype.bits == 16 ? " (float16 bits)" : "",
                    sl.dtype.code == DataType::Code::BFloat ? " (bfloat16 bits)" : "",
                    sl.dtype.is_small_float() ? str_cat(" (", sl.dtype, " bits)") : "",
                    sl.dtype.is_sub_byte_int() ? " (one element per byte)" : "", "\n");
    sizes += str_cat("#define ", macro, "_", detail::upper(is_input ? "input" : "output"), "_", k, "_ELEMENTS ",
                     detail::element_count(sl.shape), "\n");
    fp.io_bytes += sl.bytes();
  };
  for (size_t k = 0; k < m.input_slots().size(); ++k) add_param(m.input_slots()[k], true, k);
  for (size_t k = 0; k < m.output_slots().size(); ++k) add_param(m.output_slots()[k], false, k);
  signature += str_cat(signature.empty() ? "" : ", ", "void* arena");

  // Where each slot's data is during a run, as a C expression.
  std::vector<std::string> where(m.slots().size());
  std::string weights_decls, weights_defs;
  bool uses_math = false;
  std::set<size_t> needed;
  for (auto& st : m.steps()) needed.insert(st.inputs.begin(), st.inputs.end());
  needed.insert(m.output_slots().begin(), m.output_slots().end());
  int weight_count = 0;
  for (size_t s = 0; s < m.slots().size(); ++s) {
    const Slot& sl = m.slots()[s];
    if (sl.kind == Slot::Kind::input) {
      where[s] = "(void*)" + in_names[sl.input_index];
    } else if (sl.kind == Slot::Kind::constant && needed.count(s)) {
      std::string w = str_cat(prefix, "_w", weight_count++), t = c.scalar_type(sl.dtype);
      const uint64_t n = detail::element_count(sl.shape);
      std::string decl = str_cat("const ", t, " ", w, "[", std::max<uint64_t>(n, 1), "]");
      weights_decls += str_cat("extern ", decl, ";\n");
      weights_defs += str_cat("\n/* '", detail::comment_safe(sl.name), "', ", detail::shape_comment(sl.dtype, sl.shape), " */\n", decl,
                              " NNVM_WEIGHTS_ALIGN = {");
      for (uint64_t i = 0; i < n; ++i)
        weights_defs += str_cat(i % 8 ? " " : "\n  ", detail::c_literal(*sl.data, size_t(i), &uses_math), i + 1 < n ? "," : "");
      weights_defs += n ? "\n};\n" : "0};\n";
      fp.weights_bytes += sl.bytes();
      where[s] = "(void*)" + w;
    } else if (sl.kind == Slot::Kind::activation && in_place_plan.offsets[s] != UINT64_MAX) {
      where[s] = str_cat("a + ", in_place_plan.offsets[s]);
    }
  }
  // Outputs a kernel writes go straight to the caller's buffer (the first output naming the slot).
  std::vector<bool> in_place(m.output_slots().size(), false);
  for (size_t k = 0; k < m.output_slots().size(); ++k) {
    size_t s = m.output_slots()[k];
    if (m.slots()[s].kind == Slot::Kind::activation && where[s].empty()) {
      where[s] = "(void*)" + out_names[k];
      in_place[k] = true;
    }
  }

  // model.h
  std::string& h = out.model_h;
  h = str_cat("/* Generated by nnvm ", NNVM_VERSION_MAJOR, ".", NNVM_VERSION_MINOR, ".", NNVM_VERSION_PATCH,
              ": the model '", detail::comment_safe(m.graph().name), "' as self-contained C99 (model.c, weights.c).\n"
              " *\n * int32_t ", prefix, "_run(", signature, ");\n"
              " *   Runs the model once. Tensors are dense, row-major:\n",
              docs,
              " *   arena: ", macro, "_ARENA_BYTES bytes of scratch, aligned to ", macro,
              "_ARENA_ALIGN bytes; it holds every\n"
              " *     intermediate tensor, so one arena serves one run at a time. Output buffers must not overlap\n"
              " *     the inputs or each other.\n"
              " *   Returns 0 (", macro, "_OK) on success, ", macro, "_BAD_ARENA for a NULL or misaligned arena, or a\n"
              " *   kernel's status (1: workspace too small, which a correct arena never gives).\n"
              " * Nothing is allocated and nothing is printed; the weights are const data (flash on a microcontroller).\n"
              " */\n#ifndef ", macro, "_H\n#define ", macro, "_H\n\n#include <stdint.h>\n\n"
              "#define ", macro, "_ARENA_BYTES ", fp.arena_bytes, "\n#define ", macro, "_ARENA_ALIGN 8\n",
              "#define ", macro, "_OK 0\n#define ", macro, "_BAD_ARENA 3\n", sizes,
              "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\nint32_t ", prefix, "_run(", signature, ");\n\n"
              "#ifdef __cplusplus\n}\n#endif\n\n#endif /* ", macro, "_H */\n");

  // model.c: the kernels, then the call sequence.
  std::string run = str_cat("int32_t ", prefix, "_run(", signature, ") {\n",
                            "  char* const a = (char*)arena;\n",
                            "  void* const workspace = a + ", fp.activation_bytes, ";\n",
                            "  if (a == NULL || ((uintptr_t)arena & (", macro, "_ARENA_ALIGN - 1)) != 0) return ", macro,
                            "_BAD_ARENA;\n", "  (void)workspace;\n");
  const Graph& g = m.graph();
  for (size_t i = 0; i < m.steps().size(); ++i) {
    const Step& st = m.steps()[i];
    std::string args;
    for (size_t s : st.inputs) args += (args.empty() ? "" : ", ") + where.at(s);
    for (size_t s : st.outputs) {
      if (where.at(s).empty())
        throw InternalError("nnvm.standalone.slot", str_cat("step ", i, " writes slot ", s, ", which has no memory"));
      args += (args.empty() ? "" : ", ") + where.at(s);
    }
    run += str_cat("  { /* ", st.label, " (node '", detail::comment_safe(g.nodes[st.nodes.front()].name), "') */\n",
                   "    void* args[] = {", args, "};\n",
                   "    const int32_t status = ", module.symbols.at(st.kernel), "(args, NULL, workspace, ",
                   workspace.at(st.kernel), "u, NULL);\n",
                   "    if (status != 0) return status;\n  }\n");
  }
  bool copies = false;
  for (size_t k = 0; k < m.output_slots().size(); ++k) {
    size_t s = m.output_slots()[k];
    if (in_place[k] || m.slots()[s].bytes() == 0) continue;
    copies = true;
    run += str_cat("  memcpy(", out_names[k], ", ", where[s], ", ", m.slots()[s].bytes(), "u);\n");
  }
  run += "  return 0;\n}\n";

  out.model_c = str_cat("/* Generated by nnvm: the kernels and the call sequence of ", prefix, "_run (model.h). */\n",
                        "#include \"model.h\"\n\n#include <stddef.h>\n", copies ? "#include <string.h>\n" : "", "\n",
                        weights_decls.empty() ? "" : "/* weights.c */\n" + weights_decls + "\n", module.source, "\n", run);
  out.weights_c = str_cat("/* Generated by nnvm: the constants of ", prefix, "_run (model.h), ", fp.weights_bytes,
                          " bytes. */\n#include <stdint.h>\n", uses_math ? "#include <math.h>\n" : "",
                          "\n#if defined(__GNUC__) || defined(__clang__)\n#define NNVM_WEIGHTS_ALIGN __attribute__((aligned(16)))\n"
                          "#else\n#define NNVM_WEIGHTS_ALIGN\n#endif\n",
                          weights_defs.empty() ? "\n/* The model has no constants. */\ntypedef int nnvm_no_weights;\n"
                                               : weights_defs);
  return out;
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace graph
NNVM_END_NAMESPACE
