// A GPU program emitted for OpenCL (gpu_emitter.hpp) built on an OpenCL device, and its
// functions run on host arrays: each call copies the arguments to the device, launches the
// function's kernels in order (intermediate stages in device buffers allocated once), and copies
// back what the function writes.
//
// All kernels are one program, compiled once: PoCL takes seconds per program. The compiled
// program is cached on disk under <cache>/opencl/<hash>.bin, keyed by the source and the device
// and driver; the cache directory gets the C JIT's checks (kernel_cache.hpp), since a PoCL
// binary is native code this process will run.
#pragma once

#include <chrono>
#include <fstream>
#include <iterator>
#include <span>

#include "nnvm/ndarray.hpp"
#include "nnvm/runtime/opencl.hpp"
#include "nnvm/target/arguments.hpp"
#include "nnvm/target/c_jit.hpp"
#include "nnvm/target/gpu_emitter.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

struct OpenCLModuleOptions {
  std::string cache_dir;  // empty: detail::default_cache_dir()
  bool use_cache = true;
};

class OpenCLModule {
 public:
  OpenCLModule(GpuProgram program, const runtime::opencl::Device& device, const OpenCLModuleOptions& options = {})
      : program_(std::move(program)), device_(device) {
    if (program_.emitter != Emitter::opencl)
      throw UserError("nnvm.opencl.program", str_cat("a ", emitter_name(program_.emitter), " program cannot run on OpenCL"));
    check_limits();
    auto start = std::chrono::steady_clock::now();
    build(options);
    build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (size_t f = 0; f < program_.modules.size(); ++f) {
      const DeviceModule& m = program_.modules[f];
      auto& ks = kernels_.emplace_back();
      for (size_t k = 0; k < m.kernels.size(); ++k) ks.push_back(device_.kernel(cl_program_, program_.symbols[f][k]));
      auto& temps = temps_.emplace_back();
      for (auto& t : m.temps) temps.push_back(device_.allocate(size_t(constant_numel(t, m.name)) * t->dtype.bytes()));
    }
  }

  const GpuProgram& program() const { return program_; }
  size_t size() const { return program_.modules.size(); }
  double build_seconds = 0;  // compiling, or loading from the cache
  bool from_cache = false;

  const runtime::opencl::Device& device() const { return device_; }

  // Launches function `f`'s kernels in order on device buffers, one per parameter in the
  // function's order (the caller checked their sizes); intermediates are the module's own.
  void launch(size_t f, const std::vector<const runtime::opencl::Buffer*>& params) const {
    const DeviceModule& m = program_.modules.at(f);
    if (!m.size_vars.empty())
      throw UserError("nnvm.opencl.program", "GPU functions take static shapes", {"function " + m.name});
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      const DeviceKernel& kernel = m.kernels[k];
      const auto& handle = kernels_[f][k];
      cl_uint index = 0;
      for (size_t b : kernel.args)
        device_.set_arg(handle, index++, (b < params.size() ? *params[b] : temps_[f][b - params.size()]).mem.get());
      const LaunchDims& l = kernel.launch;
      device_.launch(handle, {size_t(l.grid[0]), size_t(l.grid[1]), size_t(l.grid[2])},
                     {size_t(l.block[0]), size_t(l.block[1]), size_t(l.block[2])},
                     "kernel " + program_.symbols[f][k]);
    }
  }

  // Runs function `f` on host buffers in its parameter order (checked as for CPU kernels):
  // copies them to the device, launches, and copies back the ones its kernels write.
  void operator()(size_t f, std::span<const BufferView> args) const {
    const DeviceModule& m = program_.modules.at(f);
    ir::LoweredFunc signature;
    signature.name = m.name;
    signature.params = m.params;
    bind_arguments(signature, args);
    std::vector<runtime::opencl::Buffer> buffers;
    std::vector<const runtime::opencl::Buffer*> params;
    for (auto& a : args) {
      buffers.push_back(device_.allocate(a.nbytes()));
      device_.write(buffers.back(), a.data);
    }
    for (auto& b : buffers) params.push_back(&b);
    launch(f, params);
    for (size_t p = 0; p < buffers.size(); ++p)
      if (writes(m, p)) device_.read(buffers[p], args[p].data);
    device_.finish();
  }

  // Whether some kernel of module `m` stores into its parameter `p`.
  static bool writes(const DeviceModule& m, size_t p) {
    for (auto& k : m.kernels)
      for (size_t i = 0; i < k.args.size(); ++i)
        if (k.args[i] == p && k.func.writes(i)) return true;
    return false;
  }

 private:
  // The program was scheduled for the target's portable limits; this device may allow less.
  void check_limits() const {
    const size_t threads = device_.max_work_group_size();
    const uint64_t shared = device_.local_memory_bytes();
    for (size_t f = 0; f < program_.modules.size(); ++f)
      for (size_t k = 0; k < program_.modules[f].kernels.size(); ++k) {
        const DeviceKernel& kernel = program_.modules[f].kernels[k];
        std::vector<std::string> where = {"kernel " + program_.symbols[f][k], kernel.func.origin};
        if (uint64_t(kernel.launch.threads_per_block()) > threads)
          throw UserError("nnvm.opencl.limit",
                          str_cat("work-groups of ", kernel.launch.threads_per_block(), " work-items; ", device_.name(),
                                  " allows ", threads, " (schedule for a target with a lower max_threads_per_block)"),
                          where);
        if (uint64_t(kernel.shared_bytes) > shared)
          throw UserError("nnvm.opencl.limit",
                          str_cat(kernel.shared_bytes, " bytes of local memory; ", device_.name(), " has ", shared),
                          where);
      }
  }

  static int64_t constant_numel(const ir::Buffer& b, const std::string& fn) {
    int64_t n = 1;
    for (auto& d : b->shape) {
      const int64_t* c = ir::as_const_int(d);
      if (!c)
        throw UserError("nnvm.opencl.program", str_cat("intermediate ", b->name, " has a symbolic size"),
                        {"function " + fn});
      n *= *c;
    }
    return n;
  }

  void build(const OpenCLModuleOptions& options) {
    std::string path;
    if (options.use_cache) {
      std::string dir = (options.cache_dir.empty() ? detail::default_cache_dir() : options.cache_dir) + "/opencl";
      detail::ensure_private_cache_dir(dir);
      char key[17];
      std::snprintf(key, sizeof key, "%016llx",
                    static_cast<unsigned long long>(detail::fnv1a64(program_.source + "\n" + device_.identity())));
      path = dir + "/" + key + ".bin";
      if (detail::check_cached_library(path)) {
        std::ifstream in(path, std::ios::binary);
        std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if ((cl_program_ = device_.build_binary(bytes))) {
          from_cache = true;
          return;
        }
      }
    }
    cl_program_ = device_.build_source(program_.source);
    if (!path.empty()) {
      std::vector<unsigned char> bytes = device_.binary(cl_program_);
      detail::write_atomically(path, std::string(bytes.begin(), bytes.end()));
    }
  }

  GpuProgram program_;
  runtime::opencl::Device device_;
  runtime::opencl::Handle<cl_program> cl_program_;
  std::vector<std::vector<runtime::opencl::Handle<cl_kernel>>> kernels_;  // per function, per kernel
  std::vector<std::vector<runtime::opencl::Buffer>> temps_;               // per function, per temp
};

}  // namespace target
NNVM_END_NAMESPACE
