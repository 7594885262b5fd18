// The host C JIT: emits C for lowered kernels, compiles it with the system C compiler into a
// shared library, dlopens it, and calls it through the kernel ABI (POSIX only).
//
// Compiled libraries are cached by an FNV-1a 64 hash of (source, flags, compiler command and its
// --version, host CPU model and flags) both on disk (NNVM_CACHE_DIR, else $XDG_CACHE_HOME/nnvm,
// else ~/.cache/nnvm; a folder this user alone may write, see kernel_cache.hpp) and in a
// process-wide map, so a kernel is compiled once per machine, not once per run.
#pragma once

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <span>
#include <sstream>
#include <unordered_map>

#include "nnvm/target/arguments.hpp"
#include "nnvm/target/c_emitter.hpp"
#include "nnvm/target/kernel_cache.hpp"
#include "nnvm/target/kernel.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

struct CJitOptions {
  std::string compiler;                 // empty: $CC, else "cc"
  std::vector<std::string> extra_flags;  // appended after the default flags
  std::string cache_dir;                // empty: detail::default_cache_dir()
  std::string cpu;                      // -march= value (Target::cpu); empty: "native", this machine
};

namespace detail {

inline uint64_t fnv1a64(const std::string& s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; returns (exit status, stdout+stderr).
inline std::pair<int, std::string> run_command(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) throw BackendError("nnvm.codegen.c.compile_failed", "cannot start a shell to run: " + cmd);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

inline std::string cache_dir(const CJitOptions& o) { return o.cache_dir.empty() ? default_cache_dir() : o.cache_dir; }

inline void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
        throw BackendError("nnvm.codegen.c.cache_dir", str_cat("cannot create cache directory ", prefix, ": ",
                                                               std::strerror(errno)));
    }
  }
}

// Writes `text` to `path` through a temporary file and a rename, so readers never see half.
inline void write_atomically(const std::string& path, const std::string& text) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = str_cat(path, ".tmp.", getpid(), ".", counter++);
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f) throw BackendError("nnvm.codegen.c.cache_dir", "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw BackendError("nnvm.codegen.c.cache_dir", "cannot rename " + tmp + " to " + path);
}

struct Library {
  void* handle = nullptr;
  std::string path;
  ~Library() {
    if (handle) dlclose(handle);
  }
  void* symbol(const std::string& name) const {
    void* s = dlsym(handle, name.c_str());
    if (!s) throw BackendError("nnvm.codegen.c.missing_symbol", str_cat("symbol ", name, " not found in ", path));
    return s;
  }
};

// What -march=native means on this machine: the CPU's model and feature flags (Linux), so a
// cache directory shared between machines never hands one a library built for another.
inline const std::string& host_cpu_identity() {
  static const std::string id = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
    }
    return model + "\n" + flags;
  }();
  return id;
}

// How `source` is compiled under `o`: the compiler command, its flags, and the cache key (an
// FNV-1a 64 hash of the source, flags, compiler and its --version, and this CPU).
struct CCompilePlan {
  std::string cc, flags;
  uint64_t key = 0;
  // The cached library's path in cache directory `dir` (".so"; ".c" for its source).
  std::string stem(const std::string& dir) const {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
    return dir + "/nnvm_" + hex;
  }
};

inline CCompilePlan plan_c_compile(const std::string& source, const CJitOptions& o) {
  CCompilePlan p;
  p.cc = o.compiler;
  if (p.cc.empty()) p.cc = std::getenv("CC") && *std::getenv("CC") ? std::getenv("CC") : "cc";
  std::string march = o.cpu.empty() ? "native" : o.cpu;
  if (march.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") != std::string::npos)
    throw UserError("nnvm.codegen.c.cpu", str_cat("CPU name '", march, "' has characters no -march value has"));
  p.flags = str_cat("-O3 -march=", march, " -ffp-contract=fast -std=c99 -fPIC -shared");
  for (auto& f : o.extra_flags) p.flags += " " + shell_quote(f);
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto v = versions.find(p.cc);
  if (v == versions.end()) v = versions.emplace(p.cc, run_command(p.cc + " --version").second).first;
  p.key = fnv1a64(source + "\n" + p.flags + "\n" + p.cc + "\n" + v->second + "\n" + host_cpu_identity());
  return p;
}

// Compiles (or finds in the caches) the shared library for `source`; sets *from_cache, when
// given, to whether one of the caches had it.
inline std::shared_ptr<const Library> compile_c(const std::string& source, const CJitOptions& o,
                                                bool* from_cache = nullptr) {
  CCompilePlan plan = plan_c_compile(source, o);
  const std::string &cc = plan.cc, &flags = plan.flags;
  static std::mutex mutex;
  static std::unordered_map<uint64_t, std::shared_ptr<const Library>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (from_cache) *from_cache = true;
  if (auto it = loaded.find(plan.key); it != loaded.end()) return it->second;

  std::string dir = cache_dir(o);
  ensure_private_cache_dir(dir);
  std::string stem = plan.stem(dir), c_path = stem + ".c", so_path = stem + ".so";

  auto lib = std::make_shared<Library>();
  lib->path = so_path;
  if (check_cached_library(so_path)) lib->handle = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);  // the disk cache
  if (!lib->handle) {
    if (from_cache) *from_cache = false;
    write_atomically(c_path, source);
    std::string tmp = str_cat(so_path, ".tmp.", getpid());
    std::string cmd = str_cat(cc, " ", flags, " -o ", shell_quote(tmp), " ", shell_quote(c_path), " -lm");
    auto [status, output] = run_command(cmd);
    if (status != 0) {
      std::remove(tmp.c_str());
      throw BackendError("nnvm.codegen.c.compile_failed",
                         str_cat("the C compiler failed (exit status ", status, ") on ", c_path, "\ncommand: ", cmd,
                                 "\n", output));
    }
    // Whatever the umask, the library is this user's alone, as check_cached_library requires.
    chmod(tmp.c_str(), S_IRWXU);
    if (std::rename(tmp.c_str(), so_path.c_str()) != 0)
      throw BackendError("nnvm.codegen.c.cache_dir", "cannot rename " + tmp + " to " + so_path);
    lib->handle = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle)
      throw BackendError("nnvm.codegen.c.load_failed", str_cat("dlopen of ", so_path, " failed: ", dlerror()));
  }
  loaded.emplace(plan.key, lib);
  return lib;
}

}  // namespace detail

// Compiles all `fns` with ONE compiler call (a module), returning their kernels in order.
NNVM_COMPILER_INLINE std::vector<Kernel> jit_c(const std::vector<ir::LoweredFunc>& fns,
                                               const CJitOptions& options = {});
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE std::vector<Kernel> jit_c(const std::vector<ir::LoweredFunc>& fns, const CJitOptions& options) {
  if (fns.empty()) return {};
  CModule m = emit_c_module(fns);
  bool from_cache = false;
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const detail::Library> lib = detail::compile_c(m.source, options, &from_cache);
  auto module = std::make_shared<KernelModule>();
  module->emitter = Emitter::c;
  module->code = std::move(m.source);
  module->library_path = lib->path;
  module->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  module->keep_alive = lib;
  std::vector<Kernel> out;
  for (size_t i = 0; i < fns.size(); ++i) {
    const std::string& s = m.symbols[i];
    out.emplace_back(module, fns[i], s, reinterpret_cast<nnvm_kernel_fn>(lib->symbol(s)),
                     reinterpret_cast<nnvm_workspace_bytes_fn>(lib->symbol(s + "_workspace_bytes")), from_cache);
  }
  return out;
}
#endif  // NNVM_COMPILER_DEFINITIONS
inline Kernel jit_c(const ir::LoweredFunc& fn, const CJitOptions& options = {}) {
  return std::move(jit_c(std::vector<ir::LoweredFunc>{fn}, options)[0]);
}

}  // namespace target
NNVM_END_NAMESPACE
