// What every importer does with an error raised while it reads part of a model: the user learns
// which file, node and attribute it came from. Shared by the ONNX importer and those to come.
#pragma once

#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace importers {

// Runs `f`. An op's or the graph builder's UserError becomes an ImportError with the same id,
// `where` in front of its own context (entries `repeats` says `where` already states are
// dropped); an ImportError passes unchanged, since its thrower knew where it was. What the
// standard library throws gets a named error with `where`: "nnvm.<format>.out_of_memory" for
// exhausted memory or a size too large, "nnvm.<format>.internal" (InternalError, a bug) for an
// out-of-range access.
template <class F, class Repeats>
auto with_context(std::string_view format, const std::vector<std::string>& where, Repeats&& repeats, F&& f)
    -> decltype(f()) {
  try {
    return f();
  } catch (const UserError& e) {
    std::vector<std::string> ctx = where;
    for (auto& c : e.context())
      if (!repeats(c)) ctx.push_back(c);
    throw ImportError(e.id(), e.message(), std::move(ctx));
  } catch (const std::bad_alloc&) {
    throw ImportError(str_cat("nnvm.", format, ".out_of_memory"), "memory ran out while importing", where);
  } catch (const std::length_error& e) {
    throw ImportError(str_cat("nnvm.", format, ".out_of_memory"), str_cat("a size is too large: ", e.what()), where);
  } catch (const std::out_of_range& e) {
    throw InternalError(str_cat("nnvm.", format, ".internal"), str_cat("out-of-range access: ", e.what()), where);
  }
}

// with_context keeping every context entry of a UserError.
template <class F>
auto with_context(std::string_view format, const std::vector<std::string>& where, F&& f) -> decltype(f()) {
  return with_context(format, where, [](const std::string&) { return false; }, std::forward<F>(f));
}

}  // namespace importers
NNVM_END_NAMESPACE
