// A hostile-file corpus, generated here so it is deterministic and small: shapes whose sizes
// overflow, files that are FIFOs or devices, folding that would take gigabytes, graphs that
// stress the version adapters, out-of-range indices and names with control characters. Every
// case must end in its documented error id (ImportError keeps the id of the layer that found the
// problem) or import correctly, never crash or hang; each is timed.
#include "support/pch.hpp"

#include <sys/stat.h>

#include <chrono>
#include <functional>

#include "onnx_test_util.hpp"

namespace onnx_hostile_corpus {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
using T = onnx::TensorProto;

namespace {

constexpr int64_t G = int64_t(1) << 30;  // 2^30, to write 2^31 as 2 * G

// Y = op(X) for a float input X of `dims`.
Model unary(const std::string& op, std::vector<int64_t> dims, int elem = T::FLOAT) {
  Model m;
  m.input("X", elem, std::move(dims));
  m.node(op, {"X"}, {"Y"}, "the_" + op);
  m.output("Y");
  return m;
}

template <class V>
void constant(Model& m, const std::string& name, int elem, std::vector<int64_t> dims, const std::vector<V>& values) {
  set_raw(m.initializer(name, elem, std::move(dims)), values.data(), values.size() * sizeof(V));
}
void ints(Model& m, const std::string& name, const std::vector<int64_t>& v) {
  constant(m, name, T::INT64, {int64_t(v.size())}, v);
}
void floats(Model& m, const std::string& name, const std::vector<float>& v) {
  constant(m, name, T::FLOAT, {int64_t(v.size())}, v);
}

// Y = op(data, indices) with both as initializers (folded) or as graph inputs.
Model gather(const std::string& op, std::vector<int64_t> data_dims, std::vector<int64_t> index_dims,
             std::vector<int64_t> index_values, bool constant_indices, int64_t axis = 0) {
  Model m;
  m.input("data", T::FLOAT, std::move(data_dims));
  if (constant_indices) constant(m, "indices", T::INT64, std::move(index_dims), index_values);
  else m.input("indices", T::INT64, std::move(index_dims));
  auto* n = m.node(op, {"data", "indices"}, {"Y"}, "the_" + op);
  if (op != "GatherND") attr_int(n, "axis", axis);
  m.output("Y");
  return m;
}

void write_file(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// y = x + w with w's data in external file `location`.
std::string external_model(const fs::path& dir, const std::string& location) {
  Model m;
  m.input("x", T::FLOAT, {4});
  auto* w = m.initializer("w", T::FLOAT, {4});
  w->set_data_location(T::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value(location);
  m.node("Add", {"x", "w"}, {"y"});
  m.output("y");
  return m.save(dir);
}

struct Case {
  std::string name;
  // Writes the model into `dir` and returns the path to import.
  std::function<std::string(const fs::path& dir)> make;
  std::string error;     // the expected error id; empty: the import succeeds
  std::string contains;  // text the error message must contain (escaped names, the node)
  std::function<void(const graph::Graph&)> verify = nullptr;
  oi::ImportOptions options = {};
};

Case model_case(std::string name, std::function<Model()> make, std::string error, std::string contains = "",
                std::function<void(const graph::Graph&)> verify = nullptr) {
  return {name, [make](const fs::path& dir) { return make().save(dir); }, error, contains, verify};
}

std::vector<float> output_values(const graph::Graph& g, size_t k = 0) {
  const graph::Node& n = g.node(g.outputs.at(k));
  REQUIRE(n.kind == graph::NodeKind::constant);
  auto v = n.data->values<float>();
  return {v.begin(), v.end()};
}

std::vector<Case> size_cases() {
  std::vector<Case> c;
  for (auto dims : std::vector<std::vector<int64_t>>{{2 * G, 2 * G}, {4 * G, 4 * G}, {int64_t(1) << 62, 3},
                                                     {int64_t(1) << 62, int64_t(1) << 62}})
    c.push_back(model_case(str_cat("input [", dims[0], ", ", dims[1], "] into Relu"), [dims] { return unary("Relu", dims); },
                           "nnvm.onnx.too_large", "input X"));
  // Exactly 2^48 bytes is allowed (nothing is allocated by an import); one byte more is not.
  c.push_back(model_case("int8 input of exactly 2^48 bytes", [] { return unary("Relu", {int64_t(1) << 47, 2}, T::INT8); },
                         "", "", [](const graph::Graph& g) { CHECK(g.nodes.size() == 2); }));
  c.push_back(model_case("int8 input of 2^48 + 1 bytes", [] { return unary("Relu", {(int64_t(1) << 48) + 1}, T::INT8); },
                         "nnvm.onnx.too_large"));
  c.push_back(model_case("input [0, 2^62] is empty, not too large", [] { return unary("Relu", {0, int64_t(1) << 62}); },
                         "", "", [](const graph::Graph& g) { CHECK(const_shape(g.type(g.outputs[0]))[0] == 0); }));
  Case opt = model_case("ImportOptions::input_shapes [2^32, 2^32]", [] { return unary("Relu", {2, 2}); },
                        "nnvm.onnx.too_large", "input X");
  opt.options.input_shapes["X"] = {4 * G, 4 * G};
  c.push_back(opt);
  c.push_back(model_case("initializer [2^40, 2^40] without data", [] {
    Model m = unary("Relu", {1});
    m.initializer("w", T::FLOAT, {int64_t(1) << 40, int64_t(1) << 40});
    return m;
  }, "nnvm.onnx.too_large", "initializer w"));
  c.push_back(model_case("Expand to [2^32, 2^32]", [] {
    Model m;
    m.input("X", T::FLOAT, {1});
    ints(m, "shape", {4 * G, 4 * G});
    m.node("Expand", {"X", "shape"}, {"Y"}, "expand");
    m.output("Y");
    return m;
  }, "nnvm.graph.too_large", "node expand"));
  c.push_back(model_case("ConstantOfShape [2^40, 2^40]", [] {
    Model m;
    ints(m, "shape", {int64_t(1) << 40, int64_t(1) << 40});
    m.node("ConstantOfShape", {"shape"}, {"Y"}, "fill");
    m.output("Y");
    return m;
  }, "nnvm.graph.too_large", "node fill"));
  c.push_back(model_case("Tile [2^20] by 2^40", [] {
    Model m;
    m.input("X", T::FLOAT, {int64_t(1) << 20});
    ints(m, "repeats", {int64_t(1) << 40});
    m.node("Tile", {"X", "repeats"}, {"Y"}, "tile");
    m.output("Y");
    return m;
  }, "nnvm.graph.too_large", "node tile"));
  c.push_back(model_case("Pad [4] by 2^50 on each side", [] {
    Model m;
    m.input("X", T::FLOAT, {4});
    ints(m, "pads", {int64_t(1) << 50, int64_t(1) << 50});
    m.node("Pad", {"X", "pads"}, {"Y"}, "pad");
    m.output("Y");
    return m;
  }, "nnvm.graph.too_large", "node pad"));
  c.push_back(model_case("Concat of two 2^48-byte inputs", [] {
    Model m;
    m.input("A", T::FLOAT, {int64_t(1) << 46});
    m.input("B", T::FLOAT, {int64_t(1) << 46});
    attr_int(m.node("Concat", {"A", "B"}, {"Y"}, "concat"), "axis", 0);
    m.output("Y");
    return m;
  }, "nnvm.graph.too_large", "node concat"));
  for (float scale : {1e18f, INFINITY})
    c.push_back(model_case(str_cat("Resize with scale ", scale), [scale] {
      Model m;
      m.input("X", T::FLOAT, {1, 1, 4, 4});
      floats(m, "scales", {1, 1, scale, scale});
      m.node("Resize", {"X", "", "scales"}, {"Y"}, "resize");
      m.output("Y");
      return m;
    }, "nnvm.ops.too_large", "node resize"));
  c.push_back(model_case("Resize with scale NaN", [] {
    Model m;
    m.input("X", T::FLOAT, {1, 1, 4, 4});
    floats(m, "scales", {1, 1, NAN, 2});
    m.node("Resize", {"X", "", "scales"}, {"Y"}, "resize");
    m.output("Y");
    return m;
  }, "nnvm.ops.input_shape", "scales must be positive"));
  c.push_back(model_case("Range of 2^60 elements", [] {
    Model m;
    constant(m, "start", T::INT64, {}, std::vector<int64_t>{0});
    constant(m, "limit", T::INT64, {}, std::vector<int64_t>{int64_t(1) << 60});
    constant(m, "delta", T::INT64, {}, std::vector<int64_t>{1});
    m.node("Range", {"start", "limit", "delta"}, {"Y"}, "range");
    m.output("Y");
    return m;
  }, "nnvm.ops.input_shape", "it must have 1 to 2^40"));
  return c;
}

std::vector<Case> file_cases() {
  std::vector<Case> c;
  c.push_back({"model path is a FIFO", [](const fs::path& dir) {
                 std::string p = (dir / "fifo.onnx").string();
                 REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
                 return p;
               }, "nnvm.onnx.file", "not a regular file"});
  c.push_back({"model path is a directory", [](const fs::path& dir) { return dir.string(); }, "nnvm.onnx.file",
               "not a regular file"});
  c.push_back({"model path is a character device", [](const fs::path&) { return std::string("/dev/zero"); },
               "nnvm.onnx.file", "not a regular file"});
  c.push_back({"external data is a FIFO", [](const fs::path& dir) {
                 REQUIRE(::mkfifo((dir / "w.bin").c_str(), 0600) == 0);
                 return external_model(dir, "w.bin");
               }, "nnvm.onnx.external_data", "location 'w.bin' is not a regular file"});
  // The NUL is escaped, so the rest of the message survives being read as a C string.
  c.push_back({"external location with a NUL", [](const fs::path& dir) {
                 return external_model(dir, std::string("w\0.bin", 6));
               }, "nnvm.onnx.external_data", "'w\\x00.bin' contains a NUL character"});
  c.push_back({"external location with a terminal escape", [](const fs::path& dir) {
                 return external_model(dir, "\x1b]0;owned\x07w.bin");
               }, "nnvm.onnx.external_data", "'\\x1b]0;owned\\x07w.bin'"});
  c.push_back({"truncated model", [](const fs::path& dir) {
                 std::string bytes = unary("Relu", {4}).m.SerializeAsString();
                 write_file(dir / "cut.onnx", bytes.substr(0, bytes.size() / 2));
                 return (dir / "cut.onnx").string();
               }, "nnvm.onnx.file"});
  c.push_back({"empty file", [](const fs::path& dir) {
                 write_file(dir / "empty.onnx", "");
                 return (dir / "empty.onnx").string();
               }, "nnvm.onnx.file", "no graph"});
  c.push_back({"garbage", [](const fs::path& dir) {
                 std::string bytes;
                 uint32_t x = 12345;
                 for (int i = 0; i < 4096; ++i) bytes += char((x = x * 1103515245 + 12345) >> 24);
                 write_file(dir / "garbage.onnx", bytes);
                 return (dir / "garbage.onnx").string();
               }, "nnvm.onnx.file"});
  return c;
}

std::vector<Case> cost_cases() {
  std::vector<Case> c;
  // 48 x (ConstantOfShape([2^24]) + Add) is a 4 KB file that would fold to 6 GB; the budget
  // keeps what is folded within 256 MiB, the rest stays ops.
  c.push_back(model_case("48 chained ConstantOfShape([2^24]) + Add", [] {
    Model m;
    ints(m, "shape", {int64_t(1) << 24});
    std::string prev;
    for (int i = 0; i < 48; ++i) {
      auto* fill = m.node("ConstantOfShape", {"shape"}, {str_cat("c", i)});
      auto* t = attr_tensor(fill, "value")->mutable_t();
      t->set_data_type(T::FLOAT);
      t->add_dims(1);
      t->add_float_data(1.0f);
      if (i == 0) prev = "c0";
      else m.node("Add", {prev, str_cat("c", i)}, {str_cat("a", i)}), prev = str_cat("a", i);
    }
    m.output(prev);
    return m;
  }, "", "", [](const graph::Graph& g) {
    uint64_t folded = 0;
    size_t ops = 0;
    for (auto& n : g.nodes) {
      if (n.kind == graph::NodeKind::constant) folded += n.data->nbytes();
      ops += n.kind == graph::NodeKind::op;
    }
    CHECK(folded <= FoldBudget::default_bytes + 1024);
    CHECK(ops > 40);  // the chain past the budget is left to run time
    CHECK(const_shape(g.type(g.outputs[0])) == std::vector<int64_t>{int64_t(1) << 24});
  }));
  // Each opset-11 Softmax on a rank-3 input becomes Flatten -> Softmax -> Reshape: the adapter
  // must cost the same per node in any graph (it once copied and validated the whole graph).
  c.push_back(model_case("5000 chained opset-11 Softmax nodes", [] {
    Model m(11);
    m.input("X", T::FLOAT, {1, 2, 3});
    std::string prev = "X";
    for (int i = 0; i < 5000; ++i) {
      m.node("Softmax", {prev}, {str_cat("s", i)});
      prev = str_cat("s", i);
    }
    m.output(prev);
    return m;
  }, "", "", [](const graph::Graph& g) { CHECK(const_shape(g.type(g.outputs[0])) == std::vector<int64_t>{1, 2, 3}); }));
  c.push_back(model_case("a cycle", [] {
    Model m;
    m.input("X", T::FLOAT, {2});
    m.node("Add", {"X", "b"}, {"a"}, "first");
    m.node("Relu", {"a"}, {"b"}, "second");
    m.output("b");
    return m;
  }, "nnvm.onnx.graph", "cycle"));
  c.push_back(model_case("a value nothing produces", [] {
    Model m;
    m.input("X", T::FLOAT, {2});
    m.node("Add", {"X", "ghost"}, {"Y"}, "add");
    m.output("Y");
    return m;
  }, "nnvm.onnx.graph", "'ghost'"));
  return c;
}

std::vector<Case> index_cases() {
  std::vector<Case> c;
  c.push_back(model_case("Gather from a zero-extent axis", [] { return gather("Gather", {0, 3}, {2}, {}, false); },
                         "nnvm.ops.empty_axis", "node the_Gather"));
  c.push_back(model_case("GatherElements from a zero-extent axis",
                         [] { return gather("GatherElements", {3, 0}, {3, 2}, {}, false, 1); }, "nnvm.ops.empty_axis"));
  c.push_back(model_case("GatherND from a zero-extent axis", [] { return gather("GatherND", {0, 2}, {1, 1}, {}, false); },
                         "nnvm.ops.empty_axis"));
  c.push_back(model_case("Gather of no indices from a zero-extent axis",
                         [] { return gather("Gather", {0, 3}, {0}, {}, false); }, "", "",
                         [](const graph::Graph& g) { CHECK(const_shape(g.type(g.outputs[0])) == std::vector<int64_t>{0, 3}); }));
  c.push_back(model_case("Gather with constant index 5 of 3", [] { return gather("Gather", {3}, {1}, {5}, true); },
                         "nnvm.ops.index_range", "indices holds 5 at flat position 0, outside [-3, 3)"));
  c.push_back(model_case("Gather with constant index -4 of 3", [] { return gather("Gather", {3}, {2}, {0, -4}, true); },
                         "nnvm.ops.index_range", "node the_Gather"));
  c.push_back(model_case("Gather with int32 constant index 7 of 3", [] {
    Model m;
    m.input("data", T::FLOAT, {3});
    constant(m, "indices", T::INT32, {1}, std::vector<int32_t>{7});
    attr_int(m.node("Gather", {"data", "indices"}, {"Y"}, "g32"), "axis", 0);
    m.output("Y");
    return m;
  }, "nnvm.ops.index_range", "input indices"));
  c.push_back(model_case("GatherElements with constant index 2 of 2",
                         [] { return gather("GatherElements", {2, 2}, {2, 2}, {0, 1, 1, 2}, true, 1); },
                         "nnvm.ops.index_range", "flat position 3"));
  c.push_back(model_case("GatherND with constant coordinate 3 of 3 on axis 1",
                         [] { return gather("GatherND", {2, 3}, {1, 2}, {1, 3}, true); }, "nnvm.ops.index_range",
                         "flat position 1"));
  c.push_back(model_case("Gather with negative constant indices folds correctly", [] {
    Model m;
    floats(m, "data", {10, 20, 30});
    ints(m, "indices", {-1, 0, -3});
    attr_int(m.node("Gather", {"data", "indices"}, {"Y"}), "axis", 0);
    m.output("Y");
    return m;
  }, "", "", [](const graph::Graph& g) { CHECK(output_values(g) == std::vector<float>{30, 10, 10}); }));
  c.push_back(model_case("Gather with indices from a graph input imports", [] { return gather("Gather", {3}, {2}, {}, false); },
                         "", "", [](const graph::Graph& g) { CHECK(g.nodes.size() == 3); }));
  return c;
}

std::vector<Case> message_cases() {
  std::vector<Case> c;
  // Control characters in names are escaped: a message cannot drive the terminal.
  c.push_back(model_case("node name with a terminal escape", [] {
    Model m;
    m.input("X", T::FLOAT, {2});
    ints(m, "shape", {3});
    m.node("Reshape", {"X", "shape"}, {"Y"}, "\x1b[2J\x1b[31mevil");
    m.output("Y");
    return m;
  }, "nnvm.ops.input_shape", "node \\x1b[2J\\x1b[31mevil (Reshape)"));
  c.push_back(model_case("input name with a newline and a bell", [] {
    Model m;
    m.input("X\n\a", T::FLOAT, {4 * G, 4 * G});
    m.node("Relu", {"X\n\a"}, {"Y"});
    m.output("Y");
    return m;
  }, "nnvm.onnx.too_large", "input X\\x0a\\x07"));
  c.push_back(model_case("initializer name with an escape and short raw_data", [] {
    Model m = unary("Relu", {1});
    set_raw(m.initializer("w\x1b[0m", T::FLOAT, {4}), "abcd", 4);
    return m;
  }, "nnvm.onnx.tensor", "initializer w\\x1b[0m"));
  return c;
}

std::vector<Case> misc_cases() {
  std::vector<Case> c;
  c.push_back(model_case("negative input extent", [] {
    Model m = unary("Relu", {2});
    m.g().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-2);
    return m;
  }, "nnvm.onnx.shape"));
  c.push_back(model_case("opset 1000", [] {
    Model m = unary("Relu", {2});
    m.m.mutable_opset_import(0)->set_version(1000);
    return m;
  }, "nnvm.onnx.unsupported"));
  c.push_back(model_case("Concat axis 5 of rank 1", [] {
    Model m;
    m.input("A", T::FLOAT, {2});
    attr_int(m.node("Concat", {"A", "A"}, {"Y"}, "concat"), "axis", 5);
    m.output("Y");
    return m;
  }, "nnvm.ops.attr", "node concat"));
  c.push_back(model_case("Transpose with a repeated axis", [] {
    Model m = unary("Transpose", {2, 3});
    attr_ints(m.g().mutable_node(0), "perm", {0, 0});
    return m;
  }, "nnvm.ops.attr", "node the_Transpose"));
  c.push_back(model_case("Slice with step 0", [] {
    Model m;
    m.input("X", T::FLOAT, {4});
    ints(m, "starts", {0});
    ints(m, "ends", {4});
    ints(m, "axes", {0});
    ints(m, "steps", {0});
    m.node("Slice", {"X", "starts", "ends", "axes", "steps"}, {"Y"}, "slice");
    m.output("Y");
    return m;
  }, "nnvm.ops.attr", "node slice"));
  c.push_back(model_case("Split sizes that do not add up", [] {
    Model m;
    m.input("X", T::FLOAT, {4});
    ints(m, "split", {1, 1});
    m.node("Split", {"X", "split"}, {"A", "B"}, "split");
    m.output("A");
    return m;
  }, "nnvm.ops.input_shape", "node split"));
  c.push_back(model_case("MaxPool with stride 0", [] {
    Model m = unary("MaxPool", {1, 1, 4, 4});
    attr_ints(m.g().mutable_node(0), "kernel_shape", {2, 2});
    attr_ints(m.g().mutable_node(0), "strides", {0, 0});
    return m;
  }, "nnvm.ops.attr", "node the_MaxPool"));
  c.push_back(model_case("Conv kernel larger than the input", [] {
    Model m;
    m.input("X", T::FLOAT, {1, 1, 2, 2});
    constant(m, "W", T::FLOAT, {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
    m.node("Conv", {"X", "W"}, {"Y"}, "conv");
    m.output("Y");
    return m;
  }, "nnvm.ops.input_shape", "node conv"));
  c.push_back(model_case("Relu of an empty tensor", [] { return unary("Relu", {0}); }, "", "",
                         [](const graph::Graph& g) { CHECK(const_shape(g.type(g.outputs[0])) == std::vector<int64_t>{0}); }));
  return c;
}

}  // namespace

TEST_CASE("onnx hostile corpus: every case ends in its named error or imports correctly, quickly") {
  std::vector<Case> all;
  for (auto* group : {size_cases, file_cases, cost_cases, index_cases, message_cases, misc_cases})
    for (auto& c : group()) all.push_back(std::move(c));
  CHECK(all.size() >= 50);
  for (size_t i = 0; i < all.size(); ++i) {
    const Case& c = all[i];
    CAPTURE(c.name);
    std::string path = c.make(scratch(str_cat("hostile_", i)));
    auto start = std::chrono::steady_clock::now();
    std::optional<graph::Graph> g;
    auto [id, text] = error_of([&] { g = oi::import_model(path, c.options); });
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CAPTURE(text);
    CHECK(id == (c.error.empty() ? "(no error)" : c.error));
    if (!c.contains.empty()) CHECK(text.find(c.contains) != std::string::npos);
    // No raw control character reaches a message (printable escapes them); the support report's
    // own line breaks are the one exception.
    CHECK(std::find_if(text.begin(), text.end(), [](char ch) { return (unsigned char)ch < 0x20 && ch != '\n'; }) ==
          text.end());
    if (g && c.verify) c.verify(*g);
    // Generous for a busy 2-core CI machine; the slowest case (folding 256 MiB) takes about 2 s.
    CHECK_MESSAGE(seconds < 20, c.name, " took ", seconds, " s");
    MESSAGE(c.name, ": ", seconds, " s, ", id);
  }
}

}  // namespace onnx_hostile_corpus
