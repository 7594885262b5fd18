#include "standalone.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "nnvm/graph/standalone_c.hpp"
#include "wasm.hpp"

namespace nnvmc {

namespace fs = std::filesystem;

namespace {

// The GCC flags of a Cortex-M core: Thumb, and the FPU it has (hard-float ABI) or none.
std::string cortex_m_flags(const std::string& cpu) {
  std::string f = "-mcpu=" + cpu + " -mthumb";
  if (cpu == "cortex-m4") return f + " -mfloat-abi=hard -mfpu=fpv4-sp-d16";
  if (cpu == "cortex-m7") return f + " -mfloat-abi=hard -mfpu=fpv5-d16";
  if (cpu == "cortex-m33") return f + " -mfloat-abi=hard -mfpu=fpv5-sp-d16";
  if (cpu == "cortex-m55" || cpu == "cortex-m85") return f + " -mfloat-abi=hard";
  return f + " -mfloat-abi=soft";
}

std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// A folder of this process's own under the system's temporary directory, removed with it.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& prefix) : path(fs::temp_directory_path() / (prefix + std::to_string(getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// Sections of an ELF file (arm-none-eabi-size -A): name -> bytes.
std::map<std::string, uint64_t> sections(const std::string& file) {
  auto [status, text] = nv::target::detail::run_command("arm-none-eabi-size -A " + shell_quoted(file));
  if (status != 0) throw nv::BackendError("nnvm.standalone.size", "arm-none-eabi-size failed on " + file + ":\n" + text);
  std::map<std::string, uint64_t> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string name;
    uint64_t bytes = 0;
    if (row >> name >> bytes && name[0] == '.') out[name] += bytes;
  }
  return out;
}

// The largest frame of a function named `name` (exact) or, with name empty, of any function
// in a -fstack-usage file.
uint64_t stack_frame(const std::string& su_file, const std::string& name, bool others) {
  std::ifstream in(su_file);
  std::string line;
  uint64_t best = 0;
  while (std::getline(in, line)) {
    size_t tab = line.find('\t'), colon = line.rfind(':', tab);
    if (tab == std::string::npos || colon == std::string::npos) continue;
    std::string fn = line.substr(colon + 1, tab - colon - 1);
    uint64_t bytes = std::stoull(line.substr(tab + 1));
    if ((fn == name) != others) best = std::max(best, bytes);
  }
  return best;
}

uint64_t parse_bytes(const std::string& s, const char* option) {
  std::string digits = s, unit;
  while (!digits.empty() && std::isalpha(static_cast<unsigned char>(digits.back()))) {
    unit.insert(unit.begin(), digits.back());
    digits.pop_back();
  }
  uint64_t scale = unit.empty() || unit == "B" ? 1 : (unit == "k" || unit == "K" || unit == "KiB") ? 1024
                   : (unit == "m" || unit == "M" || unit == "MiB")                                ? 1024 * 1024
                                                                                                   : 0;
  if (digits.empty() || digits.size() > 12 || digits.find_first_not_of("0123456789") != std::string::npos || !scale)
    throw nv::UserError("nnvm.cli.budget", std::string(option) + " '" + nv::printable(s) +
                                               "': expected a byte count, optionally with K or M (e.g. 256K)");
  return std::stoull(digits) * scale;
}

std::string kib(uint64_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << double(bytes) / 1024 << " KiB";
  return s.str();
}

}  // namespace

std::string cortex_m_cflags(const std::string& cpu, const std::string& opt_for) {
  return cortex_m_flags(cpu) + (opt_for == "speed" ? " -O2" : " -Os") +
         " -std=c99 -Wall -Wextra -Werror -pedantic -ffunction-sections -fdata-sections";
}

std::optional<CortexMFootprint> cortex_m_footprint(const nv::graph::StandaloneC& src, const std::string& cpu,
                                                   const std::string& opt_for) {
  if (nv::target::detail::run_command("arm-none-eabi-gcc --version").first != 0) return std::nullopt;
  TempDir tmp("nnvmc-standalone-");
  const fs::path& dir = tmp.path;
  for (auto& [file, text] : {std::pair{"model.h", &src.model_h}, {"model.c", &src.model_c}, {"weights.c", &src.weights_c}})
    std::ofstream(dir / file, std::ios::binary) << *text;
  // The image keeps what the run function reaches: its kernels, the weights, and the libm and
  // libgcc routines they call (newlib, through nosys.specs; no startup code).
  std::string d = dir.string(), flags = cortex_m_cflags(cpu, opt_for);
  std::string cmd = "cd " + shell_quoted(d) + " && arm-none-eabi-gcc " + flags +
                    " -fstack-usage -c model.c weights.c && arm-none-eabi-gcc " + cortex_m_flags(cpu) +
                    " --specs=nosys.specs -nostartfiles -Wl,--gc-sections -Wl,-e," + src.name +
                    "_run model.o weights.o -lm -o image.elf";
  auto [status, text] = nv::target::detail::run_command(cmd);
  if (status != 0)
    throw nv::BackendError("nnvm.standalone.cortex_m", "the generated C does not build for " + cpu + ":\n" + text);
  auto image = sections(d + "/image.elf"), weights = sections(d + "/weights.o");
  CortexMFootprint f;
  f.cpu = cpu;
  f.flags = flags;
  for (auto& [name, bytes] : weights)
    if (name.rfind(".rodata", 0) == 0) f.weights_bytes += bytes;
  uint64_t flash = image[".text"] + image[".rodata"] + image[".data"] + image[".ARM.exidx"];
  f.code_bytes = flash > f.weights_bytes ? flash - f.weights_bytes : 0;
  f.static_ram_bytes = image[".data"] + image[".bss"];
  // The run function's frame plus the largest kernel's (kernels call no other kernel; the libm
  // routines they call add a little that -fstack-usage of the library does not show).
  f.stack_bytes = stack_frame(d + "/model.su", src.name + "_run", false) + stack_frame(d + "/model.su", src.name + "_run", true);
  return f;
}

int run_compile_standalone(const std::string& model, const Options& o) {
  if (o.out.empty())
    throw nv::UserError("nnvm.cli.output", "--target " + o.target + " writes C sources (and model.wasm); give -o DIR");
  if (o.opt_for != "size" && o.opt_for != "speed")
    throw nv::UserError("nnvm.cli.opt_for", "--opt-for '" + nv::printable(o.opt_for) + "': expected size or speed");
  const uint64_t max_ram = o.max_ram.empty() ? 0 : parse_bytes(o.max_ram, "--max-ram");
  const uint64_t max_flash = o.max_flash.empty() ? 0 : parse_bytes(o.max_flash, "--max-flash");
  nv::graph::Graph g = load_model(model, o);
  nv::graph::CompileOptions co = compile_options(o);
  nv::graph::PreparedModel prepared = nv::graph::prepare(g, co);
  // Default name: the file's stem, or its folder's name for a model.onnx (exported networks).
  fs::path file = fs::absolute(model).lexically_normal();
  if (file.filename().empty()) file = file.parent_path();
  std::string name = o.name;
  if (name.empty()) name = fs::is_directory(file) || file.stem() == "model" ? (fs::is_directory(file) ? file : file.parent_path()).filename().string() : file.stem().string();
  nv::graph::StandaloneC src = nv::graph::emit_standalone_c(prepared, name);
  const auto& fp = src.footprint;
  const bool wasm = co.target.family == nv::target::Family::wasm;
  const std::string cpu = co.target.cpu.empty() ? "cortex-m4" : co.target.cpu;
  std::optional<CortexMFootprint> m = wasm ? std::nullopt : cortex_m_footprint(src, cpu, o.opt_for);

  std::cout << "standalone C '" << src.name << "': " << prepared.model.steps().size() << " kernel calls, "
            << prepared.funcs.size() << " kernels\n"
            << "  arena   " << fp.arena_bytes << " B (" << kib(fp.arena_bytes) << "): activations " << fp.activation_bytes
            << " B + scratch " << fp.workspace_bytes << " B; every intermediate tensor added up: " << fp.intermediate_bytes
            << " B" << (fp.in_place_steps ? "; " + std::to_string(fp.in_place_steps) + " elementwise step(s) in place" : "")
            << "\n"
            << "  weights " << fp.weights_bytes << " B (" << kib(fp.weights_bytes) << ")\n"
            << "  inputs and outputs " << fp.io_bytes << " B (the caller's buffers)\n";
  uint64_t ram = fp.arena_bytes, flash = fp.weights_bytes;
  if (m) {
    ram += m->static_ram_bytes + m->stack_bytes;
    flash = m->code_bytes + m->weights_bytes;
    std::cout << "  " << m->cpu << " (" << m->flags << "):\n"
              << "    flash " << flash << " B (" << kib(flash) << "): code " << m->code_bytes << " B + weights "
              << m->weights_bytes << " B\n"
              << "    RAM   " << ram << " B (" << kib(ram) << "): data+bss " << m->static_ram_bytes << " B + arena "
              << fp.arena_bytes << " B + stack ~" << m->stack_bytes << " B\n";
  } else if (!wasm) {
    std::cout << "  (no arm-none-eabi-gcc: code size and static RAM for a Cortex-M are not measured)\n";
  }
  std::string over;
  if (max_ram && ram > max_ram)
    over += "RAM " + std::to_string(ram) + " B exceeds --max-ram " + std::to_string(max_ram) + " B (arena " +
            std::to_string(fp.arena_bytes) + " B" + (m ? ", static data and stack" : "") + "); ";
  if (max_flash && flash > max_flash)
    over += "flash " + std::to_string(flash) + " B exceeds --max-flash " + std::to_string(max_flash) + " B (weights " +
            std::to_string(fp.weights_bytes) + " B" + (m ? ", code " + std::to_string(m->code_bytes) + " B" : "") + "); ";
  if (!over.empty())
    throw nv::UserError("nnvm.standalone.budget", over.substr(0, over.size() - 2) + "; nothing was written",
                        {"model " + nv::printable(model)});
  std::vector<std::pair<std::string, std::string>> files = {
      {"model.h", src.model_h}, {"model.c", src.model_c}, {"weights.c", src.weights_c}};
  if (wasm) {
    // Built in a temporary folder first, so that a failed build writes nothing.
    files.push_back({"wasm_api.c", wasm_api_c(src)});
    files.push_back({"model.mjs", wasm_module_js(src)});
    TempDir scratch("nnvmc-wasm-");
    const fs::path& tmp = scratch.path;
    for (auto& [file, text] : files) std::ofstream(tmp / file, std::ios::binary) << text;
    build_wasm(tmp.string(), co.target.vector_bits >= 128);
    std::ifstream in(tmp / "model.wasm", std::ios::binary);
    files.push_back({"model.wasm", {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}});
    std::cout << "  model.wasm " << files.back().second.size() << " B (" << kib(files.back().second.size())
              << ", weights included; " << (co.target.vector_bits >= 128 ? "SIMD128" : "no SIMD") << ")\n";
  }
  fs::create_directories(o.out);
  std::string written;
  for (auto& [file, text] : files) {
    std::ofstream f(fs::path(o.out) / file, std::ios::binary);
    f << text;
    if (!f.flush()) throw nv::UserError("nnvm.cli.output", "cannot write " + (fs::path(o.out) / file).string());
    written += (written.empty() ? "" : ", ") + file;
  }
  std::cerr << "wrote " << written << " to " << o.out << "\n";
  return 0;
}

}  // namespace nnvmc
