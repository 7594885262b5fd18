// A header-only C++ face for the deploy runtime's C API (nnvm_runtime.h): a Model that owns
// its handle and throws std::runtime_error carrying nnvm_last_error()'s message.
//
//   auto model = nnvm::runtime::Model::load("mlp_artifact");
//   std::vector<float> x(5 * 13);
//   auto outputs = model.run({nnvm::runtime::TensorRef::of(x.data(), {5, 13})});
//   const float* y = reinterpret_cast<const float*>(outputs[0].data());
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "nnvm/config.hpp"
#include "nnvm/runtime/nnvm_runtime.h"

NNVM_BEGIN_NAMESPACE
namespace runtime {

struct TensorInfo {
  std::string name;
  int32_t dtype = 0;  // nnvm_dtype
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

// A caller's buffer with its type; the data is not owned.
struct TensorRef {
  void* data = nullptr;
  int32_t dtype = 0;
  std::vector<int64_t> shape;

  template <class T>
  static TensorRef of(const T* data, std::vector<int64_t> shape) {
    return {const_cast<T*>(data), dtype_code<T>(), std::move(shape)};
  }
  template <class T>
  static constexpr int32_t dtype_code() {
    if constexpr (std::is_same_v<T, float>) return NNVM_DTYPE_FLOAT32;
    else if constexpr (std::is_same_v<T, double>) return NNVM_DTYPE_FLOAT64;
    else if constexpr (std::is_same_v<T, bool>) return NNVM_DTYPE_BOOL;
    else if constexpr (std::is_same_v<T, int8_t>) return NNVM_DTYPE_INT8;
    else if constexpr (std::is_same_v<T, int16_t>) return NNVM_DTYPE_INT16;
    else if constexpr (std::is_same_v<T, int32_t>) return NNVM_DTYPE_INT32;
    else if constexpr (std::is_same_v<T, int64_t>) return NNVM_DTYPE_INT64;
    else if constexpr (std::is_same_v<T, uint8_t>) return NNVM_DTYPE_UINT8;
    else if constexpr (std::is_same_v<T, uint16_t>) return NNVM_DTYPE_UINT16;
    else if constexpr (std::is_same_v<T, uint32_t>) return NNVM_DTYPE_UINT32;
    else if constexpr (std::is_same_v<T, uint64_t>) return NNVM_DTYPE_UINT64;
    else static_assert(sizeof(T) == 0, "no nnvm_dtype for this element type (use a raw TensorRef for 16-bit floats)");
  }
};

class Model {
 public:
  // Loads the artifact directory written by nnvm::graph::save_artifact.
  static Model load(const std::string& dir) {
    nnvm_model* m = nullptr;
    check(nnvm_model_load(dir.c_str(), &m));
    return Model(m);
  }

  std::vector<TensorInfo> inputs() const { return infos(true); }
  std::vector<TensorInfo> outputs() const { return infos(false); }

  // Runs on caller buffers (types checked), writing into `outputs`. Thread-safe: one Model may
  // run from several threads at once. num_threads > 0 caps the threads of parallel loops.
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs, int num_threads = 0) const {
    std::vector<nnvm_tensor> in = views(inputs), out = views(outputs);
    check(nnvm_model_run(m_.get(), in.data(), int(in.size()), out.data(), int(out.size()), num_threads));
  }
  // Runs and returns the outputs as bytes, in the model's output order.
  std::vector<std::vector<std::byte>> run(const std::vector<TensorRef>& inputs, int num_threads = 0) const {
    std::vector<std::vector<std::byte>> result;
    std::vector<TensorRef> refs;
    for (auto& o : outputs()) {
      result.emplace_back(size_t(o.bytes));
      refs.push_back({result.back().data(), o.dtype, o.shape});
    }
    run(inputs, refs, num_threads);
    return result;
  }

  const nnvm_model* handle() const { return m_.get(); }

 private:
  struct Free {
    void operator()(nnvm_model* m) const { nnvm_model_free(m); }
  };
  explicit Model(nnvm_model* m) : m_(m) {}

  static void check(nnvm_status_t status) {
    if (status != NNVM_OK) throw std::runtime_error(nnvm_last_error());
  }
  static std::vector<nnvm_tensor> views(const std::vector<TensorRef>& refs) {
    std::vector<nnvm_tensor> out;
    for (auto& r : refs) out.push_back({r.data, r.dtype, int32_t(r.shape.size()), r.shape.data()});
    return out;
  }
  std::vector<TensorInfo> infos(bool inputs) const {
    std::vector<TensorInfo> out;
    int n = inputs ? nnvm_model_num_inputs(m_.get()) : nnvm_model_num_outputs(m_.get());
    for (int i = 0; i < n; ++i) {
      nnvm_tensor_info t;
      check(inputs ? nnvm_model_input_info(m_.get(), i, &t) : nnvm_model_output_info(m_.get(), i, &t));
      out.push_back({t.name, t.dtype, std::vector<int64_t>(t.shape, t.shape + t.rank), t.bytes});
    }
    return out;
  }

  std::unique_ptr<nnvm_model, Free> m_;
};

}  // namespace runtime
NNVM_END_NAMESPACE
