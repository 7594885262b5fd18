// Plain-loop references for convolution tests, in double precision: a dense NCHW tensor and
// ONNX Conv with symmetric pads and no dilation.
#pragma once

#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include "nnvm/ndarray.hpp"

namespace nnvm_test {

// A dense NCHW-style tensor of doubles for the reference.
struct Ref {
  std::vector<int64_t> shape;
  std::vector<double> v;
  double& at(int64_t n, int64_t c, int64_t h, int64_t w) {
    return v[size_t(((n * shape[1] + c) * shape[2] + h) * shape[3] + w)];
  }
  double at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    return v[size_t(((n * shape[1] + c) * shape[2] + h) * shape[3] + w)];
  }
};

inline Ref to_ref(const nnvm::NDArray& a) {
  Ref r{a.shape(), {}};
  for (float f : a.values<float>()) r.v.push_back(double(f));
  return r;
}

// ONNX Conv with symmetric pads, no dilation: Y[n, m] = B[m] + sum X[n, g*C/G + c, ...] * W[m, c, ...].
inline Ref conv_ref(const Ref& x, const nnvm::NDArray& w_arr, const nnvm::NDArray* b_arr, int64_t stride, int64_t pad, int64_t group) {
  Ref w = to_ref(w_arr);
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t M = w.shape[0], Cg = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t OH = (H + 2 * pad - KH) / stride + 1, OW = (W + 2 * pad - KW) / stride + 1;
  REQUIRE(Cg * group == C);
  Ref y{{N, M, OH, OW}, std::vector<double>(size_t(N * M * OH * OW))};
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m) {
      int64_t g = m / (M / group);
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = b_arr ? double(b_arr->values<float>()[size_t(m)]) : 0.0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ih = oh * stride - pad + kh, iw = ow * stride - pad + kw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x.at(n, g * Cg + c, ih, iw) * w.at(m, c, kh, kw);
              }
          y.at(n, m, oh, ow) = acc;
        }
    }
  return y;
}

}  // namespace nnvm_test
