#include "files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <map>

NNVM_BEGIN_NAMESPACE
namespace onnx_import::detail {

namespace {

// Closes a POSIX descriptor on scope exit.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void file_error(const std::string& path, const std::string& why) {
  throw ImportError("nnvm.onnx.file", why, {"file " + printable(path)});
}

// Reads exactly `bytes` bytes at `offset`; false on a short read or an I/O error.
bool read_at(int fd, void* dst, uint64_t bytes, uint64_t offset) {
  auto* p = static_cast<char*>(dst);
  while (bytes > 0) {
    size_t chunk = size_t(std::min<uint64_t>(bytes, uint64_t(1) << 30));
    ssize_t got = ::pread(fd, p, chunk, off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got, bytes -= uint64_t(got), offset += uint64_t(got);
  }
  return true;
}

std::string read_limited(const std::string& path, uint64_t max_bytes) {
  // Opening a FIFO blocks until a writer comes, so anything but a regular file is refused
  // before the open, and the open does not block in case the path changed in between.
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) file_error(path, str_cat("cannot open the file: ", std::strerror(errno)));
  if (!S_ISREG(before.st_mode)) file_error(path, "not a regular file");
  Fd f(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (f.fd < 0) file_error(path, str_cat("cannot open the file: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) file_error(path, "not a regular file");
  uint64_t size = uint64_t(st.st_size), limit = file_limit(max_bytes);
  // Checked before reading a byte: protobuf cannot parse 2 GiB and a hostile file could be huge.
  if (size > limit)
    file_error(path, str_cat("the file is ", size, " bytes, over the limit of ", limit,
                             " bytes (protobuf cannot parse 2 GiB or more; keep large weights in external data)"));
  std::string data(size, '\0');
  if (!read_at(f.fd, data.data(), size, 0)) file_error(path, "the file could not be read completely");
  return data;
}

template <class Message>
Message parse(const std::string& path, uint64_t max_bytes, const char* what) {
  std::string data = read_limited(path, max_bytes);
  Message m;
  if (!m.ParseFromArray(data.data(), int(data.size())))
    file_error(path, str_cat("not a valid ", what, " (protobuf could not parse it)"));
  return m;
}

[[noreturn]] void external_error(const std::vector<std::string>& where, const std::string& why) {
  throw ImportError("nnvm.onnx.external_data", why, where);
}

// A decimal external_data number ("offset", "length"): digits only, no overflow.
uint64_t parse_number(const std::string& key, const std::string& s, const std::vector<std::string>& where) {
  if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos)
    external_error(where, str_cat("external_data '", key, "' is '", printable(s), "', not a decimal byte count"));
  return std::stoull(s);
}

// Opens `location` below `base_dir` one component at a time with O_NOFOLLOW, so neither the file
// nor a parent directory can be a symbolic link, even one swapped in while we walk.
int open_confined(const std::string& base_dir, const std::string& location, const std::vector<std::string>& where) {
  auto bad = [&](const std::string& why) { external_error(where, str_cat("location '", printable(location), "' ", why)); };
  if (location.empty()) bad("is empty");
  if (location.find('\0') != std::string::npos) bad("contains a NUL character");
  if (location.front() == '/') bad("is absolute; it must be relative to the model's directory");
  if (location.find('\\') != std::string::npos) bad("contains '\\'; use '/' between directories");
  std::vector<std::string> parts;
  for (size_t start = 0; start <= location.size();) {
    size_t slash = std::min(location.find('/', start), location.size());
    std::string part = location.substr(start, slash - start);
    if (part == "..") bad("leaves the model's directory ('..' is not allowed)");
    if (!part.empty() && part != ".") parts.push_back(part);
    start = slash + 1;
  }
  if (parts.empty()) bad("names no file");
  Fd dir(::open(base_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd < 0) bad(str_cat("cannot be resolved: the model's directory cannot be opened (", std::strerror(errno), ")"));
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    struct stat st {};
    if (::fstatat(dir.fd, parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      bad(str_cat("cannot be opened: '", printable(parts[i]), "': ", std::strerror(errno)));
    if (S_ISLNK(st.st_mode)) bad(str_cat("goes through the symbolic link '", printable(parts[i]), "'"));
    // A FIFO or device would block the open or the read: only directories, then a regular file.
    if (last && !S_ISREG(st.st_mode)) bad("is not a regular file");
    if (!last && !S_ISDIR(st.st_mode)) bad(str_cat("goes through '", printable(parts[i]), "', which is not a directory"));
    int flags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (last ? 0 : O_DIRECTORY);
    int fd = ::openat(dir.fd, parts[i].c_str(), flags);
    if (fd < 0) bad(str_cat("cannot be opened: '", printable(parts[i]), "': ", std::strerror(errno)));
    if (last) return fd;
    Fd next(fd);
    std::swap(dir.fd, next.fd);
  }
  return -1;  // unreachable: parts is not empty
}

}  // namespace

uint64_t file_limit(uint64_t max_file_bytes) { return std::min<uint64_t>(max_file_bytes, uint64_t(INT_MAX)); }

::onnx::ModelProto load_model(const std::string& path, uint64_t max_bytes) {
  auto m = parse<::onnx::ModelProto>(path, max_bytes, "ONNX model");
  if (!m.has_graph()) file_error(path, "the model has no graph");
  return m;
}

::onnx::TensorProto load_tensor(const std::string& path, uint64_t max_bytes) {
  return parse<::onnx::TensorProto>(path, max_bytes, "ONNX TensorProto");
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

void read_external(const ::onnx::TensorProto& t, const std::string& base_dir, uint64_t bytes,
                   const std::vector<std::string>& where, const std::function<void*()>& destination) {
  std::map<std::string, std::string> keys;
  for (auto& kv : t.external_data()) {
    if (kv.key() != "location" && kv.key() != "offset" && kv.key() != "length" && kv.key() != "checksum")
      external_error(where, str_cat("unknown external_data key '", printable(kv.key()), "' (known: location, offset, length, checksum)"));
    if (!keys.emplace(kv.key(), kv.value()).second)
      external_error(where, str_cat("external_data key '", printable(kv.key()), "' appears twice"));
  }
  if (!keys.count("location")) external_error(where, "external data without a 'location' key");
  const std::string& location = keys["location"];
  uint64_t offset = keys.count("offset") ? parse_number("offset", keys["offset"], where) : 0;
  Fd f(open_confined(base_dir, location, where));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    external_error(where, str_cat("location '", printable(location), "' is not a regular file"));
  // A hard link could alias a file outside the directory that no path check would see.
  if (st.st_nlink > 1)
    external_error(where, str_cat("location '", printable(location), "' has ", st.st_nlink, " hard links; external data must have one"));
  uint64_t size = uint64_t(st.st_size);
  if (offset > size)
    external_error(where, str_cat("offset ", offset, " lies beyond the end of '", printable(location), "' (", size, " bytes)"));
  uint64_t length = keys.count("length") ? parse_number("length", keys["length"], where) : size - offset;
  if (length > size - offset)
    external_error(where, str_cat("offset ", offset, " + length ", length, " lies beyond the end of '", printable(location), "' (",
                                  size, " bytes)"));
  if (length != bytes)
    external_error(where, str_cat("external data holds ", length, " bytes but the tensor's shape and type need ", bytes));
  if (!read_at(f.fd, destination(), bytes, offset))
    external_error(where, str_cat("location '", printable(location), "' could not be read"));
}

}  // namespace onnx_import::detail
NNVM_END_NAMESPACE
