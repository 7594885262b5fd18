// Host tensors handed to compiled kernels: NDArray owns aligned memory, BufferView borrows it.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "nnvm/ir/dtype.hpp"
#include "nnvm/limits.hpp"

NNVM_BEGIN_NAMESPACE

// A non-owning view of a compact row-major tensor in host memory.
struct BufferView {
  void* data = nullptr;
  DataType dtype;
  std::vector<int64_t> shape;

  int64_t numel() const {
    return std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
  }
  size_t nbytes() const { return size_t(numel()) * size_t(dtype.bytes()); }
};

// An owning, 64-byte aligned, compact row-major host tensor.
class NDArray {
 public:
  NDArray() = default;
  NDArray(DataType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
    for (int64_t d : shape_)
      if (d < 0) throw UserError("nnvm.ndarray.negative_extent", "NDArray extents must be non-negative");
    if (!checked_tensor_bytes(shape_, uint64_t(dtype_.bytes())))
      throw UserError("nnvm.ndarray.too_large", str_cat("a ", dtype_, " tensor of shape ", shape_text(),
                                                        " would be larger than 2^48 bytes"));
    size_t bytes = std::max<size_t>(64, (nbytes() + 63) / 64 * 64);
    data_.reset(static_cast<std::byte*>(std::aligned_alloc(64, bytes)));
    // Named, with the size: a bare std::bad_alloc would reach the user saying neither.
    if (!data_)
      throw UserError("nnvm.ndarray.out_of_memory",
                      str_cat("cannot allocate ", bytes, " bytes for a ", dtype_, " tensor of shape ", shape_text()));
    std::fill(data_.get(), data_.get() + bytes, std::byte{0});
  }
  // Copies are deep, like std::vector's; moves are cheap.
  NDArray(const NDArray& o) : NDArray(o.dtype_, o.shape_) {
    if (o.data_) std::memcpy(data_.get(), o.data_.get(), nbytes());
  }
  NDArray& operator=(const NDArray& o) {
    if (this != &o) *this = NDArray(o);
    return *this;
  }
  NDArray(NDArray&&) noexcept = default;
  NDArray& operator=(NDArray&&) noexcept = default;

  template <class T>
  static NDArray from(const std::vector<T>& values, std::vector<int64_t> shape) {
    NDArray a(dtype_v<T>, std::move(shape));
    if (values.size() != size_t(a.numel()))
      throw UserError("nnvm.ndarray.size_mismatch",
                      str_cat("NDArray::from got ", values.size(), " values for ", a.numel(), " elements"));
    std::copy(values.begin(), values.end(), a.data<T>());
    return a;
  }

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const {
    return std::accumulate(shape_.begin(), shape_.end(), int64_t(1), std::multiplies<int64_t>());
  }
  size_t nbytes() const { return size_t(numel()) * size_t(dtype_.bytes()); }
  void* raw() { return data_.get(); }
  const void* raw() const { return data_.get(); }

  template <class T>
  T* data() {
    check_type<T>();
    return reinterpret_cast<T*>(data_.get());
  }
  template <class T>
  const T* data() const {
    check_type<T>();
    return reinterpret_cast<const T*>(data_.get());
  }
  template <class T>
  std::span<T> values() { return {data<T>(), size_t(numel())}; }
  template <class T>
  std::span<const T> values() const { return {data<T>(), size_t(numel())}; }

  BufferView view() { return BufferView{data_.get(), dtype_, shape_}; }
  operator BufferView() { return view(); }

 private:
  std::string shape_text() const {
    std::string s = "[";
    for (size_t i = 0; i < shape_.size(); ++i) s += (i ? ", " : "") + std::to_string(shape_[i]);
    return s + "]";
  }
  template <class T>
  void check_type() const {
    if (dtype_v<T> != dtype_)
      throw UserError("nnvm.ndarray.dtype_mismatch",
                      str_cat("NDArray holds ", dtype_, " but was accessed as ", dtype_v<T>));
  }
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  DataType dtype_;
  std::vector<int64_t> shape_;
  std::unique_ptr<std::byte, Free> data_;
};

NNVM_END_NAMESPACE
