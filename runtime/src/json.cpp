#include "json.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

NNVM_BEGIN_NAMESPACE
namespace runtime::json {

namespace {

const char* type_name(Value::Type t) {
  static const char* const names[] = {"null", "a boolean", "an integer", "a string", "an array", "an object"};
  return names[int(t)];
}

class Parser {
 public:
  Parser(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  Value document() {
    Value v = value(0);
    skip_space();
    if (pos_ != s_.size()) error("the end of the file after the top-level value");
    return v;
  }

 private:
  // Nesting deeper than this is not a model.json; refusing it keeps the recursion bounded.
  static constexpr int max_depth = 32;

  [[noreturn]] void error(const char* expected) const {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') ++line, column = 1;
      else ++column;
    }
    if (pos_ >= s_.size())
      fail(NNVM_ERROR_FORMAT, "%s: line %zu, column %zu: expected %s, got the end of the file", file_.c_str(), line, column,
           expected);
    fail(NNVM_ERROR_FORMAT, "%s: line %zu, column %zu: expected %s, got '%c'", file_.c_str(), line, column, expected,
         s_[pos_]);
  }

  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n')) ++pos_;
  }
  bool take(char c) {
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool take_word(const char* w) {
    size_t n = std::strlen(w);
    if (s_.compare(pos_, n, w) != 0) return false;
    pos_ += n;
    return true;
  }

  Value value(int depth) {
    if (depth > max_depth) error("at most 32 levels of nesting");
    skip_space();
    Value v;
    char c = pos_ < s_.size() ? s_[pos_] : '\0';
    if (c == '{') {
      ++pos_;
      v.type = Value::Type::object;
      if (take('}')) return v;
      do {
        skip_space();
        if (pos_ >= s_.size() || s_[pos_] != '"') error("a member name in quotes");
        std::string key = string();
        if (!take(':')) error("':' after a member name");
        v.items.push_back(value(depth + 1));
        v.items.back().key = std::move(key);
      } while (take(','));
      if (!take('}')) error("',' or '}' in an object");
    } else if (c == '[') {
      ++pos_;
      v.type = Value::Type::array;
      if (take(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (take(','));
      if (!take(']')) error("',' or ']' in an array");
    } else if (c == '"') {
      v.type = Value::Type::string;
      v.string = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = Value::Type::integer;
      v.integer = integer();
    } else if (take_word("true")) {
      v.type = Value::Type::boolean;
      v.integer = 1;
    } else if (take_word("false")) {
      v.type = Value::Type::boolean;
    } else if (!take_word("null")) {
      error("a value (object, array, string, integer, true, false or null)");
    }
    return v;
  }

  int64_t integer() {
    bool negative = s_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') error("a digit");
    uint64_t magnitude = 0, limit = negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      uint64_t d = uint64_t(s_[pos_] - '0');
      if (magnitude > (limit - d) / 10) error("an integer that fits in 64 bits");
      magnitude = magnitude * 10 + d;
      ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      error("an integer (model.json has no fractions)");
    return negative ? int64_t(0 - magnitude) : int64_t(magnitude);
  }

  unsigned hex4() {
    unsigned v = 0;
    for (int i = 0; i < 4; ++i, ++pos_) {
      char c = pos_ < s_.size() ? s_[pos_] : '\0';
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) error("four hex digits after \\u");
      v = v * 16 + unsigned(d);
    }
    return v;
  }

  // Escaped code points are written as UTF-8 (a lone surrogate as its three bytes).
  std::string string() {
    ++pos_;  // the opening quote
    std::string out;
    for (;;) {
      if (pos_ >= s_.size()) error("a closing '\"'");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) --pos_, error("no control characters inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      c = pos_ < s_.size() ? s_[pos_++] : '\0';
      const char* from = "\"\\/bfnrt";
      const char* to = "\"\\/\b\f\n\r\t";
      if (const char* p = c ? std::strchr(from, c) : nullptr) {
        out += to[p - from];
      } else if (c == 'u') {
        unsigned cp = hex4();
        if (cp < 0x80) out += char(cp);
        else if (cp < 0x800) out += {char(0xC0 | (cp >> 6)), char(0x80 | (cp & 0x3F))};
        else out += {char(0xE0 | (cp >> 12)), char(0x80 | ((cp >> 6) & 0x3F)), char(0x80 | (cp & 0x3F))};
      } else {
        --pos_;
        error("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
      }
    }
  }

  const std::string& s_;
  const std::string& file_;
  size_t pos_ = 0;
};

}  // namespace

Value parse(const std::string& text, const std::string& file) { return Parser(text, file).document(); }

std::string Path::text() const {
  if (!parent) return "the top level";
  std::string s = parent->parent ? parent->text() : std::string();
  return s + (key ? format(s.empty() ? "%s" : ".%s", key) : format("[%zu]", index));
}

void Reader::error(const Path& path, const char* fmt, ...) const {
  va_list args;
  va_start(args, fmt);
  char what[1024];
  std::vsnprintf(what, sizeof what, fmt, args);
  va_end(args);
  fail(NNVM_ERROR_FORMAT, "%s: %s: %s", file_.c_str(), path.text().c_str(), what);
}

const Value* Reader::find(const Value& object, const Path& path, const char* key) const {
  if (object.type != Value::Type::object) error(path, "expected an object, got %s", type_name(object.type));
  for (auto& item : object.items)
    if (item.key == key) return &item;
  return nullptr;
}

const Value& Reader::member(const Value& object, const Path& path, const char* key) const {
  if (const Value* v = find(object, path, key)) return *v;
  error(path / key, "missing (a required field)");
}

const std::vector<Value>& Reader::array(const Value& v, const Path& path) const {
  if (v.type != Value::Type::array) error(path, "expected an array, got %s", type_name(v.type));
  return v.items;
}

const std::string& Reader::string(const Value& v, const Path& path) const {
  if (v.type != Value::Type::string) error(path, "expected a string, got %s", type_name(v.type));
  return v.string;
}

int64_t Reader::integer(const Value& v, const Path& path, int64_t min, int64_t max) const {
  if (v.type != Value::Type::integer) error(path, "expected an integer, got %s", type_name(v.type));
  if (v.integer < min || v.integer > max)
    error(path, "expected an integer from %lld to %lld, got %lld", static_cast<long long>(min), static_cast<long long>(max),
          static_cast<long long>(v.integer));
  return v.integer;
}

}  // namespace runtime::json
NNVM_END_NAMESPACE
