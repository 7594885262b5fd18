// Invalid schedules fail with the documented error id and name the stage and axis.
#include "support/pch.hpp"

namespace schedule_schedule_errors {

using namespace nnvm;
using nnvm::schedule::Schedule;

namespace {

struct Matmul {
  te::Tensor A = te::placeholder({16, 8}, dtype::float32, "A");
  te::Tensor B = te::placeholder({8, 12}, dtype::float32, "B");
  ir::IterVar k = te::reduce_axis(8, "k");
  te::Tensor C = te::compute({16, 12}, [&](auto& v) { return te::sum(A(v[0], k.var()) * B(k.var(), v[1]), {k}); }, "C");
};

// Runs `f`, which must throw UserError with `id`; returns the message for further checks.
template <class F>
std::string expect_error(const std::string& id, F&& f) {
  try {
    f();
  } catch (const UserError& e) {
    CHECK_MESSAGE(e.id() == id, e.what());
    return e.what();
  }
  FAIL("expected UserError ", id);
  return {};
}

}  // namespace

TEST_CASE("split validates its factor") {
  Matmul m;
  Schedule s = schedule::create_schedule(m.C);
  std::string msg = expect_error("nnvm.schedule.split_factor", [&] { s[m.C].split(s[m.C].axis(0), 0); });
  CHECK(msg.find("stage C") != std::string::npos);
  CHECK(msg.find("axis i") != std::string::npos);
  expect_error("nnvm.schedule.split_nparts", [&] { s[m.C].split_nparts(s[m.C].axis(0), -2); });
  expect_error("nnvm.schedule.split_factor", [&] { s[m.C].split(s[m.C].axis(0), ir::Expr(1.5f)); });
}

TEST_CASE("primitives reject axes that are not current loops of the stage") {
  Matmul m;
  Schedule s = schedule::create_schedule(m.C);
  auto i = s[m.C].axis(0);
  s[m.C].split(i, 4);
  expect_error("nnvm.schedule.not_leaf", [&] { s[m.C].split(i, 2); });
  expect_error("nnvm.schedule.not_leaf", [&] { s[m.C].vectorize(i); });
  Matmul other;
  Schedule s2 = schedule::create_schedule(other.C);
  expect_error("nnvm.schedule.not_leaf", [&] { s[m.C].parallel(s2[other.C].axis(1)); });
  expect_error("nnvm.schedule.axis_index", [&] { s[m.C].axis(2); });
  expect_error("nnvm.schedule.axis_name", [&] { s[m.C].axis("nope"); });
  expect_error("nnvm.schedule.unknown_tensor", [&] { s[m.A]; });
}

TEST_CASE("reorder and fuse validate their axes") {
  Matmul m;
  Schedule s = schedule::create_schedule(m.C);
  auto st = s[m.C];
  expect_error("nnvm.schedule.reorder_duplicate", [&] { st.reorder({st.axis(0), st.axis(0)}); });
  expect_error("nnvm.schedule.fuse_not_adjacent", [&] { st.fuse(st.axis(1), st.axis(0)); });
  expect_error("nnvm.schedule.fuse_mixed_kind", [&] { st.fuse(st.axis(1), st.reduce_axis(0)); });
  expect_error("nnvm.schedule.tile_same_axis", [&] { st.tile(st.axis(0), st.axis(0), 2, 2); });
}

TEST_CASE("loop kinds are validated") {
  Matmul m;
  Schedule s = schedule::create_schedule(m.C);
  auto st = s[m.C];
  expect_error("nnvm.schedule.vectorize_reduction", [&] { st.vectorize(st.reduce_axis(0)); });
  expect_error("nnvm.schedule.parallel_reduction", [&] { st.parallel(st.reduce_axis(0)); });
  st.parallel(st.axis(0));
  expect_error("nnvm.schedule.conflicting_kind", [&] { st.vectorize(st.axis(0)); });
}

TEST_CASE("lowering rejects loops whose extent a vector or unroll needs but lacks") {
  ir::Var n("n");
  te::Tensor A = te::placeholder({n}, dtype::float32, "A");
  te::Tensor B = te::compute({n}, [&](auto& v) { return A(v[0]) * 2.0f; }, "B");
  {
    Schedule s = schedule::create_schedule(B);
    s[B].vectorize(s[B].axis(0));
    expect_error("nnvm.schedule.vectorize_extent", [&] { lower::lower(s, {A, B}, "f"); });
  }
  {
    Schedule s = schedule::create_schedule(B);
    s[B].unroll(s[B].axis(0));
    expect_error("nnvm.schedule.unroll_extent", [&] { lower::lower(s, {A, B}, "f"); });
  }
  {
    te::Tensor C = te::placeholder({1000}, dtype::float32, "C");
    te::Tensor D = te::compute({1000}, [&](auto& v) { return C(v[0]) + 1.0f; }, "D");
    Schedule s = schedule::create_schedule(D);
    s[D].unroll(s[D].axis(0));
    expect_error("nnvm.schedule.unroll_extent", [&] { lower::lower(s, {C, D}, "f"); });
  }
}

TEST_CASE("lowering validates the argument list") {
  Matmul m;
  Schedule s = schedule::create_schedule(m.C);
  expect_error("nnvm.lower.missing_arg", [&] { lower::lower(s, {m.A, m.C}, "f"); });
  expect_error("nnvm.lower.output_not_arg", [&] { lower::lower(s, {m.A, m.B}, "f"); });
  expect_error("nnvm.lower.duplicate_arg", [&] { lower::lower(s, {m.A, m.A, m.B, m.C}, "f"); });
  ir::Var n("n"), q("q");
  te::Tensor X = te::placeholder({n}, dtype::float32, "X");
  auto r = te::reduce_axis(q, "r");
  te::Tensor Y = te::compute({n}, [&](auto& v) { return te::sum(X(v[0]) * 1.0f, {r}); }, "Y");
  Schedule s2 = schedule::create_schedule(Y);
  expect_error("nnvm.lower.unbound_size", [&] { lower::lower(s2, {X, Y}, "f"); });
}

TEST_CASE("stage primitives validate their arguments") {
  Matmul m;
  Schedule s = schedule::create_schedule(m.C);
  expect_error("nnvm.schedule.compute_at_output", [&] { s[m.C].compute_at(s[m.C], s[m.C].axis(0)); });
  expect_error("nnvm.schedule.inline_output", [&] { s[m.C].compute_inline(); });
  expect_error("nnvm.schedule.output_scope", [&] { s[m.C].set_scope(ir::MemoryScope::local); });
  expect_error("nnvm.schedule.bind_tag", [&] { schedule::thread_axis_named("threadIdx.w"); });
  CHECK(schedule::thread_axis_named("threadIdx.y") == gpu::thread_y);
  // A reduction is shared by the threads of one block, never by blocks or virtual threads.
  expect_error("nnvm.schedule.bind_reduction", [&] { s[m.C].bind(s[m.C].reduce_axis(0), gpu::block_x); });
  expect_error("nnvm.schedule.bind_reduction", [&] { s[m.C].bind(s[m.C].reduce_axis(0), gpu::vthread); });
  expect_error("nnvm.schedule.pragma_value", [&] { s[m.C].pragma_auto_unroll(s[m.C].axis(0), 0); });
  expect_error("nnvm.schedule.rfactor_axis", [&] { s.rfactor(m.C, s[m.C].axis(0)); });
  expect_error("nnvm.schedule.cache_read_not_reader", [&] { s.cache_read(m.C, ir::MemoryScope::local, {m.C}); });
  s[m.C].split(s[m.C].axis(0), 4);
  expect_error("nnvm.schedule.cache_write_scheduled", [&] { s.cache_write(m.C, ir::MemoryScope::local); });

  te::Tensor X = te::placeholder({8}, dtype::float32, "X");
  ir::IterVar r = te::reduce_axis(8, "r");
  te::Tensor S = te::compute({1}, [&](auto&) { return te::sum(X(r.var()), {r}); }, "S");
  te::Tensor Y = te::compute({8}, [&](auto& v) { return X(v[0]) / S(0); }, "Y");
  Schedule s2 = schedule::create_schedule(Y);
  expect_error("nnvm.schedule.inline_reduction", [&] { s2[S].compute_inline(); });
}

TEST_CASE("attachments are checked when lowering") {
  te::Tensor X = te::placeholder({8}, dtype::float32, "X");
  te::Tensor T = te::compute({8}, [&](auto& v) { return X(v[0]) * 2.0f; }, "T");
  te::Tensor U = te::compute({8}, [&](auto& v) { return T(v[0]) + 1.0f; }, "U");
  te::Tensor V = te::compute({8}, [&](auto& v) { return T(v[0]) + U(v[0]); }, "V");
  {
    Schedule s = schedule::create_schedule(V);
    s[T].compute_at(s[U], s[U].axis(0));  // V reads T as well, outside U's loop
    expect_error("nnvm.schedule.compute_at_consumers", [&] { lower::lower(s, {X, V}, "f"); });
  }
  {
    Schedule s = schedule::create_schedule(V);
    auto i = s[V].axis(0);
    s[U].compute_at(s[V], i);
    s[V].split(i, 2);  // the loop U was attached to is gone
    expect_error("nnvm.schedule.compute_at_unused_loop", [&] { lower::lower(s, {X, V}, "f"); });
  }
  {
    Schedule s = schedule::create_schedule(V);
    s[U].compute_inline();
    s[T].compute_at(s[U], s[U].axis(0));
    expect_error("nnvm.schedule.compute_at_inlined", [&] { lower::lower(s, {X, V}, "f"); });
  }
  {
    Schedule s = schedule::create_schedule(V);
    s[U].compute_inline();
    expect_error("nnvm.lower.arg_not_root", [&] { lower::lower(s, {X, U, V}, "f"); });
  }
}

TEST_CASE("loops bound to GPU threads lower, interpret, and are rejected by the C emitter") {
  te::Tensor X = te::placeholder({64}, dtype::float32, "X");
  te::Tensor Y = te::compute({64}, [&](auto& v) { return X(v[0]) * 3.0f; }, "Y");
  Schedule s = schedule::create_schedule(Y);
  auto [bx, tx] = s[Y].split(s[Y].axis(0), 16);
  s[Y].bind(bx, gpu::block_x);
  s[Y].bind(tx, gpu::thread_x);
  expect_error("nnvm.schedule.bind_twice", [&] { s[Y].bind(tx, gpu::block_x); });
  auto fn = lower::lower(s, {X, Y}, "scale");
  std::string ir_text = ir::to_string(fn);
  CHECK(ir_text.find("bound (blockIdx.x) (i.outer, 0, 4)") != std::string::npos);
  CHECK(ir_text.find("bound (threadIdx.x) (i.inner, 0, 16)") != std::string::npos);
  NDArray x(dtype::float32, {64}), y(dtype::float32, {64});
  for (int i = 0; i < 64; ++i) x.values<float>()[size_t(i)] = float(i);
  target::interpret(fn, x, y);
  for (int i = 0; i < 64; ++i) CHECK(y.values<float>()[size_t(i)] == 3.0f * float(i));
  CHECK_THROWS_AS(target::emit_c(fn), BackendError);
}

TEST_CASE("a reduction across threads: one thread axis, data-parallel loops outside") {
  te::Tensor X = te::placeholder({4, 64, 8}, dtype::float32, "X");
  ir::IterVar r = te::reduce_axis(64, "r"), q = te::reduce_axis(8, "q");
  te::Tensor Y = te::compute({4}, [&](auto& v) { return te::sum(X(v[0], r.var(), q.var()), {r, q}); }, "Y");
  {
    Schedule s = schedule::create_schedule(Y);
    s[Y].bind(s[Y].reduce_axis(0), gpu::thread_x);
    std::string message = expect_error("nnvm.schedule.bind_reduction", [&] { s[Y].bind(s[Y].reduce_axis(1), gpu::thread_y); });
    CHECK(message.find("one thread axis") != std::string::npos);
  }
  {
    // The output loop inside the reduction loops: each thread's partial result would mix outputs.
    Schedule s = schedule::create_schedule(Y);
    s[Y].reorder({s[Y].reduce_axis(0), s[Y].axis(0)});
    s[Y].bind(s[Y].reduce_axis(0), gpu::thread_x);
    lower::LowerOptions gpu_lowering;
    gpu_lowering.family = target::Family::gpu;
    std::string message = expect_error("nnvm.schedule.cross_thread_order", [&] { lower::lower(s, {X, Y}, "f", gpu_lowering); });
    CHECK(message.find("reorder i outward") != std::string::npos);
  }
}

}  // namespace schedule_schedule_errors
