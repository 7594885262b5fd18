// compute_at, compute_inline, compute_root, cache_read, cache_write, rfactor, storage scopes and
// the auto-unroll pragma on matmul, conv2d, softmax and a blur-then-threshold pipeline:
// scheduled results equal a plain-loop reference through the interpreter and the C JIT.
#include "support/pch.hpp"
#include "support/op_cases.hpp"

namespace schedule_stage_primitives {

using namespace nnvm;
using nnvm::ir::Expr;
using nnvm::ir::MemoryScope;
using nnvm::schedule::Schedule;
using nnvm_test::OpCase;

namespace {

constexpr int64_t M = 21, K = 19, N = 35;

constexpr int64_t BN = 1, CI = 3, H = 10, W = 9, CO = 4;

constexpr int64_t SM = 6, SN = 37;

// blur_x then blur_y (3-tap box filters, valid region), then a threshold.
constexpr int64_t BH = 17, BW = 23;

OpCase blur_case(std::vector<te::Tensor>& st) {
  te::Tensor X = te::placeholder({BH, BW}, dtype::float32, "X");
  te::Tensor bx = te::compute({BH, BW - 2}, [&](auto& v) {
    return (X(v[0], v[1]) + X(v[0], v[1] + 1) + X(v[0], v[1] + 2)) / 3.0f;
  }, "blur_x");
  te::Tensor by = te::compute({BH - 2, BW - 2}, [&](auto& v) {
    return (bx(v[0], v[1]) + bx(v[0] + 1, v[1]) + bx(v[0] + 2, v[1])) / 3.0f;
  }, "blur_y");
  te::Tensor out = te::compute({BH - 2, BW - 2}, [&](auto& v) { return ir::select(by(v[0], v[1]) > 0.1f, by(v[0], v[1]), 0.0f); }, "threshold");
  st = {bx, by, out};
  return {"blur_threshold", {X}, out, [](const std::vector<NDArray>& in) {
            auto x = in[0].values<float>();
            std::vector<float> bxv(BH * (BW - 2)), y((BH - 2) * (BW - 2));
            for (int64_t i = 0; i < BH; ++i)
              for (int64_t j = 0; j < BW - 2; ++j) bxv[i * (BW - 2) + j] = (x[i * BW + j] + x[i * BW + j + 1] + x[i * BW + j + 2]) / 3.0f;
            for (int64_t i = 0; i < BH - 2; ++i)
              for (int64_t j = 0; j < BW - 2; ++j) {
                float b = (bxv[i * (BW - 2) + j] + bxv[(i + 1) * (BW - 2) + j] + bxv[(i + 2) * (BW - 2) + j]) / 3.0f;
                y[i * (BW - 2) + j] = b > 0.1f ? b : 0.0f;
              }
            return y;
          }};
}

}  // namespace

TEST_CASE("stage primitives on matmul") {
  OpCase op = nnvm_test::matmul_case(M, K, N);
  const te::Tensor &A = op.inputs[0], &B = op.inputs[1], &C = op.output;
  nnvm_test::check_schedules(op, {
      {"cache_write_register_tile", [&](Schedule& s) {
         te::Tensor CL = s.cache_write(C, MemoryScope::local);
         auto [io, jo, ii, ji] = s[C].tile(s[C].axis(0), s[C].axis(1), 4, 8);
         s[C].vectorize(ji);
         s[CL].compute_at(s[C], jo);
         auto cl = s[CL];
         cl.reorder({cl.reduce_axis(0), cl.axis(0), cl.axis(1)});
         cl.vectorize(cl.axis(1));
         cl.unroll(cl.axis(0));
         s[C].parallel(io);
       }},
      {"cache_read_row_at_i", [&](Schedule& s) {
         te::Tensor AA = s.cache_read(A, MemoryScope::local, {C});
         s[AA].compute_at(s[C], s[C].axis(0));
       }},
      {"cache_read_panel_at_jo", [&](Schedule& s) {
         te::Tensor BB = s.cache_read(B, MemoryScope::global, {C});
         auto [jo, ji] = s[C].split(s[C].axis(1), 8);
         s[C].reorder({jo, s[C].axis(0), s[C].reduce_axis(0), ji});
         s[C].vectorize(ji);
         s[BB].compute_at(s[C], jo);
         s[BB].vectorize(s[BB].split(s[BB].axis(1), 4).second);
       }},
      {"packed_panel_and_register_tile_at_jo", [&](Schedule& s) {
         // B.global is read by C.local, which is itself computed inside C's jo loop.
         te::Tensor BB = s.cache_read(B, MemoryScope::global, {C});
         te::Tensor CL = s.cache_write(C, MemoryScope::local);
         auto [jo, ji] = s[C].split(s[C].axis(1), 8);
         s[CL].compute_at(s[C], jo);
         s[BB].compute_at(s[C], jo);
         s[CL].vectorize(s[CL].axis(1));
       }},
      {"rfactor_inner", [&](Schedule& s) {
         auto [ko, ki] = s[C].split(s[C].reduce_axis(0), 4);
         te::Tensor CF = s.rfactor(C, ki);
         s[CF].parallel(s[CF].axis(0));
       }},
      {"rfactor_outer_nparts", [&](Schedule& s) {
         auto [ko, ki] = s[C].split_nparts(s[C].reduce_axis(0), 3);
         te::Tensor CF = s.rfactor(C, ko);
         s[CF].reorder({s[CF].axis(1), s[CF].axis(0)});
       }},
      {"pragma_auto_unroll", [&](Schedule& s) {
         auto [io, ii] = s[C].split(s[C].axis(0), 2);
         auto [jo, ji] = s[C].split(s[C].axis(1), 4);
         s[C].reorder({io, jo, s[C].reduce_axis(0), ii, ji});
         s[C].pragma_auto_unroll(io, 8);
       }},
  });
}

TEST_CASE("stage primitives on conv2d") {
  te::Tensor P;
  OpCase op = nnvm_test::conv2d_case({BN, CI, H, W, CO}, P);
  const te::Tensor& Y = op.output;
  nnvm_test::check_schedules(op, {
      {"inline_padding", [&](Schedule& s) { s[P].compute_inline(); }},
      {"padding_at_row", [&](Schedule& s) { s[P].compute_at(s[Y], s[Y].axis(2)); }},
      {"padding_at_channel", [&](Schedule& s) {
         s[P].compute_at(s[Y], s[Y].axis(1));
         s[P].set_scope(MemoryScope::local);
       }},
      {"cache_write_at_row", [&](Schedule& s) {
         te::Tensor YL = s.cache_write(Y, MemoryScope::local);
         s[YL].compute_at(s[Y], s[Y].axis(2));
         s[P].compute_inline();
         auto [wo, wi] = s[YL].split(s[YL].axis(3), 4);
         s[YL].reorder({wo, s[YL].reduce_axis(0), s[YL].reduce_axis(1), s[YL].reduce_axis(2), wi});
         s[YL].vectorize(wi);
       }},
      {"tile_with_padding_at_tile", [&](Schedule& s) {
         auto [ho, wo, hi, wi] = s[Y].tile(s[Y].axis(2), s[Y].axis(3), 4, 4);
         s[P].compute_at(s[Y], wo);
         s[Y].parallel(s[Y].fuse(s[Y].axis(0), s[Y].axis(1)));
       }},
  });
}

TEST_CASE("stage primitives on softmax") {
  std::vector<te::Tensor> st;
  OpCase op = nnvm_test::softmax_case(SM, SN, st);
  const te::Tensor &mx = st[0], &ex = st[1], &sm = st[2], &Y = st[3];
  nnvm_test::check_schedules(op, {
      {"compute_at_rows", [&](Schedule& s) {
         s[mx].compute_at(s[ex], s[ex].axis(0));
         s[sm].compute_at(s[Y], s[Y].axis(0));
       }},
      {"inline_exp", [&](Schedule& s) { s[ex].compute_inline(); }},
      {"rfactor_sum", [&](Schedule& s) {
         auto [jo, ji] = s[sm].split(s[sm].reduce_axis(0), 8);
         te::Tensor rf = s.rfactor(sm, ji);
         s[rf].reorder({s[rf].axis(1), s[rf].reduce_axis(0), s[rf].axis(0)});
         s[rf].vectorize(s[rf].axis(0));
       }},
      {"compute_root_again", [&](Schedule& s) {
         s[mx].compute_at(s[ex], s[ex].axis(0));
         s[mx].compute_root();
       }},
  });
}

TEST_CASE("stage primitives on a blur-then-threshold pipeline") {
  std::vector<te::Tensor> st;
  OpCase op = blur_case(st);
  const te::Tensor &bx = st[0], &by = st[1], &out = st[2];
  nnvm_test::check_schedules(op, {
      {"root", [](Schedule&) {}},
      {"inline_all", [&](Schedule& s) {
         s[bx].compute_inline();
         s[by].compute_inline();
       }},
      {"blur_x_at_row_of_blur_y", [&](Schedule& s) {
         s[by].compute_inline();
         s[bx].compute_at(s[out], s[out].axis(0));
       }},
      {"tiled_with_producers_at_tile", [&](Schedule& s) {
         auto [io, jo, ii, ji] = s[out].tile(s[out].axis(0), s[out].axis(1), 4, 8);
         s[by].compute_at(s[out], jo);
         s[bx].compute_at(s[by], s[by].axis(0));
         s[out].parallel(io);
         s[out].vectorize(ji);
       }},
      {"cache_read_input", [&](Schedule& s) {
         te::Tensor XL = s.cache_read(op.inputs[0], MemoryScope::local, {bx});
         s[XL].compute_at(s[bx], s[bx].axis(0));
         s[by].compute_inline();
         s[bx].compute_at(s[out], s[out].axis(0));
       }},
  });
}

}  // namespace schedule_stage_primitives
