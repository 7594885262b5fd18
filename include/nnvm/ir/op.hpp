// Node factories with operand checks, constant helpers, and the untyped operator overloads
// that importers and passes use to build IR at run time. Operators fold nothing: the
// simplifier does that.
#pragma once

#include <cmath>
#include <type_traits>

#include "nnvm/ir/expr.hpp"
#include "nnvm/ir/small_float.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

// A scalar constant of type `t` (or a broadcast of one when t is a vector type).
inline Expr make_const(DataType t, double v) {
  if (t.lanes > 1) return Broadcast::make(make_const(t.element_of(), v), t.lanes);
  if (t.is_float()) return FloatImm::make(t, v);
  if (t.is_uint() || t.is_bool()) return UIntImm::make(t, static_cast<uint64_t>(v));
  return IntImm::make(t, static_cast<int64_t>(v));
}
inline Expr make_int_const(DataType t, int64_t v) {
  if (t.lanes > 1) return Broadcast::make(make_int_const(t.element_of(), v), t.lanes);
  if (t.is_float()) return FloatImm::make(t, double(v));
  if (t.is_uint() || t.is_bool()) return UIntImm::make(t, static_cast<uint64_t>(v));
  return IntImm::make(t, v);
}
inline Expr make_zero(DataType t) { return make_int_const(t, 0); }
inline Expr const_true(int lanes = 1) { return make_int_const(dtype::boolean.with_lanes(lanes), 1); }
inline Expr const_false(int lanes = 1) { return make_int_const(dtype::boolean.with_lanes(lanes), 0); }

// The value of an integer constant, looking through Broadcast; nullptr if not one.
inline const int64_t* as_const_int(const Expr& e) {
  if (!e.defined()) return nullptr;
  if (auto* b = e.as<Broadcast>()) return as_const_int(b->value);
  if (auto* i = e.as<IntImm>()) return &i->value;
  return nullptr;
}
inline bool is_const_int(const Expr& e, int64_t v) {
  if (auto* p = as_const_int(e)) return *p == v;
  if (auto* u = e.as<UIntImm>()) return v >= 0 && u->value == uint64_t(v);
  if (auto* b = e.as<Broadcast>()) return is_const_int(b->value, v);
  return false;
}
inline bool is_const(const Expr& e) {
  if (!e.defined()) return false;
  if (auto* b = e.as<Broadcast>()) return is_const(b->value);
  return e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>();
}

// The largest and smallest finite values of a scalar type, as the identity of min/max.
inline Expr max_value(DataType t) {
  if (const SmallFloatFormat* f = small_float_format(t)) return make_const(t, f->max_value());
  if (t.is_float()) return make_const(t, t.bits == 64 ? 1.7976931348623157e308 : 3.4028234663852886e38);
  if (t.is_uint() || t.is_bool()) return UIntImm::make(t, t.bits == 64 ? ~uint64_t(0) : (uint64_t(1) << t.bits) - 1);
  return IntImm::make(t, t.bits == 64 ? INT64_MAX : (int64_t(1) << (t.bits - 1)) - 1);
}
inline Expr min_value(DataType t) {
  if (const SmallFloatFormat* f = small_float_format(t)) return make_const(t, -f->max_value());
  if (t.is_float()) return make_const(t, t.bits == 64 ? -1.7976931348623157e308 : -3.4028234663852886e38);
  if (t.is_uint() || t.is_bool()) return UIntImm::make(t, 0);
  return IntImm::make(t, t.bits == 64 ? INT64_MIN : -(int64_t(1) << (t.bits - 1)));
}

namespace detail {
inline void check_arith(const char* op, const Expr& a, const Expr& b) {
  if (!a.defined() || !b.defined())
    throw UserError("nnvm.ir.undefined_operand", str_cat("operand of ", op, " is undefined"));
  if (a.dtype() != b.dtype())
    throw UserError("nnvm.ir.dtype_mismatch",
                    str_cat("operands of ", op, " have different types ", a.dtype(), " and ",
                            b.dtype(), "; insert a cast"));
  if (a.dtype().is_storage_only())
    throw UserError("nnvm.ir.storage_only_arith",
                    str_cat(a.dtype(), " is a storage type: cast to float32 before ", op));
}
inline void check_bool(const char* op, const Expr& a) {
  if (!a.dtype().is_bool())
    throw UserError("nnvm.ir.not_bool", str_cat("operand of ", op, " must be bool, got ", a.dtype()));
}
}  // namespace detail

#define NNVM_ARITH_MAKE(Name, opname)                              \
  inline Expr Name::make(Expr a, Expr b) {                         \
    detail::check_arith(opname, a, b);                             \
    DataType t = a.dtype();                                        \
    return make_expr<Name>(t, std::move(a), std::move(b));         \
  }
NNVM_ARITH_MAKE(Add, "+")
NNVM_ARITH_MAKE(Sub, "-")
NNVM_ARITH_MAKE(Mul, "*")
NNVM_ARITH_MAKE(Div, "/")
NNVM_ARITH_MAKE(Mod, "%")
NNVM_ARITH_MAKE(Min, "min")
NNVM_ARITH_MAKE(Max, "max")
#undef NNVM_ARITH_MAKE

#define NNVM_CMP_MAKE(Name, opname)                                                  \
  inline Expr Name::make(Expr a, Expr b) {                                           \
    detail::check_arith(opname, a, b);                                               \
    DataType t = dtype::boolean.with_lanes(a.dtype().lanes);                         \
    return make_expr<Name>(t, std::move(a), std::move(b));                           \
  }
NNVM_CMP_MAKE(EQ, "==")
NNVM_CMP_MAKE(NE, "!=")
NNVM_CMP_MAKE(LT, "<")
NNVM_CMP_MAKE(LE, "<=")
NNVM_CMP_MAKE(GT, ">")
NNVM_CMP_MAKE(GE, ">=")
#undef NNVM_CMP_MAKE

inline Expr And::make(Expr a, Expr b) {
  detail::check_arith("&&", a, b);
  detail::check_bool("&&", a);
  DataType t = a.dtype();
  return make_expr<And>(t, std::move(a), std::move(b));
}
inline Expr Or::make(Expr a, Expr b) {
  detail::check_arith("||", a, b);
  detail::check_bool("||", a);
  DataType t = a.dtype();
  return make_expr<Or>(t, std::move(a), std::move(b));
}
inline Expr Not::make(Expr a) {
  detail::check_bool("!", a);
  DataType t = a.dtype();
  return make_expr<Not>(t, std::move(a));
}
inline Expr Select::make(Expr c, Expr t, Expr f) {
  detail::check_bool("select condition", c);
  if (t.dtype() != f.dtype())
    throw UserError("nnvm.ir.dtype_mismatch",
                    str_cat("select branches have different types ", t.dtype(), " and ", f.dtype()));
  if (c.dtype().lanes != 1 && c.dtype().lanes != t.dtype().lanes)
    throw UserError("nnvm.ir.lanes_mismatch", "select condition lanes differ from its values");
  DataType ty = t.dtype();
  return make_expr<Select>(ty, std::move(c), std::move(t), std::move(f));
}
inline Expr Cast::make(DataType t, Expr v) {
  if (t.lanes != v.dtype().lanes) t = t.with_lanes(v.dtype().lanes);
  if (v.dtype() == t) return v;
  return make_expr<Cast>(t, std::move(v));
}
inline Expr BitCast::make(DataType t, Expr v) {
  DataType from = v.dtype();
  t = t.with_lanes(from.lanes);
  if (from.is_storage_only() || t.is_storage_only() || from.is_handle() || t.is_handle())
    throw UserError("nnvm.ir.bitcast_dtype", str_cat("bit cast from ", from, " to ", t,
                                                      ": storage and handle types are not supported"));
  if (from.is_bool() || t.is_bool()) {
    if (from.bits > 8 || t.bits > 8)
      throw UserError("nnvm.ir.bitcast_dtype", str_cat("bit cast from ", from, " to ", t, " changes the width"));
    return Cast::make(t, std::move(v));
  }
  if (from.bits != t.bits)
    throw UserError("nnvm.ir.bitcast_dtype", str_cat("bit cast from ", from, " to ", t, " changes the width (",
                                                      from.bits, " to ", t.bits, " bits)"));
  if (from == t) return v;
  if (from.is_integer() && t.is_integer()) return Cast::make(t, std::move(v));
  return make_expr<BitCast>(t, std::move(v));
}
inline Expr Call::make(CallOp op, std::vector<Expr> args) {
  if (int(args.size()) != call_op_arity(op))
    throw UserError("nnvm.ir.call_arity", str_cat(call_op_name(op), " takes ", call_op_arity(op),
                                                  " argument(s), got ", args.size()));
  for (auto& a : args) {
    if (a.dtype() != args[0].dtype())
      throw UserError("nnvm.ir.dtype_mismatch", str_cat("arguments of ", call_op_name(op), " differ in type"));
  }
  DataType t = args[0].dtype();
  if (t.is_storage_only())
    throw UserError("nnvm.ir.storage_only_arith",
                    str_cat(t, " is a storage type: cast to float32 before ", call_op_name(op)));
  if (is_bitwise(op)) {
    if (!t.is_integer())
      throw UserError("nnvm.ir.call_dtype", str_cat(call_op_name(op), " needs an integer argument, got ", t));
    return make_expr<Call>(t, op, std::move(args));
  }
  bool needs_float = op != CallOp::abs;
  if (needs_float && !t.is_float())
    throw UserError("nnvm.ir.call_dtype", str_cat(call_op_name(op), " needs a float argument, got ", t));
  if (op == CallOp::isnan || op == CallOp::isinf) t = dtype::boolean.with_lanes(t.lanes);
  return make_expr<Call>(t, op, std::move(args));
}
inline Expr Load::make(Buffer b, Expr index) {
  if (!index.dtype().is_int())
    throw UserError("nnvm.ir.index_dtype", str_cat("load index of buffer ", b->name, " must be an integer"));
  DataType t = b->dtype.with_lanes(index.dtype().lanes);
  return make_expr<Load>(t, std::move(b), std::move(index));
}
inline Expr Ramp::make(Expr base, Expr stride, int lanes) {
  if (lanes < 2) throw UserError("nnvm.ir.ramp_lanes", "a ramp needs at least 2 lanes");
  if (base.dtype() != stride.dtype() || !base.dtype().is_scalar())
    throw UserError("nnvm.ir.dtype_mismatch", "ramp base and stride must be scalars of one type");
  DataType t = base.dtype().with_lanes(lanes);
  return make_expr<Ramp>(t, std::move(base), std::move(stride), lanes);
}
inline Expr Broadcast::make(Expr value, int lanes) {
  if (!value.dtype().is_scalar()) throw UserError("nnvm.ir.broadcast_vector", "broadcast of a vector");
  DataType t = value.dtype().with_lanes(lanes);
  return make_expr<Broadcast>(t, std::move(value), lanes);
}
inline Expr Let::make(Var var, Expr value, Expr body) {
  if (var.dtype() != value.dtype())
    throw UserError("nnvm.ir.dtype_mismatch", str_cat("let ", var.name(), " binds a ", value.dtype()));
  DataType t = body.dtype();
  return make_expr<Let>(t, std::move(var), std::move(value), std::move(body));
}
inline Expr IntImm::make(DataType t, int64_t v) {
  // Wrap to the type's width so constants always hold representable values.
  if (t.bits < 64) {
    uint64_t m = (uint64_t(1) << t.bits) - 1, u = uint64_t(v) & m;
    v = (u >> (t.bits - 1)) ? int64_t(u | ~m) : int64_t(u);
  }
  return make_expr<IntImm>(t, v);
}
inline Expr UIntImm::make(DataType t, uint64_t v) {
  if (t.is_bool()) v = v != 0;
  else if (t.bits < 64) v &= (uint64_t(1) << t.bits) - 1;
  return make_expr<UIntImm>(t, v);
}
inline Expr FloatImm::make(DataType t, double v) {
  if (t.bits == 32) v = double(float(v));
  else if (t.is_storage_only() && t.is_float()) v = storage_round(t, v);
  return make_expr<FloatImm>(t, v);
}
// The value x for which combine(x, y) == y: where a reduction starts. For floats that is +inf
// for min and -inf for max (not the largest finite value: the max of {-inf} is -inf).
inline Expr combiner_identity(Combiner c, DataType t) {
  switch (c) {
    case Combiner::sum: return make_zero(t);
    case Combiner::prod: return make_int_const(t, 1);
    case Combiner::min: return t.is_float() ? make_const(t, INFINITY) : max_value(t);
    case Combiner::max: return t.is_float() ? make_const(t, -INFINITY) : min_value(t);
  }
  return Expr();
}
inline Expr Reduce::make(Combiner c, Expr source, std::vector<IterVar> axes, Expr init, Expr condition) {
  if (axes.empty()) throw UserError("nnvm.te.reduce_no_axis", "a reduction needs at least one axis");
  for (auto& ax : axes)
    if (ax->kind != IterKind::reduce)
      throw UserError("nnvm.te.reduce_axis_kind",
                      str_cat("axis ", ax.name(), " is not a reduction axis; make it with reduce_axis()"));
  DataType t = source.dtype();
  if (t.is_storage_only())
    throw UserError("nnvm.ir.storage_only_arith", str_cat(t, " is a storage type: cast before reducing"));
  if (!init.defined()) {
    init = combiner_identity(c, t);
  } else if (init.dtype() != t) {
    throw UserError("nnvm.ir.dtype_mismatch", str_cat("reduction init is ", init.dtype(), " but the source is ", t));
  }
  return make_expr<Reduce>(t, c, std::move(source), std::move(axes), std::move(init), std::move(condition));
}

inline Expr::Expr(int v) : Expr(IntImm::make(dtype::index, v)) {}
inline Expr::Expr(int64_t v) : Expr(IntImm::make(dtype::index, v)) {}
inline Expr::Expr(float v) : Expr(FloatImm::make(dtype::float32, v)) {}
inline Expr::Expr(double v) : Expr(FloatImm::make(dtype::float64, v)) {}

// Broadcasts a scalar operand to the other operand's lane count.
inline void match_lanes(Expr& a, Expr& b) {
  if (a.dtype().lanes == 1 && b.dtype().lanes > 1) a = Broadcast::make(a, b.dtype().lanes);
  else if (b.dtype().lanes == 1 && a.dtype().lanes > 1) b = Broadcast::make(b, a.dtype().lanes);
}

// ---- untyped operators: Expr op Expr, and Expr op literal (the literal takes the Expr's type)

template <class T>
concept Arithmetic = std::is_arithmetic_v<T>;

#define NNVM_UNTYPED_BINOP(op, Node)                                                  \
  inline Expr operator op(Expr a, Expr b) {                                           \
    match_lanes(a, b);                                                                \
    return Node::make(std::move(a), std::move(b));                                    \
  }                                                                                   \
  template <Arithmetic T>                                                             \
  Expr operator op(const Expr& a, T b) {                                              \
    return a op make_const(a.dtype(), double(b));                                     \
  }                                                                                   \
  template <Arithmetic T>                                                             \
  Expr operator op(T a, const Expr& b) {                                              \
    return make_const(b.dtype(), double(a)) op b;                                     \
  }
NNVM_UNTYPED_BINOP(+, Add)
NNVM_UNTYPED_BINOP(-, Sub)
NNVM_UNTYPED_BINOP(*, Mul)
NNVM_UNTYPED_BINOP(/, Div)
NNVM_UNTYPED_BINOP(%, Mod)
NNVM_UNTYPED_BINOP(==, EQ)
NNVM_UNTYPED_BINOP(!=, NE)
NNVM_UNTYPED_BINOP(<, LT)
NNVM_UNTYPED_BINOP(<=, LE)
NNVM_UNTYPED_BINOP(>, GT)
NNVM_UNTYPED_BINOP(>=, GE)
NNVM_UNTYPED_BINOP(&&, And)
NNVM_UNTYPED_BINOP(||, Or)
#undef NNVM_UNTYPED_BINOP

inline Expr operator-(const Expr& a) { return make_zero(a.dtype()) - a; }
inline Expr operator!(const Expr& a) { return Not::make(a); }
inline Expr min(Expr a, Expr b) { match_lanes(a, b); return Min::make(std::move(a), std::move(b)); }
inline Expr max(Expr a, Expr b) { match_lanes(a, b); return Max::make(std::move(a), std::move(b)); }
inline Expr select(Expr c, Expr t, Expr f) {
  match_lanes(t, f);
  return Select::make(std::move(c), std::move(t), std::move(f));
}
inline Expr cast(DataType t, Expr v) { return Cast::make(t, std::move(v)); }
inline Expr bit_cast(DataType t, Expr v) { return BitCast::make(t, std::move(v)); }
inline Expr call(CallOp op, Expr a) { return Call::make(op, {std::move(a)}); }
inline Expr call(CallOp op, Expr a, Expr b) {
  match_lanes(a, b);
  return Call::make(op, {std::move(a), std::move(b)});
}

}  // namespace ir
NNVM_END_NAMESPACE
