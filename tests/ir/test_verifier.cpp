#include "support/pch.hpp"

namespace ir_verifier {

using namespace nnvm;
using namespace nnvm::ir;

namespace {

Expr f32(double v) { return FloatImm::make(dtype::float32, v); }

// The id of the InternalError that verify throws, or "" when it accepts `f`.
std::string verify_id(const LoweredFunc& f) {
  try {
    verify(f);
  } catch (const InternalError& e) {
    return e.id();
  }
  return "";
}

struct Kernel {
  Var n{"n"};
  Buffer A{"A", dtype::float32, {n}};
  Buffer B{"B", dtype::float32, {n}};
  Var i{"i"};
  LoweredFunc with(Stmt body) const { return LoweredFunc{"k", {A, B}, {n}, std::move(body), ""}; }
  Stmt loop(Stmt body) const { return For::make(i, Expr(0), n, ForKind::serial, std::move(body)); }
  Stmt copy() const { return Store::make(B, Load::make(A, i), i); }
};

}  // namespace

TEST_CASE("verify accepts a well-formed kernel") {
  Kernel k;
  Buffer T("T", dtype::float32, {Expr(4)}, MemoryScope::local);
  Var j("j"), x("x"), y("y", dtype::float32);
  Stmt body = k.loop(Allocate::make(
      T, Seq::make({For::make(j, Expr(0), Expr(4), ForKind::serial, Store::make(T, Load::make(k.A, k.i), j)),
                    LetStmt::make(x, k.i * 2, IfThenElse::make(x < k.n, Store::make(k.B, Load::make(T, Expr(0)), k.i))),
                    Store::make(k.B, Let::make(y, f32(1.0), y), k.i)})));
  CHECK(verify_id(k.with(body)) == "");
  // Sibling loops may reuse a variable; vector stores with matching lanes are fine.
  Stmt vec = Store::make(k.B, Load::make(k.A, Ramp::make(Expr(0), Expr(1), 4)), Ramp::make(Expr(0), Expr(1), 4));
  CHECK(verify_id(k.with(Seq::make({k.loop(k.copy()), k.loop(k.copy()), vec}))) == "");
  CHECK(verify_id(k.with(For::make(k.i, Expr(0), Expr(32), ForKind::thread_binding, k.copy(), "threadIdx.x"))) == "");
}

TEST_CASE("verify rejects buffers that are neither params nor allocated around the access") {
  Kernel k;
  Buffer T("T", dtype::float32, {Expr(4)});
  CHECK(verify_id(k.with(k.loop(Store::make(T, f32(1.0), k.i)))) == "nnvm.verify.undefined_buffer");
  CHECK(verify_id(k.with(k.loop(Store::make(k.B, Load::make(T, k.i), k.i)))) == "nnvm.verify.undefined_buffer");
  // The allocation's scope ends with its body.
  Stmt s = Seq::make({Allocate::make(T, Store::make(T, f32(1.0), Expr(0))), Store::make(T, f32(2.0), Expr(0))});
  CHECK(verify_id(k.with(s)) == "nnvm.verify.undefined_buffer");
  CHECK(verify_id(k.with(Allocate::make(k.A, Evaluate::make(Expr(0))))) == "nnvm.verify.buffer_redefined");
}

TEST_CASE("verify rejects variables used outside their scope or defined twice") {
  Kernel k;
  CHECK(verify_id(k.with(k.copy())) == "nnvm.verify.var_scope");
  Var x("x");
  Stmt s = Seq::make({LetStmt::make(x, Expr(1), Evaluate::make(x)), Store::make(k.B, f32(1.0), x)});
  CHECK(verify_id(k.with(s)) == "nnvm.verify.var_scope");
  CHECK(verify_id(k.with(Store::make(k.B, f32(1.0), Let::make(x, Expr(1), x) + x))) == "nnvm.verify.var_scope");
  // Size vars are in scope everywhere, other free vars in shapes are not.
  CHECK(verify_id(k.with(Store::make(k.B, f32(1.0), k.n - 1))) == "");
  Var m("m");
  LoweredFunc f{"k", {Buffer("C", dtype::float32, {m})}, {}, Evaluate::make(Expr(0)), ""};
  CHECK(verify_id(f) == "nnvm.verify.var_scope");
  CHECK(verify_id(k.with(k.loop(k.loop(k.copy())))) == "nnvm.verify.var_redefined");
  CHECK(verify_id(k.with(k.loop(LetStmt::make(k.i, Expr(0), k.copy())))) == "nnvm.verify.var_redefined");
  CHECK(verify_id(k.with(For::make(k.n, Expr(0), Expr(4), ForKind::serial, Evaluate::make(Expr(0))))) ==
        "nnvm.verify.var_redefined");
}

TEST_CASE("verify rejects tensor-level nodes left after lowering") {
  Kernel k;
  auto P = te::placeholder({Expr(8)}, dtype::float32, "P");
  CHECK(verify_id(k.with(k.loop(Store::make(k.B, P(k.i), k.i)))) == "nnvm.verify.producer_node");
  CHECK(verify_id(k.with(k.loop(make_stmt<ProducerStore>(P.node_ptr(), f32(1.0), std::vector<Expr>{k.i})))) ==
        "nnvm.verify.producer_node");
  CHECK(verify_id(k.with(make_stmt<ProducerRealize>(P.node_ptr(), std::vector<Range>{{Expr(0), Expr(8)}},
                                                    MemoryScope::global, Evaluate::make(Expr(0))))) ==
        "nnvm.verify.producer_node");
  auto r = te::reduce_axis(Expr(4), "r");
  CHECK(verify_id(k.with(Store::make(k.B, te::sum(f32(1.0), {r}), Expr(0)))) == "nnvm.verify.reduce_node");
}

TEST_CASE("verify in loop-nest form accepts tensor nodes and still checks scopes inside them") {
  Kernel k;
  auto P = te::placeholder({Expr(8)}, dtype::float32, "P");
  auto T = te::placeholder({Expr(8)}, dtype::float32, "T");
  auto loop_nest_id = [&](const Stmt& body) {
    try {
      verify(body, {k.A, k.B}, {k.n}, "k", IRForm::loop_nest);
    } catch (const InternalError& e) {
      return e.id();
    }
    return std::string();
  };
  Stmt store = make_stmt<ProducerStore>(P.node_ptr(), T(k.i), std::vector<Expr>{k.i});
  Stmt realized = make_stmt<ProducerRealize>(T.node_ptr(), std::vector<Range>{{Expr(0), k.n}}, MemoryScope::global,
                                             k.loop(store));
  CHECK(loop_nest_id(realized) == "");
  CHECK(verify_id(k.with(realized)) == "nnvm.verify.producer_node");
  CHECK(loop_nest_id(store) == "nnvm.verify.var_scope");  // i outside its loop, in a tensor store's index
  Var m("m");
  CHECK(loop_nest_id(make_stmt<ProducerRealize>(T.node_ptr(), std::vector<Range>{{Expr(0), m}}, MemoryScope::global,
                                                Evaluate::make(Expr(0)))) == "nnvm.verify.var_scope");
  auto r = te::reduce_axis(Expr(4), "r");
  CHECK(loop_nest_id(Store::make(k.B, te::sum(f32(1.0), {r}), Expr(0))) == "nnvm.verify.reduce_node");
}

TEST_CASE("verify rejects ill-typed indices, stores and conditions") {
  Kernel k;
  Var fi("fi", dtype::float32);
  LoweredFunc f = k.with(make_stmt<Store>(k.B, f32(1.0), Expr(fi)));  // bypasses Store::make's check
  f.size_vars.push_back(fi);
  CHECK(verify_id(f) == "nnvm.verify.index_dtype");
  Stmt lanes = make_stmt<Store>(k.B, Broadcast::make(f32(1.0), 4), Expr(0));
  CHECK(verify_id(k.with(lanes)) == "nnvm.verify.lanes_mismatch");
  Stmt dt = make_stmt<Store>(k.B, Expr(1.0), Expr(0));
  CHECK(verify_id(k.with(dt)) == "nnvm.verify.store_dtype");
  Stmt cond = make_stmt<IfThenElse>(Expr(1), k.copy(), Stmt());
  CHECK(verify_id(k.with(k.loop(cond))) == "nnvm.verify.condition_dtype");
  Expr sel = make_expr<Select>(dtype::float32, Expr(1), f32(1.0), f32(2.0));
  CHECK(verify_id(k.with(Store::make(k.B, sel, Expr(0)))) == "nnvm.verify.condition_dtype");
  CHECK(verify_id(k.with(For::make(k.i, Expr(0), Expr(4), ForKind::thread_binding, k.copy()))) == "nnvm.verify.thread_tag");
  CHECK(verify_id(k.with(make_stmt<Seq>(std::vector<Stmt>{Stmt()}))) == "nnvm.verify.undefined");
}

TEST_CASE("verify errors name the kernel and the loops around the problem") {
  Kernel k;
  Buffer T("T", dtype::float32, {Expr(4)});
  try {
    verify(k.with(k.loop(Store::make(T, f32(1.0), k.i))));
    FAIL("expected a verify error");
  } catch (const InternalError& e) {
    CHECK(e.id() == "nnvm.verify.undefined_buffer");
    CHECK(e.context() == std::vector<std::string>{"kernel k", "for i"});
    CHECK(std::string(e.what()).find("buffer T") != std::string::npos);
  }
  // The Stmt overload checks a body against explicit params and size vars.
  CHECK_NOTHROW(verify(k.loop(k.copy()), {k.A, k.B}, {k.n}));
  CHECK_THROWS_AS(verify(k.loop(k.copy()), {k.A}, {k.n}), InternalError);
}

}  // namespace ir_verifier
