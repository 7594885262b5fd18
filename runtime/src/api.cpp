// The C API: argument checks, and the one place where a Failure becomes a status and the
// calling thread's message.
#include <new>
#include <stdexcept>

#include "model.hpp"

using namespace nnvm::runtime;

namespace {

thread_local std::string last_error;

// Called inside a catch block: records the exception in flight as the thread's message.
nnvm_status_t failed() {
  try {
    throw;
  } catch (const Failure& e) {
    last_error = e.message;
    return e.status;
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
  } catch (const std::exception& e) {
    last_error = e.what();
  }
  return NNVM_ERROR_MEMORY;
}

template <class F>
nnvm_status_t guarded(F&& f) {
  try {
    f();
    return NNVM_OK;
  } catch (...) {
    return failed();
  }
}

void check_model(const nnvm_model* model) {
  if (!model) fail(NNVM_ERROR_ARGUMENT, "the model handle is NULL");
}

nnvm_status_t info(const nnvm_model* model, int index, nnvm_tensor_info* out, bool input) {
  return guarded([&] {
    check_model(model);
    const auto& list = input ? model->input_info : model->output_info;
    if (!out) fail(NNVM_ERROR_ARGUMENT, "the info pointer is NULL");
    if (index < 0 || size_t(index) >= list.size())
      fail(NNVM_ERROR_ARGUMENT, "%s index %d is out of range: the model has %zu", input ? "input" : "output", index,
           list.size());
    *out = list[size_t(index)];
  });
}

}  // namespace

extern "C" {

nnvm_status_t nnvm_model_load(const char* dir, nnvm_model** out) {
  return guarded([&] {
    if (!dir || !out) fail(NNVM_ERROR_ARGUMENT, "nnvm_model_load: the directory or the result pointer is NULL");
    *out = nullptr;
    *out = load(dir);
  });
}

void nnvm_model_free(nnvm_model* model) { delete model; }

int nnvm_model_num_inputs(const nnvm_model* model) { return model ? int(model->plan.inputs.size()) : 0; }
int nnvm_model_num_outputs(const nnvm_model* model) { return model ? int(model->plan.outputs.size()) : 0; }

nnvm_status_t nnvm_model_input_info(const nnvm_model* model, int index, nnvm_tensor_info* out) {
  return info(model, index, out, true);
}
nnvm_status_t nnvm_model_output_info(const nnvm_model* model, int index, nnvm_tensor_info* out) {
  return info(model, index, out, false);
}

nnvm_status_t nnvm_model_run(const nnvm_model* model, const nnvm_tensor* inputs, int num_inputs,
                             const nnvm_tensor* outputs, int num_outputs, int num_threads) {
  return guarded([&] {
    check_model(model);
    check_tensors(*model, inputs, num_inputs, true);
    check_tensors(*model, outputs, num_outputs, false);
    std::vector<const void*> in;
    std::vector<void*> out;
    for (int i = 0; i < num_inputs; ++i) in.push_back(inputs[i].data);
    for (int i = 0; i < num_outputs; ++i) out.push_back(outputs[i].data);
    run(*model, in.data(), out.data(), num_threads);
  });
}

nnvm_status_t nnvm_model_run_raw(const nnvm_model* model, const void* const* inputs, void* const* outputs,
                                 int num_threads) {
  return guarded([&] {
    check_model(model);
    run(*model, inputs, outputs, num_threads);
  });
}

const char* nnvm_last_error(void) { return last_error.c_str(); }

const char* nnvm_dtype_name(int32_t dtype) { return nnvm::runtime::dtype_name(dtype); }

}  // extern "C"
