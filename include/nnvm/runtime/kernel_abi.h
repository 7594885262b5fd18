/* The binary interface between compiled nnvm kernels and whoever calls them (the C JIT, the
 * LLVM JIT, the deploy runtime, or a user's own C program). Plain C99.
 *
 * A kernel is
 *   int32_t name(void* const* args, const int64_t* sizes, void* workspace,
 *                uint64_t workspace_bytes, const nnvm_kernel_env* env);
 * args[i] is the data of tensor parameter i, sizes[j] the value of symbolic size j (see
 * docs/lowered_ir.md). workspace is caller-owned scratch memory, 64-byte aligned, of at least
 * name_workspace_bytes(sizes) bytes; it may be NULL when that is 0. env may be NULL: parallel
 * loops then run serially. The kernel returns 0 on success or one of the nnvm_status codes.
 *
 * The declarations live in one macro so that the C emitter can paste this very text into
 * generated sources (which must stand alone) without a second copy: see kernel_abi_source()
 * in nnvm/target/c_like.hpp. Comments inside the macro vanish when it is stringified. */
#ifndef NNVM_KERNEL_ABI_H
#define NNVM_KERNEL_ABI_H

#include <stdint.h>

#define NNVM_KERNEL_ABI_DECLS                                                               \
  /* Status codes a kernel (or a parallel body) returns. */                                \
  enum nnvm_status {                                                                        \
    NNVM_STATUS_OK = 0,                                                                     \
    NNVM_STATUS_WORKSPACE_TOO_SMALL = 1, /* workspace_bytes < name_workspace_bytes(sizes) */ \
    NNVM_STATUS_RUNTIME_FAILURE = 2,     /* the thread pool could not run a parallel loop */ \
    NNVM_STATUS_LOOP_EXIT = 3            /* a loop with scan outputs stopped before M */   \
  };                                                                                        \
  /* One chunk [begin, end) of a parallel loop's iterations; returns a status. */           \
  typedef int32_t (*nnvm_parallel_body)(int64_t begin, int64_t end, void* closure);        \
  /* Runs body over [0, n) in chunks, possibly concurrently; returns the first non-zero     \
     status of any chunk. */                                                                \
  typedef int32_t (*nnvm_parallel_for_fn)(void* pool, int64_t n, nnvm_parallel_body body,  \
                                          void* closure);                                  \
  /* What the caller lends a kernel. pool is opaque to the kernel. */                       \
  typedef struct nnvm_kernel_env {                                                          \
    void* pool;                                                                             \
    nnvm_parallel_for_fn parallel_for;                                                      \
  } nnvm_kernel_env;                                                                        \
  typedef int32_t (*nnvm_kernel_fn)(void* const* args, const int64_t* sizes, void* workspace, \
                                    uint64_t workspace_bytes, const nnvm_kernel_env* env); \
  typedef uint64_t (*nnvm_workspace_bytes_fn)(const int64_t* sizes);

NNVM_KERNEL_ABI_DECLS

#endif /* NNVM_KERNEL_ABI_H */
