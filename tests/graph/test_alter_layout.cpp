// Layout alteration: conv chains (with relu, a residual add, a depthwise conv and pools) run in
// NCHW[x]c with layout transforms only at the chain's boundaries, the conv's epilogue is fused
// into one kernel, and the results equal plain NCHW loops written here.
#include "support/pch.hpp"
#include "support/check.hpp"

namespace graph_alter_layout {

using namespace nnvm;
using graph::GraphBuilder;

namespace {

using Ints = std::vector<int64_t>;

using nnvm_test::count_ops;

// A plain NCHW feature map with float64 values.
struct Map {
  int64_t c, h, w;
  std::vector<double> v;
  double& at(int64_t ci, int64_t hi, int64_t wi) { return v[size_t((ci * h + hi) * w + wi)]; }
  double get(int64_t ci, int64_t hi, int64_t wi) const {
    return hi < 0 || hi >= h || wi < 0 || wi >= w ? 0.0 : v[size_t((ci * h + hi) * w + wi)];
  }
};

Map from_array(const NDArray& a) {
  Map m{a.shape()[1], a.shape()[2], a.shape()[3], {}};
  for (float x : a.values<float>()) m.v.push_back(x);
  return m;
}

// Square kernel k, stride s, symmetric pad p; group 1 or depthwise (w is (M, C or 1, k, k)).
Map conv(const Map& x, const NDArray& w, const NDArray& b, int64_t s, int64_t p, bool depthwise) {
  int64_t M = w.shape()[0], k = w.shape()[2], cin = depthwise ? 1 : x.c;
  Map y{M, (x.h + 2 * p - k) / s + 1, (x.w + 2 * p - k) / s + 1, {}};
  y.v.assign(size_t(M * y.h * y.w), 0.0);
  auto wv = w.values<float>();
  for (int64_t m = 0; m < M; ++m)
    for (int64_t oh = 0; oh < y.h; ++oh)
      for (int64_t ow = 0; ow < y.w; ++ow) {
        double acc = b.values<float>()[size_t(m)];
        for (int64_t c = 0; c < cin; ++c)
          for (int64_t kh = 0; kh < k; ++kh)
            for (int64_t kw = 0; kw < k; ++kw)
              acc += x.get(depthwise ? m : c, oh * s - p + kh, ow * s - p + kw) *
                     double(wv[size_t(((m * cin + c) * k + kh) * k + kw)]);
        y.at(m, oh, ow) = acc;
      }
  return y;
}

Map relu(Map x) {
  for (auto& e : x.v) e = std::max(e, 0.0);
  return x;
}

Map add(Map a, const Map& b) {
  for (size_t i = 0; i < a.v.size(); ++i) a.v[i] += b.v[i];
  return a;
}

Map max_pool2(const Map& x) {
  Map y{x.c, x.h / 2, x.w / 2, {}};
  y.v.assign(size_t(y.c * y.h * y.w), 0.0);
  for (int64_t c = 0; c < y.c; ++c)
    for (int64_t h = 0; h < y.h; ++h)
      for (int64_t w = 0; w < y.w; ++w)
        y.at(c, h, w) = std::max({x.get(c, 2 * h, 2 * w), x.get(c, 2 * h, 2 * w + 1), x.get(c, 2 * h + 1, 2 * w),
                                  x.get(c, 2 * h + 1, 2 * w + 1)});
  return y;
}

ops::Attrs conv_attrs(int64_t s, int64_t p, int64_t group = 1) {
  ops::Attrs a;
  a.set_ints("strides", {s, s});
  a.set_ints("pads", {p, p, p, p});
  if (group != 1) a.set_int("group", group);
  return a;
}

}  // namespace

TEST_CASE("alter_layout runs conv chains in NCHW[x]c with transforms only at the boundaries") {
  // x (1, 3, 13, 15) -> conv 3x3 (16) -> relu -> conv 3x3 (32) + conv 1x1 (32) -> relu
  //   -> depthwise 3x3 stride 2 (32) -> relu -> max_pool 2x2 -> output
  NDArray xv = nnvm_test::random_array(dtype::float32, {1, 3, 13, 15}, 1);
  NDArray w1 = nnvm_test::random_array(dtype::float32, {16, 3, 3, 3}, 2),
          b1 = nnvm_test::random_array(dtype::float32, {16}, 3);
  NDArray w2 = nnvm_test::random_array(dtype::float32, {32, 16, 3, 3}, 4),
          b2 = nnvm_test::random_array(dtype::float32, {32}, 5);
  NDArray w3 = nnvm_test::random_array(dtype::float32, {32, 16, 1, 1}, 6),
          b3 = nnvm_test::random_array(dtype::float32, {32}, 7);
  NDArray w4 = nnvm_test::random_array(dtype::float32, {32, 1, 3, 3}, 8),
          b4 = nnvm_test::random_array(dtype::float32, {32}, 9);
  GraphBuilder gb("chain");
  auto x = gb.input("x", dtype::float32, {1, 3, 13, 15});
  auto r1 = gb.op("relu", {gb.op("conv", {x, gb.constant("w1", w1), gb.constant("b1", b1)}, conv_attrs(1, 1))});
  auto c2 = gb.op("conv", {r1, gb.constant("w2", w2), gb.constant("b2", b2)}, conv_attrs(1, 1));
  auto c3 = gb.op("conv", {r1, gb.constant("w3", w3), gb.constant("b3", b3)}, conv_attrs(1, 0));
  auto r2 = gb.op("relu", {gb.op("add", {c2, c3})});
  auto r3 = gb.op("relu", {gb.op("conv", {r2, gb.constant("w4", w4), gb.constant("b4", b4)}, conv_attrs(2, 1, 32))});
  ops::Attrs pool;
  pool.set_ints("kernel_shape", {2, 2});
  pool.set_ints("strides", {2, 2});
  gb.output(gb.op("max_pool", {r3}, pool));
  graph::Graph g = gb.build();

  graph::Graph opt = graph::optimize(g, {.opt_level = 2});
  CHECK(count_ops(opt, "conv") == 0);
  CHECK(count_ops(opt, "conv_nchwc") == 3);
  CHECK(count_ops(opt, "depthwise_conv_nchwc") == 1);
  // Into the chain at x, out of it after the (blocked) pool: nothing in between.
  CHECK(count_ops(opt, "layout_transform") == 2);
  CHECK(count_ops(graph::optimize(g, {.opt_level = 1}), "layout_transform") == 0);

  Map want = from_array(xv);
  Map h1 = relu(conv(want, w1, b1, 1, 1, false));
  Map h2 = relu(add(conv(h1, w2, b2, 1, 1, false), conv(h1, w3, b3, 1, 0, false)));
  want = max_pool2(relu(conv(h2, w4, b4, 2, 1, true)));

  auto model = graph::compile(g);
  NDArray y = model.run({xv})[0];
  REQUIRE(y.shape() == Ints{1, want.c, want.h, want.w});
  auto yv = y.values<float>();
  for (size_t i = 0; i < want.v.size(); ++i) CHECK(double(yv[i]) == doctest::Approx(want.v[i]).epsilon(1e-4));
  // Each conv and its relu (and the residual add) are one kernel.
  size_t fused_epilogues = 0;
  for (auto& step : model.steps()) fused_epilogues += step.label.find("_nchwc+") != std::string::npos;
  CHECK(fused_epilogues == 3);
}

TEST_CASE("alter_layout concatenates blocked channels without leaving the blocked layout (a fire module)") {
  // SqueezeNet's fire module: x (1, 16, 9, 11) -> squeeze 1x1 (16) -> relu -> expand 1x1 (32) and
  // expand 3x3 (32) -> relu each -> concat (64) -> conv 1x1 (32) -> output.
  NDArray xv = nnvm_test::random_array(dtype::float32, {1, 16, 9, 11}, 21);
  NDArray ws = nnvm_test::random_array(dtype::float32, {16, 16, 1, 1}, 22), bs = nnvm_test::random_array(dtype::float32, {16}, 23);
  NDArray we1 = nnvm_test::random_array(dtype::float32, {32, 16, 1, 1}, 24), be1 = nnvm_test::random_array(dtype::float32, {32}, 25);
  NDArray we3 = nnvm_test::random_array(dtype::float32, {32, 16, 3, 3}, 26), be3 = nnvm_test::random_array(dtype::float32, {32}, 27);
  NDArray wo = nnvm_test::random_array(dtype::float32, {32, 64, 1, 1}, 28), bo = nnvm_test::random_array(dtype::float32, {32}, 29);
  GraphBuilder gb("fire");
  auto x = gb.input("x", dtype::float32, {1, 16, 9, 11});
  auto sq = gb.op("relu", {gb.op("conv", {x, gb.constant("ws", ws), gb.constant("bs", bs)}, conv_attrs(1, 0))});
  auto e1 = gb.op("relu", {gb.op("conv", {sq, gb.constant("we1", we1), gb.constant("be1", be1)}, conv_attrs(1, 0))});
  auto e3 = gb.op("relu", {gb.op("conv", {sq, gb.constant("we3", we3), gb.constant("be3", be3)}, conv_attrs(1, 1))});
  auto cat = gb.op("concat", {e1, e3}, ops::Attrs().set_int("axis", 1));
  gb.output(gb.op("conv", {cat, gb.constant("wo", wo), gb.constant("bo", bo)}, conv_attrs(1, 0)));
  graph::Graph g = gb.build();

  graph::Graph opt = graph::optimize(g, {.opt_level = 2});
  CHECK(count_ops(opt, "conv_nchwc") == 4);
  CHECK(count_ops(opt, "concat") == 1);
  CHECK(count_ops(opt, "layout_transform") == 2);  // in at x, out at the output

  Map in = from_array(xv);
  Map s1 = relu(conv(in, ws, bs, 1, 0, false));
  Map a = relu(conv(s1, we1, be1, 1, 0, false)), b = relu(conv(s1, we3, be3, 1, 1, false));
  Map joined{64, a.h, a.w, a.v};
  joined.v.insert(joined.v.end(), b.v.begin(), b.v.end());
  Map want = conv(joined, wo, bo, 1, 0, false);
  for (const char* spec : {"c", "c -mcpu=x86-64-v3"}) {
    CAPTURE(spec);
    graph::CompileOptions options;
    options.target = target::parse_target(spec);
    NDArray y = graph::compile(g, options).run({xv})[0];
    REQUIRE(y.shape() == Ints{1, 32, 9, 11});
    auto yv = y.values<float>();
    for (size_t i = 0; i < want.v.size(); ++i) CHECK(double(yv[i]) == doctest::Approx(want.v[i]).epsilon(1e-4));
  }
}

TEST_CASE("alter_layout blocks a conv whose channels no whole vector divides by part of a vector") {
  // 12 output channels: not a multiple of AVX2's 8 lanes or AVX-512's 16, so the block is 4 lanes
  // (SqueezeNet's 1000-class conv on AVX-512 is the case that matters: 8 of 16 lanes).
  NDArray xv = nnvm_test::random_array(dtype::float32, {1, 8, 7, 9}, 31);
  NDArray w = nnvm_test::random_array(dtype::float32, {12, 8, 3, 3}, 32), b = nnvm_test::random_array(dtype::float32, {12}, 33);
  GraphBuilder gb("part_vector");
  auto x = gb.input("x", dtype::float32, {1, 8, 7, 9});
  gb.output(gb.op("relu", {gb.op("conv", {x, gb.constant("w", w), gb.constant("b", b)}, conv_attrs(1, 1))}));
  graph::Graph g = gb.build();
  Map want = relu(conv(from_array(xv), w, b, 1, 1, false));
  for (const char* spec : {"c", "c -mcpu=x86-64-v3"}) {
    CAPTURE(spec);
    graph::CompileOptions options;
    options.target = target::parse_target(spec);
    graph::Graph opt = graph::optimize(g, {.opt_level = 2, .target = options.target});
    CHECK(count_ops(opt, "conv") == 0);
    CHECK(count_ops(opt, "conv_nchwc") == 1);
    NDArray y = graph::compile(g, options).run({xv})[0];
    REQUIRE(y.shape() == Ints{1, 12, 7, 9});
    auto yv = y.values<float>();
    for (size_t i = 0; i < want.v.size(); ++i) CHECK(double(yv[i]) == doctest::Approx(want.v[i]).epsilon(1e-4));
  }
}

// The output channel block of the blocked conv node `op` (the last axis of its packed weights).
std::vector<int64_t> weight_blocks(const graph::Graph& g, const std::string& op) {
  std::vector<int64_t> out;
  for (auto& n : g.nodes)
    if (n.kind == graph::NodeKind::op && n.op == op) out.push_back(*ir::as_const_int(g.type(n.inputs[1]).shape.back()));
  return out;
}

TEST_CASE("alter_layout gives a depthwise conv and the convs feeding it one-vector blocks") {
  // MobileNetV2's inverted residual: x (1, 8, 9, 11) -> conv 1x1 (64) -> clip -> depthwise 3x3
  // stride 2 (64) -> clip -> conv 1x1 (64) -> output. 64 channels take two-vector blocks
  // elsewhere; here the expand conv, the depthwise conv and the clip between them use one, so
  // no layout_transform is needed between them; the projecting conv reads that block and writes
  // two-vector blocks.
  const int64_t lanes = 8;  // 256-bit vectors
  NDArray xv = nnvm_test::random_array(dtype::float32, {1, 8, 9, 11}, 11);
  NDArray w1 = nnvm_test::random_array(dtype::float32, {64, 8, 1, 1}, 12), b1 = nnvm_test::random_array(dtype::float32, {64}, 13);
  NDArray w2 = nnvm_test::random_array(dtype::float32, {64, 1, 3, 3}, 14), b2 = nnvm_test::random_array(dtype::float32, {64}, 15);
  NDArray w3 = nnvm_test::random_array(dtype::float32, {64, 64, 1, 1}, 16), b3 = nnvm_test::random_array(dtype::float32, {64}, 17);
  GraphBuilder gb("inverted_residual");
  auto x = gb.input("x", dtype::float32, {1, 8, 9, 11});
  ops::Attrs relu6;
  relu6.set_float("min", 0.0).set_float("max", 6.0);
  auto e = gb.op("clip", {gb.op("conv", {x, gb.constant("w1", w1), gb.constant("b1", b1)}, conv_attrs(1, 0))}, relu6);
  auto d = gb.op("clip", {gb.op("conv", {e, gb.constant("w2", w2), gb.constant("b2", b2)}, conv_attrs(2, 1, 64))}, relu6);
  gb.output(gb.op("conv", {d, gb.constant("w3", w3), gb.constant("b3", b3)}, conv_attrs(1, 0)));
  graph::Graph g = gb.build();

  graph::CompileOptions co;
  co.target = co.target.with_vector_bits(32 * lanes);
  graph::Graph opt = graph::optimize(g, {.opt_level = 2, .target = co.target});
  CHECK(weight_blocks(opt, "conv_nchwc") == Ints{lanes, 2 * lanes});
  CHECK(weight_blocks(opt, "depthwise_conv_nchwc") == Ints{lanes});
  CHECK(count_ops(opt, "layout_transform") == 2);  // x in, y out

  auto clip6 = [](Map m) {
    for (auto& v : m.v) v = std::clamp(v, 0.0, 6.0);
    return m;
  };
  Map want = conv(clip6(conv(clip6(conv(from_array(xv), w1, b1, 1, 0, false)), w2, b2, 2, 1, true)), w3, b3, 1, 0, false);
  NDArray y = graph::compile(g, co).run({xv})[0];
  REQUIRE(y.shape() == Ints{1, want.c, want.h, want.w});
  auto yv = y.values<float>();
  for (size_t i = 0; i < want.v.size(); ++i) CHECK(double(yv[i]) == doctest::Approx(want.v[i]).epsilon(1e-4));
}

TEST_CASE("alter_layout blocks short rows by four vectors, so the register tile stays full") {
  // Widths only, not Target::for_cpu's -march: the kernels below run on any host.
  const target::Target avx512 = target::Target().with_vector_bits(512), avx2 = target::Target().with_vector_bits(256);
  // 7 columns: 7 x 2 vectors fill 14 accumulators, 7 x 4 fill 28 of AVX-512's 32 registers.
  CHECK(ops::nchwc_output_block(512, 7, avx512) == 64);
  CHECK(ops::nchwc_output_block(256, 14, avx512) == 32);  // 14 x 2 already fills 28
  CHECK(ops::nchwc_output_block(128, 56, avx512) == 32);
  CHECK(ops::nchwc_output_block(48, 7, avx512) == 16);    // only one vector divides 48
  CHECK(ops::nchwc_output_block(24, 7, avx512) == 8);     // half a vector
  CHECK(ops::nchwc_output_block(20, 7, avx512) == 4);     // a quarter
  CHECK(ops::nchwc_output_block(18, 7, avx512) == 0);
  CHECK(ops::nchwc_output_block(512, 7, avx2) == 16);     // 4 x 8 lanes would leave a tail

  // x (1, 32, 7, 7) -> conv 3x3 pad 1 (128) -> relu -> conv 3x3 pad 1 (64) -> output, AVX-512.
  NDArray xv = nnvm_test::random_array(dtype::float32, {1, 32, 7, 7}, 31);
  NDArray w1 = nnvm_test::random_array(dtype::float32, {128, 32, 3, 3}, 32), b1 = nnvm_test::random_array(dtype::float32, {128}, 33);
  NDArray w2 = nnvm_test::random_array(dtype::float32, {64, 128, 3, 3}, 34), b2 = nnvm_test::random_array(dtype::float32, {64}, 35);
  GraphBuilder gb("short_rows");
  auto x = gb.input("x", dtype::float32, {1, 32, 7, 7});
  auto h = gb.op("relu", {gb.op("conv", {x, gb.constant("w1", w1), gb.constant("b1", b1)}, conv_attrs(1, 1))});
  gb.output(gb.op("conv", {h, gb.constant("w2", w2), gb.constant("b2", b2)}, conv_attrs(1, 1)));
  graph::Graph g = gb.build();
  graph::CompileOptions co;
  co.target = avx512;
  graph::Graph opt = graph::optimize(g, {.opt_level = 2, .target = avx512});
  CHECK(weight_blocks(opt, "conv_nchwc") == Ints{64, 64});
  CHECK(count_ops(opt, "layout_transform") == 2);
  Map want = conv(relu(conv(from_array(xv), w1, b1, 1, 1, false)), w2, b2, 1, 1, false);
  NDArray y = graph::compile(g, co).run({xv})[0];
  REQUIRE(y.shape() == Ints{1, want.c, want.h, want.w});
  auto yv = y.values<float>();
  for (size_t i = 0; i < want.v.size(); ++i) CHECK(double(yv[i]) == doctest::Approx(want.v[i]).epsilon(1e-4));
}

// Pools with a 3x3 window, pads and strides, in plain loops; taps in the padding are skipped
// (max) or not counted (average, count_include_pad 0).
Map pool3(const Map& x, int64_t s, int64_t p, bool average) {
  Map y{x.c, (x.h + 2 * p - 3) / s + 1, (x.w + 2 * p - 3) / s + 1, {}};
  y.v.assign(size_t(y.c * y.h * y.w), 0.0);
  for (int64_t c = 0; c < y.c; ++c)
    for (int64_t oh = 0; oh < y.h; ++oh)
      for (int64_t ow = 0; ow < y.w; ++ow) {
        double acc = average ? 0.0 : -INFINITY;
        int64_t count = 0;
        for (int64_t h = oh * s - p; h < oh * s - p + 3; ++h)
          for (int64_t w = ow * s - p; w < ow * s - p + 3; ++w) {
            if (h < 0 || h >= x.h || w < 0 || w >= x.w) continue;
            acc = average ? acc + x.get(c, h, w) : std::max(acc, x.get(c, h, w));
            ++count;
          }
        y.at(c, oh, ow) = average ? acc / double(count) : acc;
      }
  return y;
}

TEST_CASE("alter_layout keeps max, average and global pools of blocked values blocked") {
  // x (1, 5, 11, 13) -> conv 3x3 (16) -> relu -> max_pool 3x3/2 pad 1 -> average_pool 3x3 pad 1
  //   -> global_average_pool -> flatten (output 0); global_max_pool of the max pool (output 1)
  NDArray xv = nnvm_test::random_array(dtype::float32, {1, 5, 11, 13}, 11);
  NDArray w1 = nnvm_test::random_array(dtype::float32, {16, 5, 3, 3}, 12),
          b1 = nnvm_test::random_array(dtype::float32, {16}, 13);
  GraphBuilder gb("pools");
  auto x = gb.input("x", dtype::float32, {1, 5, 11, 13});
  auto r1 = gb.op("relu", {gb.op("conv", {x, gb.constant("w1", w1), gb.constant("b1", b1)}, conv_attrs(1, 1))});
  ops::Attrs mp, ap;
  mp.set_ints("kernel_shape", {3, 3}).set_ints("strides", {2, 2}).set_ints("pads", {1, 1, 1, 1});
  ap.set_ints("kernel_shape", {3, 3}).set_ints("pads", {1, 1, 1, 1});
  auto m = gb.op("max_pool", {r1}, mp);
  auto a = gb.op("average_pool", {m}, ap);
  gb.output(gb.op("flatten", {gb.op("global_average_pool", {a})}));
  gb.output(gb.op("global_max_pool", {m}));
  graph::Graph g = gb.build();

  graph::Graph opt = graph::optimize(g, {.opt_level = 2});
  CHECK(count_ops(opt, "global_average_pool") == 0);
  CHECK(count_ops(opt, "global_max_pool") == 0);
  CHECK(count_ops(opt, "max_pool") == 2);
  CHECK(count_ops(opt, "average_pool") == 2);
  // x into the block, and the two global pools' results out of it.
  CHECK(count_ops(opt, "layout_transform") == 3);
  // Nobody reads the max pool's Indices: simplify_inference stopped computing them.
  for (auto& n : opt.nodes)
    if (n.kind == graph::NodeKind::op && n.op == "max_pool") CHECK(n.num_outputs() == 1);

  Map h = pool3(relu(conv(from_array(xv), w1, b1, 1, 1, false)), 2, 1, false);
  Map avg = pool3(h, 1, 1, true);
  std::vector<double> gap(16, 0.0), gmp(16, -INFINITY);
  for (int64_t c = 0; c < 16; ++c) {
    for (int64_t i = 0; i < avg.h; ++i)
      for (int64_t j = 0; j < avg.w; ++j) gap[size_t(c)] += avg.get(c, i, j) / double(avg.h * avg.w);
    for (int64_t i = 0; i < h.h; ++i)
      for (int64_t j = 0; j < h.w; ++j) gmp[size_t(c)] = std::max(gmp[size_t(c)], h.get(c, i, j));
  }
  auto out = graph::compile(g).run({xv});
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].shape() == Ints{1, 16});
  REQUIRE(out[1].shape() == Ints{1, 16, 1, 1});
  for (size_t c = 0; c < 16; ++c) {
    CHECK(double(out[0].values<float>()[c]) == doctest::Approx(gap[c]).epsilon(1e-4));
    CHECK(double(out[1].values<float>()[c]) == doctest::Approx(gmp[c]).epsilon(1e-4));
  }
}

TEST_CASE("alter_layout keeps a max pool whose Indices are read in NCHW") {
  GraphBuilder gb("indices");
  auto x = gb.input("x", dtype::float32, {1, 4, 6, 6});
  NDArray w = nnvm_test::random_array(dtype::float32, {8, 4, 3, 3}, 1);
  ops::Attrs mp;
  mp.set_ints("kernel_shape", {2, 2}).set_ints("strides", {2, 2});
  auto pool = gb.op_outputs("max_pool", {gb.op("conv", {x, gb.constant("w", w)}, conv_attrs(1, 1))}, mp);
  gb.output(pool[0]);
  gb.output(pool[1]);
  graph::Graph opt = graph::optimize(gb.build(), {.opt_level = 2});
  for (auto& n : opt.nodes)
    if (n.kind == graph::NodeKind::op && n.op == "max_pool") {
      CHECK(n.types[0].shape.size() == 4);
      CHECK(n.num_outputs() == 2);
    }
  CHECK(count_ops(opt, "conv_nchwc") == 1);
}

TEST_CASE("alter_layout leaves convs it cannot block in NCHW") {
  // 18 output channels: not a multiple of 4 lanes, so the conv stays as it is.
  GraphBuilder gb("odd");
  auto x = gb.input("x", dtype::float32, {1, 4, 7, 7});
  NDArray w = nnvm_test::random_array(dtype::float32, {18, 4, 3, 3}, 1);
  gb.output(gb.op("relu", {gb.op("conv", {x, gb.constant("w", w)}, conv_attrs(1, 1))}));
  graph::Graph opt = graph::optimize(gb.build(), {.opt_level = 2});
  CHECK(count_ops(opt, "conv") == 1);
  CHECK(count_ops(opt, "layout_transform") == 0);
}

}  // namespace graph_alter_layout
