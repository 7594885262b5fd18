// Error types. Every message starts with a stable id such as `[nnvm.schedule.split_factor]`
// and ends with the context chain (stage › axis, graph › node › attribute).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnvm/config.hpp"

NNVM_BEGIN_NAMESPACE

class Error : public std::runtime_error {
 public:
  Error(std::string id, std::string message, std::vector<std::string> context = {})
      : std::runtime_error(format(id, message, context)),
        id_(std::move(id)),
        message_(std::move(message)),
        context_(std::move(context)) {}

  // The stable id without brackets, e.g. "nnvm.schedule.split_factor".
  const std::string& id() const noexcept { return id_; }
  const std::string& message() const noexcept { return message_; }
  const std::vector<std::string>& context() const noexcept { return context_; }

 private:
  static std::string format(const std::string& id, const std::string& message,
                            const std::vector<std::string>& context) {
    std::string out = "[" + id + "] " + message;
    if (!context.empty()) {
      out += " (";
      for (size_t i = 0; i < context.size(); ++i) out += (i ? " \u203a " : "") + context[i];
      out += ")";
    }
    return out;
  }

  std::string id_, message_;
  std::vector<std::string> context_;
};

// A mistake in what the user wrote: a bad schedule, a wrong buffer, an unbound size.
class UserError : public Error {
  using Error::Error;
};
// A model file or graph that cannot be imported.
class ImportError : public Error {
  using Error::Error;
};
// A back end (system C compiler, LLVM, driver) failed.
class BackendError : public Error {
  using Error::Error;
};
// A bug in nnvm itself: an invariant that should have held did not.
class InternalError : public Error {
  using Error::Error;
};

namespace detail {
inline void append_all(std::ostringstream&) {}
template <class T, class... Rest>
void append_all(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append_all(os, rest...);
}
}  // namespace detail

// `s` with control characters (and DEL) written as \xNN, for echoing names and paths from a
// model file or command line inside a message: a terminal escape sequence stays inert text, and
// a NUL cannot cut the message short where it is read as a C string.
inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
      continue;
    }
    static const char hex[] = "0123456789abcdef";
    out += "\\x";
    out += hex[u >> 4];
    out += hex[u & 15];
  }
  return out;
}

// Concatenates streamable parts into one string; keeps error sites short.
template <class... Parts>
std::string str_cat(const Parts&... parts) {
  std::ostringstream os;
  detail::append_all(os, parts...);
  return os.str();
}

#define NNVM_INTERNAL_CHECK(cond, ...)                                                 \
  do {                                                                                 \
    if (!(cond))                                                                       \
      throw ::nnvm::InternalError("nnvm.internal",                                     \
                                  ::nnvm::str_cat(__FILE__, ":", __LINE__, ": check '" \
                                                  #cond "' failed: ", __VA_ARGS__));   \
  } while (0)

NNVM_END_NAMESPACE
