#include "model_file.hpp"

#include "context.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <limits>

#include <google/protobuf/stubs/logging.h>
#include <nlohmann/json.hpp>

#include "nnvm/importers/files.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

[[noreturn]] void file_error(const std::string& label, const std::string& why) {
  throw ImportError("nnvm.coreml.file", why, {label});
}

bool is_directory(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The root model's path inside a package, from Manifest.json: rootModelIdentifier names an
// entry of itemInfoEntries whose "path" is relative to the package's Data directory.
std::string root_model_path(const std::string& package) {
  const std::string manifest_path = package + "/Manifest.json";
  const std::string label = "file " + printable(manifest_path);
  const std::string text = importers::read_regular_file("coreml", manifest_path, 16u << 20);
  nlohmann::json m = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object()) file_error(label, "Manifest.json is not a JSON object");
  auto root = m.find("rootModelIdentifier");
  auto entries = m.find("itemInfoEntries");
  if (root == m.end() || !root->is_string() || entries == m.end() || !entries->is_object())
    file_error(label, "Manifest.json lacks rootModelIdentifier or itemInfoEntries");
  auto item = entries->find(root->get<std::string>());
  if (item == entries->end() || !item->is_object())
    file_error(label, str_cat("rootModelIdentifier ", quote(root->get<std::string>()),
                              " names no entry of itemInfoEntries"));
  auto path = item->find("path");
  if (path == item->end() || !path->is_string()) file_error(label, "the root model's entry has no path");
  const std::string rel = path->get<std::string>();
  // The path stays inside the package's Data directory: no absolute path, no "..".
  if (rel.empty() || rel.front() == '/' || rel.find('\0') != std::string::npos)
    file_error(label, str_cat("the root model's path ", quote(rel), " is not a relative path"));
  for (auto& part : std::filesystem::path(rel))
    if (part == "..") file_error(label, str_cat("the root model's path ", quote(rel), " leaves the package"));
  return package + "/Data/" + rel;
}

std::string stem_of(const std::string& path) {
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();  // "model.mlpackage/"
  return p.stem().string();
}

}  // namespace

ModelFile open_model(const std::string& path, const ImportOptions& options) {
  ModelFile f;
  f.label = "file " + printable(path);
  f.name = stem_of(path);
  std::string model_path = path;
  if (is_directory(path)) model_path = root_model_path(path);
  f.model_dir = importers::directory_of(model_path);
  const std::string bytes = importers::read_regular_file("coreml", model_path, options.max_model_bytes,
                                                         "; raise ImportOptions::max_model_bytes");
  if (bytes.size() > size_t(std::numeric_limits<int>::max()))
    file_error(f.label, "the model file is larger than protobuf can parse (2 GiB)");
  // protobuf logs each malformed string it meets to stderr; the ImportError says it instead.
  google::protobuf::LogSilencer quiet;
  if (!f.spec.ParseFromString(bytes))
    file_error(f.label, str_cat(printable(model_path), " is not a Core ML model (protobuf parsing failed)"));
  return f;
}

std::string model_kind(const nnvm_coreml_spec::Model& spec) {
  const auto* field = spec.GetDescriptor()->FindFieldByNumber(int(spec.Type_case()));
  return field ? field->name() : "empty";
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
