// Checks `nnvmc compile --target c-standalone` end to end on one exported network (a folder
// from scripts/models/export_models.py: model.onnx, input_0.npy and PyTorch's output_0.npy):
//   1. nnvmc writes model.h, model.c and weights.c;
//   2. a harness (written here: the input as exact hex-float constants, the run, the outputs
//      printed as float bits) builds with them for this machine with
//      -std=c99 -Wall -Wextra -Werror -pedantic under AddressSanitizer and UBSan, and runs;
//   3. the same sources build for a Cortex-M4F with arm-none-eabi-gcc (startup code and linker
//      script in cortex_m/) and run on QEMU's mps2-an386 board, printing through semihosting;
//   4. with --wasm, steps 2 and 3 give way to WebAssembly: `nnvmc compile --target
//      "wasm -msimd128"` builds model.wasm and model.mjs, node runs them through the ES module,
//      and the same model.c is timed natively (clang and cc -O2, SSE2: the width of SIMD128);
//   5. every result is compared with PyTorch's (rtol, atol), and the Cortex-M4's with the
//      host's bit for bit (reported; libm's expf may differ in the last bit). The median time of
//      a run is printed for the host (-O2, no sanitizers) and, with --wasm, for node beside it.
// Usage: standalone_check NNVMC CASE_DIR WORK_DIR [--cpu cortex-m4] [--opt-for size|speed]
//        [--rtol R] [--atol A] [--no-qemu] [--wasm]
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "tensor_io.hpp"

namespace fs = std::filesystem;

namespace {

std::string shell_quoted(const std::string& s) { return "'" + s + "'"; }

// Runs a shell command; its output goes to `log`. Returns the exit status.
int run(const std::string& cmd, const std::string& log) {
  int st = std::system((cmd + " > " + shell_quoted(log) + " 2>&1").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

[[noreturn]] void fail(const std::string& what, const std::string& log = "") {
  std::cerr << "FAIL: " << what << "\n";
  if (!log.empty()) std::cerr << slurp(log).substr(0, 8000) << "\n";
  std::exit(1);
}

const char* kHarnessIo = R"(
#ifdef NNVM_HOST
#include <stdio.h>
#include <time.h>
static void emit(const char* s) { fputs(s, stdout); }
#else
#include "semihost.h"
static void emit(const char* s) { semihost_print(s); }
#endif

/* "o K IIIIII BBBBBBBB\n": output K, element I, its float32 bits, in hex. */
static void emit_element(unsigned k, unsigned long i, float v) {
  static const char hex[] = "0123456789abcdef";
  char line[32];
  uint32_t bits;
  int p = 0, shift;
  memcpy(&bits, &v, 4);
  line[p++] = 'o';
  line[p++] = ' ';
  line[p++] = hex[k & 15u];
  line[p++] = ' ';
  for (shift = 20; shift >= 0; shift -= 4) line[p++] = hex[(i >> shift) & 15u];
  line[p++] = ' ';
  for (shift = 28; shift >= 0; shift -= 4) line[p++] = hex[(bits >> shift) & 15u];
  line[p++] = '\n';
  line[p] = 0;
  emit(line);
}
)";

// The harness: inputs as constants, the outputs as static arrays, one run, every output printed.
std::string harness(const std::string& name, const std::vector<nnvm::NDArray>& inputs,
                    const std::vector<nnvm::NDArray>& outputs) {
  std::string macro = "NNVM_";
  for (char c : name) macro += char(std::toupper(static_cast<unsigned char>(c)));
  std::string s = "#include <stdint.h>\n#include <string.h>\n\n#include \"model.h\"\n" + std::string(kHarnessIo);
  std::string args;
  char buf[64];
  for (size_t k = 0; k < inputs.size(); ++k) {
    s += "\nstatic const float input_" + std::to_string(k) + "[] = {";
    for (int64_t i = 0; i < inputs[k].numel(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%s%af", i ? "," : "", i % 6 ? " " : "\n  ", double(inputs[k].data<float>()[i]));
      s += buf;
    }
    s += "\n};\n";
    args += "input_" + std::to_string(k) + ", ";
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    s += "static float output_" + std::to_string(k) + "[" + std::to_string(outputs[k].numel()) + "];\n";
    args += "output_" + std::to_string(k) + ", ";
  }
  s += "static uint8_t arena[" + macro + "_ARENA_BYTES] __attribute__((aligned(16)));\n\nint main(void) {\n"
       "  unsigned long i;\n  const int32_t status = " + name + "_run(" + args + "arena);\n"
       "  if (status != 0) {\n    emit(\"run failed\\n\");\n    return 1;\n  }\n";
  for (size_t k = 0; k < outputs.size(); ++k)
    s += "  for (i = 0; i < " + std::to_string(outputs[k].numel()) + "u; ++i) emit_element(" + std::to_string(k) +
         "u, i, output_" + std::to_string(k) + "[i]);\n";
  // The host's timing build runs 20 more times and prints the median milliseconds (CPU time).
  s += "#ifdef NNVM_BENCH\n  {\n    double ms[20], t;\n    int r, q;\n    char line[64];\n"
       "    for (r = 0; r < 20; ++r) {\n      clock_t c0 = clock();\n      " + name + "_run(" + args + "arena);\n"
       "      ms[r] = 1000.0 * (double)(clock() - c0) / CLOCKS_PER_SEC;\n    }\n"
       "    for (r = 1; r < 20; ++r)\n      for (q = r; q > 0 && ms[q - 1] > ms[q]; --q) t = ms[q], ms[q] = ms[q - 1], ms[q - 1] = t;\n"
       "    sprintf(line, \"median %.3f ms\\n\", ms[10]);\n    emit(line);\n  }\n#endif\n";
  return s + "  emit(\"done\\n\");\n  return 0;\n}\n";
}

// The outputs a harness printed, as float bits per output.
std::vector<std::vector<uint32_t>> parse_outputs(const std::string& text, const std::vector<nnvm::NDArray>& ref,
                                                 const std::string& who) {
  std::vector<std::vector<uint32_t>> out(ref.size());
  for (size_t k = 0; k < ref.size(); ++k) out[k].assign(size_t(ref[k].numel()), 0);
  std::vector<std::vector<bool>> seen(ref.size());
  for (size_t k = 0; k < ref.size(); ++k) seen[k].assign(out[k].size(), false);
  std::istringstream in(text);
  std::string line;
  bool done = false;
  while (std::getline(in, line)) {
    if (line == "done") done = true;
    unsigned k = 0;
    unsigned long i = 0;
    uint32_t bits = 0;
    if (std::sscanf(line.c_str(), "o %x %lx %x", &k, &i, &bits) == 3 && k < out.size() && i < out[k].size()) {
      out[k][i] = bits;
      seen[k][i] = true;
    }
  }
  if (!done) fail(who + " did not finish:\n" + text.substr(0, 4000));
  for (size_t k = 0; k < seen.size(); ++k)
    for (size_t i = 0; i < seen[k].size(); ++i)
      if (!seen[k][i]) fail(who + " printed no output " + std::to_string(k) + " element " + std::to_string(i));
  return out;
}

const char* kNodeRunner = R"(// Runs model.wasm once through model.mjs on input_K.bin, writes output_K.bin, then times 20 runs.
import { load } from "./model.mjs";
import fs from "fs";
const model = await load(fs.readFileSync(new URL("./model.wasm", import.meta.url)));
const inputs = model.inputs.map((p, k) => new p.array(Uint8Array.from(fs.readFileSync(`input_${k}.bin`)).buffer));
const outputs = model.run(...inputs);
outputs.forEach((o, k) => fs.writeFileSync(`output_${k}.bin`, Buffer.from(o.buffer)));
const ms = [];
for (let r = 0; r < 20; ++r) {
  const t0 = performance.now();
  model.run(...inputs);
  ms.push(performance.now() - t0);
}
ms.sort((a, b) => a - b);
console.log(`median ${ms[10].toFixed(3)} ms`);
)";

std::string median_line(const std::string& text) {
  size_t at = text.find("median ");
  return at == std::string::npos ? "?" : text.substr(at + 7, text.find('\n', at) - at - 7);
}

float as_float(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Compares with the reference; prints the largest error. Returns whether every element passes.
bool compare(const std::vector<std::vector<uint32_t>>& got, const std::vector<nnvm::NDArray>& ref, double rtol,
             double atol, const std::string& who) {
  bool ok = true;
  for (size_t k = 0; k < ref.size(); ++k) {
    double worst = 0;
    int64_t bad = 0, first_bad = -1;
    for (size_t i = 0; i < got[k].size(); ++i) {
      double want = ref[k].data<float>()[i], have = as_float(got[k][i]);
      double err = std::fabs(have - want);
      worst = std::max(worst, err);
      if (!(err <= atol + rtol * std::fabs(want))) {
        if (first_bad < 0) first_bad = int64_t(i);
        ++bad;
      }
    }
    std::cout << "  " << who << " output " << k << ": max |error| vs PyTorch " << worst << " over " << got[k].size()
              << " elements";
    if (bad) {
      ok = false;
      std::cout << ", " << bad << " outside rtol " << rtol << " atol " << atol << " (first: element " << first_bad
                << ", got " << as_float(got[k][size_t(first_bad)]) << ", want " << ref[k].data<float>()[first_bad] << ")";
    }
    std::cout << "\n";
  }
  return ok;
}

struct Case {
  std::string nnvmc, dir, work, opt_for;
  std::vector<nnvm::NDArray> inputs, refs;
  double rtol, atol;
  std::string name = "net";
  std::string log() const { return work + "/log.txt"; }
};

const std::string kStrict = " -std=c99 -Wall -Wextra -Werror -pedantic ";

// Builds harness.c with the generated sources in `gen` natively at -O2 and returns its median
// milliseconds per run (the outputs it prints are not compared: the sanitized build's are).
std::string native_median(const Case& c, const std::string& gen, const std::string& flags, const std::string& cc = "cc") {
  std::string cmd = "cd " + shell_quoted(gen) + " && " + cc + kStrict + flags + " -DNNVM_HOST -DNNVM_BENCH harness.c " +
                    "model.c weights.c -lm -o host_bench && ./host_bench";
  if (run(cmd, c.log()) != 0) fail("the host timing build failed", c.log());
  return median_line(slurp(c.log()));
}

// Steps 1-3: c-standalone for this machine under the sanitizers, and for a Cortex-M under QEMU.
bool check_c(const Case& c, const std::string& cpu, bool qemu) {
  const std::string gen = c.work + "/gen", here = fs::path(__FILE__).parent_path().string() + "/cortex_m";
  std::string cmd = shell_quoted(c.nnvmc) + " compile " + shell_quoted(c.dir + "/model.onnx") + " --target " +
                    shell_quoted("c-standalone -mcpu=" + cpu) + " --name " + c.name + " --opt-for " + c.opt_for +
                    " -o " + shell_quoted(gen);
  if (run(cmd, c.log()) != 0) fail("nnvmc compile failed", c.log());
  std::cout << slurp(c.log());  // nnvmc's footprint report
  std::ofstream(gen + "/harness.c") << harness(c.name, c.inputs, c.refs);

  cmd = "cd " + shell_quoted(gen) + " && cc" + kStrict + "-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all " +
        "-DNNVM_HOST harness.c model.c weights.c -lm -o host_run && ./host_run";
  if (run(cmd, c.log()) != 0) fail("the host build or run failed", c.log());
  auto host = parse_outputs(slurp(c.log()), c.refs, "the host build");
  bool ok = compare(host, c.refs, c.rtol, c.atol, "host (x86, ASan+UBSan)");
  std::cout << "  host (cc -O2, " << c.opt_for << " schedules): " << native_median(c, gen, "-O2") << " per run\n";

  if (!qemu) return ok;
  const std::string arch = "-mcpu=" + cpu + " -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16";
  cmd = "cd " + shell_quoted(gen) + " && arm-none-eabi-gcc " + arch + kStrict + (c.opt_for == "speed" ? "-O2" : "-Os") +
        " -ffunction-sections -fdata-sections -I" + shell_quoted(here) + " harness.c model.c weights.c " +
        shell_quoted(here + "/startup.c") + " -nostartfiles --specs=nosys.specs -Wl,--gc-sections -T " +
        shell_quoted(here + "/mps2_an386.ld") + " -lm -o m4.elf";
  if (run(cmd, c.log()) != 0) fail("the Cortex-M build failed", c.log());
  cmd = "cd " + shell_quoted(gen) + " && timeout 600 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none "
        "-semihosting-config enable=on,target=native -kernel m4.elf";
  if (run(cmd, c.log()) != 0) fail("the Cortex-M run failed under qemu-system-arm", c.log());
  auto m4 = parse_outputs(slurp(c.log()), c.refs, "the Cortex-M4 run");
  ok = compare(m4, c.refs, c.rtol, c.atol, cpu + " (qemu mps2-an386)") && ok;
  size_t same = 0, total = 0;
  for (size_t k = 0; k < m4.size(); ++k)
    for (size_t i = 0; i < m4[k].size(); ++i) same += m4[k][i] == host[k][i], ++total;
  std::cout << "  " << cpu << " vs host: " << same << " of " << total << " elements bit-identical\n";
  return ok;
}

// Step 4: WebAssembly SIMD128 in node, timed beside the same model.c built natively by the same
// compiler, clang, with SSE2 (the x86-64 baseline: 128-bit vectors, as SIMD128), and by cc
// (gcc) with SSE2 and with -march=native.
bool check_wasm(const Case& c) {
  const std::string dir = c.work + "/wasm";
  std::string cmd = shell_quoted(c.nnvmc) + " compile " + shell_quoted(c.dir + "/model.onnx") +
                    " --target 'wasm -msimd128' --name " + c.name + " --opt-for " + c.opt_for + " -o " + shell_quoted(dir);
  if (run(cmd, c.log()) != 0) fail("nnvmc compile --target wasm failed", c.log());
  std::cout << slurp(c.log());
  for (size_t k = 0; k < c.inputs.size(); ++k)
    std::ofstream(dir + "/input_" + std::to_string(k) + ".bin", std::ios::binary)
        .write(static_cast<const char*>(c.inputs[k].raw()), std::streamsize(c.inputs[k].nbytes()));
  std::ofstream(dir + "/run.mjs") << kNodeRunner;
  if (run("cd " + shell_quoted(dir) + " && node run.mjs", c.log()) != 0) fail("node could not run model.wasm", c.log());
  const std::string wasm_ms = median_line(slurp(c.log()));
  std::vector<std::vector<uint32_t>> got(c.refs.size());
  for (size_t k = 0; k < c.refs.size(); ++k) {
    std::string bytes = slurp(dir + "/output_" + std::to_string(k) + ".bin");
    if (bytes.size() != size_t(c.refs[k].numel()) * 4)
      fail("node wrote " + std::to_string(bytes.size()) + " bytes for output " + std::to_string(k));
    got[k].resize(size_t(c.refs[k].numel()));
    std::memcpy(got[k].data(), bytes.data(), bytes.size());
  }
  bool ok = compare(got, c.refs, c.rtol, c.atol, "wasm (node)");
  std::ofstream(dir + "/harness.c") << harness(c.name, c.inputs, c.refs);
  std::cout << "  latency: node (WebAssembly SIMD128) " << wasm_ms
            << ", native clang -O2 (SSE2) " << native_median(c, dir, "-O2", "clang") << ", native cc -O2 (SSE2) "
            << native_median(c, dir, "-O2") << ", native cc -O2 -march=native " << native_median(c, dir, "-O2 -march=native")
            << " per run\n";
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: standalone_check NNVMC CASE_DIR WORK_DIR [--cpu C] [--opt-for size|speed] [--rtol R] "
                 "[--atol A] [--no-qemu] [--wasm]\n";
    return 2;
  }
  Case c{.nnvmc = argv[1], .dir = argv[2], .work = argv[3], .opt_for = "size", .rtol = 1e-3, .atol = 1e-5};
  std::string cpu = "cortex-m4";
  bool qemu = true, wasm = false;
  for (int i = 4; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-qemu") qemu = false;
    else if (a == "--wasm") wasm = true;
    else if (i + 1 < argc && a == "--cpu") cpu = argv[++i];
    else if (i + 1 < argc && a == "--opt-for") c.opt_for = argv[++i];
    else if (i + 1 < argc && a == "--rtol") c.rtol = std::stod(argv[++i]);
    else if (i + 1 < argc && a == "--atol") c.atol = std::stod(argv[++i]);
    else fail("unknown argument " + a);
  }
  fs::remove_all(c.work);
  fs::create_directories(c.work);
  for (int k = 0; fs::exists(c.dir + "/input_" + std::to_string(k) + ".npy"); ++k)
    c.inputs.push_back(nnvmc::read_tensor(c.dir + "/input_" + std::to_string(k) + ".npy"));
  for (int k = 0; fs::exists(c.dir + "/output_" + std::to_string(k) + ".npy"); ++k)
    c.refs.push_back(nnvmc::read_tensor(c.dir + "/output_" + std::to_string(k) + ".npy"));
  if (c.inputs.empty() || c.refs.empty()) fail("no input_0.npy / output_0.npy in " + c.dir);
  for (auto* list : {&c.inputs, &c.refs})
    for (auto& t : *list)
      if (t.dtype() != nnvm::dtype::float32) fail("the harness handles float32 tensors only");
  bool ok = wasm ? check_wasm(c) : check_c(c, cpu, qemu);
  std::cout << (ok ? "PASS" : "FAIL") << "\n";
  return ok ? 0 : 1;
}
