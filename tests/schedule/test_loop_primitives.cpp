// Every loop primitive on matmul, conv2d (NCHW), softmax, a reduction and an elementwise
// chain: scheduled results equal a plain-loop reference through the interpreter and the C JIT.
#include "support/pch.hpp"
#include "support/op_cases.hpp"

namespace schedule_loop_primitives {

using namespace nnvm;
using nnvm::ir::Expr;
using nnvm::ir::Var;
using nnvm::schedule::Schedule;
using nnvm_test::OpCase;
using nnvm_test::ScheduleVariant;

namespace {

// Odd sizes on purpose: every split leaves a tail.
constexpr int64_t M = 37, K = 29, N = 45;
constexpr int64_t BN = 2, CI = 3, H = 9, W = 11, CO = 5;
constexpr int64_t SM = 7, SN = 33;

std::vector<ScheduleVariant> matmul_variants(const te::Tensor& C) {
  return {
      {"default", [](Schedule&) {}},
      {"split", [&](Schedule& s) { s[C].split(s[C].axis(0), 8); }},
      {"split_nparts", [&](Schedule& s) { s[C].split_nparts(s[C].axis(1), 3); }},
      {"split_reduce", [&](Schedule& s) { s[C].split(s[C].reduce_axis(0), 4); }},
      {"tile", [&](Schedule& s) { s[C].tile(s[C].axis(0), s[C].axis(1), 8, 16); }},
      {"reorder_k_out", [&](Schedule& s) { s[C].reorder({s[C].reduce_axis(0), s[C].axis(0)}); }},
      {"fuse", [&](Schedule& s) { s[C].fuse(s[C].axis(0), s[C].axis(1)); }},
      {"fuse_split", [&](Schedule& s) {
         auto f = s[C].fuse(s[C].axis(0), s[C].axis(1));
         s[C].split(f, 64);
       }},
      {"vectorize", [&](Schedule& s) {
         auto [jo, ji] = s[C].split(s[C].axis(1), 8);
         s[C].reorder({jo, s[C].reduce_axis(0), ji});
         s[C].vectorize(ji);
       }},
      {"unroll", [&](Schedule& s) {
         auto [ko, ki] = s[C].split(s[C].reduce_axis(0), 4);
         s[C].unroll(ki);
       }},
      {"parallel", [&](Schedule& s) { s[C].parallel(s[C].axis(0)); }},
      {"all", [&](Schedule& s) {
         auto st = s[C];
         auto [io, jo, ii, ji] = st.tile(st.axis(0), st.axis(1), 4, 8);
         auto [ko, ki] = st.split(st.reduce_axis(0), 2);
         st.reorder({io, jo, ko, ki, ii, ji});
         st.vectorize(ji);
         st.unroll(ii);
         st.unroll(ki);
         st.parallel(io);
       }},
  };
}

constexpr int64_t RA = 5, RB = 13, RC = 17;

OpCase reduction_case() {
  te::Tensor X = te::placeholder({RA, RB, RC}, dtype::float32, "X");
  auto rb = te::reduce_axis(RB, "rb"), rc = te::reduce_axis(RC, "rc");
  te::Tensor S = te::compute({RA}, [&](auto& v) { return te::sum(X(v[0], rb.var(), rc.var()), {rb, rc}); }, "S");
  return {"reduce_sum_2axes", {X}, S, [](const std::vector<NDArray>& in) {
            auto x = in[0].values<float>();
            std::vector<float> s(RA, 0.0f);
            for (int64_t a = 0; a < RA; ++a)
              for (int64_t b = 0; b < RB; ++b)
                for (int64_t c = 0; c < RC; ++c) s[a] += x[(a * RB + b) * RC + c];
            return s;
          }};
}

constexpr int64_t EA = 19, EB = 23;

OpCase elementwise_case(te::Tensor& mid) {
  te::Tensor X = te::placeholder({EA, EB}, dtype::float32, "X");
  te::Tensor Q = te::placeholder({EA, EB}, dtype::int32, "Q");
  mid = te::compute({EA, EB}, [&](auto& v) { return X(v[0], v[1]) * 2.0f + ir::cast(dtype::float32, Q(v[0], v[1])); }, "T");
  te::Tensor Y = te::compute(
      {EA, EB},
      [&](auto& v) {
        Expr t = mid(v[0], v[1]);
        return ir::call(ir::CallOp::tanh, t) * ir::call(ir::CallOp::sigmoid, t) + ir::max(t, 0.0f);
      },
      "Y");
  return {"elementwise", {X, Q}, Y, [](const std::vector<NDArray>& in) {
            auto x = in[0].values<float>();
            auto q = in[1].values<int32_t>();
            std::vector<float> y(EA * EB);
            for (size_t i = 0; i < y.size(); ++i) {
              float t = x[i] * 2.0f + float(q[i]);
              y[i] = std::tanh(t) * (1.0f / (1.0f + std::exp(-t))) + std::max(t, 0.0f);
            }
            return y;
          }};
}

}  // namespace

TEST_CASE("loop primitives on matmul") {
  OpCase op = nnvm_test::matmul_case(M, K, N);
  nnvm_test::check_schedules(op, matmul_variants(op.output));
}

TEST_CASE("loop primitives on conv2d NCHW with a padding stage") {
  te::Tensor P;
  OpCase op = nnvm_test::conv2d_case({BN, CI, H, W, CO}, P);
  const te::Tensor& Y = op.output;
  nnvm_test::check_schedules(op, {
      {"default", [](Schedule&) {}},
      {"split_w", [&](Schedule& s) { s[Y].split(s[Y].axis(3), 4); }},
      {"tile_hw", [&](Schedule& s) { s[Y].tile(s[Y].axis(2), s[Y].axis(3), 4, 4); }},
      {"reorder_reduce_out", [&](Schedule& s) {
         s[Y].reorder({s[Y].reduce_axis(0), s[Y].axis(2), s[Y].reduce_axis(1), s[Y].reduce_axis(2), s[Y].axis(3)});
       }},
      {"fuse_nc", [&](Schedule& s) { s[Y].fuse(s[Y].axis(0), s[Y].axis(1)); }},
      {"vectorize_w", [&](Schedule& s) {
         auto [wo, wi] = s[Y].split(s[Y].axis(3), 4);
         s[Y].reorder({wo, s[Y].reduce_axis(0), s[Y].reduce_axis(1), s[Y].reduce_axis(2), wi});
         s[Y].vectorize(wi);
         auto [po, pi] = s[P].split(s[P].axis(3), 8);
         s[P].vectorize(pi);
       }},
      {"unroll_kernel", [&](Schedule& s) {
         s[Y].unroll(s[Y].reduce_axis(1));
         s[Y].unroll(s[Y].reduce_axis(2));
       }},
      {"parallel", [&](Schedule& s) {
         s[Y].parallel(s[Y].fuse(s[Y].axis(0), s[Y].axis(1)));
         s[P].parallel(s[P].axis(0));
       }},
  });
}

TEST_CASE("loop primitives on softmax (four stages)") {
  std::vector<te::Tensor> st;
  OpCase op = nnvm_test::softmax_case(SM, SN, st);
  const te::Tensor &mx = st[0], &ex = st[1], &sm = st[2], &Y = st[3];
  nnvm_test::check_schedules(op, {
      {"default", [](Schedule&) {}},
      {"split_all", [&](Schedule& s) {
         s[mx].split(s[mx].reduce_axis(0), 8);
         s[ex].split(s[ex].axis(1), 8);
         s[sm].split(s[sm].reduce_axis(0), 5);
         s[Y].split(s[Y].axis(1), 16);
       }},
      {"vectorize", [&](Schedule& s) {
         auto [o, i] = s[ex].split(s[ex].axis(1), 8);
         s[ex].vectorize(i);
         auto [o2, i2] = s[Y].split(s[Y].axis(1), 4);
         s[Y].vectorize(i2);
       }},
      {"parallel", [&](Schedule& s) {
         s[mx].parallel(s[mx].axis(0));
         s[ex].parallel(s[ex].axis(0));
         s[sm].parallel(s[sm].axis(0));
         s[Y].parallel(s[Y].fuse(s[Y].axis(0), s[Y].axis(1)));
       }},
      {"unroll", [&](Schedule& s) {
         auto [o, i] = s[sm].split(s[sm].reduce_axis(0), 4);
         s[sm].unroll(i);
       }},
  });
}

TEST_CASE("loop primitives on a two-axis sum reduction") {
  OpCase op = reduction_case();
  const te::Tensor& S = op.output;
  nnvm_test::check_schedules(op, {
      {"default", [](Schedule&) {}},
      {"fuse_reduce", [&](Schedule& s) { s[S].fuse(s[S].reduce_axis(0), s[S].reduce_axis(1)); }},
      {"split_reduce", [&](Schedule& s) { s[S].split(s[S].reduce_axis(1), 4); }},
      {"reorder", [&](Schedule& s) { s[S].reorder({s[S].reduce_axis(1), s[S].reduce_axis(0)}); }},
      {"reduce_outside_data", [&](Schedule& s) { s[S].reorder({s[S].reduce_axis(0), s[S].axis(0)}); }},
      {"parallel_unroll", [&](Schedule& s) {
         s[S].parallel(s[S].axis(0));
         auto [o, i] = s[S].split(s[S].reduce_axis(1), 8);
         s[S].unroll(i);
       }},
  });
}

TEST_CASE("loop primitives on an elementwise chain") {
  te::Tensor T;
  OpCase op = elementwise_case(T);
  const te::Tensor& Y = op.output;
  nnvm_test::check_schedules(op, {
      {"default", [](Schedule&) {}},
      {"split_nparts", [&](Schedule& s) { s[Y].split_nparts(s[Y].axis(0), 4); }},
      {"tile", [&](Schedule& s) { s[Y].tile(s[Y].axis(0), s[Y].axis(1), 5, 8); }},
      {"fuse_vectorize", [&](Schedule& s) {
         auto f = s[Y].fuse(s[Y].axis(0), s[Y].axis(1));
         auto [o, i] = s[Y].split(f, 16);
         s[Y].vectorize(i);
         s[Y].parallel(o);
         auto [to, ti] = s[T].split(s[T].axis(1), 8);
         s[T].vectorize(ti);
       }},
      {"unroll", [&](Schedule& s) {
         auto [o, i] = s[Y].split(s[Y].axis(1), 4);
         s[Y].unroll(i);
       }},
      {"reorder", [&](Schedule& s) { s[Y].reorder({s[Y].axis(1), s[Y].axis(0)}); }},
  });
}

}  // namespace schedule_loop_primitives
