// A purpose-built JSON reader for model.json: objects, arrays, strings, integers, true, false
// and null (no fractions or exponents: the format has none). Hostile input is expected: depth
// is limited, and every error names the file, line and column and what was expected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "failure.hpp"

NNVM_BEGIN_NAMESPACE
namespace runtime::json {

struct Value {
  enum class Type : uint8_t { null, boolean, integer, string, array, object } type = Type::null;
  int64_t integer = 0;            // boolean: 0 or 1
  std::string string;
  std::vector<Value> items;  // array elements, or object members
  std::string key;           // an object member's name
};

// Parses `text`; a syntax error is a Failure NNVM_ERROR_FORMAT starting with `file`.
Value parse(const std::string& text, const std::string& file);

// Where a value sits in the document, such as steps[2].inputs[0]: a chain of references to the
// enclosing paths (so each must outlive the paths made from it), spelled out only for a message.
struct Path {
  const Path* parent = nullptr;  // nullptr: the document itself
  const char* key = nullptr;     // a member's name; nullptr: an array element
  size_t index = 0;
  Path operator/(const char* member) const { return {this, member, 0}; }
  Path operator[](size_t element) const { return {this, nullptr, element}; }
  std::string text() const;
};

// Checked access for the loader: each failure says "<file>: <path>: expected ..., got ...".
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  // "<file>: <path>: " and the printf-formatted rest.
  [[noreturn]] void error(const Path& path, const char* fmt, ...) const NNVM_RUNTIME_PRINTF(3, 4);
  const Value& member(const Value& object, const Path& path, const char* key) const;
  // The member, or nullptr when `object` has none of that name.
  const Value* find(const Value& object, const Path& path, const char* key) const;
  const std::vector<Value>& array(const Value& v, const Path& path) const;
  const std::string& string(const Value& v, const Path& path) const;
  int64_t integer(const Value& v, const Path& path, int64_t min, int64_t max) const;

 private:
  std::string file_;
};

}  // namespace runtime::json
NNVM_END_NAMESPACE
