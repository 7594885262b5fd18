// A dialect is data: a made-up language, ToyC, spelled differently from C in every table of
// Dialect (types, vectors, literals, qualifiers, thread index, barrier, math names), prints a
// kernel through the shared emitter with no hook overridden and no CPU ABI. The golden text
// checks spelling only; the C dialect's numerics are tested through the C JIT elsewhere.
#include "support/pch.hpp"

#include "nnvm/target/c_like.hpp"

namespace target_dialect {

using namespace nnvm;
using namespace nnvm::ir;

namespace {

const target::Dialect& toy_dialect() {
  static const std::unordered_set<std::string> reserved = {"kernel", "global", "noalias", "vec", "tid"};
  static const target::Dialect d = [] {
    target::Dialect t;
    t.types = {"b8", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "h16", "bh16", "f32", "f64", "ptr"};
    t.int_type = "i32";
    t.vector_type = "vec<${scalar},${lanes}>";
    t.vector_zero = "${type}::zero()";
    t.broadcast = "splat<${lanes}>(${value})";
    t.lane = "${vector}.at(${lane})";
    t.vector_load = "load<${type}>(${buffer} + ${base})";
    t.vector_store = "store(${buffer} + ${base}, ${value});";
    t.nan = "nan32";
    t.infinity = "inf32";
    t.int64_literal = "${value}_i64";
    t.uint64_literal = "${value}_u64";
    t.restrict_qualifier = "noalias ";
    t.helper_qualifier = "helper ";
    t.global_space = "global ";
    t.const_qualifier = "readonly ";
    t.thread_index = {{"threadIdx.x", "tid.x"}};
    t.barrier = "sync();";
    t.math_names = {{CallOp::exp, "natural_exp"}};
    t.float32_math_suffix = "_f32";
    t.bit_copy = "${dst} = bitcast(${src});";
    t.reserved_names = &reserved;
    t.max_private_bytes = 256;
    t.kernel_signature = "kernel ${name}(${params})";
    t.buffer_param = "${space}${const}${type}* ${restrict}${name}";
    return t;
  }();
  return d;
}

Expr i64(int64_t v) { return IntImm::make(dtype::index, v); }

// Thread tx scales four floats (a vector load, store and broadcast operand), clamps them lane
// by lane, waits at a barrier, then broadcasts a scalar exp and adds a 64-bit constant.
LoweredFunc toy_kernel() {
  Var n("n"), tx("tx");
  Buffer X("X", dtype::float32, {n * 4}), Y("Y", dtype::float32, {n * 4}), C("C", dtype::int64, {n});
  Expr four = Ramp::make(tx * 4, i64(1), 4);
  Expr scaled = Load::make(X, four) * Broadcast::make(make_const(dtype::float32, 2.0), 4);
  Stmt body = Seq::make({
      Store::make(Y, max(scaled, Broadcast::make(make_const(dtype::float32, NAN), 4)), four),
      Barrier::make(),
      Store::make(Y, Broadcast::make(call(CallOp::exp, Load::make(X, tx * 4)), 4), four),
      Store::make(C, Load::make(C, tx) + i64(5000000000), tx),
  });
  return {"toy", {X, Y, C}, {n}, For::make(tx, 0, n, ForKind::thread_binding, body, "threadIdx.x"), "toy"};
}

}  // namespace

TEST_CASE("dialect: a toy dialect prints a known kernel through the shared emitter") {
  std::string src = target::CLikeEmitter(toy_dialect()).emit_kernel_source(toy_kernel());
  CHECK(src == R"(kernel toy(global readonly f32* noalias X, global f32* noalias Y, global i64* noalias C, i64 n) {
  const i64 tx = tid.x;
  const vec<f32,4> v = load<vec<f32,4>>(X + tx * 4) * 2.0f;
  vec<f32,4> v_1 = vec<f32,4>::zero();
  for (i32 lane = 0; lane < 4; ++lane) v_1.at(lane) = v.at(lane) > nan32 || v.at(lane) != v.at(lane) ? v.at(lane) : nan32;
  store(Y + tx * 4, v_1);
  sync();
  const f32 t = natural_exp_f32(X[tx * 4]);
  const vec<f32,4> v_2 = splat<4>(t);
  store(Y + tx * 4, v_2);
  C[tx] = C[tx] + 5000000000_i64;
}
)");
}

TEST_CASE("dialect: a loop bound to an axis the dialect lacks is the CPU back end's error") {
  LoweredFunc f = toy_kernel();
  f.body = For::make(Var("b"), 0, i64(2), ForKind::thread_binding, Evaluate::make(i64(0)), "blockIdx.x");
  CHECK_THROWS_WITH_AS(target::CLikeEmitter(toy_dialect()).emit_kernel_source(f),
                       doctest::Contains("[nnvm.codegen.thread_binding]"), BackendError);
}

}  // namespace target_dialect
