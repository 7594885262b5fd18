// bit_cast (ONNX BitCast, include/nnvm/ops/transform/cast.hpp) through the interpreter, the C
// JIT and LLVM (when built), and OpenCL in the gpu.opencl.ops group, against std::bit_cast of
// each element in the test. The values are the ones a bit cast can get wrong: signed zeros,
// infinities, NaN, subnormals, the extremes of each integer type. Shapes long enough to be
// vectorized, so the lanewise C path and LLVM's vector bitcast run as well as the scalar ones.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace ops_bit_cast {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Dims = std::vector<int64_t>;
using T = ops::TensorType;

// An array of type `t` and shape `shape` holding `values`, repeated to fill it.
template <class V>
NDArray array_of(DataType t, const Dims& shape, const std::vector<V>& values) {
  NDArray a(t, shape);
  for (int64_t i = 0; i < a.numel(); ++i) std::memcpy(static_cast<char*>(a.raw()) + i * sizeof(V), &values[size_t(i) % values.size()], sizeof(V));
  return a;
}

// The expected output: every element of `in` (of type From) read as To by std::bit_cast.
template <class From, class To>
NDArray bit_cast_reference(const NDArray& in, DataType to) {
  NDArray out(to, in.shape());
  const From* x = static_cast<const From*>(in.raw());
  To* y = static_cast<To*>(out.raw());
  for (int64_t i = 0; i < in.numel(); ++i) y[i] = std::bit_cast<To>(x[i]);
  return out;
}

template <class From, class To>
OpCheck bit_cast_case(const std::string& label, DataType from, DataType to, const Dims& shape, const std::vector<From>& v) {
  NDArray in = array_of(from, shape, v);
  return {label, "bit_cast", {in}, ops::Attrs().set_dtype("to", to), {bit_cast_reference<From, To>(in, to)}, 0, 0};
}

const float inf_f = std::numeric_limits<float>::infinity();
const double inf_d = std::numeric_limits<double>::infinity();
const std::vector<float> floats = {0.0f, -0.0f, 1.0f, -1.5f, 3.14159274f, inf_f, -inf_f, std::nanf(""),
                                   std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max(),
                                   -std::numeric_limits<float>::min(), 1e-30f, 65504.0f};
const std::vector<double> doubles = {0.0, -0.0, 1.0, -2.75, 3.141592653589793, inf_d, -inf_d, std::nan(""),
                                     std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::max(),
                                     1e-300, -123456789.125};
const std::vector<int32_t> int32s = {0, 1, -1, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                                     0x3f800000, 0x7f800000, int32_t(0xff800000u), 0x00000001, 0x40490fdb, -123456};
const std::vector<int64_t> int64s = {0, 1, -1, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                                     0x3ff0000000000000LL, 0x7ff0000000000000LL, 0x400921fb54442d18LL, 12345678901234LL};

}  // namespace

TEST_CASE("bit_cast: float and integer bits both ways, against std::bit_cast") {
  const DataType f32 = dtype::float32, f64 = dtype::float64, i32 = dtype::int32, u32 = dtype::uint32,
                 i64 = dtype::int64, u64 = dtype::uint64;
  std::vector<uint32_t> uint32s;
  for (int32_t v : int32s) uint32s.push_back(uint32_t(v));
  std::vector<uint64_t> uint64s;
  for (int64_t v : int64s) uint64s.push_back(uint64_t(v));
  std::vector<OpCheck> cases = {
      bit_cast_case<float, int32_t>("float32 to int32, 3x37", f32, i32, {3, 37}, floats),
      bit_cast_case<float, uint32_t>("float32 to uint32", f32, u32, {2, 13}, floats),
      bit_cast_case<int32_t, float>("int32 to float32, 4x16", i32, f32, {4, 16}, int32s),
      bit_cast_case<uint32_t, float>("uint32 to float32", u32, f32, {11}, uint32s),
      bit_cast_case<double, int64_t>("float64 to int64, 2x17", f64, i64, {2, 17}, doubles),
      bit_cast_case<int64_t, double>("int64 to float64", i64, f64, {3, 9}, int64s),
      bit_cast_case<uint64_t, double>("uint64 to float64", u64, f64, {9}, uint64s),
      bit_cast_case<double, uint64_t>("float64 to uint64", f64, u64, {12}, doubles),
      bit_cast_case<float, int32_t>("rank 0", f32, i32, {}, std::vector<float>{-2.5f}),
      // Between integers of one width the bits are the two's complement: a conversion.
      bit_cast_case<int8_t, uint8_t>("int8 to uint8", dtype::int8, dtype::uint8, {2, 20},
                                     std::vector<int8_t>{0, 1, -1, -128, 127, -7}),
      bit_cast_case<uint16_t, int16_t>("uint16 to int16", dtype::uint16, dtype::int16, {19},
                                       std::vector<uint16_t>{0, 1, 0x7fff, 0x8000, 0xffff, 0x1234}),
      bit_cast_case<uint32_t, int32_t>("uint32 to int32", u32, i32, {19}, uint32s),
      bit_cast_case<int64_t, uint64_t>("int64 to uint64", i64, u64, {9}, int64s),
  };
  // bool is one byte holding 0 or 1.
  NDArray flags = array_of(dtype::boolean, {3, 7}, std::vector<uint8_t>{1, 0, 0, 1, 1});
  cases.push_back({"bool to uint8", "bit_cast", {flags}, ops::Attrs().set_dtype("to", dtype::uint8),
                   {array_of(dtype::uint8, {3, 7}, std::vector<uint8_t>{1, 0, 0, 1, 1})}, 0, 0});
  nnvm_test::check_ops(cases, "bit_cast");
}

TEST_CASE("bit_cast: a width change or a storage type is refused, naming attribute to") {
  auto to = [](DataType t) { return ops::Attrs().set_dtype("to", t); };
  CHECK(infer_error("bit_cast", {T(dtype::float32, {4})}, to(dtype::int64)) == "nnvm.ops.attr");
  CHECK(infer_error("bit_cast", {T(dtype::int8, {4})}, to(dtype::int16)) == "nnvm.ops.attr");
  CHECK(infer_error("bit_cast", {T(dtype::float16, {4})}, to(dtype::int16)) == "nnvm.ops.attr");
  CHECK(infer_error("bit_cast", {T(dtype::uint16, {4})}, to(dtype::bfloat16)) == "nnvm.ops.attr");
  CHECK(infer_error("bit_cast", {T(dtype::float64, {2, 3})}, to(dtype::int64)) == "(no error)");
}

TEST_CASE("bit_cast: the IR node keeps the bits through the simplifier and prints as bit_cast") {
  ir::Expr x = ir::make_const(dtype::float32, -0.0);
  ir::Expr b = ir::bit_cast(dtype::int32, x);
  REQUIRE(b.as<ir::BitCast>() != nullptr);
  CHECK(b.dtype() == dtype::int32);
  std::ostringstream os;
  os << b;
  CHECK(os.str().find("bit_cast<int32>") != std::string::npos);
  // Between integers of one width and to or from bool it is a conversion, not a new node.
  CHECK(ir::bit_cast(dtype::uint32, ir::make_const(dtype::int32, -1)).as<ir::BitCast>() == nullptr);
  CHECK(nnvm_test::error_of([] { ir::bit_cast(dtype::int64, ir::make_const(dtype::float32, 1.0)); }).first ==
        "nnvm.ir.bitcast_dtype");
}

}  // namespace ops_bit_cast
