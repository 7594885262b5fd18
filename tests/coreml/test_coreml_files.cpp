// Hostile Core ML files: truncated and corrupted models, wrong blob offsets and sizes in
// weight.bin, weights that do not fit their layer, unknown layers and ops, cycles and undefined
// names, broken package manifests. Each must fail with its documented error id, never crash.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <google/protobuf/unknown_field_set.h>

#include "coreml.pb.h"
#include "nnvm/coreml/importer.hpp"
#include "support/framework_reference.hpp"

namespace coreml_files {

using namespace nnvm;
namespace ci = coreml_import;
namespace spec = nnvm_coreml_spec;
namespace fs = std::filesystem;

std::string models() { return std::string(NNVM_TEST_SOURCE_DIR) + "/tests/models/coreml/"; }

fs::path scratch() { return nnvm_test::scratch_dir("coreml"); }

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

std::string save(const spec::Model& m, const std::string& name) {
  fs::path p = scratch() / name;
  write_bytes(p, m.SerializeAsString());
  return p.string();
}

// The id of the ImportError importing `path` throws ("" when it imports).
std::string import_error(const std::string& path, const ci::ImportOptions& o = {}) {
  try {
    ci::import_model(path, o);
  } catch (const ImportError& e) {
    return e.id();
  }
  return "";
}

std::string import_message(const std::string& path) {
  try {
    ci::import_model(path);
  } catch (const ImportError& e) {
    return e.what();
  }
  return "";
}

// A NeuralNetwork (exact mapping) with input x of shape (1, 4) and output y.
spec::Model tiny_network() {
  spec::Model m;
  m.set_specificationversion(4);
  auto* in = m.mutable_description()->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_multiarraytype()->add_shape(1);
  in->mutable_type()->mutable_multiarraytype()->add_shape(4);
  m.mutable_description()->add_output()->set_name("y");
  m.mutable_description()->mutable_output(0)->mutable_type()->mutable_multiarraytype();
  m.mutable_neuralnetwork()->set_arrayinputshapemapping(spec::EXACT_ARRAY_MAPPING);
  return m;
}

spec::NeuralNetworkLayer* add_layer(spec::Model& m, const std::string& name, const std::string& in,
                                    const std::string& out) {
  auto* l = m.mutable_neuralnetwork()->add_layers();
  l->set_name(name);
  l->add_input(in);
  l->add_output(out);
  return l;
}

TEST_CASE("coreml files: a tiny hand-written network imports and runs") {
  spec::Model m = tiny_network();
  auto* fc = add_layer(m, "fc", "x", "y")->mutable_innerproduct();
  fc->set_inputchannels(4);
  fc->set_outputchannels(2);
  for (float v : {1.f, 2.f, 3.f, 4.f, -1.f, 0.f, 1.f, 0.5f}) fc->mutable_weights()->add_floatvalue(v);
  graph::Graph g = ci::import_model(save(m, "tiny.mlmodel"));
  graph::CompileOptions c;
  c.target = target::parse_target("c");
  std::vector<NDArray> out = graph::compile(g, c).run({NDArray::from(std::vector<float>{1, 1, 2, -2}, {1, 4})});
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape() == std::vector<int64_t>{1, 2});
  CHECK(out[0].values<float>()[0] == doctest::Approx(1 + 2 + 6 - 8));
  CHECK(out[0].values<float>()[1] == doctest::Approx(-1 + 0 + 2 - 1));
}

TEST_CASE("coreml files: missing, unparsable and truncated files are file errors") {
  CHECK(import_error((scratch() / "missing.mlmodel").string()) == "nnvm.coreml.file");
  write_bytes(scratch() / "garbage.mlmodel", std::string("\xff\xff\xff\xff garbage", 13));
  CHECK(import_error((scratch() / "garbage.mlmodel").string()) == "nnvm.coreml.file");
  // Every prefix of a real model either fails to parse or fails with a named Core ML error.
  const std::string bytes = read_bytes(models() + "nn_cnn.mlmodel");
  for (size_t cut : {size_t(1), size_t(7), bytes.size() / 3, bytes.size() / 2, bytes.size() - 3}) {
    CAPTURE(cut);
    write_bytes(scratch() / "cut.mlmodel", bytes.substr(0, cut));
    CHECK(import_error((scratch() / "cut.mlmodel").string()).rfind("nnvm.coreml.", 0) == 0);
  }
  // Over the size limit: refused before parsing.
  CHECK(import_error(models() + "nn_cnn.mlmodel", {.max_model_bytes = 100}) == "nnvm.coreml.file");
}

TEST_CASE("coreml files: random byte corruption never crashes the importer") {
  const std::string bytes = read_bytes(models() + "nn_layers.mlmodel");
  std::mt19937 rng(7);
  int failures = 0;
  for (int i = 0; i < 200; ++i) {
    std::string b = bytes;
    for (int k = 0; k < 4; ++k) b[rng() % b.size()] = char(rng());
    write_bytes(scratch() / "flip.mlmodel", b);
    try {
      ci::import_model((scratch() / "flip.mlmodel").string());
    } catch (const ImportError&) {
      ++failures;
    } catch (const UserError&) {
      ++failures;
    }
  }
  CHECK(failures > 0);  // the corruption did reach the checks
}

TEST_CASE("coreml files: weights that do not fit their layer are weight errors naming the attribute") {
  spec::Model m = tiny_network();
  auto* fc = add_layer(m, "fc", "x", "y")->mutable_innerproduct();
  fc->set_inputchannels(4);
  fc->set_outputchannels(2);
  for (int i = 0; i < 7; ++i) fc->mutable_weights()->add_floatvalue(1);  // 8 needed
  const std::string path = save(m, "short_weights.mlmodel");
  CHECK(import_error(path) == "nnvm.coreml.weights");
  CHECK(import_message(path).find("attribute 'weights'") != std::string::npos);
  CHECK(import_message(path).find("layer 'fc' (innerProduct)") != std::string::npos);
  // float16 bytes of an odd length, a huge channel count.
  fc->mutable_weights()->Clear();
  fc->mutable_weights()->set_float16value(std::string(15, '\0'));
  CHECK(import_error(save(m, "odd_fp16.mlmodel")) == "nnvm.coreml.weights");
  fc->set_outputchannels(uint64_t(1) << 62);
  CHECK(import_error(save(m, "huge.mlmodel")) == "nnvm.coreml.attribute");
  // A channel count that does not match the input.
  fc->set_outputchannels(2);
  fc->set_inputchannels(3);
  fc->mutable_weights()->Clear();
  for (int i = 0; i < 6; ++i) fc->mutable_weights()->add_floatvalue(1);
  CHECK(import_error(save(m, "channels.mlmodel")) == "nnvm.coreml.shape");
}

TEST_CASE("coreml files: an unknown layer is an unsupported error naming it") {
  spec::Model m = tiny_network();
  auto* l = add_layer(m, "rnn", "x", "y");
  // A GRU layer (field 410), which coreml.proto does not declare: an unknown field.
  l->GetReflection()->MutableUnknownFields(l)->AddLengthDelimited(410, "");
  const std::string path = save(m, "gru.mlmodel");
  CHECK(import_error(path) == "nnvm.coreml.unsupported");
  CHECK(import_message(path).find("NeuralNetworkLayer field 410") != std::string::npos);
  importers::SupportReport r = ci::check_support(path);
  REQUIRE(r.items.size() == 1);
  CHECK(r.items[0].node == "rnn");
  // A model kind nnvm does not read.
  spec::Model tree;
  tree.mutable_treeensembleclassifier();
  CHECK(import_error(save(tree, "tree.mlmodel")) == "nnvm.coreml.unsupported");
}

TEST_CASE("coreml files: cycles, undefined and doubly produced names are graph errors") {
  spec::Model m = tiny_network();
  add_layer(m, "a", "b_out", "a_out")->mutable_activation()->mutable_relu();
  add_layer(m, "b", "a_out", "b_out")->mutable_activation()->mutable_relu();
  add_layer(m, "c", "a_out", "y")->mutable_activation()->mutable_relu();
  CHECK(import_error(save(m, "cycle.mlmodel")) == "nnvm.coreml.graph");
  spec::Model u = tiny_network();
  add_layer(u, "a", "nowhere", "y")->mutable_activation()->mutable_relu();
  CHECK(import_error(save(u, "undefined.mlmodel")) == "nnvm.coreml.graph");
  spec::Model twice = tiny_network();
  add_layer(twice, "a", "x", "y")->mutable_activation()->mutable_relu();
  add_layer(twice, "b", "x", "y")->mutable_activation()->mutable_relu();
  CHECK(import_error(save(twice, "twice.mlmodel")) == "nnvm.coreml.graph");
  // An output nothing produces.
  spec::Model no_out = tiny_network();
  add_layer(no_out, "a", "x", "z")->mutable_activation()->mutable_relu();
  CHECK(import_error(save(no_out, "no_output.mlmodel")) == "nnvm.coreml.graph");
}

TEST_CASE("coreml files: bad input shapes are shape errors") {
  spec::Model m = tiny_network();
  add_layer(m, "a", "x", "y")->mutable_activation()->mutable_relu();
  m.mutable_description()->mutable_input(0)->mutable_type()->mutable_multiarraytype()->set_shape(1, -4);
  CHECK(import_error(save(m, "negative.mlmodel")) == "nnvm.coreml.shape");
  m.mutable_description()->mutable_input(0)->mutable_type()->mutable_multiarraytype()->clear_shape();
  CHECK(import_error(save(m, "no_shape.mlmodel")) == "nnvm.coreml.shape");
  CHECK(import_error(save(m, "no_shape.mlmodel"), {.input_shapes = {{"x", {1, 4}}}}) == "");
  CHECK(import_error(save(m, "no_shape.mlmodel"), {.input_shapes = {{"nope", {1, 4}}}}) == "nnvm.coreml.shape");
  CHECK(import_error(save(m, "no_shape.mlmodel"), {.input_shapes = {{"x", {1ll << 40, 1ll << 20}}}}) ==
        "nnvm.coreml.shape");
}

// A copy of the float32 ML Program package in the scratch directory, with its model spec.
struct Package {
  fs::path dir;
  spec::Model model;
  fs::path spec_path() const { return dir / "Data/com.apple.CoreML/model.mlmodel"; }
  fs::path weights() const { return dir / "Data/com.apple.CoreML/weights/weight.bin"; }
  void save() const { write_bytes(spec_path(), model.SerializeAsString()); }
  // The first const op whose value is a blob.
  spec::Value& first_blob() {
    auto& block = (*model.mutable_mlprogram()->mutable_functions())["main"];
    auto& ops = *(*block.mutable_block_specializations())[block.opset()].mutable_operations();
    for (auto& op : ops)
      if (op.type() == "const" && (*op.mutable_attributes())["val"].has_blobfilevalue())
        return (*op.mutable_attributes())["val"];
    FAIL("no blob");
    throw;
  }
};

Package copy_package(const std::string& name) {
  Package p{scratch() / (name + ".mlpackage"), {}};
  fs::remove_all(p.dir);
  fs::copy(models() + "mil_cnn_fp32.mlpackage", p.dir, fs::copy_options::recursive);
  fs::permissions(p.spec_path(), fs::perms::owner_read | fs::perms::owner_write);
  REQUIRE(p.model.ParseFromString(read_bytes(p.spec_path())));
  return p;
}

TEST_CASE("coreml files: wrong blob offsets and sizes in weight.bin are refused before reading") {
  {
    Package p = copy_package("offset_past_end");
    p.first_blob().mutable_blobfilevalue()->set_offset(1u << 30);
    p.save();
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.external_data");
  }
  {
    Package p = copy_package("offset_not_a_record");
    p.first_blob().mutable_blobfilevalue()->set_offset(128);  // inside the first blob's data
    p.save();
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.weights");
  }
  {
    Package p = copy_package("wrong_shape");
    p.first_blob().mutable_type()->mutable_tensortype()->mutable_dimensions(0)->mutable_constant()->set_size(9);
    p.save();
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.weights");
  }
  {
    Package p = copy_package("escape");
    p.first_blob().mutable_blobfilevalue()->set_filename("@model_path/../../../Manifest.json");
    p.save();
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.external_data");
  }
  {
    // The record's data offset points past the end of the file.
    Package p = copy_package("data_past_end");
    std::string w = read_bytes(p.weights());
    const uint64_t offset = p.first_blob().blobfilevalue().offset();
    for (int i = 0; i < 8; ++i) w[offset + 16 + i] = char(0x7f);
    write_bytes(p.weights(), w);
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.external_data");
  }
  {
    Package p = copy_package("truncated_weights");
    const std::string w = read_bytes(p.weights());
    write_bytes(p.weights(), w.substr(0, w.size() / 2));
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.external_data");
  }
  {
    Package p = copy_package("fp16_record");  // the record says float16; the type float32
    std::string w = read_bytes(p.weights());
    w[p.first_blob().blobfilevalue().offset() + 4] = 1;
    write_bytes(p.weights(), w);
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.weights");
  }
}

TEST_CASE("coreml files: unknown MIL ops and undefined names in a program") {
  {
    Package p = copy_package("unknown_op");
    auto& block = (*p.model.mutable_mlprogram()->mutable_functions())["main"];
    auto& ops = *(*block.mutable_block_specializations())[block.opset()].mutable_operations();
    for (auto& op : ops)
      if (op.type() == "relu") op.set_type("gelu_fancy");
    p.save();
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.unsupported");
    importers::SupportReport r = ci::check_support(p.dir.string());
    REQUIRE(r.items.size() == 1);
    CHECK(r.items[0].op == "gelu_fancy");
  }
  {
    Package p = copy_package("undefined_name");
    auto& block = (*p.model.mutable_mlprogram()->mutable_functions())["main"];
    auto& ops = *(*block.mutable_block_specializations())[block.opset()].mutable_operations();
    for (auto& op : ops)
      if (op.type() == "relu") (*op.mutable_inputs())["x"].mutable_arguments(0)->set_name("not_yet");
    p.save();
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.graph");
  }
}

TEST_CASE("coreml files: a package's manifest must name a model inside the package") {
  {
    Package p = copy_package("bad_manifest");
    write_bytes(p.dir / "Manifest.json", "{ not json");
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.file");
  }
  {
    Package p = copy_package("escaping_manifest");
    write_bytes(p.dir / "Manifest.json",
                R"({"rootModelIdentifier": "a", "itemInfoEntries": {"a": {"path": "../../outside.mlmodel"}}})");
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.file");
  }
  {
    Package p = copy_package("no_root");
    write_bytes(p.dir / "Manifest.json", R"({"rootModelIdentifier": "b", "itemInfoEntries": {}})");
    CHECK(import_error(p.dir.string()) == "nnvm.coreml.file");
  }
}

}  // namespace coreml_files
