#include "support/pch.hpp"

namespace ir_expr {

using namespace nnvm;
using namespace nnvm::ir;

TEST_CASE("untyped operators check dtypes and adapt literals") {
  Var x("x"), y("y", dtype::int32);
  Expr e = x * 4 + 1;
  CHECK(e.dtype() == dtype::int64);
  CHECK(e.as<Add>() != nullptr);
  try {
    (void)(x + y);
    FAIL("expected dtype mismatch");
  } catch (const UserError& err) {
    CHECK(err.id() == "nnvm.ir.dtype_mismatch");
  }
  CHECK_THROWS_AS(Call::make(CallOp::exp, {x}), UserError);
  CHECK((x < 3).dtype() == dtype::boolean);
}

TEST_CASE("float16 and bfloat16 round-trip") {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 5.9604645e-08f, 3.14159f}) {
    float back = float(float16(f));
    CHECK(back == doctest::Approx(f).epsilon(1e-3).scale(1e-7));
  }
  CHECK(std::isinf(float(float16(1e6f))));
  CHECK(float(bfloat16(1.5f)) == 1.5f);
  CHECK(float(float16(1e-7f)) == 1.1920929e-07f);  // rounds to two subnormal steps
}

}  // namespace ir_expr
