#include "support/pch.hpp"

#include "nnvm/codegen/llvm_jit.hpp"
#include "support/storage_cases.hpp"

namespace codegen_storage_types {

using namespace nnvm;

TEST_CASE("llvm: float8/float4 and int4/int2 convert as the formats define, scalar and vector") {
  std::vector<DataType> types = storage_cases::small_float_types();
  for (DataType t : storage_cases::sub_byte_types()) types.push_back(t);
  std::vector<ir::LoweredFunc> fns;
  for (DataType t : types) fns.push_back(storage_cases::convert_kernel(t));
  std::vector<target::Kernel> kernels = codegen::jit_llvm(fns);
  for (size_t k = 0; k < types.size(); ++k)
    storage_cases::check_conversions(types[k], [&](const ir::LoweredFunc&, const std::vector<BufferView>& views) {
      kernels[k].call(views, 1);
    });
}

}  // namespace codegen_storage_types
