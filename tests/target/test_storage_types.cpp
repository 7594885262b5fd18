#include "support/pch.hpp"

#include "nnvm/target/c_jit.hpp"
#include "nnvm/target/interpreter.hpp"
#include "support/storage_cases.hpp"

namespace target_storage_types {

using namespace nnvm;

TEST_CASE("storage types: the interpreter converts float8/float4 and int4/int2 as the formats define") {
  auto run = [](const ir::LoweredFunc& fn, const std::vector<BufferView>& views) {
    target::interpret(fn, std::span<const BufferView>(views));
  };
  for (DataType t : storage_cases::small_float_types()) storage_cases::check_conversions(t, run);
  for (DataType t : storage_cases::sub_byte_types()) storage_cases::check_conversions(t, run);
}

TEST_CASE("storage types: the C JIT converts float8/float4 and int4/int2 as the formats define") {
  std::vector<DataType> types = storage_cases::small_float_types();
  for (DataType t : storage_cases::sub_byte_types()) types.push_back(t);
  std::vector<ir::LoweredFunc> fns;
  for (DataType t : types) fns.push_back(storage_cases::convert_kernel(t));
  std::vector<target::Kernel> kernels = target::jit_c(fns);  // one compiler run for all
  for (size_t k = 0; k < types.size(); ++k)
    storage_cases::check_conversions(types[k], [&](const ir::LoweredFunc&, const std::vector<BufferView>& views) {
      kernels[k].call(views, 1);
    });
}

}  // namespace target_storage_types
