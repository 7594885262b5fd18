#include "nnvm/importers/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

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

// Opens `location` below `base_dir` one component at a time with O_NOFOLLOW, so neither the file
// nor a parent directory can be a symbolic link, even one swapped in while we walk.
int open_confined(const std::string& base_dir, const std::string& location,
                  const std::function<void(const std::string&)>& bad) {
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

std::string read_regular_file(std::string_view format, const std::string& path, uint64_t max_bytes,
                              std::string_view limit_hint) {
  auto fail = [&](const std::string& why) {
    throw ImportError(str_cat("nnvm.", format, ".file"), why, {"file " + printable(path)});
  };
  // Opening a FIFO blocks until a writer comes, so anything but a regular file is refused
  // before the open, and the open does not block in case the path changed in between.
  struct stat before {};
  if (::stat(path.c_str(), &before) != 0) fail(str_cat("cannot open the file: ", std::strerror(errno)));
  if (!S_ISREG(before.st_mode)) fail("not a regular file");
  Fd f(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (f.fd < 0) fail(str_cat("cannot open the file: ", std::strerror(errno)));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) fail("not a regular file");
  uint64_t size = uint64_t(st.st_size);
  // Checked before reading a byte: a hostile file could be huge.
  if (size > max_bytes)
    fail(str_cat("the file is ", size, " bytes, over the limit of ", max_bytes, " bytes",
                 limit_hint.empty() ? "" : " (", limit_hint, limit_hint.empty() ? "" : ")"));
  std::string data(size, '\0');
  if (!read_at(f.fd, data.data(), size, 0)) fail("the file could not be read completely");
  return data;
}

std::string directory_of(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

void read_confined(std::string_view format, const std::string& base_dir, const ConfinedRange& range, uint64_t bytes,
                   const std::vector<std::string>& where, const std::function<void*()>& destination) {
  const std::string id = str_cat("nnvm.", format, ".external_data");
  const std::string quoted = "'" + printable(range.location) + "'";
  auto fail = [&](const std::string& why) { throw ImportError(id, why, where); };
  Fd f(open_confined(base_dir, range.location, [&](const std::string& why) { fail("location " + quoted + " " + why); }));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) fail("location " + quoted + " is not a regular file");
  // A hard link could alias a file outside the directory that no path check would see.
  if (st.st_nlink > 1)
    fail(str_cat("location ", quoted, " has ", st.st_nlink, " hard links; external data must have one"));
  uint64_t size = uint64_t(st.st_size);
  if (range.offset > size) fail(str_cat("offset ", range.offset, " lies beyond the end of ", quoted, " (", size, " bytes)"));
  uint64_t length = range.length.value_or(size - range.offset);
  if (length > size - range.offset)
    fail(str_cat("offset ", range.offset, " + length ", length, " lies beyond the end of ", quoted, " (", size, " bytes)"));
  if (length != bytes)
    fail(str_cat("external data holds ", length, " bytes but the tensor's shape and type need ", bytes));
  if (!read_at(f.fd, destination(), bytes, range.offset)) fail("location " + quoted + " could not be read");
}

}  // namespace importers
NNVM_END_NAMESPACE
