// The two independent choices a target makes, as types: the family of device the code runs on
// (which decides the schedules and the lowering passes) and the emitter that prints it (which
// decides the source language or object format). Nothing in nnvm dispatches on a target's
// spelling; `--target` strings are parsed into these once (target/parse.hpp).
#pragma once

#include <cstdint>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// Where the code runs. Schedules and lowering passes are chosen per family.
enum class Family : uint8_t {
  cpu,   // a host CPU with threads and SIMD registers (x86, Arm)
  gpu,   // a GPU: blocks of threads, shared memory, a host/device split
  mcu,   // a microcontroller: one thread, static memory, small code
  wasm,  // WebAssembly (the browser, node): one thread, 128-bit SIMD at most
};
inline constexpr Family all_families[] = {Family::cpu, Family::gpu, Family::mcu, Family::wasm};

inline const char* family_name(Family f) {
  switch (f) {
    case Family::cpu: return "cpu";
    case Family::gpu: return "gpu";
    case Family::mcu: return "mcu";
    case Family::wasm: return "wasm";
  }
  return "?";
}

// What prints the lowered IR, named as `--target` spells it.
enum class Emitter : uint8_t {
  c,             // C with GCC vector extensions, JIT-compiled by the host C compiler or saved
  llvm,          // LLVM IR, JIT-compiled by ORC or written as an object file
  cuda,          // CUDA C++
  opencl,        // OpenCL C 1.2
  metal,         // Metal Shading Language
  c_standalone,  // self-contained C99 for microcontrollers: no runtime, no threads, no malloc
  wasm,          // WebAssembly
};
inline constexpr Emitter all_emitters[] = {Emitter::c,     Emitter::llvm,         Emitter::cuda, Emitter::opencl,
                                           Emitter::metal, Emitter::c_standalone, Emitter::wasm};

inline const char* emitter_name(Emitter e) {
  switch (e) {
    case Emitter::c: return "c";
    case Emitter::llvm: return "llvm";
    case Emitter::cuda: return "cuda";
    case Emitter::opencl: return "opencl";
    case Emitter::metal: return "metal";
    case Emitter::c_standalone: return "c-standalone";
    case Emitter::wasm: return "wasm";
  }
  return "?";
}

// The family an emitter's code runs on when the target names no other.
inline Family default_family(Emitter e) {
  switch (e) {
    case Emitter::c:
    case Emitter::llvm: return Family::cpu;
    case Emitter::cuda:
    case Emitter::opencl:
    case Emitter::metal: return Family::gpu;
    case Emitter::c_standalone: return Family::mcu;
    case Emitter::wasm: return Family::wasm;
  }
  return Family::cpu;
}

}  // namespace target
NNVM_END_NAMESPACE
