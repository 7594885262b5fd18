// Private to codegen/llvm: the visitor that turns lowered IR into LLVM IR. The meaning of every
// node is the reference interpreter's (include/nnvm/target/interp/value.hpp); the memory and
// threading plan is shared with the C emitter (include/nnvm/target/storage_plan.hpp), so both
// CPU back ends agree on workspace sizes, stack allocations and what parallel bodies capture.
//
// Values in registers: bool is i1 (a byte in memory), float16/bfloat16 are their i16 bits and
// the float8/float4 types their i8 bits (storage types: only loaded, stored and cast), int4/int2
// are i4/i2 (a byte in memory), vectors are LLVM fixed vectors.
//
// One class, its members defined by concept: emitter.cpp (the kernel ABI), emit_values.cpp
// (types, constants, casts), emit_memory.cpp (scopes, workspace, loads and stores),
// emit_expr.cpp (expressions), emit_calls.cpp (math and bitwise calls), emit_stmt.cpp
// (statements and serial loops), emit_parallel.cpp (parallel loop outlining).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "nnvm/ir/function.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

inline bool is_signed(DataType t) { return t.is_int(); }
inline bool is_f16(DataType t) { return t.code == DataType::Code::Float && t.bits == 16; }
inline bool is_bf16(DataType t) { return t.code == DataType::Code::BFloat; }
inline bool is_real(DataType t) { return t.code == DataType::Code::Float && (t.bits == 32 || t.bits == 64); }

class LlvmEmitter {
 public:
  LlvmEmitter(llvm::Module& m, std::string cpu, std::string features)
      : ctx_(m.getContext()), mod_(m), b_(ctx_), cpu_(std::move(cpu)), features_(std::move(features)) {}

  void declare(const std::string& symbol);
  void emit_kernel(const ir::LoweredFunc& fn, const std::string& symbol);

 private:
  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::IRBuilder<> b_;
  std::string cpu_, features_;
  const ir::LoweredFunc* fn_ = nullptr;
  std::string symbol_;
  llvm::Function* func_ = nullptr;  // the function being filled
  llvm::Value* env_ = nullptr;
  bool in_parallel_ = false;
  int parallel_count_ = 0;
  std::unordered_map<const ir::VarNode*, std::vector<llvm::Value*>> vars_;
  std::unordered_map<const ir::BufferNode*, std::vector<llvm::Value*>> buffers_;
  std::unordered_map<const ir::Allocate*, llvm::Value*> workspace_offsets_;

  // emitter.cpp
  std::vector<std::string> context() const;
  llvm::Function* new_function(llvm::FunctionType* type, const std::string& name, llvm::GlobalValue::LinkageTypes l);

  // emit_values.cpp
  llvm::Type* scalar_type(DataType t);
  llvm::Type* reg_type(DataType t);
  llvm::Type* mem_elem(DataType t);
  llvm::Type* mem_type(DataType t);
  llvm::Align elem_align(DataType t);
  llvm::Value* splat_if(DataType t, llvm::Value* v);
  llvm::Value* splat(int lanes, llvm::Constant* c);
  llvm::Value* constant(DataType t, const ir::ExprNode* n);
  llvm::Value* float_constant(DataType t, double v);
  llvm::Value* cast(llvm::Value* v, DataType from, DataType to);
  llvm::Value* float_vector_to_low32(llvm::Value* v, int lanes);
  llvm::Value* storage_to_f32(llvm::Value* bits, DataType from);
  llvm::Value* f32_to_f16(llvm::Value* x, int lanes);
  llvm::Value* f32_to_bf16(llvm::Value* x, int lanes);
  // emit_small_float.cpp
  llvm::Value* small_float_to_f32(llvm::Value* bits, DataType from);
  llvm::Value* f32_to_small_float(llvm::Value* x, DataType to);

  // emit_memory.cpp
  llvm::Value* var_value(const ir::VarNode* v);
  llvm::Value* buffer_ptr(const ir::Buffer& b);
  bool bound(const ir::VarNode* v) const;
  bool bound(const ir::BufferNode* b) const;
  void bind_sizes(llvm::Value* sizes);
  void check_layout(const std::vector<const ir::Allocate*>& plan);
  llvm::Value* layout(const std::vector<const ir::Allocate*>& plan, std::vector<llvm::Value*>* offsets);
  llvm::Value* entry_alloca(llvm::Type* t, const std::string& name, uint64_t align);
  static const ir::Ramp* contiguous(const ir::Expr& index);
  llvm::Value* address(const ir::Buffer& buf, llvm::Value* index);
  llvm::Value* load(const ir::Load* op);
  void store(const ir::Store* op);
  void allocate(const ir::Allocate* op);

  // emit_expr.cpp
  llvm::Value* expr(const ir::Expr& e);
  [[noreturn]] void not_lowered(const char* node) const;
  llvm::Value* binary(ir::ExprKind k, const ir::Expr& ea, const ir::Expr& eb);
  llvm::Value* int_arith(ir::ExprKind k, llvm::Value* a, llvm::Value* b, DataType t);
  llvm::Value* fmuladd(llvm::Value* a, llvm::Value* b, llvm::Value* c);
  llvm::Value* select(const ir::Select* op);

  // emit_calls.cpp
  llvm::Value* call(const ir::Call* op);
  llvm::Value* bitwise(ir::CallOp op, DataType t, const std::vector<llvm::Value*>& a);
  llvm::Value* libm_call(ir::CallOp op, DataType t, const std::vector<llvm::Value*>& a);

  // emit_stmt.cpp
  void stmt(const ir::Stmt& s);
  void loop(const ir::For* op);
  void serial_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end,
                   llvm::function_ref<void(llvm::Value*)> body);

  // emit_parallel.cpp
  void parallel_loop(const ir::For* op);
};

}  // namespace codegen::detail
NNVM_END_NAMESPACE
