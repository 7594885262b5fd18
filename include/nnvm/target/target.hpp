// What code is generated for, as a typed value: the device family (schedules and lowering passes
// are chosen by it), the emitter (chosen separately), and the device facts schedules need: SIMD
// registers for CPUs, the thread-block limits of a GPU. Parsed from `--target` strings in one
// place (target/parse.hpp); nothing dispatches on a spelling.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "nnvm/error.hpp"
#include "nnvm/ir/dtype.hpp"
#include "nnvm/target/family.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// The limits a GPU schedule sizes its blocks by. Defaults are the portable minimums of the API
// the emitter targets (gpu_defaults); a device query may raise them.
struct GpuDevice {
  std::string arch;                  // CUDA compute capability as nvcc spells it ("sm_90"); else empty
  int warp_size = 32;                // threads that run in lockstep (a warp, wavefront or SIMD-group)
  int max_threads_per_block = 1024;  // threads in one block (work-group, threadgroup)
  int64_t shared_memory_bytes = 48 * 1024;  // shared (local, threadgroup) memory one block may use
};

// What schedules favour where the two part ways (nnvmc --opt-for): speed, or little RAM and
// small code. Microcontroller recipes read it (ops/schedule_mcu.hpp); faster families ignore it.
enum class OptFor : uint8_t { speed, size };

struct Target {
  Family family = Family::cpu;
  Emitter emitter = Emitter::c;
  // CPU, MCU and WASM: the SIMD registers. Width in bits: 128 (SSE, NEON, WASM SIMD), 256 (AVX2),
  // 512 (AVX-512); 0 for none (vector schedules then use one lane).
  int vector_bits = 256;
  // How many of them: register tiles (lesson 1, dense, conv) hold at most this many accumulators.
  int vector_registers = 16;
  // The CPU the code is for, in GCC's -march / LLVM's -mcpu spelling ("x86-64-v3", "znver3",
  // "cortex-m4"); empty means this machine ("native"). Emitters pass it to the compiler, and
  // for_cpu() derives the registers from it, so schedules and instructions agree.
  std::string cpu;
  GpuDevice gpu;  // Family::gpu only
  OptFor opt_for = OptFor::speed;

  // This target with SIMD registers `bits` wide, and as many of them as an ISA with such registers
  // has, so register tiles stay consistent with the width (a bench or test that sweeps widths).
  Target with_vector_bits(int bits) const {
    Target t = *this;
    t.vector_bits = bits;
    t.vector_registers = registers_for(bits);
    return t;
  }

  // This machine, for code JIT-compiled to run here through `emitter`, with the widest SIMD
  // registers the CPU has (x86: 512 with AVX-512F, 256 with AVX2, else 128; Arm: 128). A
  // default-constructed Target instead assumes 256, whatever the machine.
  static Target host(Emitter emitter = Emitter::c) {
    Target t;
    t.emitter = emitter;
    t.vector_bits = host_vector_bits();
    t.vector_registers = registers_for(t.vector_bits);
    return t;
  }
  static int host_vector_bits() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 512;
    return __builtin_cpu_supports("avx2") ? 256 : 128;
#elif defined(__aarch64__) || defined(__arm__)
    return 128;
#else
    return 256;
#endif
  }

  // Code for `cpu` (empty or "native": this machine) through `emitter`: the registers are those
  // of that CPU, so default schedules pick its lanes and register tiles. An unknown CPU name is
  // an error that lists the known ones.
  static Target for_cpu(Emitter emitter, const std::string& cpu) {
    if (cpu.empty() || cpu == "native") return host(emitter);
    Target t;
    t.emitter = emitter;
    t.cpu = cpu;
    t.vector_bits = cpu_vector_bits(cpu);
    t.vector_registers = registers_for(t.vector_bits);
    return t;
  }
  // SIMD register width of a named CPU; throws for a name not in the table.
  static int cpu_vector_bits(const std::string& cpu) {
    struct Row { const char* name; int bits; };
    static constexpr Row rows[] = {
        {"x86-64", 128},          {"x86-64-v2", 128},      {"nehalem", 128},        {"westmere", 128},
        {"sandybridge", 128},     {"ivybridge", 128},      {"btver2", 128},         {"x86-64-v3", 256},
        {"haswell", 256},         {"broadwell", 256},      {"skylake", 256},        {"alderlake", 256},
        {"znver1", 256},          {"znver2", 256},         {"znver3", 256},         {"x86-64-v4", 512},
        {"skylake-avx512", 512},  {"cascadelake", 512},    {"cooperlake", 512},     {"icelake-client", 512},
        {"icelake-server", 512},  {"tigerlake", 512},      {"sapphirerapids", 512}, {"znver4", 512},
        {"generic", 128},         {"armv8-a", 128},        {"neoverse-n1", 128},    {"cortex-a72", 128},
        {"apple-m1", 128}};
    std::string known;
    for (auto& r : rows) {
      if (cpu == r.name) return r.bits;
      known += (known.empty() ? "" : ", ") + std::string(r.name);
    }
    throw UserError("nnvm.target.cpu", "unknown CPU '" + cpu + "'; known: native, " + known);
  }
  // Vector registers of an ISA with registers this wide: AVX-512 has 32, SSE and AVX2 16
  // (x86); NEON has 32.
  static int registers_for(int vector_bits) {
#if defined(__x86_64__) || defined(__i386__)
    return vector_bits >= 512 ? 32 : 16;
#else
    return 32;
#endif
  }

  // Code for a GPU through `emitter` (cuda, opencl or metal), with the portable limits of its
  // API: CUDA 1024 threads and 48 KiB shared memory per block, warps of 32; OpenCL 1.2 256
  // work-items and 32 KiB local memory (the minimum a device may report), sub-groups unknown
  // (1); Metal 1024 threads, 32 KiB threadgroup memory, SIMD-groups of 32.
  static Target for_gpu(Emitter emitter, std::string arch = {}) {
    Target t;
    t.family = Family::gpu;
    t.emitter = emitter;
    t.vector_bits = 128;  // float4 loads and stores
    t.gpu.arch = std::move(arch);
    if (emitter == Emitter::opencl) t.gpu = {t.gpu.arch, 1, 256, 32 * 1024};
    if (emitter == Emitter::metal) t.gpu = {t.gpu.arch, 32, 1024, 32 * 1024};
    return t;
  }

  // Whether code for this target can run on this machine (a CPU target whose registers are no
  // wider than this CPU's); tests use it to skip running what they can only compile.
  bool runs_here() const { return family == Family::cpu && vector_bits <= host_vector_bits(); }
  // The instruction-set level code for this target uses, as benchmarks print it.
  std::string isa_name() const {
    if (family == Family::gpu) return gpu.arch.empty() ? emitter_name(emitter) : gpu.arch;
#if defined(__x86_64__) || defined(__i386__)
    return vector_bits >= 512 ? "AVX-512" : vector_bits >= 256 ? "AVX2" : "SSE4.2";
#else
    return vector_bits >= 128 ? "NEON" : "scalar";
#endif
  }

  // Elements of `t` in one SIMD register (at least 1).
  int vector_lanes(DataType t) const { return std::max(1, vector_bits / std::max(1, int(t.bits))); }
  // Whether schedules may spread loops over threads: CPUs have a thread pool; microcontrollers
  // and WebAssembly run one thread, and a GPU's threads are bound axes, not parallel loops.
  bool has_thread_pool() const { return family == Family::cpu; }
  // The family whose schedules (ops' own, fused and generic recipes) and layouts this target
  // takes. WebAssembly with SIMD128 is a CPU with 16 128-bit registers and no threads: the CPU
  // recipes, which read vector_bits, vector_registers and has_thread_pool(), fit it (their
  // parallel loops run serially in standalone C). Without SIMD it keeps its plain loops.
  Family recipe_family() const { return family == Family::wasm && vector_bits >= 128 ? Family::cpu : family; }
};

}  // namespace target
NNVM_END_NAMESPACE
