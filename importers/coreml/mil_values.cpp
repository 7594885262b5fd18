// MIL constants (immediate tensors and weight.bin blobs) and the argument accessors of OpContext.
#include <cstring>

#include "mil.hpp"
#include "nnvm/limits.hpp"
#include "weights.hpp"

NNVM_BEGIN_NAMESPACE
namespace coreml_import {

namespace {

namespace spec = nnvm_coreml_spec;

[[noreturn]] void bad_value(const std::vector<std::string>& where, const std::string& why) {
  throw ImportError("nnvm.coreml.weights", why, where);
}

// The declared shape of a tensor type; every dimension must be a constant.
std::vector<int64_t> tensor_shape(const spec::TensorType& t, const std::vector<std::string>& where) {
  std::vector<int64_t> shape;
  if (t.rank() != t.dimensions_size())
    throw ImportError("nnvm.coreml.shape", str_cat("rank ", t.rank(), " with ", t.dimensions_size(), " dimensions"), where);
  for (auto& d : t.dimensions()) {
    if (!d.has_constant()) throw ImportError("nnvm.coreml.shape", "a constant has a dimension of unknown size", where);
    if (d.constant().size() > (uint64_t(1) << 40)) throw ImportError("nnvm.coreml.shape", "an extent is too large", where);
    shape.push_back(int64_t(d.constant().size()));
  }
  return shape;
}

// Copies `n` values of `src` into `out` (of element type T) after checking the count.
template <class T, class Repeated>
void fill(NDArray& out, const Repeated& src, const std::vector<std::string>& where) {
  if (uint64_t(src.size()) != uint64_t(out.numel()))
    bad_value(where, str_cat("the value holds ", src.size(), " elements; its type needs ", out.numel()));
  T* dst = out.data<T>();
  for (int i = 0; i < src.size(); ++i) dst[i] = T(src.Get(i));
}

}  // namespace

MilConst read_mil_value(const spec::Value& v, const std::string& model_dir, const std::vector<std::string>& where) {
  if (!v.type().has_tensortype())
    throw ImportError("nnvm.coreml.unsupported", "values other than tensors (lists, tuples, dictionaries)", where);
  const spec::TensorType& t = v.type().tensortype();
  const std::vector<int64_t> shape = tensor_shape(t, where);
  MilConst out;
  if (t.datatype() == spec::STRING) {
    if (!v.has_immediatevalue() || !v.immediatevalue().tensor().has_strings())
      bad_value(where, "a string value holds no strings");
    const auto& s = v.immediatevalue().tensor().strings().values();
    out.strings.assign(s.begin(), s.end());
    out.is_string = true;
    return out;
  }
  auto dt = mil_dtype(t.datatype());
  if (!dt) throw ImportError("nnvm.coreml.unsupported", str_cat("data type ", mil_dtype_name(t.datatype())), where);
  if (v.has_blobfilevalue()) {
    out.array = read_blob(model_dir, v.blobfilevalue().filename(), v.blobfilevalue().offset(), *dt, shape, where);
    return out;
  }
  if (!v.has_immediatevalue() || !v.immediatevalue().has_tensor())
    throw ImportError("nnvm.coreml.unsupported", "a value that is neither an immediate tensor nor a blob", where);
  if (!checked_tensor_bytes(shape, uint64_t(dt->bytes()))) bad_value(where, "the value's shape is too large");
  out.array = NDArray(*dt, shape);
  const spec::TensorValue& tv = v.immediatevalue().tensor();
  NDArray& a = out.array;
  // Element type and encoding must agree: floats for float32, ints for the narrow ints, ...
  const DataType d = *dt;
  auto mismatch = [&] { bad_value(where, str_cat("a ", d.str(), " value is stored in another encoding")); };
  switch (tv.value_case()) {
    case spec::TensorValue::kFloats:
      if (d != dtype::float32) mismatch();
      fill<float>(a, tv.floats().values(), where);
      break;
    case spec::TensorValue::kDoubles:
      if (d != dtype::float64) mismatch();
      fill<double>(a, tv.doubles().values(), where);
      break;
    case spec::TensorValue::kInts:
      if (d == dtype::int32) fill<int32_t>(a, tv.ints().values(), where);
      else if (d == dtype::int16) fill<int16_t>(a, tv.ints().values(), where);
      else if (d == dtype::uint16) fill<uint16_t>(a, tv.ints().values(), where);
      else if (d == dtype::int8) fill<int8_t>(a, tv.ints().values(), where);
      else if (d == dtype::uint8) fill<uint8_t>(a, tv.ints().values(), where);
      else mismatch();
      break;
    case spec::TensorValue::kLongInts:
      if (d == dtype::int64) fill<int64_t>(a, tv.longints().values(), where);
      else if (d == dtype::uint32) fill<uint32_t>(a, tv.longints().values(), where);
      else mismatch();
      break;
    case spec::TensorValue::kBools:
      if (d != dtype::boolean) mismatch();
      fill<bool>(a, tv.bools().values(), where);
      break;
    case spec::TensorValue::kBytes: {
      // Raw little-endian elements (float16 values, int8 / uint8 data).
      const std::string& b = tv.bytes().values();
      if (b.size() != a.nbytes()) bad_value(where, str_cat("the value holds ", b.size(), " bytes; its type needs ", a.nbytes()));
      if (!b.empty()) std::memcpy(a.raw(), b.data(), b.size());
      break;
    }
    default:
      bad_value(where, "the value holds no data");
  }
  return out;
}

std::vector<MilBinding> OpContext::bindings(const std::string& name) const {
  auto it = op_.inputs().find(name);
  if (it == op_.inputs().end()) return {};
  std::vector<MilBinding> out;
  for (auto& b : it->second.arguments()) out.push_back(resolve_(b, at(name)));
  return out;
}

graph::Value OpContext::tensor(const std::string& name) const {
  auto v = optional_tensor(name);
  if (!v) throw ImportError("nnvm.coreml.graph", str_cat("the op has no argument ", quote(name)), where_);
  return *v;
}

std::optional<graph::Value> OpContext::optional_tensor(const std::string& name) const {
  std::vector<MilBinding> b = bindings(name);
  if (b.empty()) return std::nullopt;
  if (b.size() != 1) bad_attribute(name, str_cat("binds ", b.size(), " values where one tensor is needed"));
  if (b[0].value) return b[0].value;
  if (b[0].constant->is_string) bad_attribute(name, "is a string where a tensor is needed");
  return materialize_(*b[0].constant, name);
}

std::vector<graph::Value> OpContext::tensors(const std::string& name) const {
  std::vector<graph::Value> out;
  for (auto& b : bindings(name)) {
    if (b.value) out.push_back(*b.value);
    else if (b.constant->is_string) bad_attribute(name, "binds a string where tensors are needed");
    else out.push_back(materialize_(*b.constant, name));
  }
  if (out.empty()) throw ImportError("nnvm.coreml.graph", str_cat("the op has no argument ", quote(name)), where_);
  return out;
}

const MilConst& OpContext::constant_of(const std::string& name) const {
  std::vector<MilBinding> b = bindings(name);
  if (b.size() != 1) bad_attribute(name, str_cat("binds ", b.size(), " values where one constant is needed"));
  if (!b[0].constant) unsupported(name, "the parameter is computed by the program; nnvm needs it constant");
  return *b[0].constant;
}

std::vector<int64_t> OpContext::ints(const std::string& name, std::optional<std::vector<int64_t>> fallback) const {
  if (!has(name)) {
    if (!fallback) throw ImportError("nnvm.coreml.graph", str_cat("the op has no argument ", quote(name)), where_);
    return *fallback;
  }
  const MilConst& c = constant_of(name);
  if (c.is_string || !c.array.dtype().is_integer()) bad_attribute(name, "is not an integer tensor");
  std::vector<int64_t> out;
  const NDArray& a = c.array;
  for (int64_t i = 0; i < a.numel(); ++i) {
    switch (a.dtype().bits) {
      case 8: out.push_back(a.dtype().is_int() ? a.data<int8_t>()[i] : a.data<uint8_t>()[i]); break;
      case 16: out.push_back(a.dtype().is_int() ? a.data<int16_t>()[i] : a.data<uint16_t>()[i]); break;
      case 32: out.push_back(a.dtype().is_int() ? a.data<int32_t>()[i] : int64_t(a.data<uint32_t>()[i])); break;
      default: out.push_back(a.data<int64_t>()[i]);
    }
  }
  return out;
}

int64_t OpContext::integer(const std::string& name, std::optional<int64_t> fallback) const {
  if (!has(name) && fallback) return *fallback;
  std::vector<int64_t> v = ints(name);
  if (v.size() != 1) bad_attribute(name, str_cat("holds ", v.size(), " values where one is needed"));
  return v[0];
}

double OpContext::real(const std::string& name, std::optional<double> fallback) const {
  if (!has(name)) {
    if (!fallback) throw ImportError("nnvm.coreml.graph", str_cat("the op has no argument ", quote(name)), where_);
    return *fallback;
  }
  const MilConst& c = constant_of(name);
  const NDArray& a = c.array;
  if (c.is_string || a.numel() != 1) bad_attribute(name, "is not a single number");
  if (a.dtype() == dtype::float32) return a.data<float>()[0];
  if (a.dtype() == dtype::float64) return a.data<double>()[0];
  if (a.dtype() == dtype::float16) return float(a.data<float16>()[0]);
  if (a.dtype().is_integer()) return double(integer(name));
  bad_attribute(name, str_cat("a ", a.dtype().str(), " value is not a number"));
}

bool OpContext::flag(const std::string& name, std::optional<bool> fallback) const {
  if (!has(name)) {
    if (!fallback) throw ImportError("nnvm.coreml.graph", str_cat("the op has no argument ", quote(name)), where_);
    return *fallback;
  }
  const MilConst& c = constant_of(name);
  if (c.is_string || c.array.dtype() != dtype::boolean || c.array.numel() != 1) bad_attribute(name, "is not a boolean");
  return c.array.data<bool>()[0];
}

std::string OpContext::text(const std::string& name, std::optional<std::string> fallback) const {
  if (!has(name)) {
    if (!fallback) throw ImportError("nnvm.coreml.graph", str_cat("the op has no argument ", quote(name)), where_);
    return *fallback;
  }
  const MilConst& c = constant_of(name);
  if (!c.is_string || c.strings.size() != 1) bad_attribute(name, "is not a string");
  return c.strings[0];
}

}  // namespace coreml_import
NNVM_END_NAMESPACE
