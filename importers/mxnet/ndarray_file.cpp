// MXNet's NDArray file format (what NDArray::Save writes for a list, in MXNet 1.x):
//
//   uint64 0x112 (list magic), uint64 reserved,
//   uint64 count, then per array:
//     uint32 magic: 0xF993FACA (v3, NumPy shape semantics), 0xF993FAC9 (v2), 0xF993FAC8 (v1),
//                   or, in files older than v1, the rank itself (then uint32 extents follow)
//     v2/v3: int32 storage type (0 = dense)
//     shape: int32 rank, then rank int64 extents. An absent array (v2: rank 0 or an extent 0,
//            which meant "unknown"; v3: rank -1) ends here.
//     int32 device type, int32 device id, int32 element type (mshadow's type flag), the data
//   uint64 key count, then per key uint64 length and its bytes (none for a saved list).
//
// Every count, rank, extent and length is checked against the bytes that remain before anything
// is allocated, so a hostile file costs at most its own size.
#include <algorithm>
#include <cstring>
#include <optional>

#include "nnvm/importers/error_context.hpp"
#include "nnvm/importers/files.hpp"
#include "nnvm/limits.hpp"
#include "nnvm/mxnet/importer.hpp"
#include "type_flags.hpp"

NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993FAC8u, kV2Magic = 0xF993FAC9u, kV3Magic = 0xF993FACAu;

// A little-endian reader over the file's bytes that refuses to read past the end.
class Cursor {
 public:
  Cursor(const std::string& bytes, std::vector<std::string> where) : bytes_(bytes), where_(std::move(where)) {}

  template <class T>
  T read(const char* what) {
    T v;
    std::memcpy(&v, take(sizeof(T), what), sizeof(T));
    return v;
  }
  const char* take(uint64_t n, const char* what) {
    if (n > remaining())
      fail(str_cat("the file ends inside ", what, " (", n, " bytes needed at offset ", pos_, ", ", remaining(),
                   " left)"));
    const char* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  uint64_t remaining() const { return bytes_.size() - pos_; }
  uint64_t offset() const { return pos_; }
  void set_where(std::vector<std::string> where) { where_ = std::move(where); }
  [[noreturn]] void fail(const std::string& message) const { throw ImportError("nnvm.mxnet.params", message, where_); }

 private:
  const std::string& bytes_;
  uint64_t pos_ = 0;
  std::vector<std::string> where_;
};

// One array; `has` is false for an absent (none) array.
struct ReadArray {
  bool has = false;
  NDArray data;
};

std::vector<int64_t> read_extents(Cursor& c, int64_t rank, bool uint32_extents) {
  const uint64_t width = uint32_extents ? 4 : 8;
  if (rank < 0 || uint64_t(rank) > c.remaining() / width)
    c.fail(str_cat("an array's rank ", rank, " does not fit in the ", c.remaining(), " bytes left"));
  std::vector<int64_t> shape(static_cast<size_t>(rank));
  for (auto& e : shape) {
    e = uint32_extents ? int64_t(c.read<uint32_t>("an extent")) : c.read<int64_t>("an extent");
    if (e < 0) c.fail(str_cat("an array has the negative extent ", e));
  }
  return shape;
}

ReadArray read_array(Cursor& c) {
  const uint32_t magic = c.read<uint32_t>("an array's header");
  std::vector<int64_t> shape;
  bool none = false;
  if (magic == kV2Magic || magic == kV3Magic) {
    int32_t stype = c.read<int32_t>("the storage type");
    if (stype != 0)
      c.fail(str_cat("the array is sparse (storage type ", stype, "); only dense arrays are supported"));
    int32_t rank = c.read<int32_t>("the rank");
    if (magic == kV3Magic && rank == -1) return {};
    shape = read_extents(c, rank, false);
    // Before NumPy semantics, rank 0 and extent 0 meant "unknown": the array is absent.
    if (magic == kV2Magic) none = rank == 0 || std::count(shape.begin(), shape.end(), 0) > 0;
  } else if (magic == kV1Magic) {
    shape = read_extents(c, c.read<int32_t>("the rank"), false);
    none = shape.empty();
  } else {
    if (magic > 32)
      c.fail(str_cat("an array starts with 0x", std::hex, magic, std::dec,
                     ", which is neither an NDArray magic number nor a rank; is this an MXNet file?"));
    shape = read_extents(c, int64_t(magic), true);  // before v1 the header was the rank
    none = shape.empty();
  }
  if (none) return {};
  c.read<int32_t>("the device type");
  c.read<int32_t>("the device id");
  const int32_t flag = c.read<int32_t>("the element type");
  std::optional<DataType> dtype = dtype_of_type_flag(flag);
  if (!dtype) c.fail(str_cat("the element type code ", flag, " is not one nnvm reads"));
  std::optional<uint64_t> bytes = checked_tensor_bytes(shape, uint64_t(dtype->bytes()));
  if (!bytes || *bytes > c.remaining())
    c.fail(str_cat("an array of ", shape.size(), " dimensions needs ", bytes ? str_cat(*bytes, " bytes") : "over 2^48 bytes",
                   " but ", c.remaining(), " remain"));
  const char* src = c.take(*bytes, "the array's data");
  ReadArray out{true, NDArray(*dtype, shape)};
  if (*bytes) std::memcpy(out.data.raw(), src, *bytes);
  return out;
}

}  // namespace

std::vector<NamedArray> read_ndarray_file(const std::string& path, uint64_t max_bytes) {
  const std::vector<std::string> file{"file " + printable(path)};
  return importers::with_context("mxnet", file, [&] {
    std::string bytes = importers::read_regular_file("mxnet", path, max_bytes);
    Cursor c(bytes, file);
    if (c.read<uint64_t>("the file header") != kListMagic)
      c.fail("the file does not start with MXNet's NDArray list magic number 0x112");
    c.read<uint64_t>("the file header");
    const uint64_t count = c.read<uint64_t>("the array count");
    if (count > c.remaining() / 4) c.fail(str_cat("the file claims ", count, " arrays in ", c.remaining(), " bytes"));
    std::vector<ReadArray> arrays;
    for (uint64_t i = 0; i < count; ++i) {
      c.set_where({file[0], str_cat("array ", i, " (at byte ", c.offset(), ")")});
      arrays.push_back(read_array(c));
    }
    c.set_where(file);
    const uint64_t keys = c.read<uint64_t>("the key count");
    if (keys != 0 && keys != count) c.fail(str_cat("the file holds ", count, " arrays but ", keys, " names"));
    std::vector<NamedArray> out(arrays.size());
    for (uint64_t i = 0; i < keys; ++i) {
      const uint64_t length = c.read<uint64_t>("a name's length");
      out[i].name.assign(c.take(length, "a name"), length);
    }
    if (c.remaining() != 0) c.fail(str_cat(c.remaining(), " bytes follow the last name"));
    for (size_t i = 0; i < arrays.size(); ++i) {
      if (!arrays[i].has)
        throw ImportError("nnvm.mxnet.params",
                          str_cat("array ", i, " has no shape (an uninitialized parameter was saved)"),
                          {file[0], "array " + printable(out[i].name)});
      out[i].data = std::move(arrays[i].data);
    }
    return out;
  });
}

}  // namespace mxnet_import
NNVM_END_NAMESPACE
