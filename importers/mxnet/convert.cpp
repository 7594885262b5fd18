#include "convert.hpp"

#include <cerrno>
#include <charconv>
#include <cstdlib>


NNVM_BEGIN_NAMESPACE
namespace mxnet_import {

namespace {

std::string trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\n"), e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// A whole-string integer; Python 2 wrote longs as "3L".
std::optional<int64_t> parse_int(std::string s) {
  s = trim(s);
  if (!s.empty() && (s.back() == 'L' || s.back() == 'l')) s.pop_back();
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> parse_float(std::string s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return std::nullopt;
  return v;
}

// "(1, 2)", "[1,2]", "(1,)", "()", "3", "(None, 2)": the entries as strings.
std::optional<std::vector<std::string>> parse_tuple(std::string s) {
  s = trim(s);
  if (!s.empty() && (s.front() == '(' || s.front() == '[')) {
    const char close = s.front() == '(' ? ')' : ']';
    if (s.back() != close) return std::nullopt;
    s = trim(s.substr(1, s.size() - 2));
    if (!s.empty() && s.back() == ',') s.pop_back();
  }
  std::vector<std::string> parts;
  if (trim(s).empty()) return parts;
  for (size_t start = 0;;) {
    size_t comma = s.find(',', start);
    parts.push_back(trim(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return parts;
}

}  // namespace

graph::Value NodeContext::input(size_t k) const {
  if (k >= inputs_.size())
    throw ImportError("nnvm.mxnet.graph", str_cat("the node has ", inputs_.size(), " inputs; input ", k, " is needed"),
                      where_);
  return inputs_[k];
}

std::string NodeContext::text(const std::string& name, const std::string& fallback) const {
  return has(name) ? trim(raw(name)) : fallback;
}

int64_t NodeContext::integer(const std::string& name) const {
  if (!has(name)) bad_attribute(name, "the attribute is required");
  return integer(name, 0);
}

int64_t NodeContext::integer(const std::string& name, int64_t fallback) const {
  if (!has(name)) return fallback;
  std::optional<int64_t> v = parse_int(raw(name));
  if (!v) bad_attribute(name, str_cat("'", printable(raw(name)), "' is not an integer"));
  return *v;
}

double NodeContext::real(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  std::optional<double> v = parse_float(raw(name));
  if (!v) bad_attribute(name, str_cat("'", printable(raw(name)), "' is not a number"));
  return *v;
}

bool NodeContext::flag(const std::string& name, bool fallback) const {
  if (!has(name)) return fallback;
  const std::string v = trim(raw(name));
  if (v == "True" || v == "true" || v == "1") return true;
  if (v == "False" || v == "false" || v == "0") return false;
  bad_attribute(name, str_cat("'", printable(v), "' is not a boolean (True or False)"));
}

std::vector<int64_t> NodeContext::ints(const std::string& name, std::vector<int64_t> fallback) const {
  if (!has(name)) return fallback;
  std::vector<int64_t> out;
  for (auto& v : optional_ints(name)) {
    if (!v) bad_attribute(name, str_cat("'", printable(raw(name)), "' has an entry None where a number is needed"));
    out.push_back(*v);
  }
  return out;
}

std::vector<std::optional<int64_t>> NodeContext::optional_ints(const std::string& name) const {
  std::vector<std::optional<int64_t>> out;
  if (!has(name)) return out;
  auto parts = parse_tuple(raw(name));
  if (!parts) bad_attribute(name, str_cat("'", printable(raw(name)), "' is not a tuple of integers"));
  for (auto& p : *parts) {
    if (p == "None") {
      out.push_back(std::nullopt);
      continue;
    }
    std::optional<int64_t> v = parse_int(p);
    if (!v) bad_attribute(name, str_cat("'", printable(raw(name)), "' is not a tuple of integers"));
    out.push_back(v);
  }
  return out;
}

std::optional<int64_t> NodeContext::optional_int(const std::string& name) const {
  if (!has(name) || trim(raw(name)) == "None") return std::nullopt;
  return integer(name, 0);
}

const std::map<std::string, Converter>& converters() {
  static const std::map<std::string, Converter> table = [] {
    std::map<std::string, Converter> t;
    add_nn_converters(t);
    add_tensor_converters(t);
    return t;
  }();
  return table;
}

}  // namespace mxnet_import
NNVM_END_NAMESPACE
