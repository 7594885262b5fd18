#include "session.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "nnvm/limits.hpp"

#if NNVMC_WITH_LLVM
#include "nnvm/codegen/llvm_graph.hpp"
#endif
#if NNVMC_WITH_MXNET
#include "nnvm/mxnet/importer.hpp"
#endif
#if NNVMC_WITH_KERAS
#include "nnvm/keras/importer.hpp"
#endif
#if NNVMC_WITH_COREML
#include "nnvm/coreml/importer.hpp"
#endif

namespace nnvmc {

#if NNVMC_WITH_LLVM
constexpr bool kWithLlvm = true;
#else
constexpr bool kWithLlvm = false;
#endif

std::vector<std::string> available_targets() {
  std::vector<std::string> all = {"host", "c"};
  if (kWithLlvm) all.push_back("llvm");
  all.insert(all.end(), {"c-standalone", "wasm"});
#if NNVMC_WITH_OPENCL
  all.push_back("opencl");
#endif
  all.insert(all.end(), {"cuda", "metal"});  // compile writes their source; nothing runs them here
  return all;
}

nv::target::Target parse_target(const std::string& spec) {
  // "host" means the LLVM back end when nnvmc was built with it, else the C compiler.
  std::string words = spec;
  size_t start = words.find_first_not_of(' ');
  if (start != std::string::npos && words.compare(start, 4, "host") == 0 &&
      (words.size() == start + 4 || words[start + 4] == ' '))
    words.replace(start, 4, kWithLlvm ? "llvm" : "c");
  nv::target::Target t = nv::target::parse_target(words);
  auto all = available_targets();
  std::string name = nv::target::emitter_name(t.emitter);
  if (std::find(all.begin(), all.end(), name) == all.end()) {
    std::string known;
    for (auto& k : all) known += (known.empty() ? "" : ", ") + k;
    std::string why = t.emitter == nv::target::Emitter::llvm
                          ? "this nnvmc was built without LLVM"
                          : "the " + name + " back end is not built yet (" + nv::target::family_name(t.family) +
                                " family; the target parses, but nnvm does not emit it)";
    throw nv::UserError("nnvm.cli.target", "--target '" + nv::printable(spec) + "': " + why + "; available: " + known +
                                               ", each optionally with -mcpu=NAME");
  }
  return t;
}

std::string resolve_target(const std::string& spec) { return nv::target::to_string(parse_target(spec)); }

std::pair<std::string, std::vector<int64_t>> parse_input_shape(const std::string& s) {
  auto bad = [&](const std::string& why) -> std::pair<std::string, std::vector<int64_t>> {
    throw nv::UserError("nnvm.cli.input_shape",
                        "--input-shape '" + s + "': " + why + " (expected name:1x3x224x224)");
  };
  size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) return bad("no input name");
  std::vector<int64_t> dims;
  std::string rest = s.substr(colon + 1);
  size_t pos = 0;
  while (pos <= rest.size()) {
    size_t x = rest.find('x', pos);
    std::string part = rest.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos)
      return bad("extent '" + nv::printable(part) + "' is not a non-negative number");
    // 18 digits always fit in int64; the element-count check below bounds the product.
    if (part.size() > 18) return bad("extent '" + part + "' is too large");
    dims.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  // The element count alone (the input's dtype is not known yet) must stay within the tensor
  // bound; the importer checks the byte size once it knows the dtype.
  if (!nv::checked_tensor_bytes(dims, 1)) return bad("the shape has more than 2^48 elements");
  return {s.substr(0, colon), dims};
}

std::pair<std::string, int64_t> parse_symbol(const std::string& s) {
  size_t eq = s.find('=');
  std::string value = eq == std::string::npos ? "" : s.substr(eq + 1);
  if (eq == 0 || eq == std::string::npos || value.empty() ||
      value.find_first_not_of("0123456789") != std::string::npos || value.size() > 12)
    throw nv::UserError("nnvm.cli.symbol", "--define-symbol '" + s + "': expected NAME=non-negative number");
  return {s.substr(0, eq), std::stoll(value)};
}

nv::onnx_import::ImportOptions import_options(const Options& o) {
  nv::onnx_import::ImportOptions io;
  for (auto& s : o.input_shapes) io.input_shapes.insert(parse_input_shape(s));
  for (auto& s : o.symbols) io.symbols.insert(parse_symbol(s));
  return io;
}

ModelFormat model_format(const std::string& path) {
  std::string name = path;  // an .mlpackage is a folder: "model.mlpackage/" counts too
  while (name.size() > 1 && name.back() == '/') name.pop_back();
  std::string ext = std::filesystem::path(name).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".json") return ModelFormat::mxnet;
  if (ext == ".keras" || ext == ".h5" || ext == ".hdf5") return ModelFormat::keras;
  if (ext == ".mlmodel" || ext == ".mlpackage") return ModelFormat::coreml;
  return ModelFormat::onnx;
}

// MXNet, Keras and Core ML models: input shapes may be set; they have no symbolic extents.
[[maybe_unused]] static std::map<std::string, std::vector<int64_t>> fixed_input_shapes(const Options& o, const char* format) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (auto& s : o.input_shapes) shapes.insert(parse_input_shape(s));
  if (!o.symbols.empty())
    throw nv::UserError("nnvm.cli.symbol",
                        std::string("--define-symbol: ") + format + " models have no symbolic extents; use --input-shape");
  return shapes;
}

#if NNVMC_WITH_MXNET
// MXNet saves "<prefix>-symbol.json" beside "<prefix>-<epoch>.params" (0000 for an export);
// --params names the file when the folder holds several epochs.
std::string mxnet_params(const std::string& symbol, const Options& o) {
  if (!o.params.empty()) return o.params;
  namespace fs = std::filesystem;
  std::string stem = fs::path(symbol).filename().string();
  stem = stem.substr(0, stem.size() - 5);
  if (stem.size() > 7 && stem.compare(stem.size() - 7, 7, "-symbol") == 0) stem.resize(stem.size() - 7);
  fs::path dir = fs::path(symbol).parent_path();
  std::vector<std::string> found;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir.empty() ? "." : dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(stem + "-", 0) == 0 && e.path().extension() == ".params") found.push_back(e.path().string());
  }
  std::sort(found.begin(), found.end());
  if (found.size() == 1) return found[0];
  if (found.empty())
    throw nv::UserError("nnvm.cli.params", "no " + stem + "-<epoch>.params beside '" + nv::printable(symbol) +
                                               "'; name the parameter file with --params");
  std::string all;
  for (auto& f : found) all += (all.empty() ? "" : ", ") + nv::printable(f);
  throw nv::UserError("nnvm.cli.params", "several parameter files match '" + nv::printable(symbol) + "' (" + all +
                                             "); choose one with --params");
}

nv::mxnet_import::ImportOptions mxnet_options(const Options& o) {
  nv::mxnet_import::ImportOptions mo;
  mo.input_shapes = fixed_input_shapes(o, "MXNet");
  return mo;
}
#endif

// A model whose importer this nnvmc was built without.
[[maybe_unused]] static nv::UserError no_importer(const std::string& path, const char* format, const char* packages) {
  return nv::UserError("nnvm.cli.model", "'" + nv::printable(path) + "' is " + format +
                                             " model, but this nnvmc was built without that importer (it needs " +
                                             packages + ")");
}

#if NNVMC_WITH_KERAS
nv::keras_import::ImportOptions keras_options(const Options& o) {
  nv::keras_import::ImportOptions ko;
  ko.input_shapes = fixed_input_shapes(o, "Keras");
  return ko;
}
#endif
#if NNVMC_WITH_COREML
nv::coreml_import::ImportOptions coreml_options(const Options& o) {
  nv::coreml_import::ImportOptions co;
  co.input_shapes = fixed_input_shapes(o, "Core ML");
  return co;
}
#endif

std::string onnx_file(const std::string& path) {
  return std::filesystem::is_directory(path) && std::filesystem::exists(path + "/model.onnx") ? path + "/model.onnx" : path;
}

nv::importers::SupportReport model_support(const std::string& path, [[maybe_unused]] const Options& o) {
  switch (model_format(path)) {
    case ModelFormat::mxnet:
#if NNVMC_WITH_MXNET
      return nv::mxnet_import::check_support(path, mxnet_options(o));
#else
      throw no_importer(path, "an MXNet", "nlohmann-json3-dev");
#endif
    case ModelFormat::keras:
#if NNVMC_WITH_KERAS
      return nv::keras_import::check_support(path, keras_options(o));
#else
      throw no_importer(path, "a Keras", "libhdf5-dev libzip-dev nlohmann-json3-dev");
#endif
    case ModelFormat::coreml:
#if NNVMC_WITH_COREML
      return nv::coreml_import::check_support(path, coreml_options(o));
#else
      throw no_importer(path, "a Core ML", "libprotobuf-dev protobuf-compiler nlohmann-json3-dev");
#endif
    case ModelFormat::onnx:
      break;
  }
  return nv::onnx_import::check_support(onnx_file(path), import_options(o));
}

nv::graph::Graph load_model(const std::string& path, const Options& o) {
  switch (model_format(path)) {
    case ModelFormat::mxnet:
#if NNVMC_WITH_MXNET
      return nv::mxnet_import::import_model(path, mxnet_params(path, o), mxnet_options(o));
#else
      throw no_importer(path, "an MXNet", "nlohmann-json3-dev");
#endif
    case ModelFormat::keras:
#if NNVMC_WITH_KERAS
      return nv::keras_import::import_model(path, keras_options(o));
#else
      throw no_importer(path, "a Keras", "libhdf5-dev libzip-dev nlohmann-json3-dev");
#endif
    case ModelFormat::coreml:
#if NNVMC_WITH_COREML
      return nv::coreml_import::import_model(path, coreml_options(o));
#else
      throw no_importer(path, "a Core ML", "libprotobuf-dev protobuf-compiler nlohmann-json3-dev");
#endif
    case ModelFormat::onnx:
      break;
  }
  return nv::onnx_import::import_model(onnx_file(path), import_options(o));
}

nv::graph::CompileOptions compile_options(const Options& o, std::map<std::string, double>* pass_ms) {
  nv::graph::CompileOptions co;
  co.target = parse_target(o.target);
  if (co.target.family == nv::target::Family::mcu)
    co.target.opt_for = o.opt_for == "speed" ? nv::target::OptFor::speed : nv::target::OptFor::size;
  co.opt_level = o.opt_level;
  // --define-symbol is bound once, by the importer (import_options): the graph it returns has
  // the numbers in place, so binding the names again here would find no such extent.
  co.lower.pass_ms = pass_ms;
  if (!o.print_ir_after.empty()) {
    std::string want = o.print_ir_after;
    auto names = nv::lower::pass_names();
    if (want != "all" && std::find(names.begin(), names.end(), want) == names.end()) {
      std::string known;
      for (auto& n : names) known += (known.empty() ? "" : ", ") + n;
      throw nv::UserError("nnvm.cli.pass", "--print-ir-after '" + want + "': no such pass; passes: " + known + ", all");
    }
    co.lower.on_pass = [want](const std::string& pass, const nv::ir::Stmt& s) {
      if (want == "all" || want == pass) std::cout << "// ---- after " << pass << "\n" << nv::ir::to_string(s) << "\n";
    };
  }
#if NNVMC_WITH_LLVM
  if (co.target.emitter == nv::target::Emitter::llvm) {
    nv::codegen::LlvmOptions lo;
    lo.cpu = co.target.cpu;
    co.compiler = nv::codegen::llvm_kernel_compiler(lo);
  }
#endif
  return co;
}

Progress::Progress(size_t total)
    : total_(total), tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void Progress::update(size_t done, const std::string& what) {
  if (!tty_) return;
  if (!shown_ && std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  shown_ = true;
  std::string line = "[" + std::to_string(done) + "/" + std::to_string(total_) + "] " + what;
  if (line.size() > 100) line.resize(100);
  std::cerr << "\r\033[K" << line << std::flush;
}

void Progress::finish() {
  if (shown_) std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace nnvmc
