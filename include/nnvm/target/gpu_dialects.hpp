// The GPU dialects of the shared C-family emitter, as data (dialect.hpp): CUDA C++, OpenCL C 1.2
// and the Metal Shading Language. What is not spelling (where shared memory is declared, the
// signature's launch attributes, the prelude each source starts with) is gpu_emitter.hpp's.
//
// Vectors: OpenCL and Metal have N-lane types with arithmetic (float4, vec<float, 4>); CUDA's
// float4 has no operators, so CUDA sources declare nnvm_vec<T, N> in their prelude. Lanes are
// read and written through a pointer to the first element where the language does not allow
// subscripting a vector (OpenCL C 1.2).
#pragma once

#include "nnvm/target/dialect.hpp"
#include "nnvm/target/reserved_names.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {
// Identifiers every GPU source must avoid besides C's: the emitter's own prelude names and the
// languages' keywords and built-ins a kernel or buffer could be named after.
inline const std::unordered_set<std::string>& reserved_gpu_names() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> s = reserved_c_names();
    for (const char* w :
         {"nnvm_vec", "nnvm_vload", "nnvm_vstore", "nnvm_block", "nnvm_thread", "kernel", "global", "local",
          "constant", "private", "device", "threadgroup", "thread", "uchar", "ushort", "uint", "ulong", "half",
          "vec", "metal", "barrier", "template", "class", "namespace", "using", "this", "new", "delete",
          "operator", "typename", "bool", "true", "false", "blockIdx", "threadIdx", "blockDim", "gridDim",
          "warpSize", "get_group_id", "get_local_id", "get_global_id", "vload4", "vstore4", "mem_flags",
          // C++ (CUDA and Metal): keywords C lacks and the alternative tokens (a buffer named
          // after the op `and` or `not`).
          "and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor", "xor_eq", "alignas",
          "alignof", "asm", "catch", "constexpr", "const_cast", "decltype", "dynamic_cast", "explicit", "export",
          "friend", "mutable", "noexcept", "nullptr", "protected", "public", "reinterpret_cast", "static_assert",
          "static_cast", "thread_local", "throw", "try", "typeid", "virtual", "concept", "requires"})
      s.insert(w);
    return s;
  }();
  return names;
}

// Spellings CUDA, OpenCL and Metal share (C's literals and operators, f-suffixed float32).
inline Dialect gpu_dialect_base() {
  Dialect d;
  d.nan = "NAN";
  d.infinity = "INFINITY";
  d.reserved_names = &reserved_gpu_names();
  // A private array lives in registers or, spilled, in slow local memory: keep it small.
  d.max_private_bytes = 16 * 1024;
  return d;
}
// OpenCL C and Metal spell scalars alike (char is signed, long has 64 bits) and write 64-bit
// literals with an L.
inline Dialect opencl_metal_base() {
  Dialect d = gpu_dialect_base();
  d.types = {"uchar", "char", "short", "int", "long", "uchar", "ushort", "uint", "ulong", "ushort", "ushort",
             "float", "double", "void*"};
  d.int_type = "int";
  d.int64_literal = "${value}L";
  d.uint64_literal = "${value}UL";
  return d;
}
}  // namespace detail

// CUDA C++ for nvcc and NVRTC; no headers needed (the prelude declares the vector type).
inline const Dialect& cuda_dialect() {
  static const Dialect d = [] {
    Dialect c = detail::gpu_dialect_base();
    c.types = {"unsigned char",      "signed char",    "short",          "int",    "long long",
               "unsigned char",      "unsigned short", "unsigned int",   "unsigned long long",
               "unsigned short",     "unsigned short", "float",          "double", "void*"};
    c.int_type = "int";
    c.vector_type = "nnvm_vec<${scalar}, ${lanes}>";
    c.vector_zero = "{}";
    c.broadcast = "${type}{{${values}}}";
    c.lane = "${vector}.v[${lane}]";
    c.vector_load = "nnvm_vload<${lanes}>(&${buffer}[${base}])";
    c.vector_store = "nnvm_vstore(&${buffer}[${base}], ${value});";
    c.nan = "__int_as_float(0x7fc00000)";
    c.infinity = "__int_as_float(0x7f800000)";
    c.int64_literal = "${value}LL";
    c.uint64_literal = "${value}ULL";
    c.restrict_qualifier = "__restrict__ ";
    c.helper_qualifier = "static __device__ __forceinline__ ";
    c.thread_index = {{"blockIdx.x", "blockIdx.x"},   {"blockIdx.y", "blockIdx.y"},   {"blockIdx.z", "blockIdx.z"},
                      {"threadIdx.x", "threadIdx.x"}, {"threadIdx.y", "threadIdx.y"}, {"threadIdx.z", "threadIdx.z"}};
    c.barrier = "__syncthreads();";
    c.math_names = {{ir::CallOp::abs, "fabs"}, {ir::CallOp::round, "rint"}};
    c.float32_math_suffix = "f";
    c.bit_copy = "memcpy(&${dst}, &${src}, 4);";
    c.bit_cast = "__builtin_bit_cast(${to}, ${value})";  // nvcc and NVRTC have the builtin
    c.kernel_signature = "extern \"C\" __global__ void ${name}(${params})";
    c.buffer_param = "${const}${type}* ${restrict}${name}";
    return c;
  }();
  return d;
}

// OpenCL C 1.2: long is 64 bits; math functions are overloaded (no f suffix).
inline const Dialect& opencl_dialect() {
  static const Dialect d = [] {
    Dialect c = detail::opencl_metal_base();
    c.vector_type = "${scalar}${lanes}";
    c.vector_zero = "(${type})(0)";
    c.broadcast = "((${type})(${values}))";
    c.lane = "((__private ${scalar}*)&${vector})[${lane}]";
    c.vector_load = "vload${lanes}(0, &${buffer}[${base}])";
    c.vector_store = "vstore${lanes}(${value}, 0, &${buffer}[${base}]);";
    c.restrict_qualifier = "restrict ";
    c.helper_qualifier = "static inline ";
    c.global_space = "__global ";
    c.thread_index = {{"blockIdx.x", "get_group_id(0)"}, {"blockIdx.y", "get_group_id(1)"},
                      {"blockIdx.z", "get_group_id(2)"}, {"threadIdx.x", "get_local_id(0)"},
                      {"threadIdx.y", "get_local_id(1)"}, {"threadIdx.z", "get_local_id(2)"}};
    // Global too: a scan's block reads rows of its output that other threads wrote a step earlier.
    c.barrier = "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);";
    c.math_names = {{ir::CallOp::abs, "fabs"}, {ir::CallOp::round, "rint"}};
    c.bit_copy = "*(__private uint*)&${dst} = *(__private uint*)&${src};";
    c.bit_cast = "as_${to}(${value})";
    c.kernel_signature = "__kernel void ${name}(${params})";
    c.buffer_param = "${space}${const}${type}* ${restrict}${name}";
    return c;
  }();
  return d;
}

// Metal Shading Language 2.x (C++14 based). Metal has no 64-bit float; the GPU emitter refuses
// float64 for it. Buffer indices and the grid built-ins are in the signature gpu_emitter.hpp
// writes.
inline const Dialect& metal_dialect() {
  static const Dialect d = [] {
    Dialect c = detail::opencl_metal_base();
    c.vector_type = "vec<${scalar}, ${lanes}>";
    c.vector_zero = "${type}(0)";
    c.broadcast = "${type}(${values})";
    c.lane = "${vector}[${lane}]";
    c.vector_load = "nnvm_vload<${lanes}>(&${buffer}[${base}])";
    c.vector_store = "nnvm_vstore(&${buffer}[${base}], ${value});";
    c.helper_qualifier = "static inline ";
    c.global_space = "device ";
    c.thread_index = {{"blockIdx.x", "nnvm_block.x"},   {"blockIdx.y", "nnvm_block.y"},   {"blockIdx.z", "nnvm_block.z"},
                      {"threadIdx.x", "nnvm_thread.x"}, {"threadIdx.y", "nnvm_thread.y"}, {"threadIdx.z", "nnvm_thread.z"}};
    c.barrier = "threadgroup_barrier(mem_flags::mem_device | mem_flags::mem_threadgroup);";
    // Metal's library lacks erf, log1p and expm1: the prelude defines them (gpu_emitter.hpp).
    c.math_names = {{ir::CallOp::abs, "fabs"},        {ir::CallOp::round, "rint"},  {ir::CallOp::erf, "nnvm_erf"},
                    {ir::CallOp::log1p, "nnvm_log1p"}, {ir::CallOp::expm1, "nnvm_expm1"}};
    c.bit_copy = "${dst} = as_type<decltype(${dst})>(${src});";
    c.bit_cast = "as_type<${to}>(${value})";
    c.kernel_signature = "kernel void ${name}(${params})";
    c.buffer_param = "${space}${const}${type}* ${name}";
    return c;
  }();
  return d;
}

}  // namespace target
NNVM_END_NAMESPACE
