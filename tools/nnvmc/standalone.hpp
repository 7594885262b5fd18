// nnvmc compile --target c-standalone: the model as self-contained C99 (graph/standalone_c.hpp)
// and its footprint on a Cortex-M, measured by building it with arm-none-eabi-gcc when present.
#pragma once

#include <optional>
#include <string>

#include "nnvm/graph/standalone_c.hpp"
#include "session.hpp"

namespace nnvmc {

// What the generated C takes on a Cortex-M, from a linked image (the run function as entry,
// unreachable code collected) and -fstack-usage.
struct CortexMFootprint {
  std::string cpu, flags;
  uint64_t code_bytes = 0;        // flash without the weights: kernels, call sequence, libm/libgcc routines
  uint64_t weights_bytes = 0;     // flash: weights.c's const data
  uint64_t static_ram_bytes = 0;  // .data + .bss (the library's; the model itself has none)
  uint64_t stack_bytes = 0;       // the run function's frame plus the largest kernel's
};

// GCC flags for `cpu` that the generated C must build with (-Werror -pedantic included);
// opt_for "size" is -Os, "speed" -O2.
std::string cortex_m_cflags(const std::string& cpu, const std::string& opt_for);
// Builds `src` for `cpu` in a temporary folder; nullopt when arm-none-eabi-gcc is missing.
// BackendError "nnvm.standalone.cortex_m" when the code does not build.
std::optional<CortexMFootprint> cortex_m_footprint(const nv::graph::StandaloneC& src, const std::string& cpu,
                                                   const std::string& opt_for);

// The compile command for --target c-standalone: prints the footprint, checks --max-ram and
// --max-flash (UserError "nnvm.standalone.budget", before any file is written), then writes
// model.h, model.c and weights.c to Options::out.
int run_compile_standalone(const std::string& model, const Options& o);

}  // namespace nnvmc
