#include "nnvm/importers/scalar_constant.hpp"

#include <cmath>
#include <cstring>
#include <limits>

NNVM_BEGIN_NAMESPACE
namespace importers {

namespace {
// double -> integer without undefined behaviour: NaN is 0, out-of-range values saturate.
template <class T>
T saturate(double v) {
  if (std::isnan(v)) return T(0);
  if (v <= double(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= double(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return T(v);
}
}  // namespace

NDArray scalar_constant(std::string_view format, DataType d, double v) {
  NDArray a(d, std::vector<int64_t>{});
  auto put = [&](auto x) { std::memcpy(a.raw(), &x, sizeof(x)); };
  if (d == dtype::float32) put(float(v));
  else if (d == dtype::float64) put(v);
  else if (d == dtype::float16) put(float16::from_float(float(v)));
  else if (d == dtype::bfloat16) put(bfloat16::from_float(float(v)));
  else if (d == dtype::int64) put(saturate<int64_t>(v));
  else if (d == dtype::int32) put(saturate<int32_t>(v));
  else if (d == dtype::int16) put(saturate<int16_t>(v));
  else if (d == dtype::int8) put(saturate<int8_t>(v));
  else if (d == dtype::uint64) put(saturate<uint64_t>(v));
  else if (d == dtype::uint32) put(saturate<uint32_t>(v));
  else if (d == dtype::uint16) put(saturate<uint16_t>(v));
  else if (d == dtype::uint8) put(saturate<uint8_t>(v));
  else if (d == dtype::boolean) put(uint8_t(v != 0));
  else throw ImportError(str_cat("nnvm.", format, ".unsupported"), str_cat("no scalar constant of type ", d));
  return a;
}

}  // namespace importers
NNVM_END_NAMESPACE
