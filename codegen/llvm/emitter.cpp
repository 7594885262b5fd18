// Lowered IR -> LLVM IR. The meaning of every node is the reference interpreter's
// (include/nnvm/target/interp/value.hpp); the memory and threading plan is shared with the C
// emitter (include/nnvm/target/storage_plan.hpp), so both CPU back ends agree on workspace
// sizes, stack allocations and what parallel bodies capture.
//
// Values in registers: bool is i1 (a byte in memory), float16/bfloat16 are their i16 bits
// (storage types: only loaded, stored and cast), vectors are LLVM fixed vectors.
#include "emitter.hpp"

#include <set>
#include <unordered_map>
#include <unordered_set>

#include <llvm/IR/BasicBlock.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include "compat.hpp"
#include "nnvm/ir/functor.hpp"
#include "nnvm/ir/substitute.hpp"
#include "nnvm/runtime/kernel_abi.h"
#include "nnvm/target/storage_plan.hpp"

NNVM_BEGIN_NAMESPACE
namespace codegen::detail {
namespace {

using nnvm_llvm_compat::ptr_type;

using target::kMaxStackBytes;

bool is_signed(DataType t) { return t.is_int(); }
bool is_f16(DataType t) { return t.code == DataType::Code::Float && t.bits == 16; }
bool is_bf16(DataType t) { return t.code == DataType::Code::BFloat; }
bool is_real(DataType t) { return t.code == DataType::Code::Float && (t.bits == 32 || t.bits == 64); }

class Emitter {
 public:
  Emitter(llvm::Module& m, std::string cpu, std::string features)
      : ctx_(m.getContext()), mod_(m), b_(ctx_), cpu_(std::move(cpu)), features_(std::move(features)) {}

  // Declares a kernel's two exported functions before any kernel is emitted, so no internal
  // function of an earlier kernel can take (and LLVM rename) a later kernel's symbol.
  void declare(const std::string& symbol) {
    llvm::Type* ptr = ptr_type(ctx_);
    new_function(llvm::FunctionType::get(b_.getInt64Ty(), {ptr}, false), symbol + "_workspace_bytes",
                 llvm::GlobalValue::ExternalLinkage);
    new_function(llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr, b_.getInt64Ty(), ptr}, false), symbol,
                 llvm::GlobalValue::ExternalLinkage);
  }

  void emit_kernel(const ir::LoweredFunc& fn, const std::string& symbol) {
    fn_ = &fn;
    symbol_ = symbol;
    parallel_count_ = 0;
    vars_.clear();
    buffers_.clear();
    workspace_offsets_.clear();
    if (!fn.body.defined()) throw InternalError("nnvm.codegen.empty_kernel", "kernel has no body", context());
    const std::vector<const ir::Allocate*> workspace_allocs = target::workspace_allocations(fn.body);
    check_layout(workspace_allocs);

    llvm::Type* ptr = ptr_type(ctx_);
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Type* i32 = b_.getInt32Ty();

    // symbol_workspace_bytes(sizes)
    func_ = mod_.getFunction(symbol + "_workspace_bytes");
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", func_));
    bind_sizes(func_->getArg(0));
    b_.CreateRet(layout(workspace_allocs, nullptr));
    vars_.clear();

    // The kernel body takes the arguments as noalias parameters (kernel arguments never overlap:
    // bind_arguments checks it), so LLVM may keep values in registers across stores, e.g. an
    // accumulator in the output buffer; the exported entry point unpacks `args` into them.
    std::vector<llvm::Type*> params(fn.params.size(), ptr);
    params.insert(params.end(), {ptr, ptr, i64, ptr});
    auto* body = new_function(llvm::FunctionType::get(i32, params, false), symbol + "_body",
                              llvm::GlobalValue::InternalLinkage);
    const size_t np = fn.params.size();
    for (size_t i = 0; i < np; ++i) {
      llvm::Argument* a = body->getArg(unsigned(i));
      a->setName(fn.params[i]->name);
      a->addAttr(llvm::Attribute::NoAlias);
      buffers_[fn.params[i].get()].push_back(a);
    }
    const char* arg_names[] = {"sizes", "workspace", "workspace_bytes", "env"};
    for (unsigned k = 0; k < 4; ++k) body->getArg(unsigned(np) + k)->setName(arg_names[k]);
    llvm::Argument* workspace = body->getArg(unsigned(np) + 1);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body));
    env_ = body->getArg(unsigned(np) + 3);
    bind_sizes(body->getArg(unsigned(np)));
    if (!workspace_allocs.empty()) {
      std::vector<llvm::Value*> offsets;
      llvm::Value* total = layout(workspace_allocs, &offsets);
      for (size_t k = 0; k < offsets.size(); ++k)
        workspace_offsets_[workspace_allocs[k]] = b_.CreateInBoundsGEP(b_.getInt8Ty(), workspace, offsets[k]);
      auto* small = llvm::BasicBlock::Create(ctx_, "workspace_too_small", body);
      auto* ok = llvm::BasicBlock::Create(ctx_, "body", body);
      b_.CreateCondBr(b_.CreateICmpULT(body->getArg(unsigned(np) + 2), total), small, ok);
      b_.SetInsertPoint(small);
      b_.CreateRet(b_.getInt32(NNVM_STATUS_WORKSPACE_TOO_SMALL));
      b_.SetInsertPoint(ok);
    }
    stmt(fn.body);
    b_.CreateRet(b_.getInt32(NNVM_STATUS_OK));

    // The kernel itself.
    func_ = mod_.getFunction(symbol);
    const char* entry_names[] = {"args", "sizes", "workspace", "workspace_bytes", "env"};
    for (unsigned k = 0; k < 5; ++k) func_->getArg(k)->setName(entry_names[k]);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", func_));
    std::vector<llvm::Value*> call_args;
    for (size_t i = 0; i < np; ++i) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(ptr, func_->getArg(0), i);
      call_args.push_back(b_.CreateAlignedLoad(ptr, slot, llvm::Align(8), fn.params[i]->name));
    }
    for (unsigned k = 1; k < 5; ++k) call_args.push_back(func_->getArg(k));
    b_.CreateRet(b_.CreateCall(body, call_args));
  }

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

  std::vector<std::string> context() const { return {"kernel " + (fn_ ? fn_->name : std::string("?"))}; }

  llvm::Function* new_function(llvm::FunctionType* type, const std::string& name, llvm::GlobalValue::LinkageTypes l) {
    auto* f = llvm::Function::Create(type, l, name, mod_);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    if (!cpu_.empty()) f->addFnAttr("target-cpu", cpu_);
    if (!features_.empty()) f->addFnAttr("target-features", features_);
    func_ = f;
    return f;
  }

  // ---- types ----------------------------------------------------------------------------------

  llvm::Type* scalar_type(DataType t) {
    switch (t.code) {
      case DataType::Code::Bool: return b_.getInt1Ty();
      case DataType::Code::Int:
      case DataType::Code::UInt: return b_.getIntNTy(t.bits);
      case DataType::Code::Float:
        if (t.bits == 32) return b_.getFloatTy();
        if (t.bits == 64) return b_.getDoubleTy();
        if (t.bits == 16) return b_.getInt16Ty();
        break;
      case DataType::Code::BFloat:
        if (t.bits == 16) return b_.getInt16Ty();
        break;
      case DataType::Code::Handle: break;
    }
    throw BackendError("nnvm.codegen.llvm.dtype", str_cat("the LLVM back end cannot represent ", t), context());
  }
  llvm::Type* reg_type(DataType t) {
    llvm::Type* s = scalar_type(t.element_of());
    return t.is_vector() ? llvm::FixedVectorType::get(s, t.lanes) : s;
  }
  // The in-memory element type: bool is a byte.
  llvm::Type* mem_elem(DataType t) { return t.is_bool() ? b_.getInt8Ty() : scalar_type(t.element_of()); }
  llvm::Type* mem_type(DataType t) {
    llvm::Type* s = mem_elem(t);
    return t.is_vector() ? llvm::FixedVectorType::get(s, t.lanes) : s;
  }
  llvm::Align elem_align(DataType t) { return llvm::Align(uint64_t(t.bytes())); }

  llvm::Value* splat_if(DataType t, llvm::Value* v) {
    return t.is_vector() && !v->getType()->isVectorTy() ? b_.CreateVectorSplat(t.lanes, v) : v;
  }

  // ---- scopes ---------------------------------------------------------------------------------

  llvm::Value* var_value(const ir::VarNode* v) {
    auto it = vars_.find(v);
    if (it == vars_.end() || it->second.empty())
      throw InternalError("nnvm.codegen.unbound_var",
                          str_cat("variable ", v->name, " is used but is not a size, loop or let variable in scope"),
                          context());
    return it->second.back();
  }
  llvm::Value* buffer_ptr(const ir::Buffer& b) {
    auto it = buffers_.find(b.get());
    if (it == buffers_.end() || it->second.empty())
      throw InternalError("nnvm.codegen.unbound_buffer",
                          str_cat("buffer ", b->name, " is neither a parameter nor allocated around its use"),
                          context());
    return it->second.back();
  }
  bool bound(const ir::VarNode* v) const {
    auto it = vars_.find(v);
    return it != vars_.end() && !it->second.empty();
  }
  bool bound(const ir::BufferNode* b) const {
    auto it = buffers_.find(b);
    return it != buffers_.end() && !it->second.empty();
  }

  void bind_sizes(llvm::Value* sizes) {
    for (size_t j = 0; j < fn_->size_vars.size(); ++j) {
      const ir::Var& v = fn_->size_vars[j];
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), sizes, j);
      llvm::Value* x = b_.CreateAlignedLoad(b_.getInt64Ty(), slot, llvm::Align(8), v.name());
      vars_[v.get()].push_back(cast(x, dtype::int64, v.dtype()));
    }
  }

  // Workspace sizes may use only the kernel's symbolic sizes (they are computed before the body).
  void check_layout(const std::vector<const ir::Allocate*>& plan) {
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
  llvm::Value* layout(const std::vector<const ir::Allocate*>& plan, std::vector<llvm::Value*>* offsets) {
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
  llvm::Value* entry_alloca(llvm::Type* t, const std::string& name, uint64_t align) {
    llvm::IRBuilder<> eb(&func_->getEntryBlock(), func_->getEntryBlock().begin());
    auto* a = eb.CreateAlloca(t, nullptr, name);
    a->setAlignment(llvm::Align(align));
    return a;
  }

  // ---- expressions ----------------------------------------------------------------------------

  llvm::Value* constant(DataType t, const ir::ExprNode* n) {
    llvm::Type* s = scalar_type(t.element_of());
    llvm::Value* c = nullptr;
    if (n->kind == ir::ExprKind::IntImm) {
      int64_t v = static_cast<const ir::IntImm*>(n)->value;
      c = t.is_float() ? float_constant(t, double(v)) : llvm::ConstantInt::get(s, t.is_bool() ? uint64_t(v != 0) : uint64_t(v), true);
    } else if (n->kind == ir::ExprKind::UIntImm) {
      uint64_t v = static_cast<const ir::UIntImm*>(n)->value;
      c = t.is_float() ? float_constant(t, double(v)) : llvm::ConstantInt::get(s, t.is_bool() ? uint64_t(v != 0) : v);
    } else {
      double v = static_cast<const ir::FloatImm*>(n)->value;
      c = t.is_float() ? float_constant(t, v) : llvm::ConstantInt::get(s, uint64_t(int64_t(v)), true);
    }
    return splat_if(t, c);
  }
  llvm::Value* float_constant(DataType t, double v) {
    if (is_f16(t)) return b_.getInt16(float16::from_float(float(v)));
    if (is_bf16(t)) return b_.getInt16(bfloat16::from_float(float(v)));
    return llvm::ConstantFP::get(scalar_type(t.element_of()), t.bits == 32 ? double(float(v)) : v);
  }

  llvm::Value* expr(const ir::Expr& e) {
    using K = ir::ExprKind;
    if (!e.defined()) throw InternalError("nnvm.codegen.undefined_expr", "undefined expression", context());
    const DataType t = e.dtype();
    switch (e.kind()) {
      case K::IntImm:
      case K::UIntImm:
      case K::FloatImm: return constant(t, e.get());
      case K::Var: return var_value(e.as<ir::VarNode>());
#define NNVM_LLVM_BINARY(N) \
  case K::N: return binary(K::N, e.as<ir::N>()->a, e.as<ir::N>()->b);
        NNVM_FOR_EACH_BINARY(NNVM_LLVM_BINARY)
#undef NNVM_LLVM_BINARY
      case K::Not: return b_.CreateNot(expr(e.as<ir::Not>()->a));
      case K::Select: return select(e.as<ir::Select>());
      case K::Cast: {
        auto* op = e.as<ir::Cast>();
        return cast(expr(op->value), op->value.dtype(), t);
      }
      case K::Call: return call(e.as<ir::Call>());
      case K::Load: return load(e.as<ir::Load>());
      case K::Ramp: {
        auto* op = e.as<ir::Ramp>();
        llvm::Value* base = b_.CreateVectorSplat(op->lanes, expr(op->base));
        llvm::Value* stride = b_.CreateVectorSplat(op->lanes, expr(op->stride));
        std::vector<llvm::Constant*> steps;
        for (int k = 0; k < op->lanes; ++k) steps.push_back(llvm::ConstantInt::get(scalar_type(op->base.dtype()), k));
        return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps)));
      }
      case K::Broadcast: {
        auto* op = e.as<ir::Broadcast>();
        return b_.CreateVectorSplat(op->lanes, expr(op->value));
      }
      case K::Let: {
        auto* op = e.as<ir::Let>();
        llvm::Value* v = expr(op->value);
        vars_[op->var.get()].push_back(v);
        llvm::Value* r = expr(op->body);
        vars_[op->var.get()].pop_back();
        return r;
      }
      case K::Reduce: not_lowered("Reduce");
      case K::ProducerLoad: not_lowered("ProducerLoad");
    }
    throw InternalError("nnvm.codegen.unknown_node", "unknown expression node", context());
  }

  [[noreturn]] void not_lowered(const char* node) const {
    throw InternalError("nnvm.codegen.not_lowered",
                        str_cat(node, " reached the emitter; lower() removes it (see docs/lowered_ir.md)"), context());
  }

  llvm::Value* binary(ir::ExprKind k, const ir::Expr& ea, const ir::Expr& eb) {
    using K = ir::ExprKind;
    const DataType t = ea.dtype();
    // a*b + c and a*b - c may fuse (llvm.fmuladd), as the C JIT's -ffp-contract=fast allows.
    if (is_real(t) && (k == K::Add || k == K::Sub)) {
      if (auto* m = ea.as<ir::Mul>()) {
        llvm::Value* c = expr(eb);
        if (k == K::Sub) c = b_.CreateFNeg(c);
        return fmuladd(expr(m->a), expr(m->b), c);
      }
      if (auto* m = eb.as<ir::Mul>(); m && k == K::Add) {
        llvm::Value* c = expr(ea);
        return fmuladd(expr(m->a), expr(m->b), c);
      }
    }
    llvm::Value* a = expr(ea);
    llvm::Value* b = expr(eb);
    if (is_real(t)) {
      switch (k) {
        case K::Add: return b_.CreateFAdd(a, b);
        case K::Sub: return b_.CreateFSub(a, b);
        case K::Mul: return b_.CreateFMul(a, b);
        case K::Div: return b_.CreateFDiv(a, b);
        case K::Mod: return b_.CreateFRem(a, b);
        case K::Min: return b_.CreateSelect(b_.CreateFCmpOLT(a, b), a, b);
        case K::Max: return b_.CreateSelect(b_.CreateFCmpOGT(a, b), a, b);
        case K::EQ: return b_.CreateFCmpOEQ(a, b);
        case K::NE: return b_.CreateFCmpUNE(a, b);
        case K::LT: return b_.CreateFCmpOLT(a, b);
        case K::LE: return b_.CreateFCmpOLE(a, b);
        case K::GT: return b_.CreateFCmpOGT(a, b);
        case K::GE: return b_.CreateFCmpOGE(a, b);
        default: break;
      }
      throw InternalError("nnvm.codegen.bad_operands", "logical operator on floats", context());
    }
    if (k == K::And) return b_.CreateAnd(a, b);
    if (k == K::Or) return b_.CreateOr(a, b);
    bool s = is_signed(t);
    switch (k) {
      case K::EQ: return b_.CreateICmpEQ(a, b);
      case K::NE: return b_.CreateICmpNE(a, b);
      case K::LT: return s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b);
      case K::LE: return s ? b_.CreateICmpSLE(a, b) : b_.CreateICmpULE(a, b);
      case K::GT: return s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b);
      case K::GE: return s ? b_.CreateICmpSGE(a, b) : b_.CreateICmpUGE(a, b);
      case K::Min: return b_.CreateSelect(s ? b_.CreateICmpSLT(a, b) : b_.CreateICmpULT(a, b), a, b);
      case K::Max: return b_.CreateSelect(s ? b_.CreateICmpSGT(a, b) : b_.CreateICmpUGT(a, b), a, b);
      default: break;
    }
    // Arithmetic on bool computes on 0/1 bytes and turns the result back into a bool, as the
    // interpreter does.
    if (t.is_bool()) {
      llvm::Type* byte = reg_type(dtype::uint8.with_lanes(t.lanes));
      llvm::Value* r = int_arith(k, b_.CreateZExt(a, byte), b_.CreateZExt(b, byte), dtype::uint8.with_lanes(t.lanes));
      return b_.CreateICmpNE(r, llvm::Constant::getNullValue(byte));
    }
    return int_arith(k, a, b, t);
  }

  llvm::Value* int_arith(ir::ExprKind k, llvm::Value* a, llvm::Value* b, DataType t) {
    using K = ir::ExprKind;
    bool s = is_signed(t);
    // Narrow types wrap (no nsw); int32/int64 overflow is undefined, as in C.
    bool nsw = s && t.bits >= 32;
    switch (k) {
      case K::Add: return b_.CreateAdd(a, b, "", false, nsw);
      case K::Sub: return b_.CreateSub(a, b, "", false, nsw);
      case K::Mul: return b_.CreateMul(a, b, "", false, nsw);
      case K::Div:
      case K::Mod: {
        if (t.bits < 32) {
          // C computes narrow types in int, where INT8_MIN / -1 is defined and wraps back.
          llvm::Type* wide = reg_type(DataType::int_(32, t.lanes));
          llvm::Value* wa = s ? b_.CreateSExt(a, wide) : b_.CreateZExt(a, wide);
          llvm::Value* wb = s ? b_.CreateSExt(b, wide) : b_.CreateZExt(b, wide);
          llvm::Value* r = k == K::Div ? b_.CreateSDiv(wa, wb) : b_.CreateSRem(wa, wb);
          return b_.CreateTrunc(r, a->getType());
        }
        if (k == K::Div) return s ? b_.CreateSDiv(a, b) : b_.CreateUDiv(a, b);
        return s ? b_.CreateSRem(a, b) : b_.CreateURem(a, b);
      }
      default: break;
    }
    throw InternalError("nnvm.codegen.bad_operands", "unexpected integer operator", context());
  }

  llvm::Value* fmuladd(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {a->getType()}, {a, b, c});
  }

  // A scalar select runs only the chosen branch (the other may be a guarded out-of-bounds
  // load); LLVM turns the branches back into a select when speculation is safe.
  llvm::Value* select(const ir::Select* op) {
    if (op->dtype.is_vector())
      return b_.CreateSelect(expr(op->condition), expr(op->true_value), expr(op->false_value));
    llvm::Value* c = expr(op->condition);
    auto* then_bb = llvm::BasicBlock::Create(ctx_, "select.true", func_);
    auto* else_bb = llvm::BasicBlock::Create(ctx_, "select.false", func_);
    auto* merge = llvm::BasicBlock::Create(ctx_, "select.end", func_);
    b_.CreateCondBr(c, then_bb, else_bb);
    b_.SetInsertPoint(then_bb);
    llvm::Value* tv = expr(op->true_value);
    llvm::BasicBlock* then_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(else_bb);
    llvm::Value* fv = expr(op->false_value);
    llvm::BasicBlock* else_end = b_.GetInsertBlock();
    b_.CreateBr(merge);
    b_.SetInsertPoint(merge);
    auto* phi = b_.CreatePHI(tv->getType(), 2);
    phi->addIncoming(tv, then_end);
    phi->addIncoming(fv, else_end);
    return phi;
  }

  // ---- casts (interp/value.hpp: cast_lane) ----------------------------------------------------

  llvm::Value* cast(llvm::Value* v, DataType from, DataType to) {
    to = to.with_lanes(from.lanes);
    if (from == to) return v;
    int lanes = from.lanes;
    auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
    DataType f32 = dtype::float32.with_lanes(lanes);
    if (from.is_storage_only()) return cast(storage_to_f32(v, from), f32, to);
    if (to.is_storage_only()) {
      llvm::Value* x = cast(v, from, f32);
      return is_bf16(to) ? f32_to_bf16(x, lanes) : f32_to_f16(x, lanes);
    }
    llvm::Type* tt = reg_type(to);
    if (to.is_bool()) {
      if (from.is_float()) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
      return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
    }
    if (from.is_float() && to.is_float()) return b_.CreateFPCast(v, tt);
    if (!from.is_float() && to.is_float()) return is_signed(from) ? b_.CreateSIToFP(v, tt) : b_.CreateUIToFP(v, tt);
    if (!from.is_float()) return b_.CreateIntCast(v, tt, is_signed(from));
    // Float to integer saturates to int64 (NaN gives 0) and wraps to the target's width, which
    // agrees with C wherever C is defined (the interpreter's rule).
    llvm::Type* i64 = vec(b_.getInt64Ty());
    llvm::Value* r = b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {i64, v->getType()}, {v});
    if (to.is_uint() && to.bits == 64) {
      llvm::Value* u = b_.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {i64, v->getType()}, {v});
      r = b_.CreateSelect(b_.CreateFCmpOGE(v, llvm::Constant::getNullValue(v->getType())), u, r);
    }
    return to.bits == 64 ? r : b_.CreateTrunc(r, tt);
  }

  llvm::Value* storage_to_f32(llvm::Value* bits, DataType from) {
    int lanes = from.lanes;
    auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
    if (is_f16(from)) return b_.CreateFPExt(b_.CreateBitCast(bits, vec(b_.getHalfTy())), vec(b_.getFloatTy()));
    llvm::Value* w = b_.CreateShl(b_.CreateZExt(bits, vec(b_.getInt32Ty())), splat(lanes, b_.getInt32(16)));
    return b_.CreateBitCast(w, vec(b_.getFloatTy()));
  }
  llvm::Value* splat(int lanes, llvm::Constant* c) { return lanes > 1 ? b_.CreateVectorSplat(lanes, c) : c; }

  // Round to nearest even; NaN becomes a quiet NaN with its sign (float16::from_float).
  llvm::Value* f32_to_f16(llvm::Value* x, int lanes) {
    auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
    llvm::Value* h = b_.CreateBitCast(b_.CreateFPTrunc(x, vec(b_.getHalfTy())), vec(b_.getInt16Ty()));
    llvm::Value* u = b_.CreateBitCast(x, vec(b_.getInt32Ty()));
    llvm::Value* sign = b_.CreateTrunc(b_.CreateAnd(b_.CreateLShr(u, splat(lanes, b_.getInt32(16))),
                                                    splat(lanes, b_.getInt32(0x8000))),
                                       vec(b_.getInt16Ty()));
    llvm::Value* nan = b_.CreateOr(sign, splat(lanes, b_.getInt16(0x7e00)));
    return b_.CreateSelect(b_.CreateFCmpUNO(x, x), nan, h);
  }
  // bfloat16::from_float in integer arithmetic.
  llvm::Value* f32_to_bf16(llvm::Value* x, int lanes) {
    auto vec = [&](llvm::Type* s) -> llvm::Type* { return lanes > 1 ? llvm::FixedVectorType::get(s, lanes) : s; };
    auto c32 = [&](uint32_t v) { return splat(lanes, b_.getInt32(v)); };
    llvm::Value* u = b_.CreateBitCast(x, vec(b_.getInt32Ty()));
    llvm::Value* hi = b_.CreateLShr(u, c32(16));
    llvm::Value* is_nan = b_.CreateICmpUGT(b_.CreateAnd(u, c32(0x7fffffffu)), c32(0x7f800000u));
    llvm::Value* nan = b_.CreateOr(hi, c32(0x40));
    llvm::Value* rounded =
        b_.CreateLShr(b_.CreateAdd(u, b_.CreateAdd(c32(0x7fffu), b_.CreateAnd(hi, c32(1)))), c32(16));
    return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), vec(b_.getInt16Ty()));
  }

  // ---- calls ----------------------------------------------------------------------------------

  llvm::Value* call(const ir::Call* op) {
    using O = ir::CallOp;
    DataType t = op->args[0].dtype();
    std::vector<llvm::Value*> a;
    for (auto& x : op->args) a.push_back(expr(x));
    llvm::Type* ty = a[0]->getType();
    auto intrinsic = [&](llvm::Intrinsic::ID id) { return b_.CreateIntrinsic(id, {ty}, a); };
    auto one = [&] { return llvm::ConstantFP::get(ty, 1.0); };
    if (ir::is_bitwise(op->op)) return bitwise(op->op, t, a);
    if (!t.is_float()) {  // abs is the only other integer call
      if (!is_signed(t)) return a[0];
      llvm::Value* zero = llvm::Constant::getNullValue(ty);
      return b_.CreateSelect(b_.CreateICmpSLT(a[0], zero), b_.CreateSub(zero, a[0]), a[0]);
    }
    switch (op->op) {
      case O::exp: return intrinsic(llvm::Intrinsic::exp);
      case O::exp2: return intrinsic(llvm::Intrinsic::exp2);
      case O::log: return intrinsic(llvm::Intrinsic::log);
      case O::log2: return intrinsic(llvm::Intrinsic::log2);
      case O::sqrt: return intrinsic(llvm::Intrinsic::sqrt);
      case O::floor: return intrinsic(llvm::Intrinsic::floor);
      case O::ceil: return intrinsic(llvm::Intrinsic::ceil);
      case O::trunc: return intrinsic(llvm::Intrinsic::trunc);
      case O::abs: return intrinsic(llvm::Intrinsic::fabs);
      case O::round: return intrinsic(llvm::Intrinsic::nearbyint);
      case O::pow: return intrinsic(llvm::Intrinsic::pow);
      case O::sin: return intrinsic(llvm::Intrinsic::sin);
      case O::cos: return intrinsic(llvm::Intrinsic::cos);
      case O::copysign: return intrinsic(llvm::Intrinsic::copysign);
      case O::fmod: return b_.CreateFRem(a[0], a[1]);
      case O::rsqrt: return b_.CreateFDiv(one(), b_.CreateIntrinsic(llvm::Intrinsic::sqrt, {ty}, {a[0]}));
      case O::sigmoid: {
        llvm::Value* e = b_.CreateIntrinsic(llvm::Intrinsic::exp, {ty}, {b_.CreateFNeg(a[0])});
        return b_.CreateFDiv(one(), b_.CreateFAdd(one(), e));
      }
      case O::isnan: return b_.CreateFCmpUNO(a[0], a[0]);
      case O::isinf: {
        llvm::Value* m = b_.CreateIntrinsic(llvm::Intrinsic::fabs, {ty}, {a[0]});
        return b_.CreateFCmpOEQ(m, llvm::ConstantFP::getInfinity(ty));
      }
      default: return libm_call(op->op, t, a);
    }
  }

  // ir::CallOp's bitwise ops; shift amounts outside [0, bits) never reach shl/lshr/ashr (whose
  // result would be poison): they give 0, or the sign bits for a signed right shift.
  llvm::Value* bitwise(ir::CallOp op, DataType t, const std::vector<llvm::Value*>& a) {
    using O = ir::CallOp;
    switch (op) {
      case O::bitwise_and: return b_.CreateAnd(a[0], a[1]);
      case O::bitwise_or: return b_.CreateOr(a[0], a[1]);
      case O::bitwise_xor: return b_.CreateXor(a[0], a[1]);
      case O::bitwise_not: return b_.CreateNot(a[0]);
      default: break;
    }
    llvm::Type* ty = a[0]->getType();
    llvm::Value* zero = llvm::Constant::getNullValue(ty);
    llvm::Value* in_range = b_.CreateICmpULT(a[1], llvm::ConstantInt::get(ty, uint64_t(t.bits)));
    if (op == O::shift_right && is_signed(t))
      return b_.CreateAShr(a[0], b_.CreateSelect(in_range, a[1], llvm::ConstantInt::get(ty, uint64_t(t.bits - 1))));
    llvm::Value* amount = b_.CreateSelect(in_range, a[1], zero);
    llvm::Value* r = op == O::shift_left ? b_.CreateShl(a[0], amount) : b_.CreateLShr(a[0], amount);
    return b_.CreateSelect(in_range, r, zero);
  }

  // The C math library function in the argument's precision (tanhf for float32), lane by
  // lane for vectors; the JIT resolves it from the process.
  llvm::Value* libm_call(ir::CallOp op, DataType t, const std::vector<llvm::Value*>& a) {
    llvm::Type* s = scalar_type(t.element_of());
    std::string name = std::string(ir::call_op_name(op)) + (t.bits == 32 ? "f" : "");
    std::vector<llvm::Type*> params(a.size(), s);
    llvm::FunctionCallee f = mod_.getOrInsertFunction(name, llvm::FunctionType::get(s, params, false));
    if (auto* fn = llvm::dyn_cast<llvm::Function>(f.getCallee())) fn->addFnAttr(llvm::Attribute::NoUnwind);
    if (t.is_scalar()) return b_.CreateCall(f, a);
    llvm::Value* out = llvm::UndefValue::get(a[0]->getType());
    for (int k = 0; k < t.lanes; ++k) {
      std::vector<llvm::Value*> lane;
      for (auto* x : a) lane.push_back(b_.CreateExtractElement(x, uint64_t(k)));
      out = b_.CreateInsertElement(out, b_.CreateCall(f, lane), uint64_t(k));
    }
    return out;
  }

  // ---- memory ---------------------------------------------------------------------------------

  // A stride-1 ramp index: the base of a contiguous access.
  static const ir::Ramp* contiguous(const ir::Expr& index) {
    auto* r = index.as<ir::Ramp>();
    return r && ir::is_const_int(r->stride, 1) ? r : nullptr;
  }
  llvm::Value* address(const ir::Buffer& buf, llvm::Value* index) {
    return b_.CreateInBoundsGEP(mem_elem(buf->dtype), buffer_ptr(buf), index);
  }

  llvm::Value* load(const ir::Load* op) {
    DataType t = op->dtype;
    llvm::Value* v;
    if (t.is_scalar()) {
      v = b_.CreateAlignedLoad(mem_type(t), address(op->buffer, expr(op->index)), elem_align(t));
    } else if (auto* r = contiguous(op->index)) {
      v = b_.CreateAlignedLoad(mem_type(t), address(op->buffer, expr(r->base)), elem_align(t));
    } else {
      llvm::Value* ptrs = address(op->buffer, expr(op->index));
      v = b_.CreateMaskedGather(mem_type(t), ptrs, elem_align(t));
    }
    // Any non-zero byte reads as true.
    return t.is_bool() ? b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType())) : v;
  }

  void store(const ir::Store* op) {
    DataType t = op->value.dtype();
    llvm::Value* v = expr(op->value);
    if (t.is_bool()) v = b_.CreateZExt(v, mem_type(t));
    if (t.is_scalar()) {
      b_.CreateAlignedStore(v, address(op->buffer, expr(op->index)), elem_align(t));
    } else if (auto* r = contiguous(op->index)) {
      b_.CreateAlignedStore(v, address(op->buffer, expr(r->base)), elem_align(t));
    } else {
      // Lanes are written in order, so with repeated indices the last lane wins.
      b_.CreateMaskedScatter(v, address(op->buffer, expr(op->index)), elem_align(t));
    }
  }

  // ---- statements -----------------------------------------------------------------------------

  void stmt(const ir::Stmt& s) {
    using K = ir::StmtKind;
    if (!s.defined()) return;
    switch (s.kind()) {
      case K::For: return loop(s.as<ir::For>());
      case K::Store: return store(s.as<ir::Store>());
      case K::Allocate: return allocate(s.as<ir::Allocate>());
      case K::IfThenElse: {
        auto* op = s.as<ir::IfThenElse>();
        llvm::Value* c = expr(op->condition);
        auto* then_bb = llvm::BasicBlock::Create(ctx_, "if.then", func_);
        auto* merge = llvm::BasicBlock::Create(ctx_, "if.end", func_);
        auto* else_bb = op->else_case.defined() ? llvm::BasicBlock::Create(ctx_, "if.else", func_) : merge;
        b_.CreateCondBr(c, then_bb, else_bb);
        b_.SetInsertPoint(then_bb);
        stmt(op->then_case);
        b_.CreateBr(merge);
        if (op->else_case.defined()) {
          b_.SetInsertPoint(else_bb);
          stmt(op->else_case);
          b_.CreateBr(merge);
        }
        b_.SetInsertPoint(merge);
        return;
      }
      case K::Seq:
        for (auto& x : s.as<ir::Seq>()->seq) stmt(x);
        return;
      case K::LetStmt: {
        auto* op = s.as<ir::LetStmt>();
        llvm::Value* v = expr(op->value);
        vars_[op->var.get()].push_back(v);
        stmt(op->body);
        vars_[op->var.get()].pop_back();
        return;
      }
      case K::Evaluate: {
        auto* op = s.as<ir::Evaluate>();
        if (!ir::is_const(op->value)) expr(op->value);
        return;
      }
      case K::Barrier: return;  // one CPU thread per iteration: nothing to wait for
      case K::ProducerStore: not_lowered("ProducerStore");
      case K::ProducerRealize: not_lowered("ProducerRealize");
    }
  }

  void loop(const ir::For* op) {
    if (op->for_kind == ir::ForKind::thread_binding)
      throw BackendError("nnvm.codegen.thread_binding",
                         str_cat("loop ", op->loop_var.name(), " is bound to GPU axis '", op->thread_tag,
                                 "', which this CPU back end cannot run; build the kernel for a GPU target"),
                         context());
    if (op->for_kind == ir::ForKind::parallel && !in_parallel_) return parallel_loop(op);
    DataType vt = op->loop_var.dtype();
    llvm::Value* begin = cast(expr(op->min), op->min.dtype(), vt);
    llvm::Value* end = b_.CreateAdd(begin, cast(expr(op->extent), op->extent.dtype(), vt));
    serial_loop(op->loop_var, begin, end, [&](llvm::Value* i) {
      vars_[op->loop_var.get()].push_back(i);
      stmt(op->body);
      vars_[op->loop_var.get()].pop_back();
    });
  }

  // for (i = begin; i < end; ++i) body(i), with i of begin's type.
  template <class Body>
  void serial_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end, Body body) {
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* head = llvm::BasicBlock::Create(ctx_, var.name() + ".head", func_);
    auto* body_bb = llvm::BasicBlock::Create(ctx_, var.name() + ".body", func_);
    auto* exit = llvm::BasicBlock::Create(ctx_, var.name() + ".end", func_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    auto* i = b_.CreatePHI(begin->getType(), 2, var.name());
    i->addIncoming(begin, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(i, end), body_bb, exit);
    b_.SetInsertPoint(body_bb);
    body(i);
    llvm::Value* next = b_.CreateAdd(i, llvm::ConstantInt::get(i->getType(), 1), "", false, true);
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
  }

  void allocate(const ir::Allocate* op) {
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

  // ---- parallel loops -------------------------------------------------------------------------

  // The loop body becomes `int32_t body(int64_t begin, int64_t end, void* closure)` over a
  // closure struct of what it captures, run through env->parallel_for (directly when env or
  // its parallel_for is NULL); a non-zero status returns from the kernel.
  void parallel_loop(const ir::For* op) {
    target::LoopCaptures cap = target::loop_captures(op, [&](const auto* node) { return bound(node); });
    llvm::Type* ptr = ptr_type(ctx_);
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::Type* i32 = b_.getInt32Ty();
    std::vector<llvm::Value*> values;
    std::vector<llvm::Type*> fields;
    for (auto* v : cap.vars) values.push_back(var_value(v));
    for (auto& b : cap.buffers) values.push_back(buffers_[b.get()].back());
    for (auto* v : values) fields.push_back(v->getType());
    auto* closure_type = llvm::StructType::get(ctx_, fields);
    llvm::Value* extent = cast(expr(op->extent), op->extent.dtype(), dtype::int64);

    llvm::Value* closure = llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(ptr));
    if (!fields.empty()) {
      closure = entry_alloca(closure_type, "closure", 8);
      for (size_t k = 0; k < values.size(); ++k)
        b_.CreateStore(values[k], b_.CreateStructGEP(closure_type, closure, unsigned(k)));
    }

    // The outlined body takes the captured buffers as noalias parameters (distinct buffers never
    // overlap), so LLVM may keep values in registers across stores; a thin entry unpacks the
    // closure into them.
    llvm::Function* outer = func_;
    llvm::IRBuilderBase::InsertPoint saved = b_.saveIP();
    std::string name = str_cat(symbol_, "_parallel_", parallel_count_++);
    std::vector<llvm::Type*> params{i64, i64};
    params.insert(params.end(), fields.begin(), fields.end());
    auto* inner = new_function(llvm::FunctionType::get(i32, params, false), name + "_body",
                               llvm::GlobalValue::InternalLinkage);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", inner));
    in_parallel_ = true;
    for (size_t k = 0; k < values.size(); ++k) {
      llvm::Argument* x = inner->getArg(unsigned(k) + 2);
      if (k < cap.vars.size()) {
        x->setName(cap.vars[k]->name);
        vars_[cap.vars[k]].push_back(x);
      } else {
        const ir::BufferNode* bnode = cap.buffers[k - cap.vars.size()].get();
        x->setName(bnode->name);
        x->addAttr(llvm::Attribute::NoAlias);
        buffers_[bnode].push_back(x);
      }
    }
    DataType vt = op->loop_var.dtype();
    llvm::Value* first = cast(expr(op->min), op->min.dtype(), dtype::int64);
    serial_loop(ir::Var("iter"), inner->getArg(0), inner->getArg(1), [&](llvm::Value* it) {
      vars_[op->loop_var.get()].push_back(cast(b_.CreateAdd(first, it), dtype::int64, vt));
      stmt(op->body);
      vars_[op->loop_var.get()].pop_back();
    });
    b_.CreateRet(b_.getInt32(NNVM_STATUS_OK));
    for (size_t k = 0; k < values.size(); ++k) {
      if (k < cap.vars.size()) vars_[cap.vars[k]].pop_back();
      else buffers_[cap.buffers[k - cap.vars.size()].get()].pop_back();
    }
    in_parallel_ = false;

    auto* body_fn = new_function(llvm::FunctionType::get(i32, {i64, i64, ptr}, false), name,
                                 llvm::GlobalValue::InternalLinkage);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body_fn));
    std::vector<llvm::Value*> inner_args{body_fn->getArg(0), body_fn->getArg(1)};
    for (size_t k = 0; k < values.size(); ++k)
      inner_args.push_back(b_.CreateLoad(fields[k], b_.CreateStructGEP(closure_type, body_fn->getArg(2), unsigned(k))));
    b_.CreateRet(b_.CreateCall(inner, inner_args));
    func_ = outer;
    b_.restoreIP(saved);

    // The launch.
    auto* env_type = llvm::StructType::get(ctx_, {ptr, ptr});
    auto* body_type = llvm::FunctionType::get(i32, {i64, i64, ptr}, false);
    auto* pfor_type = llvm::FunctionType::get(i32, {ptr, i64, ptr, ptr}, false);
    auto* check_fn = llvm::BasicBlock::Create(ctx_, "parallel.env", func_);
    auto* pool_bb = llvm::BasicBlock::Create(ctx_, "parallel.pool", func_);
    auto* direct_bb = llvm::BasicBlock::Create(ctx_, "parallel.direct", func_);
    auto* done = llvm::BasicBlock::Create(ctx_, "parallel.done", func_);
    b_.CreateCondBr(b_.CreateIsNull(env_), direct_bb, check_fn);
    b_.SetInsertPoint(check_fn);
    llvm::Value* pfor = b_.CreateLoad(ptr, b_.CreateStructGEP(env_type, env_, 1));
    b_.CreateCondBr(b_.CreateIsNull(pfor), direct_bb, pool_bb);
    b_.SetInsertPoint(pool_bb);
    llvm::Value* pool = b_.CreateLoad(ptr, b_.CreateStructGEP(env_type, env_, 0));
    llvm::Value* st_pool = b_.CreateCall(pfor_type, pfor, {pool, extent, body_fn, closure});
    b_.CreateBr(done);
    b_.SetInsertPoint(direct_bb);
    llvm::Value* st_direct = b_.CreateCall(body_type, body_fn, {b_.getInt64(0), extent, closure});
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    auto* status = b_.CreatePHI(i32, 2, "status");
    status->addIncoming(st_pool, pool_bb);
    status->addIncoming(st_direct, direct_bb);
    auto* fail = llvm::BasicBlock::Create(ctx_, "parallel.failed", func_);
    auto* next = llvm::BasicBlock::Create(ctx_, "parallel.next", func_);
    b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(0)), fail, next);
    b_.SetInsertPoint(fail);
    b_.CreateRet(status);
    b_.SetInsertPoint(next);
  }
};

}  // namespace

std::vector<std::string> kernel_symbols(const std::vector<ir::LoweredFunc>& fns) {
  // Symbols avoid each other and the C math library names the code may call ...
  std::set<std::string> taken = {"fabs", "fabsf", "nearbyint", "nearbyintf", "memcpy", "memset", "memmove"};
  // ... and C's keywords and `main`, so that an object file's C header compiles and links.
  for (const char* word : {"auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
                           "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
                           "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
                           "union", "unsigned", "void", "volatile", "while", "main"})
    taken.insert(word);
  for (int op = 0; op <= int(ir::CallOp::copysign); ++op) {
    taken.insert(ir::call_op_name(ir::CallOp(op)));
    taken.insert(std::string(ir::call_op_name(ir::CallOp(op))) + "f");
  }
  std::vector<std::string> symbols;
  for (auto& fn : fns) {
    std::string base;
    for (char c : fn.name.empty() ? std::string("kernel") : fn.name)
      base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (std::isdigit(static_cast<unsigned char>(base[0])) || base[0] == '_' || base.rfind("nnvm_", 0) == 0) base = "v" + base;
    std::string name = base;
    for (int k = 1; taken.count(name) || taken.count(name + "_workspace_bytes"); ++k) name = base + "_" + std::to_string(k);
    taken.insert(name);
    taken.insert(name + "_workspace_bytes");
    symbols.push_back(name);
  }
  return symbols;
}

std::vector<std::string> build_module(llvm::Module& m, const std::vector<ir::LoweredFunc>& fns,
                                      const std::string& cpu, const std::string& features) {
  std::vector<std::string> symbols = kernel_symbols(fns);
  Emitter e(m, cpu, features);
  for (auto& s : symbols) e.declare(s);
  for (size_t i = 0; i < fns.size(); ++i) e.emit_kernel(fns[i], symbols[i]);
  return symbols;
}

}  // namespace codegen::detail
NNVM_END_NAMESPACE
