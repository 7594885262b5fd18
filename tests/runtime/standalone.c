/* A deployed program: links only nnvm_runtime (no compiler, no C++ in its own code), loads the
 * artifact that test_runtime.cpp saved, runs it on the input file it wrote and compares with the
 * expected output it computed by plain loops.
 * Usage: nnvm_runtime_standalone <artifact dir> <data dir with input_<i>.bin, expected_<i>.bin> */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnvm/runtime/nnvm_runtime.h"

static void* read_exactly(const char* dir, const char* stem, int i, uint64_t bytes) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s_%d.bin", dir, stem, i);
  FILE* f = fopen(path, "rb");
  void* data = malloc(bytes ? (size_t)bytes : 1);
  long size = -1;
  if (f && data && fread(data, 1, (size_t)bytes, f) == bytes && fgetc(f) == EOF) size = (long)bytes;
  if (f) fclose(f);
  if (size < 0) {
    fprintf(stderr, "%s: missing, or not %llu bytes\n", path, (unsigned long long)bytes);
    free(data);
    return NULL;
  }
  return data;
}

int main(int argc, char** argv) {
  nnvm_model* model = NULL;
  if (argc != 3) {
    fprintf(stderr, "usage: %s <artifact dir> <data dir>\n", argv[0]);
    return 2;
  }
  /* A missing artifact is an error with a message, not a crash. */
  if (nnvm_model_load("/nonexistent/artifact", &model) != NNVM_ERROR_IO || !strstr(nnvm_last_error(), "model.json")) {
    fprintf(stderr, "loading a missing artifact: unexpected result: %s\n", nnvm_last_error());
    return 1;
  }
  if (nnvm_model_load(argv[1], &model) != NNVM_OK) {
    fprintf(stderr, "load failed: %s\n", nnvm_last_error());
    return 1;
  }
  int ni = nnvm_model_num_inputs(model), no = nnvm_model_num_outputs(model), failures = 0;
  nnvm_tensor inputs[16], outputs[16];
  void* expected[16];
  if (ni > 16 || no > 16) return 1;
  for (int i = 0; i < ni; ++i) {
    nnvm_tensor_info info;
    nnvm_model_input_info(model, i, &info);
    inputs[i].data = read_exactly(argv[2], "input", i, info.bytes);
    inputs[i].dtype = info.dtype;
    inputs[i].rank = info.rank;
    inputs[i].shape = info.shape;
    if (!inputs[i].data) return 1;
  }
  for (int i = 0; i < no; ++i) {
    nnvm_tensor_info info;
    nnvm_model_output_info(model, i, &info);
    outputs[i].data = malloc(info.bytes ? (size_t)info.bytes : 1);
    outputs[i].dtype = info.dtype;
    outputs[i].rank = info.rank;
    outputs[i].shape = info.shape;
    expected[i] = read_exactly(argv[2], "expected", i, info.bytes);
    if (!outputs[i].data || !expected[i]) return 1;
  }
  if (nnvm_model_run(model, inputs, ni, outputs, no, 0) != NNVM_OK) {
    fprintf(stderr, "run failed: %s\n", nnvm_last_error());
    return 1;
  }
  for (int i = 0; i < no; ++i) {
    nnvm_tensor_info info;
    nnvm_model_output_info(model, i, &info);
    if (info.dtype == NNVM_DTYPE_FLOAT32) {
      const float *got = (const float*)outputs[i].data, *want = (const float*)expected[i];
      for (uint64_t k = 0; k < info.bytes / 4; ++k)
        if (!(fabsf(got[k] - want[k]) <= 1e-5f + 1e-3f * fabsf(want[k]))) {
          fprintf(stderr, "output '%s' element %llu: got %g, want %g\n", info.name, (unsigned long long)k, got[k], want[k]);
          ++failures;
          break;
        }
    } else if (memcmp(outputs[i].data, expected[i], (size_t)info.bytes) != 0) {
      fprintf(stderr, "output '%s' differs\n", info.name);
      ++failures;
    }
    free(outputs[i].data);
    free(expected[i]);
  }
  for (int i = 0; i < ni; ++i) free(inputs[i].data);
  nnvm_model_free(model);
  if (!failures) printf("ok: %d outputs of %s match the plain-loop reference\n", no, argv[1]);
  return failures ? 1 : 0;
}
