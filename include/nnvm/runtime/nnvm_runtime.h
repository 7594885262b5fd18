/* The deploy runtime's C API: loads a model directory written by nnvm::graph::save_artifact
 * (kernels.so, model.json, weights.bin) and runs it. Library nnvm_runtime; it needs libc,
 * libdl and pthreads, never the compiler. Plain C99.
 *
 * A loaded model is immutable: any number of threads may run it at once (each run allocates
 * its own activations). Every function that can fail returns a status; on failure
 * nnvm_last_error() holds a message for the calling thread naming the file, the field and what
 * was expected. */
#ifndef NNVM_RUNTIME_H
#define NNVM_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define NNVM_RUNTIME_API
#else
#define NNVM_RUNTIME_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nnvm_runtime_status {
  NNVM_OK = 0,
  NNVM_ERROR_IO = 1,        /* a file is missing or unreadable, or kernels.so does not load */
  NNVM_ERROR_FORMAT = 2,    /* model.json is malformed or inconsistent, weights.bin too short */
  NNVM_ERROR_KERNEL = 3,    /* a kernel symbol is missing, or a kernel returned a failure */
  NNVM_ERROR_INPUT = 4,     /* run: wrong tensor count, dtype, shape, or a null buffer */
  NNVM_ERROR_ARGUMENT = 5,  /* a null handle or an index out of range */
  NNVM_ERROR_MEMORY = 6     /* out of memory */
} nnvm_status_t;

/* Element types, numbered as ONNX's TensorProto data types. */
typedef enum nnvm_dtype {
  NNVM_DTYPE_FLOAT32 = 1,
  NNVM_DTYPE_UINT8 = 2,
  NNVM_DTYPE_INT8 = 3,
  NNVM_DTYPE_UINT16 = 4,
  NNVM_DTYPE_INT16 = 5,
  NNVM_DTYPE_INT32 = 6,
  NNVM_DTYPE_INT64 = 7,
  NNVM_DTYPE_BOOL = 9, /* one byte, 0 or 1 */
  NNVM_DTYPE_FLOAT16 = 10,
  NNVM_DTYPE_FLOAT64 = 11,
  NNVM_DTYPE_UINT32 = 12,
  NNVM_DTYPE_UINT64 = 13,
  NNVM_DTYPE_BFLOAT16 = 16,
  /* The float8/float4 types are their bits, one byte per element; the 4- and 2-bit integers one
   * element per byte (not packed as in ONNX files), sign-extended for INT4/INT2. */
  NNVM_DTYPE_FLOAT8E4M3FN = 17,
  NNVM_DTYPE_FLOAT8E4M3FNUZ = 18,
  NNVM_DTYPE_FLOAT8E5M2 = 19,
  NNVM_DTYPE_FLOAT8E5M2FNUZ = 20,
  NNVM_DTYPE_UINT4 = 21,
  NNVM_DTYPE_INT4 = 22,
  NNVM_DTYPE_FLOAT4E2M1 = 23,
  NNVM_DTYPE_FLOAT8E8M0 = 24,
  NNVM_DTYPE_UINT2 = 25,
  NNVM_DTYPE_INT2 = 26
} nnvm_dtype;

typedef struct nnvm_model nnvm_model;

/* A model input or output as the model declares it. The pointers stay valid until the model
 * is freed. Data is compact and row-major. */
typedef struct nnvm_tensor_info {
  const char* name;
  int32_t dtype; /* an nnvm_dtype */
  int32_t rank;
  const int64_t* shape;
  uint64_t bytes;
} nnvm_tensor_info;

/* A caller's buffer for nnvm_model_run: its dtype and shape are checked against the model. */
typedef struct nnvm_tensor {
  void* data;
  int32_t dtype;
  int32_t rank;
  const int64_t* shape;
} nnvm_tensor;

/* Loads the artifact in directory `dir`; on success *out owns the model (nnvm_model_free). */
NNVM_RUNTIME_API nnvm_status_t nnvm_model_load(const char* dir, nnvm_model** out);
NNVM_RUNTIME_API void nnvm_model_free(nnvm_model* model);

NNVM_RUNTIME_API int nnvm_model_num_inputs(const nnvm_model* model);
NNVM_RUNTIME_API int nnvm_model_num_outputs(const nnvm_model* model);
NNVM_RUNTIME_API nnvm_status_t nnvm_model_input_info(const nnvm_model* model, int index, nnvm_tensor_info* info);
NNVM_RUNTIME_API nnvm_status_t nnvm_model_output_info(const nnvm_model* model, int index, nnvm_tensor_info* info);

/* Runs the model: inputs in the model's input order, each checked (dtype, rank, extents, data
 * not NULL unless empty); outputs are written into the callers' buffers, checked the same way.
 * num_threads > 0 caps the threads of parallel loops, 0 uses NNVM_NUM_THREADS or all cores. */
NNVM_RUNTIME_API nnvm_status_t nnvm_model_run(const nnvm_model* model, const nnvm_tensor* inputs, int num_inputs,
                                              const nnvm_tensor* outputs, int num_outputs, int num_threads);
/* Like nnvm_model_run with bare data pointers, which must have the dtypes and shapes that
 * nnvm_model_input_info / nnvm_model_output_info report (only NULL is checked). */
NNVM_RUNTIME_API nnvm_status_t nnvm_model_run_raw(const nnvm_model* model, const void* const* inputs,
                                                  void* const* outputs, int num_threads);

/* The calling thread's message for its last failure ("" when none). */
NNVM_RUNTIME_API const char* nnvm_last_error(void);
/* "float32", "int64", ...; "unknown" for other codes. */
NNVM_RUNTIME_API const char* nnvm_dtype_name(int32_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* NNVM_RUNTIME_H */
