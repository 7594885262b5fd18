// Golden tests of the lowering passes: the IR after each named pass, exactly.
#include "support/pch.hpp"

namespace lower_passes {

using namespace nnvm;

namespace {

// Lowers and records the printed IR after every pass, plus the whole kernel under "kernel".
std::map<std::string, std::string> lower_and_trace(const schedule::Schedule& s, const std::vector<te::Tensor>& args,
                                                   int vector_bits = 512,
                                                   target::Family family = target::Family::cpu) {
  std::map<std::string, std::string> out;
  lower::LowerOptions options;
  options.vector_bits = vector_bits;
  options.family = family;
  options.on_pass = [&](const std::string& pass, const ir::Stmt& st) { out[pass] = ir::to_string(st); };
  out["kernel"] = ir::to_string(lower::lower(s, args, "f", options));
  return out;
}

// Sets an environment variable for its lifetime, restoring the old value after.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(const char* n, const char* value) : name(n) {
    if (const char* v = std::getenv(n)) old = v;
    setenv(n, value, 1);
  }
  ~ScopedEnv() { old ? setenv(name.c_str(), old->c_str(), 1) : unsetenv(name.c_str()); }
};

// The InternalError's message that `f` throws, or "" when it throws none.
template <class F>
std::string internal_error(F&& f) {
  try {
    f();
  } catch (const InternalError& e) {
    return e.what();
  }
  return "";
}

// The built-in table with `row` inserted after the pass named `after`.
std::vector<lower::LowerPass> with_row_after(const std::string& after, lower::LowerPass row) {
  std::vector<lower::LowerPass> rows = lower::lower_passes();
  auto at = std::find_if(rows.begin(), rows.end(), [&](auto& r) { return r.name == after; });
  rows.insert(at + 1, std::move(row));
  return rows;
}

}  // namespace

TEST_CASE("the lowering table: one row per pass, each requiring only what earlier rows ensure") {
  CHECK(lower::pass_names() == std::vector<std::string>{"inline_stages", "infer_bounds", "schedule_ops",
                                                         "storage_flatten", "simplify", "legalize_vectors", "vectorize",
                                                         "unroll", "final_simplify", "insert_barriers"});
  CHECK_NOTHROW(lower::check_pass_table(lower::lower_passes()));
  auto moved = [](const std::string& name, const std::string& before) {
    std::vector<lower::LowerPass> rows = lower::lower_passes();
    auto from = std::find_if(rows.begin(), rows.end(), [&](auto& r) { return r.name == name; });
    lower::LowerPass row = *from;
    rows.erase(from);
    rows.insert(std::find_if(rows.begin(), rows.end(), [&](auto& r) { return r.name == before; }), row);
    return rows;
  };
  // legalize_vectors splits vectorized loops: after vectorize there are none left to split.
  CHECK(internal_error([&] { lower::check_pass_table(moved("vectorize", "legalize_vectors")); }) ==
        "[nnvm.lower.pass_order] lowering pass legalize_vectors requires vectorize_pending, which no earlier pass for "
        "cpu ensures");
  CHECK(internal_error([&] { lower::check_pass_table(moved("infer_bounds", "inline_stages")); }) ==
        "[nnvm.lower.pass_order] lowering pass infer_bounds requires stages_inlined, which no earlier pass for cpu "
        "ensures");
  std::vector<lower::LowerPass> no_unroll = lower::lower_passes();
  std::erase_if(no_unroll, [](auto& r) { return r.name == "unroll"; });
  CHECK(internal_error([&] { lower::check_pass_table(no_unroll); }) ==
        "[nnvm.lower.pass_order] the lowering passes for cpu end with unroll_pending");
  // A caller's table is checked when lower() is given it.
  te::Tensor X = te::placeholder({3}, dtype::float32, "X");
  te::Tensor Y = te::compute({3}, [&](auto& v) { return X(v[0]) + 1.0f; }, "Y");
  auto s = schedule::create_schedule(Y);
  lower::LowerOptions options;
  options.passes = &no_unroll;
  CHECK(internal_error([&] { lower::lower(s, {X, Y}, "f", options); }).find("nnvm.lower.pass_order") !=
        std::string::npos);
}

TEST_CASE("legalize_vectors runs for CPU-like families only: a GPU keeps the vectors as scheduled") {
  te::Tensor A = te::placeholder({32}, dtype::float32, "A");
  te::Tensor B = te::compute({32}, [&](auto& v) { return A(v[0]) + 1.0f; }, "B");
  auto s = schedule::create_schedule(B);
  auto [o, i] = s[B].split(s[B].axis(0), 16);
  s[B].vectorize(i);
  auto gpu = lower_and_trace(s, {A, B}, 256, target::Family::gpu);
  CHECK(gpu.count("legalize_vectors") == 0);
  CHECK(gpu["vectorize"] == "for (i.outer, 0, 2) {\n"
                            "  B[x16(i.outer*16) + ramp(0, 1, 16)] = A[x16(i.outer*16) + ramp(0, 1, 16)] + x16(1.0f)\n"
                            "}\n");
  for (target::Family f : {target::Family::cpu, target::Family::mcu, target::Family::wasm}) {
    auto cpu_like = lower_and_trace(s, {A, B}, 256, f);
    CHECK(cpu_like["legalize_vectors"].find("vectorized (i.inner.lane, 0, 8)") != std::string::npos);
  }
}

TEST_CASE("inlining and bound inference are rows of their own: their IR is each stage's store over its ranges") {
  te::Tensor X = te::placeholder({10}, dtype::float32, "X");
  te::Tensor T = te::compute({10}, [&](auto& v) { return X(v[0]) * 2.0f; }, "T");
  te::Tensor U = te::compute({10}, [&](auto& v) { return T(v[0]) + 1.0f; }, "U");
  te::Tensor Y = te::compute({9}, [&](auto& v) { return U(v[0]) + U(v[0] + 1); }, "Y");
  auto s = schedule::create_schedule(Y);
  s[T].compute_inline();
  auto [o, i] = s[Y].split(s[Y].axis(0), 3);
  s[U].compute_at(s[Y], o);
  auto trace = lower_and_trace(s, {X, Y});
  CHECK(trace["inline_stages"] == "U(i) = (X(i)*2.0f) + 1.0f\n"
                                  "Y(i_1) = U(i_1) + U(i_1 + 1)\n");
  // U is computed, per iteration of Y's outer loop, over the four points that iteration reads.
  CHECK(trace["infer_bounds"] == "for (i, i.outer*3, 4) {\n"
                                 "  U(i) = (X(i)*2.0f) + 1.0f\n"
                                 "}\n"
                                 "for (i_1, 0, 9) {\n"
                                 "  Y(i_1) = U(i_1) + U(i_1 + 1)\n"
                                 "}\n");
}

TEST_CASE("NNVM_VERIFY_PASSES=1 verifies the IR after every pass and names the pass that broke it") {
  te::Tensor X = te::placeholder({4, 3}, dtype::float32, "X");
  te::Tensor Y = te::compute({4, 3}, [&](auto& v) { return X(v[0], v[1]) + 1.0f; }, "Y");
  auto s = schedule::create_schedule(Y);
  // A broken pass: it drops the outermost loop but keeps its body, which still uses the loop's variable.
  auto drop_outer_loop = [](lower::LowerState& st) { st.body = st.body.as<ir::For>()->body; };
  using P = lower::IRProperty;
  lower::LowerOptions options;
  auto flat = with_row_after("simplify", {"drop_outer_loop", {P::loop_nest}, {}, {}, lower::every_family, drop_outer_loop});
  auto tensors =
      with_row_after("schedule_ops", {"drop_outer_loop", {P::loop_nest}, {}, {}, lower::every_family, drop_outer_loop});
  {
    ScopedEnv on("NNVM_VERIFY_PASSES", "1");
    options.passes = &flat;
    CHECK(internal_error([&] { lower::lower(s, {X, Y}, "f", options); }) ==
          "[nnvm.verify.var_scope] after lowering pass drop_outer_loop: variable i is used outside the loop or let "
          "that defines it (kernel f \u203a for j)");
    // Before storage_flatten the loops store to tensors, and the verifier checks them as such.
    options.passes = &tensors;
    CHECK(internal_error([&] { lower::lower(s, {X, Y}, "f", options); }) ==
          "[nnvm.verify.var_scope] after lowering pass drop_outer_loop: variable i is used outside the loop or let "
          "that defines it (kernel f \u203a for j)");
    // The built-in passes pass, and so does a symbolic size that no argument binds until the
    // end, where it is the user's error it always was.
    CHECK_NOTHROW(lower::lower(s, {X, Y}, "f"));
    ir::Var q("q"), p("p");
    auto r = te::reduce_axis(q, "r");
    te::Tensor R = te::compute({4}, [&](auto& v) { return te::sum(X(v[0], 0) * 1.0f, {r}); }, "R");
    te::Tensor Q = te::compute({4}, [&](auto& v) { return X(v[0], 0) * ir::cast(dtype::float32, p); }, "Q");
    for (const auto& [out, name] : {std::pair{R, "r"}, std::pair{Q, "q"}})
      CHECK_THROWS_WITH_AS(lower::lower(schedule::create_schedule(out), {X, out}, name),
                           doctest::Contains("nnvm.lower.unbound_size"), UserError);
  }
  // Without it the damage shows only at the end, under another name: the loop variable left
  // without its loop looks like a symbolic size that no argument binds.
  ScopedEnv off("NNVM_VERIFY_PASSES", "0");
  options.passes = &flat;
  CHECK_THROWS_WITH_AS(lower::lower(s, {X, Y}, "f", options), doctest::Contains("nnvm.lower.unbound_size"), UserError);
}

TEST_CASE("a non-divisible vectorized split is partitioned into full vector tiles and a serial tail") {
  te::Tensor A = te::placeholder({10}, dtype::float32, "A");
  te::Tensor B = te::compute({10}, [&](auto& v) { return A(v[0]) * 2.0f; }, "B");
  auto s = schedule::create_schedule(B);
  auto [o, i] = s[B].split(s[B].axis(0), 4);
  s[B].vectorize(i);
  auto trace = lower_and_trace(s, {A, B});
  CHECK(trace["schedule_ops"] ==
        "for (i.outer, 0, 2) {\n"
        "  vectorized (i.inner, 0, 4) {\n"
        "    B(0 + (i.outer*4) + i.inner) = A(0 + (i.outer*4) + i.inner)*2.0f\n"
        "  }\n"
        "}\n"
        "for (i.inner, 0, 2) {\n"
        "  B(0 + (2*4) + i.inner) = A(0 + (2*4) + i.inner)*2.0f\n"
        "}\n");
  CHECK(trace["storage_flatten"] ==
        "for (i.outer, 0, 2) {\n"
        "  vectorized (i.inner, 0, 4) {\n"
        "    B[0 + (i.outer*4) + i.inner] = A[0 + (i.outer*4) + i.inner]*2.0f\n"
        "  }\n"
        "}\n"
        "for (i.inner, 0, 2) {\n"
        "  B[0 + (2*4) + i.inner] = A[0 + (2*4) + i.inner]*2.0f\n"
        "}\n");
  CHECK(trace["vectorize"] ==
        "for (i.outer, 0, 2) {\n"
        "  B[x4(i.outer*4) + ramp(0, 1, 4)] = A[x4(i.outer*4) + ramp(0, 1, 4)]*x4(2.0f)\n"
        "}\n"
        "for (i.inner, 0, 2) {\n"
        "  B[i.inner + 8] = A[i.inner + 8]*2.0f\n"
        "}\n");
  CHECK(trace["kernel"] ==
        "// B: i.outer, vectorized i.inner\n"
        "kernel f(A: float32[10], B: float32[10]) {\n"
        "  for (i.outer, 0, 2) {\n"
        "    B[ramp(i.outer*4, 1, 4)] = A[ramp(i.outer*4, 1, 4)]*x4(2.0f)\n"
        "  }\n"
        "  for (i.inner, 0, 2) {\n"
        "    B[i.inner + 8] = A[i.inner + 8]*2.0f\n"
        "  }\n"
        "}\n");
}

TEST_CASE("legalize_vectors splits a vectorized loop wider than the target's register into register-wide ones") {
  te::Tensor A = te::placeholder({32}, dtype::float32, "A");
  te::Tensor B = te::compute({32}, [&](auto& v) { return A(v[0]) + 1.0f; }, "B");
  auto s = schedule::create_schedule(B);
  auto [o, i] = s[B].split(s[B].axis(0), 16);
  s[B].vectorize(i);
  // AVX2: 16 floats are two 8-float registers, the two halves unrolled.
  auto avx2 = lower_and_trace(s, {A, B}, 256);
  CHECK(avx2["legalize_vectors"] ==
        "for (i.outer, 0, 2) {\n"
        "  unrolled (i.inner.reg, 0, 2) {\n"
        "    vectorized (i.inner.lane, 0, 8) {\n"
        "      B[(i.outer*16) + ((i.inner.reg*8) + i.inner.lane)] = A[(i.outer*16) + ((i.inner.reg*8) + i.inner.lane)] + "
        "1.0f\n"
        "    }\n"
        "  }\n"
        "}\n");
  // AVX-512 holds the 16 floats in one register: the loop stays as scheduled.
  auto avx512 = lower_and_trace(s, {A, B}, 512);
  CHECK(avx512["legalize_vectors"] == avx512["simplify"]);
  // 0 keeps every vector as scheduled.
  auto kept = lower_and_trace(s, {A, B}, 0);
  CHECK(kept["legalize_vectors"] == kept["simplify"]);
}

TEST_CASE("a reduction whose reduce loop is outermost initializes before it, and guards its tail") {
  te::Tensor X = te::placeholder({6, 5}, dtype::float32, "X");
  auto k = te::reduce_axis(5, "k");
  te::Tensor S = te::compute({6}, [&](auto& v) { return te::sum(X(v[0], k.var()), {k}); }, "S");
  auto s = schedule::create_schedule(S);
  auto [ko, ki] = s[S].split(k, 2);
  s[S].reorder({ko, s[S].axis(0)});
  auto trace = lower_and_trace(s, {X, S});
  CHECK(trace["schedule_ops"] ==
        "for (i, 0, 6) {\n"
        "  S(i) = 0.0f\n"
        "}\n"
        "for (k.outer, 0, 3) {\n"
        "  for (i, 0, 6) {\n"
        "    for (k.inner, 0, 2) {\n"
        "      if (0 + (k.outer*2) + k.inner < 0 + 5) {\n"
        "        S(i) = S(i) + X(i, 0 + (k.outer*2) + k.inner)\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
  CHECK(trace["simplify"] ==
        "for (i, 0, 6) {\n"
        "  S[i] = 0.0f\n"
        "}\n"
        "for (k.outer, 0, 3) {\n"
        "  for (i, 0, 6) {\n"
        "    for (k.inner, 0, 2) {\n"
        "      if ((k.outer*2) + k.inner < 5) {\n"
        "        S[i] = S[i] + X[(i*5) + (k.outer*2) + k.inner]\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("guards sit directly inside the last loop they depend on") {
  te::Tensor X = te::placeholder({7, 8}, dtype::float32, "X");
  te::Tensor Y = te::compute({7, 8}, [&](auto& v) { return X(v[0], v[1]) + 1.0f; }, "Y");
  auto s = schedule::create_schedule(Y);
  auto [io, ii] = s[Y].split(s[Y].axis(0), 2);
  s[Y].reorder({io, ii, s[Y].axis(1)});
  auto trace = lower_and_trace(s, {X, Y});
  CHECK(trace["simplify"] ==
        "for (i.outer, 0, 4) {\n"
        "  for (i.inner, 0, 2) {\n"
        "    if ((i.outer*2) + i.inner < 7) {\n"
        "      for (j, 0, 8) {\n"
        "        Y[(i.outer*16) + (i.inner*8) + j] = X[(i.outer*16) + (i.inner*8) + j] + 1.0f\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("unroll replaces a loop by copies; parallel stays a loop kind for the emitters") {
  te::Tensor X = te::placeholder({4, 3}, dtype::float32, "X");
  te::Tensor Y = te::compute({4, 3}, [&](auto& v) { return X(v[0], v[1]) + 1.0f; }, "Y");
  auto s = schedule::create_schedule(Y);
  s[Y].unroll(s[Y].axis(1));
  s[Y].parallel(s[Y].axis(0));
  auto trace = lower_and_trace(s, {X, Y});
  CHECK(trace["schedule_ops"] ==
        "parallel (i, 0, 4) {\n"
        "  unrolled (j, 0, 3) {\n"
        "    Y(i, j) = X(i, j) + 1.0f\n"
        "  }\n"
        "}\n");
  CHECK(trace["kernel"] ==
        "// Y: parallel i, unrolled j\n"
        "kernel f(X: float32[4, 3], Y: float32[4, 3]) {\n"
        "  parallel (i, 0, 4) {\n"
        "    Y[i*3] = X[i*3] + 1.0f\n"
        "    Y[(i*3) + 1] = X[(i*3) + 1] + 1.0f\n"
        "    Y[(i*3) + 2] = X[(i*3) + 2] + 1.0f\n"
        "  }\n"
        "}\n");
}

TEST_CASE("intermediate stages are allocated around the whole kernel") {
  te::Tensor X = te::placeholder({3}, dtype::float32, "X");
  te::Tensor T = te::compute({3}, [&](auto& v) { return X(v[0]) * 2.0f; }, "T");
  te::Tensor Y = te::compute({3}, [&](auto& v) { return T(v[0]) + 1.0f; }, "Y");
  auto s = schedule::create_schedule(Y);
  auto trace = lower_and_trace(s, {X, Y});
  CHECK(trace["kernel"] ==
        "// T: i; Y: i\n"
        "kernel f(X: float32[3], Y: float32[3]) {\n"
        "  allocate T[float32 * 3] in global {\n"
        "    for (i, 0, 3) {\n"
        "      T[i] = X[i]*2.0f\n"
        "    }\n"
        "    for (i_1, 0, 3) {\n"
        "      Y[i_1] = T[i_1] + 1.0f\n"
        "    }\n"
        "  }\n"
        "}\n");
}

TEST_CASE("NNVM_DUMP_IR prints the IR after the named passes only") {
  te::Tensor X = te::placeholder({3}, dtype::float32, "X");
  te::Tensor Y = te::compute({3}, [&](auto& v) { return X(v[0]) + 1.0f; }, "Y");
  auto s = schedule::create_schedule(Y);
  std::ostringstream captured;
  auto* old = std::cerr.rdbuf(captured.rdbuf());
  setenv("NNVM_DUMP_IR", "vectorize,unroll", 1);
  lower::lower(s, {X, Y}, "dumped");
  unsetenv("NNVM_DUMP_IR");
  std::cerr.rdbuf(old);
  std::string out = captured.str();
  CHECK(out.find("// ---- after vectorize (dumped)\nfor (i, 0, 3) {") != std::string::npos);
  CHECK(out.find("// ---- after unroll (dumped)") != std::string::npos);
  CHECK(out.find("after schedule_ops") == std::string::npos);
}

TEST_CASE("vectorize splits a store around a select that guards a load, when the condition is the same for every lane") {
  // B(r, c) = 1 + (r >= 1 ? A(r - 1, c) : 0) * 2, vectorized over c: the select sits inside the
  // stored value (as in a convolution reading through its padding); r is the same in every lane,
  // so the store becomes if (r >= 1) <vector store of the load> else <vector store of zero>.
  te::Tensor A = te::placeholder({3, 8}, dtype::float32, "A");
  te::Tensor B = te::compute(
      {4, 8},
      [&](auto& v) {
        return 1.0f + ir::select(v[0] >= 1, A({v[0] - 1, v[1]}), ir::make_zero(dtype::float32)) * 2.0f;
      },
      "B");
  auto s = schedule::create_schedule(B);
  s[B].vectorize(s[B].axis(1));
  auto trace = lower_and_trace(s, {A, B});
  const std::string& v = trace["vectorize"];
  CHECK(v.find("if (") != std::string::npos);
  CHECK(v.find("A[x8(i*8) + ramp(0, 1, 8) - x8(8)]") != std::string::npos);  // a vector load
  CHECK(v.find("for (j") == std::string::npos);       // no serial loop over the lanes is left
  auto k = target::jit_c(lower::lower(s, {A, B}, "guarded_select"));
  NDArray a(dtype::float32, {3, 8}), b(dtype::float32, {4, 8});
  for (int64_t i = 0; i < 24; ++i) a.data<float>()[i] = float(i) * 0.5f - 3.0f;
  k(a, b);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 8; ++c)
      CHECK(b.data<float>()[r * 8 + c] == 1.0f + (r >= 1 ? a.data<float>()[(r - 1) * 8 + c] : 0.0f) * 2.0f);
}

}  // namespace lower_passes
