// OpenCL devices for nnvm's GPU kernels, through the ICD loader (ocl-icd's libOpenCL.so.1)
// opened at run time: a program that links nnvm starts on a machine without OpenCL and says so
// when a device is asked for ("nnvm.opencl.unavailable"). Programs, buffers and launches on
// one in-order queue; errors name the call and OpenCL's error code.
//
// Which device: $NNVM_OPENCL_DEVICE ("P" or "P:D", platform and device indices as clinfo -l
// lists them), else the first GPU of any platform, else the first device of any type (PoCL's
// CPU device on a machine without a GPU).
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "nnvm/error.hpp"

NNVM_BEGIN_NAMESPACE
namespace runtime {
namespace opencl {

// The entry points nnvm calls, looked up in the ICD loader once per process.
struct Api {
#define NNVM_CL_FUNCTIONS(X)                                                                                \
  X(clGetPlatformIDs) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) X(clReleaseContext)            \
  X(clCreateCommandQueue) X(clReleaseCommandQueue) X(clCreateProgramWithSource)                             \
  X(clCreateProgramWithBinary) X(clBuildProgram) X(clGetProgramBuildInfo) X(clGetProgramInfo)               \
  X(clReleaseProgram) X(clCreateKernel) X(clReleaseKernel) X(clSetKernelArg) X(clCreateBuffer)               \
  X(clReleaseMemObject) X(clEnqueueWriteBuffer) X(clEnqueueReadBuffer) X(clEnqueueNDRangeKernel) X(clFinish)
#define NNVM_CL_MEMBER(f) decltype(&::f) f = nullptr;
  NNVM_CL_FUNCTIONS(NNVM_CL_MEMBER)
#undef NNVM_CL_MEMBER

  // The loaded API, or an error "nnvm.opencl.unavailable" saying what is missing.
  static const Api& get() {
    static const std::pair<Api, std::string> loaded = load();
    if (!loaded.second.empty()) throw BackendError("nnvm.opencl.unavailable", loaded.second);
    return loaded.first;
  }

 private:
  static std::pair<Api, std::string> load() {
    Api api;
    void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
      return {api, "no OpenCL loader (libOpenCL.so.1) on this machine; install ocl-icd-libopencl1 and a driver "
                   "(pocl-opencl-icd runs OpenCL on the CPU)"};
#define NNVM_CL_LOAD(f)                                                    \
  api.f = reinterpret_cast<decltype(&::f)>(dlsym(lib, #f));              \
  if (!api.f) return {api, "the OpenCL loader lacks " #f};
    NNVM_CL_FUNCTIONS(NNVM_CL_LOAD)
#undef NNVM_CL_LOAD
    return {api, ""};
  }
};

inline void check(cl_int status, const char* call, const std::string& what = {}) {
  if (status != CL_SUCCESS)
    throw BackendError("nnvm.opencl.call", str_cat(call, " failed with OpenCL error ", status, what.empty() ? "" : ": ", what));
}

// An OpenCL object released through the API when the last owner goes.
template <class T>
using Handle = std::shared_ptr<std::remove_pointer_t<T>>;

struct Buffer {
  Handle<cl_mem> mem;
  size_t bytes = 0;
};

// One device, its context and an in-order queue.
class Device {
 public:
  static Device open() {
    const Api& cl = Api::get();
    cl_uint np = 0;
    if (cl.clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0)
      throw BackendError("nnvm.opencl.no_platform",
                         "no OpenCL platform is installed (the ICD loader found no driver; pocl-opencl-icd runs "
                         "OpenCL on the CPU)");
    std::vector<cl_platform_id> platforms(np);
    check(cl.clGetPlatformIDs(np, platforms.data(), nullptr), "clGetPlatformIDs");
    auto devices_of = [&](cl_platform_id p, cl_device_type type) {
      cl_uint nd = 0;
      if (cl.clGetDeviceIDs(p, type, 0, nullptr, &nd) != CL_SUCCESS) return std::vector<cl_device_id>{};
      std::vector<cl_device_id> d(nd);
      check(cl.clGetDeviceIDs(p, type, nd, d.data(), nullptr), "clGetDeviceIDs");
      return d;
    };
    cl_device_id chosen = nullptr;
    if (const char* want = std::getenv("NNVM_OPENCL_DEVICE"); want && *want) {
      char* end = nullptr;
      long p = std::strtol(want, &end, 10), d = *end == ':' ? std::strtol(end + 1, &end, 10) : 0;
      std::vector<cl_device_id> ds = p >= 0 && p < long(np) ? devices_of(platforms[size_t(p)], CL_DEVICE_TYPE_ALL)
                                                            : std::vector<cl_device_id>{};
      if (*end != '\0' || d < 0 || d >= long(ds.size()))
        throw UserError("nnvm.opencl.device",
                        str_cat("NNVM_OPENCL_DEVICE='", printable(want), "' names no device; ", np,
                                " platform(s) here (see clinfo -l)"));
      chosen = ds[size_t(d)];
    }
    for (cl_device_type type : {cl_device_type(CL_DEVICE_TYPE_GPU), cl_device_type(CL_DEVICE_TYPE_ALL)})
      for (size_t p = 0; p < platforms.size() && !chosen; ++p)
        if (auto ds = devices_of(platforms[p], type); !ds.empty()) chosen = ds[0];
    if (!chosen) throw BackendError("nnvm.opencl.no_device", "the OpenCL platforms here have no device");
    return Device(chosen);
  }

  std::string name() const { return info_string(CL_DEVICE_NAME); }
  size_t max_work_group_size() const { return info<size_t>(CL_DEVICE_MAX_WORK_GROUP_SIZE); }
  uint64_t local_memory_bytes() const { return info<cl_ulong>(CL_DEVICE_LOCAL_MEM_SIZE); }
  // Names the device and its driver: part of a program cache key.
  std::string identity() const {
    return str_cat(info_string(CL_DEVICE_VENDOR), " ", name(), " ", info_string(CL_DRIVER_VERSION));
  }

  // Compiles `source`; the error "nnvm.opencl.build" carries the compiler's log.
  Handle<cl_program> build_source(const std::string& source) const {
    const char* text = source.c_str();
    size_t length = source.size();
    cl_int status = CL_SUCCESS;
    cl_program p = cl_->clCreateProgramWithSource(context_.get(), 1, &text, &length, &status);
    check(status, "clCreateProgramWithSource");
    return finish_build(p);
  }
  // A program from the bytes binary() gave for this device; null when the driver refuses them
  // (a changed driver), so the caller compiles the source instead.
  Handle<cl_program> build_binary(const std::vector<unsigned char>& bytes) const {
    const unsigned char* data = bytes.data();
    size_t length = bytes.size();
    cl_int status = CL_SUCCESS, binary_status = CL_SUCCESS;
    cl_program p = cl_->clCreateProgramWithBinary(context_.get(), 1, &device_, &length, &data, &binary_status, &status);
    if (status != CL_SUCCESS || binary_status != CL_SUCCESS) {
      if (p) cl_->clReleaseProgram(p);
      return nullptr;
    }
    try {
      return finish_build(p);
    } catch (const BackendError&) {
      return nullptr;
    }
  }
  std::vector<unsigned char> binary(const Handle<cl_program>& p) const {
    size_t size = 0;
    check(cl_->clGetProgramInfo(p.get(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr), "clGetProgramInfo");
    std::vector<unsigned char> bytes(size);
    unsigned char* data = bytes.data();
    check(cl_->clGetProgramInfo(p.get(), CL_PROGRAM_BINARIES, sizeof data, &data, nullptr), "clGetProgramInfo");
    return bytes;
  }
  Handle<cl_kernel> kernel(const Handle<cl_program>& p, const std::string& name) const {
    cl_int status = CL_SUCCESS;
    cl_kernel k = cl_->clCreateKernel(p.get(), name.c_str(), &status);
    check(status, "clCreateKernel", "kernel " + name);
    const Api* cl = cl_;
    return Handle<cl_kernel>(k, [cl](cl_kernel x) { cl->clReleaseKernel(x); });
  }

  Buffer allocate(size_t bytes) const {
    cl_int status = CL_SUCCESS;
    // OpenCL refuses empty buffers; an empty tensor gets one byte nobody reads.
    cl_mem m = cl_->clCreateBuffer(context_.get(), CL_MEM_READ_WRITE, std::max<size_t>(bytes, 1), nullptr, &status);
    check(status, "clCreateBuffer", str_cat(bytes, " bytes"));
    const Api* cl = cl_;
    return {Handle<cl_mem>(m, [cl](cl_mem x) { cl->clReleaseMemObject(x); }), bytes};
  }
  void write(const Buffer& b, const void* data) const {
    if (b.bytes)
      check(cl_->clEnqueueWriteBuffer(queue_.get(), b.mem.get(), CL_TRUE, 0, b.bytes, data, 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
  }
  void read(const Buffer& b, void* data) const {
    if (b.bytes)
      check(cl_->clEnqueueReadBuffer(queue_.get(), b.mem.get(), CL_TRUE, 0, b.bytes, data, 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
  }

  // Sets argument `index` of `k` to the bytes of `value` (a cl_mem or a scalar).
  template <class T>
  void set_arg(const Handle<cl_kernel>& k, cl_uint index, const T& value) const {
    check(cl_->clSetKernelArg(k.get(), index, sizeof(T), &value), "clSetKernelArg");
  }
  // Enqueues `grid` blocks of `block` work-items (CUDA's terms; OpenCL's global size is their
  // product per axis).
  void launch(const Handle<cl_kernel>& k, const std::array<size_t, 3>& grid, const std::array<size_t, 3>& block,
              const std::string& what) const {
    size_t global[3] = {grid[0] * block[0], grid[1] * block[1], grid[2] * block[2]};
    size_t local[3] = {block[0], block[1], block[2]};
    check(cl_->clEnqueueNDRangeKernel(queue_.get(), k.get(), 3, nullptr, global, local, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel", what);
  }
  void finish() const { check(cl_->clFinish(queue_.get()), "clFinish"); }

 private:
  explicit Device(cl_device_id d) : cl_(&Api::get()), device_(d) {
    cl_int status = CL_SUCCESS;
    const Api* cl = cl_;
    context_ = Handle<cl_context>(cl->clCreateContext(nullptr, 1, &d, nullptr, nullptr, &status),
                                  [cl](cl_context c) { cl->clReleaseContext(c); });
    check(status, "clCreateContext");
    queue_ = Handle<cl_command_queue>(cl->clCreateCommandQueue(context_.get(), d, 0, &status),
                                      [cl](cl_command_queue q) { cl->clReleaseCommandQueue(q); });
    check(status, "clCreateCommandQueue");
  }

  Handle<cl_program> finish_build(cl_program p) const {
    const Api* cl = cl_;
    Handle<cl_program> owned(p, [cl](cl_program x) { cl->clReleaseProgram(x); });
    if (cl_->clBuildProgram(p, 1, &device_, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
      size_t size = 0;
      cl_->clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      cl_->clGetProgramBuildInfo(p, device_, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      throw BackendError("nnvm.opencl.build", str_cat("the OpenCL compiler of ", name(), " refused the program:\n", log));
    }
    return owned;
  }
  template <class T>
  T info(cl_device_info what) const {
    T v{};
    check(cl_->clGetDeviceInfo(device_, what, sizeof v, &v, nullptr), "clGetDeviceInfo");
    return v;
  }
  std::string info_string(cl_device_info what) const {
    size_t size = 0;
    check(cl_->clGetDeviceInfo(device_, what, 0, nullptr, &size), "clGetDeviceInfo");
    std::string s(size, '\0');
    check(cl_->clGetDeviceInfo(device_, what, size, s.data(), nullptr), "clGetDeviceInfo");
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
  }

  const Api* cl_;
  cl_device_id device_;
  Handle<cl_context> context_;
  Handle<cl_command_queue> queue_;
};

}  // namespace opencl
}  // namespace runtime
NNVM_END_NAMESPACE
