// The typed tensor DSL. It lives in nnvm::te::dsl (nnvm::dsl for short), because nnvm::te
// already names the untyped te::Tensor and te::Expr (= ir::Expr), and its user-facing names
// are brought into nnvm, so that after `using namespace nnvm;` a kernel reads:
//
//   auto A = placeholder<float, 64, 32>("A");
//   auto B = placeholder<float, 32, 16>("B");
//   auto k = reduce_axis<32>("k");
//   auto C = compute<Shape<64, 16>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");
//
// The erased handle Expr<T> is the one name not brought into nnvm: it would make `Expr`
// ambiguous wherever code says `using namespace nnvm; using namespace nnvm::ir;`. Spell it
// dsl::Expr<float>, or `using namespace nnvm::dsl;`, which brings every DSL name.
#pragma once

#include "nnvm/te/typed_compute.hpp"
#include "nnvm/te/typed_math.hpp"
#include "nnvm/te/typed_scan.hpp"

NNVM_BEGIN_NAMESPACE

namespace dsl = te::dsl;

using te::dsl::dyn;
using te::dsl::DynTensor;
using te::dsl::Index;
using te::dsl::NamedTensor;
using te::dsl::ReduceAxis;
using te::dsl::Shape;
using te::dsl::Tensor;

using te::dsl::as_dynamic;
using te::dsl::cast;
using te::dsl::compute;
using te::dsl::placeholder;
using te::dsl::reduce_axis;
using te::dsl::scan;
using te::dsl::scan_state;
using te::dsl::select;

using te::dsl::max;
using te::dsl::max_over;
using te::dsl::min;
using te::dsl::min_over;
using te::dsl::prod;
using te::dsl::sum;

using te::dsl::abs;
using te::dsl::acos;
using te::dsl::acosh;
using te::dsl::asin;
using te::dsl::asinh;
using te::dsl::atan;
using te::dsl::atan2;
using te::dsl::atanh;
using te::dsl::ceil;
using te::dsl::copysign;
using te::dsl::cos;
using te::dsl::cosh;
using te::dsl::erf;
using te::dsl::exp;
using te::dsl::exp2;
using te::dsl::expm1;
using te::dsl::floor;
using te::dsl::fmod;
using te::dsl::isinf;
using te::dsl::isnan;
using te::dsl::log;
using te::dsl::log1p;
using te::dsl::log2;
using te::dsl::pow;
using te::dsl::round;
using te::dsl::rsqrt;
using te::dsl::sigmoid;
using te::dsl::sin;
using te::dsl::sinh;
using te::dsl::sqrt;
using te::dsl::tan;
using te::dsl::tanh;
using te::dsl::trunc;

NNVM_END_NAMESPACE
