// Lesson 3: scheduling a 3x3 convolution.
//
//   ./03_conv2d_schedule          1 x 64 x 56 x 56 input, 64 output channels
//   ./03_conv2d_schedule --quick  1 x 16 x 16 x 16 input, 32 output channels (what CI runs)
#include <nnvm/tensor.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <random>

using namespace nnvm;

namespace {

// One schedule step: what it does to the loops, why that is faster, and the code. `args` are
// the kernel's arguments, inputs then output; the schedule starts from the output's default.
struct Step {
  std::string name;
  std::string why;
  std::vector<te::Tensor> args;
  std::function<void(schedule::Schedule&)> apply;
};

// The loop nest as scheduled: the IR right after the `simplify` pass, which still shows each
// loop's kind (vectorized, unrolled, parallel) before those loops are rewritten into vector
// code and copies. LowerOptions::on_pass hands us every pass's IR; we keep this one.
ir::LoweredFunc lower_step(const schedule::Schedule& s, const std::vector<te::Tensor>& args, const std::string& name,
                           std::string& loop_nest) {
  lower::LowerOptions options;
  options.on_pass = [&](const std::string& pass, const ir::Stmt& ir) {
    if (pass == "simplify") loop_nest = ir::to_string(ir);
  };
  return lower::lower(s, args, name, options);
}

// Median wall time of one call after a warm-up call, over at most `reps` calls or one second.
double median_ms(const target::CKernel& kernel, std::vector<NDArray>& buffers, int reps) {
  std::vector<BufferView> views(buffers.begin(), buffers.end());
  kernel(views);
  std::vector<double> ms;
  double total = 0;
  for (int r = 0; r < reps && (r == 0 || total < 1000.0); ++r) {
    auto t0 = std::chrono::steady_clock::now();
    kernel(views);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    total += ms.back();
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Lowers and compiles every step (one compiler call for all), then runs each in turn.
// `buffers` are the kernel arguments; the last one is the output, compared with `want`
// element by element: |got - want| <= atol + rtol * |want|. Returns the number of wrong steps.
int run_lesson(const std::vector<Step>& steps, std::vector<NDArray>& buffers, const std::vector<double>& want,
               double atol, double rtol, double gflop, int reps) {
  std::vector<ir::LoweredFunc> fns;
  std::vector<std::string> nests(steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    schedule::Schedule s = schedule::create_schedule(steps[k].args.back());
    steps[k].apply(s);
    fns.push_back(lower_step(s, steps[k].args, "step" + std::to_string(k), nests[k]));
  }
  std::vector<target::CKernel> kernels = target::jit_c(fns);
  int wrong = 0;
  double first = 0, previous = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    std::cout << "\n== step " << k << ": " << steps[k].name << "\n" << steps[k].why << "\n\n"
              << "schedule: " << fns[k].origin << "\n" << nests[k] << "\n";
    auto out = buffers.back().values<float>();
    std::fill(out.begin(), out.end(), NAN);  // an element the kernel skips shows as wrong
    double ms = median_ms(kernels[k], buffers, reps);
    double max_err = 0;
    bool ok = true;
    for (size_t e = 0; e < want.size(); ++e) {
      double err = std::abs(double(out[e]) - want[e]);
      if (!(err <= atol + rtol * std::abs(want[e]))) ok = false;  // NaN fails too
      max_err = std::max(max_err, std::isnan(err) ? INFINITY : err);
    }
    wrong += !ok;
    if (k == 0) first = previous = ms;
    std::printf("time %.3f ms, %.2f GFLOP/s, x%.2f vs previous step, x%.2f vs naive; max |error| %.2g %s\n", ms,
                gflop / (ms * 1e-3), previous / ms, first / ms, max_err, ok ? "(ok)" : "(WRONG)");
    previous = ms;
  }
  return wrong;
}

// Sizes of one 3x3 convolution with padding 1 and stride 1 (a ResNet-18 stage-1 layer by
// default): batch N, input channels CI, output channels CO, image H x W.
template <int64_t N, int64_t CI, int64_t CO, int64_t H, int64_t W>
int run(int reps) {
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

  constexpr int64_t CB = 8, KB = 16;
  auto Xc = compute<Shape<N, CI / CB, H + 2, W + 2, CB>>(
      [&](auto n, auto cb, auto h, auto w, auto ci) {
        return select(h >= 1 && h <= H && w >= 1 && w <= W, X(n, cb * CB + ci, h - 1, w - 1), 0.0f);
      },
      "Xc", {"n", "cb", "h", "w", "ci"});
  auto Wc = compute<Shape<CO / KB, CI / CB, 3, 3, CB, KB>>(
      [&](auto kb, auto cb, auto r, auto s, auto ci, auto ki) { return Wt(kb * KB + ki, cb * CB + ci, r, s); },
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

  std::vector<te::Tensor> args{X, Wt, Y}, blocked{X, Wt, Yu};
  std::vector<Step> steps = {
      {"naive", "", args, [](schedule::Schedule&) {}},
      {"inline", "", args, [&](schedule::Schedule& s) { s[P].compute_inline(); }},
      {"P at h", "", args, [&](schedule::Schedule& s) {
         auto y = s[Y];
         y.reorder({y.axis(2), y.axis(1)});
         s[P].compute_at(y, y.axis(2));
       }},
      {"P at h vec", "", args, [&](schedule::Schedule& s) {
         auto y = s[Y];
         y.reorder({y.axis(2), y.axis(1)});
         s[P].compute_at(y, y.axis(2));
         auto [wo, wi] = y.split(y.axis(3), 8);
         y.reorder({y.reduce_axis(0), y.reduce_axis(1), y.reduce_axis(2), wo, wi});
         y.vectorize(wi);
       }},
      {"cache_write row", "", args, [&](schedule::Schedule& s) {
         te::Tensor YL = s.cache_write(Y, ir::MemoryScope::local);
         auto y = s[Y];
         y.reorder({y.axis(2), y.axis(1)});
         auto yl = s[YL];
         yl.compute_at(y, y.axis(2));
         yl.reorder({yl.axis(2), yl.axis(1)});
         s[P].compute_at(yl, yl.axis(2));
         auto [wo, wi] = yl.split(yl.axis(3), 8);
         yl.reorder({yl.reduce_axis(0), yl.reduce_axis(1), yl.reduce_axis(2), wo, wi});
         yl.unroll(wo);
         yl.vectorize(wi);
         auto [ywo, ywi] = y.split(y.axis(3), 8);
         y.vectorize(ywi);
       }},
      {"cache_write k", "", args, [&](schedule::Schedule& s) {
         te::Tensor YL = s.cache_write(Y, ir::MemoryScope::local);
         auto y = s[Y];
         y.reorder({y.axis(2), y.axis(1)});
         auto yl = s[YL];
         yl.compute_at(y, y.axis(1));
         auto [wo, wi] = yl.split(yl.axis(3), 8);
         yl.reorder({yl.reduce_axis(0), yl.reduce_axis(1), yl.reduce_axis(2), wo, wi});
         yl.unroll(wo);
         yl.vectorize(wi);
         auto [ywo, ywi] = y.split(y.axis(3), 8);
         y.vectorize(ywi);
       }},
      {"nchwc", "", blocked, [&](schedule::Schedule& s) {
         te::Tensor YL = s.cache_write(Yc, ir::MemoryScope::local);
         auto y = s[Yc];
         auto [wo, wi] = y.split(y.axis(3), 8);
         y.vectorize(y.axis(4));
         auto yl = s[YL];
         yl.compute_at(y, wo);
         yl.reorder({yl.reduce_axis(0), yl.reduce_axis(1), yl.reduce_axis(2), yl.reduce_axis(3), yl.axis(3), yl.axis(4)});
         yl.unroll(yl.axis(3));
         yl.vectorize(yl.axis(4));
         s[Xc].vectorize(s[Xc].axis(4));
       }},
      {"nchwc parallel", "", blocked, [&](schedule::Schedule& s) {
         te::Tensor YL = s.cache_write(Yc, ir::MemoryScope::local);
         auto y = s[Yc];
         auto [wo, wi] = y.split(y.axis(3), 8);
         y.vectorize(y.axis(4));
         y.parallel(y.fuse(y.axis(1), y.axis(2)));
         auto yl = s[YL];
         yl.compute_at(y, wo);
         yl.reorder({yl.reduce_axis(0), yl.reduce_axis(1), yl.reduce_axis(2), yl.reduce_axis(3), yl.axis(3), yl.axis(4)});
         yl.unroll(yl.axis(3));
         yl.vectorize(yl.axis(4));
         s[Xc].vectorize(s[Xc].axis(4));
         s[Xc].parallel(s[Xc].axis(1));
         s[Wc].parallel(s[Wc].axis(0));
         s[Yu].parallel(s[Yu].axis(1));
       }},
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
  int wrong = run_lesson(steps, buffers, want, 1e-5 * double(CI * 9), 1e-3, gflop, reps);
  if (wrong) std::cout << "\n" << wrong << " step(s) computed a wrong result\n";
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    return quick ? run<1, 16, 32, 16, 16>(3) : run<1, 64, 64, 56, 56>(9);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
