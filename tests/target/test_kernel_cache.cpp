// The C JIT's disk cache loads code, so it must refuse any folder or file another user could
// have written (kernel_cache.hpp): a library planted there would run inside the process.
#include "support/pch.hpp"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "nnvm/target/c_jit.hpp"

namespace target_kernel_cache {

using namespace nnvm;
using namespace nnvm::ir;
namespace fs = std::filesystem;

namespace {

// Y[i] = X[i] + `addend`: each test compiles its own source, so the process-wide map of loaded
// libraries never answers for the disk cache.
LoweredFunc add_kernel(int addend) {
  Expr four = make_const(dtype::index, 4.0);
  Buffer X("X", dtype::float32, {four}), Y("Y", dtype::float32, {four});
  Var i("i");
  Stmt body = For::make(i, 0, four, ForKind::serial,
                        Store::make(Y, Load::make(X, i) + make_const(dtype::float32, double(addend)), i));
  return {str_cat("cache_test_", addend), {X, Y}, {}, body, "kernel cache test"};
}

target::CJitOptions in(const std::string& dir) {
  target::CJitOptions o;
  o.cache_dir = dir;
  return o;
}

// A private temporary folder for one test, removed afterwards.
struct Scratch {
  std::string path;
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "nnvm_cache_test_XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The message of the BackendError that compiling `fn` with `o` throws ("" when none).
std::string refusal(const LoweredFunc& fn, const target::CJitOptions& o) {
  try {
    target::jit_c(fn, o);
  } catch (const BackendError& e) {
    CHECK(e.id() == "nnvm.codegen.c.cache_unsafe");
    return e.what();
  }
  return "";
}

int mode_of(const std::string& path) {
  struct stat st;
  REQUIRE(lstat(path.c_str(), &st) == 0);
  return int(st.st_mode & 07777);
}

}  // namespace

TEST_CASE("kernel_cache: a missing cache folder is created 0700, with the folders above it") {
  Scratch s;
  std::string dir = s.path + "/a/b/cache";
  auto k = target::jit_c(add_kernel(1), in(dir));
  NDArray X(dtype::float32, {4}), Y(dtype::float32, {4});
  for (int i = 0; i < 4; ++i) X.data<float>()[i] = float(i);
  k(X, Y);
  CHECK(Y.data<float>()[3] == 4.0f);
  CHECK(mode_of(dir) == 0700);
  CHECK(mode_of(s.path + "/a") == 0700);
  // The library is the user's alone whatever the umask, so the next process may load it.
  CHECK(k.library_path().rfind(dir + "/", 0) == 0);
  CHECK((mode_of(k.library_path()) & 077) == 0);
}

TEST_CASE("kernel_cache: a symbolic link as the cache folder is refused") {
  Scratch s;
  fs::create_directory(s.path + "/real");
  fs::permissions(s.path + "/real", fs::perms::owner_all);
  fs::create_directory_symlink(s.path + "/real", s.path + "/link");
  std::string why = refusal(add_kernel(2), in(s.path + "/link"));
  CHECK(why.find(s.path + "/link is a symbolic link") != std::string::npos);
  CHECK(fs::is_empty(s.path + "/real"));
}

TEST_CASE("kernel_cache: a cache folder its group or others may write is refused") {
  Scratch s;
  for (auto [name, mode, who] : {std::tuple{"group", 0770, "its group (mode 770)"},
                                 std::tuple{"other", 0703, "other users (mode 703)"},
                                 std::tuple{"sticky", 01777, "other users (mode 777)"}}) {
    std::string dir = s.path + "/" + name;
    REQUIRE(mkdir(dir.c_str(), 0700) == 0);
    REQUIRE(chmod(dir.c_str(), mode_t(mode)) == 0);
    std::string why = refusal(add_kernel(3), in(dir));
    INFO(why);
    CHECK(why.find(dir + " is writable by " + who) != std::string::npos);
    CHECK(fs::is_empty(dir));
  }
}

TEST_CASE("kernel_cache: a cache folder or library owned by another user is refused") {
  if (geteuid() != 0) {
    MESSAGE("skipped: giving a folder to another user needs root");
    return;
  }
  Scratch s;
  std::string dir = s.path + "/theirs";
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  REQUIRE(chown(dir.c_str(), 65534, 65534) == 0);
  CHECK(refusal(add_kernel(4), in(dir)).find(dir + " is owned by uid 65534, not by this user (uid 0)") !=
        std::string::npos);
}

TEST_CASE("kernel_cache: a library planted under a cache file name is never loaded unless private") {
  Scratch s;
  std::string dir = s.path + "/cache", marker = s.path + "/constructor_ran";
  REQUIRE(mkdir(dir.c_str(), 0700) == 0);
  // What an attacker plants: a library whose constructor runs as soon as it is dlopen()ed.
  std::string planted_c = s.path + "/planted.c", planted_so = s.path + "/planted.so";
  std::ofstream(planted_c) << "#include <stdio.h>\n__attribute__((constructor)) static void planted(void) {\n"
                              "  FILE* f = fopen(\"" << marker << "\", \"w\");\n  if (f) fclose(f);\n}\n";
  auto [status, output] = target::detail::run_command("cc -shared -fPIC -o " + planted_so + " " + planted_c);
  REQUIRE_MESSAGE(status == 0, output);

  LoweredFunc fn = add_kernel(5);
  std::string so = target::detail::plan_c_compile(target::emit_c_module({fn}).source, in(dir)).stem(dir) + ".so";
  SUBCASE("group-writable") {
    fs::copy_file(planted_so, so);
    REQUIRE(chmod(so.c_str(), 0664) == 0);
    CHECK(refusal(fn, in(dir)).find("cached kernel library " + so + " is writable by its group") != std::string::npos);
  }
  SUBCASE("a symbolic link") {
    REQUIRE(chmod(planted_so.c_str(), 0700) == 0);
    fs::create_symlink(planted_so, so);
    CHECK(refusal(fn, in(dir)).find(so + " is a symbolic link") != std::string::npos);
  }
  SUBCASE("owned by another user") {
    fs::copy_file(planted_so, so);
    if (geteuid() == 0) {
      REQUIRE(chown(so.c_str(), 65534, 65534) == 0);
      CHECK(refusal(fn, in(dir)).find(so + " is owned by uid 65534") != std::string::npos);
    }
  }
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("kernel_cache: the default folder is NNVM_CACHE_DIR, else XDG_CACHE_HOME/nnvm, else ~/.cache/nnvm") {
  struct Saved {
    std::string name;
    std::optional<std::string> value;
    explicit Saved(const char* n) : name(n) {
      if (const char* v = std::getenv(n)) value = v;
    }
    ~Saved() { value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str()); }
  } cache("NNVM_CACHE_DIR"), xdg("XDG_CACHE_HOME"), home("HOME");
  setenv("NNVM_CACHE_DIR", "/n/cache", 1);
  setenv("XDG_CACHE_HOME", "/x", 1);
  setenv("HOME", "/h", 1);
  CHECK(target::detail::default_cache_dir() == "/n/cache");
  CHECK(target::detail::cache_dir(in("/given")) == "/given");
  unsetenv("NNVM_CACHE_DIR");
  CHECK(target::detail::default_cache_dir() == "/x/nnvm");
  setenv("XDG_CACHE_HOME", "", 1);
  CHECK(target::detail::default_cache_dir() == "/h/.cache/nnvm");
  unsetenv("XDG_CACHE_HOME");
  CHECK(target::detail::default_cache_dir() == "/h/.cache/nnvm");
  // Never a folder every user shares.
  unsetenv("HOME");
  CHECK(target::detail::default_cache_dir().rfind("/tmp", 0) != 0);
}

}  // namespace target_kernel_cache
