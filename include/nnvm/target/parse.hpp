// `--target` strings to typed targets and back: the one place a target's spelling is read.
//
//   c | llvm [-mcpu=NAME]            host CPU (NAME as GCC's -march / LLVM's -mcpu; default native)
//   cuda [-arch=sm_NN]               NVIDIA GPU through CUDA C++
//   opencl | metal                   GPU through OpenCL C 1.2 / the Metal Shading Language
//   c-standalone [-mcpu=cortex-mN]   microcontroller: self-contained C99
//   wasm [-msimd128]                 WebAssembly, with 128-bit SIMD when asked
//
// Parsing checks the words; whether this build has the emitter is the caller's question
// (nnvmc answers "not built yet" for the back ends later issues add).
#pragma once

#include <sstream>
#include <string>

#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {
// Vector width of a microcontroller core: only Cortex-M55/M85 (Helium) have vector registers.
inline int mcu_vector_bits(const std::string& cpu) {
  static const char* const plain[] = {"cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33"};
  for (const char* n : plain)
    if (cpu == n) return 0;
  if (cpu == "cortex-m55" || cpu == "cortex-m85") return 128;
  std::string known;
  for (const char* n : plain) known += std::string(n) + ", ";
  throw UserError("nnvm.target.cpu", "unknown microcontroller '" + cpu + "'; known: " + known + "cortex-m55, cortex-m85");
}
}  // namespace detail

// Throws UserError "nnvm.target.parse" naming the word it cannot read, and "nnvm.target.cpu"
// for an unknown CPU.
inline Target parse_target(const std::string& spec) {
  std::istringstream in(spec);
  std::string name, word;
  in >> name;
  Emitter emitter{};
  bool found = false;
  std::string names;
  for (Emitter e : all_emitters) {
    names += (names.empty() ? "" : ", ") + std::string(emitter_name(e));
    if (name == emitter_name(e)) emitter = e, found = true;
  }
  if (!found)
    throw UserError("nnvm.target.parse", "target '" + printable(spec) + "': unknown back end '" + printable(name) +
                                             "'; known: " + names);
  std::string cpu, arch;
  bool simd128 = false;
  const Family family = default_family(emitter);
  while (in >> word) {
    bool takes_cpu = family == Family::cpu || family == Family::mcu;
    if (takes_cpu && word.rfind("-mcpu=", 0) == 0 && word.size() > 6) {
      cpu = word.substr(6);
    } else if (family == Family::wasm && word == "-msimd128") {
      simd128 = true;
    } else if (emitter == Emitter::cuda && word.rfind("-arch=sm_", 0) == 0 && word.size() > 9 &&
               word.find_first_not_of("0123456789", 9) == std::string::npos) {
      arch = word.substr(6);
    } else {
      std::string expected = takes_cpu                   ? "-mcpu=NAME, e.g. llvm -mcpu=x86-64-v3"
                             : emitter == Emitter::cuda ? "-arch=sm_NN, e.g. cuda -arch=sm_90"
                             : family == Family::wasm   ? "-msimd128"
                                                        : std::string("no options for ") + emitter_name(emitter);
      throw UserError("nnvm.target.parse",
                      "target '" + printable(spec) + "': unknown option '" + printable(word) + "' (expected " + expected + ")");
    }
  }
  switch (family) {
    case Family::cpu: return Target::for_cpu(emitter, cpu);
    case Family::gpu: return Target::for_gpu(emitter, arch);
    case Family::mcu: {
      Target t;
      t.family = Family::mcu;
      t.emitter = emitter;
      t.cpu = cpu;
      t.vector_bits = cpu.empty() ? 0 : detail::mcu_vector_bits(cpu);
      t.vector_registers = t.vector_bits ? 8 : 0;
      return t;
    }
    case Family::wasm: {
      Target t;
      t.family = Family::wasm;
      t.emitter = emitter;
      t.vector_bits = simd128 ? 128 : 0;
      t.vector_registers = simd128 ? 16 : 0;
      return t;
    }
  }
  return {};
}

// The spelling parse_target reads back to an equal target ("llvm -mcpu=x86-64-v3", "cuda -arch=sm_90").
inline std::string to_string(const Target& t) {
  std::string s = emitter_name(t.emitter);
  if (!t.cpu.empty()) s += " -mcpu=" + t.cpu;
  if (!t.gpu.arch.empty()) s += " -arch=" + t.gpu.arch;
  if (t.family == Family::wasm && t.vector_bits >= 128) s += " -msimd128";
  return s;
}

}  // namespace target
NNVM_END_NAMESPACE
