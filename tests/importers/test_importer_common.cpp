// The rest of nnvm_importer_common, which every format's importer uses: unique node names, the
// error context, data type attribute translation, the support report's text, and the confined
// reading of weights a model refers to (checked on real files in a temporary directory).
#include "support/pch.hpp"
#include "support/check.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nnvm/importers/dtype_attributes.hpp"
#include "nnvm/importers/error_context.hpp"
#include "nnvm/importers/files.hpp"
#include "nnvm/importers/support_report.hpp"
#include "nnvm/importers/unique_names.hpp"

namespace importers_importer_common {

using namespace nnvm;
namespace fs = std::filesystem;
using nnvm_test::error_of;

namespace {

// A fresh directory under the system's temporary directory, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "nnvm_importers_XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& bytes) const {
    fs::create_directories((path / name).parent_path());
    std::ofstream(path / name, std::ios::binary) << bytes;
  }
};

}  // namespace

TEST_CASE("importers: UniqueNames gives each node its own name") {
  importers::UniqueNames names;
  CHECK(names.claim("conv") == "conv");
  CHECK(names.claim("conv") == "conv_1");
  CHECK(names.claim("conv") == "conv_2");
  CHECK(names.claim("") == "node");
  CHECK(names.claim("") == "node_1");
  // A node with three outputs also takes "split:1" and "split:2", the names the builder gives
  // its further outputs when it folds it; a later node named "split:1" must go elsewhere.
  CHECK(names.claim("split", 3) == "split");
  CHECK(names.taken("split:2"));
  CHECK(names.claim("split:1") == "split:1_1");
  // A base whose derived names are taken moves on as a whole.
  CHECK(names.claim("pair:1") == "pair:1");
  CHECK(names.claim("pair", 2) == "pair_1");
}

TEST_CASE("importers: with_context says where an op's error came from") {
  std::vector<std::string> where{"file m.onnx", "node conv1 (Conv)"};
  try {
    importers::with_context("onnx", where, [](const std::string& c) { return c == "graph g"; }, [] {
      throw UserError("nnvm.ops.input_shape", "kernel larger than input", {"graph g", "input W"});
      return 0;
    });
    FAIL("no error");
  } catch (const ImportError& e) {
    CHECK(e.id() == "nnvm.ops.input_shape");  // the op's id is kept
    CHECK(e.context() == std::vector<std::string>{"file m.onnx", "node conv1 (Conv)", "input W"});
  }
  // An ImportError passes as it is: its thrower knew where it was.
  auto [id, msg] = error_of([&] {
    importers::with_context("onnx", where, [] { throw ImportError("nnvm.onnx.tensor", "short data", {"x"}); });
  });
  CHECK(id == "nnvm.onnx.tensor");
  CHECK(error_of([&] { importers::with_context("mxnet", where, [] { throw std::bad_alloc(); }); }).first ==
        "nnvm.mxnet.out_of_memory");
  CHECK(error_of([&] {
          importers::with_context("mxnet", where, [] { return std::vector<int>(1).at(5); });
        }).first == "nnvm.mxnet.internal");
  CHECK(importers::with_context("onnx", where, [] { return 42; }) == 42);
}

TEST_CASE("importers: data type codes become nnvm type names") {
  static const importers::DtypeAttribute table[] = {{"Cast", "to"}, {"Quantize", "out", true}};
  importers::DtypeCodes codes{.decode = [](int64_t c) -> std::optional<DataType> {
                                if (c == 1) return dtype::float32;
                                if (c == 7) return dtype::int64;
                                return std::nullopt;
                              },
                              .name = [](int64_t c) { return str_cat("CODE", c); }};
  ops::Attrs a = ops::Attrs().set_int("to", 7).set_int("axis", 7);
  importers::translate_dtype_codes("fmt", table, codes, "Cast", a, {"node c"});
  CHECK(a.get_dtype("to") == dtype::int64);
  CHECK(a.get_string("to") == "int64");
  CHECK(a.get_int("axis") == 7);  // not in the table: untouched
  // Another op's attribute of the same name is not a type.
  ops::Attrs other = ops::Attrs().set_int("to", 7);
  importers::translate_dtype_codes("fmt", table, codes, "Clip", other, {"node c"});
  CHECK(other.get_int("to") == 7);
  // Undefined means "not given" only where the table says so.
  ops::Attrs q = ops::Attrs().set_int("out", 0);
  importers::translate_dtype_codes("fmt", table, codes, "Quantize", q, {"node q"});
  CHECK(!q.has("out"));
  ops::Attrs c0 = ops::Attrs().set_int("to", 0);
  auto [id0, msg0] = error_of([&] { importers::translate_dtype_codes("fmt", table, codes, "Cast", c0, {"node c"}); });
  CHECK(id0 == "nnvm.fmt.unsupported");
  ops::Attrs bad = ops::Attrs().set_int("to", 17);
  auto [id, msg] = error_of([&] { importers::translate_dtype_codes("fmt", table, codes, "Cast", bad, {"node c"}); });
  CHECK(id == "nnvm.fmt.unsupported");
  CHECK(msg == "Cast attribute 'to' is data type CODE17, which nnvm does not support");
  ops::Attrs text = ops::Attrs().set_string("to", "FLOAT");
  CHECK(error_of([&] { importers::translate_dtype_codes("fmt", table, codes, "Cast", text, {"node c"}); }).first ==
        "nnvm.fmt.attribute");
}

TEST_CASE("importers: the support report lists every gap on its own line") {
  importers::SupportReport r{.format = "ONNX", .default_domain = "ai.onnx"};
  r.ir_version = 8;
  r.opsets = {{"", 17}, {"com.microsoft", 1}};
  r.op_counts = {{"Relu", 2}};
  CHECK(r.supported());
  CHECK(r.to_string() == "ONNX model: ir_version 8, opsets ai.onnx=17 com.microsoft=1; ops: Relu x2\n"
                         "everything is supported");
  r.items.push_back({.node = "n\x01", .op = "Foo", .domain = "x", .opset = 1, .dtypes = "X: FLOAT", .reason = "why"});
  CHECK(!r.supported());
  CHECK(r.to_string().ends_with("1 unsupported:\n  'n\\x01' (x:Foo, opset 1) [X: FLOAT] why"));
}

TEST_CASE("importers: read_regular_file refuses what is not a small regular file") {
  TempDir d;
  d.write("m.bin", "abcdef");
  CHECK(importers::read_regular_file("fmt", (d.path / "m.bin").string(), 6) == "abcdef");
  auto [id, msg] = error_of([&] { importers::read_regular_file("fmt", (d.path / "m.bin").string(), 5, "hint"); });
  CHECK(id == "nnvm.fmt.file");
  CHECK(msg == "the file is 6 bytes, over the limit of 5 bytes (hint)");
  CHECK(error_of([&] { importers::read_regular_file("fmt", d.path.string(), 100); }).second == "not a regular file");
  REQUIRE(::mkfifo((d.path / "fifo").c_str(), 0600) == 0);
  CHECK(error_of([&] { importers::read_regular_file("fmt", (d.path / "fifo").string(), 100); }).second ==
        "not a regular file");
  CHECK(error_of([&] { importers::read_regular_file("fmt", (d.path / "none").string(), 100); }).first == "nnvm.fmt.file");
  CHECK(importers::directory_of("model.onnx") == ".");
  CHECK(importers::directory_of("a/b/model.onnx") == "a/b");
}

TEST_CASE("importers: read_confined reads a byte range below the model's directory only") {
  TempDir d;
  d.write("w/weights.bin", "0123456789");
  d.write("outside.bin", "secret");
  fs::create_directories(d.path / "model");
  fs::create_symlink(d.path / "w", d.path / "model" / "link");
  fs::create_directories(d.path / "model" / "w");
  std::ofstream(d.path / "model" / "w" / "weights.bin") << "0123456789";
  const std::string base = (d.path / "model").string();
  auto read = [&](importers::ConfinedRange r, uint64_t bytes) {
    std::string out(bytes, '?');
    importers::read_confined("fmt", base, r, bytes, {"tensor W"}, [&] { return static_cast<void*>(out.data()); });
    return out;
  };
  CHECK(read({.location = "w/weights.bin", .offset = 2, .length = 3}, 3) == "234");
  CHECK(read({.location = "./w//weights.bin", .offset = 6}, 4) == "6789");
  auto message = [&](importers::ConfinedRange r, uint64_t bytes) {
    auto [id, msg] = error_of([&] { read(r, bytes); });
    CHECK(id == "nnvm.fmt.external_data");
    return msg;
  };
  CHECK(message({.location = "../outside.bin"}, 6) == "location '../outside.bin' leaves the model's directory ('..' is not allowed)");
  CHECK(message({.location = (d.path / "outside.bin").string()}, 6).ends_with("is absolute; it must be relative to the model's directory"));
  CHECK(message({.location = "link/weights.bin"}, 10) == "location 'link/weights.bin' goes through the symbolic link 'link'");
  CHECK(message({.location = "w/weights.bin", .offset = 11}, 1) ==
        "offset 11 lies beyond the end of 'w/weights.bin' (10 bytes)");
  CHECK(message({.location = "w/weights.bin", .offset = 8, .length = 3}, 3) ==
        "offset 8 + length 3 lies beyond the end of 'w/weights.bin' (10 bytes)");
  CHECK(message({.location = "w/weights.bin"}, 4) == "external data holds 10 bytes but the tensor's shape and type need 4");
  CHECK(message({.location = "w"}, 4) == "location 'w' is not a regular file");
  fs::create_hard_link(d.path / "model" / "w" / "weights.bin", d.path / "model" / "alias.bin");
  CHECK(message({.location = "alias.bin"}, 10) == "location 'alias.bin' has 2 hard links; external data must have one");
  // Nothing is allocated before every check has passed.
  bool asked = false;
  CHECK(error_of([&] {
          importers::read_confined("fmt", base, {.location = "w/weights.bin"}, 1 << 20, {}, [&]() -> void* {
            asked = true;
            return nullptr;
          });
        }).first == "nnvm.fmt.external_data");
  CHECK(!asked);
}

}  // namespace importers_importer_common
