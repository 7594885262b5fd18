// Operators shared by the schedule tests, each with a plain-loop reference: matmul, conv2d
// (NCHW, 3x3, padding 1, through an explicit padding stage) and softmax (four stages).
#pragma once

#include "support/schedule_harness.hpp"

namespace nnvm_test {

inline OpCase matmul_case(int64_t M, int64_t K, int64_t N) {
  using namespace nnvm;
  te::Tensor A = te::placeholder({M, K}, dtype::float32, "A");
  te::Tensor B = te::placeholder({K, N}, dtype::float32, "B");
  auto k = te::reduce_axis(K, "k");
  te::Tensor C = te::compute({M, N}, [&](auto& v) { return te::sum(A(v[0], k.var()) * B(k.var(), v[1]), {k}); }, "C");
  return {"matmul", {A, B}, C, [=](const std::vector<NDArray>& in) {
            auto a = in[0].values<float>(), b = in[1].values<float>();
            std::vector<float> c(size_t(M * N), 0.0f);
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < N; ++j) {
                float acc = 0;
                for (int64_t q = 0; q < K; ++q) acc += a[size_t(i * K + q)] * b[size_t(q * N + j)];
                c[size_t(i * N + j)] = acc;
              }
            return c;
          }};
}

struct ConvShape {
  int64_t batch, in_channels, height, width, out_channels;
};

// Y = conv2d(X, W), 3x3, stride 1, padding 1; `padded` receives the padding stage P.
inline OpCase conv2d_case(ConvShape s, nnvm::te::Tensor& padded) {
  using namespace nnvm;
  using nnvm::ir::Expr;
  constexpr int64_t R = 3;
  const int64_t BN = s.batch, CI = s.in_channels, H = s.height, W = s.width, CO = s.out_channels;
  te::Tensor X = te::placeholder({BN, CI, H, W}, dtype::float32, "X");
  te::Tensor Wt = te::placeholder({CO, CI, R, R}, dtype::float32, "W");
  te::Tensor P = te::compute(
      {BN, CI, H + 2, W + 2},
      [&](auto& v) {
        Expr h = v[2] - 1, w = v[3] - 1;
        return ir::select(h >= 0 && h < H && w >= 0 && w < W, X(v[0], v[1], h, w), 0.0f);
      },
      "P");
  auto rc = te::reduce_axis(CI, "rc"), rh = te::reduce_axis(R, "rh"), rw = te::reduce_axis(R, "rw");
  te::Tensor Y = te::compute(
      {BN, CO, H, W},
      [&](auto& v) {
        return te::sum(P(v[0], rc.var(), v[2] + rh.var(), v[3] + rw.var()) * Wt(v[1], rc.var(), rh.var(), rw.var()),
                       {rc, rh, rw});
      },
      "Y");
  padded = P;
  return {"conv2d", {X, Wt}, Y, [=](const std::vector<NDArray>& in) {
            auto x = in[0].values<float>(), w = in[1].values<float>();
            std::vector<float> y(size_t(BN * CO * H * W), 0.0f);
            for (int64_t n = 0; n < BN; ++n)
              for (int64_t co = 0; co < CO; ++co)
                for (int64_t oh = 0; oh < H; ++oh)
                  for (int64_t ow = 0; ow < W; ++ow) {
                    float acc = 0;
                    for (int64_t ci = 0; ci < CI; ++ci)
                      for (int64_t kh = 0; kh < R; ++kh)
                        for (int64_t kw = 0; kw < R; ++kw) {
                          int64_t ih = oh + kh - 1, iw = ow + kw - 1;
                          if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                          acc += x[size_t(((n * CI + ci) * H + ih) * W + iw)] * w[size_t(((co * CI + ci) * R + kh) * R + kw)];
                        }
                    y[size_t(((n * CO + co) * H + oh) * W + ow)] = acc;
                  }
            return y;
          }};
}

// Y = softmax(X) over rows; `stages` receives {max, exp, sum, Y}.
inline OpCase softmax_case(int64_t SM, int64_t SN, std::vector<nnvm::te::Tensor>& stages) {
  using namespace nnvm;
  te::Tensor X = te::placeholder({SM, SN}, dtype::float32, "X");
  auto j1 = te::reduce_axis(SN, "j");
  te::Tensor mx = te::compute({SM}, [&](auto& v) { return te::max_reduce(X(v[0], j1.var()), {j1}); }, "mx");
  te::Tensor ex = te::compute({SM, SN}, [&](auto& v) { return ir::call(ir::CallOp::exp, X(v[0], v[1]) - mx(v[0])); }, "ex");
  auto j2 = te::reduce_axis(SN, "j");
  te::Tensor sm = te::compute({SM}, [&](auto& v) { return te::sum(ex(v[0], j2.var()), {j2}); }, "sm");
  te::Tensor Y = te::compute({SM, SN}, [&](auto& v) { return ex(v[0], v[1]) / sm(v[0]); }, "Y");
  stages = {mx, ex, sm, Y};
  return {"softmax", {X}, Y, [=](const std::vector<NDArray>& in) {
            auto x = in[0].values<float>();
            std::vector<float> y(size_t(SM * SN));
            for (int64_t i = 0; i < SM; ++i) {
              float m = -INFINITY, s = 0;
              for (int64_t j = 0; j < SN; ++j) m = std::max(m, x[size_t(i * SN + j)]);
              for (int64_t j = 0; j < SN; ++j) s += std::exp(x[size_t(i * SN + j)] - m);
              for (int64_t j = 0; j < SN; ++j) y[size_t(i * SN + j)] = std::exp(x[size_t(i * SN + j)] - m) / s;
            }
            return y;
          }};
}

}  // namespace nnvm_test
