// bench_conv: float32 conv2d + bias + relu at batch 1, nnvm's graph executor beside oneDNN in the
// same run, on every distinct convolution of ResNet-18 (224 x 224 input) and every depthwise 3x3
// convolution of MobileNetV2, at 1 and 2 threads.
//
//   bench_conv                       all shapes, threads 1 and 2
//   bench_conv --threads 1 --reps 31 --only depthwise
//   bench_conv --backends llvm,c     nnvm columns (default: llvm when built, else c)
//   bench_conv --vector-bits 256     Target::vector_bits for nnvm (default: this CPU's, Target::host())
//   bench_conv --profile             also print each nnvm model's kernels and their times
//   bench_conv --layout nchw         nnvm's input and output in NCHW, the layout transforms timed
//                                    (default --layout blocked: both in NCHW[x]c, as oneDNN's)
//   bench_conv --quick               three small shapes, 3 reps, every built back end: what CI
//                                    runs (checks, not speed)
//
// nnvm builds one graph per shape and compiles it with graph::compile at the default opt level;
// the time is one CompiledModel::run_into, writing into an output made once (as oneDNN's), its
// arena kept by the calling thread from run to run. By default
// (--layout blocked) the graph is x -> conv_nchwc (or depthwise_conv_nchwc) -> relu with x and y
// in the blocked layout the layout pass gives a chain of convs: the conv as it runs inside a
// network, like oneDNN below. With --layout nchw it is x -> conv(W, B) -> relu in NCHW, and the
// graph passes' layout transforms at both ends are timed too. oneDNN gets its best case: format_tag::any for src, weights and dst
// (it picks its blocked layouts), weights and input reordered once outside the timing, the
// output left in oneDNN's layout (reordered back to NCHW only to check it).
//
// Every rep runs each contender once (in a rotating order), so background noise hits all of
// them alike; a rep of a fast convolution times a loop of calls (about 5 ms), and the table
// shows the median time per call. Each contender's output is checked against plain loops; the
// exit status is non-zero if any check fails.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "../common/bench_util.hpp"

#include <nnvm/graph/builder.hpp>
#include <nnvm/graph/executor.hpp>
#include <nnvm/nnvm.hpp>

#ifdef NNVM_CONV_WITH_LLVM
#include <nnvm/codegen/llvm_graph.hpp>
#endif
#ifdef NNVM_CONV_WITH_DNNL
#include <dnnl.hpp>
#include <omp.h>
#endif

namespace {

// A 2-D convolution of a square (1, c_in, size, size) input by a square kernel, pads on all sides.
struct ConvShape {
  std::string group;  // the geometric-mean group: "ResNet-18", "depthwise"
  int64_t c_in, size, c_out, kernel, stride, pad, groups;

  int64_t out() const { return (size + 2 * pad - kernel) / stride + 1; }
  // Multiply-adds count two; bias and relu are not counted.
  double gflop() const {
    return 2.0 * double(c_out) * double(out() * out()) * double(c_in / groups) * double(kernel * kernel) * 1e-9;
  }
  std::string label() const {
    std::string k = nnvm::str_cat(kernel, "x", kernel, stride > 1 ? nnvm::str_cat("/", stride) : std::string());
    if (groups == c_in && groups == c_out) return nnvm::str_cat("dw ", k, " ", c_in, " @", size);
    return nnvm::str_cat(k, " ", c_in, ">", c_out, " @", size);
  }
};

std::vector<ConvShape> resnet18_shapes() {
  const std::string g = "ResNet-18";
  return {{g, 3, 224, 64, 7, 2, 3, 1},    {g, 64, 56, 64, 3, 1, 1, 1},    {g, 64, 56, 128, 3, 2, 1, 1},
          {g, 64, 56, 128, 1, 2, 0, 1},   {g, 128, 28, 128, 3, 1, 1, 1},  {g, 128, 28, 256, 3, 2, 1, 1},
          {g, 128, 28, 256, 1, 2, 0, 1},  {g, 256, 14, 256, 3, 1, 1, 1},  {g, 256, 14, 512, 3, 2, 1, 1},
          {g, 256, 14, 512, 1, 2, 0, 1},  {g, 512, 7, 512, 3, 1, 1, 1}};
}

std::vector<ConvShape> depthwise_shapes() {
  std::vector<ConvShape> out;
  const std::pair<int64_t, int64_t> at[] = {{32, 112}, {96, 112}, {144, 56}, {144, 56}, {192, 28},
                                            {192, 28}, {384, 14}, {576, 14}, {576, 14}, {960, 7}};
  const int64_t stride[] = {1, 2, 1, 2, 1, 2, 1, 1, 2, 1};
  for (size_t i = 0; i < std::size(at); ++i)
    out.push_back({"depthwise", at[i].first, at[i].second, at[i].first, 3, stride[i], 1, at[i].first});
  return out;
}

// Odd sizes and channel counts that fit no vector or block evenly, so the tail paths run.
std::vector<ConvShape> quick_shapes() {
  return {{"ResNet-18", 16, 14, 24, 3, 1, 1, 1}, {"ResNet-18", 3, 23, 16, 7, 2, 3, 1}, {"depthwise", 24, 13, 24, 3, 2, 1, 24}};
}

struct Options {
  std::vector<ConvShape> shapes;
  std::vector<int> threads{1, 2};
  std::vector<std::string> backends;  // nnvm columns: "llvm", "c"
  int reps = 21;
  double sample_ms = 5;  // a rep of a faster call times a loop of calls this long
  int vector_bits = nnvm::target::Target::host().vector_bits;  // as nnvmc compiles
  bool profile = false;
  bool blocked = true;  // --layout: nnvm's input and output in NCHW[x]c (like oneDNN's), or NCHW
};

std::vector<std::string> built_backends() {
#ifdef NNVM_CONV_WITH_LLVM
  return {"llvm", "c"};
#else
  return {"c"};
#endif
}

Options parse(int argc, char** argv) {
  Options o;
  std::string only;
  bool quick = false;
  for (int a = 1; a < argc; ++a) {
    std::string arg = argv[a];
    auto value = [&]() -> std::string {
      if (a + 1 >= argc) throw std::runtime_error(arg + " needs a value");
      return argv[++a];
    };
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--profile") {
      o.profile = true;
    } else if (arg == "--layout") {
      std::string l = value();
      if (l != "blocked" && l != "nchw") throw std::runtime_error("--layout takes blocked or nchw");
      o.blocked = l == "blocked";
    } else if (arg == "--only") {
      only = value();
      if (only != "resnet" && only != "depthwise") throw std::runtime_error("--only takes resnet or depthwise");
    } else if (arg == "--reps") {
      o.reps = int(bench::parse_positive_ints(value(), arg).at(0));
    } else if (arg == "--threads") {
      o.threads.clear();
      for (auto t : bench::parse_positive_ints(value(), arg)) o.threads.push_back(int(t));
    } else if (arg == "--vector-bits") {
      o.vector_bits = int(bench::parse_positive_ints(value(), arg).at(0));
    } else if (arg == "--backends") {
      std::stringstream ss(value());
      auto built = built_backends();
      for (std::string b; std::getline(ss, b, ',');) {
        if (std::find(built.begin(), built.end(), b) == built.end())
          throw std::runtime_error("--backends: '" + b + "' is not built in (built: " +
                                   (built.size() == 2 ? "llvm, c" : "c") + ")");
        o.backends.push_back(b);
      }
    } else {
      throw std::runtime_error("unknown argument '" + arg + "' (see the comment at the top of bench_conv.cpp)");
    }
  }
  if (quick) {
    o.shapes = quick_shapes();
    o.reps = 3;
    o.sample_ms = 0;
    if (o.backends.empty()) o.backends = built_backends();
  } else {
    if (only != "depthwise")
      for (auto& s : resnet18_shapes()) o.shapes.push_back(s);
    if (only != "resnet")
      for (auto& s : depthwise_shapes()) o.shapes.push_back(s);
  }
  if (o.backends.empty()) o.backends = {built_backends().front()};
  return o;
}

// max |x - ref| / max |ref|; a size mismatch makes it NaN.
double max_rel_error(const std::vector<float>& x, const std::vector<float>& ref) {
  return x.size() != ref.size() ? NAN : bench::max_rel_error(x.data(), ref.data(), x.size());
}

// relu(conv(x, w) + b) in NCHW by plain loops, accumulating in double.
std::vector<float> reference(const ConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b) {
  const int64_t o = s.out(), cg = s.c_in / s.groups, mg = s.c_out / s.groups, k = s.kernel;
  std::vector<float> y(size_t(s.c_out * o * o));
  for (int64_t m = 0; m < s.c_out; ++m) {
    const int64_t c0 = m / mg * cg;
    for (int64_t oy = 0; oy < o; ++oy)
      for (int64_t ox = 0; ox < o; ++ox) {
        double acc = b[size_t(m)];
        for (int64_t c = 0; c < cg; ++c)
          for (int64_t ky = 0; ky < k; ++ky) {
            const int64_t iy = oy * s.stride - s.pad + ky;
            if (iy < 0 || iy >= s.size) continue;
            for (int64_t kx = 0; kx < k; ++kx) {
              const int64_t ix = ox * s.stride - s.pad + kx;
              if (ix < 0 || ix >= s.size) continue;
              acc += double(x[size_t(((c0 + c) * s.size + iy) * s.size + ix)]) *
                     double(w[size_t(((m * cg + c) * k + ky) * k + kx)]);
            }
          }
        y[size_t((m * o + oy) * o + ox)] = float(std::max(acc, 0.0));
      }
  }
  return y;
}

nnvm::graph::Graph conv_relu_graph(const ConvShape& s, const nnvm::NDArray& w, const nnvm::NDArray& b) {
  using namespace nnvm;
  graph::GraphBuilder gb("conv_relu");
  auto x = gb.input("x", dtype::float32, {1, s.c_in, s.size, s.size});
  auto attrs = ops::Attrs()
                   .set_ints("kernel_shape", {s.kernel, s.kernel})
                   .set_ints("strides", {s.stride, s.stride})
                   .set_ints("pads", {s.pad, s.pad, s.pad, s.pad})
                   .set_int("group", s.groups);
  auto y = gb.op("conv", {x, gb.constant("W", w), gb.constant("B", b)}, attrs, "conv");
  gb.output(gb.op("relu", {y}, {}, "relu"));
  return gb.build();
}

// The blocks of a shape in --layout blocked, as nnvm's layout pass gives them in a network
// (graph::alter_layout): a conv's output block is ops::nchwc_output_block of its channels and
// output width, its input block its producer's (taken as a conv whose output is this input);
// a depthwise conv, and so the conv feeding it, one vector. Channel counts no vector divides get
// the largest of 4, 2, 1 that does (only the --quick shapes).
struct Blocks {
  int64_t in, out;
};
Blocks blocks_of(const ConvShape& s, int vector_bits) {
  const nnvm::target::Target t = nnvm::target::Target().with_vector_bits(vector_bits);
  const int64_t lanes = t.vector_lanes(nnvm::dtype::float32);
  auto block = [&](int64_t channels, int64_t width, bool depthwise) {
    int64_t b = depthwise ? (channels % lanes == 0 ? lanes : 0) : nnvm::ops::nchwc_output_block(channels, width, t);
    for (int64_t small : {int64_t(4), int64_t(2)})
      if (b == 0 && channels % small == 0) b = small;
    return b == 0 ? int64_t(1) : b;
  };
  if (s.groups == s.c_in && s.groups == s.c_out) return {block(s.c_in, s.size, true), block(s.c_in, s.size, true)};
  return {block(s.c_in, s.size, false), block(s.c_out, s.out(), false)};
}

// (1, C, H, W) row-major -> (1, C / b, H, W, b), and back.
std::vector<float> to_blocked(const std::vector<float>& x, int64_t c, int64_t hw, int64_t b) {
  std::vector<float> y(x.size());
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t p = 0; p < hw; ++p) y[size_t(((ch / b) * hw + p) * b + ch % b)] = x[size_t(ch * hw + p)];
  return y;
}
std::vector<float> from_blocked(std::span<const float> y, int64_t c, int64_t hw, int64_t b) {
  std::vector<float> x(y.size());
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t p = 0; p < hw; ++p) x[size_t(ch * hw + p)] = y[size_t(((ch / b) * hw + p) * b + ch % b)];
  return x;
}

// The same convolution written in the blocked ops the layout pass produces (conv_nchwc,
// depthwise_conv_nchwc), input and output blocked: what a conv inside a network of blocked convs
// runs, and what oneDNN is timed on (its reorders outside the timing).
nnvm::graph::Graph blocked_conv_relu_graph(const ConvShape& s, Blocks bl, const std::vector<float>& w,
                                           const std::vector<float>& b) {
  using namespace nnvm;
  const int64_t k = s.kernel, kk = k * k;
  const bool depthwise = s.groups == s.c_in && s.groups == s.c_out;
  graph::GraphBuilder gb("conv_relu_blocked");
  auto x = gb.input("x", dtype::float32, {1, s.c_in / bl.in, s.size, s.size, bl.in});
  auto attrs = ops::Attrs()
                   .set_ints("kernel_shape", {k, k})
                   .set_ints("strides", {s.stride, s.stride})
                   .set_ints("pads", {s.pad, s.pad, s.pad, s.pad});
  // W (M, C, K, K) -> (M / ob, C / ib, K, K, ib, ob); depthwise (C, 1, K, K) -> (C / b, K, K, b).
  std::vector<float> wb(w.size());
  std::vector<int64_t> wshape;
  if (depthwise) {
    for (int64_t c = 0; c < s.c_in; ++c)
      for (int64_t t = 0; t < kk; ++t) wb[size_t(((c / bl.in) * kk + t) * bl.in + c % bl.in)] = w[size_t(c * kk + t)];
    wshape = {s.c_in / bl.in, k, k, bl.in};
  } else {
    for (int64_t m = 0; m < s.c_out; ++m)
      for (int64_t c = 0; c < s.c_in; ++c)
        for (int64_t t = 0; t < kk; ++t)
          wb[size_t((((m / bl.out) * (s.c_in / bl.in) + c / bl.in) * kk + t) * bl.in * bl.out + (c % bl.in) * bl.out +
                    m % bl.out)] = w[size_t((m * s.c_in + c) * kk + t)];
    wshape = {s.c_out / bl.out, s.c_in / bl.in, k, k, bl.in, bl.out};
  }
  auto W = gb.constant("W", NDArray::from(wb, wshape));
  auto B = gb.constant("B", NDArray::from(b, {s.c_out / bl.out, bl.out}));  // m = block * ob + lane: same order
  auto y = gb.op(depthwise ? "depthwise_conv_nchwc" : "conv_nchwc", {x, W, B}, attrs, "conv");
  gb.output(gb.op("relu", {y}, {}, "relu"));
  return gb.build();
}

nnvm::graph::CompileOptions compile_options(const std::string& backend, const Options& o, const std::string& c_cache) {
  nnvm::graph::CompileOptions co;
  co.target = nnvm::target::parse_target(backend);
  co.target = co.target.with_vector_bits(o.vector_bits);
  if (co.target.emitter == nnvm::target::Emitter::c) {
    nnvm::target::CJitOptions jo;
    jo.cache_dir = c_cache;
    co.compiler = nnvm::graph::c_kernel_compiler(jo);
  }
#ifdef NNVM_CONV_WITH_LLVM
  if (co.target.emitter == nnvm::target::Emitter::llvm) {
    co.compiler = nnvm::codegen::llvm_kernel_compiler();
  }
#endif
  return co;
}

std::string column_name(const std::string& backend) { return backend == "llvm" ? "nnvm-LLVM" : "nnvm-C"; }

#ifdef NNVM_CONV_WITH_DNNL
// One oneDNN convolution with its memories in the layouts it chose, input and weights already
// reordered into them. Made after omp_set_num_threads: oneDNN picks its blocking for the
// thread count it sees when the primitive is created.
struct DnnlConv {
  dnnl::convolution_forward prim;
  std::unordered_map<int, dnnl::memory> args;
  dnnl::memory user_dst;
  std::string impl;

  DnnlConv(const ConvShape& s, std::vector<float>& x, std::vector<float>& w, std::vector<float>& b,
           const dnnl::engine& eng, dnnl::stream& strm) {
    using dnnl::memory;
    using tag = memory::format_tag;
    const auto f32 = memory::data_type::f32;
    const int64_t o = s.out();
    memory::dims src_dims{1, s.c_in, s.size, s.size}, dst_dims{1, s.c_out, o, o}, bias_dims{s.c_out};
    // ONNX's (M, C / group, K, K) weights are oneDNN's goihw with the group axis split off.
    memory::dims wei_dims = s.groups == 1 ? memory::dims{s.c_out, s.c_in, s.kernel, s.kernel}
                                          : memory::dims{s.groups, s.c_out / s.groups, s.c_in / s.groups, s.kernel, s.kernel};
    auto any = [&](const memory::dims& d) { return memory::desc(d, f32, tag::any); };
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                         any(src_dims), any(wei_dims), memory::desc(bias_dims, f32, tag::x),
                                         any(dst_dims), {s.stride, s.stride}, {s.pad, s.pad}, {s.pad, s.pad});
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, eng);
    impl = pd.impl_info_str();
    prim = dnnl::convolution_forward(pd);

    auto place = [&](const memory::desc& want, const memory::desc& user_md, void* data) {
      memory user(user_md, eng, data);
      if (want == user_md) return user;
      memory m(want, eng);
      dnnl::reorder(user, m).execute(strm, user, m);
      return m;
    };
    args[DNNL_ARG_SRC] = place(pd.src_desc(), memory::desc(src_dims, f32, tag::nchw), x.data());
    args[DNNL_ARG_WEIGHTS] =
        place(pd.weights_desc(), memory::desc(wei_dims, f32, s.groups == 1 ? tag::oihw : tag::goihw), w.data());
    args[DNNL_ARG_BIAS] = place(pd.bias_desc(), memory::desc(bias_dims, f32, tag::x), b.data());
    args[DNNL_ARG_DST] = memory(pd.dst_desc(), eng);
    user_dst = memory(memory::desc(dst_dims, f32, tag::nchw), eng);
    strm.wait();
    // NaN in every element, so one the convolution never writes fails the check.
    memory nan_dst(memory::desc(dst_dims, f32, tag::nchw), eng);
    float* p = static_cast<float*>(nan_dst.get_data_handle());
    std::fill(p, p + s.c_out * o * o, NAN);
    dnnl::reorder(nan_dst, args[DNNL_ARG_DST]).execute(strm, nan_dst, args[DNNL_ARG_DST]);
    strm.wait();
  }

  void run(dnnl::stream& strm) {
    prim.execute(strm, args);
    strm.wait();
  }

  std::vector<float> result(dnnl::stream& strm) {
    dnnl::reorder(args[DNNL_ARG_DST], user_dst).execute(strm, args[DNNL_ARG_DST], user_dst);
    strm.wait();
    const float* p = static_cast<const float*>(user_dst.get_data_handle());
    return std::vector<float>(p, p + user_dst.get_desc().get_size() / sizeof(float));
  }
};
#endif

// One column of the table: how it computes relu(conv(x) + b), and its NCHW output afterwards.
struct Contender {
  std::string name;
  std::function<void(int threads)> run;
  std::function<std::vector<float>()> result;
  int inner = 1;  // calls per timed sample
};

std::vector<float> random_vector(size_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  bench::set_environment_and_reexec(argv);
  Options opt;
  try {
    opt = parse(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bench_conv: " << e.what() << "\n";
    return 2;
  }
  std::printf("bench_conv: y = relu(conv2d(x, W) + B), float32, batch 1, NCHW in and out; GFLOP/s = 2 * MACs / "
              "median time (bias and relu not counted)\n");
  std::printf("  cpu     %s, %ld online cores; load average %s\n", bench::cpu_model().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), bench::load_average().c_str());
#ifdef NNVM_CONV_WITH_DNNL
  const dnnl_version_t* dv = dnnl_version();
  std::printf("  onednn  %d.%d.%d (%s): convolution_forward, forward_inference, convolution_direct, bias + post-op "
              "eltwise_relu;\n          src/weights/dst format_tag::any (its blocked layouts); weights and input "
              "reordered once OUTSIDE the timing,\n          output left in its layout; primitive made per thread "
              "count; depthwise = groups of one channel\n",
              dv->major, dv->minor, dv->patch,
              dv->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP, omp_set_num_threads" : "its own threading");
#else
  std::printf("  onednn  not built in (needs libdnnl-dev and OpenMP): nnvm columns only\n");
#endif
  if (opt.blocked)
    std::printf("  nnvm    --layout blocked: graph x -> conv_nchwc or depthwise_conv_nchwc (W, B constants) -> relu, x and y "
                "in NCHW[x]c\n          (blocks as the layout pass picks them), graph::compile at opt level %d, Target "
                "vector_bits %d;\n          time = CompiledModel::run_into(inputs, outputs, threads), outputs made "
                "once\n",
                nnvm::graph::CompileOptions().opt_level, opt.vector_bits);
  else
    std::printf("  nnvm    --layout nchw: graph x -> conv(W, B constants) -> relu, graph::compile at opt level %d, Target "
                "vector_bits %d;\n          time = CompiledModel::run_into(inputs, outputs, threads): everything the "
                "compiled graph does (layout\n          transforms included), outputs made once\n",
                nnvm::graph::CompileOptions().opt_level, opt.vector_bits);
  std::printf("  env     OMP_WAIT_POLICY=%s; reps %d interleaved (%s), medians shown\n", std::getenv("OMP_WAIT_POLICY"),
              opt.reps,
              opt.sample_ms > 0 ? nnvm::str_cat("a rep of a call under ", opt.sample_ms, " ms times a loop of calls").c_str()
                                : "one call per rep");

  // Data and reference outputs, one set per shape.
  std::mt19937 rng(42);
  const size_t n = opt.shapes.size();
  std::vector<std::vector<float>> xs(n), ws(n), bs(n), refs(n);
  for (size_t i = 0; i < n; ++i) {
    const ConvShape& s = opt.shapes[i];
    xs[i] = random_vector(size_t(s.c_in * s.size * s.size), 1.0f, rng);
    // Weights scaled by 1 / sqrt(fan-in) keep outputs near 1, so about half survive relu.
    const int64_t fan_in = s.c_in / s.groups * s.kernel * s.kernel;
    ws[i] = random_vector(size_t(s.c_out * fan_in), 1.0f / std::sqrt(float(fan_in)), rng);
    bs[i] = random_vector(size_t(s.c_out), 0.5f, rng);
    refs[i] = reference(s, xs[i], ws[i], bs[i]);
  }

  // nnvm models: one per shape and back end, each compiled on its own so its compile time is its own.
  bench::TempDir c_cache("bench_conv");
  if (c_cache.path.empty())
    std::printf("  note    no temporary directory for the C JIT: its compile times may come from its cache\n");
  std::vector<std::vector<nnvm::graph::CompiledModel>> models(opt.backends.size());
  // One input list per shape, passed by reference: a braced list would deep-copy the input
  // into every call.
  std::vector<std::vector<nnvm::NDArray>> inputs;
  std::printf("\n%-20s |", "shape");
  for (auto& b : opt.backends) std::printf(" %11s", (column_name(b) + " s").c_str());
  std::printf(" | kernels of the compiled graph (%s)\n", column_name(opt.backends.front()).c_str());
  try {
    for (size_t i = 0; i < n; ++i) {
      const ConvShape& s = opt.shapes[i];
      Blocks bl = blocks_of(s, opt.vector_bits);
      nnvm::graph::Graph g;
      if (opt.blocked) {
        inputs.push_back({nnvm::NDArray::from(to_blocked(xs[i], s.c_in, s.size * s.size, bl.in),
                                              {1, s.c_in / bl.in, s.size, s.size, bl.in})});
        g = blocked_conv_relu_graph(s, bl, ws[i], bs[i]);
      } else {
        inputs.push_back({nnvm::NDArray::from(xs[i], {1, s.c_in, s.size, s.size})});
        g = conv_relu_graph(s, nnvm::NDArray::from(ws[i], {s.c_out, s.c_in / s.groups, s.kernel, s.kernel}),
                            nnvm::NDArray::from(bs[i], {s.c_out}));
      }
      std::printf("%-20s |", s.label().c_str());
      for (size_t b = 0; b < opt.backends.size(); ++b) {
        auto t0 = std::chrono::steady_clock::now();
        models[b].push_back(nnvm::graph::compile(g, compile_options(opt.backends[b], opt, c_cache.path)));
        std::printf(" %11.2f", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      }
      std::string steps;
      for (auto& st : models[0].back().steps()) steps += (steps.empty() ? "" : ", ") + st.label;
      std::printf(" | %s\n", steps.c_str());
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::cerr << "bench_conv: building or compiling an nnvm model failed: " << e.what() << "\n";
    return 1;
  }

#ifdef NNVM_CONV_WITH_DNNL
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
#endif
  const double tolerance = 1e-4;  // normwise; fp32 sums of up to 4608 products stay near 1e-6
  int failures = 0;
  for (int threads : opt.threads) {
#ifdef NNVM_CONV_WITH_DNNL
    omp_set_num_threads(threads);
#endif
    std::vector<std::string> names;
    for (auto& b : opt.backends) names.push_back(column_name(b));
#ifdef NNVM_CONV_WITH_DNNL
    names.push_back("oneDNN");
    const bool have_dnnl = true;
#else
    const bool have_dnnl = false;
#endif
    const size_t nb = opt.backends.size();
    std::printf("\nthreads %d\n%-20s %7s %4s |", threads, "shape", "MFLOP", "reps");
    for (auto& nm : names) std::printf(" %9s", nm.c_str());
    std::printf(" |");
    if (have_dnnl)
      for (size_t b = 0; b < nb; ++b) std::printf(" %9s", (opt.backends[b] == "llvm" ? "LLVM/DNNL" : "C/DNNL"));
    std::printf(" | %8s | %s\n%-20s %7s %4s |", "max err", have_dnnl ? "oneDNN impl" : "", "", "", "");
    for (size_t w = 0; w < names.size(); ++w) std::printf(" %9s", "GFLOP/s");
    std::printf(" |");
    if (have_dnnl)
      for (size_t b = 0; b < nb; ++b) std::printf(" %9s", "");
    std::printf(" | %8s |\n", "(rel)");

    // Per group, each column's GFLOP/s and each nnvm column's ratio to oneDNN, for the geometric means.
    std::string current_group;
    std::vector<std::vector<double>> group_g(names.size()), group_ratio(nb);
    auto close_group = [&] {
      if (current_group.empty()) return;
      std::printf("%-20s %7s %4s |", ("geomean " + current_group).c_str(), "", "");
      for (auto& v : group_g) std::printf(" %9.1f", bench::geomean(v));
      std::printf(" |");
      for (auto& v : group_ratio) std::printf(" %9.2f", bench::geomean(v));
      std::printf(" |\n");
      for (auto& v : group_g) v.clear();
      for (auto& v : group_ratio) v.clear();
    };

    for (size_t i = 0; i < n; ++i) {
      const ConvShape& s = opt.shapes[i];
      if (s.group != current_group) {
        close_group();
        current_group = s.group;
      }
      std::vector<Contender> who;
      // Each back end's output list, made once and then written in place. (Not rebuilt per call:
      // a braced list of one NDArray copies it, which cost a fresh 1.6 MB array per call.)
      std::vector<std::vector<nnvm::NDArray>> outs(nb);
      for (size_t b = 0; b < nb; ++b) {
        outs[b] = models[b][i].run(inputs[i], threads);
        who.push_back({names[b], [&, b, i](int t) { models[b][i].run_into(inputs[i], outs[b], t); },
                       [&, b, i] {
                         auto v = outs[b][0].values<float>();
                         if (!opt.blocked) return std::vector<float>(v.begin(), v.end());
                         return from_blocked(v, s.c_out, s.out() * s.out(), blocks_of(s, opt.vector_bits).out);
                       }});
      }
      std::string impl;
#ifdef NNVM_CONV_WITH_DNNL
      // Copies: oneDNN's user memories point at them while it reorders.
      std::vector<float> x = xs[i], w = ws[i], bias = bs[i];
      std::optional<DnnlConv> dconv;
      try {
        dconv.emplace(s, x, w, bias, eng, strm);
        impl = dconv->impl;
        who.push_back({"oneDNN", [&](int) { dconv->run(strm); }, [&] { return dconv->result(strm); }});
      } catch (const dnnl::error& e) {
        std::printf("%-20s oneDNN failed: %s\n", s.label().c_str(), e.what());
        ++failures;
        continue;
      }
#endif
      const size_t k = who.size();
      std::vector<std::vector<double>> ms(k);
      try {
        // Warm-up (page faults, thread start-up, caches), then the loop length of each contender.
        for (auto& c : who) {
          c.run(threads);
          auto t0 = std::chrono::steady_clock::now();
          c.run(threads);
          double one = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
          c.inner = int(std::clamp(std::ceil(opt.sample_ms / std::max(one, 1e-3)), 1.0, 1000.0));
        }
        for (int r = 0; r < opt.reps; ++r)
          for (size_t p = 0; p < k; ++p) {
            size_t c = (p + size_t(r)) % k;
            auto t0 = std::chrono::steady_clock::now();
            for (int j = 0; j < who[c].inner; ++j) who[c].run(threads);
            ms[c].push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                            who[c].inner);
          }
      } catch (const std::exception& e) {
        std::printf("%-20s running failed: %s\n", s.label().c_str(), e.what());
        ++failures;
        continue;
      }
      std::vector<double> g(k);
      double worst = 0;
      std::string bad;
      for (size_t c = 0; c < k; ++c) {
        g[c] = s.gflop() / (bench::median(ms[c]) * 1e-3);
        group_g[c].push_back(g[c]);
        double err = max_rel_error(who[c].result(), refs[i]);
        if (!(err <= tolerance)) bad += " " + who[c].name;
        worst = std::isnan(err) || std::isnan(worst) ? NAN : std::max(worst, err);
      }
      failures += !bad.empty();
      std::printf("%-20s %7.2f %4d |", s.label().c_str(), s.gflop() * 1e3, opt.reps);
      for (double x : g) std::printf(" %9.1f", x);
      std::printf(" |");
      if (have_dnnl)
        for (size_t b = 0; b < nb; ++b) {
          std::printf(" %9.2f", g[b] / g[k - 1]);
          group_ratio[b].push_back(g[b] / g[k - 1]);
        }
      std::printf(" | %8.1e | %s%s%s\n", worst, impl.c_str(), bad.empty() ? "" : " ! wrong:", bad.c_str());
      if (opt.profile) {
        for (size_t b = 0; b < nb; ++b) {
          nnvm::graph::Profile prof;
          models[b][i].run(inputs[i], threads, &prof);
          std::printf("  %s kernels:", names[b].c_str());
          for (auto& e : prof.entries) std::printf(" %s %.0f us;", e.op.c_str(), e.duration_us);
          std::printf("\n");
        }
      }
      std::fflush(stdout);
    }
    close_group();
  }
  std::printf("\nLLVM/DNNL, C/DNNL = GFLOP/s of that nnvm column / oneDNN's; geomean rows: geometric means over "
              "the group's shapes;\nmax err = max over columns of max |y - y_loops| / max |y_loops|, limit %.0e\n",
              tolerance);
  std::printf("load average at the end: %s\n", bench::load_average().c_str());
  if (failures) {
    std::printf("FAILED: %d row(s) with a wrong result or an error (marked !)\n", failures);
    return 1;
  }
  std::printf("all result checks passed\n");
  return 0;
}
