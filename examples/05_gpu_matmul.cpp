// Lesson 5: the matmul of lesson 1, scheduled for a GPU.
//
// The algorithm is the same C(i, j) = sum over k of A(i, k) * B(k, j). A GPU runs a grid of
// blocks of threads; a schedule says which loops become the grid (blockIdx) and which the
// threads of a block (threadIdx) with `bind`, and what each thread computes. For every step the
// program prints the loop nest, the CUDA kernel and the OpenCL kernel nnvm writes for it, then
// runs the OpenCL kernel (here on PoCL, which runs OpenCL on the CPU: the times say little about
// a GPU) and checks it against a plain C++ loop.
//
//   ./05_gpu_matmul          n = 512
//   ./05_gpu_matmul --quick  n = 128 (what CI runs)
#include <nnvm/tensor.hpp>

#include <nnvm/target/opencl_module.hpp>
#include <nnvm/target/parse.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>

using namespace nnvm;

namespace {

struct GpuStep {
  std::string name, why;
  std::function<void(schedule::Schedule&, const te::Tensor& C)> apply;
};

template <int64_t n>
int run() {
  auto A = placeholder<float, n, n>("A");
  auto B = placeholder<float, n, n>("B");
  auto k = reduce_axis<n>("k");
  auto C = compute<Shape<n, n>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");

  const target::Target cuda = target::parse_target("cuda -arch=sm_90"), opencl = target::parse_target("opencl");
  // Steps 2 and 3: a block of 16 x 16 threads computes a 64 x 64 tile of C, each thread a 4 x 4
  // block of it in C.local (`CL`, from cache_write), which is computed at the thread's loop.
  auto thread_tiles = [](schedule::Schedule& s, const te::Tensor& out, const te::Tensor& CL) {
    auto c = s[out];
    auto [bi, bj, ii, jj] = c.tile(c.axis(0), c.axis(1), 64, 64);
    auto [ti, ri] = c.split(ii, 4);
    auto [tj, rj] = c.split(jj, 4);
    c.reorder({bi, bj, ti, tj, ri, rj});
    c.bind(bi, gpu::block_y);
    c.bind(bj, gpu::block_x);
    c.bind(ti, gpu::thread_y);
    c.bind(tj, gpu::thread_x);
    auto cl = s[CL];
    cl.compute_at(c, tj);
    return cl;
  };
  std::vector<GpuStep> steps = {
      {"one thread per element",
       "Fuse i and j into one loop over the n * n outputs and split it into blocks of 256: the\n"
       "outer loop becomes the grid (blockIdx.x), the inner one the threads of a block\n"
       "(threadIdx.x). Each thread computes one C(i, j) with the whole k loop. This is the GPU\n"
       "family's generic recipe, what every op without a GPU schedule of its own gets.",
       [](schedule::Schedule& s, const te::Tensor& out) {
         auto c = s[out];
         ir::IterVar fused = c.fuse({c.axis(0), c.axis(1)});
         auto [block, thread] = c.split(fused, 256);
         c.bind(block, gpu::block_x);
         c.bind(thread, gpu::thread_x);
       }},
      {"2-D blocks",
       "A block of 16 x 16 threads computes a 16 x 16 tile of C: a grid of (n/16) x (n/16)\n"
       "blocks. Threads next to each other in x read neighbouring B(k, j), which a GPU merges\n"
       "into one memory transaction (coalescing), and the 16 threads of a row share A(i, k).",
       [](schedule::Schedule& s, const te::Tensor& out) {
         auto c = s[out];
         auto [bi, bj, ti, tj] = c.tile(c.axis(0), c.axis(1), 16, 16);
         c.bind(bi, gpu::block_y);
         c.bind(bj, gpu::block_x);
         c.bind(ti, gpu::thread_y);
         c.bind(tj, gpu::thread_x);
       }},
      {"register tile",
       "Each thread computes a 4 x 4 block of C, so a block of 16 x 16 threads covers 64 x 64.\n"
       "cache_write(C, local) gives the thread 16 accumulators (registers) for its block, summed\n"
       "over all of k and stored once; per k the thread loads 4 A's and 4 B's for 16\n"
       "multiply-adds instead of 1 of each per multiply-add. The 4 x 4 loops are unrolled so the\n"
       "accumulators can live in registers.",
       [&](schedule::Schedule& s, const te::Tensor& out) {
         auto cl = thread_tiles(s, out, s.cache_write(out, ir::MemoryScope::local));
         cl.reorder({cl.reduce_axis(0), cl.axis(0), cl.axis(1)});
         cl.unroll(cl.axis(0));
         cl.unroll(cl.axis(1));
       }},
      {"shared-memory tiles",
       "The 256 threads of a block read the same 64 rows of A and 64 columns of B, each from\n"
       "global memory. cache_read(A, shared) makes a stage A.shared that holds, per block and\n"
       "per 16-wide step of k, the 64 x 16 slice of A the block needs; its loops are bound to\n"
       "the block's threads, so they load it together (4 elements each), and the same for B.\n"
       "The lowering relaxes the slices over the thread axes (every thread's part) and inserts\n"
       "barriers: after the loads (no thread reads a slice before it is complete) and at the end\n"
       "of each k step (no thread overwrites a slice another still reads). Global memory is now\n"
       "read 64 times less often.",
       [&](schedule::Schedule& s, const te::Tensor& out) {
         te::Tensor CL = s.cache_write(out, ir::MemoryScope::local);
         te::Tensor AS = s.cache_read(A, ir::MemoryScope::shared, {CL});
         te::Tensor BS = s.cache_read(B, ir::MemoryScope::shared, {CL});
         auto cl = thread_tiles(s, out, CL);
         auto [ko, ki] = cl.split(cl.reduce_axis(0), 16);
         cl.reorder({ko, ki, cl.axis(0), cl.axis(1)});
         cl.unroll(cl.axis(0));
         cl.unroll(cl.axis(1));
         // A.shared: 64 rows x 16 k per step; 16 x 16 threads, 4 rows each.
         auto as = s[AS];
         as.compute_at(cl, ko);
         auto [ao, ai] = as.split(as.axis(0), 16);
         as.reorder({ao, ai, as.axis(1)});
         as.bind(ai, gpu::thread_y);
         as.bind(as.axis(1), gpu::thread_x);
         // B.shared: 16 k x 64 columns per step; 16 x 16 threads, 4 columns each.
         auto bs = s[BS];
         bs.compute_at(cl, ko);
         auto [bo, bi2] = bs.split(bs.axis(1), 16);
         bs.reorder({bo, bs.axis(0), bi2});
         bs.bind(bs.axis(0), gpu::thread_y);
         bs.bind(bi2, gpu::thread_x);
       }},
  };

  // The inputs and the reference: a plain loop in double.
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  NDArray a(dtype::float32, {n, n}), b(dtype::float32, {n, n}), c(dtype::float32, {n, n});
  for (float& v : a.values<float>()) v = dist(rng);
  for (float& v : b.values<float>()) v = dist(rng);
  std::vector<double> want(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t kk = 0; kk < n; ++kk)
      for (int64_t j = 0; j < n; ++j) want[size_t(i * n + j)] += double(a.values<float>()[size_t(i * n + kk)]) * b.values<float>()[size_t(kk * n + j)];

  // Every step's kernel, lowered for the GPU family; all of them one OpenCL program.
  std::vector<ir::LoweredFunc> fns;
  std::vector<std::string> nests;
  for (size_t s = 0; s < steps.size(); ++s) {
    schedule::Schedule sch = schedule::create_schedule(C);
    steps[s].apply(sch, C);
    lower::LowerOptions options;
    options.family = target::Family::gpu;
    std::string nest;
    options.on_pass = [&](const std::string& pass, const ir::Stmt& ir) {
      if (pass == "simplify") nest = ir::to_string(ir);
    };
    fns.push_back(lower::lower(sch, {A, B, C}, "matmul_step" + std::to_string(s), options));
    nests.push_back(nest);
  }
  target::OpenCLModule module(target::emit_gpu(fns, opencl), runtime::opencl::Device::open());
  std::cout << "OpenCL device: " << module.device().name() << "\n";

  int wrong = 0;
  const double gflop = 2.0 * double(n) * n * n * 1e-9;
  for (size_t s = 0; s < steps.size(); ++s) {
    std::cout << "\n== step " << s << ": " << steps[s].name << "\n" << steps[s].why << "\n\nloop nest:\n"
              << nests[s] << "\nCUDA:\n"
              << target::emit_gpu({fns[s]}, cuda).source << "\nOpenCL:\n"
              << target::emit_gpu({fns[s]}, opencl).source;
    std::fill(c.values<float>().begin(), c.values<float>().end(), NAN);
    std::vector<BufferView> views = {a.view(), b.view(), c.view()};
    module(s, views);  // the first call builds the kernel for its work-group size
    auto t0 = std::chrono::steady_clock::now();
    module(s, views);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double max_err = 0;
    bool ok = true;
    for (size_t e = 0; e < want.size(); ++e) {
      double err = std::abs(double(c.values<float>()[e]) - want[e]);
      if (!(err <= 1e-3 + 1e-4 * std::abs(want[e]))) ok = false;
      max_err = std::max(max_err, std::isnan(err) ? INFINITY : err);
    }
    wrong += !ok;
    std::printf("OpenCL run: %.3f ms (%.2f GFLOP/s, copies included), max |error| %.2g %s\n", ms, gflop / (ms * 1e-3),
                max_err, ok ? "(ok)" : "(WRONG)");
  }
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  try {
    int wrong = quick ? run<128>() : run<512>();
    if (wrong) std::cerr << wrong << " step(s) computed a wrong result\n";
    return wrong ? 1 : 0;
  } catch (const Error& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
