#include "h5_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "nnvm/limits.hpp"

NNVM_BEGIN_NAMESPACE
namespace keras_import {

namespace {

std::mutex& hdf5_lock() {
  static std::mutex m;
  return m;
}

// Closes an HDF5 handle of any kind when it goes out of scope.
class Handle {
 public:
  explicit Handle(hid_t id = H5I_INVALID_HID) : id_(id) {}
  ~Handle() {
    if (id_ >= 0) H5Idec_ref(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
};

std::string object_name(const std::string& path) { return path.empty() || path == "/" ? "the file's root" : "'" + printable(path) + "'"; }

// Whether every component of `path` exists, checked link by link (H5Lexists on a path whose
// parent is missing is an error, not false).
bool path_exists(hid_t file, const std::string& path) {
  if (path.empty() || path == "/") return true;
  std::string prefix;
  size_t start = path[0] == '/' ? 1 : 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part.empty()) return false;
    prefix += (prefix.empty() ? "" : "/") + part;
    if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return H5Oexists_by_name(file, path.c_str(), H5P_DEFAULT) > 0;
}

}  // namespace

H5File::H5File(const std::string& bytes, std::string label, uint64_t max_dataset_bytes)
    : label_(std::move(label)), max_dataset_bytes_(max_dataset_bytes) {
  std::lock_guard lock(hdf5_lock());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (bytes.size() < 8 || std::memcmp(bytes.data(), "\x89HDF\r\n\x1a\n", 8) != 0)
    fail("nnvm.keras.file", "not an HDF5 file (no HDF5 signature at its start)", {});
  Handle fapl(H5Pcreate(H5P_FILE_ACCESS));
  // The core driver keeps the file in memory; the image is copied in, so `bytes` may go away.
  if (!fapl.ok() || H5Pset_fapl_core(fapl.get(), 1 << 16, false) < 0 ||
      H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()) < 0)
    fail("nnvm.keras.file", "HDF5 could not take the file image", {});
  file_ = H5Fopen("nnvm-keras-image.h5", H5F_ACC_RDONLY, fapl.get());
  if (file_ < 0) fail("nnvm.keras.file", "HDF5 cannot open the file (damaged or truncated)", {});
}

H5File::~H5File() {
  std::lock_guard lock(hdf5_lock());
  if (file_ >= 0) H5Fclose(file_);
}

void H5File::fail(const std::string& id, const std::string& what, const std::vector<std::string>& where) const {
  std::vector<std::string> at{label_};
  at.insert(at.end(), where.begin(), where.end());
  throw ImportError(id, what, at);
}

bool H5File::exists(const std::string& path) const {
  std::lock_guard lock(hdf5_lock());
  return path_exists(file_, path);
}

bool H5File::is_group(const std::string& path) const {
  std::lock_guard lock(hdf5_lock());
  if (!path_exists(file_, path)) return false;
  H5O_info_t info;
  if (H5Oget_info_by_name(file_, path.empty() ? "/" : path.c_str(), &info, H5P_DEFAULT) < 0) return false;
  return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> H5File::children(const std::string& group) const {
  std::lock_guard lock(hdf5_lock());
  if (!path_exists(file_, group)) fail("nnvm.keras.weights", str_cat("the group ", object_name(group), " is missing"), {});
  Handle g(H5Gopen2(file_, group.empty() ? "/" : group.c_str(), H5P_DEFAULT));
  if (!g.ok()) fail("nnvm.keras.weights", str_cat(object_name(group), " is not a group"), {});
  H5G_info_t info;
  if (H5Gget_info(g.get(), &info) < 0) fail("nnvm.keras.file", str_cat("cannot list ", object_name(group)), {});
  std::vector<std::string> names;
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    ssize_t n = H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT);
    if (n < 0 || n > 65536) fail("nnvm.keras.file", str_cat("cannot read a member name of ", object_name(group)), {});
    std::string name(size_t(n), '\0');
    H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, k, name.data(), size_t(n) + 1, H5P_DEFAULT);
    names.push_back(std::move(name));
  }
  return names;
}

std::vector<std::string> H5File::string_list_attribute(const std::string& path, const std::string& name) const {
  std::lock_guard lock(hdf5_lock());
  const std::vector<std::string> where{"attribute " + printable(name) + " of " + object_name(path)};
  if (!path_exists(file_, path)) fail("nnvm.keras.file", str_cat(object_name(path), " is missing"), {});
  const char* object = path.empty() ? "/" : path.c_str();
  if (H5Aexists_by_name(file_, object, name.c_str(), H5P_DEFAULT) <= 0) return {};
  Handle attr(H5Aopen_by_name(file_, object, name.c_str(), H5P_DEFAULT, H5P_DEFAULT));
  Handle type(H5Aget_type(attr.get())), space(H5Aget_space(attr.get()));
  if (!attr.ok() || !type.ok() || !space.ok()) fail("nnvm.keras.file", "cannot open the attribute", where);
  hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (count < 0 || count > (1 << 20)) fail("nnvm.keras.file", "the attribute's element count is invalid", where);
  if (H5Tget_class(type.get()) != H5T_STRING) {
    if (count == 0) return {};  // h5py writes an empty list as an empty float array
    fail("nnvm.keras.file", "the attribute is not a string", where);
  }
  std::vector<std::string> out;
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle mem(H5Tcopy(H5T_C_S1));
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    std::vector<char*> ptrs(size_t(count), nullptr);
    if (H5Aread(attr.get(), mem.get(), ptrs.data()) < 0) fail("nnvm.keras.file", "cannot read the attribute", where);
    for (char* p : ptrs) out.emplace_back(p ? p : "");
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, ptrs.data());
    return out;
  }
  size_t width = H5Tget_size(type.get());
  if (width == 0 || width > (64u << 20) || uint64_t(width) * uint64_t(count) > (256u << 20))
    fail("nnvm.keras.file", "the attribute's string size is invalid", where);
  std::vector<char> buffer(width * size_t(count));
  if (H5Aread(attr.get(), type.get(), buffer.data()) < 0) fail("nnvm.keras.file", "cannot read the attribute", where);
  for (hssize_t k = 0; k < count; ++k) {
    const char* s = buffer.data() + size_t(k) * width;
    out.emplace_back(s, strnlen(s, width));  // fixed-length strings are NUL-padded
  }
  return out;
}

std::optional<std::string> H5File::string_attribute(const std::string& path, const std::string& name) const {
  {
    std::lock_guard lock(hdf5_lock());
    if (!path_exists(file_, path) ||
        H5Aexists_by_name(file_, path.empty() ? "/" : path.c_str(), name.c_str(), H5P_DEFAULT) <= 0)
      return std::nullopt;
  }
  std::vector<std::string> v = string_list_attribute(path, name);
  if (v.size() != 1)
    fail("nnvm.keras.file", str_cat("the attribute holds ", v.size(), " strings, not one"),
         {"attribute " + printable(name) + " of " + object_name(path)});
  return v[0];
}

NDArray H5File::dataset(const std::string& path, const std::vector<std::string>& where_in) const {
  std::lock_guard lock(hdf5_lock());
  std::vector<std::string> where = where_in;
  where.push_back("dataset " + object_name(path));
  if (!path_exists(file_, path)) fail("nnvm.keras.weights", "the dataset is missing", where);
  Handle d(H5Dopen2(file_, path.c_str(), H5P_DEFAULT));
  if (!d.ok()) fail("nnvm.keras.weights", "not a dataset", where);
  Handle type(H5Dget_type(d.get())), space(H5Dget_space(d.get()));
  if (!type.ok() || !space.ok()) fail("nnvm.keras.file", "cannot read the dataset's type or shape", where);
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 32) fail("nnvm.keras.file", str_cat("the dataset's rank ", rank, " is invalid"), where);
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail("nnvm.keras.file", "cannot read the dataset's extents", where);
  std::vector<int64_t> shape;
  for (hsize_t e : dims) {
    if (e > (uint64_t(1) << 48)) fail("nnvm.keras.file", str_cat("extent ", e, " is too large"), where);
    shape.push_back(int64_t(e));
  }
  DataType dtype;
  hid_t mem_type;
  switch (H5Tget_class(type.get())) {
    case H5T_FLOAT:
      dtype = H5Tget_size(type.get()) == 8 ? dtype::float64 : dtype::float32;
      mem_type = dtype == dtype::float64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
      break;
    case H5T_INTEGER:
      dtype = dtype::int64;
      mem_type = H5T_NATIVE_INT64;
      break;
    default:
      fail("nnvm.keras.weights", "the dataset is not numeric", where);
  }
  auto bytes = checked_tensor_bytes(shape, uint64_t(dtype.bytes()));
  if (!bytes || *bytes > max_dataset_bytes_)
    fail("nnvm.keras.too_large", str_cat("the dataset's ", bytes ? *bytes : 0, " bytes are over the limit of ",
                                         max_dataset_bytes_, " (ImportOptions::max_weight_bytes)"),
         where);
  NDArray out(dtype, shape);
  if (out.numel() > 0 && H5Dread(d.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.raw()) < 0)
    fail("nnvm.keras.file", "HDF5 cannot read the dataset's data (damaged or truncated file)", where);
  return out;
}

}  // namespace keras_import
NNVM_END_NAMESPACE
