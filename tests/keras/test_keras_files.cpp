// The Keras importer's file handling: hostile or broken files (not a model, truncated or
// bit-flipped archives and HDF5 files, broken configurations, missing or misshapen weights,
// open input shapes) must fail with an error that names the file, layer and key, never crash,
// hang or over-read. The files are derived here from the committed test models with libzip.
#include <unistd.h>
#include <zip.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "nnvm/importers/files.hpp"
#include "nnvm/keras/importer.hpp"
#include "support/framework_reference.hpp"

namespace keras_files {

using namespace nnvm;
namespace ki = keras_import;
namespace fs = std::filesystem;

fs::path scratch() { return nnvm_test::scratch_dir("keras"); }

std::string model_path(const std::string& file) { return std::string(NNVM_TEST_SOURCE_DIR) + "/tests/models/keras/" + file; }

std::string read(const std::string& path) { return importers::read_regular_file("keras", path, 1 << 26); }

std::string write(const std::string& name, const std::string& bytes) {
  return nnvm_test::scratch_file("keras", name, bytes);
}

// The members of a zip archive.
std::map<std::string, std::string> members(const std::string& path) {
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY, &error);
  REQUIRE(z);
  std::map<std::string, std::string> out;
  for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
    zip_stat_t st;
    zip_stat_index(z, zip_uint64_t(i), 0, &st);
    std::string data(st.size, '\0');
    zip_file_t* f = zip_fopen_index(z, zip_uint64_t(i), 0);
    REQUIRE(zip_fread(f, data.data(), st.size) == zip_int64_t(st.size));
    zip_fclose(f);
    out[st.name] = std::move(data);
  }
  zip_discard(z);
  return out;
}

// A .keras archive holding `files`.
std::string archive(const std::string& name, const std::map<std::string, std::string>& files) {
  const std::string path = (scratch() / name).string();
  int error = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  REQUIRE(z);
  for (auto& [member, data] : files) {
    zip_source_t* s = zip_source_buffer(z, data.data(), data.size(), 0);
    REQUIRE(zip_file_add(z, member.c_str(), s, ZIP_FL_OVERWRITE) >= 0);
  }
  REQUIRE(zip_close(z) == 0);
  return path;
}

struct Failure {
  std::string id, text;
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

Failure import_failure(const std::string& path) { return failure([&] { ki::import_model(path); }); }

// cnn_sequential's config.json with `from` replaced by `to` (once).
std::string edited_config(const std::string& from, const std::string& to) {
  std::string config = members(model_path("cnn_sequential.keras")).at("config.json");
  size_t at = config.find(from);
  REQUIRE(at != std::string::npos);
  return config.replace(at, from.size(), to);
}

std::string with_config(const std::string& name, const std::string& config) {
  auto files = members(model_path("cnn_sequential.keras"));
  files["config.json"] = config;
  return archive(name, files);
}

TEST_CASE("keras: a file that is no model, or an archive without a configuration, is refused by content") {
  Failure f = import_failure(write("noise.keras", std::string(4096, '\x5a')));
  CHECK(f.id == "nnvm.keras.file");
  CHECK(f.text.find("noise.keras") != std::string::npos);
  f = import_failure(archive("empty.keras", {{"metadata.json", "{}"}}));
  CHECK(f.id == "nnvm.keras.file");
  CHECK(f.text.find("config.json") != std::string::npos);
  f = import_failure(model_path("missing.keras"));
  CHECK(f.id == "nnvm.keras.file");
}

TEST_CASE("keras: a weights-only HDF5 file is refused with the reason") {
  auto files = members(model_path("cnn_sequential.keras"));
  Failure f = import_failure(write("weights_only.h5", files.at("model.weights.h5")));
  CHECK(f.id == "nnvm.keras.file");
  CHECK(f.text.find("model_config") != std::string::npos);
}

TEST_CASE("keras: every truncation of an archive and of a legacy .h5 fails cleanly") {
  for (const char* model : {"cnn_sequential.keras", "cnn_sequential.h5"}) {
    CAPTURE(model);
    const std::string bytes = read(model_path(model));
    for (size_t cut : {size_t(8), size_t(100), bytes.size() / 4, bytes.size() / 2, bytes.size() - 300, bytes.size() - 1}) {
      CAPTURE(cut);
      Failure f = import_failure(write("cut.bin", bytes.substr(0, cut)));
      CHECK(f.id.rfind("nnvm.keras.", 0) == 0);
    }
  }
}

TEST_CASE("keras: flipped bytes anywhere in a legacy .h5 give an error or a model, never a crash") {
  const std::string bytes = read(model_path("cnn_sequential.h5"));
  size_t errors = 0;
  for (size_t at = 0; at < bytes.size(); at += bytes.size() / 97 + 1) {
    std::string damaged = bytes;
    damaged[at] = char(damaged[at] ^ 0xff);
    Failure f = import_failure(write("flipped.h5", damaged));
    // Data bytes may flip without harm (the import then succeeds with other weights).
    if (f.id != "(no error)") {
      CAPTURE(at);
      CHECK(f.id.rfind("nnvm.", 0) == 0);
      ++errors;
    }
  }
  CHECK(errors > 0);
}

TEST_CASE("keras: broken configurations name the file and the layer") {
  Failure f = import_failure(with_config("bad_json.keras", "{\"class_name\": \"Sequential\", "));
  CHECK(f.id == "nnvm.keras.config");
  f = import_failure(with_config("subclassed.keras", R"J({"class_name": "MyModel", "config": {}})J"));
  CHECK(f.id == "nnvm.keras.unsupported");
  CHECK(f.text.find("MyModel") != std::string::npos);
  f = import_failure(with_config("unknown_layer.keras", edited_config("\"class_name\": \"Flatten\"", "\"class_name\": \"Frobnicate\"")));
  CHECK(f.id == "nnvm.keras.unsupported");
  CHECK(f.text.find("Frobnicate") != std::string::npos);
  f = import_failure(with_config("bad_key.keras", edited_config("\"kernel_size\": [5, 5]", "\"kernel_size\": \"big\"")));
  CHECK(f.id == "nnvm.keras.attribute");
  CHECK(f.text.find("kernel_size") != std::string::npos);
  CHECK(f.text.find("conv2d") != std::string::npos);
  f = import_failure(with_config("bad_activation.keras", edited_config("\"activation\": \"tanh\"", "\"activation\": \"zigzag\"")));
  CHECK(f.id == "nnvm.keras.unsupported");
  CHECK(f.text.find("zigzag") != std::string::npos);
}

TEST_CASE("keras: a functional model reading a layer that is not there is refused") {
  auto files = members(model_path("conv1d.keras"));
  std::string& config = files.at("config.json");
  size_t at = config.find("\"keras_history\": [\"conv1d\"");
  REQUIRE(at != std::string::npos);
  config.replace(at, 26, "\"keras_history\": [\"nowhere\"");
  Failure f = import_failure(archive("dangling.keras", files));
  CHECK(f.id == "nnvm.keras.config");
  CHECK(f.text.find("nowhere") != std::string::npos);
}

TEST_CASE("keras: missing or misshapen weights are named") {
  auto files = members(model_path("cnn_sequential.keras"));
  auto other = members(model_path("conv1d.keras"));
  files["model.weights.h5"] = other.at("model.weights.h5");  // another model's weights
  Failure f = import_failure(archive("wrong_weights.keras", files));
  CHECK(f.id != "(no error)");
  CHECK(f.text.find("conv2d") != std::string::npos);
  files.erase("model.weights.h5");
  f = import_failure(archive("no_weights.keras", files));
  CHECK(f.id == "nnvm.keras.weights");
}

TEST_CASE("keras: an open input extent needs ImportOptions::input_shapes") {
  std::string path = with_config("open_shape.keras", edited_config("\"batch_shape\": [null, 28, 28, 1]", "\"batch_shape\": [null, null, 28, 1]"));
  Failure f = import_failure(path);
  CHECK(f.id == "nnvm.keras.shape");
  CHECK(f.text.find("input_shapes") != std::string::npos);
  graph::Graph g = ki::import_model(path, {.input_shapes = {{"input_layer", {2, 28, 28, 1}}}});
  std::vector<int64_t> out;
  for (auto& e : g.type(g.outputs[0]).shape) out.push_back(*ir::as_const_int(e));
  CHECK(out == std::vector<int64_t>{2, 10});
  f = failure([&] { ki::import_model(path, {.input_shapes = {{"nothing", {1}}}}); });
  CHECK(f.id == "nnvm.keras.shape");
}

}  // namespace keras_files
