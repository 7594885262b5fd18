// Lesson 3: scheduling a 3x3 convolution.
//
// Same format as lesson 1: one algorithm, a sequence of schedules, and for each the loop nest,
// the time, the speed-ups and a check against a plain loop. New here: where a producer stage
// (the zero padding) is computed, accumulating in a local stage with cache_write, and changing
// the data layout (NCHW to NCHWc) so the vector lanes run over channels.
//
//   ./03_conv2d_schedule          1 x 64 x 56 x 56 input, 64 output channels
//   ./03_conv2d_schedule --quick  1 x 16 x 16 x 16 input, 32 output channels (what CI runs)
#include <nnvm/tensor.hpp>

#include "lesson.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>

using namespace nnvm;
using ir::MemoryScope;

namespace {

using lesson::Step;
using lesson::run_lesson;

// One 3x3 convolution, padding 1, stride 1, NCHW: batch N, CI input channels, CO output
// channels, H x W pixels. The default sizes are a ResNet-18 stage-1 layer.
template <int64_t N, int64_t CI, int64_t CO, int64_t H, int64_t W>
int run(int reps) {
  static_assert(CI % 8 == 0 && CO % 16 == 0 && W % 8 == 0, "the blocked schedules assume these");
  // The algorithm: P is X with a border of zeros, Y sums 3 x 3 x CI products per output.
  auto X = placeholder<float, N, CI, H, W>("X");
  auto Wt = placeholder<float, CO, CI, 3, 3>("W");
  auto P = compute<Shape<N, CI, H + 2, W + 2>>(
      [&](auto n, auto c, auto h, auto w) {
        return select(h >= 1 && h <= H && w >= 1 && w <= W, X(n, c, h - 1, w - 1), 0.0f);
      },
      "P", {"n", "c", "h", "w"});
  auto rc = reduce_axis<CI>("rc");
  auto rh = reduce_axis<3>("rh");
  auto rw = reduce_axis<3>("rw");
  auto Y = compute<Shape<N, CO, H, W>>(
      [&](auto n, auto k, auto h, auto w) { return sum(P(n, rc, h + rh, w + rw) * Wt(k, rc, rh, rw), {rc, rh, rw}); },
      "Y", {"n", "k", "h", "w"});

  // The same convolution on blocked layouts (NCHWc): channels in blocks of CB = 8 for the input
  // and KB = 16 (one AVX-512 register of floats) for the output. Xc is the padded input and Wc
  // the weights, both rearranged; Yc the blocked output, and Yu unpacks it to NCHW so that every
  // step returns the same layout. A network would keep Yc for the next layer instead.
  constexpr int64_t CB = 8, KB = 16;
  auto Xc = compute<Shape<N, CI / CB, H + 2, W + 2, CB>>(
      [&](auto n, auto cb, auto h, auto w, auto ci) {
        return select(h >= 1 && h <= H && w >= 1 && w <= W, X(n, cb * CB + ci, h - 1, w - 1), 0.0f);
      },
      "Xc", {"n", "cb", "h", "w", "ci"});
  auto Wc = compute<Shape<CO / KB, CI / CB, 3, 3, CB, KB>>(
      [&](auto kb, auto cb, auto r, auto q, auto ci, auto ki) { return Wt(kb * KB + ki, cb * CB + ci, r, q); },
      "Wc", {"kb", "cb", "rh", "rw", "ci", "ki"});
  auto rcb = reduce_axis<CI / CB>("rcb");
  auto rci = reduce_axis<CB>("rci");
  auto rh2 = reduce_axis<3>("rh");
  auto rw2 = reduce_axis<3>("rw");
  auto Yc = compute<Shape<N, CO / KB, H, W, KB>>(
      [&](auto n, auto kb, auto h, auto w, auto ki) {
        return sum(Xc(n, rcb, h + rh2, w + rw2, rci) * Wc(kb, rcb, rh2, rw2, rci, ki), {rcb, rh2, rw2, rci});
      },
      "Yc", {"n", "kb", "h", "w", "ki"});
  auto Yu = compute<Shape<N, CO, H, W>>([&](auto n, auto k, auto h, auto w) { return Yc(n, k / KB, h, w, k % KB); },
                                         "Y", {"n", "k", "h", "w"});

  // The blocked schedule, with or without threads.
  auto nchwc = [&](schedule::Schedule& s, bool parallel) {
    te::Tensor YL = s.cache_write(Yc, MemoryScope::local);
    auto y = s[Yc];
    auto [wo, wi] = y.split(y.axis(3), 8);
    y.vectorize(y.axis(4));
    auto yl = s[YL];
    yl.compute_at(y, wo);
    yl.reorder({yl.reduce_axis(0), yl.reduce_axis(1), yl.reduce_axis(2), yl.reduce_axis(3), yl.axis(3), yl.axis(4)});
    yl.unroll(yl.axis(3));
    yl.vectorize(yl.axis(4));
    s[Xc].vectorize(s[Xc].axis(4));
    if (parallel) {
      y.parallel(y.fuse(y.axis(1), y.axis(2)));
      s[Xc].parallel(s[Xc].axis(1));
      s[Wc].parallel(s[Wc].axis(0));
      s[Yu].parallel(s[Yu].axis(1));
    }
  };

  std::vector<Step> steps = {
      {"naive",
       "Every stage is computed whole, at the root: first all of P (the padded copy of X),\n"
       "then Y in the loop order n, k, h, w with the CI x 3 x 3 products innermost.",
       {X, Wt, Y}, [](schedule::Schedule&) {}},

      {"padding inlined",
       "compute_inline substitutes P's definition into Y: no copy and no storage, but each of\n"
       "the 9 * CI loads per output now tests four bounds first, and a load that may fall\n"
       "outside X cannot be vectorized. Inlining is free only for cheap, unguarded producers.",
       {X, Wt, Y}, [&](schedule::Schedule& s) { s[P].compute_inline(); }},

      {"padding at each row",
       "compute_at computes P inside Y's loop over rows, only over what one row of Y reads:\n"
       "3 padded rows of every input channel. Y's loops are reordered (h before k) so those\n"
       "rows serve all output channels while they are hot. The copy is as fast as the root one\n"
       "and its storage is 3 rows instead of the whole padded image.",
       {X, Wt, Y},
       [&](schedule::Schedule& s) {
         auto y = s[Y];
         y.reorder({y.axis(2), y.axis(1)});
         s[P].compute_at(y, y.axis(2));
       }},

      {"accumulate in registers",
       "cache_write(Y, local) moves the sums into a new stage Y.local; Y becomes a copy out of\n"
       "it. Y.local is computed at Y's row loop (one row of every output channel) and P, whose\n"
       "only reader is now Y.local, at Y.local's row loop. Inside, the reductions go outside\n"
       "the row and the row becomes vectors of 8 floats, unrolled: W/8 accumulators per output\n"
       "channel stay in registers across all CI x 3 x 3 products; each product is one broadcast\n"
       "weight and W/8 vector loads of P (shifted by rw) and FMAs.",
       {X, Wt, Y},
       [&](schedule::Schedule& s) {
         te::Tensor YL = s.cache_write(Y, MemoryScope::local);  // before other primitives on Y
         auto y = s[Y];
         y.reorder({y.axis(2), y.axis(1)});
         y.vectorize(y.split(y.axis(3), 8).second);
         auto yl = s[YL];
         yl.compute_at(y, y.axis(2));
         yl.reorder({yl.axis(2), yl.axis(1)});
         s[P].compute_at(yl, yl.axis(2));
         auto [wo, wi] = yl.split(yl.axis(3), 8);
         yl.reorder({yl.reduce_axis(0), yl.reduce_axis(1), yl.reduce_axis(2), wo, wi});
         yl.unroll(wo);
         yl.vectorize(wi);
       }},

      {"NCHWc blocked layout",
       "Rearrange the data so the vector runs over output channels: Yc(n, k/16, h, w, k%16).\n"
       "The 16 weights of one input channel for 16 output channels are then one contiguous\n"
       "vector load from Wc, and one input value (a broadcast from Xc) multiplies it. Yc.local\n"
       "holds 8 pixels x 16 channels in 8 registers; per input channel and tap: 1 load of Wc,\n"
       "8 broadcasts, 8 FMAs, and no shifted loads. The packing stages are computed at the\n"
       "root (copies of the inputs, cheap next to the convolution; a deployed model packs its\n"
       "weights once, ahead of time).",
       {X, Wt, Yu}, [&](schedule::Schedule& s) { nchwc(s, false); }},

      {"parallel",
       "The (output-channel block, row) pairs are independent: fuse them into one loop and run\n"
       "it on the thread pool; the packing and unpacking stages run in parallel too.",
       {X, Wt, Yu}, [&](schedule::Schedule& s) { nchwc(s, true); }},
  };

  std::vector<NDArray> buffers;
  buffers.emplace_back(dtype::float32, std::vector<int64_t>{N, CI, H, W});
  buffers.emplace_back(dtype::float32, std::vector<int64_t>{CO, CI, 3, 3});
  buffers.emplace_back(dtype::float32, std::vector<int64_t>{N, CO, H, W});
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int a = 0; a < 2; ++a)
    for (auto& v : buffers[size_t(a)].values<float>()) v = dist(rng);
  auto x = buffers[0].values<float>(), wt = buffers[1].values<float>();
  std::vector<double> want(size_t(N * CO * H * W), 0.0);  // the plain loop, in double
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < CO; ++k)
      for (int64_t c = 0; c < CI; ++c)
        for (int64_t r = 0; r < 3; ++r)
          for (int64_t q = 0; q < 3; ++q)
            for (int64_t h = 0; h < H; ++h)
              for (int64_t w = 0; w < W; ++w) {
                int64_t ih = h + r - 1, iw = w + q - 1;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                want[size_t(((n * CO + k) * H + h) * W + w)] +=
                    double(x[size_t(((n * CI + c) * H + ih) * W + iw)]) * wt[size_t(((k * CI + c) * 3 + r) * 3 + q)];
              }

  std::cout << "Lesson 3: conv2d 3x3, padding 1, NCHW input " << N << "x" << CI << "x" << H << "x" << W << ", "
            << CO << " output channels (float32)\n";
  double gflop = 2.0 * double(N * CO * H * W) * double(CI * 9) * 1e-9;
  int wrong = run_lesson(steps, buffers, want, 1e-5 * double(CI * 9), 1e-3, gflop, reps);  // 1e-5 per product
  if (wrong) std::cout << "\n" << wrong << " step(s) computed a wrong result\n";
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    return quick ? run<1, 16, 32, 16, 16>(3) : run<1, 64, 64, 56, 56>(15);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
