// Where the host C JIT keeps compiled kernels, and the checks that make the cache safe to load
// from (POSIX only).
//
// A cached library is dlopen()ed, which runs its constructors: whoever can write into the cache
// directory runs code in every process that uses it, and cache file names are hashes anyone can
// compute. So the directory must belong to this user alone: it is created 0700 (as are the
// missing folders above it), and an existing one is used only when lstat() shows a real
// directory (not a symlink) owned by this user that neither group nor others may write. Each
// cached library is checked the same way (a regular file, owned by this user, not group- or
// other-writable) right before it is loaded.
#pragma once

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {
namespace detail {

// The cache directory when none is given: $NNVM_CACHE_DIR, else $XDG_CACHE_HOME/nnvm, else
// ~/.cache/nnvm ($HOME, else the password database). Never a shared folder such as /tmp.
inline std::string default_cache_dir() {
  if (const char* d = std::getenv("NNVM_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/nnvm";
  std::string home;
  if (const char* h = std::getenv("HOME"); h && *h) {
    home = h;
  } else {
    std::vector<char> buf(16384);
    passwd pw{}, *found = nullptr;
    if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir) home = found->pw_dir;
  }
  if (home.empty())
    throw BackendError("nnvm.codegen.c.cache_dir",
                       "no cache directory for compiled kernels: set NNVM_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
  return home + "/.cache/nnvm";
}

// Why `st` (lstat of a cache entry) is not this user's alone, or "" when it is.
inline std::string cache_entry_problem(const struct stat& st, bool directory) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return directory ? "is not a directory" : "is not a regular file";
  if (st.st_uid != geteuid())
    return str_cat("is owned by uid ", st.st_uid, ", not by this user (uid ", geteuid(), ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return str_cat("is writable by ", (st.st_mode & S_IWOTH) ? "other users" : "its group", " (mode ",
                   std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                       std::to_string(st.st_mode & 7),
                   ")");
  return "";
}

[[noreturn]] inline void refuse_cache_entry(const std::string& path, const std::string& why, bool directory) {
  throw BackendError("nnvm.codegen.c.cache_unsafe",
                     str_cat(directory ? "kernel cache directory " : "cached kernel library ", path, " ", why,
                             "; nnvm loads compiled code from there, so it must belong to this user alone",
                             directory ? " (a real directory, chmod 700; or set NNVM_CACHE_DIR to one)"
                                       : " (delete it, and check who else can write to the cache directory)"));
}

// Creates `dir` (and missing folders above it) with mode 0700, then refuses it, with error
// "nnvm.codegen.c.cache_unsafe" naming the path, unless it is a real directory owned by this
// user with no group or other write permission.
inline void ensure_private_cache_dir(const std::string& dir) {
  if (dir.empty()) throw BackendError("nnvm.codegen.c.cache_dir", "the kernel cache directory is an empty path");
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      std::string prefix = dir.substr(0, i);
      if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
        throw BackendError("nnvm.codegen.c.cache_dir",
                           str_cat("cannot create cache directory ", prefix, ": ", std::strerror(errno)));
    }
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0)
    throw BackendError("nnvm.codegen.c.cache_dir", str_cat("cannot stat cache directory ", dir, ": ", std::strerror(errno)));
  if (std::string why = cache_entry_problem(st, true); !why.empty()) refuse_cache_entry(dir, why, true);
}

// Whether `path` exists; when it does, refuses it (error "nnvm.codegen.c.cache_unsafe") unless
// it is a regular file owned by this user with no group or other write permission.
inline bool check_cached_library(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    throw BackendError("nnvm.codegen.c.cache_dir", str_cat("cannot stat ", path, ": ", std::strerror(errno)));
  }
  if (std::string why = cache_entry_problem(st, false); !why.empty()) refuse_cache_entry(path, why, false);
  return true;
}

}  // namespace detail
}  // namespace target
NNVM_END_NAMESPACE
