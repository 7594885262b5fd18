// Scopes (variables and buffers in scope), the workspace layout, stack allocations, and loads
// and stores (contiguous vectors, gathers and scatters).
#include <algorithm>

#include <llvm/IR/Constants.h>

#include "compat.hpp"
#include "kernel_emitter.hpp"
#include "nnvm/ir/substitute.hpp"
#include "nnvm/target/storage_plan.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {

using nnvm_llvm_compat::typed_ptr;
using target::kMaxStackBytes;

llvm::Value* LlvmEmitter::var_value(const ir::VarNode* v) {
  auto it = vars_.find(v);
  if (it == vars_.end() || it->second.empty())
    throw InternalError("nnvm.codegen.unbound_var",
                        str_cat("variable ", v->name, " is used but is not a size, loop or let variable in scope"),
                        context());
  return it->second.back();
}

llvm::Value* LlvmEmitter::buffer_ptr(const ir::Buffer& b) {
  auto it = buffers_.find(b.get());
  if (it == buffers_.end() || it->second.empty())
    throw InternalError("nnvm.codegen.unbound_buffer",
                        str_cat("buffer ", b->name, " is neither a parameter nor allocated around its use"),
                        context());
  return it->second.back();
}

bool LlvmEmitter::bound(const ir::VarNode* v) const {
  auto it = vars_.find(v);
  return it != vars_.end() && !it->second.empty();
}

bool LlvmEmitter::bound(const ir::BufferNode* b) const {
  auto it = buffers_.find(b);
  return it != buffers_.end() && !it->second.empty();
}

void LlvmEmitter::bind_sizes(llvm::Value* sizes) {
  for (size_t j = 0; j < fn_->size_vars.size(); ++j) {
    const ir::Var& v = fn_->size_vars[j];
    llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), typed_ptr(b_, sizes, b_.getInt64Ty()), j);
    llvm::Value* x = b_.CreateAlignedLoad(b_.getInt64Ty(), slot, llvm::Align(8), v.name());
    vars_[v.get()].push_back(cast(x, dtype::int64, v.dtype()));
  }
}

// Workspace sizes may use only the kernel's symbolic sizes (they are computed before the body).
void LlvmEmitter::check_layout(const std::vector<const ir::Allocate*>& plan) {
  for (auto* a : plan)
    for (auto& d : a->buffer->shape)
      if (ir::uses_var_if(d, [&](const ir::VarNode* v) {
            return std::none_of(fn_->size_vars.begin(), fn_->size_vars.end(), [&](auto& s) { return s.get() == v; });
          }))
        throw BackendError("nnvm.codegen.allocate_size",
                           str_cat("allocation ", a->buffer->name,
                                   " has a size that depends on a loop or let variable; workspace sizes may only "
                                   "use the kernel's symbolic sizes"),
                           context());
}

// Each workspace allocation gets a 64-byte aligned slice; returns the total byte count and,
// when `offsets` is given, each slice's byte offset.
llvm::Value* LlvmEmitter::layout(const std::vector<const ir::Allocate*>& plan, std::vector<llvm::Value*>* offsets) {
  llvm::Value* total = b_.getInt64(0);
  for (auto* a : plan) {
    llvm::Value* bytes = b_.getInt64(uint64_t(a->buffer->dtype.bytes()));
    for (auto& d : a->buffer->shape) bytes = b_.CreateMul(bytes, cast(expr(d), d.dtype(), dtype::uint64));
    if (offsets) offsets->push_back(total);
    llvm::Value* rounded = b_.CreateMul(b_.CreateUDiv(b_.CreateAdd(bytes, b_.getInt64(63)), b_.getInt64(64)),
                                        b_.getInt64(64));
    total = b_.CreateAdd(total, rounded);
  }
  return total;
}

// An alloca in the entry block of the current function, so loops do not grow the stack.
llvm::Value* LlvmEmitter::entry_alloca(llvm::Type* t, const std::string& name, uint64_t align) {
  llvm::IRBuilder<> eb(&func_->getEntryBlock(), func_->getEntryBlock().begin());
  auto* a = eb.CreateAlloca(t, nullptr, name);
  a->setAlignment(llvm::Align(align));
  return a;
}

// A stride-1 ramp index: the base of a contiguous access.
const ir::Ramp* LlvmEmitter::contiguous(const ir::Expr& index) {
  auto* r = index.as<ir::Ramp>();
  return r && ir::is_const_int(r->stride, 1) ? r : nullptr;
}

llvm::Value* LlvmEmitter::address(const ir::Buffer& buf, llvm::Value* index) {
  return b_.CreateInBoundsGEP(mem_elem(buf->dtype), typed_ptr(b_, buffer_ptr(buf), mem_elem(buf->dtype)), index);
}

llvm::Value* LlvmEmitter::load(const ir::Load* op) {
  DataType t = op->dtype;
  llvm::Value* v;
  if (t.is_scalar()) {
    v = b_.CreateAlignedLoad(mem_type(t), address(op->buffer, expr(op->index)), elem_align(t));
  } else if (auto* r = contiguous(op->index)) {
    v = b_.CreateAlignedLoad(mem_type(t), typed_ptr(b_, address(op->buffer, expr(r->base)), mem_type(t)), elem_align(t));
  } else {
    llvm::Value* ptrs = address(op->buffer, expr(op->index));
    v = b_.CreateMaskedGather(mem_type(t), ptrs, elem_align(t));
  }
  // Any non-zero byte reads as true; int4/int2 bytes hold the value sign- or zero-extended.
  if (t.is_sub_byte_int()) return b_.CreateTrunc(v, reg_type(t));
  return t.is_bool() ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType())) : v;
}

void LlvmEmitter::store(const ir::Store* op) {
  DataType t = op->value.dtype();
  llvm::Value* v = expr(op->value);
  if (t.is_bool()) v = b_.CreateZExt(v, mem_type(t));
  if (t.is_sub_byte_int()) v = b_.CreateIntCast(v, mem_type(t), t.is_int());
  if (t.is_scalar()) {
    b_.CreateAlignedStore(v, address(op->buffer, expr(op->index)), elem_align(t));
  } else if (auto* r = contiguous(op->index)) {
    b_.CreateAlignedStore(v, typed_ptr(b_, address(op->buffer, expr(r->base)), mem_type(t)), elem_align(t));
  } else {
    // Lanes are written in order, so with repeated indices the last lane wins.
    b_.CreateMaskedScatter(v, address(op->buffer, expr(op->index)), elem_align(t));
  }
}

void LlvmEmitter::allocate(const ir::Allocate* op) {
  const ir::Buffer& buf = op->buffer;
  llvm::Value* p;
  if (auto it = workspace_offsets_.find(op); it != workspace_offsets_.end()) {
    p = it->second;
  } else {
    int64_t count = 1;
    for (auto& d : buf->shape) {
      const int64_t* c = ir::as_const_int(d);
      if (!c || *c < 0 || (count = count * *c) * buf->dtype.bytes() > kMaxStackBytes)
        throw BackendError("nnvm.codegen.allocate_size",
                           str_cat("allocation ", buf->name, " is ",
                                   in_parallel_ ? "inside a parallel loop, so per-iteration private" : "local-scope",
                                   " storage, which needs a constant size of at most ", kMaxStackBytes,
                                   " bytes; move it out of the parallel loop or give it a constant shape"),
                           context());
    }
    p = entry_alloca(llvm::ArrayType::get(mem_elem(buf->dtype), uint64_t(std::max<int64_t>(count, 1))), buf->name, 64);
  }
  buffers_[buf.get()].push_back(p);
  stmt(op->body);
  buffers_[buf.get()].pop_back();
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
