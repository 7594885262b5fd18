// The ONNX exporter and graph_json: an imported model exported at opt level 0 imports back into
// the same graph and results; with fusion, one ai.nnvm node per fused group and value_info on
// every edge; TENSOR attributes and ops without ONNX names; nnvmc --emit=json,onnx.
#include "support/pch.hpp"

#include <cstdlib>
#include <cstring>
#include <set>

#include "nnvm/graph/artifact.hpp"
#include "nnvm/onnx/dtype_codes.hpp"
#include "nnvm/onnx/export.hpp"
#include "nnvm/ops/elementwise/relu.hpp"
#include "onnx_test_util.hpp"

namespace onnx_export {

using namespace nnvm;
using namespace onnx_test;
namespace oi = nnvm::onnx_import;
namespace oe = nnvm::onnx_export;
using T = onnx::TensorProto;

namespace {

void fill(onnx::TensorProto* t, size_t n, float scale) {
  for (size_t i = 0; i < n; ++i) t->add_float_data(scale * float(int(i % 7) - 3));
}

// Conv -> LeakyRelu -> Reshape -> Gemm -> Softmax -> TopK: ops that all have ONNX names, with
// INTS, INT and FLOAT attributes, value inputs (shape, K) and a node with two outputs.
Model small_cnn() {
  Model m;
  m.input("x", T::FLOAT, {1, 2, 5, 5});
  fill(m.initializer("w", T::FLOAT, {3, 2, 3, 3}), 54, 0.1f);
  fill(m.initializer("b", T::FLOAT, {3}), 3, 0.05f);
  auto* conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  attr_ints(conv, "pads", {1, 1, 1, 1});
  attr_ints(conv, "kernel_shape", {3, 3});
  attr_float(m.node("LeakyRelu", {"c"}, {"a"}, "act"), "alpha", 0.2f);
  auto* shape = m.initializer("shape", T::INT64, {2});
  for (int64_t v : {1, -1}) shape->add_int64_data(v);
  m.node("Reshape", {"a", "shape"}, {"flat"}, "flatten");
  fill(m.initializer("fc_w", T::FLOAT, {4, 75}), 300, 0.02f);
  fill(m.initializer("fc_b", T::FLOAT, {4}), 4, 0.1f);
  auto* gemm = m.node("Gemm", {"flat", "fc_w", "fc_b"}, {"logits"}, "fc");
  attr_int(gemm, "transB", 1);
  attr_float(gemm, "alpha", 0.5f);
  attr_int(m.node("Softmax", {"logits"}, {"prob"}, "softmax"), "axis", -1);
  m.initializer("k", T::INT64, {1})->add_int64_data(2);
  m.node("TopK", {"prob", "k"}, {"top", "top_i"}, "topk");
  m.output("top");
  m.output("top_i");
  return m;
}

NDArray input_x() {
  NDArray x(dtype::float32, {1, 2, 5, 5});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = float(i % 11) * 0.25f - 1.0f;
  return x;
}

onnx::ModelProto parse(const std::string& bytes) {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(bytes));
  return m;
}

std::string save_bytes(const fs::path& dir, const std::string& bytes) {
  std::string path = (dir / "exported.onnx").string();
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

bool same_bytes(const NDArray& a, const NDArray& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, const std::string& name) {
  for (auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

std::string fused_type(const graph::Graph& g, const graph::Step& st) {
  std::string s = "fused";
  for (size_t i : st.nodes) s += "_" + g.nodes[i].op;
  return s;
}

}  // namespace

TEST_CASE("onnx export: a model at opt level 0 is plain ONNX that imports back to the same graph and results") {
  fs::path dir = scratch("export_plain");
  graph::Graph g = oi::import_model(small_cnn().save(dir));
  graph::CompiledModel first = graph::compile(g, {.opt_level = 0});
  onnx::ModelProto m = parse(oe::export_model(first));

  REQUIRE(m.opset_import_size() == 1);
  CHECK(m.opset_import(0).domain() == "");
  CHECK(m.opset_import(0).version() == oi::newest_opset);
  std::vector<std::string> types;
  for (auto& n : m.graph().node()) {
    CHECK(n.domain() == "");
    types.push_back(n.op_type());
  }
  CHECK(types == std::vector<std::string>{"Conv", "LeakyRelu", "Reshape", "Gemm", "Softmax", "TopK"});
  const onnx::NodeProto& gemm = m.graph().node(3);
  REQUIRE(attribute(gemm, "transB"));
  CHECK(attribute(gemm, "transB")->type() == onnx::AttributeProto::INT);
  CHECK(attribute(gemm, "transB")->i() == 1);
  REQUIRE(attribute(gemm, "alpha"));
  CHECK(attribute(gemm, "alpha")->type() == onnx::AttributeProto::FLOAT);
  CHECK(attribute(gemm, "alpha")->f() == 0.5f);
  CHECK(gemm.doc_string().rfind("kernel ", 0) == 0);
  CHECK(m.graph().initializer_size() == 6);  // w, b, shape, fc_w, fc_b, k

  graph::Graph back = oi::import_model(save_bytes(dir, oe::export_model(first)));
  CHECK(graph::to_string(back) == graph::to_string(first.graph()));
  graph::CompiledModel second = graph::compile(back, {.opt_level = 0});
  auto want = first.run({input_x()});
  auto got = second.run({input_x()});
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < want.size(); ++k) CHECK(same_bytes(got[k], want[k]));
}

TEST_CASE("onnx export: with fusion each kernel is one node, fused groups ai.nnvm, value_info on every edge") {
  fs::path dir = scratch("export_fused");
  graph::Graph g = oi::import_model(small_cnn().save(dir));
  graph::CompiledModel model = graph::compile(g);
  const graph::Graph& opt = model.graph();
  onnx::ModelProto m = parse(oe::export_model(model));
  const onnx::GraphProto& out = m.graph();

  std::map<std::string, int64_t> opsets;
  for (auto& o : m.opset_import()) opsets[o.domain()] = o.version();
  CHECK(opsets == std::map<std::string, int64_t>{{"", oi::newest_opset}, {oe::nnvm_domain, oe::nnvm_domain_version}});

  REQUIRE(out.node_size() == int(model.steps().size()));
  size_t fused = 0;
  for (size_t s = 0; s < model.steps().size(); ++s) {
    const graph::Step& st = model.steps()[s];
    const onnx::NodeProto& n = out.node(int(s));
    CAPTURE(st.label);
    CHECK(n.name() == opt.nodes[st.nodes[0]].name);
    std::string kernel = model.kernels()[st.kernel].func().name;
    CHECK(n.doc_string() == "kernel " + kernel);
    if (st.nodes.size() == 1) {
      // Passes may make ops without ONNX names (a layout transform): those are ai.nnvm nodes.
      const graph::Node& op = opt.nodes[st.nodes[0]];
      auto& names = opt.registry->get(op.op).importer_names;
      if (names.empty()) {
        CHECK(n.domain() == oe::nnvm_domain);
        CHECK(n.op_type() == op.op);
      } else {
        CHECK(n.domain() == "");
        CHECK("onnx:" + n.op_type() == names.at(0));
      }
      continue;
    }
    ++fused;
    CHECK(n.domain() == oe::nnvm_domain);
    CHECK(n.op_type() == fused_type(opt, st));
    REQUIRE(attribute(n, "members"));
    const std::string& members = attribute(n, "members")->s();
    CHECK(size_t(std::count(members.begin(), members.end(), '\n')) == st.nodes.size() - 1);
    for (size_t i : st.nodes) CHECK(members.find("%" + opt.nodes[i].name + " = " + opt.nodes[i].op + "(") != std::string::npos);
    REQUIRE(attribute(n, "kernel"));
    CHECK(attribute(n, "kernel")->s() == kernel);
  }
  // The conv's activation runs in the conv's kernel (whatever layout the conv runs in).
  REQUIRE(fused > 0);
  const onnx::NodeProto* conv = nullptr;
  for (auto& n : out.node())
    if (n.op_type().rfind("fused_conv", 0) == 0) conv = &n;
  REQUIRE(conv);
  CHECK(conv->op_type().find("_leaky_relu") != std::string::npos);
  CHECK(attribute(*conv, "members")->s().find("leaky_relu(") != std::string::npos);
  CHECK(attribute(*conv, "members")->s().find("{alpha=") != std::string::npos);

  // Every value a node reads or writes is typed: an input, an initializer, an output or value_info.
  std::map<std::string, const onnx::TypeProto*> typed;
  for (auto& v : out.input()) typed[v.name()] = &v.type();
  for (auto& v : out.output()) typed[v.name()] = &v.type();
  for (auto& v : out.value_info()) typed[v.name()] = &v.type();
  std::set<std::string> initializers;
  for (auto& t : out.initializer()) initializers.insert(t.name());
  for (auto& n : out.node())
    for (auto* list : {&n.input(), &n.output()})
      for (auto& name : *list) {
        CAPTURE(name);
        CHECK((typed.count(name) || initializers.count(name)));
      }
  for (auto& [name, type] : typed) {
    CAPTURE(name);
    size_t colon = name.find(':');
    const graph::Node& producer = opt.nodes.at(opt.find(name.substr(0, colon)));
    const ops::TensorType& want = producer.types.at(colon == std::string::npos ? 0 : std::stoul(name.substr(colon + 1)));
    REQUIRE(type->has_tensor_type());
    CHECK(type->tensor_type().elem_type() == onnx_import::code_of(want.dtype));
    std::vector<int64_t> dims;
    for (auto& d : type->tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    CHECK(dims == const_shape(want));
  }
  // value_info holds the edges between nodes, not the group-internal values (this model has no
  // output nobody reads, which would get value_info too).
  for (auto& v : out.value_info()) {
    bool read = false;
    for (auto& n : out.node()) read = read || std::count(n.input().begin(), n.input().end(), v.name());
    CHECK(read);
  }
}

TEST_CASE("onnx export: TENSOR attributes come back as tensors; an op without an ONNX name is ai.nnvm") {
  ops::OpRegistry registry = ops::default_registry();
  ops::OpDef copy = ops::relu_def();
  copy.name = "test.relu_copy";
  copy.importer_names = {};
  registry.register_op(copy);

  graph::GraphBuilder b("generated", registry);
  graph::Value x = b.input("x", dtype::float32, {2, 3});
  graph::Value shape = b.constant("shape", NDArray::from(std::vector<int64_t>{2, 3}, {2}));
  graph::Value fill_value =
      b.op("constant_of_shape", {shape}, ops::Attrs().set_floats("value", {2.5}).set_dtype("value_dtype", dtype::float32), "cos");
  b.output(b.op("add", {x, fill_value}, {}, "sum"));
  graph::Graph g = b.build();

  fs::path dir = scratch("export_tensor_attr");
  std::string bytes = oe::export_graph(g);
  onnx::ModelProto m = parse(bytes);
  REQUIRE(m.graph().node_size() == 2);
  const onnx::NodeProto& cos = m.graph().node(0);
  CHECK(cos.op_type() == "ConstantOfShape");
  CHECK(cos.attribute_size() == 1);  // value_dtype is folded into the tensor
  REQUIRE(attribute(cos, "value"));
  const onnx::TensorProto& t = attribute(cos, "value")->t();
  CHECK(attribute(cos, "value")->type() == onnx::AttributeProto::TENSOR);
  CHECK(t.data_type() == T::FLOAT);
  CHECK(std::vector<int64_t>(t.dims().begin(), t.dims().end()) == std::vector<int64_t>{1});
  float v = 0;
  REQUIRE(t.raw_data().size() == sizeof v);
  std::memcpy(&v, t.raw_data().data(), sizeof v);
  CHECK(v == 2.5f);

  // The importer folds the ConstantOfShape; the results match the graph that had it as an op.
  graph::Graph back = oi::import_model(save_bytes(dir, bytes));
  NDArray in(dtype::float32, {2, 3});
  for (int64_t i = 0; i < in.numel(); ++i) in.data<float>()[i] = float(i) - 2.0f;
  auto want = graph::compile(g, {.opt_level = 0}).run({in});
  auto got = graph::compile(back, {.opt_level = 0}).run({in});
  CHECK(same_bytes(got.at(0), want.at(0)));

  graph::GraphBuilder c("custom", registry);
  c.output(c.op("test.relu_copy", {c.input("x", dtype::float32, {3})}, {}, "r"));
  onnx::ModelProto custom = parse(oe::export_graph(c.build()));
  REQUIRE(custom.graph().node_size() == 1);
  CHECK(custom.graph().node(0).domain() == oe::nnvm_domain);
  CHECK(custom.graph().node(0).op_type() == "test.relu_copy");
  REQUIRE(custom.opset_import_size() == 2);
  CHECK(custom.opset_import(1).domain() == oe::nnvm_domain);
}

TEST_CASE("onnx export: graph_json lists each step's member nodes with their attributes and slots") {
  graph::Graph g = oi::import_model(small_cnn().save(scratch("export_json")));
  graph::CompiledModel model = graph::compile(g);
  std::string json = graph::graph_json(model);
  CHECK(json.rfind("{\"format\":\"nnvm.deploy\",\"version\":1,", 0) == 0);
  char alpha[64];
  std::snprintf(alpha, sizeof alpha, "\"alpha\":%.17g", double(0.2f));
  CHECK(json.find(alpha) != std::string::npos);
  CHECK(json.find("\"op\":\"leaky_relu\",\"attrs\":{\"alpha\":") != std::string::npos);
  CHECK(json.find("\"pads\":[1,1,1,1]") != std::string::npos);
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t at = json.find(what); at != std::string::npos; at = json.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("\"op\":\"leaky_relu\"") == 1);
  CHECK(count("\"members\":") == model.steps().size());
}

#ifdef NNVM_TEST_NNVMC
TEST_CASE("nnvmc compile --emit=json,onnx writes graph.json and graph.onnx") {
  fs::path dir = scratch("nnvmc_emit");
  std::string model = small_cnn().save(dir);
  std::string out = (dir / "out").string(), log = (dir / "log.txt").string();
  std::string cmd = std::string("\"") + NNVM_TEST_NNVMC + "\" compile \"" + model + "\" --target c --emit=json,onnx -o \"" +
                    out + "\" > \"" + log + "\" 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream json_file(out + "/graph.json");
  std::string json((std::istreambuf_iterator<char>(json_file)), std::istreambuf_iterator<char>());
  CHECK(json.find("\"members\":[") != std::string::npos);
  std::ifstream onnx_file(out + "/graph.onnx", std::ios::binary);
  onnx::ModelProto m;
  REQUIRE(m.ParseFromIstream(&onnx_file));
  CHECK(m.graph().node_size() > 0);
  CHECK(m.graph().node(0).domain() == oe::nnvm_domain);
  // graph.onnx is binary: without -o it is refused, not printed.
  std::string refused = std::string("\"") + NNVM_TEST_NNVMC + "\" compile \"" + model + "\" --target c --emit=onnx > \"" +
                        log + "\" 2>&1";
  CHECK(std::system(refused.c_str()) != 0);
  std::ifstream log_file(log);
  std::string text((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
  CHECK(text.find("[nnvm.cli.emit]") != std::string::npos);
}
#endif

}  // namespace onnx_export
