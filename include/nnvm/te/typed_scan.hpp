// The typed spelling of te::scan (te/scan.hpp): the state is a typed placeholder of the scan's
// shape and the scan a tensor of the same type, so its reads are checked like any other.
//
//   auto s = scan_state<float, 6, 5>("cs.state");
//   auto next = compute<Shape<6, 5>>([&](auto t, auto j) { return s(t - 1, j) + X(t, j); }, "next");
//   auto cs = scan(first, next, s, "cs");  // first: [1, 5], rows [1, 6) from next
#pragma once

#include "nnvm/te/scan.hpp"
#include "nnvm/te/typed_tensor.hpp"

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

// The state of a scan of static shape [T, ...].
template <class T, int64_t... E>
Tensor<T, E...> scan_state(std::string name) {
  return placeholder<T, E...>(std::move(name));
}
// The same with run-time extents: scan_state<float>({steps, 32}, "h.state").
template <class T, size_t N>
DynTensor<T, N> scan_state(const ir::Expr (&shape)[N], std::string name) {
  return placeholder<T>(shape, std::move(name));
}

// Rows [0, k) from `init` ([k, ...]), row t >= k from `update`, which reads `state` at rows
// t-1 .. t-k (te::scan checks this and the shapes).
template <class T, int64_t... E>
Tensor<T, E...> scan(const te::Tensor& init, const Tensor<T, E...>& update, const Tensor<T, E...>& state,
                     std::string name = "scan") {
  return Tensor<T, E...>(te::scan(init, update, state, std::move(name)));
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
