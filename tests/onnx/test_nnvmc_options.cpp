// nnvmc's model options (--define-symbol, --input-shape), its input files (-i x.npy) and check's
// tolerances (--quant-steps), run as a user would: the exit status and what the command prints.
#include "support/pch.hpp"

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>

#include "onnx_test_util.hpp"

#ifdef NNVM_TEST_NNVMC
namespace onnx_nnvmc_options {

using namespace onnx_test;
using T = onnx::TensorProto;

namespace {
struct Run {
  int status = -1;  // the exit status; -1 when the command did not exit normally (a signal)
  std::string output;  // stdout and stderr
};

Run nnvmc(const std::string& args) {
  std::string cmd = std::string("\"") + NNVM_TEST_NNVMC + "\" " + args + " 2>&1";
  Run r;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) r.output.append(buf, n);
  int w = ::pclose(p);
  if (WIFEXITED(w)) r.status = WEXITSTATUS(w);
  return r;
}

// Y = Relu(X) with X float[N, 3], N a symbolic extent.
std::string symbolic_model(const fs::path& dir) {
  Model m;
  m.input("X", T::FLOAT, {-1, 3}, {"N"});
  m.node("Relu", {"X"}, {"Y"});
  m.output("Y");
  return m.save(dir);
}
}  // namespace

TEST_CASE("nnvmc run --define-symbol N=2 binds the symbolic batch once") {
  std::string model = symbolic_model(scratch("define_symbol"));
  Run r = nnvmc("run \"" + model + "\" --target c --define-symbol N=2");
  CAPTURE(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("output 0 (Y): float32 [2x3]") != std::string::npos);
  // A name that is no symbolic extent is still refused, naming the ones there are.
  r = nnvmc("run \"" + model + "\" --target c --define-symbol M=2");
  CHECK(r.status == 1);
  CHECK(r.output.find("symbolic: N") != std::string::npos);
}

TEST_CASE("nnvmc check shapes symbolic inputs as test_data_set_0 does; another data set's shape is unsupported") {
  fs::path suite = scratch("check_shapes");
  fs::path dir = suite / "test_relu_n";
  fs::create_directories(dir);
  symbolic_model(dir);
  auto write = [&](const std::string& set, const std::string& file, int64_t rows, bool relu) {
    fs::create_directories(dir / set);
    onnx::TensorProto t;
    t.set_data_type(T::FLOAT);
    t.add_dims(rows);
    t.add_dims(3);
    for (int64_t i = 0; i < rows * 3; ++i) t.add_float_data(relu ? std::max(float(i) - 2.5f, 0.0f) : float(i) - 2.5f);
    std::ofstream f(dir / set / file, std::ios::binary);
    REQUIRE(t.SerializeToOstream(&f));
  };
  write("test_data_set_0", "input_0.pb", 2, false);
  write("test_data_set_0", "output_0.pb", 2, true);
  Run r = nnvmc("check \"" + suite.string() + "\" --targets c");
  CAPTURE(r.output);
  CHECK(r.output.find("pass test_relu_n [c]") != std::string::npos);
  write("test_data_set_1", "input_0.pb", 4, false);
  write("test_data_set_1", "output_0.pb", 4, true);
  r = nnvmc("check \"" + suite.string() + "\" --targets c");
  CHECK(r.output.find("unsupported test_relu_n [c]: input X has test_data_set_0's shape at compile time, and "
                      "test_data_set_1 gives it another") != std::string::npos);
}

TEST_CASE("nnvmc check --quant-steps: a DequantizeLinear output may be N of its steps off, and no more") {
  fs::path suite = scratch("check_quant_steps");
  fs::path dir = suite / "test_qdq";
  fs::create_directories(dir / "test_data_set_0");
  // Y = DequantizeLinear(QuantizeLinear(X, 0.5, 10), 0.5, 10): X = 0, 1, 2, 3.1 gives 0, 1, 2, 3.
  Model m;
  m.input("X", T::FLOAT, {4});
  m.initializer("s", T::FLOAT, {})->add_float_data(0.5f);
  m.initializer("z", T::UINT8, {})->add_int32_data(10);
  m.node("QuantizeLinear", {"X", "s", "z"}, {"Q"});
  m.node("DequantizeLinear", {"Q", "s", "z"}, {"Y"});
  m.output("Y");
  m.save(dir);
  auto write = [&](const std::string& file, std::vector<float> v) {
    onnx::TensorProto t;
    t.set_data_type(T::FLOAT);
    t.add_dims(4);
    for (float e : v) t.add_float_data(e);
    std::ofstream f(dir / "test_data_set_0" / file, std::ios::binary);
    REQUIRE(t.SerializeToOstream(&f));
  };
  write("input_0.pb", {0, 1, 2, 3.1f});
  write("output_0.pb", {0, 1, 2.5f, 3});  // one step off at element 2
  std::string check = "check \"" + suite.string() + "\" --targets c";
  Run r = nnvmc(check);
  CAPTURE(r.output);
  CHECK(r.output.find("fail test_qdq [c]") != std::string::npos);
  r = nnvmc(check + " --quant-steps 1");
  CHECK(r.output.find("pass test_qdq [c]") != std::string::npos);
  write("output_0.pb", {0, 1, 2, 4});  // two steps off at element 3
  r = nnvmc(check + " --quant-steps 1");
  CHECK(r.output.find("fail test_qdq [c]") != std::string::npos);
  r = nnvmc(check + " --quant-steps 2");
  CHECK(r.output.find("pass test_qdq [c]") != std::string::npos);
}

TEST_CASE("nnvmc --target parses every back end and answers cleanly for those it cannot run") {
  std::string model = symbolic_model(scratch("targets"));
  // CUDA and Metal kernels cannot run here: run names the command that writes their source,
  // and compile writes it with the launches.
  for (const char* spec : {"cuda -arch=sm_90", "metal"}) {
    Run r = nnvmc("run \"" + model + "\" --define-symbol N=2 --target \"" + spec + "\"");
    CAPTURE(r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find("[nnvm.cli.target]") != std::string::npos);
    CHECK(r.output.find(std::string("nnvmc compile MODEL --target ") + spec + " -o DIR writes their source") !=
          std::string::npos);
    std::string dir = scratch(std::string("gpu_") + (spec[0] == 'c' ? "cuda" : "metal"));
    r = nnvmc("compile \"" + model + "\" --define-symbol N=2 --target \"" + spec + "\" -o \"" + dir + "\"");
    CAPTURE(r.output);
    CHECK(r.status == 0);
    std::ifstream source(dir + (spec[0] == 'c' ? "/kernels.cu" : "/kernels.metal")), json(dir + "/model.json");
    std::string text((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
    std::string doc((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
    CHECK(text.find(spec[0] == 'c' ? "__global__ void" : "kernel void") != std::string::npos);
    CHECK(doc.find("\"format\":\"nnvm.deploy.gpu\"") != std::string::npos);
    CHECK(doc.find("\"launches\":[") != std::string::npos);
  }
#if __has_include(<CL/cl.h>)  // nnvmc is built with OpenCL when its headers are here
  // OpenCL runs (PoCL here) and agrees with the C back end.
  Run c = nnvmc("run \"" + model + "\" --define-symbol N=2 --target c");
  Run cl = nnvmc("run \"" + model + "\" --define-symbol N=2 --target opencl");
  CAPTURE(cl.output);
  CHECK(cl.status == 0);
  CHECK(cl.output.substr(0, cl.output.find("ran in")) == c.output.substr(0, c.output.find("ran in")));
#endif
  // Source-only targets cannot run in-process: run names the compile command that serves them.
  for (const char* spec : {"c-standalone -mcpu=cortex-m4", "wasm"}) {
    Run r = nnvmc("run \"" + model + "\" --define-symbol N=2 --target \"" + spec + "\"");
    CAPTURE(r.output);
    CHECK(r.status == 1);
    CHECK(r.output.find("[nnvm.cli.target]") != std::string::npos);
    CHECK(r.output.find(std::string("use nnvmc compile MODEL --target ") + spec) != std::string::npos);
  }
  // Misspellings name the word.
  Run r = nnvmc("run \"" + model + "\" --define-symbol N=2 --target \"cuda -arch=90\"");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("unknown option '-arch=90' (expected -arch=sm_NN") != std::string::npos);
  r = nnvmc("run \"" + model + "\" --define-symbol N=2 --target \"host -mcpu=x86-64-v2\"");
  CHECK(r.status == 0);
}

TEST_CASE("nnvmc --input-shape beyond 2^48 is refused before anything is compiled") {
  std::string model = symbolic_model(scratch("input_shape_big"));
  Run r = nnvmc("run \"" + model + "\" --target c --input-shape X:4294967296x4294967296");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("[nnvm.cli.input_shape]") != std::string::npos);
  // Within the element bound but not in bytes: the importer refuses it, knowing the dtype.
  r = nnvmc("run \"" + model + "\" --target c --input-shape X:100000000000x1000");
  CHECK(r.status == 1);
  CHECK(r.output.find("[nnvm.onnx.too_large]") != std::string::npos);
}

TEST_CASE("nnvmc -i: a .npy header's claim is checked against the file before allocating") {
  fs::path dir = scratch("npy_claims");
  std::string model = symbolic_model(dir);
  auto npy = [&](const std::string& name, const std::string& shape) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 255), bytes += char(header.size() >> 8);
    std::ofstream(dir / name, std::ios::binary) << bytes << header << std::string(16, '\0');
    return (dir / name).string();
  };
  // 16 bytes of data claiming 4 GB, then 2^50 elements: refused without allocating either.
  Run r = nnvmc("run \"" + model + "\" --target c --define-symbol N=2 -i \"" + npy("claims_4gb.npy", "(1073741824, 1)") + "\"");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("the data is shorter than shape (1073741824, 1) needs (4294967296 bytes, the file holds 16)") !=
        std::string::npos);
  r = nnvmc("run \"" + model + "\" --target c --define-symbol N=2 -i \"" + npy("huge.npy", "(1125899906842624, 3)") + "\"");
  CHECK(r.status == 1);
  CHECK(r.output.find("larger than 2^48 bytes") != std::string::npos);
  // A FIFO as an input file is refused, not opened (which would block).
  REQUIRE(::mkfifo((dir / "fifo.npy").c_str(), 0600) == 0);
  r = nnvmc("run \"" + model + "\" --target c --define-symbol N=2 -i \"" + (dir / "fifo.npy").string() + "\"");
  CHECK(r.status == 1);
  CHECK(r.output.find("not a regular file") != std::string::npos);
}
TEST_CASE("nnvmc run --index-check: a run-time Gather index out of range fails by default, clamps on request") {
  fs::path dir = scratch("index_check");
  Model m;
  m.input("idx", T::INT64, {2});
  std::vector<float> data{10, 20, 30};
  set_raw(m.initializer("data", T::FLOAT, {3}), data.data(), 12);
  attr_int(m.node("Gather", {"data", "idx"}, {"Y"}, "lookup"), "axis", 0);
  m.output("Y");
  std::string model = m.save(dir);
  auto indices = [&](const std::string& name, std::vector<int64_t> v) {
    std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
    header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += char(header.size() & 255), bytes += char(header.size() >> 8);
    std::ofstream(dir / name, std::ios::binary)
        << bytes << header << std::string(reinterpret_cast<const char*>(v.data()), v.size() * 8);
    return (dir / name).string();
  };
  std::string bad = indices("bad.npy", {0, 5}), good = indices("good.npy", {2, -3});
  Run r = nnvmc("run \"" + model + "\" --target c -i \"" + bad + "\"");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("[nnvm.run.index_range]") != std::string::npos);
  CHECK(r.output.find("node lookup") != std::string::npos);
  r = nnvmc("run \"" + model + "\" --target c --index-check=clamp -i \"" + bad + "\"");
  CHECK(r.status == 0);
  CHECK(r.output.find("first [10, 30]") != std::string::npos);
  r = nnvmc("run \"" + model + "\" --target c -i \"" + good + "\"");
  CHECK(r.status == 0);
  CHECK(r.output.find("first [30, 10]") != std::string::npos);
  CHECK(r.output.find("output 1") == std::string::npos);  // the check's flag is not shown
}

TEST_CASE("nnvmc compile --target c-standalone: a budget exceeded or an op without a kernel writes nothing") {
  fs::path dir = scratch("standalone_refusals");
  // Y = Relu(X @ W): 16 KiB of weights, two 256-byte activations.
  Model m;
  m.input("X", T::FLOAT, {1, 64});
  std::vector<float> w(64 * 64, 0.5f);
  set_raw(m.initializer("W", T::FLOAT, {64, 64}), w.data(), w.size() * 4);
  m.node("MatMul", {"X", "W"}, {"H"});
  m.node("Relu", {"H"}, {"Y"});
  m.output("Y");
  std::string model = m.save(dir);
  const fs::path out = dir / "out";
  const std::string compile = "compile \"" + model + "\" --target c-standalone -o \"" + out.string() + "\"";

  Run r = nnvmc(compile + " --max-flash 1K");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("[nnvm.standalone.budget]") != std::string::npos);
  CHECK(r.output.find("exceeds --max-flash 1024 B (weights 16384 B") != std::string::npos);
  CHECK(r.output.find("nothing was written") != std::string::npos);
  CHECK(!fs::exists(out));
  r = nnvmc(compile + " --max-ram 64");
  CHECK(r.status == 1);
  CHECK(r.output.find("exceeds --max-ram 64 B") != std::string::npos);
  CHECK(!fs::exists(out));
  r = nnvmc(compile + " --max-ram lots");
  CHECK(r.status == 1);
  CHECK(r.output.find("--max-ram") != std::string::npos);
  CHECK(!fs::exists(out));

  // Within budget: the three files, and the report names the arena against every intermediate.
  r = nnvmc(compile + " --max-ram 1M --max-flash 1M");
  CHECK(r.status == 0);
  CHECK(r.output.find("every intermediate tensor added up") != std::string::npos);
  for (const char* f : {"model.h", "model.c", "weights.c"}) CHECK(fs::exists(out / f));

  // Two ops nnvm has no kernel for: both are reported at once, before anything is written.
  Model bad;
  bad.input("X", T::FLOAT, {1, 4});
  bad.node("NoSuchOpA", {"X"}, {"H"});
  bad.node("NoSuchOpB", {"H"}, {"Y"});
  bad.output("Y");
  std::string bad_model = bad.save(dir, "unsupported.onnx");
  const fs::path bad_out = dir / "bad_out";
  r = nnvmc("compile \"" + bad_model + "\" --target c-standalone -o \"" + bad_out.string() + "\"");
  CAPTURE(r.output);
  CHECK(r.status == 1);
  CHECK(r.output.find("NoSuchOpA") != std::string::npos);
  CHECK(r.output.find("NoSuchOpB") != std::string::npos);
  CHECK(!fs::exists(bad_out));
}
#endif

}  // namespace onnx_nnvmc_options
