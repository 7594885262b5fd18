// The deploy path: graphs built in code are compiled, saved with save_artifact, loaded by the
// runtime library (C API and C++ wrapper) and compared with plain loops; a corrupt artifact or a
// wrong tensor fails with a message naming the file, field and expectation, never a crash.
// The first test also leaves an artifact and data files for the standalone C program
// (standalone.c), which links only nnvm_runtime.
#include "support/pch.hpp"
#include "support/check.hpp"

#include <filesystem>
#include <thread>

#include "nnvm/graph/artifact.hpp"
#include "nnvm/graph/runtime_dtype.hpp"
#include "nnvm/runtime/runtime.hpp"

using namespace nnvm;
using graph::GraphBuilder;
namespace fs = std::filesystem;

namespace {

// NNVM_RUNTIME_TEST_DIR (set by ctest, shared with the standalone program), else a temp dir.
fs::path test_root() {
  const char* d = std::getenv("NNVM_RUNTIME_TEST_DIR");
  fs::path root = d && *d ? fs::path(d) : fs::temp_directory_path() / ("nnvm_runtime_test_" + std::to_string(getpid()));
  fs::create_directories(root);
  return root;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_text(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// y = softmax(relu(x * w + b)) over rows, by plain loops.
std::vector<float> mlp_reference(const NDArray& x, const NDArray& w, const NDArray& b, int64_t M, int64_t K, int64_t N) {
  auto xs = x.values<float>(), ws = w.values<float>(), bs = b.values<float>();
  std::vector<float> y(size_t(M * N));
  for (int64_t i = 0; i < M; ++i) {
    float mx = -INFINITY;
    for (int64_t j = 0; j < N; ++j) {
      float acc = bs[size_t(j)];
      for (int64_t k = 0; k < K; ++k) acc += xs[size_t(i * K + k)] * ws[size_t(k * N + j)];
      y[size_t(i * N + j)] = std::max(acc, 0.0f);
      mx = std::max(mx, y[size_t(i * N + j)]);
    }
    float sum = 0;
    for (int64_t j = 0; j < N; ++j) sum += (y[size_t(i * N + j)] = std::exp(y[size_t(i * N + j)] - mx));
    for (int64_t j = 0; j < N; ++j) y[size_t(i * N + j)] /= sum;
  }
  return y;
}

struct Mlp {
  graph::Graph g;
  NDArray w, b;
};

Mlp make_mlp(int64_t M, int64_t K, int64_t N) {
  Mlp m{{}, nnvm_test::random_array(dtype::float32, {K, N}, 2), nnvm_test::random_array(dtype::float32, {N}, 3)};
  GraphBuilder gb("mlp");
  auto x = gb.input("x", dtype::float32, {M, K});
  auto h = gb.op("relu", {gb.op("dense", {x, gb.constant("w", m.w), gb.constant("b", m.b)}, {}, "fc")}, {}, "act");
  gb.output(gb.op("softmax", {h}, ops::Attrs().set_int("axis", -1), "prob"));
  m.g = gb.build();
  return m;
}

// The MLP artifact every test reuses, saved once.
const fs::path& mlp_artifact() {
  static const fs::path dir = [] {
    fs::path d = test_root() / "mlp";
    Mlp m = make_mlp(5, 13, 7);
    graph::save_artifact(graph::compile(m.g), d.string());
    return d;
  }();
  return dir;
}

struct Loaded {
  nnvm_model* model = nullptr;
  nnvm_status_t status;
  std::string error;
  explicit Loaded(const fs::path& dir) : status(nnvm_model_load(dir.c_str(), &model)) {
    if (status != NNVM_OK) error = nnvm_last_error();
  }
  ~Loaded() { nnvm_model_free(model); }
};

nnvm_tensor tensor_of(NDArray& a) {
  return {a.raw(), graph::runtime_dtype(a.dtype()), int32_t(a.shape().size()), a.shape().data()};
}

// A copy of the MLP artifact with `edit` applied to it.
fs::path corrupted(const std::string& name, const std::function<void(const fs::path&)>& edit) {
  fs::path d = test_root() / ("bad_" + name);
  fs::remove_all(d);
  fs::copy(mlp_artifact(), d);
  edit(d);
  return d;
}
void replace_in(const fs::path& file, const std::string& from, const std::string& to) {
  std::string s = read_text(file);
  size_t at = s.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  write_text(file, s.replace(at, from.size(), to));
}

}  // namespace

TEST_CASE("a dense → relu → softmax model saved as an artifact runs in the runtime like plain loops") {
  const int64_t M = 5, K = 13, N = 7;
  Mlp m = make_mlp(M, K, N);
  auto compiled = graph::compile(m.g);
  const fs::path& dir = mlp_artifact();
  for (const char* f : {"kernels.so", "kernels.c", "model.json", "weights.bin"}) CHECK(fs::exists(dir / f));
  // w (13x7 float32 = 364 bytes, padded to 384) then b (28 bytes).
  CHECK(fs::file_size(dir / "weights.bin") == 384 + 28);
  std::string json = read_text(dir / "model.json");
  CHECK(json.find("\"format\":\"nnvm.deploy\",\"version\":1") != std::string::npos);
  CHECK(json.find("\"offset\":384,\"bytes\":28") != std::string::npos);
  CHECK(read_text(dir / "kernels.c").find("k0_dense") != std::string::npos);

  Loaded l(dir);
  REQUIRE_MESSAGE(l.status == NNVM_OK, l.error);
  REQUIRE(nnvm_model_num_inputs(l.model) == 1);
  REQUIRE(nnvm_model_num_outputs(l.model) == 1);
  nnvm_tensor_info in, out;
  REQUIRE(nnvm_model_input_info(l.model, 0, &in) == NNVM_OK);
  REQUIRE(nnvm_model_output_info(l.model, 0, &out) == NNVM_OK);
  CHECK(std::string(in.name) == "x");
  CHECK(in.dtype == NNVM_DTYPE_FLOAT32);
  CHECK(std::vector<int64_t>(in.shape, in.shape + in.rank) == std::vector<int64_t>{M, K});
  CHECK(in.bytes == uint64_t(M * K * 4));
  CHECK(std::string(out.name) == "prob");
  CHECK(std::vector<int64_t>(out.shape, out.shape + out.rank) == std::vector<int64_t>{M, N});
  CHECK(nnvm_model_input_info(l.model, 1, &in) == NNVM_ERROR_ARGUMENT);
  CHECK(std::string(nnvm_last_error()).find("input index 1 is out of range: the model has 1") != std::string::npos);

  NDArray x = nnvm_test::random_array(dtype::float32, {M, K}, 1);
  std::vector<float> want = mlp_reference(x, m.w, m.b, M, K, N);
  NDArray y(dtype::float32, {M, N});
  nnvm_tensor tx = tensor_of(x), ty = tensor_of(y);
  for (int threads : {0, 1, 3}) {
    y = NDArray(dtype::float32, {M, N});
    ty = tensor_of(y);
    REQUIRE_MESSAGE(nnvm_model_run(l.model, &tx, 1, &ty, 1, threads) == NNVM_OK, nnvm_last_error());
    std::string diff = nnvm_test::compare<float>(y.values<float>(), want);
    CHECK_MESSAGE(diff.empty(), diff);
  }
  // The same C, compiled the same way, as the in-process executor: the same bits.
  CHECK(std::memcmp(compiled.run({x})[0].raw(), y.raw(), y.nbytes()) == 0);
  NDArray y_raw(dtype::float32, {M, N});
  const void* ins[] = {x.raw()};
  void* outs[] = {y_raw.raw()};
  REQUIRE(nnvm_model_run_raw(l.model, ins, outs, 0) == NNVM_OK);
  CHECK(std::memcmp(y_raw.raw(), y.raw(), y.nbytes()) == 0);

  // Data for the standalone program: the input, and the expected output by plain loops.
  fs::path data = test_root() / "mlp_data";
  fs::create_directories(data);
  write_text(data / "input_0.bin", std::string(static_cast<const char*>(x.raw()), x.nbytes()));
  write_text(data / "expected_0.bin", std::string(reinterpret_cast<const char*>(want.data()), want.size() * 4));
}

TEST_CASE("outputs go straight to the caller's buffers, unless a buffer is also an input") {
  // y = x * w with x, y and w 6x6: each output row reads its whole input row, so computing y
  // into x's own buffer would read values it already overwrote.
  const int64_t n = 6;
  NDArray w = nnvm_test::random_array(dtype::float32, {n, n}, 21);
  GraphBuilder gb("square");
  auto x = gb.input("x", dtype::float32, {n, n});
  gb.output(gb.op("dense", {x, gb.constant("w", w)}, {}, "fc"));
  fs::path dir = test_root() / "square";
  graph::save_artifact(graph::compile(gb.build()), dir.string());
  Loaded l(dir);
  REQUIRE_MESSAGE(l.status == NNVM_OK, l.error);
  auto product = [&](const NDArray& a) {
    std::span<const float> av = a.values<float>(), wv = w.values<float>();
    std::vector<float> y(size_t(n * n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t k = 0; k < n; ++k) y[size_t(i * n + j)] += av[size_t(i * n + k)] * wv[size_t(k * n + j)];
    return y;
  };
  // Several runs in a row (the second and third reuse the first's arena), then one in place.
  for (uint32_t seed : {1u, 2u, 3u}) {
    NDArray xa = nnvm_test::random_array(dtype::float32, {n, n}, seed), ya(dtype::float32, {n, n});
    const void* ins[] = {xa.raw()};
    void* outs[] = {ya.raw()};
    REQUIRE_MESSAGE(nnvm_model_run_raw(l.model, ins, outs, 0) == NNVM_OK, nnvm_last_error());
    std::string diff = nnvm_test::compare<float>(ya.values<float>(), product(xa));
    CHECK_MESSAGE(diff.empty(), diff);
  }
  NDArray xa = nnvm_test::random_array(dtype::float32, {n, n}, 4);
  std::vector<float> want = product(xa);
  const void* ins[] = {xa.raw()};
  void* outs[] = {xa.raw()};
  REQUIRE_MESSAGE(nnvm_model_run_raw(l.model, ins, outs, 1) == NNVM_OK, nnvm_last_error());
  std::string diff = nnvm_test::compare<float>(xa.values<float>(), want);
  CHECK_MESSAGE(diff.empty(), diff);
}

TEST_CASE("several outputs, a constant output and an input passed through come back in order") {
  const int64_t R = 3, C = 5;
  NDArray c = nnvm_test::random_array(dtype::float32, {C}, 21);
  GraphBuilder gb("multi");
  auto x = gb.input("x", dtype::float32, {R, C});
  auto y = gb.input("y", dtype::float32, {R, C});
  auto s = gb.op("add", {x, y}, {}, "sum");
  gb.output(gb.op("relu", {s}, {}, "r"));
  gb.output(s);
  gb.output(gb.constant("c", c));
  gb.output(x);
  gb.output(gb.op("mul", {s, gb.constant("k", c)}, {}, "scaled"));
  fs::path dir = test_root() / "multi";
  graph::save_artifact(graph::compile(gb.build()), dir.string());

  auto model = runtime::Model::load(dir.string());
  auto infos = model.outputs();
  REQUIRE(infos.size() == 5);
  CHECK(infos[0].name == "r");
  CHECK(infos[2].name == "c");
  CHECK(infos[2].shape == std::vector<int64_t>{C});
  CHECK(infos[3].name == "x");
  CHECK(model.inputs().size() == 2);

  NDArray a = nnvm_test::random_array(dtype::float32, {R, C}, 22), b = nnvm_test::random_array(dtype::float32, {R, C}, 23);
  auto out = model.run({runtime::TensorRef::of(a.data<float>(), {R, C}), runtime::TensorRef::of(b.data<float>(), {R, C})});
  REQUIRE(out.size() == 5);
  auto as = a.values<float>(), bs = b.values<float>(), cs = c.values<float>();
  std::vector<float> relu, sum, scaled;
  for (int64_t i = 0; i < R * C; ++i) {
    float v = as[size_t(i)] + bs[size_t(i)];
    sum.push_back(v);
    relu.push_back(std::max(v, 0.0f));
    scaled.push_back(v * cs[size_t(i % C)]);
  }
  auto floats = [](const std::vector<std::byte>& v) {
    return std::span<const float>(reinterpret_cast<const float*>(v.data()), v.size() / 4);
  };
  CHECK(nnvm_test::compare<float>(floats(out[0]), relu).empty());
  CHECK(nnvm_test::compare<float>(floats(out[1]), sum).empty());
  CHECK(nnvm_test::compare<float>(floats(out[2]), cs).empty());
  CHECK(nnvm_test::compare<float>(floats(out[3]), as).empty());
  CHECK(nnvm_test::compare<float>(floats(out[4]), scaled).empty());
}

TEST_CASE("one loaded model runs from several threads at once") {
  const int64_t M = 16, K = 64, N = 32;
  Mlp m = make_mlp(M, K, N);
  fs::path dir = test_root() / "mlp_threads";
  graph::save_artifact(graph::compile(m.g), dir.string());
  const auto model = runtime::Model::load(dir.string());
  std::vector<NDArray> xs;
  for (uint32_t t = 0; t < 4; ++t) xs.push_back(nnvm_test::random_array(dtype::float32, {M, K}, 10 + t));
  std::vector<std::string> diffs(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<float> want = mlp_reference(xs[t], m.w, m.b, M, K, N);
      for (int rep = 0; rep < 10; ++rep) {
        auto out = model.run({runtime::TensorRef::of(xs[t].data<float>(), {M, K})}, int(t % 3));
        std::string d = nnvm_test::compare<float>(
            std::span<const float>(reinterpret_cast<const float*>(out[0].data()), size_t(M * N)), want);
        if (!d.empty()) diffs[t] = d;
      }
    });
  for (auto& th : threads) th.join();
  for (auto& d : diffs) CHECK_MESSAGE(d.empty(), d);
}

TEST_CASE("wrong tensors at run time are reported by name and expected type") {
  Loaded l(mlp_artifact());
  REQUIRE_MESSAGE(l.status == NNVM_OK, l.error);
  NDArray x(dtype::float32, {5, 13}), bad_shape(dtype::float32, {5, 12}), bad_dtype(dtype::float64, {5, 13});
  NDArray y(dtype::float32, {5, 7});
  nnvm_tensor ty = tensor_of(y);
  auto run_with = [&](nnvm_tensor in, int count = 1) {
    nnvm_status_t st = nnvm_model_run(l.model, &in, count, &ty, 1, 0);
    return std::pair{st, std::string(nnvm_last_error())};
  };
  auto [s1, e1] = run_with(tensor_of(bad_shape));
  CHECK(s1 == NNVM_ERROR_INPUT);
  CHECK_MESSAGE(e1.find("input 'x' (inputs[0]) is float32 [5x12] but the model expects float32 [5x13]") !=
                    std::string::npos, e1);
  auto [s2, e2] = run_with(tensor_of(bad_dtype));
  CHECK(s2 == NNVM_ERROR_INPUT);
  CHECK_MESSAGE(e2.find("is float64 [5x13] but the model expects float32 [5x13]") != std::string::npos, e2);
  auto [s3, e3] = run_with(tensor_of(x), 2);
  CHECK(s3 == NNVM_ERROR_INPUT);
  CHECK_MESSAGE(e3.find("model 'mlp' takes 1 input tensors, got 2") != std::string::npos, e3);
  nnvm_tensor null_data = tensor_of(x);
  null_data.data = nullptr;
  auto [s4, e4] = run_with(null_data);
  CHECK(s4 == NNVM_ERROR_INPUT);
  CHECK_MESSAGE(e4.find("input 'x' has NULL data") != std::string::npos, e4);
  nnvm_tensor bad_rank = tensor_of(x);
  bad_rank.rank = -3;
  auto [s5, e5] = run_with(bad_rank);
  CHECK(s5 == NNVM_ERROR_INPUT);
  CHECK_MESSAGE(e5.find("of an invalid rank or shape") != std::string::npos, e5);

  CHECK(nnvm_model_load(nullptr, nullptr) == NNVM_ERROR_ARGUMENT);
  CHECK(nnvm_model_run(nullptr, nullptr, 0, nullptr, 0, 0) == NNVM_ERROR_ARGUMENT);
  try {
    auto model = runtime::Model::load(mlp_artifact().string());
    model.run({runtime::TensorRef::of(bad_shape.data<float>(), {5, 12})});
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("input 'x' (inputs[0]) is float32 [5x12]") != std::string::npos);
  }
}

TEST_CASE("corrupt artifacts fail to load with a message naming the file, field and expectation") {
  struct Case {
    std::string name;
    std::function<void(const fs::path&)> edit;
    nnvm_status_t status;
    std::vector<std::string> message;  // fragments the message must contain
  };
  auto json_edit = [](std::string from, std::string to) {
    return [=](const fs::path& d) { replace_in(d / "model.json", from, to); };
  };
  std::vector<Case> cases = {
      {"truncated_json",
       [](const fs::path& d) {
         std::string s = read_text(d / "model.json");
         write_text(d / "model.json", s.substr(0, s.size() / 2));
       },
       NNVM_ERROR_FORMAT, {"model.json: line ", "expected ", "got the end of the file"}},
      {"garbage_json", [](const fs::path& d) { write_text(d / "model.json", "\x7f" "ELF garbage"); },
       NNVM_ERROR_FORMAT, {"model.json: line 1, column 1: expected a value", "got '"}},
      {"deep_json", [](const fs::path& d) { write_text(d / "model.json", std::string(100000, '[')); },
       NNVM_ERROR_FORMAT, {"expected at most 32 levels of nesting"}},
      {"missing_json", [](const fs::path& d) { fs::remove(d / "model.json"); },
       NNVM_ERROR_IO, {"cannot open ", "model.json: No such file"}},
      {"wrong_format", json_edit("\"nnvm.deploy\"", "\"onnx\""), NNVM_ERROR_FORMAT,
       {"model.json: format: expected \"nnvm.deploy\", got \"onnx\""}},
      {"wrong_version", json_edit("\"version\":1", "\"version\":7"), NNVM_ERROR_FORMAT,
       {"model.json: version: this runtime reads version 1, got 7"}},
      {"missing_field", json_edit("\"steps\":", "\"stops\":"), NNVM_ERROR_FORMAT,
       {"model.json: steps: missing (a required field)"}},
      {"fraction", json_edit("\"weights_bytes\":412", "\"weights_bytes\":41.2"), NNVM_ERROR_FORMAT,
       {"expected an integer (model.json has no fractions)"}},
      {"slot_out_of_range", json_edit("\"inputs\":[0,1,2]", "\"inputs\":[0,1,99]"), NNVM_ERROR_FORMAT,
       {"model.json: steps[0].inputs[2]: expected an integer from 0 to"}},
      {"kernel_out_of_range", json_edit("\"kernel\":0", "\"kernel\":9"), NNVM_ERROR_FORMAT,
       {"steps[0].kernel: expected an integer from 0 to 1, got 9"}},
      {"wrong_dtype_name", json_edit("\"dtype\":\"float32\"", "\"dtype\":\"float33\""), NNVM_ERROR_FORMAT,
       {"kernels[0].params[0].dtype: expected a data type such as \"float32\", got \"float33\""}},
      {"size_vars", json_edit("\"num_size_vars\":0", "\"num_size_vars\":2"), NNVM_ERROR_FORMAT,
       {"kernels[0].num_size_vars: this runtime runs kernels with static shapes only, got 2"}},
      {"offset_past_end", json_edit("\"offset\":384", "\"offset\":448"), NNVM_ERROR_FORMAT,
       {"lie past the end of the weights (weights_bytes 412)"}},
      {"missing_weights", [](const fs::path& d) { fs::remove(d / "weights.bin"); },
       NNVM_ERROR_IO, {"cannot open ", "weights.bin: No such file"}},
      {"short_weights", [](const fs::path& d) { fs::resize_file(d / "weights.bin", 100); },
       NNVM_ERROR_FORMAT, {"weights.bin has 100 bytes, but ", "model.json (weights_bytes) expects 412: the file is truncated"}},
      {"missing_kernels", [](const fs::path& d) { fs::remove(d / "kernels.so"); },
       NNVM_ERROR_IO, {"cannot load ", "kernels.so"}},
      {"garbage_kernels", [](const fs::path& d) { write_text(d / "kernels.so", "not a shared library"); },
       NNVM_ERROR_IO, {"cannot load ", "kernels.so"}},
      {"missing_symbol", json_edit("\"symbol\":\"k0_dense\"", "\"symbol\":\"k0_gone\""), NNVM_ERROR_KERNEL,
       {"kernels.so has no kernel 'k0_gone'", "model.json names in kernels[0].symbol"}},
      {"step_type_mismatch", json_edit("\"inputs\":[0,1,2]", "\"inputs\":[0,2,1]"), NNVM_ERROR_FORMAT,
       {"steps[0].inputs[1]: slot 2 ('b') is float32 [7] but kernel k0_dense's parameter 1 is float32 [13x7]"}},
      {"read_before_write", json_edit("\"outputs\":[4]", "\"outputs\":[3]"), NNVM_ERROR_FORMAT,
       {"steps[1].inputs[0]: slot 4 ('act') is read before any step writes it"}},
      {"written_twice", json_edit("\"outputs\":[5]", "\"outputs\":[4]"), NNVM_ERROR_FORMAT,
       {"steps[1].outputs[0]: slot 4 ('act') is written by an earlier step; a step writes only fresh activations"}},
      {"arena_past_end", json_edit("\"kind\":\"activation\",\"offset\":0", "\"kind\":\"activation\",\"offset\":100"),
       NNVM_ERROR_FORMAT, {"slots[4]: bytes 100 to 240 lie past the end of the arena (arena_bytes 192)"}},
      {"arena_overlap", json_edit("\"kind\":\"activation\"}],", "\"kind\":\"activation\",\"offset\":0}],"),
       NNVM_ERROR_FORMAT, {"steps[1].outputs[0]: slot 5 ('prob') overlaps slot 4 ('act') in the arena"}},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    Loaded l(corrupted(c.name, c.edit));
    CHECK(l.status == c.status);
    CHECK(l.model == nullptr);
    for (auto& fragment : c.message) CHECK_MESSAGE(l.error.find(fragment) != std::string::npos, l.error);
  }
}

// The attack: every check of model.json against itself passes when a tensor shrinks
// everywhere at once, and then the kernel, compiled for the old shape, writes past the arena.
// Only the types kernels.so states for its kernels (S_signature) catch it.
TEST_CASE("a model.json edited consistently away from the kernels' types is refused at load") {
  auto replace_all = [](const fs::path& file, const std::string& from, const std::string& to) {
    std::string s = read_text(file);
    size_t n = 0;
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()), ++n) s.replace(at, from.size(), to);
    REQUIRE_MESSAGE(n > 0, from);
    write_text(file, s);
  };
  struct Case {
    std::string name;
    std::function<void(const fs::path&)> edit;
    nnvm_status_t status;
    std::string message;
  };
  std::vector<Case> cases = {
      {"batch_shrunk",
       [&](const fs::path& d) {
         replace_all(d / "model.json", "[5,13]", "[2,13]");
         replace_all(d / "model.json", "[5,7]", "[2,7]");
       },
       NNVM_ERROR_FORMAT,
       "model.json: steps[0] (node 'fc') calls kernel k0_dense, whose parameter 0 was compiled for float32 [5x13], "
       "but kernels[0].params[0] gives float32 [2x13]"},
      {"output_shrunk", [&](const fs::path& d) { replace_all(d / "model.json", "[5,7]", "[1,7]"); }, NNVM_ERROR_FORMAT,
       "steps[0] (node 'fc') calls kernel k0_dense, whose parameter 3 was compiled for float32 [5x7], but "
       "kernels[0].params[3] gives float32 [1x7]"},
      {"retyped",
       [&](const fs::path& d) {
         replace_all(d / "model.json", "{\"dtype\":\"float32\",\"shape\":[7]}", "{\"dtype\":\"int32\",\"shape\":[7]}");
         replace_all(d / "model.json", "\"name\":\"b\",\"dtype\":\"float32\"", "\"name\":\"b\",\"dtype\":\"int32\"");
       },
       NNVM_ERROR_FORMAT, "parameter 2 was compiled for float32 [7], but kernels[0].params[2] gives int32 [7]"},
      {"no_signature",
       [&](const fs::path& d) { replace_all(d / "kernels.so", "k1_softmax_signature", "k1_softmax_signaturX"); },
       NNVM_ERROR_KERNEL, "kernels.so has no k1_softmax_signature (the parameter types of kernel k1_softmax)"},
  };
  for (auto& c : cases) {
    CAPTURE(c.name);
    Loaded l(corrupted(c.name, c.edit));
    CHECK(l.status == c.status);
    CHECK(l.model == nullptr);
    CHECK_MESSAGE(l.error.find(c.message) != std::string::npos, l.error);
  }
}

TEST_CASE("every truncation of model.json fails to load cleanly") {
  fs::path d = corrupted("prefixes", [](const fs::path&) {});
  std::string json = read_text(mlp_artifact() / "model.json");
  int format_errors = 0;
  // The last byte is a newline: the document is complete without it.
  for (size_t n = 0; n + 1 < json.size(); ++n) {
    write_text(d / "model.json", json.substr(0, n));
    Loaded l(d);
    format_errors += l.status == NNVM_ERROR_FORMAT && l.model == nullptr &&
                     l.error.find("model.json: line ") != std::string::npos;
  }
  CHECK(format_errors == int(json.size() - 1));
}
