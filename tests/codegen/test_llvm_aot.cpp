// Ahead-of-time objects: scheduled kernels compiled to an AArch64 object, linked with a generated
// C driver by the cross gcc and run under qemu-aarch64 (the Raspberry Pi-class check), and to
// a host object linked with cc and run natively; outputs equal the interpreter's.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "nnvm/codegen/llvm_aot.hpp"

namespace codegen_llvm_aot {

using namespace nnvm;

namespace {

constexpr int64_t M = 37, K = 29, N = 45;  // odd: every tile and vector leaves a tail
constexpr int64_t kElems = 53;             // the symbolic size bound at run time

// C = A B: tiled 4x8, k split, vectorized j, unrolled i, parallel outer rows.
ir::LoweredFunc matmul_kernel() {
  te::Tensor A = te::placeholder({M, K}, dtype::float32, "A");
  te::Tensor B = te::placeholder({K, N}, dtype::float32, "B");
  auto k = te::reduce_axis(K, "k");
  te::Tensor C = te::compute({M, N}, [&](auto& v) { return te::sum(A(v[0], k.var()) * B(k.var(), v[1]), {k}); }, "C");
  auto s = schedule::create_schedule(C);
  auto st = s[C];
  auto [io, jo, ii, ji] = st.tile(st.axis(0), st.axis(1), 4, 8);
  auto [ko, ki] = st.split(st.reduce_axis(0), 2);
  st.reorder({io, jo, ko, ki, ii, ji});
  st.vectorize(ji);
  st.unroll(ii);
  st.parallel(io);
  return lower::lower(s, {A, B, C}, "matmul");
}

// Y = exp(X / 8) * X - 3X over a symbolic n: 8 lanes, a tail, parallel outer loop, libm.
ir::LoweredFunc elementwise_kernel() {
  ir::Var n("n");
  te::Tensor X = te::placeholder({n}, dtype::float32, "X");
  te::Tensor Y = te::compute(
      {n}, [&](auto& v) { return ir::call(ir::CallOp::exp, X(v[0]) / 8.0f) * X(v[0]) - X(v[0]) * 3.0f; }, "Y");
  auto s = schedule::create_schedule(Y);
  auto [o, i] = s[Y].split(s[Y].axis(0), 8);
  s[Y].vectorize(i);
  s[Y].parallel(o);
  return lower::lower(s, {X, Y}, "elementwise");
}

// The inputs both the C driver and the test build: exact binary fractions in [-3.2, 3.1].
float input_value(int64_t i, int seed) { return float((i * 37 + seed * 11) % 101 - 50) / 16.0f; }
const char* kInputC = "(float)((i * 37 + seed * 11) % 101 - 50) / 16.0f";

struct Case {
  ir::LoweredFunc fn;
  std::vector<int64_t> sizes;                // values of fn.size_vars
  std::vector<std::vector<int64_t>> shapes;  // concrete shape of each param
  size_t num_inputs;                         // params [0, num_inputs) are inputs, the rest outputs
};

int64_t count(const std::vector<int64_t>& shape) {
  int64_t c = 1;
  for (int64_t d : shape) c *= d;
  return c;
}

// A C program that fills every argument (outputs too, so unwritten elements show), calls each
// kernel, and prints each output as `OUT <kernel>.<param> <count>` then one value per line.
// With argv[1] present it lends the kernels an env whose parallel_for runs chunks serially and
// counts its calls; otherwise env is NULL.
std::string driver_source(const std::vector<Case>& cases) {
  std::string s = R"(#include <stdio.h>
#include <stdlib.h>
#include "kernels.h"

static long long parallel_calls = 0;
static int32_t serial_parallel_for(void* pool, int64_t n, nnvm_parallel_body body, void* closure) {
  (void)pool;
  ++parallel_calls;
  for (int64_t begin = 0; begin < n; begin += 3) {
    int32_t st = body(begin, begin + 3 < n ? begin + 3 : n, closure);
    if (st) return st;
  }
  return 0;
}
static float* make(int64_t count, int seed) {
  float* p = (float*)malloc(sizeof(float) * (size_t)(count > 0 ? count : 1));
  for (int64_t i = 0; i < count; ++i) p[i] = )" + std::string(kInputC) + R"(;
  return p;
}
static void dump(const char* name, const float* p, int64_t count) {
  printf("OUT %s %lld\n", name, (long long)count);
  for (int64_t i = 0; i < count; ++i) printf("%.9g\n", p[i]);
}
static void* workspace(uint64_t bytes) { return bytes ? aligned_alloc(64, (size_t)((bytes + 63) / 64 * 64)) : NULL; }

int main(int argc, char** argv) {
  nnvm_kernel_env counting = {NULL, serial_parallel_for};
  const nnvm_kernel_env* env = argc > 1 ? &counting : NULL;
)";
  for (auto& c : cases) {
    s += "  {\n";
    std::string args;
    for (size_t p = 0; p < c.fn.params.size(); ++p) {
      s += str_cat("    float* p", p, " = make(", count(c.shapes[p]), ", ", p + 1, ");\n");
      args += str_cat(p ? ", " : "", "p", p);
    }
    s += "    void* args[] = {" + args + "};\n";
    std::string sizes;
    for (int64_t v : c.sizes) sizes += str_cat(sizes.empty() ? "" : ", ", v);
    s += c.sizes.empty() ? "    const int64_t* sizes = NULL;\n" : "    const int64_t sizes[] = {" + sizes + "};\n";
    s += str_cat("    uint64_t bytes = ", c.fn.name, "_workspace_bytes(sizes);\n");
    s += str_cat("    int32_t st = ", c.fn.name, "(args, sizes, workspace(bytes), bytes, env);\n");
    s += "    if (st) { printf(\"STATUS " + c.fn.name + " %d\\n\", (int)st); return 1; }\n";
    for (size_t p = c.num_inputs; p < c.fn.params.size(); ++p)
      s += str_cat("    dump(\"", c.fn.name, ".", c.fn.params[p]->name, "\", p", p, ", ", count(c.shapes[p]), ");\n");
    s += "  }\n";
  }
  s += "  printf(\"PARALLEL_FOR_CALLS %lld\\n\", parallel_calls);\n  return 0;\n}\n";
  return s;
}

struct Run {
  int status;
  std::string output;
};

Run shell(const std::string& command, const std::string& log) {
  int status = std::system((command + " > '" + log + "' 2>&1").c_str());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  return {status, text.str()};
}

bool have_tool(const std::string& tool) {
  return std::system(("command -v " + tool + " > /dev/null 2>&1").c_str()) == 0;
}

std::map<std::string, std::vector<float>> parse_outputs(const std::string& text, long long& parallel_calls) {
  std::map<std::string, std::vector<float>> out;
  std::istringstream in(text);
  std::string word;
  parallel_calls = -1;
  while (in >> word) {
    if (word == "PARALLEL_FOR_CALLS") {
      in >> parallel_calls;
    } else if (word == "OUT") {
      std::string name;
      int64_t n = 0;
      in >> name >> n;
      auto& v = out[name];
      for (int64_t i = 0; i < n; ++i) {
        std::string x;
        in >> x;
        v.push_back(std::strtof(x.c_str(), nullptr));
      }
    }
  }
  return out;
}

// The interpreter's outputs for the driver's inputs, keyed as the driver prints them.
std::map<std::string, std::vector<float>> reference(const std::vector<Case>& cases) {
  std::map<std::string, std::vector<float>> want;
  for (auto& c : cases) {
    std::vector<NDArray> arrays;
    for (size_t p = 0; p < c.fn.params.size(); ++p) {
      arrays.emplace_back(dtype::float32, c.shapes[p]);
      auto v = arrays.back().values<float>();
      for (int64_t i = 0; i < int64_t(v.size()); ++i) v[size_t(i)] = input_value(i, int(p) + 1);
    }
    std::vector<BufferView> views(arrays.begin(), arrays.end());
    target::interpret(c.fn, std::span<const BufferView>(views));
    for (size_t p = c.num_inputs; p < c.fn.params.size(); ++p) {
      auto v = arrays[p].values<float>();
      want[c.fn.name + "." + c.fn.params[p]->name] = std::vector<float>(v.begin(), v.end());
    }
  }
  return want;
}

std::vector<Case> cases() {
  return {{matmul_kernel(), {}, {{M, K}, {K, N}, {M, N}}, 2}, {elementwise_kernel(), {kElems}, {{kElems}, {kElems}}, 1}};
}

std::vector<ir::LoweredFunc> functions(const std::vector<Case>& cs) {
  std::vector<ir::LoweredFunc> fns;
  for (auto& c : cs) fns.push_back(c.fn);
  return fns;
}

// A fresh folder in the kernel cache for one test's files.
std::string work_dir(const std::string& name) {
  std::string dir = target::detail::cache_dir({}) + "/aot-" + name + "-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  target::detail::make_dirs(dir);
  return dir;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

// Emits the object for `triple`, links it with the driver using `cc_command`, runs it with
// `run_prefix`, and checks every output against the interpreter.
void build_and_run(const std::string& dir, const std::string& triple, const std::string& cpu, const std::string& link,
                   const std::string& run_prefix, bool with_env) {
  std::vector<Case> cs = cases();
  std::string object = dir + "/kernels.o", exe = dir + "/driver";
  codegen::emit_object(functions(cs), object, {triple, cpu, "", 3});
  write_file(dir + "/kernels.h", codegen::emit_c_header(functions(cs)));
  write_file(dir + "/driver.c", driver_source(cs));
  Run built = shell(link + " -std=c11 -O1 -I'" + dir + "' '" + dir + "/driver.c' '" + object + "' -o '" + exe + "' -lm",
                    dir + "/link.log");
  INFO("link: ", link, "\n", built.output);
  REQUIRE(built.status == 0);
  Run ran = shell(run_prefix + "'" + exe + "'" + (with_env ? " env" : ""), dir + "/run.log");
  INFO("run: ", ran.output.substr(0, 2000));
  REQUIRE(ran.status == 0);
  long long parallel_calls = 0;
  auto got = parse_outputs(ran.output, parallel_calls);
  auto want = reference(cs);
  REQUIRE(got.size() == want.size());
  for (auto& [name, values] : want) {
    INFO("output ", name);
    REQUIRE(got.count(name) == 1);
    CHECK(nnvm_test::compare<float>(got[name], values) == "");
  }
  // Both kernels hold one parallel loop: with an env each goes through parallel_for once;
  // with env NULL they run serially and never ask.
  CHECK(parallel_calls == (with_env ? 2 : 0));
  std::filesystem::remove_all(dir);
}

template <class E>
std::string error_text(auto&& f, std::string& id) {
  try {
    f();
  } catch (const E& e) {
    id = e.id();
    return e.what();
  }
  id = "no error";
  return {};
}

}  // namespace

TEST_CASE("llvm aot: the scheduled kernels agree with a plain loop in the interpreter") {
  // Guards the oracle the object files are compared with.
  std::vector<Case> cs = cases();
  auto want = reference(cs);
  std::vector<float> c(size_t(M * N), 0.0f), y(kElems);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      for (int64_t q = 0; q < K; ++q) c[size_t(i * N + j)] += input_value(i * K + q, 1) * input_value(q * N + j, 2);
  for (int64_t i = 0; i < kElems; ++i) {
    float x = input_value(i, 1);
    y[size_t(i)] = std::exp(x / 8.0f) * x - x * 3.0f;
  }
  CHECK(nnvm_test::compare<float>(want["matmul.C"], c) == "");
  CHECK(nnvm_test::compare<float>(want["elementwise.Y"], y) == "");
}

TEST_CASE("llvm aot: an AArch64 object linked by the cross gcc runs under qemu-aarch64") {
  for (std::string tool : {"aarch64-linux-gnu-gcc", "qemu-aarch64"})
    if (!have_tool(tool))
      FAIL(tool, " not found: the AArch64 object test needs gcc-aarch64-linux-gnu and qemu-user "
                 "(scripts/install_deps.sh installs them)");
  build_and_run(work_dir("aarch64"), "aarch64-linux-gnu", "cortex-a72", "aarch64-linux-gnu-gcc -static", "qemu-aarch64 ",
                false);
}

TEST_CASE("llvm aot: a host object linked by cc runs natively, parallel loops through env") {
#if defined(__x86_64__) && defined(__linux__)
  const std::string triple = "x86_64-linux-gnu";
#else
  const std::string triple;  // the host's
#endif
  build_and_run(work_dir("host"), triple, "", "cc", "", true);
}

TEST_CASE("llvm aot: the C header names arguments, dtypes, shapes and size order") {
  std::vector<Case> cs = cases();
  std::string h = codegen::emit_c_header(functions(cs));
  CHECK(h.find("typedef struct nnvm_kernel_env") != std::string::npos);
  CHECK(h.find("args[0]: A float32[37, 29]") != std::string::npos);
  CHECK(h.find("args[2]: C float32[37, 45]") != std::string::npos);
  CHECK(h.find("args[1]: Y float32[n]") != std::string::npos);
  CHECK(h.find("sizes: [0] n") != std::string::npos);
  CHECK(h.find("int32_t matmul(void* const* args") != std::string::npos);
  CHECK(h.find("uint64_t elementwise_workspace_bytes(const int64_t* sizes);") != std::string::npos);
  // A kernel named like a C keyword gets a symbol C can declare.
  ir::LoweredFunc bad = cs[1].fn;
  bad.name = "int";
  CHECK(codegen::emit_c_header({bad}).find("int32_t int_1(") != std::string::npos);
}

TEST_CASE("llvm aot: object symbols leave room for each kernel's _signature (deploy artifacts)") {
  ir::LoweredFunc k = elementwise_kernel(), ks = elementwise_kernel(), ms = elementwise_kernel(), m = elementwise_kernel();
  k.name = "k";
  ks.name = "k_signature";
  ms.name = "m_signature";
  m.name = "m";
  CHECK(codegen::object_symbols({k, ks, ms, m}) == std::vector<std::string>{"k", "k_signature_1", "m_signature", "m_1"});
}

TEST_CASE("llvm aot: cpu \"native\" is this machine's CPU, and only for this machine's triple") {
  std::vector<ir::LoweredFunc> fns{elementwise_kernel()};
  std::string dir = work_dir("native"), id;
  codegen::AotOptions native;
  native.cpu = "native";
  codegen::emit_object(fns, dir + "/native.o", native);
  CHECK(std::filesystem::file_size(dir + "/native.o") > 0);
#if defined(__aarch64__)
  std::string other = "x86_64-linux-gnu";
#else
  std::string other = "aarch64-linux-gnu";
#endif
  std::string what = error_text<BackendError>([&] { codegen::emit_object(fns, dir + "/x.o", {other, "native"}); }, id);
  CHECK(id == "nnvm.codegen.llvm.cpu");
  CHECK(what.find("CPU 'native' means this machine, but the triple is '" + other + "'") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("llvm aot: unknown or unsupported triples and CPUs are back-end errors") {
  std::vector<ir::LoweredFunc> fns{elementwise_kernel()};
  std::string dir = work_dir("errors"), id;
  std::string what = error_text<BackendError>([&] { codegen::emit_object(fns, dir + "/x.o", {"nonsense-unknown-nowhere"}); }, id);
  CHECK(id == "nnvm.codegen.llvm.triple");
  CHECK(what.find("nonsense-unknown-nowhere") != std::string::npos);
  CHECK(what.find("aarch64") != std::string::npos);  // the registered targets
  what = error_text<BackendError>([&] { codegen::emit_object(fns, dir + "/x.o", {"riscv64-linux-gnu"}); }, id);
  CHECK(id == "nnvm.codegen.llvm.triple");
  CHECK(what.find("riscv64") != std::string::npos);
  what = error_text<BackendError>([&] { codegen::emit_object(fns, dir + "/x.o", {"aarch64-linux-gnu", "pentium-9000"}); }, id);
  CHECK(id == "nnvm.codegen.llvm.cpu");
  CHECK(what.find("pentium-9000") != std::string::npos);
  error_text<BackendError>([&] { codegen::emit_object(fns, dir + "/missing/x.o", {"aarch64-linux-gnu"}); }, id);
  CHECK(id == "nnvm.codegen.llvm.object_file");
  CHECK(!std::filesystem::exists(dir + "/x.o"));
  std::filesystem::remove_all(dir);
}

}  // namespace codegen_llvm_aot
