#include "model_file.hpp"

#include <zip.h>

#include <cstring>

#include "nnvm/importers/files.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

namespace {

// A zip archive held in memory, read with libzip.
class ZipReader {
 public:
  ZipReader(const std::string& bytes, std::string label) : label_(std::move(label)) {
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
    if (source) archive_ = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (!archive_) {
      std::string why = zip_error_strerror(&error);
      if (source) zip_source_free(source);
      zip_error_fini(&error);
      throw ImportError("nnvm.keras.file", str_cat("not a readable .keras archive (zip: ", why, ")"), {label_});
    }
    zip_error_fini(&error);
  }
  ~ZipReader() {
    if (archive_) zip_discard(archive_);
  }
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  bool has(const std::string& name) const { return zip_name_locate(archive_, name.c_str(), 0) >= 0; }

  // Member `name`, inflated; its recorded size is checked against `max_bytes` first, and the
  // bytes read must match it (a member that inflates to more or fails its CRC is refused).
  std::string read(const std::string& name, uint64_t max_bytes, const std::string& limit_hint) const {
    const std::vector<std::string> where{label_, "member " + printable(name)};
    zip_int64_t index = zip_name_locate(archive_, name.c_str(), 0);
    if (index < 0) throw ImportError("nnvm.keras.file", "the archive has no such member", where);
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(archive_, zip_uint64_t(index), 0, &st) < 0 || !(st.valid & ZIP_STAT_SIZE))
      throw ImportError("nnvm.keras.file", "the member's size cannot be read", where);
    if (st.size > max_bytes)
      throw ImportError("nnvm.keras.too_large",
                        str_cat("the member inflates to ", st.size, " bytes, over the limit of ", max_bytes, limit_hint),
                        where);
    zip_file_t* f = zip_fopen_index(archive_, zip_uint64_t(index), 0);
    if (!f) throw ImportError("nnvm.keras.file", str_cat("cannot open the member (zip: ", zip_strerror(archive_), ")"), where);
    std::string out(size_t(st.size), '\0');
    zip_uint64_t got = 0;
    char extra;
    bool ok = true;
    while (got < st.size) {
      zip_int64_t n = zip_fread(f, out.data() + got, st.size - got);
      if (n <= 0) {
        ok = false;
        break;
      }
      got += zip_uint64_t(n);
    }
    if (ok && zip_fread(f, &extra, 1) != 0) ok = false;  // more data than recorded, or a CRC error
    std::string why = ok ? "" : zip_file_strerror(f);
    zip_fclose(f);
    if (!ok) throw ImportError("nnvm.keras.file", str_cat("the member is damaged (zip: ", why, ")"), where);
    return out;
  }

 private:
  std::string label_;
  zip_t* archive_ = nullptr;
};

bool starts_with(const std::string& bytes, const char* magic, size_t n) {
  return bytes.size() >= n && std::memcmp(bytes.data(), magic, n) == 0;
}

// Keras 3's `"keras_version": "3.15.1"` from metadata.json, without a JSON parser here: the
// value is only reported.
std::string metadata_version(const std::string& metadata) {
  const std::string key = "\"keras_version\"";
  size_t at = metadata.find(key);
  if (at == std::string::npos) return "";
  size_t open = metadata.find('"', metadata.find(':', at + key.size()));
  size_t close = open == std::string::npos ? open : metadata.find('"', open + 1);
  if (close == std::string::npos || close - open > 64) return "";
  return metadata.substr(open + 1, close - open - 1);
}

}  // namespace

ModelFile open_model_file(const std::string& path, const ImportOptions& options) {
  ModelFile m;
  m.label = "file " + printable(path);
  std::string bytes = importers::read_regular_file("keras", path, options.max_model_bytes,
                                                   "; raise ImportOptions::max_model_bytes");
  if (starts_with(bytes, "PK\x03\x04", 4)) {
    ZipReader zip(bytes, m.label);
    if (!zip.has("config.json"))
      throw ImportError("nnvm.keras.file", "the zip archive has no config.json: not a Keras 3 .keras model", {m.label});
    m.config_json = zip.read("config.json", options.max_config_bytes, "; raise ImportOptions::max_config_bytes");
    if (zip.has("metadata.json")) m.keras_version = metadata_version(zip.read("metadata.json", 1 << 16, ""));
    if (zip.has("model.weights.h5")) {
      std::string weights = zip.read("model.weights.h5", options.max_model_bytes, "; raise ImportOptions::max_model_bytes");
      m.weights = std::make_unique<H5File>(weights, m.label + " › model.weights.h5", options.max_weight_bytes);
    }
    return m;
  }
  if (starts_with(bytes, "\x89HDF\r\n\x1a\n", 8)) {
    m.legacy_h5 = true;
    m.weights = std::make_unique<H5File>(bytes, m.label, options.max_weight_bytes);
    bytes.clear();
    auto config = m.weights->string_attribute("/", "model_config");
    if (!config)
      throw ImportError("nnvm.keras.file",
                        "the HDF5 file has no model_config attribute: a weights-only file (save_weights), not a "
                        "full model; nnvm needs the model's configuration too",
                        {m.label});
    if (config->size() > options.max_config_bytes)
      throw ImportError("nnvm.keras.too_large", "model_config is over ImportOptions::max_config_bytes", {m.label});
    m.config_json = std::move(*config);
    m.keras_version = m.weights->string_attribute("/", "keras_version").value_or("");
    return m;
  }
  throw ImportError("nnvm.keras.file", "neither a .keras archive (zip) nor an HDF5 .h5 model (checked by content)",
                    {m.label});
}

}  // namespace keras_import
NNVM_END_NAMESPACE
