// Expression nodes of the loop-nest IR. Nodes are immutable plain structs behind a refcounted
// handle (`Expr`); each node type has a static `make()` that checks its operands.
// Variables are nodes identified by identity: two `Var`s named "i" are different variables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnvm/ir/dtype.hpp"

NNVM_BEGIN_NAMESPACE
namespace ir {

// Every expression node, written once as X(kind, node type). ExprKind and the visitors'
// dispatch (functor.hpp) are generated from it; the switches that handle every node (printer,
// interpreter, LLVM emitter) have no default case and the build treats -Wswitch as an error, so
// a new node fails to compile wherever it is not handled. docs/architecture.md: adding a node.
#define NNVM_IR_EXPR_NODES(X)                                                                     \
  X(IntImm, IntImm) X(UIntImm, UIntImm) X(FloatImm, FloatImm) X(Var, VarNode)                     \
  X(Add, Add) X(Sub, Sub) X(Mul, Mul) X(Div, Div) X(Mod, Mod) X(Min, Min) X(Max, Max)             \
  X(EQ, EQ) X(NE, NE) X(LT, LT) X(LE, LE) X(GT, GT) X(GE, GE) X(And, And) X(Or, Or) X(Not, Not)   \
  X(Select, Select) X(Cast, Cast) X(BitCast, BitCast) X(Call, Call) X(Load, Load) X(Ramp, Ramp)                       \
  X(Broadcast, Broadcast) X(Let, Let) X(Reduce, Reduce) X(ProducerLoad, ProducerLoad)

enum class ExprKind : uint8_t {
#define NNVM_IR_KIND(kind, node) kind,
  NNVM_IR_EXPR_NODES(NNVM_IR_KIND)
#undef NNVM_IR_KIND
};

struct ExprNode {
  const ExprKind kind;
  const DataType dtype;
  ExprNode(ExprKind k, DataType t) : kind(k), dtype(t) {}
  virtual ~ExprNode() = default;
};

// Refcounted handle to an immutable expression node. A default-constructed Expr is undefined.
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> n) : node_(std::move(n)) {}
  // Literal conversions (int64 index constants and float32 constants) keep call sites short.
  Expr(int v);
  Expr(int64_t v);
  Expr(float v);
  Expr(double v);

  bool defined() const { return node_ != nullptr; }
  DataType dtype() const { return node_->dtype; }
  ExprKind kind() const { return node_->kind; }
  const ExprNode* get() const { return node_.get(); }
  const ExprNode* operator->() const { return node_.get(); }
  template <class T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Expr& o) const { return node_ == o.node_; }
  const std::shared_ptr<const ExprNode>& node_ptr() const { return node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

template <class Derived, ExprKind K>
struct ExprNodeBase : ExprNode {
  static constexpr ExprKind kKind = K;
  explicit ExprNodeBase(DataType t) : ExprNode(K, t) {}
};

template <class N, class... Args>
Expr make_expr(Args&&... args) {
  return Expr(std::make_shared<const N>(std::forward<Args>(args)...));
}

// ---- constants ---------------------------------------------------------------------------

struct IntImm : ExprNodeBase<IntImm, ExprKind::IntImm> {
  int64_t value;
  IntImm(DataType t, int64_t v) : ExprNodeBase(t), value(v) {}
  static Expr make(DataType t, int64_t v);
};
struct UIntImm : ExprNodeBase<UIntImm, ExprKind::UIntImm> {
  uint64_t value;
  UIntImm(DataType t, uint64_t v) : ExprNodeBase(t), value(v) {}
  static Expr make(DataType t, uint64_t v);
};
struct FloatImm : ExprNodeBase<FloatImm, ExprKind::FloatImm> {
  double value;
  FloatImm(DataType t, double v) : ExprNodeBase(t), value(v) {}
  static Expr make(DataType t, double v);
};

// ---- variables ---------------------------------------------------------------------------

struct VarNode : ExprNodeBase<VarNode, ExprKind::Var> {
  std::string name;  // a printing hint only
  VarNode(DataType t, std::string n) : ExprNodeBase(t), name(std::move(n)) {}
};

class Var : public Expr {
 public:
  Var() = default;
  explicit Var(std::string name, DataType t = dtype::index)
      : Expr(std::make_shared<const VarNode>(t, std::move(name))) {}
  explicit Var(std::shared_ptr<const VarNode> n) : Expr(std::move(n)) {}
  const VarNode* get() const { return static_cast<const VarNode*>(Expr::get()); }
  const VarNode* operator->() const { return get(); }
  const std::string& name() const { return get()->name; }
  // Only valid when `e` holds a VarNode.
  static Var from(const Expr& e) {
    return Var(std::static_pointer_cast<const VarNode>(e.node_ptr()));
  }
};

struct VarHash {
  size_t operator()(const Var& v) const { return std::hash<const void*>()(v.get()); }
};
struct VarEq {
  bool operator()(const Var& a, const Var& b) const { return a.get() == b.get(); }
};

// ---- arithmetic, comparison, logic -------------------------------------------------------

// Div and Mod on integers truncate toward zero, as in C; index expressions that lowering
// produces are non-negative, where truncation and flooring agree.
#define NNVM_BINARY_NODE(Name)                                            \
  struct Name : ExprNodeBase<Name, ExprKind::Name> {                      \
    Expr a, b;                                                            \
    Name(DataType t, Expr a_, Expr b_)                                    \
        : ExprNodeBase(t), a(std::move(a_)), b(std::move(b_)) {}          \
    static Expr make(Expr a, Expr b);                                     \
  };
NNVM_BINARY_NODE(Add)
NNVM_BINARY_NODE(Sub)
NNVM_BINARY_NODE(Mul)
NNVM_BINARY_NODE(Div)
NNVM_BINARY_NODE(Mod)
NNVM_BINARY_NODE(Min)
NNVM_BINARY_NODE(Max)
NNVM_BINARY_NODE(EQ)
NNVM_BINARY_NODE(NE)
NNVM_BINARY_NODE(LT)
NNVM_BINARY_NODE(LE)
NNVM_BINARY_NODE(GT)
NNVM_BINARY_NODE(GE)
NNVM_BINARY_NODE(And)
NNVM_BINARY_NODE(Or)
#undef NNVM_BINARY_NODE

struct Not : ExprNodeBase<Not, ExprKind::Not> {
  Expr a;
  Not(DataType t, Expr a_) : ExprNodeBase(t), a(std::move(a_)) {}
  static Expr make(Expr a);
};

struct Select : ExprNodeBase<Select, ExprKind::Select> {
  Expr condition, true_value, false_value;
  Select(DataType t, Expr c, Expr tv, Expr fv)
      : ExprNodeBase(t), condition(std::move(c)), true_value(std::move(tv)), false_value(std::move(fv)) {}
  static Expr make(Expr c, Expr t, Expr f);
};

struct Cast : ExprNodeBase<Cast, ExprKind::Cast> {
  Expr value;
  Cast(DataType t, Expr v) : ExprNodeBase(t), value(std::move(v)) {}
  static Expr make(DataType t, Expr v);
};

// The bits of `value` read as another type of the same width (C++'s std::bit_cast). Only a float
// to or from an integer makes this node: between integers of one width a Cast already keeps the
// bits (two's complement), and bool (one byte holding 0 or 1) converts as a Cast.
struct BitCast : ExprNodeBase<BitCast, ExprKind::BitCast> {
  Expr value;
  BitCast(DataType t, Expr v) : ExprNodeBase(t), value(std::move(v)) {}
  static Expr make(DataType t, Expr v);
};

// Pure functions. Every emitter and the interpreter know each of them.
// exp .. copysign are float math (abs also takes integers). The bitwise ops after them take
// integers only (Call::make checks) and never have undefined results: shift amounts outside
// [0, bits) give 0 for shift_left and for shift_right of unsigned values, and all sign bits for
// shift_right of signed values (an arithmetic shift).
enum class CallOp : uint8_t {
  exp, exp2, log, log2, log1p, expm1, sqrt, rsqrt, tanh, erf, sigmoid, pow, abs, floor, ceil,
  round, trunc, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, asinh, acosh, atanh, fmod,
  isnan, isinf, copysign,
  bitwise_and, bitwise_or, bitwise_xor, bitwise_not, shift_left, shift_right,
};
inline const char* call_op_name(CallOp op) {
  static const char* const names[] = {
      "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "tanh", "erf", "sigmoid",
      "pow", "abs", "floor", "ceil", "round", "trunc", "sin", "cos", "tan", "asin", "acos",
      "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "fmod", "isnan", "isinf",
      "copysign", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left",
      "shift_right"};
  return names[static_cast<int>(op)];
}
inline bool is_bitwise(CallOp op) { return op >= CallOp::bitwise_and; }
inline int call_op_arity(CallOp op) {
  switch (op) {
    case CallOp::pow: case CallOp::atan2: case CallOp::fmod: case CallOp::copysign: return 2;
    case CallOp::bitwise_and: case CallOp::bitwise_or: case CallOp::bitwise_xor: return 2;
    case CallOp::shift_left: case CallOp::shift_right: return 2;
    default: return 1;
  }
}

struct Call : ExprNodeBase<Call, ExprKind::Call> {
  CallOp op;
  std::vector<Expr> args;
  Call(DataType t, CallOp o, std::vector<Expr> a) : ExprNodeBase(t), op(o), args(std::move(a)) {}
  static Expr make(CallOp op, std::vector<Expr> args);
};

// ---- memory ------------------------------------------------------------------------------

enum class MemoryScope : uint8_t { global, shared, local };
inline const char* scope_name(MemoryScope s) {
  return s == MemoryScope::global ? "global" : s == MemoryScope::shared ? "shared" : "local";
}

// A flat, typed memory region: a kernel argument or an allocation. Identity matters, as for Var.
struct BufferNode {
  std::string name;
  DataType dtype;           // element type (scalar)
  std::vector<Expr> shape;  // logical shape, row-major and compact; may be symbolic
  MemoryScope scope = MemoryScope::global;
};
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::string name, DataType dtype, std::vector<Expr> shape,
         MemoryScope scope = MemoryScope::global)
      : node_(std::make_shared<const BufferNode>(
            BufferNode{std::move(name), dtype, std::move(shape), scope})) {}
  bool defined() const { return node_ != nullptr; }
  const BufferNode* get() const { return node_.get(); }
  const BufferNode* operator->() const { return node_.get(); }
  bool same_as(const Buffer& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const BufferNode> node_;
};

// Reads element(s) `index` of `buffer`. A vector index (a Ramp) yields a vector value.
struct Load : ExprNodeBase<Load, ExprKind::Load> {
  Buffer buffer;
  Expr index;
  Load(DataType t, Buffer b, Expr i) : ExprNodeBase(t), buffer(std::move(b)), index(std::move(i)) {}
  static Expr make(Buffer b, Expr index);
};

// ---- vectors -----------------------------------------------------------------------------

// The vector base, base + stride, ..., base + (lanes-1)*stride.
struct Ramp : ExprNodeBase<Ramp, ExprKind::Ramp> {
  Expr base, stride;
  int lanes;
  Ramp(DataType t, Expr b, Expr s, int l)
      : ExprNodeBase(t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  static Expr make(Expr base, Expr stride, int lanes);
};
struct Broadcast : ExprNodeBase<Broadcast, ExprKind::Broadcast> {
  Expr value;
  int lanes;
  Broadcast(DataType t, Expr v, int l) : ExprNodeBase(t), value(std::move(v)), lanes(l) {}
  static Expr make(Expr value, int lanes);
};

struct Let : ExprNodeBase<Let, ExprKind::Let> {
  Var var;
  Expr value, body;
  Let(DataType t, Var v, Expr val, Expr b)
      : ExprNodeBase(t), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Expr make(Var var, Expr value, Expr body);
};

// ---- tensor-level nodes (present before storage flattening only) ---------------------------

struct Range {
  Expr min, extent;
};

enum class IterKind : uint8_t { data_par, reduce };

// An iteration variable over a range: a compute axis, a reduction axis, or a loop that a
// schedule made (split, fuse). Identity is the variable's.
struct IterVarNode {
  Var var;
  Range dom;
  IterKind kind = IterKind::data_par;
};
class IterVar {
 public:
  IterVar() = default;
  IterVar(Var v, Range dom, IterKind kind)
      : node_(std::make_shared<const IterVarNode>(IterVarNode{std::move(v), std::move(dom), kind})) {}
  const IterVarNode* get() const { return node_.get(); }
  const IterVarNode* operator->() const { return node_.get(); }
  bool defined() const { return node_ != nullptr; }
  bool same_as(const IterVar& o) const { return node_ == o.node_; }
  const Var& var() const { return node_->var; }
  const std::string& name() const { return node_->var.name(); }

 private:
  std::shared_ptr<const IterVarNode> node_;
};

enum class Combiner : uint8_t { sum, prod, min, max };
inline const char* combiner_name(Combiner c) {
  static const char* const names[] = {"sum", "prod", "min", "max"};
  return names[static_cast<int>(c)];
}

// A commutative reduction of `source` over `axes`, starting from `init`. Only allowed as the
// top of a compute body.
struct Reduce : ExprNodeBase<Reduce, ExprKind::Reduce> {
  Combiner combiner;
  Expr source;
  std::vector<IterVar> axes;
  Expr init;       // the combiner's identity unless the user gave one
  Expr condition;  // only points where this holds contribute (true when undefined)
  Reduce(DataType t, Combiner c, Expr s, std::vector<IterVar> ax, Expr i, Expr cond)
      : ExprNodeBase(t), combiner(c), source(std::move(s)), axes(std::move(ax)),
        init(std::move(i)), condition(std::move(cond)) {}
  static Expr make(Combiner c, Expr source, std::vector<IterVar> axes, Expr init = Expr(),
                   Expr condition = Expr());
};

// A tensor as the IR sees it before storage flattening: identified by identity, with a name
// (a hint, as for variables), extents and element type. How it is produced is not the IR's
// business: the tensor DSL's te::TensorNode extends it with its operation.
struct ProducerNode {
  std::string name;
  std::vector<Expr> shape;
  DataType dtype;
};

// Reads element `indices` of a tensor (a placeholder or a compute stage).
struct ProducerLoad : ExprNodeBase<ProducerLoad, ExprKind::ProducerLoad> {
  std::shared_ptr<const ProducerNode> tensor;
  std::vector<Expr> indices;
  ProducerLoad(DataType t, std::shared_ptr<const ProducerNode> ten, std::vector<Expr> idx)
      : ExprNodeBase(t), tensor(std::move(ten)), indices(std::move(idx)) {}
};

}  // namespace ir
NNVM_END_NAMESPACE
