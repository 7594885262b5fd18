// The MXNet importer's file handling: hand-written symbols for single rules (Reshape's codes,
// checked against the examples of MXNet's documentation), and hostile or broken files, which
// must fail with an error that names the file, node and attribute, never crash or over-read.
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "nnvm/mxnet/importer.hpp"
#include "support/framework_reference.hpp"

namespace mxnet_files {

using namespace nnvm;
namespace mi = mxnet_import;
namespace fs = std::filesystem;

fs::path scratch() { return nnvm_test::scratch_dir("mxnet"); }

std::string write(const std::string& name, const std::string& bytes) {
  return nnvm_test::scratch_file("mxnet", name, bytes);
}

struct Failure {
  std::string id, text;  // text: the message with its context
};

template <class F>
Failure failure(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.id(), e.what()};
  }
  return {"(no error)", ""};
}

// A symbol with one data input "data" of `shape` (declared as __shape__) feeding one node.
std::string one_op(const std::string& op, const std::string& attrs, const std::string& shape) {
  return R"J({"nodes": [{"op": "null", "name": "data", "attrs": {"__shape__": ")J" + shape +
         R"J("}, "inputs": []}, {"op": ")J" + op + R"J(", "name": "n", "attrs": )J" + attrs +
         R"J(, "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[1, 0, 0]]})J";
}

std::vector<int64_t> output_shape(const graph::Graph& g) {
  std::vector<int64_t> out;
  for (auto& e : g.type(g.outputs[0]).shape) out.push_back(*ir::as_const_int(e));
  return out;
}

std::vector<int64_t> reshaped(const std::string& in, const std::string& codes, bool reverse = false) {
  std::string attrs = R"J({"shape": ")J" + codes + R"J(")J" + (reverse ? R"J(, "reverse": "True"})J" : "}");
  return output_shape(mi::import_model(write("reshape.json", one_op("Reshape", attrs, in)), ""));
}

TEST_CASE("mxnet: Reshape's special codes follow MXNet's documented examples") {
  using S = std::vector<int64_t>;
  CHECK(reshaped("(2, 3, 4)", "(4, 0, 2)") == S{4, 3, 2});
  CHECK(reshaped("(2, 3, 4)", "(2, 0, 0)") == S{2, 3, 4});
  CHECK(reshaped("(2, 3, 4)", "(6, 1, -1)") == S{6, 1, 4});
  CHECK(reshaped("(2, 3, 4)", "(3, -1, 8)") == S{3, 1, 8});
  CHECK(reshaped("(2, 3, 4)", "(-1,)") == S{24});
  CHECK(reshaped("(2, 3, 4)", "(-2,)") == S{2, 3, 4});
  CHECK(reshaped("(2, 3, 4)", "(2, -2)") == S{2, 3, 4});
  CHECK(reshaped("(2, 3, 4)", "(-2, 1, 1)") == S{2, 3, 4, 1, 1});
  CHECK(reshaped("(2, 3, 4)", "(-3, 4)") == S{6, 4});
  CHECK(reshaped("(2, 3, 4, 5)", "(-3, -3)") == S{6, 20});
  CHECK(reshaped("(2, 3, 4)", "(0, -3)") == S{2, 12});
  CHECK(reshaped("(2, 3, 4)", "(-3, -2)") == S{6, 4});
  CHECK(reshaped("(2, 3, 4)", "(-4, 1, 2, -2)") == S{1, 2, 3, 4});
  CHECK(reshaped("(2, 3, 4)", "(2, -4, -1, 3, -2)") == S{2, 1, 3, 4});
  CHECK(reshaped("(10, 5, 4)", "(-1, 0)") == S{40, 5});
  CHECK(reshaped("(10, 5, 4)", "(-1, 0)", true) == S{50, 4});
  Failure f = failure([] { reshaped("(2, 3, 4)", "(5, -1)"); });
  CHECK(f.id == "nnvm.mxnet.attribute");
  CHECK(f.text.find("node n (Reshape)") != std::string::npos);
  CHECK(f.text.find("attribute 'shape'") != std::string::npos);
  CHECK(failure([] { reshaped("(2, 3)", "(-3, -3)"); }).id == "nnvm.mxnet.attribute");
}

TEST_CASE("mxnet: a data input without a shape is refused, naming the input and the option") {
  std::string sym = R"J({"nodes": [{"op": "null", "name": "data", "inputs": []},
    {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "arg_nodes": [0], "heads": [[1, 0, 0]]})J";
  std::string path = write("noshape.json", sym);
  Failure f = failure([&] { mi::import_model(path, ""); });
  CHECK(f.id == "nnvm.mxnet.shape");
  CHECK(f.text.find("'data'") != std::string::npos);
  CHECK(f.text.find("input_shapes") != std::string::npos);
  graph::Graph g = mi::import_model(path, "", {.input_shapes = {{"data", {2, 3}}}});
  CHECK(output_shape(g) == std::vector<int64_t>{2, 3});
  CHECK(failure([&] { mi::import_model(path, "", {.input_shapes = {{"data", {2}}, {"date", {1}}}}); }).id ==
        "nnvm.mxnet.shape");
}

TEST_CASE("mxnet: broken symbol files fail with named errors") {
  auto id_of = [](const std::string& text) {
    std::string path = write("broken.json", text);
    return failure([&] { mi::import_model(path, ""); });
  };
  CHECK(id_of("{\"nodes\": [").id == "nnvm.mxnet.file");
  CHECK(id_of("[1, 2]").id == "nnvm.mxnet.file");
  CHECK(id_of(R"J({"nodes": [], "heads": []})J").id == "nnvm.mxnet.graph");
  // An input naming a later node (or itself): MXNet writes nodes in order, so this is a cycle.
  Failure later = id_of(R"J({"nodes": [{"op": "relu", "name": "a", "inputs": [[1, 0, 0]]},
      {"op": "null", "name": "x", "inputs": []}], "heads": [[0, 0, 0]]})J");
  CHECK(later.id == "nnvm.mxnet.graph");
  CHECK(later.text.find("node a (relu)") != std::string::npos);
  CHECK(id_of(R"J({"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [[5, 0, 0]]})J").id ==
        "nnvm.mxnet.graph");
  CHECK(id_of(R"J({"nodes": [{"op": "null", "name": "x", "inputs": []}], "heads": [["0", 0]]})J").id ==
        "nnvm.mxnet.file");
  // Every unsupported op is listed at once.
  Failure ops = id_of(R"J({"nodes": [{"op": "null", "name": "x", "attrs": {"__shape__": "(2,)"}, "inputs": []},
      {"op": "_contrib_Foo", "name": "f", "inputs": [[0, 0]]}, {"op": "Bar", "name": "b", "inputs": [[1, 0]]}],
      "heads": [[2, 0]]})J");
  CHECK(ops.id == "nnvm.mxnet.unsupported");
  CHECK(ops.text.find("_contrib_Foo") != std::string::npos);
  CHECK(ops.text.find("Bar") != std::string::npos);
  // An output index the op does not have.
  std::string second_output = one_op("relu", "{}", "(2,)");
  second_output.replace(second_output.find("[[1, 0, 0]]"), 11, "[[1, 3, 0]]");
  CHECK(id_of(second_output).id == "nnvm.mxnet.graph");
}

TEST_CASE("mxnet: bad attribute values name the node and the attribute") {
  auto fail = [](const std::string& op, const std::string& attrs, const std::string& shape = "(1, 2, 5, 5)") {
    return failure([&] { mi::import_model(write("attr.json", one_op(op, attrs, shape)), ""); });
  };
  Failure f = fail("Pooling", R"J({"kernel": "(3, x)"})J");
  CHECK(f.id == "nnvm.mxnet.attribute");
  CHECK(f.text.find("node n (Pooling)") != std::string::npos);
  CHECK(f.text.find("attribute 'kernel'") != std::string::npos);
  CHECK(fail("Pooling", R"J({"kernel": "(3, 3)", "stride": "(1, 1, 1)"})J").id == "nnvm.mxnet.attribute");
  CHECK(fail("Pooling", R"J({"kernel": "(3, 3)", "pooling_convention": "same"})J").id == "nnvm.mxnet.unsupported");
  CHECK(fail("Pooling", R"J({"kernel": "(2, 2)", "layout": "NHWC"})J").id == "nnvm.mxnet.unsupported");
  CHECK(fail("Activation", R"J({"act_type": "swish"})J").id == "nnvm.mxnet.unsupported");
  CHECK(fail("softmax", R"J({"axis": "4"})J").id.rfind("nnvm.", 0) == 0);
  CHECK(fail("Dropout", R"J({"mode": "always"})J").id == "nnvm.mxnet.unsupported");
  CHECK(fail("slice_axis", R"J({"axis": "7", "begin": "0", "end": "None"})J").id == "nnvm.mxnet.attribute");
  CHECK(fail("clip", R"J({"a_min": "0"})J").id == "nnvm.mxnet.attribute");
  CHECK(fail("_plus_scalar", R"J({"scalar": "one"})J").id == "nnvm.mxnet.attribute");
  CHECK(fail("LeakyReLU", R"J({"act_type": "leaky", "slope": "True"})J").id == "nnvm.mxnet.attribute");
  // A convolution without its weight input.
  CHECK(fail("Convolution", R"J({"kernel": "(3, 3)", "num_filter": "4"})J").id == "nnvm.mxnet.graph");
}

TEST_CASE("mxnet: attribute spellings of every MXNet version read alike") {
  // "(3,3)" (0.8), "(3, 3)" (1.x), "[3, 3]", booleans as True/1, Python 2 longs "3L".
  for (const char* kernel : {"(2,2)", "(2, 2)", "[2, 2]", "(2L, 2L)"}) {
    CAPTURE(kernel);
    std::string attrs = std::string(R"J({"kernel": ")J") + kernel + R"J(", "stride": "(2, 2)", "pool_type": "max"})J";
    graph::Graph g = mi::import_model(write("pool.json", one_op("Pooling", attrs, "(1, 2, 6, 6)")), "");
    CHECK(output_shape(g) == std::vector<int64_t>{1, 2, 3, 3});
  }
  for (const char* t : {"True", "1", "true"}) {
    std::string attrs = std::string(R"J({"kernel": "(3, 3)", "global_pool": ")J") + t + R"J(", "pool_type": "avg"})J";
    graph::Graph g = mi::import_model(write("gpool.json", one_op("Pooling", attrs, "(1, 2, 6, 6)")), "");
    CHECK(output_shape(g) == std::vector<int64_t>{1, 2, 1, 1});
  }
}

// A minimal NDArray list file: one float32 array "arg:w" of shape (2, 3) holding 0..5.
std::string params_file() {
  std::string b;
  auto put = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(uint64_t(0x112)), put(uint64_t(0)), put(uint64_t(1));
  put(uint32_t(0xF993FAC9u)), put(int32_t(0));          // v2, dense
  put(int32_t(2)), put(int64_t(2)), put(int64_t(3));     // shape
  put(int32_t(1)), put(int32_t(0)), put(int32_t(0));     // cpu(0), float32
  for (int i = 0; i < 6; ++i) put(float(i));
  put(uint64_t(1)), put(uint64_t(5));
  b += "arg:w";
  return b;
}

TEST_CASE("mxnet: NDArray files are read exactly, and every truncation or corruption is refused") {
  const std::string good = params_file();
  auto arrays = mi::read_ndarray_file(write("good.params", good));
  REQUIRE(arrays.size() == 1);
  CHECK(arrays[0].name == "arg:w");
  CHECK(arrays[0].data.shape() == std::vector<int64_t>{2, 3});
  auto v = arrays[0].data.values<float>();
  CHECK(std::vector<float>(v.begin(), v.end()) == std::vector<float>{0, 1, 2, 3, 4, 5});
  // Cut at every length: a clear error, never an over-read.
  for (size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    Failure f = failure([&] { mi::read_ndarray_file(write("cut.params", good.substr(0, n))); });
    CHECK(f.id == "nnvm.mxnet.params");
  }
  CHECK(failure([&] { mi::read_ndarray_file(write("long.params", good + "x")); }).id == "nnvm.mxnet.params");
  auto patched = [&](size_t offset, auto value) {
    std::string b = good;
    std::memcpy(b.data() + offset, &value, sizeof(value));
    return failure([&] { mi::read_ndarray_file(write("bad.params", b)); });
  };
  CHECK(patched(0, uint64_t(0x113)).id == "nnvm.mxnet.params");          // list magic
  CHECK(patched(16, uint64_t(1) << 60).id == "nnvm.mxnet.params");        // array count
  CHECK(patched(24, uint32_t(0x12345678)).id == "nnvm.mxnet.params");     // array magic
  Failure sparse = patched(28, int32_t(1));                               // row_sparse
  CHECK(sparse.id == "nnvm.mxnet.params");
  CHECK(sparse.text.find("sparse") != std::string::npos);
  CHECK(patched(32, int32_t(1 << 30)).id == "nnvm.mxnet.params");         // rank
  CHECK(patched(36, int64_t(1) << 40).id == "nnvm.mxnet.params");         // extent: 2^40 x 3 floats
  CHECK(patched(36, int64_t(-2)).id == "nnvm.mxnet.params");              // negative extent
  Failure type = patched(60, int32_t(99));                                // element type
  CHECK(type.id == "nnvm.mxnet.params");
  CHECK(type.text.find("99") != std::string::npos);
  CHECK(patched(88, uint64_t(7)).id == "nnvm.mxnet.params");              // key count != array count
  CHECK(patched(96, uint64_t(1) << 50).id == "nnvm.mxnet.params");        // key length
  // Not a regular file, or missing.
  CHECK(failure([&] { mi::read_ndarray_file(scratch().string()); }).id == "nnvm.mxnet.file");
  CHECK(failure([&] { mi::read_ndarray_file((scratch() / "missing.params").string()); }).id == "nnvm.mxnet.file");
}

TEST_CASE("mxnet: NDArray files of every saved version and element type") {
  // Bytes laid out as MXNet writes them (scripts/models/mxnet/read_params.py documents each field).
  std::string b;
  auto put = [&](auto v) { b.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
  put(uint64_t(0x112)), put(uint64_t(0)), put(uint64_t(6));
  // v2 float16 [2]: 1.5 and -2 as IEEE half bits.
  put(uint32_t(0xF993FAC9u)), put(int32_t(0)), put(int32_t(1)), put(int64_t(2));
  put(int32_t(1)), put(int32_t(0)), put(int32_t(2)), put(uint16_t(0x3E00)), put(uint16_t(0xC000));
  // v3 (NumPy shapes) int64 scalar: rank 0 holds one element.
  put(uint32_t(0xF993FACAu)), put(int32_t(0)), put(int32_t(0));
  put(int32_t(1)), put(int32_t(0)), put(int32_t(6)), put(int64_t(-7));
  // v1 (no storage type) int8 [3].
  put(uint32_t(0xF993FAC8u)), put(int32_t(1)), put(int64_t(3));
  put(int32_t(1)), put(int32_t(0)), put(int32_t(5)), put(int8_t(-1)), put(int8_t(2)), put(int8_t(-128));
  // Before v1: the header is the rank and extents are uint32; uint8 [2, 1].
  put(uint32_t(2)), put(uint32_t(2)), put(uint32_t(1));
  put(int32_t(1)), put(int32_t(0)), put(int32_t(3)), put(uint8_t(200)), put(uint8_t(7));
  // v2 int32 [1] and bool [2].
  put(uint32_t(0xF993FAC9u)), put(int32_t(0)), put(int32_t(1)), put(int64_t(1));
  put(int32_t(1)), put(int32_t(0)), put(int32_t(4)), put(int32_t(123456));
  put(uint32_t(0xF993FAC9u)), put(int32_t(0)), put(int32_t(1)), put(int64_t(2));
  put(int32_t(1)), put(int32_t(0)), put(int32_t(7)), put(uint8_t(1)), put(uint8_t(0));
  put(uint64_t(0));  // a saved list: no names
  auto a = mi::read_ndarray_file(write("types.params", b));
  REQUIRE(a.size() == 6);
  CHECK(a[0].name.empty());
  CHECK(a[0].data.dtype() == dtype::float16);
  CHECK(float(a[0].data.values<float16>()[0]) == 1.5f);
  CHECK(float(a[0].data.values<float16>()[1]) == -2.0f);
  CHECK(a[1].data.shape().empty());
  CHECK(a[1].data.values<int64_t>()[0] == -7);
  CHECK(std::vector<int8_t>(a[2].data.values<int8_t>().begin(), a[2].data.values<int8_t>().end()) ==
        std::vector<int8_t>{-1, 2, -128});
  CHECK(a[3].data.shape() == std::vector<int64_t>{2, 1});
  CHECK(a[3].data.values<uint8_t>()[0] == 200);
  CHECK(a[4].data.values<int32_t>()[0] == 123456);
  CHECK(a[5].data.dtype() == dtype::boolean);
  // A parameter file must name its arrays.
  std::string sym = R"J({"nodes": [{"op": "null", "name": "data", "attrs": {"__shape__": "(2,)"}, "inputs": []},
    {"op": "relu", "name": "r", "inputs": [[0, 0]]}], "heads": [[1, 0]]})J";
  CHECK(failure([&] { mi::import_model(write("list.json", sym), write("list.params", b)); }).id == "nnvm.mxnet.params");
}

TEST_CASE("mxnet: parameters join the graph as constants by name, with or without arg:/aux: prefixes") {
  std::string sym = R"J({"nodes": [{"op": "null", "name": "data", "attrs": {"__shape__": "(4, 3)"}, "inputs": []},
    {"op": "null", "name": "w", "inputs": []},
    {"op": "FullyConnected", "name": "fc", "attrs": {"num_hidden": "2", "no_bias": "True"}, "inputs": [[0, 0], [1, 0]]}],
    "arg_nodes": [0, 1], "heads": [[2, 0]]})J";
  graph::Graph g = mi::import_model(write("fc.json", sym), write("fc.params", params_file()));
  REQUIRE(g.inputs().size() == 1);
  graph::CompiledModel m = graph::compile(g);
  NDArray x(dtype::float32, {4, 3});
  for (int i = 0; i < 12; ++i) x.values<float>()[size_t(i)] = float(i % 5) - 2;
  NDArray y = m.run({x})[0];
  REQUIRE(y.shape() == std::vector<int64_t>{4, 2});
  // y = x W^T with W = [[0, 1, 2], [3, 4, 5]], written out.
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 2; ++c) {
      float want = 0;
      for (int k = 0; k < 3; ++k) want += x.values<float>()[size_t(r * 3 + k)] * float(c * 3 + k);
      CHECK(y.values<float>()[size_t(r * 2 + c)] == doctest::Approx(want));
    }
  // The same file without a parameter the symbol needs: "w" becomes a data input without a shape.
  std::string renamed = params_file();
  renamed.replace(renamed.size() - 5, 5, "arg:v");
  CHECK(failure([&] { mi::import_model(write("fc.json", sym), write("fc2.params", renamed)); }).id ==
        "nnvm.mxnet.shape");
}

}  // namespace mxnet_files
