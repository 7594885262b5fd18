// The reference interpreter's evaluator: walks a checked kernel body (interp/check.hpp) with
// variables and buffers resolved through maps keyed by node identity. Scalar expressions
// evaluate to one Lane, vector expressions into a LaneVec.
#pragma once

#include <optional>
#include <memory>
#include <span>
#include <unordered_map>

#include "nnvm/ir/function.hpp"
#include "nnvm/ir/functor.hpp"
#include "nnvm/ndarray.hpp"
#include "nnvm/target/interp/value.hpp"

NNVM_BEGIN_NAMESPACE
namespace target::interp {

class Machine {
 public:
  explicit Machine(const ir::LoweredFunc& fn) : fn_(fn) {}

  // `sizes` are the values of fn.size_vars, as bind_arguments() returns them; `args` must
  // already have been validated by it.
  void run(std::span<const BufferView> args, const std::vector<int64_t>& sizes) {
    for (size_t a = 0; a < args.size(); ++a)
      buffers_[fn_.params[a].get()] = BufferSlot{static_cast<std::byte*>(args[a].data), args[a].numel()};
    for (size_t k = 0; k < fn_.size_vars.size(); ++k) {
      const ir::Var& v = fn_.size_vars[k];
      VarSlot& slot = vars_[v.get()];
      slot.state = VarSlot::scalar;
      slot.s = convert(elem_of(v.dtype()), v.dtype().bits, sizes[k]);
    }
    exec(fn_.body);
  }

 private:
  struct VarSlot {
    enum State : uint8_t { unbound, scalar, vector } state = unbound;
    Lane s{0};
    std::vector<Lane> v;
  };
  struct BufferSlot {
    std::byte* data = nullptr;
    int64_t numel = -1;  // -1: not bound
  };

  // Binds `var` to `value` for the lifetime of the scope object and restores any outer binding
  // after. The value is computed before the scope opens, so it sees the outer binding.
  class VarScope {
   public:
    VarScope(Machine& m, const ir::VarNode* var, VarSlot value) : slot_(m.vars_[var]), saved_(std::move(slot_)) {
      slot_ = std::move(value);
    }
    ~VarScope() { slot_ = std::move(saved_); }
    VarScope(const VarScope&) = delete;
    VarScope& operator=(const VarScope&) = delete;
    VarSlot& slot() { return slot_; }

   private:
    VarSlot& slot_;
    VarSlot saved_;
  };

  std::vector<std::string> where() const { return {"kernel " + fn_.name}; }

  [[noreturn]] void unbound(const ir::VarNode* var) const {
    throw InternalError("nnvm.interp.unbound_var",
                        str_cat("variable ", var->name, " (", var->dtype, ") is used outside any scope that binds it"),
                        where());
  }
  [[noreturn]] void div_by_zero(const ir::ExprNode* n) const {
    throw UserError("nnvm.interp.div_by_zero",
                    str_cat("integer ", n->kind == ir::ExprKind::Div ? "division" : "modulo", " by zero on ",
                            n->dtype, " values"),
                    where());
  }
  [[noreturn]] void malformed(std::string msg) const {
    throw InternalError("nnvm.interp.malformed", std::move(msg), where());
  }

  BufferSlot& buffer(const ir::Buffer& b) {
    auto it = buffers_.find(b.get());
    if (it == buffers_.end() || it->second.numel < 0)
      throw InternalError("nnvm.interp.unbound_buffer",
                          str_cat("buffer ", b->name, " is neither a parameter nor allocated in an enclosing scope"),
                          where());
    return it->second;
  }
  void check_index(const ir::Buffer& b, const BufferSlot& slot, int64_t index, const char* access) const {
    if (index < 0 || index >= slot.numel)
      throw InternalError("nnvm.interp.out_of_bounds",
                          str_cat(access, " of buffer ", b->name, " at index ", index, " is out of bounds (",
                                  b->name, " has ", slot.numel, " elements)"),
                          where());
  }

  // ---- expressions -------------------------------------------------------------------------

  Lane eval(const ir::Expr& e) {
    using K = ir::ExprKind;
    const ir::ExprNode* n = e.get();
    switch (n->kind) {
      case K::IntImm: return Lane::of_i(static_cast<const ir::IntImm*>(n)->value);
      case K::UIntImm: return {static_cast<const ir::UIntImm*>(n)->value};
      case K::FloatImm:
        return convert(elem_of(n->dtype), n->dtype.bits, static_cast<const ir::FloatImm*>(n)->value, n->dtype.code);
      case K::Var: {
        auto* var = static_cast<const ir::VarNode*>(n);
        auto it = vars_.find(var);
        if (it == vars_.end() || it->second.state != VarSlot::scalar) unbound(var);
        return it->second.s;
      }
#define NNVM_BINARY_CASE(N) \
  case K::N: return eval_binary(n, static_cast<const ir::N*>(n)->a, static_cast<const ir::N*>(n)->b);
      NNVM_FOR_EACH_BINARY(NNVM_BINARY_CASE)
#undef NNVM_BINARY_CASE
      case K::Not: return {eval(static_cast<const ir::Not*>(n)->a).u == 0};
      case K::Select: {
        // Only the chosen branch runs: the other may be a guarded out-of-bounds load.
        auto* op = static_cast<const ir::Select*>(n);
        return eval(op->condition).u ? eval(op->true_value) : eval(op->false_value);
      }
      case K::Cast: {
        auto* op = static_cast<const ir::Cast*>(n);
        return cast_lane(elem_of(n->dtype), n->dtype.bits, elem_of(op->value.dtype()), eval(op->value), n->dtype.code);
      }
      case K::BitCast:
        return bit_cast_lane(elem_of(n->dtype), n->dtype.bits, eval(static_cast<const ir::BitCast*>(n)->value));
      case K::Call: {
        auto* op = static_cast<const ir::Call*>(n);
        DataType t = op->args[0].dtype();
        Lane x = eval(op->args[0]), y = op->args.size() > 1 ? eval(op->args[1]) : Lane{0};
        return call_lane(op->op, elem_of(t), t.bits, x, y);
      }
      case K::Load: {
        auto* op = static_cast<const ir::Load*>(n);
        BufferSlot& slot = buffer(op->buffer);
        int64_t index = eval(op->index).i();
        check_index(op->buffer, slot, index, "load");
        DataType t = op->buffer->dtype;
        return load_elem(elem_of(t), t.bits, slot.data + index * t.bytes(), t.code);
      }
      case K::Broadcast: return eval(static_cast<const ir::Broadcast*>(n)->value);
      case K::Let: {
        auto* op = static_cast<const ir::Let*>(n);
        VarScope scope(*this, op->var.get(), binding(op->value));
        return eval(op->body);
      }
      case K::Ramp: break;
      case K::Reduce:
      case K::ProducerLoad:
        throw InternalError("nnvm.interp.unlowered", "a tensor-level expression reached the interpreter", where());
    }
    malformed(str_cat("a ", n->dtype, " node was evaluated as a scalar"));
  }

  // Evaluates `e` (any lane count) into `out`.
  void eval_vec(const ir::Expr& e, LaneVec& out) {
    using K = ir::ExprKind;
    const ir::ExprNode* n = e.get();
    const int lanes = n->dtype.lanes;
    if (lanes == 1) {
      out.resize(1);
      out[0] = eval(e);
      return;
    }
    switch (n->kind) {
      case K::IntImm:
      case K::UIntImm:
      case K::FloatImm: {
        return fill(out, lanes, eval(e));
      }
      case K::Var: {
        auto* var = static_cast<const ir::VarNode*>(n);
        auto it = vars_.find(var);
        if (it == vars_.end() || it->second.state != VarSlot::vector || int(it->second.v.size()) != lanes) unbound(var);
        out.resize(lanes);
        std::copy(it->second.v.begin(), it->second.v.end(), out.data());
        return;
      }
#define NNVM_BINARY_CASE(N) \
  case K::N: return eval_binary_vec(n, static_cast<const ir::N*>(n)->a, static_cast<const ir::N*>(n)->b, out);
      NNVM_FOR_EACH_BINARY(NNVM_BINARY_CASE)
#undef NNVM_BINARY_CASE
      case K::Not: {
        eval_vec(static_cast<const ir::Not*>(n)->a, out);
        for (int k = 0; k < lanes; ++k) out[k] = {out[k].u == 0};
        return;
      }
      case K::Select: {
        // A vector select evaluates both sides; lowering only vectorizes one when that is safe.
        auto* op = static_cast<const ir::Select*>(n);
        LaneVec cond, other;
        eval_vec(op->condition, cond);
        eval_vec(op->true_value, out);
        eval_vec(op->false_value, other);
        expect_lanes(out, lanes);
        expect_lanes(other, lanes);
        for (int k = 0; k < lanes; ++k)
          if (!cond[cond.size() == 1 ? 0 : k].u) out[k] = other[k];
        return;
      }
      case K::Cast: {
        auto* op = static_cast<const ir::Cast*>(n);
        Elem to = elem_of(n->dtype), from = elem_of(op->value.dtype());
        eval_vec(op->value, out);
        expect_lanes(out, lanes);
        for (int k = 0; k < lanes; ++k) out[k] = cast_lane(to, n->dtype.bits, from, out[k], n->dtype.element_of().code);
        return;
      }
      case K::BitCast: {
        eval_vec(static_cast<const ir::BitCast*>(n)->value, out);
        expect_lanes(out, lanes);
        for (int k = 0; k < lanes; ++k) out[k] = bit_cast_lane(elem_of(n->dtype), n->dtype.bits, out[k]);
        return;
      }
      case K::Call: {
        auto* op = static_cast<const ir::Call*>(n);
        DataType t = op->args[0].dtype();
        Elem c = elem_of(t);
        LaneVec y;
        eval_vec(op->args[0], out);
        expect_lanes(out, lanes);
        if (op->args.size() > 1) {
          eval_vec(op->args[1], y);
          expect_lanes(y, lanes);
        }
        for (int k = 0; k < lanes; ++k) out[k] = call_lane(op->op, c, t.bits, out[k], y.size() ? y[k] : Lane{0});
        return;
      }
      case K::Load: {
        auto* op = static_cast<const ir::Load*>(n);
        BufferSlot& slot = buffer(op->buffer);
        LaneVec index;
        eval_vec(op->index, index);
        expect_lanes(index, lanes);
        for (int k = 0; k < lanes; ++k) check_index(op->buffer, slot, index[k].i(), "load");
        DataType t = op->buffer->dtype;
        Elem c = elem_of(t);
        out.resize(lanes);
        for (int k = 0; k < lanes; ++k) out[k] = load_elem(c, t.bits, slot.data + index[k].i() * t.bytes(), t.code);
        return;
      }
      case K::Ramp: {
        auto* op = static_cast<const ir::Ramp*>(n);
        Lane base = eval(op->base), stride = eval(op->stride);
        DataType t = op->base.dtype();
        Elem c = elem_of(t);
        out.resize(lanes);
        for (int k = 0; k < lanes; ++k) out[k] = wrap_int(c, t.bits, base.u + uint64_t(k) * stride.u);
        return;
      }
      case K::Broadcast: return fill(out, lanes, eval(static_cast<const ir::Broadcast*>(n)->value));
      case K::Let: {
        auto* op = static_cast<const ir::Let*>(n);
        VarScope scope(*this, op->var.get(), binding(op->value));
        return eval_vec(op->body, out);
      }
      case K::Reduce:
      case K::ProducerLoad:
        throw InternalError("nnvm.interp.unlowered", "a tensor-level expression reached the interpreter", where());
    }
  }

  // And/Or evaluate both operands too: the contract promises no short-circuit (vector code and
  // LLVM cannot give one), so a kernel whose right operand is only safe when guarded by the
  // left one is reported rather than excused.
  // a*b + c, c + a*b and a*b - c on float32/float64: one fused multiply-add, as LLVM's
  // fmuladd and the C compiler's contraction give on FMA hardware (docs/lowered_ir.md).
  struct FusedMulAdd {
    const ir::Mul* mul;
    const ir::Expr* addend;
    bool negate;
  };
  static std::optional<FusedMulAdd> fused_mul_add(ir::ExprKind k, const ir::Expr& lhs, const ir::Expr& rhs) {
    DataType t = lhs.dtype();
    if (!t.is_float() || t.is_storage_only() || (k != ir::ExprKind::Add && k != ir::ExprKind::Sub)) return std::nullopt;
    if (auto* m = lhs.as<ir::Mul>()) return FusedMulAdd{m, &rhs, k == ir::ExprKind::Sub};
    if (auto* m = rhs.as<ir::Mul>(); m && k == ir::ExprKind::Add) return FusedMulAdd{m, &lhs, false};
    return std::nullopt;
  }

  Lane eval_binary(const ir::ExprNode* n, const ir::Expr& lhs, const ir::Expr& rhs) {
    DataType t = lhs.dtype();
    Elem c = elem_of(t);
    if (auto f = fused_mul_add(n->kind, lhs, rhs)) {
      Lane a = eval(f->mul->a), b = eval(f->mul->b);
      return fused_multiply_add(c, a, b, eval(*f->addend), f->negate);
    }
    Lane a = eval(lhs), b = eval(rhs);
    if ((n->kind == ir::ExprKind::Div || n->kind == ir::ExprKind::Mod) && is_integral(c) && b.u == 0) div_by_zero(n);
    return binop(n->kind, c, t.bits, a, b);
  }
  void eval_binary_vec(const ir::ExprNode* n, const ir::Expr& lhs, const ir::Expr& rhs, LaneVec& out) {
    DataType t = lhs.dtype();
    Elem c = elem_of(t);
    const int lanes = n->dtype.lanes;
    if (auto f = fused_mul_add(n->kind, lhs, rhs)) {
      LaneVec b, addend;
      eval_vec(f->mul->a, out);
      eval_vec(f->mul->b, b);
      eval_vec(*f->addend, addend);
      expect_lanes(out, lanes);
      expect_lanes(b, lanes);
      expect_lanes(addend, lanes);
      for (int k = 0; k < lanes; ++k) out[k] = fused_multiply_add(c, out[k], b[k], addend[k], f->negate);
      return;
    }
    LaneVec b;
    eval_vec(lhs, out);
    eval_vec(rhs, b);
    expect_lanes(out, lanes);
    expect_lanes(b, lanes);
    bool check_zero = (n->kind == ir::ExprKind::Div || n->kind == ir::ExprKind::Mod) && is_integral(c);
    for (int k = 0; k < lanes; ++k) {
      if (check_zero && b[k].u == 0) div_by_zero(n);
      out[k] = binop(n->kind, c, t.bits, out[k], b[k]);
    }
  }

  static void fill(LaneVec& out, int lanes, Lane v) {
    out.resize(lanes);
    for (int k = 0; k < lanes; ++k) out[k] = v;
  }
  void expect_lanes(const LaneVec& v, int lanes) const {
    if (v.size() != lanes) malformed(str_cat("an operand has ", v.size(), " lanes where ", lanes, " were expected"));
  }

  VarSlot binding(const ir::Expr& value) {
    if (value.dtype().lanes == 1) return VarSlot{VarSlot::scalar, eval(value), {}};
    LaneVec v;
    eval_vec(value, v);
    return VarSlot{VarSlot::vector, Lane{0}, std::vector<Lane>(v.data(), v.data() + v.size())};
  }

  // ---- statements --------------------------------------------------------------------------

  void exec(const ir::Stmt& s) {
    using K = ir::StmtKind;
    if (!s.defined()) return;
    switch (s.kind()) {
      // Every loop kind runs serially, thread_binding loops included: the interpreter checks
      // what a kernel computes, not how it is spread over threads.
      case K::For: {
        auto* op = s.as<ir::For>();
        int64_t min = eval(op->min).i(), extent = eval(op->extent).i();
        DataType t = op->loop_var.dtype();
        Elem c = elem_of(t);
        VarScope scope(*this, op->loop_var.get(), VarSlot{VarSlot::scalar, Lane{0}, {}});
        VarSlot& slot = scope.slot();
        for (int64_t k = 0; k < extent; ++k) {
          slot.s = wrap_int(c, t.bits, uint64_t(min) + uint64_t(k));
          exec(op->body);
        }
        return;
      }
      case K::Store: return store(s.as<ir::Store>());
      case K::Allocate: return allocate(s.as<ir::Allocate>());
      case K::IfThenElse: {
        auto* op = s.as<ir::IfThenElse>();
        return exec(eval(op->condition).u ? op->then_case : op->else_case);
      }
      case K::Seq:
        for (auto& x : s.as<ir::Seq>()->seq) exec(x);
        return;
      case K::LetStmt: {
        auto* op = s.as<ir::LetStmt>();
        VarScope scope(*this, op->var.get(), binding(op->value));
        return exec(op->body);
      }
      case K::Evaluate: {
        LaneVec ignored;
        return eval_vec(s.as<ir::Evaluate>()->value, ignored);
      }
      case K::Barrier: return;  // loops run serially, so there is nothing to wait for
      case K::ProducerStore:
      case K::ProducerRealize:
        throw InternalError("nnvm.interp.unlowered", "a tensor-level statement reached the interpreter", where());
    }
  }

  void store(const ir::Store* op) {
    BufferSlot& slot = buffer(op->buffer);
    DataType t = op->buffer->dtype;
    Elem c = elem_of(t);
    if (op->index.dtype().lanes == 1) {
      int64_t index = eval(op->index).i();
      check_index(op->buffer, slot, index, "store");
      Lane v = eval(op->value);
      return store_elem(c, t.bits, slot.data + index * t.bytes(), v, t.code);
    }
    LaneVec index, value;
    eval_vec(op->index, index);
    eval_vec(op->value, value);
    if (value.size() != index.size()) malformed(str_cat("store to ", op->buffer->name, " has mismatched lanes"));
    // Check every lane before writing any, so a failing store leaves the buffer untouched.
    for (int k = 0; k < index.size(); ++k) check_index(op->buffer, slot, index[k].i(), "store");
    for (int k = 0; k < index.size(); ++k) store_elem(c, t.bits, slot.data + index[k].i() * t.bytes(), value[k], t.code);
  }

  void allocate(const ir::Allocate* op) {
    const ir::BufferNode* b = op->buffer.get();
    constexpr int64_t kMaxBytes = int64_t(1) << 34;
    int64_t numel = 1;
    for (auto& extent : b->shape) {
      int64_t e = eval(extent).i();
      if (e < 0 || (e > 0 && numel > kMaxBytes / e))
        throw InternalError("nnvm.interp.bad_allocation",
                            str_cat("allocation ", b->name, " has extent ", e, " (product so far ", numel, ")"),
                            where());
      numel *= e;
    }
    if (numel * b->dtype.bytes() > kMaxBytes)
      throw InternalError("nnvm.interp.bad_allocation", str_cat("allocation ", b->name, " of ", numel,
                                                                " elements exceeds the interpreter's 16 GiB limit"),
                          where());
    auto storage = std::make_unique<std::byte[]>(size_t(std::max<int64_t>(numel, 1) * b->dtype.bytes()));
    fill_uninitialized(elem_of(b->dtype), b->dtype.bits, storage.get(), numel);
    BufferSlot& slot = buffers_[b];
    BufferSlot saved = slot;
    slot = BufferSlot{storage.get(), numel};
    struct Restore {
      BufferSlot& slot;
      BufferSlot saved;
      ~Restore() { slot = saved; }
    } restore{slot, saved};
    exec(op->body);
  }

  const ir::LoweredFunc& fn_;
  std::unordered_map<const ir::VarNode*, VarSlot> vars_;
  std::unordered_map<const ir::BufferNode*, BufferSlot> buffers_;
};

}  // namespace target::interp
NNVM_END_NAMESPACE
