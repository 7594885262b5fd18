// nnvm 0.1.0, single header generated from include/nnvm/nnvm.hpp and the
// headers it includes. Do not edit. Regenerate with: cmake -P cmake/amalgamate.cmake
// (or build the target `amalgamate`).
#pragma once

// begin nnvm/nnvm.hpp
// Everything: the kernel author's header (<nnvm/tensor.hpp>), the op library and the graph layer
// (compile and run whole models). The single header single_include/nnvm/nnvm.hpp is this file
// with every header it reaches pasted in.

// begin nnvm/tensor.hpp
// The kernel author's header: the tensor DSL, schedules, lowering, the reference interpreter,
// the C emitter and the C JIT. Compiles with `-I include` alone. The op library is
// <nnvm/ops/ops.hpp>, the graph layer <nnvm/graph/graph.hpp>, and <nnvm/nnvm.hpp> all of it.

// begin nnvm/config.hpp
// Namespace and version macros shared by every nnvm header.

#define NNVM_VERSION_MAJOR 0
#define NNVM_VERSION_MINOR 1
#define NNVM_VERSION_PATCH 0

// Public code lives in an inline versioned namespace so that nnvm links beside MXNet's
// historical `nnvm::` symbols and beside other nnvm versions without ODR clashes.
#define NNVM_BEGIN_NAMESPACE \
  namespace nnvm {           \
  inline namespace v0_1 {
#define NNVM_END_NAMESPACE \
  }                        \
  }
// end nnvm/config.hpp
// begin nnvm/error.hpp
// Error types. Every message starts with a stable id such as `[nnvm.schedule.split_factor]`
// and ends with the context chain (stage › axis, graph › node › attribute).

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>


NNVM_BEGIN_NAMESPACE

class Error : public std::runtime_error {
 public:
  Error(std::string id, std::string message, std::vector<std::string> context = {})
      : std::runtime_error(format(id, message, context)),
        id_(std::move(id)),
        message_(std::move(message)),
        context_(std::move(context)) {}

  // The stable id without brackets, e.g. "nnvm.schedule.split_factor".
  const std::string& id() const noexcept { return id_; }
  const std::string& message() const noexcept { return message_; }
  const std::vector<std::string>& context() const noexcept { return context_; }

 private:
  static std::string format(const std::string& id, const std::string& message,
                            const std::vector<std::string>& context) {
    std::string out = "[" + id + "] " + message;
    if (!context.empty()) {
      out += " (";
      for (size_t i = 0; i < context.size(); ++i) out += (i ? " \u203a " : "") + context[i];
      out += ")";
    }
    return out;
  }

  std::string id_, message_;
  std::vector<std::string> context_;
};

// A mistake in what the user wrote: a bad schedule, a wrong buffer, an unbound size.
class UserError : public Error {
  using Error::Error;
};
// A model file or graph that cannot be imported.
class ImportError : public Error {
  using Error::Error;
};
// A back end (system C compiler, LLVM, driver) failed.
class BackendError : public Error {
  using Error::Error;
};
// A bug in nnvm itself: an invariant that should have held did not.
class InternalError : public Error {
  using Error::Error;
};

namespace detail {
inline void append_all(std::ostringstream&) {}
template <class T, class... Rest>
void append_all(std::ostringstream& os, const T& first, const Rest&... rest) {
  os << first;
  append_all(os, rest...);
}
}  // namespace detail

// `s` with control characters (and DEL) written as \xNN, for echoing names and paths from a
// model file or command line inside a message: a terminal escape sequence stays inert text, and
// a NUL cannot cut the message short where it is read as a C string.
inline std::string printable(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
      continue;
    }
    static const char hex[] = "0123456789abcdef";
    out += "\\x";
    out += hex[u >> 4];
    out += hex[u & 15];
  }
  return out;
}

// Concatenates streamable parts into one string; keeps error sites short.
template <class... Parts>
std::string str_cat(const Parts&... parts) {
  std::ostringstream os;
  detail::append_all(os, parts...);
  return os.str();
}

#define NNVM_INTERNAL_CHECK(cond, ...)                                                 \
  do {                                                                                 \
    if (!(cond))                                                                       \
      throw ::nnvm::InternalError("nnvm.internal",                                     \
                                  ::nnvm::str_cat(__FILE__, ":", __LINE__, ": check '" \
                                                  #cond "' failed: ", __VA_ARGS__));   \
  } while (0)

NNVM_END_NAMESPACE
// end nnvm/error.hpp
// begin nnvm/ir/dtype.hpp
// Scalar and vector data types of IR values, and the C++ storage types that map onto them.

#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>


NNVM_BEGIN_NAMESPACE

// IEEE half precision, used only as a storage type: cast to float32 before arithmetic.
struct float16 {
  uint16_t bits = 0;
  float16() = default;
  explicit float16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }

  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu, out;
    if (exp == 0x1f) {
      out = sign | 0x7f800000u | (man << 13);
    } else if (exp != 0) {
      out = sign | ((exp + 112) << 23) | (man << 13);
    } else if (man == 0) {
      out = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do { ++e; man <<= 1; } while (!(man & 0x400u));
      out = sign | uint32_t(112 - e) << 23 | ((man & 0x3ffu) << 13);
    }
    float f;
    std::memcpy(&f, &out, 4);
    return f;
  }
  // Round to nearest even, with overflow to infinity and NaN preserved.
  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds past 65504
    if (absx < 0x38800000u) {  // result is subnormal or zero
      if (absx < 0x33000000u) return uint16_t(sign);
      uint32_t man = (absx & 0x7fffffu) | 0x800000u;
      int shift = 113 - int(absx >> 23) + 13;
      uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1u))) ++half;
      return uint16_t(sign | half);
    }
    uint32_t half = ((absx >> 13) - (112u << 10));
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
    return uint16_t(sign | half);
  }
};

// bfloat16 (the upper half of a float32), also a storage type only.
struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  explicit bfloat16(float f) : bits(from_float(f)) {}
  explicit operator float() const { return to_float(bits); }
  static float to_float(uint16_t b) {
    uint32_t x = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
  }
  static uint16_t from_float(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
    x += 0x7fffu + ((x >> 16) & 1u);
    return uint16_t(x >> 16);
  }
};

// A data type: a code, a bit width and a lane count (lanes > 1 for vector values).
struct DataType {
  enum class Code : uint8_t { Int, UInt, Float, BFloat, Bool, Handle };
  Code code = Code::Int;
  uint8_t bits = 32;
  uint16_t lanes = 1;

  constexpr DataType() = default;
  constexpr DataType(Code c, int b, int l = 1) : code(c), bits(uint8_t(b)), lanes(uint16_t(l)) {}

  static constexpr DataType int_(int bits, int lanes = 1) { return {Code::Int, bits, lanes}; }
  static constexpr DataType uint(int bits, int lanes = 1) { return {Code::UInt, bits, lanes}; }
  static constexpr DataType float_(int bits, int lanes = 1) { return {Code::Float, bits, lanes}; }
  static constexpr DataType bool_(int lanes = 1) { return {Code::Bool, 8, lanes}; }
  static constexpr DataType handle() { return {Code::Handle, 64, 1}; }

  constexpr bool is_int() const { return code == Code::Int; }
  constexpr bool is_uint() const { return code == Code::UInt; }
  constexpr bool is_integer() const { return code == Code::Int || code == Code::UInt; }
  constexpr bool is_float() const { return code == Code::Float || code == Code::BFloat; }
  constexpr bool is_bool() const { return code == Code::Bool; }
  constexpr bool is_handle() const { return code == Code::Handle; }
  constexpr bool is_scalar() const { return lanes == 1; }
  constexpr bool is_vector() const { return lanes > 1; }
  // float16 and bfloat16 are storage types: loads, stores and casts only, no arithmetic.
  constexpr bool is_storage_only() const {
    return (code == Code::Float && bits == 16) || code == Code::BFloat;
  }
  constexpr int bytes() const { return (bits + 7) / 8; }
  constexpr DataType element_of() const { return {code, bits, 1}; }
  constexpr DataType with_lanes(int l) const { return {code, bits, l}; }

  friend constexpr bool operator==(DataType a, DataType b) {
    return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
  }
  friend constexpr bool operator!=(DataType a, DataType b) { return !(a == b); }

  std::string str() const {
    std::string s;
    switch (code) {
      case Code::Int: s = "int" + std::to_string(bits); break;
      case Code::UInt: s = "uint" + std::to_string(bits); break;
      case Code::Float: s = "float" + std::to_string(bits); break;
      case Code::BFloat: s = "bfloat" + std::to_string(bits); break;
      case Code::Bool: s = "bool"; break;
      case Code::Handle: s = "handle"; break;
    }
    if (lanes > 1) s += "x" + std::to_string(lanes);
    return s;
  }
  friend std::ostream& operator<<(std::ostream& os, DataType t) { return os << t.str(); }
};

namespace dtype {
inline constexpr DataType boolean = DataType::bool_();
inline constexpr DataType int8 = DataType::int_(8), int16 = DataType::int_(16),
                          int32 = DataType::int_(32), int64 = DataType::int_(64);
inline constexpr DataType uint8 = DataType::uint(8), uint16 = DataType::uint(16),
                          uint32 = DataType::uint(32), uint64 = DataType::uint(64);
inline constexpr DataType float16 = DataType::float_(16), float32 = DataType::float_(32),
                          float64 = DataType::float_(64);
inline constexpr DataType bfloat16 = DataType(DataType::Code::BFloat, 16);
// Index arithmetic (loop variables, shapes, flattened offsets) is int64 throughout.
inline constexpr DataType index = int64;
// Every scalar type a tensor can hold, in the order messages list them.
inline constexpr DataType tensor_types[] = {boolean, int8,    int16,   int32,   int64,   uint8,   uint16,
                                            uint32,  uint64,  float16, bfloat16, float32, float64};
}  // namespace dtype

// The C++ type <-> DataType mapping used by the typed DSL and by typed buffers.
template <class T>
struct dtype_of;
#define NNVM_DTYPE_OF(T, V) \
  template <>               \
  struct dtype_of<T> {      \
    static constexpr DataType value = V; \
  };
NNVM_DTYPE_OF(bool, dtype::boolean)
NNVM_DTYPE_OF(int8_t, dtype::int8)
NNVM_DTYPE_OF(int16_t, dtype::int16)
NNVM_DTYPE_OF(int32_t, dtype::int32)
NNVM_DTYPE_OF(int64_t, dtype::int64)
NNVM_DTYPE_OF(uint8_t, dtype::uint8)
NNVM_DTYPE_OF(uint16_t, dtype::uint16)
NNVM_DTYPE_OF(uint32_t, dtype::uint32)
NNVM_DTYPE_OF(uint64_t, dtype::uint64)
NNVM_DTYPE_OF(float16, dtype::float16)
NNVM_DTYPE_OF(bfloat16, dtype::bfloat16)
NNVM_DTYPE_OF(float, dtype::float32)
NNVM_DTYPE_OF(double, dtype::float64)
#undef NNVM_DTYPE_OF

template <class T>
inline constexpr DataType dtype_v = dtype_of<T>::value;

// The tensor type named as DataType::str() writes it ("float32", "uint8", "bool"), or nullopt.
// Ops take data types as such names (Cast's `to`), so no importer's type codes reach them.
inline std::optional<DataType> parse_dtype(std::string_view name) {
  for (DataType t : dtype::tensor_types)
    if (t.str() == name) return t;
  return std::nullopt;
}

// "bool, int8, ..., float64", for messages that list the names parse_dtype accepts.
inline std::string tensor_type_names() {
  std::string s;
  for (DataType t : dtype::tensor_types) s += (s.empty() ? "" : ", ") + t.str();
  return s;
}

template <class T, class = void>
struct has_dtype : std::false_type {};
template <class T>
struct has_dtype<T, std::void_t<decltype(dtype_of<T>::value)>> : std::true_type {};

NNVM_END_NAMESPACE
// end nnvm/ir/dtype.hpp
// begin nnvm/ir/expr.hpp
// Expression nodes of the loop-nest IR. Nodes are immutable plain structs behind a refcounted
// handle (`Expr`); each node type has a static `make()` that checks its operands.
// Variables are nodes identified by identity: two `Var`s named "i" are different variables.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>


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
  X(Select, Select) X(Cast, Cast) X(Call, Call) X(Load, Load) X(Ramp, Ramp)                       \
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
// end nnvm/ir/expr.hpp
// begin nnvm/ir/op.hpp
// Node factories with operand checks, constant helpers, and the untyped operator overloads
// that importers and passes use to build IR at run time. Operators fold nothing: the
// simplifier does that.

#include <cmath>
#include <type_traits>


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
  if (t.is_float()) return make_const(t, t.bits == 64 ? 1.7976931348623157e308 : 3.4028234663852886e38);
  if (t.is_uint() || t.is_bool()) return UIntImm::make(t, t.bits == 64 ? ~uint64_t(0) : (uint64_t(1) << t.bits) - 1);
  return IntImm::make(t, t.bits == 64 ? INT64_MAX : (int64_t(1) << (t.bits - 1)) - 1);
}
inline Expr min_value(DataType t) {
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
  else if (t.is_storage_only()) v = t.code == DataType::Code::BFloat ? bfloat16::to_float(bfloat16::from_float(float(v)))
                                                                    : float16::to_float(float16::from_float(float(v)));
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
inline Expr call(CallOp op, Expr a) { return Call::make(op, {std::move(a)}); }
inline Expr call(CallOp op, Expr a, Expr b) {
  match_lanes(a, b);
  return Call::make(op, {std::move(a), std::move(b)});
}

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/op.hpp
// begin nnvm/ir/stmt.hpp
// Statement nodes of the loop-nest IR.


NNVM_BEGIN_NAMESPACE
namespace ir {

// Every statement node, written once as X(kind, node type); see NNVM_IR_EXPR_NODES.
#define NNVM_IR_STMT_NODES(X)                                                                       \
  X(For, For) X(Store, Store) X(Allocate, Allocate) X(IfThenElse, IfThenElse) X(Seq, Seq)           \
  X(LetStmt, LetStmt) X(Evaluate, Evaluate) X(Barrier, Barrier) X(ProducerStore, ProducerStore)     \
  X(ProducerRealize, ProducerRealize)

enum class StmtKind : uint8_t {
#define NNVM_IR_KIND(kind, node) kind,
  NNVM_IR_STMT_NODES(NNVM_IR_KIND)
#undef NNVM_IR_KIND
};

struct StmtNode {
  const StmtKind kind;
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> n) : node_(std::move(n)) {}
  bool defined() const { return node_ != nullptr; }
  StmtKind kind() const { return node_->kind; }
  const StmtNode* get() const { return node_.get(); }
  template <class T>
  const T* as() const {
    return node_ && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

template <class Derived, StmtKind K>
struct StmtNodeBase : StmtNode {
  static constexpr StmtKind kKind = K;
  StmtNodeBase() : StmtNode(K) {}
};

template <class N, class... Args>
Stmt make_stmt(Args&&... args) {
  return Stmt(std::make_shared<const N>(std::forward<Args>(args)...));
}

enum class ForKind : uint8_t { serial, parallel, vectorized, unrolled, thread_binding };
inline const char* for_kind_name(ForKind k) {
  static const char* const names[] = {"for", "parallel", "vectorized", "unrolled", "bound"};
  return names[static_cast<int>(k)];
}

// for (loop_var = min; loop_var < min + extent; ++loop_var) body
// A thread_binding loop names the GPU axis in thread_tag ("blockIdx.x", "threadIdx.y", ...).
struct For : StmtNodeBase<For, StmtKind::For> {
  Var loop_var;
  Expr min, extent;
  ForKind for_kind;
  Stmt body;
  std::string thread_tag;
  For(Var v, Expr mn, Expr ext, ForKind k, Stmt b, std::string tag = {})
      : loop_var(std::move(v)), min(std::move(mn)), extent(std::move(ext)), for_kind(k),
        body(std::move(b)), thread_tag(std::move(tag)) {}
  static Stmt make(Var v, Expr min, Expr extent, ForKind k, Stmt body, std::string tag = {}) {
    if (!v.dtype().is_int() || !min.dtype().is_int() || !extent.dtype().is_int())
      throw UserError("nnvm.ir.for_dtype", str_cat("loop ", v.name(), " needs integer bounds"));
    return make_stmt<For>(std::move(v), std::move(min), std::move(extent), k, std::move(body), std::move(tag));
  }
};

// buffer[index] = value; a vector index stores a vector value.
struct Store : StmtNodeBase<Store, StmtKind::Store> {
  Buffer buffer;
  Expr value, index;
  Store(Buffer b, Expr v, Expr i) : buffer(std::move(b)), value(std::move(v)), index(std::move(i)) {}
  static Stmt make(Buffer b, Expr value, Expr index) {
    if (value.dtype() != b->dtype.with_lanes(index.dtype().lanes))
      throw UserError("nnvm.ir.dtype_mismatch", str_cat("store of ", value.dtype(), " into buffer ",
                                                        b->name, " of ", b->dtype));
    return make_stmt<Store>(std::move(b), std::move(value), std::move(index));
  }
};

// Scratch memory for `buffer` (size = product of its shape) live during `body`. Global-scope
// allocations come from the caller's workspace, never from malloc.
struct Allocate : StmtNodeBase<Allocate, StmtKind::Allocate> {
  Buffer buffer;
  Stmt body;
  Allocate(Buffer b, Stmt s) : buffer(std::move(b)), body(std::move(s)) {}
  static Stmt make(Buffer b, Stmt body) { return make_stmt<Allocate>(std::move(b), std::move(body)); }
};

struct IfThenElse : StmtNodeBase<IfThenElse, StmtKind::IfThenElse> {
  Expr condition;
  Stmt then_case, else_case;  // else_case may be undefined
  IfThenElse(Expr c, Stmt t, Stmt e) : condition(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  static Stmt make(Expr c, Stmt t, Stmt e = Stmt()) {
    if (!c.dtype().is_bool() || !c.dtype().is_scalar())
      throw UserError("nnvm.ir.not_bool", "if condition must be a scalar bool");
    return make_stmt<IfThenElse>(std::move(c), std::move(t), std::move(e));
  }
};

struct Seq : StmtNodeBase<Seq, StmtKind::Seq> {
  std::vector<Stmt> seq;
  explicit Seq(std::vector<Stmt> s) : seq(std::move(s)) {}
  // Flattens nested sequences and drops undefined statements; one statement stays itself.
  static Stmt make(const std::vector<Stmt>& stmts) {
    std::vector<Stmt> flat;
    for (auto& s : stmts) {
      if (!s.defined()) continue;
      if (auto* q = s.as<Seq>()) flat.insert(flat.end(), q->seq.begin(), q->seq.end());
      else flat.push_back(s);
    }
    if (flat.size() == 1) return flat[0];
    return make_stmt<Seq>(std::move(flat));
  }
};

struct LetStmt : StmtNodeBase<LetStmt, StmtKind::LetStmt> {
  Var var;
  Expr value;
  Stmt body;
  LetStmt(Var v, Expr val, Stmt b) : var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static Stmt make(Var v, Expr value, Stmt body) {
    if (v.dtype() != value.dtype())
      throw UserError("nnvm.ir.dtype_mismatch", str_cat("let ", v.name(), " binds a ", value.dtype()));
    return make_stmt<LetStmt>(std::move(v), std::move(value), std::move(body));
  }
};

struct Evaluate : StmtNodeBase<Evaluate, StmtKind::Evaluate> {
  Expr value;
  explicit Evaluate(Expr v) : value(std::move(v)) {}
  static Stmt make(Expr v) { return make_stmt<Evaluate>(std::move(v)); }
};

// Synchronizes the threads that share memory of `scope` (a GPU __syncthreads for shared).
struct Barrier : StmtNodeBase<Barrier, StmtKind::Barrier> {
  MemoryScope scope;
  explicit Barrier(MemoryScope s) : scope(s) {}
  static Stmt make(MemoryScope s = MemoryScope::shared) { return make_stmt<Barrier>(s); }
};

// tensor(indices) = value, before storage flattening.
struct ProducerStore : StmtNodeBase<ProducerStore, StmtKind::ProducerStore> {
  std::shared_ptr<const ProducerNode> tensor;
  Expr value;
  std::vector<Expr> indices;
  ProducerStore(std::shared_ptr<const ProducerNode> t, Expr v, std::vector<Expr> i)
      : tensor(std::move(t)), value(std::move(v)), indices(std::move(i)) {}
};

// Storage for an intermediate tensor over `bounds` during `body`, before storage flattening.
struct ProducerRealize : StmtNodeBase<ProducerRealize, StmtKind::ProducerRealize> {
  std::shared_ptr<const ProducerNode> tensor;
  std::vector<Range> bounds;
  MemoryScope scope;
  Stmt body;
  ProducerRealize(std::shared_ptr<const ProducerNode> t, std::vector<Range> b, MemoryScope s, Stmt body_)
      : tensor(std::move(t)), bounds(std::move(b)), scope(s), body(std::move(body_)) {}
};

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/stmt.hpp
// begin nnvm/ir/functor.hpp
// IRVisitor walks every node; IRMutator rebuilds a tree bottom-up, sharing every subtree
// that did not change. Override the `visit` overloads of the nodes a pass cares about.


NNVM_BEGIN_NAMESPACE
namespace ir {

#define NNVM_FOR_EACH_BINARY(X) \
  X(Add) X(Sub) X(Mul) X(Div) X(Mod) X(Min) X(Max) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE) X(And) X(Or)

class IRVisitor {
 public:
  virtual ~IRVisitor() = default;

  virtual void visit_expr(const Expr& e) {
    if (!e.defined()) return;
    switch (e.kind()) {
#define NNVM_CASE(kind, node) case ExprKind::kind: return visit(e.as<node>());
      NNVM_IR_EXPR_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
  }
  virtual void visit_stmt(const Stmt& s) {
    if (!s.defined()) return;
    switch (s.kind()) {
#define NNVM_CASE(kind, node) case StmtKind::kind: return visit(s.as<node>());
      NNVM_IR_STMT_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
  }

 protected:
  virtual void visit(const IntImm*) {}
  virtual void visit(const UIntImm*) {}
  virtual void visit(const FloatImm*) {}
  virtual void visit(const VarNode*) {}
#define NNVM_VISIT(N) \
  virtual void visit(const N* op) { visit_expr(op->a); visit_expr(op->b); }
  NNVM_FOR_EACH_BINARY(NNVM_VISIT)
#undef NNVM_VISIT
  virtual void visit(const Not* op) { visit_expr(op->a); }
  virtual void visit(const Select* op) {
    visit_expr(op->condition); visit_expr(op->true_value); visit_expr(op->false_value);
  }
  virtual void visit(const Cast* op) { visit_expr(op->value); }
  virtual void visit(const Call* op) { for (auto& a : op->args) visit_expr(a); }
  virtual void visit(const Load* op) { visit_expr(op->index); }
  virtual void visit(const Ramp* op) { visit_expr(op->base); visit_expr(op->stride); }
  virtual void visit(const Broadcast* op) { visit_expr(op->value); }
  virtual void visit(const Let* op) { visit_expr(op->value); visit_expr(op->body); }
  virtual void visit(const Reduce* op) {
    visit_expr(op->source); visit_expr(op->init); visit_expr(op->condition);
  }
  virtual void visit(const ProducerLoad* op) { for (auto& i : op->indices) visit_expr(i); }

  virtual void visit(const For* op) {
    visit_expr(op->min); visit_expr(op->extent); visit_stmt(op->body);
  }
  virtual void visit(const Store* op) { visit_expr(op->value); visit_expr(op->index); }
  virtual void visit(const Allocate* op) {
    for (auto& e : op->buffer->shape) visit_expr(e);
    visit_stmt(op->body);
  }
  virtual void visit(const IfThenElse* op) {
    visit_expr(op->condition); visit_stmt(op->then_case); visit_stmt(op->else_case);
  }
  virtual void visit(const Seq* op) { for (auto& s : op->seq) visit_stmt(s); }
  virtual void visit(const LetStmt* op) { visit_expr(op->value); visit_stmt(op->body); }
  virtual void visit(const Evaluate* op) { visit_expr(op->value); }
  virtual void visit(const Barrier*) {}
  virtual void visit(const ProducerStore* op) {
    visit_expr(op->value);
    for (auto& i : op->indices) visit_expr(i);
  }
  virtual void visit(const ProducerRealize* op) {
    for (auto& r : op->bounds) { visit_expr(r.min); visit_expr(r.extent); }
    visit_stmt(op->body);
  }
};

class IRMutator {
 public:
  virtual ~IRMutator() = default;

  virtual Expr mutate(const Expr& e) {
    if (!e.defined()) return e;
    switch (e.kind()) {
#define NNVM_CASE(kind, node) case ExprKind::kind: return visit(e.as<node>(), e);
      NNVM_IR_EXPR_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
    return e;
  }
  virtual Stmt mutate(const Stmt& s) {
    if (!s.defined()) return s;
    switch (s.kind()) {
#define NNVM_CASE(kind, node) case StmtKind::kind: return visit(s.as<node>(), s);
      NNVM_IR_STMT_NODES(NNVM_CASE)
#undef NNVM_CASE
    }
    return s;
  }

 protected:
  virtual Expr visit(const IntImm*, const Expr& e) { return e; }
  virtual Expr visit(const UIntImm*, const Expr& e) { return e; }
  virtual Expr visit(const FloatImm*, const Expr& e) { return e; }
  virtual Expr visit(const VarNode*, const Expr& e) { return e; }
  // Binary nodes are rebuilt through their checked factory; vector lanes are matched so a
  // mutator may turn one side into a vector (the vectorizer relies on this).
#define NNVM_MUTATE(N)                                                    \
  virtual Expr visit(const N* op, const Expr& e) {                        \
    Expr a = mutate(op->a), b = mutate(op->b);                            \
    if (a.same_as(op->a) && b.same_as(op->b)) return e;                   \
    match_lanes(a, b);                                                    \
    return N::make(std::move(a), std::move(b));                           \
  }
  NNVM_FOR_EACH_BINARY(NNVM_MUTATE)
#undef NNVM_MUTATE
  virtual Expr visit(const Not* op, const Expr& e) {
    Expr a = mutate(op->a);
    return a.same_as(op->a) ? e : Not::make(a);
  }
  virtual Expr visit(const Select* op, const Expr& e) {
    Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
    match_lanes(t, f);
    if (c.dtype().lanes == 1 && t.dtype().lanes > 1) c = Broadcast::make(c, t.dtype().lanes);
    if (c.dtype().lanes > 1 && t.dtype().lanes == 1) {
      t = Broadcast::make(t, c.dtype().lanes);
      f = Broadcast::make(f, c.dtype().lanes);
    }
    return Select::make(c, t, f);
  }
  virtual Expr visit(const Cast* op, const Expr& e) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? e : Cast::make(op->dtype.with_lanes(v.dtype().lanes), v);
  }
  virtual Expr visit(const Call* op, const Expr& e) {
    std::vector<Expr> args;
    bool changed = false;
    for (auto& a : op->args) {
      args.push_back(mutate(a));
      changed |= !args.back().same_as(a);
    }
    if (!changed) return e;
    if (args.size() == 2) match_lanes(args[0], args[1]);
    return Call::make(op->op, std::move(args));
  }
  virtual Expr visit(const Load* op, const Expr& e) {
    Expr i = mutate(op->index);
    return i.same_as(op->index) ? e : Load::make(op->buffer, i);
  }
  virtual Expr visit(const Ramp* op, const Expr& e) {
    Expr b = mutate(op->base), s = mutate(op->stride);
    return b.same_as(op->base) && s.same_as(op->stride) ? e : Ramp::make(b, s, op->lanes);
  }
  virtual Expr visit(const Broadcast* op, const Expr& e) {
    Expr v = mutate(op->value);
    if (v.same_as(op->value)) return e;
    return v.dtype().lanes > 1 ? v : Broadcast::make(v, op->lanes);
  }
  virtual Expr visit(const Let* op, const Expr& e) {
    Expr v = mutate(op->value), b = mutate(op->body);
    return v.same_as(op->value) && b.same_as(op->body) ? e : Let::make(op->var, v, b);
  }
  virtual Expr visit(const Reduce* op, const Expr& e) {
    Expr s = mutate(op->source), i = mutate(op->init), c = mutate(op->condition);
    if (s.same_as(op->source) && i.same_as(op->init) && c.same_as(op->condition)) return e;
    return make_expr<Reduce>(s.dtype(), op->combiner, s, op->axes, i, c);
  }
  virtual Expr visit(const ProducerLoad* op, const Expr& e) {
    std::vector<Expr> idx;
    bool changed = false;
    for (auto& i : op->indices) {
      idx.push_back(mutate(i));
      changed |= !idx.back().same_as(i);
    }
    return changed ? make_expr<ProducerLoad>(op->dtype, op->tensor, std::move(idx)) : e;
  }

  virtual Stmt visit(const For* op, const Stmt& s) {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    Stmt b = mutate(op->body);
    if (mn.same_as(op->min) && ext.same_as(op->extent) && b.same_as(op->body)) return s;
    return For::make(op->loop_var, mn, ext, op->for_kind, b, op->thread_tag);
  }
  virtual Stmt visit(const Store* op, const Stmt& s) {
    Expr v = mutate(op->value), i = mutate(op->index);
    if (v.same_as(op->value) && i.same_as(op->index)) return s;
    if (i.dtype().lanes > 1 && v.dtype().lanes == 1) v = Broadcast::make(v, i.dtype().lanes);
    return Store::make(op->buffer, v, i);
  }
  virtual Stmt visit(const Allocate* op, const Stmt& s) {
    Stmt b = mutate(op->body);
    return b.same_as(op->body) ? s : Allocate::make(op->buffer, b);
  }
  virtual Stmt visit(const IfThenElse* op, const Stmt& s) {
    Expr c = mutate(op->condition);
    Stmt t = mutate(op->then_case), f = mutate(op->else_case);
    if (c.same_as(op->condition) && t.same_as(op->then_case) && f.same_as(op->else_case)) return s;
    return IfThenElse::make(c, t, f);
  }
  virtual Stmt visit(const Seq* op, const Stmt& s) {
    std::vector<Stmt> out;
    bool changed = false;
    for (auto& x : op->seq) {
      out.push_back(mutate(x));
      changed |= !out.back().same_as(x);
    }
    return changed ? Seq::make(out) : s;
  }
  virtual Stmt visit(const LetStmt* op, const Stmt& s) {
    Expr v = mutate(op->value);
    Stmt b = mutate(op->body);
    return v.same_as(op->value) && b.same_as(op->body) ? s : LetStmt::make(op->var, v, b);
  }
  virtual Stmt visit(const Barrier*, const Stmt& s) { return s; }
  virtual Stmt visit(const Evaluate* op, const Stmt& s) {
    Expr v = mutate(op->value);
    return v.same_as(op->value) ? s : Evaluate::make(v);
  }
  virtual Stmt visit(const ProducerStore* op, const Stmt& s) {
    Expr v = mutate(op->value);
    std::vector<Expr> idx;
    bool changed = !v.same_as(op->value);
    for (auto& i : op->indices) {
      idx.push_back(mutate(i));
      changed |= !idx.back().same_as(i);
    }
    return changed ? make_stmt<ProducerStore>(op->tensor, v, std::move(idx)) : s;
  }
  virtual Stmt visit(const ProducerRealize* op, const Stmt& s) {
    std::vector<Range> bounds;
    bool changed = false;
    for (auto& r : op->bounds) {
      bounds.push_back({mutate(r.min), mutate(r.extent)});
      changed |= !bounds.back().min.same_as(r.min) || !bounds.back().extent.same_as(r.extent);
    }
    Stmt b = mutate(op->body);
    if (!changed && b.same_as(op->body)) return s;
    return make_stmt<ProducerRealize>(op->tensor, std::move(bounds), op->scope, b);
  }
};

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/functor.hpp
// begin nnvm/ir/substitute.hpp
// Replaces variables by expressions, and queries which variables an expression uses.

#include <unordered_map>
#include <unordered_set>


NNVM_BEGIN_NAMESPACE
namespace ir {

using VarMap = std::unordered_map<Var, Expr, VarHash, VarEq>;
using VarSet = std::unordered_set<Var, VarHash, VarEq>;

class Substituter : public IRMutator {
 public:
  explicit Substituter(const VarMap& m) : map_(m) {}
  using IRMutator::mutate;

 protected:
  using IRMutator::visit;
  Expr visit(const VarNode* op, const Expr& e) override {
    auto it = map_.find(Var::from(e));
    return it == map_.end() ? e : it->second;
    (void)op;
  }

 private:
  const VarMap& map_;
};

inline Expr substitute(const Expr& e, const VarMap& m) { return m.empty() ? e : Substituter(m).mutate(e); }
inline Stmt substitute(const Stmt& s, const VarMap& m) { return m.empty() ? s : Substituter(m).mutate(s); }
inline Expr substitute(const Expr& e, const Var& v, const Expr& by) { return substitute(e, VarMap{{v, by}}); }
inline Stmt substitute(const Stmt& s, const Var& v, const Expr& by) { return substitute(s, VarMap{{v, by}}); }

// True when `e` (or `s`) reads any variable for which `pred` holds.
template <class Node, class Pred>
bool uses_var_if(const Node& n, Pred pred) {
  struct Finder : IRVisitor {
    Pred& pred;
    bool found = false;
    explicit Finder(Pred& p) : pred(p) {}
    void visit(const VarNode* op) override { found |= pred(op); }
  } f(pred);
  if constexpr (std::is_same_v<Node, Expr>) f.visit_expr(n); else f.visit_stmt(n);
  return f.found;
}
inline bool uses_var(const Expr& e, const Var& v) {
  return uses_var_if(e, [&](const VarNode* n) { return n == v.get(); });
}
inline bool uses_var(const Stmt& s, const Var& v) {
  return uses_var_if(s, [&](const VarNode* n) { return n == v.get(); });
}

// Free variables of an expression, in first-use order (deterministic).
inline std::vector<Var> vars_of(const Expr& e) {
  struct Collector : IRVisitor {
    std::vector<Var> out;
    std::unordered_set<const VarNode*> seen;
    void visit_expr(const Expr& x) override {
      if (x.defined() && x.kind() == ExprKind::Var) {
        if (seen.insert(x.as<VarNode>()).second) out.push_back(Var::from(x));
        return;
      }
      IRVisitor::visit_expr(x);
    }
  } c;
  c.visit_expr(e);
  return c.out;
}

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/substitute.hpp
// begin nnvm/ir/function.hpp
// A lowered kernel: flat loop-nest IR plus its signature. This is what the interpreter runs
// and what every emitter translates.


NNVM_BEGIN_NAMESPACE
namespace ir {

struct LoweredFunc {
  std::string name;
  // Tensor arguments in the caller's order: inputs and outputs alike, each a compact row-major
  // buffer whose shape may contain symbolic sizes.
  std::vector<Buffer> params;
  // Symbolic sizes used by params' shapes, in first-use order. Callers never pass them: they
  // are bound from the shapes of the buffers given at call time.
  std::vector<Var> size_vars;
  Stmt body;
  // Which op and which schedule produced this kernel, for comments in emitted code.
  std::string origin;
  // Per param: whether the body stores into it. Empty means unknown (every param may be
  // written). Buffers that are only read may share memory; see target::bind_arguments.
  std::vector<bool> written;
  bool writes(size_t param) const { return written.empty() || param >= written.size() || written[param]; }
};

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/function.hpp
// begin nnvm/ir/printer.hpp
// A deterministic, readable C-like text form of expressions, statements, lowered functions and
// tensor definitions, for tests, IR dumps and error messages.
//
// Variables, buffers and tensors are identified by identity; their names are hints. Within one
// printed object, distinct objects that share a name get suffixes in order of first appearance
// (`i`, `i_1`, ...), so the text is unambiguous and never depends on addresses.
//
// Operators print with C precedence and parentheses only where it requires them, plus one
// readability rule: a product, quotient or remainder inside a sum or difference is parenthesized
// (`(i*64) + j`). Integer constants show their type unless it is int64 (`3`, `3i32`, `7u8`);
// float32 constants end in `f`, float64 ones do not.

#include <charconv>
#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>


NNVM_BEGIN_NAMESPACE
namespace ir {

namespace detail {

class Printer {
 public:
  std::string str() const { return os_.str(); }

  void print_expr(const Expr& e) { expr(e, 0); }

  void print_stmt(const Stmt& s, int indent) {
    if (!s.defined()) {
      line(indent) << "<undefined stmt>\n";
      return;
    }
    switch (s.kind()) {
      case StmtKind::For: {
        auto* op = s.as<For>();
        line(indent) << for_kind_name(op->for_kind) << " ";
        if (op->for_kind == ForKind::thread_binding) os_ << "(" << op->thread_tag << ") ";
        os_ << "(" << name_of(op->loop_var) << ", ";
        expr(op->min, 0);
        os_ << ", ";
        expr(op->extent, 0);
        os_ << ") {\n";
        print_stmt(op->body, indent + 1);
        line(indent) << "}\n";
        return;
      }
      case StmtKind::Store: {
        auto* op = s.as<Store>();
        line(indent) << name_of(op->buffer) << "[";
        expr(op->index, 0);
        os_ << "] = ";
        expr(op->value, 0);
        os_ << "\n";
        return;
      }
      case StmtKind::Allocate: {
        auto* op = s.as<Allocate>();
        line(indent) << "allocate " << name_of(op->buffer) << "[" << op->buffer->dtype;
        for (auto& d : op->buffer->shape) {
          os_ << " * ";
          expr(d, kMul + 1);
        }
        os_ << "] in " << scope_name(op->buffer->scope) << " {\n";
        print_stmt(op->body, indent + 1);
        line(indent) << "}\n";
        return;
      }
      case StmtKind::IfThenElse: {
        auto* op = s.as<IfThenElse>();
        line(indent) << "if (";
        expr(op->condition, 0);
        os_ << ") {\n";
        print_stmt(op->then_case, indent + 1);
        // An else holding only another if prints as `} else if (...) {`.
        const IfThenElse* chained;
        while (op->else_case.defined() && (chained = op->else_case.as<IfThenElse>())) {
          op = chained;
          line(indent) << "} else if (";
          expr(op->condition, 0);
          os_ << ") {\n";
          print_stmt(op->then_case, indent + 1);
        }
        if (op->else_case.defined()) {
          line(indent) << "} else {\n";
          print_stmt(op->else_case, indent + 1);
        }
        line(indent) << "}\n";
        return;
      }
      case StmtKind::Seq:
        for (auto& x : s.as<Seq>()->seq) print_stmt(x, indent);
        return;
      case StmtKind::LetStmt: {
        // The body is the rest of the scope, so it keeps the indentation.
        auto* op = s.as<LetStmt>();
        line(indent) << "let " << name_of(op->var) << " = ";
        expr(op->value, 0);
        os_ << "\n";
        print_stmt(op->body, indent);
        return;
      }
      case StmtKind::Evaluate:
        line(indent);
        expr(s.as<Evaluate>()->value, 0);
        os_ << "\n";
        return;
      case StmtKind::Barrier:
        line(indent) << "barrier(" << scope_name(s.as<Barrier>()->scope) << ")\n";
        return;
      case StmtKind::ProducerStore: {
        auto* op = s.as<ProducerStore>();
        line(indent) << name_of(op->tensor.get()) << "(";
        list(op->indices);
        os_ << ") = ";
        expr(op->value, 0);
        os_ << "\n";
        return;
      }
      case StmtKind::ProducerRealize: {
        auto* op = s.as<ProducerRealize>();
        line(indent) << "realize " << name_of(op->tensor.get()) << "(";
        for (size_t i = 0; i < op->bounds.size(); ++i) {
          os_ << (i ? ", (" : "(");
          expr(op->bounds[i].min, 0);
          os_ << ", ";
          expr(op->bounds[i].extent, 0);
          os_ << ")";
        }
        os_ << ") in " << scope_name(op->scope) << " {\n";
        print_stmt(op->body, indent + 1);
        line(indent) << "}\n";
        return;
      }
    }
  }

  void print_func(const LoweredFunc& f) {
    if (!f.origin.empty()) os_ << "// " << f.origin << "\n";
    os_ << "kernel " << f.name << "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      os_ << (i ? ", " : "") << name_of(f.params[i]) << ": ";
      shape(f.params[i]->dtype, f.params[i]->shape);
    }
    os_ << ") {\n";
    print_stmt(f.body, 1);
    os_ << "}\n";
  }

  // `placeholder A: float32[64, n]`
  void print_placeholder(const ProducerNode* t) {
    os_ << "placeholder " << name_of(t) << ": ";
    shape(t->dtype, t->shape);
  }
  // `C(i, j) = sum(A(i, k)*B(k, j), axis=[k])`
  void print_definition(const ProducerNode* t, const std::vector<IterVar>& axes, const Expr& body) {
    os_ << name_of(t) << "(";
    for (size_t i = 0; i < axes.size(); ++i) os_ << (i ? ", " : "") << name_of(axes[i].var());
    os_ << ") = ";
    expr(body, 0);
  }

 private:
  // Binding strength, loosest first; a child binding looser than its context is parenthesized.
  enum Prec { kLet = 1, kOr, kAnd, kEq, kRel, kAdd, kMul, kUnary, kPrimary };

  std::ostream& line(int indent) {
    for (int i = 0; i < indent; ++i) os_ << "  ";
    return os_;
  }

  const std::string& unique(const void* key, const std::string& hint) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string base = hint.empty() ? "v" : hint, name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return names_.emplace(key, name).first->second;
  }
  const std::string& name_of(const Var& v) { return unique(v.get(), v.name()); }
  const std::string& name_of(const VarNode* v) { return unique(v, v->name); }
  const std::string& name_of(const Buffer& b) { return unique(b.get(), b->name); }
  const std::string& name_of(const ProducerNode* t) { return unique(t, t->name); }

  void shape(DataType t, const std::vector<Expr>& dims) {
    os_ << t << "[";
    list(dims);
    os_ << "]";
  }
  void list(const std::vector<Expr>& xs) {
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i) os_ << ", ";
      expr(xs[i], 0);
    }
  }

  static std::string int_suffix(DataType t) {
    if (t.is_int()) return t.bits == 64 ? "" : "i" + std::to_string(t.bits);
    return "u" + std::to_string(t.bits);
  }
  void float_const(DataType t, double v) {
    if (!std::isfinite(v)) {  // no literal spelling: show the type as a cast
      os_ << t << "(" << (std::isnan(v) ? "nan" : v < 0 ? "-inf" : "inf") << ")";
      return;
    }
    char buf[64];
    auto res = t.bits == 32 ? std::to_chars(buf, buf + sizeof buf, float(v)) : std::to_chars(buf, buf + sizeof buf, v);
    std::string s(buf, res.ptr);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (t.bits == 32 && t.code == DataType::Code::Float) os_ << s << "f";
    else if (t.bits == 64) os_ << s;
    else os_ << t << "(" << s << ")";
  }
  // Whether a constant prints with a leading minus, so it needs parentheses as an operand.
  static bool negative_const(const Expr& e) {
    if (auto* i = e.as<IntImm>()) return i->value < 0;
    if (auto* f = e.as<FloatImm>()) return std::signbit(f->value) && std::isfinite(f->value);
    return false;
  }

  static int prec_of(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::Let: return kLet;
      case ExprKind::Or: return kOr;
      case ExprKind::And: return kAnd;
      case ExprKind::EQ: case ExprKind::NE: return kEq;
      case ExprKind::LT: case ExprKind::LE: case ExprKind::GT: case ExprKind::GE: return kRel;
      case ExprKind::Add: case ExprKind::Sub: return kAdd;
      case ExprKind::Mul: case ExprKind::Div: case ExprKind::Mod: return kMul;
      case ExprKind::Not: return kUnary;
      default: return negative_const(e) ? kUnary : kPrimary;
    }
  }

  void binary(ExprKind kind, const Expr& a, const char* op, const Expr& b, int prec, bool spaced) {
    // Left-associative: the left operand may bind as loosely as this node, the right may not.
    int left = prec, right = prec + 1;
    auto comparison = [](int q) { return q == kEq || q == kRel; };
    auto operand = [&](const Expr& x, int need) {
      int p = prec_of(x);
      // Beyond what C needs: mixed products and sums, mixed *, / and %, comparisons of
      // comparisons, && inside ||, and negative constants inside arithmetic get parentheses.
      bool paren = p < need || (prec == kAdd && p == kMul) ||
                   (prec == kMul && p == kMul && x.kind() != kind) ||
                   (comparison(prec) && comparison(p)) || (prec == kOr && p == kAnd) ||
                   (p == kUnary && x.kind() != ExprKind::Not && prec >= kAdd);
      if (paren) {
        os_ << "(";
        expr(x, 0);
        os_ << ")";
      } else {
        expr(x, need);
      }
    };
    operand(a, left);
    os_ << (spaced ? " " : "") << op << (spaced ? " " : "");
    operand(b, right);
  }

  void call(const char* name, std::initializer_list<Expr> args) {
    os_ << name << "(";
    bool first = true;
    for (auto& a : args) {
      os_ << (first ? "" : ", ");
      first = false;
      expr(a, 0);
    }
    os_ << ")";
  }

  // Prints `e`; `context` is the binding strength its position needs.
  void expr(const Expr& e, int context) {
    if (!e.defined()) {
      os_ << "<undefined>";
      return;
    }
    int p = prec_of(e);
    bool paren = p < context;
    if (paren) os_ << "(";
    switch (e.kind()) {
      case ExprKind::IntImm: os_ << e.as<IntImm>()->value << int_suffix(e.dtype()); break;
      case ExprKind::UIntImm:
        if (e.dtype().is_bool()) os_ << (e.as<UIntImm>()->value ? "true" : "false");
        else os_ << e.as<UIntImm>()->value << int_suffix(e.dtype());
        break;
      case ExprKind::FloatImm: float_const(e.dtype(), e.as<FloatImm>()->value); break;
      case ExprKind::Var: os_ << name_of(e.as<VarNode>()); break;
#define NNVM_PRINT_BINARY(N, op, prec, spaced) \
  case ExprKind::N: binary(ExprKind::N, e.as<N>()->a, op, e.as<N>()->b, prec, spaced); break;
      NNVM_PRINT_BINARY(Add, "+", kAdd, true)
      NNVM_PRINT_BINARY(Sub, "-", kAdd, true)
      NNVM_PRINT_BINARY(Mul, "*", kMul, false)
      NNVM_PRINT_BINARY(Div, "/", kMul, false)
      NNVM_PRINT_BINARY(Mod, "%", kMul, false)
      NNVM_PRINT_BINARY(EQ, "==", kEq, true)
      NNVM_PRINT_BINARY(NE, "!=", kEq, true)
      NNVM_PRINT_BINARY(LT, "<", kRel, true)
      NNVM_PRINT_BINARY(LE, "<=", kRel, true)
      NNVM_PRINT_BINARY(GT, ">", kRel, true)
      NNVM_PRINT_BINARY(GE, ">=", kRel, true)
      NNVM_PRINT_BINARY(And, "&&", kAnd, true)
      NNVM_PRINT_BINARY(Or, "||", kOr, true)
#undef NNVM_PRINT_BINARY
      case ExprKind::Min: call("min", {e.as<Min>()->a, e.as<Min>()->b}); break;
      case ExprKind::Max: call("max", {e.as<Max>()->a, e.as<Max>()->b}); break;
      case ExprKind::Not:
        os_ << "!";
        expr(e.as<Not>()->a, kUnary);
        break;
      case ExprKind::Select: {
        auto* op = e.as<Select>();
        call("select", {op->condition, op->true_value, op->false_value});
        break;
      }
      case ExprKind::Cast:
        os_ << e.dtype();
        call("", {e.as<Cast>()->value});
        break;
      case ExprKind::Call: {
        auto* op = e.as<Call>();
        os_ << call_op_name(op->op) << "(";
        list(op->args);
        os_ << ")";
        break;
      }
      case ExprKind::Load:
        os_ << name_of(e.as<Load>()->buffer) << "[";
        expr(e.as<Load>()->index, 0);
        os_ << "]";
        break;
      case ExprKind::Ramp: {
        auto* op = e.as<Ramp>();
        os_ << "ramp(";
        expr(op->base, 0);
        os_ << ", ";
        expr(op->stride, 0);
        os_ << ", " << op->lanes << ")";
        break;
      }
      case ExprKind::Broadcast:
        os_ << "x" << e.as<Broadcast>()->lanes;
        call("", {e.as<Broadcast>()->value});
        break;
      case ExprKind::Let: {
        auto* op = e.as<Let>();
        os_ << "let " << name_of(op->var) << " = ";
        expr(op->value, kLet + 1);
        os_ << " in ";
        expr(op->body, kLet);
        break;
      }
      case ExprKind::Reduce: reduce(e.as<Reduce>()); break;
      case ExprKind::ProducerLoad:
        os_ << name_of(e.as<ProducerLoad>()->tensor.get()) << "(";
        list(e.as<ProducerLoad>()->indices);
        os_ << ")";
        break;
    }
    if (paren) os_ << ")";
  }

  void reduce(const Reduce* op) {
    os_ << combiner_name(op->combiner) << "(";
    expr(op->source, 0);
    os_ << ", axis=[";
    for (size_t i = 0; i < op->axes.size(); ++i) os_ << (i ? ", " : "") << name_of(op->axes[i].var());
    os_ << "]";
    if (op->condition.defined()) {
      os_ << ", where=";
      expr(op->condition, 0);
    }
    if (!default_init(op)) {
      os_ << ", init=";
      expr(op->init, 0);
    }
    os_ << ")";
  }
  static bool default_init(const Reduce* op) {
    Expr id = combiner_identity(op->combiner, op->dtype);
    auto value = [](const Expr& e) -> std::optional<double> {
      if (auto* i = e.as<IntImm>()) return double(i->value);
      if (auto* u = e.as<UIntImm>()) return double(u->value);
      if (auto* f = e.as<FloatImm>()) return f->value;
      return std::nullopt;
    };
    auto a = value(op->init), b = value(id);
    return a && b && *a == *b;
  }

  std::ostringstream os_;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
};

}  // namespace detail

inline std::string to_string(const Expr& e) {
  detail::Printer p;
  p.print_expr(e);
  return p.str();
}
// Statements end each line with a newline and indent by two spaces per level.
inline std::string to_string(const Stmt& s) {
  detail::Printer p;
  p.print_stmt(s, 0);
  return p.str();
}
inline std::string to_string(const LoweredFunc& f) {
  detail::Printer p;
  p.print_func(f);
  return p.str();
}

inline std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
inline std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }
inline std::ostream& operator<<(std::ostream& os, const LoweredFunc& f) { return os << to_string(f); }

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/printer.hpp
// begin nnvm/ir/interval.hpp
// Integer interval analysis: constant bounds of integer expressions (`const_bound`), symbolic
// bounds of index expressions (`eval_sym_interval`, for bound inference) and proofs of integer
// conditions (`can_prove`). Everything here is conservative: an answer may be loose, never wrong.

#include <optional>
#include <unordered_map>

// begin nnvm/ir/affine.hpp
// Affine forms of scalar signed-integer expressions: constant + sum(coeff * term), where a term
// is anything that is not a sum, a difference, a product with a constant or a constant (a
// variable, a product of two non-constants, a division, a load, ...). The simplifier and the
// interval analysis use them to cancel and collect terms: `(i*4 + j) - (j + i*4)` is 0.
//
// Coefficient arithmetic wraps at the dtype's width. That is exact for narrow types (whose
// arithmetic wraps) and for int32/int64 differs only where the original overflowed (undefined).

#include <algorithm>

// begin nnvm/ir/compare.hpp
// Structural comparison of expressions. `deep_equal` is equality up to node sharing (variables,
// buffers and tensors still compare by identity); `ExprOrder` is a total order consistent with
// it, used to put commutative operands and affine terms in a deterministic order.

#include <cstring>
#include <unordered_map>


NNVM_BEGIN_NAMESPACE
namespace ir {

namespace detail {
inline int cmp_dtype(DataType a, DataType b) {
  if (a.code != b.code) return a.code < b.code ? -1 : 1;
  if (a.bits != b.bits) return a.bits < b.bits ? -1 : 1;
  if (a.lanes != b.lanes) return a.lanes < b.lanes ? -1 : 1;
  return 0;
}
template <class T>
int cmp_value(const T& a, const T& b) {
  return a < b ? -1 : b < a ? 1 : 0;
}
// Floats compare by bit pattern so that NaN equals itself and -0.0 differs from 0.0.
inline int cmp_double_bits(double a, double b) {
  uint64_t x, y;
  std::memcpy(&x, &a, 8);
  std::memcpy(&y, &b, 8);
  if (x == y) return 0;
  return a < b ? -1 : b < a ? 1 : cmp_value(x, y);
}
}  // namespace detail

// Orders expressions structurally: by kind, dtype, then operands. Variables (and buffers and
// tensors) order by name, and distinct objects sharing a name by the order in which this
// ExprOrder first met them, so the result never depends on addresses. Keep one ExprOrder for
// the whole of one pass so that the order stays consistent.
class ExprOrder {
 public:
  int compare(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return 0;
    if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
    if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
    if (int c = detail::cmp_dtype(a.dtype(), b.dtype())) return c;
    switch (a.kind()) {
      case ExprKind::IntImm: return detail::cmp_value(a.as<IntImm>()->value, b.as<IntImm>()->value);
      case ExprKind::UIntImm: return detail::cmp_value(a.as<UIntImm>()->value, b.as<UIntImm>()->value);
      case ExprKind::FloatImm: return detail::cmp_double_bits(a.as<FloatImm>()->value, b.as<FloatImm>()->value);
      case ExprKind::Var: {
        auto *x = a.as<VarNode>(), *y = b.as<VarNode>();
        return named(x, x->name, y, y->name);
      }
#define NNVM_CMP_BINARY(N)                                         \
  case ExprKind::N: {                                              \
    auto *x = a.as<N>(), *y = b.as<N>();                           \
    if (int c = compare(x->a, y->a)) return c;                     \
    return compare(x->b, y->b);                                    \
  }
        NNVM_CMP_BINARY(Add) NNVM_CMP_BINARY(Sub) NNVM_CMP_BINARY(Mul) NNVM_CMP_BINARY(Div)
        NNVM_CMP_BINARY(Mod) NNVM_CMP_BINARY(Min) NNVM_CMP_BINARY(Max) NNVM_CMP_BINARY(EQ)
        NNVM_CMP_BINARY(NE) NNVM_CMP_BINARY(LT) NNVM_CMP_BINARY(LE) NNVM_CMP_BINARY(GT)
        NNVM_CMP_BINARY(GE) NNVM_CMP_BINARY(And) NNVM_CMP_BINARY(Or)
#undef NNVM_CMP_BINARY
      case ExprKind::Not: return compare(a.as<Not>()->a, b.as<Not>()->a);
      case ExprKind::Select: {
        auto *x = a.as<Select>(), *y = b.as<Select>();
        if (int c = compare(x->condition, y->condition)) return c;
        if (int c = compare(x->true_value, y->true_value)) return c;
        return compare(x->false_value, y->false_value);
      }
      case ExprKind::Cast: return compare(a.as<Cast>()->value, b.as<Cast>()->value);
      case ExprKind::Call: {
        auto *x = a.as<Call>(), *y = b.as<Call>();
        if (x->op != y->op) return x->op < y->op ? -1 : 1;
        return compare_list(x->args, y->args);
      }
      case ExprKind::Load: {
        auto *x = a.as<Load>(), *y = b.as<Load>();
        if (int c = named(x->buffer.get(), x->buffer->name, y->buffer.get(), y->buffer->name)) return c;
        return compare(x->index, y->index);
      }
      case ExprKind::Ramp: {
        auto *x = a.as<Ramp>(), *y = b.as<Ramp>();
        if (int c = compare(x->base, y->base)) return c;
        return compare(x->stride, y->stride);
      }
      case ExprKind::Broadcast: return compare(a.as<Broadcast>()->value, b.as<Broadcast>()->value);
      case ExprKind::Let: {
        auto *x = a.as<Let>(), *y = b.as<Let>();
        if (int c = compare(x->var, y->var)) return c;
        if (int c = compare(x->value, y->value)) return c;
        return compare(x->body, y->body);
      }
      case ExprKind::Reduce: {
        auto *x = a.as<Reduce>(), *y = b.as<Reduce>();
        if (x->combiner != y->combiner) return x->combiner < y->combiner ? -1 : 1;
        if (x->axes.size() != y->axes.size()) return x->axes.size() < y->axes.size() ? -1 : 1;
        for (size_t i = 0; i < x->axes.size(); ++i)
          if (int c = compare(x->axes[i].var(), y->axes[i].var())) return c;
        if (int c = compare(x->source, y->source)) return c;
        if (int c = compare(x->init, y->init)) return c;
        return compare(x->condition, y->condition);
      }
      case ExprKind::ProducerLoad: {
        auto *x = a.as<ProducerLoad>(), *y = b.as<ProducerLoad>();
        if (int c = named(x->tensor.get(), x->tensor->name, y->tensor.get(), y->tensor->name)) return c;
        return compare_list(x->indices, y->indices);
      }
    }
    return 0;
  }
  bool operator()(const Expr& a, const Expr& b) { return compare(a, b) < 0; }

 private:
  int compare_list(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
    for (size_t i = 0; i < a.size(); ++i)
      if (int c = compare(a[i], b[i])) return c;
    return 0;
  }
  int named(const void* x, const std::string& xn, const void* y, const std::string& yn) {
    if (x == y) return 0;
    if (int c = xn.compare(yn)) return c < 0 ? -1 : 1;
    int rx = rank(x), ry = rank(y);
    return rx < ry ? -1 : 1;
  }
  int rank(const void* p) { return ranks_.emplace(p, int(ranks_.size())).first->second; }

  std::unordered_map<const void*, int> ranks_;
};

// True when `a` and `b` compute the same thing by the same tree (variables by identity).
inline bool deep_equal(const Expr& a, const Expr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  // Names never decide equality, so a throwaway order is enough here.
  return ExprOrder().compare(a, b) == 0;
}

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/compare.hpp

NNVM_BEGIN_NAMESPACE
namespace ir {

struct AffineForm {
  DataType dtype = dtype::index;
  std::vector<std::pair<Expr, int64_t>> terms;  // distinct terms (deep_equal), nonzero coefficients
  int64_t constant = 0;

  // Sign-extends `v` from the dtype's width, the value an IntImm of that dtype would hold.
  int64_t wrap(uint64_t v) const {
    int bits = dtype.bits;
    if (bits >= 64) return int64_t(v);
    uint64_t m = (uint64_t(1) << bits) - 1, u = v & m;
    return (u >> (bits - 1)) ? int64_t(u | ~m) : int64_t(u);
  }
  bool is_const() const { return terms.empty(); }

  void add_term(const Expr& t, int64_t coeff) {
    for (size_t i = 0; i < terms.size(); ++i) {
      if (deep_equal(terms[i].first, t)) {
        terms[i].second = wrap(uint64_t(terms[i].second) + uint64_t(coeff));
        if (terms[i].second == 0) terms.erase(terms.begin() + long(i));
        return;
      }
    }
    if (wrap(uint64_t(coeff)) != 0) terms.emplace_back(t, wrap(uint64_t(coeff)));
  }
  void add(const AffineForm& o, int64_t scale) {
    for (auto& [t, c] : o.terms) add_term(t, wrap(uint64_t(c) * uint64_t(scale)));
    constant = wrap(uint64_t(constant) + uint64_t(o.constant) * uint64_t(scale));
  }
  void scale(int64_t s) {
    AffineForm out{dtype, {}, 0};
    out.add(*this, s);
    *this = std::move(out);
  }
};

// True for the dtypes that have affine forms: scalar signed integers.
inline bool has_affine_form(DataType t) { return t.is_int() && t.is_scalar(); }

// Decomposes `e` (a scalar signed integer) without looking inside terms.
inline AffineForm to_affine(const Expr& e) {
  AffineForm f{e.dtype(), {}, 0};
  if (auto* c = e.as<IntImm>()) {
    f.constant = c->value;
    return f;
  }
  if (auto* add = e.as<Add>()) {
    f = to_affine(add->a);
    f.add(to_affine(add->b), 1);
    return f;
  }
  if (auto* sub = e.as<Sub>()) {
    f = to_affine(sub->a);
    f.add(to_affine(sub->b), -1);
    return f;
  }
  if (auto* mul = e.as<Mul>(); mul && (mul->a.as<IntImm>() || mul->b.as<IntImm>())) {
    bool left = mul->a.as<IntImm>() != nullptr;
    f = to_affine(left ? mul->b : mul->a);
    f.scale((left ? mul->a : mul->b).as<IntImm>()->value);
    return f;
  }
  f.add_term(e, 1);
  return f;
}

// Rebuilds an expression from `f`: terms by decreasing |coefficient|, then non-variables before
// variables, then `order`; positive terms are added first, negative ones subtracted after, the
// constant comes last. `(i.outer*16 + i.inner)*64 + j` becomes `i.outer*1024 + i.inner*64 + j`.
inline Expr from_affine(const AffineForm& f, ExprOrder& order) {
  DataType t = f.dtype;
  auto magnitude = [](int64_t c) { return c < 0 ? uint64_t(0) - uint64_t(c) : uint64_t(c); };
  std::vector<std::pair<Expr, int64_t>> terms = f.terms;
  std::stable_sort(terms.begin(), terms.end(), [&](const auto& x, const auto& y) {
    if (magnitude(x.second) != magnitude(y.second)) return magnitude(x.second) > magnitude(y.second);
    bool xv = x.first.kind() == ExprKind::Var, yv = y.first.kind() == ExprKind::Var;
    if (xv != yv) return yv;
    if (int c = order.compare(x.first, y.first)) return c < 0;
    return x.second > y.second;
  });
  // The most negative value has no positive counterpart: it is added, never subtracted.
  auto negative = [&](int64_t c) { return c < 0 && f.wrap(uint64_t(0) - uint64_t(c)) > 0; };
  auto scaled = [&](const Expr& term, int64_t c) {
    return c == 1 ? term : Mul::make(term, IntImm::make(t, c));
  };
  Expr acc;
  bool const_done = false;
  for (auto& [term, c] : terms)
    if (!negative(c)) acc = acc.defined() ? Add::make(acc, scaled(term, c)) : scaled(term, c);
  for (auto& [term, c] : terms) {
    if (!negative(c)) continue;
    if (!acc.defined()) {
      const_done = f.constant > 0;
      acc = const_done ? IntImm::make(t, f.constant) : make_zero(t);
    }
    acc = Sub::make(acc, scaled(term, -c));
  }
  if (!acc.defined()) return IntImm::make(t, f.constant);
  if (f.constant == 0 || const_done) return acc;
  if (negative(f.constant)) return Sub::make(acc, IntImm::make(t, -f.constant));
  return Add::make(acc, IntImm::make(t, f.constant));
}

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/affine.hpp

NNVM_BEGIN_NAMESPACE
namespace ir {

// The integers in [min, max], both inclusive; a missing end is unbounded.
struct Interval {
  std::optional<int64_t> min, max;

  static Interval everything() { return {}; }
  static Interval point(int64_t v) { return {v, v}; }
  static Interval range(int64_t lo, int64_t hi) { return {lo, hi}; }
  bool is_bounded() const { return min && max; }
  bool is_point() const { return min && max && *min == *max; }
  bool contains(int64_t v) const { return (!min || *min <= v) && (!max || v <= *max); }
  // True when every value of this interval lies in `o`.
  bool within(const Interval& o) const {
    return (!o.min || (min && *min >= *o.min)) && (!o.max || (max && *max <= *o.max));
  }
  friend bool operator==(const Interval&, const Interval&) = default;
};

// Known ranges of variables, keyed by the variable node (the caller keeps the Vars alive).
// A variable that is absent is unbounded (within its dtype).
using IntervalMap = std::unordered_map<const VarNode*, Interval>;

namespace detail {

// An interval end: a finite int64 or an infinity (inf = -1 or +1). Arithmetic saturates to
// the infinity of the true result's sign, so a bound that does not fit int64 is dropped.
struct Bound {
  int inf = 0;
  int64_t v = 0;
  static Bound neg_inf() { return {-1, 0}; }
  static Bound pos_inf() { return {1, 0}; }
  static Bound of(int64_t x) { return {0, x}; }
  int sign() const { return inf ? inf : (v > 0) - (v < 0); }
  friend bool operator<(const Bound& a, const Bound& b) {
    if (a.inf != b.inf) return a.inf < b.inf;
    return a.inf == 0 && a.v < b.v;
  }
};
// Checked int64 arithmetic: false (and `r` untouched) when the result does not fit.
inline bool checked_add(int64_t a, int64_t b, int64_t& r) {
  if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
  r = a + b;
  return true;
}
inline bool checked_mul(int64_t a, int64_t b, int64_t& r) {
  if (a == 0 || b == 0) {
    r = 0;
    return true;
  }
  uint64_t ua = a < 0 ? 0 - uint64_t(a) : uint64_t(a), ub = b < 0 ? 0 - uint64_t(b) : uint64_t(b);
  bool neg = (a < 0) != (b < 0);
  uint64_t lim = neg ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX);
  if (ua > lim / ub) return false;
  uint64_t p = ua * ub;
  r = neg ? int64_t(0 - p) : int64_t(p);
  return true;
}

inline Bound bound_add(Bound a, Bound b) {
  if (a.inf || b.inf) return {a.inf ? a.inf : b.inf, 0};  // -inf + +inf never meets: ends are ordered
  int64_t r;
  if (!checked_add(a.v, b.v, r)) return {a.v > 0 ? 1 : -1, 0};
  return Bound::of(r);
}
inline Bound bound_neg(Bound a) {
  if (a.inf) return {-a.inf, 0};
  if (a.v == INT64_MIN) return Bound::pos_inf();
  return Bound::of(-a.v);
}
inline Bound bound_mul(Bound a, Bound b) {
  int s = a.sign() * b.sign();
  if (s == 0) return Bound::of(0);
  if (a.inf || b.inf) return {s, 0};
  int64_t r;
  if (!checked_mul(a.v, b.v, r)) return {s, 0};
  return Bound::of(r);
}
// Truncating division for b > 0 (b may be +inf).
inline Bound bound_div_pos(Bound a, Bound b) {
  if (b.inf) return Bound::of(0);
  if (a.inf) return a;
  return Bound::of(a.v / b.v);
}
inline Bound lo_of(const Interval& i) { return i.min ? Bound::of(*i.min) : Bound::neg_inf(); }
inline Bound hi_of(const Interval& i) { return i.max ? Bound::of(*i.max) : Bound::pos_inf(); }
inline Interval from_bounds(Bound lo, Bound hi) {
  Interval r;
  if (!lo.inf) r.min = lo.v;
  if (!hi.inf) r.max = hi.v;
  return r;
}
inline Interval from_corners(std::initializer_list<Bound> c) {
  return from_bounds(std::min(c), std::max(c));
}

// The values a scalar of integer type `t` can hold.
inline Interval dtype_range(DataType t) {
  if (t.is_bool()) return Interval::range(0, 1);
  if (t.is_uint()) return t.bits >= 64 ? Interval{0, std::nullopt} : Interval::range(0, int64_t((uint64_t(1) << t.bits) - 1));
  if (t.is_int()) {
    if (t.bits >= 64) return {};
    return Interval::range(-(int64_t(1) << (t.bits - 1)), (int64_t(1) << (t.bits - 1)) - 1);
  }
  return {};
}
// Whether arithmetic of `t` wraps (narrow signed, or any unsigned type) instead of being
// undefined on overflow (int32, int64).
inline bool wraps(DataType t) { return t.is_uint() || t.is_bool() || (t.is_int() && t.bits < 32); }

// Restricts the mathematical result `r` of an operation of type `t` to what the type can hold:
// a wrapping type that might have wrapped can hold anything of its range.
inline Interval fit(const Interval& r, DataType t) {
  Interval range = dtype_range(t);
  if (r.within(range)) return r;
  if (wraps(t)) return range;
  Interval out = r;
  if (range.min && (!out.min || *out.min < *range.min)) out.min = range.min;
  if (range.max && (!out.max || *out.max > *range.max)) out.max = range.max;
  return out;
}

inline Interval interval_union(const Interval& a, const Interval& b) {
  Interval r;
  if (a.min && b.min) r.min = std::min(*a.min, *b.min);
  if (a.max && b.max) r.max = std::max(*a.max, *b.max);
  return r;
}

inline Interval div_interval(const Interval& a, const Interval& b) {
  // Truncating division is monotone in each operand on each sign of the divisor, so the corners
  // of each part of the divisor bound the result. A zero divisor is undefined and ignored.
  auto positive_part = [&](Bound lo, Bound hi) {
    return from_corners({bound_div_pos(lo_of(a), lo), bound_div_pos(lo_of(a), hi),
                         bound_div_pos(hi_of(a), lo), bound_div_pos(hi_of(a), hi)});
  };
  std::optional<Interval> out;
  auto merge = [&](const Interval& x) { out = out ? interval_union(*out, x) : x; };
  Bound blo = lo_of(b), bhi = hi_of(b);
  if (Bound::of(0) < bhi) merge(positive_part(std::max(blo, Bound::of(1)), bhi));
  if (blo < Bound::of(0)) {
    // a / b == -(a / -b)
    Interval neg = positive_part(bound_neg(std::min(bhi, Bound::of(-1))), bound_neg(blo));
    merge(from_bounds(bound_neg(hi_of(neg)), bound_neg(lo_of(neg))));
  }
  return out ? *out : Interval{};
}

inline Interval mod_interval(const Interval& a, const Interval& b) {
  // The result has the dividend's sign and a magnitude below both |a| and |b|.
  Bound m = std::max(bound_neg(lo_of(b)), hi_of(b));  // max |b|
  if (!m.inf && m.v <= 0) return {};  // only a zero divisor: undefined
  Bound lim = m.inf ? m : Bound::of(m.v - 1);
  Bound lo = lo_of(a), hi = hi_of(a);
  Bound rlo = Bound::of(0) < lo ? Bound::of(0) : std::max(lo, bound_neg(lim));
  Bound rhi = hi < Bound::of(0) ? Bound::of(0) : std::min(hi, lim);
  return from_bounds(rlo, rhi);
}

class ConstBounder {
 public:
  explicit ConstBounder(const IntervalMap& m) : map_(&m) {}

  Interval bound(const Expr& e) {
    if (!e.defined()) return {};
    DataType t = e.dtype();
    if (t.is_bool()) {
      if (auto* u = e.as<UIntImm>()) return Interval::point(int64_t(u->value));
      if (auto* b = e.as<Broadcast>()) return bound(b->value);
      return Interval::range(0, 1);
    }
    if (!t.is_integer()) return {};
    // Shared subtrees are bounded once (the expression outlives this bounder).
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second;
    Interval r = fit(raw(e), t.element_of());
    memo_.emplace(e.get(), r);
    return r;
  }

 private:
  Interval raw(const Expr& e) {
    switch (e.kind()) {
      case ExprKind::IntImm: return Interval::point(e.as<IntImm>()->value);
      case ExprKind::UIntImm: {
        uint64_t v = e.as<UIntImm>()->value;
        return v > uint64_t(INT64_MAX) ? Interval{INT64_MAX, std::nullopt} : Interval::point(int64_t(v));
      }
      case ExprKind::Var: {
        auto it = map_->find(e.as<VarNode>());
        return it == map_->end() ? Interval{} : it->second;
      }
      case ExprKind::Add: {
        auto* o = e.as<Add>();
        Interval a = bound(o->a), b = bound(o->b);
        return from_bounds(bound_add(lo_of(a), lo_of(b)), bound_add(hi_of(a), hi_of(b)));
      }
      case ExprKind::Sub: {
        auto* o = e.as<Sub>();
        Interval a = bound(o->a), b = bound(o->b);
        return from_bounds(bound_add(lo_of(a), bound_neg(hi_of(b))), bound_add(hi_of(a), bound_neg(lo_of(b))));
      }
      case ExprKind::Mul: {
        auto* o = e.as<Mul>();
        if (deep_equal(o->a, o->b)) {  // a square is never negative
          Interval a = bound(o->a);
          Interval sq = from_corners({bound_mul(lo_of(a), lo_of(a)), bound_mul(hi_of(a), hi_of(a))});
          if (!a.contains(0) && a.is_bounded()) return sq;
          return {0, sq.max};
        }
        Interval a = bound(o->a), b = bound(o->b);
        return from_corners({bound_mul(lo_of(a), lo_of(b)), bound_mul(lo_of(a), hi_of(b)),
                             bound_mul(hi_of(a), lo_of(b)), bound_mul(hi_of(a), hi_of(b))});
      }
      case ExprKind::Div: return div_interval(bound(e.as<Div>()->a), bound(e.as<Div>()->b));
      case ExprKind::Mod: return mod_interval(bound(e.as<Mod>()->a), bound(e.as<Mod>()->b));
      case ExprKind::Min: {
        Interval a = bound(e.as<Min>()->a), b = bound(e.as<Min>()->b);
        return from_bounds(std::min(lo_of(a), lo_of(b)), std::min(hi_of(a), hi_of(b)));
      }
      case ExprKind::Max: {
        Interval a = bound(e.as<Max>()->a), b = bound(e.as<Max>()->b);
        return from_bounds(std::max(lo_of(a), lo_of(b)), std::max(hi_of(a), hi_of(b)));
      }
      case ExprKind::Select: {
        auto* o = e.as<Select>();
        Interval c = bound(o->condition);
        if (c.is_point()) return bound(*c.min ? o->true_value : o->false_value);
        return interval_union(bound(o->true_value), bound(o->false_value));
      }
      case ExprKind::Cast: {
        auto* o = e.as<Cast>();
        DataType from = o->value.dtype();
        // A conversion that does not fit wraps; from a float, anything the target type holds.
        if (!from.is_integer() && !from.is_bool()) return {};
        Interval v = bound(o->value), range = dtype_range(e.dtype().element_of());
        return v.within(range) ? v : range;
      }
      case ExprKind::Ramp: {
        auto* o = e.as<Ramp>();
        Interval base = bound(o->base), stride = bound(o->stride);
        Interval lanes = Interval::range(0, o->lanes - 1);
        Interval off = from_corners({bound_mul(lo_of(lanes), lo_of(stride)), bound_mul(lo_of(lanes), hi_of(stride)),
                                     bound_mul(hi_of(lanes), lo_of(stride)), bound_mul(hi_of(lanes), hi_of(stride))});
        return from_bounds(bound_add(lo_of(base), lo_of(off)), bound_add(hi_of(base), hi_of(off)));
      }
      case ExprKind::Broadcast: return bound(e.as<Broadcast>()->value);
      case ExprKind::Let: {
        auto* o = e.as<Let>();
        Interval v = bound(o->value);
        IntervalMap inner = *map_;
        inner[o->var.get()] = v;
        return ConstBounder(inner).bound(o->body);
      }
      default: return {};
    }
  }

  const IntervalMap* map_;
  std::unordered_map<const ExprNode*, Interval> memo_;
};

}  // namespace detail

// Conservative bounds of the integer expression `e` (scalar, or every lane of a vector) given
// the ranges of its variables. Non-integer expressions are unbounded; bools are within [0, 1].
inline Interval const_bound(const Expr& e, const IntervalMap& ranges = {}) {
  return detail::ConstBounder(ranges).bound(e);
}

// True only when `cond` (a bool expression) is true for every value of its variables within
// `ranges`. Integer comparisons of int32/int64 values are decided on the affine form of the
// difference of their sides, so common terms cancel: `i*4 + j < i*4 + 8` holds when j < 8.
inline bool can_prove(const Expr& cond, const IntervalMap& ranges = {}) {
  if (!cond.defined() || !cond.dtype().is_bool()) return false;
  if (auto* u = cond.as<UIntImm>()) return u->value != 0;
  if (auto* b = cond.as<Broadcast>()) return can_prove(b->value, ranges);
  if (auto* o = cond.as<And>()) return can_prove(o->a, ranges) && can_prove(o->b, ranges);
  if (auto* o = cond.as<Or>()) return can_prove(o->a, ranges) || can_prove(o->b, ranges);
  if (auto* o = cond.as<Not>()) {
    const Expr& x = o->a;
    if (auto* n = x.as<Not>()) return can_prove(n->a, ranges);
    if (auto* c = x.as<LT>()) return can_prove(GE::make(c->a, c->b), ranges);
    if (auto* c = x.as<LE>()) return can_prove(GT::make(c->a, c->b), ranges);
    if (auto* c = x.as<GT>()) return can_prove(LE::make(c->a, c->b), ranges);
    if (auto* c = x.as<GE>()) return can_prove(LT::make(c->a, c->b), ranges);
    if (auto* c = x.as<EQ>()) return can_prove(NE::make(c->a, c->b), ranges);
    if (auto* c = x.as<NE>()) return can_prove(EQ::make(c->a, c->b), ranges);
    if (auto* c = x.as<And>()) return can_prove(!c->a, ranges) || can_prove(!c->b, ranges);
    if (auto* c = x.as<Or>()) return can_prove(!c->a, ranges) && can_prove(!c->b, ranges);
    return const_bound(x, ranges).max == 0;
  }
  // A comparison: find the bounds of lhs - rhs (or of each side when the difference could wrap).
  const Expr *lhs = nullptr, *rhs = nullptr;
  enum { lt, le, gt, ge, eq, ne } op = lt;
  auto sides = [&](auto* node, auto kind) {
    if (!node) return false;
    lhs = &node->a, rhs = &node->b, op = kind;
    return true;
  };
  if (!sides(cond.as<LT>(), lt) && !sides(cond.as<LE>(), le) && !sides(cond.as<GT>(), gt) &&
      !sides(cond.as<GE>(), ge) && !sides(cond.as<EQ>(), eq) && !sides(cond.as<NE>(), ne))
    return const_bound(cond, ranges).min == 1;
  DataType t = lhs->dtype();
  if (!t.is_integer() && !t.is_bool()) return false;
  if (has_affine_form(t.element_of()) && !detail::wraps(t) && t.is_scalar()) {
    AffineForm d = to_affine(*lhs);
    d.add(to_affine(*rhs), -1);
    // Bound each term separately: a term's bound is sound whatever the others are.
    detail::Bound lo = detail::Bound::of(d.constant), hi = lo;
    for (auto& [term, c] : d.terms) {
      Interval ti = const_bound(term, ranges);
      detail::Bound k = detail::Bound::of(c);
      detail::Bound p = detail::bound_mul(detail::lo_of(ti), k), q = detail::bound_mul(detail::hi_of(ti), k);
      lo = detail::bound_add(lo, std::min(p, q));
      hi = detail::bound_add(hi, std::max(p, q));
    }
    Interval diff = detail::from_bounds(lo, hi);
    switch (op) {
      case lt: return diff.max && *diff.max < 0;
      case le: return diff.max && *diff.max <= 0;
      case gt: return diff.min && *diff.min > 0;
      case ge: return diff.min && *diff.min >= 0;
      case eq: return diff.is_point() && *diff.min == 0;
      case ne: return (diff.min && *diff.min > 0) || (diff.max && *diff.max < 0);
    }
  }
  Interval a = const_bound(*lhs, ranges), b = const_bound(*rhs, ranges);
  bool same = deep_equal(*lhs, *rhs);
  switch (op) {
    case lt: return a.max && b.min && *a.max < *b.min;
    case le: return same || (a.max && b.min && *a.max <= *b.min);
    case gt: return a.min && b.max && *a.min > *b.max;
    case ge: return same || (a.min && b.max && *a.min >= *b.max);
    case eq: return same || (a.is_point() && b.is_point() && *a.min == *b.min);
    case ne: return (a.max && b.min && *a.max < *b.min) || (a.min && b.max && *a.min > *b.max);
  }
  return false;
}

// Symbolic bounds [min, max] (inclusive) of an index expression; an undefined end is
// unbounded. Bound inference uses them to find the region of a producer that a consumer reads
// when the producer is computed inside the consumer's loops.
struct SymInterval {
  Expr min, max;
  static SymInterval point(Expr e) { return {e, e}; }
  bool is_bounded() const { return min.defined() && max.defined(); }
  bool is_point() const { return is_bounded() && deep_equal(min, max); }
};
using SymIntervalMap = std::unordered_map<const VarNode*, SymInterval>;

// Defined in simplify.hpp, which this header includes at its end.
Expr simplify(const Expr& e, const IntervalMap& ranges);

namespace detail {

class SymBounder {
 public:
  SymBounder(const SymIntervalMap& vars, const IntervalMap& ranges) : vars_(vars), ranges_(ranges) {}

  SymInterval eval(const Expr& e) {
    if (!e.defined()) return {};
    bool relaxed = uses_var_if(e, [&](const VarNode* v) { return vars_.count(v) != 0; });
    if (!relaxed) return SymInterval::point(e);
    switch (e.kind()) {
      case ExprKind::Var: return vars_.at(e.as<VarNode>());
      case ExprKind::Add: {
        SymInterval a = eval(e.as<Add>()->a), b = eval(e.as<Add>()->b);
        return {both(a.min, b.min, [](Expr x, Expr y) { return x + y; }),
                both(a.max, b.max, [](Expr x, Expr y) { return x + y; })};
      }
      case ExprKind::Sub: {
        SymInterval a = eval(e.as<Sub>()->a), b = eval(e.as<Sub>()->b);
        return {both(a.min, b.max, [](Expr x, Expr y) { return x - y; }),
                both(a.max, b.min, [](Expr x, Expr y) { return x - y; })};
      }
      case ExprKind::Mul: {
        auto* op = e.as<Mul>();
        SymInterval a = eval(op->a), b = eval(op->b);
        if (b.is_point()) return scale(a, b.min, [](Expr x, Expr y) { return x * y; });
        if (a.is_point()) return scale(b, a.min, [](Expr x, Expr y) { return y * x; });
        if (non_negative(a.min) && non_negative(b.min))
          return {a.min * b.min, both(a.max, b.max, [](Expr x, Expr y) { return x * y; })};
        return {};
      }
      case ExprKind::Div: {
        // Truncating division by a positive divisor is monotone in the dividend.
        SymInterval a = eval(e.as<Div>()->a), b = eval(e.as<Div>()->b);
        if (!b.is_point() || !positive(b.min)) return {};
        return {a.min.defined() ? a.min / b.min : Expr(), a.max.defined() ? a.max / b.min : Expr()};
      }
      case ExprKind::Mod: {
        SymInterval a = eval(e.as<Mod>()->a), b = eval(e.as<Mod>()->b);
        if (!b.is_point() || !positive(b.min) || !non_negative(a.min)) return {};
        Expr top = b.min - 1;
        if (a.max.defined() && can_prove(a.max < b.min, ranges_)) return a;  // no wrap-around
        return {make_zero(e.dtype()), top};
      }
      case ExprKind::Min: {
        SymInterval a = eval(e.as<Min>()->a), b = eval(e.as<Min>()->b);
        return {both(a.min, b.min, [](Expr x, Expr y) { return min(x, y); }),
                either(a.max, b.max, [](Expr x, Expr y) { return min(x, y); })};
      }
      case ExprKind::Max: {
        SymInterval a = eval(e.as<Max>()->a), b = eval(e.as<Max>()->b);
        return {either(a.min, b.min, [](Expr x, Expr y) { return max(x, y); }),
                both(a.max, b.max, [](Expr x, Expr y) { return max(x, y); })};
      }
      case ExprKind::Select: {
        SymInterval t = eval(e.as<Select>()->true_value), f = eval(e.as<Select>()->false_value);
        return {both(t.min, f.min, [](Expr x, Expr y) { return min(x, y); }),
                both(t.max, f.max, [](Expr x, Expr y) { return max(x, y); })};
      }
      case ExprKind::Cast: {
        // A widening integer conversion keeps the order of values.
        auto* op = e.as<Cast>();
        DataType from = op->value.dtype(), to = e.dtype();
        bool widening = from.is_int() && to.is_int() && to.bits >= from.bits;
        if (!widening) return {};
        SymInterval v = eval(op->value);
        return {v.min.defined() ? cast(to, v.min) : Expr(), v.max.defined() ? cast(to, v.max) : Expr()};
      }
      case ExprKind::Broadcast: return eval(e.as<Broadcast>()->value);
      case ExprKind::Ramp: {
        auto* op = e.as<Ramp>();
        SymInterval base = eval(op->base), stride = eval(op->stride);
        if (!stride.is_point()) return {};
        Expr last = stride.min * int64_t(op->lanes - 1);
        if (non_negative(stride.min)) return {base.min, base.max.defined() ? base.max + last : Expr()};
        if (non_positive(stride.min)) return {base.min.defined() ? base.min + last : Expr(), base.max};
        return {};
      }
      case ExprKind::Let: {
        auto* op = e.as<Let>();
        SymIntervalMap inner = vars_;
        inner[op->var.get()] = eval(op->value);
        return SymBounder(inner, ranges_).eval(op->body);
      }
      default: return {};
    }
  }

 private:
  template <class F>
  static Expr both(const Expr& x, const Expr& y, F f) {
    return x.defined() && y.defined() ? f(x, y) : Expr();
  }
  // For the end where a missing bound does not matter (the upper end of a min).
  template <class F>
  static Expr either(const Expr& x, const Expr& y, F f) {
    if (x.defined() && y.defined()) return f(x, y);
    return x.defined() ? x : y;
  }
  template <class F>
  SymInterval scale(const SymInterval& a, const Expr& k, F f) {
    auto apply = [&](const Expr& x) { return x.defined() ? f(x, k) : Expr(); };
    if (non_negative(k)) return {apply(a.min), apply(a.max)};
    if (non_positive(k)) return {apply(a.max), apply(a.min)};
    return {};
  }
  bool non_negative(const Expr& x) { return x.defined() && can_prove(x >= make_zero(x.dtype()), ranges_); }
  bool non_positive(const Expr& x) { return x.defined() && can_prove(x <= make_zero(x.dtype()), ranges_); }
  bool positive(const Expr& x) { return x.defined() && can_prove(x > make_zero(x.dtype()), ranges_); }

  const SymIntervalMap& vars_;
  const IntervalMap& ranges_;
};

}  // namespace detail

// Symbolic bounds of the integer expression `e` when each variable of `vars` ranges over its
// SymInterval; variables not in `vars` are fixed (the result may use them). `ranges` holds
// known constant ranges of any variable, used to decide signs and to simplify the result.
// `i.outer*16 + i.inner` with i.inner in [0, 15] is [i.outer*16, i.outer*16 + 15].
// An end that cannot be bounded is left undefined.
inline SymInterval eval_sym_interval(const Expr& e, const SymIntervalMap& vars, const IntervalMap& ranges = {}) {
  SymInterval r = detail::SymBounder(vars, ranges).eval(e);
  if (r.min.defined()) r.min = simplify(r.min, ranges);
  if (r.max.defined()) r.max = simplify(r.max, ranges);
  return r;
}

}  // namespace ir
NNVM_END_NAMESPACE

// The simplifier builds on the analyses above; eval_sym_interval needs its definition.
// begin nnvm/ir/simplify.hpp
// The simplifier: constant folding, canonical affine index arithmetic, and removal of what
// interval analysis proves redundant (min/max, selects, ifs, div/mod by constants, dead loops).
//
// Requires: well-typed IR. Ensures: the value of every expression is unchanged for every input
// where the original is defined (int32/int64 overflow and division by zero are undefined, as in
// C), every expression keeps its dtype, and the result is deterministic. Each node is rewritten
// once after its operands, with no search over rewrites, so the cost stays near linear in the
// size of the IR (quadratic at worst in the length of one sum).

#include <cmath>

// begin nnvm/ir/const_fold.hpp
// Constant folding with the run-time semantics of each dtype: integers wrap at their width and
// divide truncating, float32 folds in float and float64 in double, and nothing whose run-time
// result is undefined (division by zero, an out-of-range float to int conversion) is folded.

#include <cmath>


NNVM_BEGIN_NAMESPACE
namespace ir {
namespace detail {

// True for an IntImm, UIntImm or FloatImm.
inline bool is_scalar_const(const Expr& e) {
  return e.defined() && (e.as<IntImm>() || e.as<UIntImm>() || e.as<FloatImm>());
}

// Folds `a op b` for two scalar constants of one dtype; undefined when the result is undefined
// behaviour at run time (division by zero, INT64_MIN / -1) or `op` is not foldable.
inline Expr fold_binary(ExprKind k, const Expr& a, const Expr& b) {
  DataType t = a.dtype();
  DataType bt = dtype::boolean;
  if (auto *x = a.as<IntImm>(), *y = b.as<IntImm>(); x && y) {
    int64_t p = x->value, q = y->value;
    uint64_t up = uint64_t(p), uq = uint64_t(q);
    switch (k) {
      case ExprKind::Add: return IntImm::make(t, int64_t(up + uq));
      case ExprKind::Sub: return IntImm::make(t, int64_t(up - uq));
      case ExprKind::Mul: return IntImm::make(t, int64_t(up * uq));
      case ExprKind::Div:
      case ExprKind::Mod:
        if (q == 0 || (p == INT64_MIN && q == -1)) return Expr();
        return IntImm::make(t, k == ExprKind::Div ? p / q : p % q);
      case ExprKind::Min: return IntImm::make(t, p < q ? p : q);
      case ExprKind::Max: return IntImm::make(t, p > q ? p : q);
      case ExprKind::EQ: return UIntImm::make(bt, p == q);
      case ExprKind::NE: return UIntImm::make(bt, p != q);
      case ExprKind::LT: return UIntImm::make(bt, p < q);
      case ExprKind::LE: return UIntImm::make(bt, p <= q);
      case ExprKind::GT: return UIntImm::make(bt, p > q);
      case ExprKind::GE: return UIntImm::make(bt, p >= q);
      default: return Expr();
    }
  }
  if (auto *x = a.as<UIntImm>(), *y = b.as<UIntImm>(); x && y) {
    uint64_t p = x->value, q = y->value;
    switch (k) {
      case ExprKind::Add: return UIntImm::make(t, p + q);
      case ExprKind::Sub: return UIntImm::make(t, p - q);
      case ExprKind::Mul: return UIntImm::make(t, p * q);
      case ExprKind::Div: return q == 0 ? Expr() : UIntImm::make(t, p / q);
      case ExprKind::Mod: return q == 0 ? Expr() : UIntImm::make(t, p % q);
      case ExprKind::Min: return UIntImm::make(t, p < q ? p : q);
      case ExprKind::Max: return UIntImm::make(t, p > q ? p : q);
      case ExprKind::EQ: return UIntImm::make(bt, p == q);
      case ExprKind::NE: return UIntImm::make(bt, p != q);
      case ExprKind::LT: return UIntImm::make(bt, p < q);
      case ExprKind::LE: return UIntImm::make(bt, p <= q);
      case ExprKind::GT: return UIntImm::make(bt, p > q);
      case ExprKind::GE: return UIntImm::make(bt, p >= q);
      case ExprKind::And: return UIntImm::make(t, p && q);
      case ExprKind::Or: return UIntImm::make(t, p || q);
      default: return Expr();
    }
  }
  if (auto *x = a.as<FloatImm>(), *y = b.as<FloatImm>(); x && y) {
    // Fold in the dtype's own precision: float32 through float, as the generated code computes.
    auto fold = [&](auto p, auto q) -> Expr {
      switch (k) {
        case ExprKind::Add: return FloatImm::make(t, double(p + q));
        case ExprKind::Sub: return FloatImm::make(t, double(p - q));
        case ExprKind::Mul: return FloatImm::make(t, double(p * q));
        case ExprKind::Div: return FloatImm::make(t, double(p / q));
        case ExprKind::Mod: return FloatImm::make(t, double(std::fmod(p, q)));
        // NaN-propagating, as the emitters and the interpreter (docs/lowered_ir.md).
        case ExprKind::Min: return FloatImm::make(t, double(p < q || p != p ? p : q));
        case ExprKind::Max: return FloatImm::make(t, double(p > q || p != p ? p : q));
        case ExprKind::EQ: return UIntImm::make(bt, p == q);
        case ExprKind::NE: return UIntImm::make(bt, p != q);
        case ExprKind::LT: return UIntImm::make(bt, p < q);
        case ExprKind::LE: return UIntImm::make(bt, p <= q);
        case ExprKind::GT: return UIntImm::make(bt, p > q);
        case ExprKind::GE: return UIntImm::make(bt, p >= q);
        default: return Expr();
      }
    };
    if (t.bits == 32) return fold(float(x->value), float(y->value));
    if (t.bits == 64) return fold(x->value, y->value);
  }
  return Expr();
}

// Folds a cast of a scalar constant; undefined when the conversion is undefined behaviour
// (a float out of the target integer's range, or NaN).
inline Expr fold_cast(DataType t, const Expr& v) {
  if (auto* i = v.as<IntImm>()) {
    if (t.is_int()) return IntImm::make(t, i->value);
    if (t.is_uint() || t.is_bool()) return UIntImm::make(t, uint64_t(i->value));
    if (t.is_float()) return FloatImm::make(t, t.bits == 64 ? double(i->value) : double(float(i->value)));
  }
  if (auto* u = v.as<UIntImm>()) {
    if (t.is_int()) return IntImm::make(t, int64_t(u->value));
    if (t.is_uint() || t.is_bool()) return UIntImm::make(t, u->value);
    if (t.is_float()) return FloatImm::make(t, t.bits == 64 ? double(u->value) : double(float(u->value)));
  }
  if (auto* f = v.as<FloatImm>()) {
    double x = f->value;
    if (t.is_float()) return FloatImm::make(t, x);
    if (t.is_bool()) return UIntImm::make(t, x != 0);
    if (std::isnan(x)) return Expr();
    if (t.is_int()) {
      double lim = std::ldexp(1.0, t.bits - 1);
      if (!(x > -lim - 1 && x < lim)) return Expr();
      return IntImm::make(t, int64_t(x));
    }
    if (t.is_uint()) {
      if (!(x > -1 && x < std::ldexp(1.0, t.bits))) return Expr();
      return UIntImm::make(t, uint64_t(x));
    }
  }
  return Expr();
}

}  // namespace detail
}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/const_fold.hpp

NNVM_BEGIN_NAMESPACE
namespace ir {

namespace detail {

// A statement that does nothing: an empty sequence.
inline Stmt no_op() { return make_stmt<Seq>(std::vector<Stmt>{}); }
inline bool is_no_op(const Stmt& s) {
  auto* q = s.as<Seq>();
  return !s.defined() || (q && q->seq.empty());
}

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline Expr make_binary(ExprKind k, Expr a, Expr b) {
  switch (k) {
#define NNVM_MAKE_CASE(N) case ExprKind::N: return N::make(std::move(a), std::move(b));
    NNVM_FOR_EACH_BINARY(NNVM_MAKE_CASE)
#undef NNVM_MAKE_CASE
    default: break;
  }
  NNVM_INTERNAL_CHECK(false, "make_binary on a non-binary kind");
  return Expr();
}

inline bool is_comparison(ExprKind k) {
  return k == ExprKind::EQ || k == ExprKind::NE || k == ExprKind::LT || k == ExprKind::LE ||
         k == ExprKind::GT || k == ExprKind::GE;
}
// The comparison that holds exactly when `k` does not (for integers; EQ/NE also for floats).
inline ExprKind negated(ExprKind k) {
  switch (k) {
    case ExprKind::EQ: return ExprKind::NE;
    case ExprKind::NE: return ExprKind::EQ;
    case ExprKind::LT: return ExprKind::GE;
    case ExprKind::LE: return ExprKind::GT;
    case ExprKind::GT: return ExprKind::LE;
    default: return ExprKind::LT;  // GE
  }
}
template <class N>
bool binary_operands(const Expr& e, ExprKind k, Expr& a, Expr& b) {
  if (e.kind() != k) return false;
  a = static_cast<const N*>(e.get())->a;
  b = static_cast<const N*>(e.get())->b;
  return true;
}
inline bool comparison_operands(const Expr& e, Expr& a, Expr& b) {
  return binary_operands<EQ>(e, ExprKind::EQ, a, b) || binary_operands<NE>(e, ExprKind::NE, a, b) ||
         binary_operands<LT>(e, ExprKind::LT, a, b) || binary_operands<LE>(e, ExprKind::LE, a, b) ||
         binary_operands<GT>(e, ExprKind::GT, a, b) || binary_operands<GE>(e, ExprKind::GE, a, b);
}

class Simplifier : public IRMutator {
 public:
  explicit Simplifier(IntervalMap ranges) : ranges_(std::move(ranges)) {}
  using IRMutator::mutate;

  // Shared subtrees (a DAG, as inlining makes) are simplified once per set of known ranges,
  // which keeps the cost linear in the number of distinct nodes rather than in the tree size.
  // The memo holds the input node too, so its address cannot be reused while it is a key.
  Expr mutate(const Expr& e) override {
    if (!e.defined()) return e;
    if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second.second;
    Expr r = IRMutator::mutate(e);
    memo_.emplace(e.get(), std::make_pair(e, r));
    return r;
  }

  // Applies every rule to `a op b`, whose operands are already simplified. `orig` (optional) is
  // returned when nothing changes, so unchanged trees stay shared.
  Expr binary(ExprKind k, const Expr& a, const Expr& b, const Expr& orig = Expr()) {
    Expr oa, ob;
    bool same_operands = orig.defined() && operands(orig, oa, ob) && oa.same_as(a) && ob.same_as(b);
    Expr r = rules(k, a, b);
    if (!r.defined()) return same_operands ? orig : make_binary(k, a, b);
    // Canonical input comes back rebuilt but equal: keep the original node.
    return same_operands && deep_equal(r, orig) ? orig : r;
  }

 protected:
  using IRMutator::visit;

  // ---- expressions ---------------------------------------------------------------------

  Expr visit(const VarNode* op, const Expr& e) override {
    auto it = ranges_.find(op);
    if (it != ranges_.end() && it->second.is_point() && op->dtype.is_int())
      return IntImm::make(op->dtype, *it->second.min);
    return e;
  }
#define NNVM_SIMPLIFY_BINARY(N) \
  Expr visit(const N* op, const Expr& e) override { return binary(ExprKind::N, mutate(op->a), mutate(op->b), e); }
  NNVM_FOR_EACH_BINARY(NNVM_SIMPLIFY_BINARY)
#undef NNVM_SIMPLIFY_BINARY

  Expr visit(const Not* op, const Expr& e) override {
    Expr a = mutate(op->a);
    return logical_not(a, a.same_as(op->a) ? e : Expr());
  }

  Expr visit(const Select* op, const Expr& e) override {
    Expr c = mutate(op->condition);
    if (auto* u = c.as<UIntImm>()) return mutate(u->value ? op->true_value : op->false_value);
    if (auto* bc = c.as<Broadcast>(); bc && bc->value.as<UIntImm>())
      return mutate(bc->value.as<UIntImm>()->value ? op->true_value : op->false_value);
    if (c.dtype().is_scalar()) {
      if (can_prove(c, ranges_)) return mutate(op->true_value);
      if (can_prove(!c, ranges_)) return mutate(op->false_value);
    }
    Expr t, f = mutate(op->false_value);
    {
      // The chosen branch may assume the condition (a guarded load may use the bounds it gives).
      Scope scope(*this);
      if (c.dtype().is_scalar()) refine(c);
      t = mutate(op->true_value);
    }
    if (deep_equal(t, f)) return t;
    if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
    return Select::make(c, t, f);
  }

  Expr visit(const Cast* op, const Expr& e) override {
    Expr v = mutate(op->value);
    DataType t = op->dtype;
    if (is_scalar_const(v)) {
      if (Expr r = fold_cast(t, v); r.defined()) return r;
    }
    if (auto* b = v.as<Broadcast>(); b && is_scalar_const(b->value)) {
      if (Expr r = fold_cast(t.element_of(), b->value); r.defined()) return Broadcast::make(r, b->lanes);
    }
    // int64(int32(x)) for an int64 x that fits int32 is x.
    if (auto* inner = v.as<Cast>(); inner && inner->value.dtype() == t && t.is_integer() &&
                                    v.dtype().is_integer() &&
                                    const_bound(inner->value, ranges_).within(dtype_range(v.dtype())))
      return inner->value;
    return v.same_as(op->value) ? e : Cast::make(t, v);
  }

  Expr visit(const Ramp* op, const Expr& e) override {
    Expr b = mutate(op->base), s = mutate(op->stride);
    if (b.same_as(op->base) && s.same_as(op->stride)) return is_const_int(s, 0) ? Broadcast::make(b, op->lanes) : e;
    return ramp(b, s, op->lanes);
  }

  Expr visit(const Let* op, const Expr& e) override {
    Expr v = mutate(op->value);
    if (is_scalar_const(v) || v.as<VarNode>()) return mutate(substitute(op->body, op->var, v));
    Expr body;
    {
      Scope scope(*this);
      bind(op->var, const_bound(v, ranges_));
      body = mutate(op->body);
    }
    if (!uses_var(body, op->var)) return body;
    if (v.same_as(op->value) && body.same_as(op->body)) return e;
    return Let::make(op->var, v, body);
  }

  Expr visit(const Reduce* op, const Expr& e) override {
    Scope scope(*this);
    for (auto& ax : op->axes) bind_loop(ax.var(), ax->dom.min, ax->dom.extent);
    return IRMutator::visit(op, e);
  }

  // ---- statements ----------------------------------------------------------------------

  Stmt visit(const For* op, const Stmt& s) override {
    Expr mn = mutate(op->min), ext = mutate(op->extent);
    auto* n = as_const_int(ext);
    if (n && *n <= 0) return no_op();
    if (n && *n == 1 && op->for_kind != ForKind::thread_binding)
      return mutate(substitute(op->body, op->loop_var, mn));
    Stmt body;
    {
      Scope scope(*this);
      bind_loop(op->loop_var, mn, ext);
      body = mutate(op->body);
    }
    if (is_no_op(body)) return no_op();
    if (mn.same_as(op->min) && ext.same_as(op->extent) && body.same_as(op->body)) return s;
    return For::make(op->loop_var, mn, ext, op->for_kind, body, op->thread_tag);
  }

  Stmt visit(const IfThenElse* op, const Stmt& s) override {
    Expr c = mutate(op->condition);
    if (auto* u = c.as<UIntImm>()) return u->value ? mutate(op->then_case) : mutate_or_no_op(op->else_case);
    Stmt then_case, else_case = mutate_or_no_op(op->else_case);
    {
      Scope scope(*this);
      refine(c);
      then_case = mutate(op->then_case);
    }
    if (is_no_op(then_case) && is_no_op(else_case)) return no_op();
    if (is_no_op(then_case)) return IfThenElse::make(logical_not(c), else_case);
    if (is_no_op(else_case)) else_case = Stmt();
    if (c.same_as(op->condition) && then_case.same_as(op->then_case) && else_case.same_as(op->else_case)) return s;
    return IfThenElse::make(c, then_case, else_case);
  }

  Stmt visit(const Seq* op, const Stmt& s) override {
    std::vector<Stmt> out;
    bool changed = false;
    for (auto& x : op->seq) {
      Stmt y = mutate(x);
      changed |= !y.same_as(x);
      if (is_no_op(y)) {
        changed = true;
        continue;
      }
      changed |= y.as<Seq>() != nullptr;
      out.push_back(y);
    }
    if (!changed) return s;
    return out.empty() ? no_op() : Seq::make(out);
  }

  Stmt visit(const LetStmt* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    if (is_scalar_const(v) || v.as<VarNode>()) return mutate(substitute(op->body, op->var, v));
    Stmt body;
    {
      Scope scope(*this);
      bind(op->var, const_bound(v, ranges_));
      body = mutate(op->body);
    }
    if (is_no_op(body)) return no_op();
    if (!uses_var(body, op->var)) return body;
    if (v.same_as(op->value) && body.same_as(op->body)) return s;
    return LetStmt::make(op->var, v, body);
  }

  Stmt visit(const Evaluate* op, const Stmt& s) override {
    Expr v = mutate(op->value);
    if (is_const(v)) return no_op();
    return v.same_as(op->value) ? s : Evaluate::make(v);
  }

  Stmt visit(const Allocate* op, const Stmt& s) override {
    Stmt body = mutate(op->body);
    if (is_no_op(body)) return no_op();
    return body.same_as(op->body) ? s : Allocate::make(op->buffer, body);
  }

 private:
  // Saves the ranges on entry and restores them on exit, so facts stay within their scope.
  // Results memoized under other ranges do not carry over in either direction.
  struct Scope {
    Simplifier& self;
    IntervalMap saved;
    explicit Scope(Simplifier& s) : self(s), saved(s.ranges_) { self.memo_.clear(); }
    ~Scope() {
      self.ranges_ = std::move(saved);
      self.memo_.clear();
    }
  };

  Stmt mutate_or_no_op(const Stmt& s) { return s.defined() ? mutate(s) : no_op(); }

  void bind(const Var& v, const Interval& i) { ranges_[v.get()] = i; }
  // A loop variable lies in [min, min + extent - 1] (as far as constants tell).
  void bind_loop(const Var& v, const Expr& mn, const Expr& ext) {
    Interval m = const_bound(mn, ranges_), x = const_bound(ext, ranges_);
    Bound hi = bound_add(bound_add(hi_of(m), hi_of(x)), Bound::of(-1));
    bind(v, from_bounds(lo_of(m), hi));
  }
  // Narrows variable ranges with what `c` (a scalar condition known true) says about them.
  void refine(const Expr& c) {
    if (auto* a = c.as<And>()) {
      refine(a->a);
      refine(a->b);
      return;
    }
    Expr l, r;
    if (!comparison_operands(c, l, r) || !l.dtype().is_int() || !l.dtype().is_scalar()) return;
    ExprKind k = c.kind();
    if (!l.as<VarNode>() && r.as<VarNode>()) {  // put the variable on the left
      std::swap(l, r);
      if (k == ExprKind::LT) k = ExprKind::GT;
      else if (k == ExprKind::LE) k = ExprKind::GE;
      else if (k == ExprKind::GT) k = ExprKind::LT;
      else if (k == ExprKind::GE) k = ExprKind::LE;
    }
    auto* v = l.as<VarNode>();
    if (!v || k == ExprKind::NE) return;
    Interval other = const_bound(r, ranges_);
    Interval& cur = ranges_[v];
    auto lower = [&](std::optional<int64_t> m, int64_t shift) {
      if (m && !(shift > 0 && *m == INT64_MAX) && (!cur.min || *m + shift > *cur.min)) cur.min = *m + shift;
    };
    auto upper = [&](std::optional<int64_t> m, int64_t shift) {
      if (m && !(shift < 0 && *m == INT64_MIN) && (!cur.max || *m + shift < *cur.max)) cur.max = *m + shift;
    };
    if (k == ExprKind::LT) upper(other.max, -1);
    if (k == ExprKind::LE || k == ExprKind::EQ) upper(other.max, 0);
    if (k == ExprKind::GT) lower(other.min, 1);
    if (k == ExprKind::GE || k == ExprKind::EQ) lower(other.min, 0);
  }

  static bool operands(const Expr& e, Expr& a, Expr& b) {
    switch (e.kind()) {
#define NNVM_OPERANDS(N) case ExprKind::N: return binary_operands<N>(e, ExprKind::N, a, b);
      NNVM_FOR_EACH_BINARY(NNVM_OPERANDS)
#undef NNVM_OPERANDS
      default: return false;
    }
  }

  Expr ramp(const Expr& base, const Expr& stride, int lanes) {
    if (is_const_int(stride, 0)) return Broadcast::make(base, lanes);
    return Ramp::make(base, stride, lanes);
  }

  Expr logical_not(const Expr& a, const Expr& orig = Expr()) {
    if (auto* u = a.as<UIntImm>()) return UIntImm::make(a.dtype(), !u->value);
    if (auto* n = a.as<Not>()) return n->a;
    Expr l, r;
    if (comparison_operands(a, l, r) &&
        (l.dtype().is_integer() || a.kind() == ExprKind::EQ || a.kind() == ExprKind::NE))
      return binary(negated(a.kind()), l, r);
    return orig.defined() ? orig : Not::make(a);
  }

  // Canonical order of commutative operands: constants last, the rest by ExprOrder.
  void order_commutative(Expr& a, Expr& b) {
    bool ca = is_const(a), cb = is_const(b);
    if ((ca && !cb) || (ca == cb && order_.compare(b, a) < 0)) std::swap(a, b);
  }

  Expr scalar_rules(ExprKind k, Expr a, Expr b) {
    DataType t = a.dtype();
    bool no_wrap = t.is_int() && !wraps(t);
    if (has_affine_form(t) && (k == ExprKind::Add || k == ExprKind::Sub || k == ExprKind::Mul)) {
      if (k == ExprKind::Mul && !a.as<IntImm>() && !b.as<IntImm>()) return product(a, b);
      AffineForm f;
      if (k == ExprKind::Mul) {
        bool left = a.as<IntImm>() != nullptr;
        f = to_affine(left ? b : a);
        f.scale((left ? a : b).as<IntImm>()->value);
      } else {
        f = to_affine(a);
        f.add(to_affine(b), k == ExprKind::Add ? 1 : -1);
      }
      return from_affine(f, order_);
    }
    switch (k) {
      case ExprKind::Add:
        if (t.is_uint() && is_const_int(b, 0)) return a;
        if (t.is_uint() && is_const_int(a, 0)) return b;
        return Expr();
      case ExprKind::Sub:
        // x - 0.0 is x even for -0.0 and NaN; x + 0.0 is not (-0.0 + 0.0 is +0.0).
        if ((t.is_uint() && is_const_int(b, 0)) || (t.is_float() && is_float_const(b, 0.0, false))) return a;
        if (t.is_uint() && deep_equal(a, b)) return make_zero(t);
        return Expr();
      case ExprKind::Mul:
        if (t.is_uint() || t.is_float()) {
          if (t.is_uint() ? is_const_int(b, 1) : is_float_const(b, 1.0, true)) return a;
          if (t.is_uint() ? is_const_int(a, 1) : is_float_const(a, 1.0, true)) return b;
          if (t.is_uint() && (is_const_int(a, 0) || is_const_int(b, 0))) return make_zero(t);
        }
        return Expr();
      case ExprKind::Div:
        if (t.is_float() ? is_float_const(b, 1.0, true) : is_one(b)) return a;
        if (no_wrap) return div_mod(true, a, b);
        return Expr();
      case ExprKind::Mod:
        if (t.is_integer() && is_one(b)) return make_zero(t);
        if (no_wrap) return div_mod(false, a, b);
        return Expr();
      case ExprKind::Min:
      case ExprKind::Max: {
        if (deep_equal(a, b)) return a;
        if (!t.is_integer()) return Expr();
        bool is_min = k == ExprKind::Min;
        if (can_prove(LE::make(a, b), ranges_)) return is_min ? a : b;
        if (can_prove(LE::make(b, a), ranges_)) return is_min ? b : a;
        order_commutative(a, b);
        return is_min ? Min::make(a, b) : Max::make(a, b);
      }
      case ExprKind::And:
        if (auto* u = a.as<UIntImm>()) return u->value ? b : a;
        if (auto* u = b.as<UIntImm>()) return u->value ? a : b;
        if (deep_equal(a, b)) return a;
        return Expr();
      case ExprKind::Or:
        if (auto* u = a.as<UIntImm>()) return u->value ? a : b;
        if (auto* u = b.as<UIntImm>()) return u->value ? b : a;
        if (deep_equal(a, b)) return a;
        return Expr();
      default:
        if (is_comparison(k) && (t.is_integer() || t.is_bool())) {
          Expr cond = make_binary(k, a, b);
          if (can_prove(cond, ranges_)) return const_true();
          if (can_prove(make_binary(negated(k), a, b), ranges_)) return const_false();
        }
        return Expr();
    }
  }

  Expr rules(ExprKind k, const Expr& a, const Expr& b) {
    if (is_scalar_const(a) && is_scalar_const(b)) {
      if (Expr r = fold_binary(k, a, b); r.defined()) return r;
    }
    return a.dtype().is_vector() ? vector_rules(k, a, b) : scalar_rules(k, a, b);
  }

  // A product of two non-constants. A sum times a single term distributes, so symbolic strides
  // cancel like constant ones: (i.outer*16 + i.inner)*n is i.outer*n*16 + i.inner*n. A sum
  // times a sum stays one term: expanding it could grow without bound.
  Expr product(Expr a, Expr b) {
    DataType t = a.dtype();
    AffineForm fa = to_affine(a), fb = to_affine(b);
    auto monomial = [](const AffineForm& f) { return f.terms.size() == 1 && f.constant == 0; };
    if (!monomial(fb) && monomial(fa)) std::swap(fa, fb);
    if (!monomial(fb)) {
      order_commutative(a, b);
      return Mul::make(a, b);
    }
    auto [tb, cb] = fb.terms[0];
    AffineForm out{t, {}, 0};
    for (auto& [ta, ca] : fa.terms) {
      Expr x = ta, y = tb;
      order_commutative(x, y);
      out.add_term(Mul::make(x, y), out.wrap(uint64_t(ca) * uint64_t(cb)));
    }
    out.add_term(tb, out.wrap(uint64_t(fa.constant) * uint64_t(cb)));
    return from_affine(out, order_);
  }

  static bool is_one(const Expr& e) { return is_const_int(e, 1); }
  static bool is_float_const(const Expr& e, double v, bool sign_matters) {
    auto* f = e.as<FloatImm>();
    return f && f->value == v && (!sign_matters || std::signbit(f->value) == std::signbit(v));
  }

  // Integer division and remainder by a positive constant c, on int32/int64. Writes the dividend
  // as c*Q + R (R: the terms whose coefficients c does not divide, plus the constant mod c):
  // when the dividend and R are non-negative, x / c = Q + R / c and x % c = R % c, and R / c
  // vanishes when R < c. An exact dividend (R = 0) needs no sign condition.
  Expr div_mod(bool is_div, const Expr& a, const Expr& b) {
    DataType t = a.dtype();
    Interval ai = const_bound(a, ranges_);
    if (auto* c = b.as<IntImm>(); c && c->value > 0) {
      int64_t cv = c->value;
      // Nested division by positive constants: (x / c1) / c2 == x / (c1*c2).
      if (auto* inner = a.as<Div>(); is_div && inner) {
        auto* c1 = inner->b.as<IntImm>();
        int64_t prod;
        if (c1 && c1->value > 0 && checked_mul(c1->value, cv, prod) && Interval::point(prod).within(dtype_range(t)))
          return binary(ExprKind::Div, inner->a, IntImm::make(t, prod));
      }
      // (x % c1) % c2 == x % c2 when c2 divides c1.
      if (auto* inner = a.as<Mod>(); !is_div && inner) {
        auto* c1 = inner->b.as<IntImm>();
        if (c1 && c1->value > 0 && c1->value % cv == 0) return binary(ExprKind::Mod, inner->a, b);
      }
      AffineForm f = to_affine(a), q{t, {}, 0}, r{t, {}, 0};
      for (auto& [term, coeff] : f.terms) {
        if (coeff % cv == 0) q.add_term(term, coeff / cv);
        else r.add_term(term, coeff);
      }
      q.constant = floor_div(f.constant, cv);
      r.constant = f.constant - q.constant * cv;
      if (r.is_const() && r.constant == 0) return is_div ? from_affine(q, order_) : make_zero(t);
      // |x| < c: the quotient is 0 and the remainder x.
      if (ai.within(Interval::range(1 - cv, cv - 1))) return is_div ? make_zero(t) : a;
      if (!(ai.min && *ai.min >= 0)) return Expr();
      Expr rest = from_affine(r, order_);
      Interval ri = const_bound(rest, ranges_);
      if (!(ri.min && *ri.min >= 0)) return Expr();
      bool q_zero = q.is_const() && q.constant == 0;
      if (ri.max && *ri.max < cv) return is_div ? from_affine(q, order_) : rest;
      if (q_zero) return Expr();  // nothing to take out: keep x / c as it is
      if (!is_div) return Mod::make(rest, b);
      q.add_term(Div::make(rest, b), 1);
      return from_affine(q, order_);
    }
    // A non-negative dividend below a positive divisor.
    Interval bi = const_bound(b, ranges_);
    if (ai.min && *ai.min >= 0 && ai.max && bi.min && *bi.min > *ai.max) return is_div ? make_zero(t) : a;
    return Expr();
  }

  Expr vector_rules(ExprKind k, const Expr& a, const Expr& b) {
    DataType t = a.dtype();
    int lanes = t.lanes;
    auto *ba = a.as<Broadcast>(), *bb = b.as<Broadcast>();
    if (ba && bb) return Broadcast::make(binary(k, ba->value, bb->value), lanes);
    if (!t.is_int()) return Expr();
    auto *ra = a.as<Ramp>(), *rb = b.as<Ramp>();
    auto add = [&](const Expr& x, const Expr& y) { return binary(ExprKind::Add, x, y); };
    auto sub = [&](const Expr& x, const Expr& y) { return binary(ExprKind::Sub, x, y); };
    auto mul = [&](const Expr& x, const Expr& y) { return binary(ExprKind::Mul, x, y); };
    Expr zero = make_zero(t.element_of());
    switch (k) {
      case ExprKind::Add:
        if (ra && rb) return ramp(add(ra->base, rb->base), add(ra->stride, rb->stride), lanes);
        if (ra && bb) return ramp(add(ra->base, bb->value), ra->stride, lanes);
        if (ba && rb) return ramp(add(ba->value, rb->base), rb->stride, lanes);
        return Expr();
      case ExprKind::Sub:
        if (ra && rb) return ramp(sub(ra->base, rb->base), sub(ra->stride, rb->stride), lanes);
        if (ra && bb) return ramp(sub(ra->base, bb->value), ra->stride, lanes);
        if (ba && rb) return ramp(sub(ba->value, rb->base), sub(zero, rb->stride), lanes);
        return Expr();
      case ExprKind::Mul:
        if (ra && bb) return ramp(mul(ra->base, bb->value), mul(ra->stride, bb->value), lanes);
        if (ba && rb) return ramp(mul(ba->value, rb->base), mul(ba->value, rb->stride), lanes);
        return Expr();
      case ExprKind::Div:
      case ExprKind::Mod: {
        // Every lane of ramp(base, s, n) / c has one quotient when the first and the last do
        // (the lanes increase); then lane k % c is base % c + k*s.
        if (!ra || !bb || wraps(t)) return Expr();
        auto* c = bb->value.as<IntImm>();
        auto* s = ra->stride.as<IntImm>();
        if (!c || c->value <= 0 || !s || s->value < 0) return Expr();
        Expr first = binary(ExprKind::Div, ra->base, bb->value);
        Expr last_lane = add(ra->base, IntImm::make(t.element_of(), s->value * (lanes - 1)));
        if (!deep_equal(first, binary(ExprKind::Div, last_lane, bb->value))) return Expr();
        if (k == ExprKind::Div) return Broadcast::make(first, lanes);
        return ramp(binary(ExprKind::Mod, ra->base, bb->value), ra->stride, lanes);
      }
      default: return Expr();
    }
  }

  IntervalMap ranges_;
  ExprOrder order_;
  std::unordered_map<const ExprNode*, std::pair<Expr, Expr>> memo_;
};

}  // namespace detail

// Simplifies `e` given known ranges of its variables (see the header comment for the rules).
inline Expr simplify(const Expr& e, const IntervalMap& ranges) {
  return detail::Simplifier(ranges).mutate(e);
}
inline Expr simplify(const Expr& e) { return simplify(e, IntervalMap{}); }

// Simplifies every expression of `s` with the ranges of the loops around it, and removes what
// is dead: loops of extent 0 (extent-1 loops other than thread bindings become a substitution),
// ifs with a provable condition, constant Evaluates, empty branches; sequences are flattened.
// A statement that does nothing becomes an empty Seq.
inline Stmt simplify(const Stmt& s, const IntervalMap& ranges = {}) {
  return detail::Simplifier(ranges).mutate(s);
}

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/simplify.hpp
// end nnvm/ir/interval.hpp
// begin nnvm/ir/verifier.hpp
// Checks that a lowered function keeps the lowered-IR contract (docs/lowered_ir.md), so that a
// broken pass is caught where it ran instead of in an emitter. Violations throw InternalError
// with an id "nnvm.verify.<what>" and the context (kernel › enclosing loops):
//   undefined           an undefined statement or expression
//   undefined_buffer    a Load/Store of a buffer that is neither a param nor allocated around it
//   var_scope           a variable used outside the For/Let/LetStmt that defines it
//                       (size_vars are in scope everywhere)
//   var_redefined       a variable defined again inside its own scope (or a size var redefined)
//   buffer_redefined    an Allocate of a buffer that is already a param or allocated around it
//   producer_node       ProducerLoad / ProducerStore / ProducerRealize left after lowering
//   reduce_node         a Reduce left after lowering
//   index_dtype         a Load/Store index that is not an integer
//   lanes_mismatch      a Store whose value lanes differ from its index lanes
//   store_dtype         a Store whose value element type is not the buffer's
//   condition_dtype     an if or select condition (or && / || / ! operand) that is not bool
//   loop_dtype          a loop variable, min or extent that is not a scalar integer
//   thread_tag          a thread-binding loop without a tag, or a tag on another loop
// lower() also checks the IR between its passes when NNVM_VERIFY_PASSES=1 (IRForm::loop_nest
// before storage_flatten).

#include <unordered_set>


NNVM_BEGIN_NAMESPACE
namespace ir {

// What the verified IR is: lowered (the contract above) or a loop nest that still stores, reads
// and realizes tensors (schedule_ops' output, before storage_flatten).
enum class IRForm { lowered, loop_nest };

namespace detail {

class Verifier : public IRVisitor {
 public:
  Verifier(std::string kernel, const std::vector<Buffer>& params, const std::vector<Var>& size_vars,
           IRForm form = IRForm::lowered)
      : form_(form), context_{"kernel " + std::move(kernel)} {
    for (auto& v : size_vars) define(v);
    for (auto& b : params) {
      for (auto& d : b->shape) visit_expr(d);
      buffers_.insert(b.get());
    }
  }

  void visit_expr(const Expr& e) override {
    if (!e.defined()) fail("undefined", "an expression is undefined");
    IRVisitor::visit_expr(e);
  }
  void visit_stmt(const Stmt& s) override {
    if (!s.defined()) fail("undefined", "a statement is undefined");
    IRVisitor::visit_stmt(s);
  }

 protected:
  using IRVisitor::visit;

  void visit(const VarNode* op) override {
    if (!vars_.count(op))
      fail("var_scope", str_cat("variable ", op->name, " is used outside the loop or let that defines it"));
  }
  void visit(const Load* op) override {
    check_buffer(op->buffer, "load");
    check_index(op->buffer, op->index, "load");
    visit_expr(op->index);
  }
  void visit(const Let* op) override {
    visit_expr(op->value);
    Bind bind(*this, op->var);
    visit_expr(op->body);
  }
  void visit(const Select* op) override {
    check_bool(op->condition, "select condition");
    IRVisitor::visit(op);
  }
  void visit(const And* op) override {
    check_bool(op->a, "operand of &&");
    IRVisitor::visit(op);
  }
  void visit(const Or* op) override {
    check_bool(op->a, "operand of ||");
    IRVisitor::visit(op);
  }
  void visit(const Not* op) override {
    check_bool(op->a, "operand of !");
    IRVisitor::visit(op);
  }
  void visit(const Reduce*) override {
    fail("reduce_node", "a reduction is left in lowered IR; lowering must turn it into loops");
  }
  void visit(const ProducerLoad* op) override {
    if (form_ == IRForm::lowered)
      fail("producer_node", str_cat("tensor read ", op->tensor->name, "(...) is left in lowered IR"));
    IRVisitor::visit(op);
  }

  void visit(const For* op) override {
    if (!op->loop_var.dtype().is_int() || !op->loop_var.dtype().is_scalar() || !scalar_int(op->min) ||
        !scalar_int(op->extent))
      fail("loop_dtype", str_cat("loop ", op->loop_var.name(), " needs a scalar integer variable, min and extent"));
    if ((op->for_kind == ForKind::thread_binding) == op->thread_tag.empty())
      fail("thread_tag", str_cat("loop ", op->loop_var.name(),
                                 op->thread_tag.empty() ? " is bound to a thread axis but has no tag"
                                                        : " has a thread tag but is not a thread binding"));
    visit_expr(op->min);
    visit_expr(op->extent);
    Bind bind(*this, op->loop_var);
    context_.push_back(str_cat(for_kind_name(op->for_kind), " ", op->loop_var.name()));
    visit_stmt(op->body);
    context_.pop_back();
  }
  void visit(const Store* op) override {
    check_buffer(op->buffer, "store");
    check_index(op->buffer, op->index, "store");
    if (op->value.defined() && op->value.dtype().lanes != op->index.dtype().lanes)
      fail("lanes_mismatch", str_cat("store to ", op->buffer->name, " writes ", op->value.dtype().lanes,
                                     " lanes at an index of ", op->index.dtype().lanes, " lanes"));
    if (op->value.defined() && op->value.dtype().element_of() != op->buffer->dtype)
      fail("store_dtype", str_cat("store of ", op->value.dtype(), " into ", op->buffer->name, " of ", op->buffer->dtype));
    IRVisitor::visit(op);
  }
  void visit(const Allocate* op) override {
    if (buffers_.count(op->buffer.get()))
      fail("buffer_redefined", str_cat("buffer ", op->buffer->name, " is allocated where it already exists"));
    for (auto& d : op->buffer->shape) visit_expr(d);
    buffers_.insert(op->buffer.get());
    context_.push_back("allocate " + op->buffer->name);
    visit_stmt(op->body);
    context_.pop_back();
    buffers_.erase(op->buffer.get());
  }
  void visit(const IfThenElse* op) override {
    if (!op->condition.defined() || !op->condition.dtype().is_bool() || !op->condition.dtype().is_scalar())
      fail("condition_dtype", "an if condition must be a scalar bool");
    visit_expr(op->condition);
    visit_stmt(op->then_case);
    if (op->else_case.defined()) visit_stmt(op->else_case);
  }
  void visit(const LetStmt* op) override {
    visit_expr(op->value);
    Bind bind(*this, op->var);
    visit_stmt(op->body);
  }
  void visit(const ProducerStore* op) override {
    if (form_ == IRForm::lowered)
      fail("producer_node", str_cat("tensor store ", op->tensor->name, "(...) = ... is left in lowered IR"));
    IRVisitor::visit(op);
  }
  void visit(const ProducerRealize* op) override {
    if (form_ == IRForm::lowered)
      fail("producer_node", str_cat("realize of tensor ", op->tensor->name, " is left in lowered IR"));
    for (auto& r : op->bounds) {
      visit_expr(r.min);
      visit_expr(r.extent);
    }
    context_.push_back("realize " + op->tensor->name);
    visit_stmt(op->body);
    context_.pop_back();
  }

 private:
  // Puts a variable in scope for the lifetime of this object.
  struct Bind {
    Verifier& self;
    const VarNode* var;
    Bind(Verifier& s, const Var& v) : self(s), var(v.get()) { self.define(v); }
    ~Bind() { self.vars_.erase(var); }
  };

  void define(const Var& v) {
    if (!vars_.insert(v.get()).second)
      fail("var_redefined", str_cat("variable ", v.name(), " is defined again inside its own scope"));
  }
  static bool scalar_int(const Expr& e) { return e.defined() && e.dtype().is_int() && e.dtype().is_scalar(); }
  void check_buffer(const Buffer& b, const char* what) {
    if (!b.defined()) fail("undefined", str_cat("a ", what, " has no buffer"));
    if (!buffers_.count(b.get()))
      fail("undefined_buffer", str_cat(what, " of buffer ", b->name, " which is neither a parameter nor allocated here"));
  }
  void check_index(const Buffer& b, const Expr& index, const char* what) {
    if (!index.defined()) fail("undefined", str_cat("index of a ", what, " of ", b->name, " is undefined"));
    if (!index.dtype().is_int())
      fail("index_dtype", str_cat(what, " of ", b->name, " has an index of type ", index.dtype(), "; it must be an integer"));
  }
  void check_bool(const Expr& e, const char* what) {
    if (e.defined() && !e.dtype().is_bool())
      fail("condition_dtype", str_cat(what, " is ", e.dtype(), ", not bool: ", to_string(e)));
  }
  [[noreturn]] void fail(const std::string& what, const std::string& message) {
    throw InternalError("nnvm.verify." + what, message, context_);
  }

  IRForm form_;
  std::vector<std::string> context_;
  std::unordered_set<const VarNode*> vars_;
  std::unordered_set<const BufferNode*> buffers_;
};

}  // namespace detail

// Checks `body` as the body of a kernel with these params and size vars.
inline void verify(const Stmt& body, const std::vector<Buffer>& params, const std::vector<Var>& size_vars,
                   const std::string& kernel = "<stmt>", IRForm form = IRForm::lowered) {
  detail::Verifier v(kernel, params, size_vars, form);
  v.visit_stmt(body);
}

// Throws InternalError "nnvm.verify.<what>" when `f` breaks the lowered-IR contract.
inline void verify(const LoweredFunc& f) { verify(f.body, f.params, f.size_vars, f.name); }

}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/ir/verifier.hpp
// begin nnvm/ndarray.hpp
// Host tensors handed to compiled kernels: NDArray owns aligned memory, BufferView borrows it.

#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <span>
#include <vector>

// begin nnvm/limits.hpp
// The bounds every layer applies to what a model, possibly a hostile one, can cost. One size
// bound per tensor: the importer (initializers, declared input shapes), shape inference,
// NDArray, nnvmc's --input-shape and .npy reader, and the deploy runtime's loader all check it,
// so a byte or element count that passed can be multiplied by a dtype size or used as an int64
// offset without wrapping. And one budget for constant folding (FoldBudget).
//
// Only the standard library and config.hpp: the deploy runtime includes it too.

#include <cstdint>
#include <optional>


NNVM_BEGIN_NAMESPACE

// 2^48 bytes (256 TiB): far above any real tensor, far below where int64 byte offsets wrap.
inline constexpr uint64_t max_tensor_bytes = uint64_t(1) << 48;

// The byte size of a compact tensor with `extents` and `elem_bytes` bytes per element, or
// nullopt when an extent is negative or the size exceeds max_tensor_bytes (overflow included).
// A zero extent makes the tensor empty whatever the other extents are.
template <class Extents>
std::optional<uint64_t> checked_tensor_bytes(const Extents& extents, uint64_t elem_bytes) {
  bool empty = false;
  for (auto e : extents) {
    if (e < 0) return std::nullopt;
    if (e == 0) empty = true;
  }
  if (empty) return 0;
  uint64_t bytes = elem_bytes;
  for (auto e : extents)
    if (__builtin_mul_overflow(bytes, uint64_t(e), &bytes) || bytes > max_tensor_bytes) return std::nullopt;
  return bytes;
}

// Folding turns work into memory, so a small hostile file (a chain of ConstantOfShape + Add)
// could make an import hold gigabytes of folded constants and spend minutes computing them. A
// budget of folded bytes per import (and per compile) bounds both; nodes past it stay ops, which
// compute the same values at run time. Results of at most `always_bytes` fold regardless and are
// not counted: shape arithmetic (Shape -> Gather -> Concat) must fold for Reshape's shape to be
// known, and it is tiny.
struct FoldBudget {
  static constexpr uint64_t default_bytes = uint64_t(256) << 20;
  static constexpr uint64_t always_bytes = 8192;
  uint64_t left = default_bytes;

  // True (and the bytes are taken) when a result of `bytes` bytes may be folded.
  bool take(uint64_t bytes) {
    if (bytes <= always_bytes) return true;
    if (bytes > left) return false;
    left -= bytes;
    return true;
  }
};

NNVM_END_NAMESPACE
// end nnvm/limits.hpp

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
// end nnvm/ndarray.hpp
// begin nnvm/te/operation.hpp
// Tensors and the operations that produce them: placeholders (inputs) and computes (a body
// expression over index variables). This is the untyped path; te/dsl.hpp wraps it with
// compile-time rank, dtype and shape checks.

#include <functional>
#include <initializer_list>


NNVM_BEGIN_NAMESPACE
namespace te {

using nnvm::DataType;
using ir::Expr;
using ir::IterVar;
using ir::Range;
using ir::Var;

struct OperationNode;

// A tensor: the IR's producer (name, shape, dtype) and the operation that computes it.
struct TensorNode : ir::ProducerNode {
  std::shared_ptr<const OperationNode> op;  // the producer
};

// The tensor an IR producer is. Every producer in IR is a TensorNode: only the DSL (and the
// schedule's cache and rfactor stages, which are tensors too) makes producer loads.
inline std::shared_ptr<const TensorNode> as_tensor(const std::shared_ptr<const ir::ProducerNode>& p) {
  return std::static_pointer_cast<const TensorNode>(p);
}
inline const TensorNode* as_tensor(const ir::ProducerNode* p) { return static_cast<const TensorNode*>(p); }

enum class OpKind : uint8_t { placeholder, compute };

struct OperationNode {
  OpKind kind;
  std::string name;
  // compute only: one data-parallel axis per output dimension, and the body. A body whose top
  // is a Reduce is a reduction; its reduce axes are listed in reduce_axes.
  std::vector<IterVar> axis;
  std::vector<IterVar> reduce_axes;
  Expr body;
  // The tensors the body reads, in first-use order.
  std::vector<std::shared_ptr<const TensorNode>> inputs;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const TensorNode> n) : node_(std::move(n)) {}

  bool defined() const { return node_ != nullptr; }
  const TensorNode* get() const { return node_.get(); }
  const TensorNode* operator->() const { return node_.get(); }
  const std::shared_ptr<const TensorNode>& node_ptr() const { return node_; }
  const std::string& name() const { return node_->name; }
  DataType dtype() const { return node_->dtype; }
  size_t rank() const { return node_->shape.size(); }
  const std::vector<Expr>& shape() const { return node_->shape; }
  const OperationNode& op() const { return *node_->op; }
  bool same_as(const Tensor& o) const { return node_ == o.node_; }

  // Element access: builds a read of this tensor at `indices` (int64 expressions).
  Expr operator()(std::vector<Expr> indices) const {
    if (indices.size() != rank())
      throw UserError("nnvm.te.rank_mismatch",
                      str_cat("tensor ", name(), " has rank ", rank(), " but is indexed with ",
                              indices.size(), indices.size() == 1 ? " index" : " indices"));
    for (auto& i : indices) {
      if (!i.dtype().is_int() || !i.dtype().is_scalar())
        throw UserError("nnvm.te.index_dtype", str_cat("index of tensor ", name(), " is ", i.dtype(),
                                                       "; indices must be scalar integers"));
      if (i.dtype() != dtype::index) i = ir::cast(dtype::index, i);
    }
    return ir::make_expr<ir::ProducerLoad>(dtype(), node_, std::move(indices));
  }
  template <class... I>
    requires(sizeof...(I) > 0 && (std::is_convertible_v<I, Expr> && ...))
  Expr operator()(I&&... i) const {
    return (*this)(std::vector<Expr>{Expr(std::forward<I>(i))...});
  }

 private:
  std::shared_ptr<const TensorNode> node_;
};

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.name(); }

namespace detail {
inline void check_shape(const std::string& name, const std::vector<Expr>& shape) {
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!shape[d].defined() || !shape[d].dtype().is_int() || !shape[d].dtype().is_scalar())
      throw UserError("nnvm.te.shape_dtype",
                      str_cat("extent of dimension ", d, " of tensor ", name, " must be a scalar integer"));
    // Zero is allowed: empty tensors (ONNX's empty sets, a Slice that selects nothing) lower to
    // loops that run no iterations.
    if (auto* c = ir::as_const_int(shape[d]); c && *c < 0)
      throw UserError("nnvm.te.shape_negative",
                      str_cat("extent of dimension ", d, " of tensor ", name, " is ", *c, "; extents must be non-negative"));
  }
}
inline std::vector<Expr> to_index_dtype(std::vector<Expr> shape) {
  for (auto& e : shape)
    if (e.defined() && e.dtype().is_int() && e.dtype() != dtype::index) e = ir::cast(dtype::index, e);
  return shape;
}
// Tensors read by `body`, in first-use order.
inline std::vector<std::shared_ptr<const TensorNode>> collect_inputs(const Expr& body) {
  struct Collector : ir::IRVisitor {
    std::vector<std::shared_ptr<const TensorNode>> out;
    void visit(const ir::ProducerLoad* op) override {
      bool seen = false;
      for (auto& t : out) seen |= t == op->tensor;
      if (!seen) out.push_back(as_tensor(op->tensor));
      ir::IRVisitor::visit(op);
    }
  } c;
  c.visit_expr(body);
  return c.out;
}
inline std::string default_axis_name(size_t d, size_t rank) {
  static const char* const names[] = {"i", "j", "k", "l", "m", "n"};
  return rank <= 6 ? names[d] : "i" + std::to_string(d);
}
}  // namespace detail

// An input tensor of the given shape and element type. Extents may be symbolic `Var`s.
inline Tensor placeholder(std::vector<Expr> shape, DataType dtype, std::string name) {
  shape = detail::to_index_dtype(std::move(shape));
  detail::check_shape(name, shape);
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::placeholder;
  op->name = name;
  return Tensor(std::make_shared<const TensorNode>(TensorNode{{std::move(name), std::move(shape), dtype}, std::move(op)}));
}

// A reduction axis over [min, min + extent).
inline IterVar reduce_axis(Expr extent, std::string name = "r", Expr min = Expr(int64_t(0))) {
  if (extent.dtype() != dtype::index) extent = ir::cast(dtype::index, extent);
  // An empty reduction (extent 0) yields its combiner's initial value.
  if (auto* c = ir::as_const_int(extent); c && *c < 0)
    throw UserError("nnvm.te.reduce_extent", str_cat("reduction axis ", name, " has extent ", *c, "; it must be non-negative"));
  return IterVar(Var(std::move(name)), Range{std::move(min), std::move(extent)}, ir::IterKind::reduce);
}

// The tensor whose element at index vector `axis` is `fbody(axis)`; `axis_names` name the
// index variables (defaults i, j, k, ...).
inline Tensor compute(std::vector<Expr> shape, const std::function<Expr(const std::vector<Var>&)>& fbody,
                      std::string name = "compute", std::vector<std::string> axis_names = {}) {
  shape = detail::to_index_dtype(std::move(shape));
  detail::check_shape(name, shape);
  auto op = std::make_shared<OperationNode>();
  op->kind = OpKind::compute;
  op->name = name;
  std::vector<Var> vars;
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string vn = d < axis_names.size() ? axis_names[d] : detail::default_axis_name(d, shape.size());
    vars.emplace_back(vn);
    op->axis.emplace_back(vars.back(), Range{Expr(int64_t(0)), shape[d]}, ir::IterKind::data_par);
  }
  Expr body = fbody(vars);
  if (!body.defined()) throw UserError("nnvm.te.empty_body", str_cat("compute ", name, " returned no expression"));
  if (body.dtype().lanes != 1)
    throw UserError("nnvm.te.vector_body", str_cat("compute ", name, " must return a scalar expression"));
  // A reduction may only be the top of the body: anything else has no defined loop placement.
  struct NestedReduce : ir::IRVisitor {
    int depth = 0;
    bool nested = false;
    void visit(const ir::Reduce* r) override {
      nested |= depth > 0;
      ++depth;
      ir::IRVisitor::visit(r);
      --depth;
    }
  } check;
  check.depth = 1;  // every Reduce the visitor meets lies below the top of the body
  if (auto* r = body.as<ir::Reduce>()) {
    op->reduce_axes = r->axes;
    check.visit_expr(r->source);
  } else {
    check.visit_expr(body);
  }
  if (check.nested)
    throw UserError("nnvm.te.nested_reduce",
                    str_cat("compute ", name, " has a reduction inside a larger expression; compute the "
                                              "reduction as its own tensor"));
  op->inputs = detail::collect_inputs(body);
  op->body = body;
  DataType dt = body.dtype();
  return Tensor(std::make_shared<const TensorNode>(TensorNode{{std::move(name), std::move(shape), dt}, std::move(op)}));
}

// Untyped reductions over one or more axes (the typed DSL has its own spelling).
inline Expr sum(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::sum, std::move(source), std::move(axes), std::move(init));
}
inline Expr prod(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::prod, std::move(source), std::move(axes), std::move(init));
}
inline Expr max_reduce(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::max, std::move(source), std::move(axes), std::move(init));
}
inline Expr min_reduce(Expr source, std::vector<IterVar> axes, Expr init = Expr()) {
  return ir::Reduce::make(ir::Combiner::min, std::move(source), std::move(axes), std::move(init));
}

// All operations that `outputs` depend on, producers before consumers (deterministic).
inline std::vector<Tensor> post_order(const std::vector<Tensor>& outputs) {
  std::vector<Tensor> order;
  std::unordered_set<const TensorNode*> visited;
  std::function<void(const std::shared_ptr<const TensorNode>&)> visit = [&](const auto& t) {
    if (!visited.insert(t.get()).second) return;
    for (auto& in : t->op->inputs) visit(in);
    order.emplace_back(t);
  };
  for (auto& o : outputs) visit(o.node_ptr());
  return order;
}

}  // namespace te

namespace ir {
// A placeholder prints as `placeholder A: float32[64, n]`, a compute as its definition,
// `C(i, j) = sum(A(i, k)*B(k, j), axis=[k])`. Beside ir::to_string's other overloads, so one
// name prints everything; defined here because the IR knows nothing of operations.
inline std::string to_string(const te::Tensor& t) {
  detail::Printer p;
  if (t.op().kind == te::OpKind::placeholder) p.print_placeholder(t.get());
  else p.print_definition(t.get(), t.op().axis, t.op().body);
  return p.str();
}
}  // namespace ir
NNVM_END_NAMESPACE
// end nnvm/te/operation.hpp
// begin nnvm/te/dsl.hpp
// The typed tensor DSL. It lives in nnvm::te::dsl (nnvm::dsl for short), because nnvm::te
// already names the untyped te::Tensor and te::Expr (= ir::Expr), and its user-facing names
// are brought into nnvm, so that after `using namespace nnvm;` a kernel reads:
//
//   auto A = placeholder<float, 64, 32>("A");
//   auto B = placeholder<float, 32, 16>("B");
//   auto k = reduce_axis<32>("k");
//   auto C = compute<Shape<64, 16>>([&](auto i, auto j) { return sum(A(i, k) * B(k, j), k); }, "C");
//
// The erased handle Expr<T> is the one name not brought into nnvm: it would make `Expr`
// ambiguous wherever code says `using namespace nnvm; using namespace nnvm::ir;`. Spell it
// dsl::Expr<float>, or `using namespace nnvm::dsl;`, which brings every DSL name.

// begin nnvm/te/typed_compute.hpp
// Typed compute: the body is a callable taking one index variable per output dimension
// (`[&](auto i, auto j) { ... }` works) and returning a typed expression; the result is a
// Tensor of the body's element type with the static extents given. The typed body is lowered
// once, inside te::compute, so the IR is exactly what the untyped path builds.

// begin nnvm/te/typed_reduce.hpp
// Typed reductions: sum, prod, max_over and min_over of an expression over one reduction axis
// or several ({k1, k2}), optionally from a custom init value. The extreme-value reductions are
// named *_over so that they never look like the elementwise min(a, b) / max(a, b).
// A reduction must be the whole body of a compute; using one as an operand fails to compile.

#include <initializer_list>

// begin nnvm/te/typed_index.hpp
// Index variables of the typed DSL: the data-parallel axes `compute` hands its body (`Index<E>`)
// and reduction axes (`ReduceAxis<E>`). E is the static extent, or `dyn`; it travels in the type
// so that indexing a tensor axis of a different static extent fails to compile. Arithmetic on
// indices (`i * 2 + 1`) yields plain int64 expressions without a static extent.

#include <array>
#include <string>

// begin nnvm/te/typed_node.hpp
// The leaves of typed expressions and the type-erased handle `Expr<T>`. Every node type of the
// DSL derives from NodeBase, names its element type as `value_type`, and lowers itself to IR
// with `to_ir()`, which only `compute` (and `Expr<T>`, which erases the structure) calls.

#include <utility>

// begin nnvm/te/typed_check.hpp
// Compile-time checks of the typed DSL. Each failing check is one static_assert whose message is
// a sentence; the numbers it cannot spell (extents, axis) are the helper's template arguments,
// which the compiler prints in its "in instantiation of ... [with ...]" line.
// Every check returns whether it held, so callers stop at the first failure (`if constexpr`)
// and a mistake yields one error, not a cascade.

#include <cstddef>
#include <cstdint>
#include <type_traits>


NNVM_BEGIN_NAMESPACE
namespace te::dsl {

// Marks an extent known only at run time (a symbolic size or a value given as an ir::Expr).
inline constexpr int64_t dyn = -1;

template <class...>
inline constexpr bool dependent_false = false;

namespace check {

// The rank mismatch, spelled with its numbers for ranks and index counts up to 8; larger ones
// fall back to the primary template, whose arguments carry the numbers.
template <size_t Rank, size_t Given, class = void>
struct RankMismatch {
  static_assert(dependent_false<RankMismatch>, "tensor has rank N but is indexed with M indices");
};
#define NNVM_DSL_INDEX_WORD_0 " indices"
#define NNVM_DSL_INDEX_WORD_1 " index"
#define NNVM_DSL_INDEX_WORD_2 " indices"
#define NNVM_DSL_INDEX_WORD_3 " indices"
#define NNVM_DSL_INDEX_WORD_4 " indices"
#define NNVM_DSL_INDEX_WORD_5 " indices"
#define NNVM_DSL_INDEX_WORD_6 " indices"
#define NNVM_DSL_INDEX_WORD_7 " indices"
#define NNVM_DSL_INDEX_WORD_8 " indices"
// Entries with N == M exist only to keep the table regular; they are never instantiated.
#define NNVM_DSL_RANK_CASE(N, M)                                                             \
  template <class D>                                                                         \
  struct RankMismatch<N, M, D> {                                                             \
    static_assert(dependent_false<D>,                                                        \
                  "tensor has rank " #N " but is indexed with " #M NNVM_DSL_INDEX_WORD_##M); \
  };
#define NNVM_DSL_RANK_ROW(N)                                                                \
  NNVM_DSL_RANK_CASE(N, 0) NNVM_DSL_RANK_CASE(N, 1) NNVM_DSL_RANK_CASE(N, 2)               \
  NNVM_DSL_RANK_CASE(N, 3) NNVM_DSL_RANK_CASE(N, 4) NNVM_DSL_RANK_CASE(N, 5)               \
  NNVM_DSL_RANK_CASE(N, 6) NNVM_DSL_RANK_CASE(N, 7) NNVM_DSL_RANK_CASE(N, 8)
NNVM_DSL_RANK_ROW(0) NNVM_DSL_RANK_ROW(1) NNVM_DSL_RANK_ROW(2)
NNVM_DSL_RANK_ROW(3) NNVM_DSL_RANK_ROW(4) NNVM_DSL_RANK_ROW(5)
NNVM_DSL_RANK_ROW(6) NNVM_DSL_RANK_ROW(7) NNVM_DSL_RANK_ROW(8)
#undef NNVM_DSL_RANK_ROW
#undef NNVM_DSL_RANK_CASE
#undef NNVM_DSL_INDEX_WORD_0
#undef NNVM_DSL_INDEX_WORD_1
#undef NNVM_DSL_INDEX_WORD_2
#undef NNVM_DSL_INDEX_WORD_3
#undef NNVM_DSL_INDEX_WORD_4
#undef NNVM_DSL_INDEX_WORD_5
#undef NNVM_DSL_INDEX_WORD_6
#undef NNVM_DSL_INDEX_WORD_7
#undef NNVM_DSL_INDEX_WORD_8

// Called only on a mismatch. Kept apart from the condition, which must stay a constant
// expression after the diagnostic (Clang drops functions that name an invalid class).
// `Name` is the tensor's compile-time name (tensor_named<'A'>) where it has one: a C++20
// static_assert message cannot contain it, so it reaches the diagnostic as a template argument.
template <size_t Rank, size_t Given, class Name = void>
void report_rank_mismatch() {
  (void)sizeof(RankMismatch<Rank, Given, Name>);
}

// An index variable's static extent must equal the static extent of the axis it indexes
// (index arithmetic such as `i + 1` has no static extent and is checked at run time instead).
// Reading part of a larger axis on purpose (a stencil's A(i) beside A(i + 1), a slice) takes
// as_dynamic(i), which the message says.
template <size_t Axis, int64_t IndexExtent, int64_t TensorExtent>
constexpr bool extent_matches() {
  constexpr bool ok = IndexExtent == dyn || TensorExtent == dyn || IndexExtent == TensorExtent;
  static_assert(ok,
                "index extent does not match the tensor's extent on this axis; to read part of a longer axis "
                "on purpose (a stencil's A(i) beside A(i + 1), a slice), write A(as_dynamic(i))");
  return ok;
}

template <class A, class B>
constexpr bool same_element_type() {
  static_assert(std::is_same_v<A, B>, "operands have different element types; use cast<T>() to convert");
  return std::is_same_v<A, B>;
}

template <class T>
constexpr bool not_storage_type() {
  static_assert(!std::is_same_v<T, float16>, "float16 is a storage type: cast<float>() before arithmetic");
  static_assert(!std::is_same_v<T, bfloat16>, "bfloat16 is a storage type: cast<float>() before arithmetic");
  return !std::is_same_v<T, float16> && !std::is_same_v<T, bfloat16>;
}

template <class T>
constexpr bool numeric_type() {
  if constexpr (!not_storage_type<T>()) {
    return false;
  } else {
    static_assert(!std::is_same_v<T, bool>,
                  "arithmetic on bool expressions is not allowed; use select() or cast<T>()");
    return !std::is_same_v<T, bool>;
  }
}

template <class T>
constexpr bool bool_type() {
  static_assert(std::is_same_v<T, bool>, "logical operators and select() need bool expressions (comparisons)");
  return std::is_same_v<T, bool>;
}

template <class T>
constexpr bool float_argument() {
  if constexpr (!not_storage_type<T>()) {
    return false;
  } else {
    static_assert(std::is_floating_point_v<T>,
                  "this math function needs a floating-point argument; use cast<float>() to convert");
    return std::is_floating_point_v<T>;
  }
}

template <class T>
constexpr bool index_type() {
  constexpr bool ok = std::is_integral_v<T> && !std::is_same_v<T, bool>;
  static_assert(ok, "tensor indices must be integer expressions");
  return ok;
}

// A literal takes the element type of the expression it meets (Halide's rule), which must not
// silently drop a fraction.
template <class T, class Literal>
constexpr bool literal_fits() {
  constexpr bool ok = !std::is_floating_point_v<Literal> || !std::is_integral_v<T>;
  static_assert(ok, "a floating-point literal cannot meet an integer expression; use cast<float>() on the expression");
  return ok;
}

template <class T>
constexpr bool has_dtype() {
  static_assert(nnvm::has_dtype<T>::value,
                "element type has no nnvm dtype; use bool, a fixed-width integer, float, double, float16 or bfloat16");
  return nnvm::has_dtype<T>::value;
}

template <bool IsReduction>
constexpr bool not_reduction() {
  static_assert(!IsReduction, "a reduction must be the whole body of a compute; compute it as its own tensor");
  return !IsReduction;
}

}  // namespace check
}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_check.hpp

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

struct NodeBase {};

template <class X>
concept Node = std::is_base_of_v<NodeBase, X>;
// C++ scalars that take the element type of the expression they meet.
template <class X>
concept Literal = std::is_arithmetic_v<X>;
// Untyped IR (a symbolic size Var, say) meeting a typed expression; its dtype is checked at run time.
template <class X>
concept IrExpr = std::is_base_of_v<ir::Expr, X>;

template <class X>
using value_t = typename X::value_type;

// What an ill-formed expression evaluates to after its static_assert fired: every operation
// on it yields Invalid again without further diagnostics.
struct Invalid : NodeBase {
  using value_type = Invalid;
  ir::Expr to_ir() const { return {}; }
};
template <class... X>
inline constexpr bool any_invalid = (std::is_same_v<X, Invalid> || ...);

template <class X>
inline constexpr bool is_reduction = false;

template <class X>
inline constexpr int64_t extent_of = dyn;

// A literal converted to the element type T.
template <class T>
struct Const : NodeBase {
  using value_type = T;
  std::conditional_t<std::is_integral_v<T>, T, double> value;

  template <Literal L>
  explicit Const(L v) : value(static_cast<decltype(value)>(v)) {}

  ir::Expr to_ir() const {
    if constexpr (std::is_integral_v<T>)
      return ir::make_int_const(dtype_v<T>, static_cast<int64_t>(value));
    else
      return ir::make_const(dtype_v<T>, value);
  }
};

// A typed expression with its structure erased: what branches and loops that build expressions
// hold. Converting a node to Expr<T> lowers it to IR at that point.
template <class T>
class Expr : public NodeBase {
  static_assert(check::has_dtype<T>());

 public:
  using value_type = T;

  Expr() = default;
  Expr(T literal)
    requires std::is_arithmetic_v<T>
      : ir_(Const<T>(literal).to_ir()) {}
  template <Node E>
  Expr(const E& e) {
    if constexpr (!any_invalid<E>)
      if constexpr (check::same_element_type<value_t<E>, T>()) ir_ = e.to_ir();
  }
  // Wraps untyped IR; throws UserError nnvm.te.dtype_mismatch unless its dtype is T's.
  explicit Expr(ir::Expr e) : ir_(std::move(e)) {
    if (!ir_.defined()) throw UserError("nnvm.te.undefined_expr", "Expr<T> built from an undefined ir::Expr");
    if (ir_.dtype() != dtype_v<T>)
      throw UserError("nnvm.te.dtype_mismatch",
                      str_cat("expression of type ", ir_.dtype(), " used where ", dtype_v<T>, " is expected"));
  }

  bool defined() const { return ir_.defined(); }
  ir::Expr to_ir() const { return ir_; }

 private:
  ir::Expr ir_;
};

// `x` as a node of element type T (literals and untyped IR adopt T).
template <class T, class X>
auto lift(const X& x) {
  if constexpr (Node<X>) {
    return x;
  } else if constexpr (IrExpr<X>) {
    return Expr<T>(ir::Expr(x));
  } else if constexpr (check::literal_fits<T, X>()) {
    return Const<T>(x);
  } else {
    return Invalid{};
  }
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_node.hpp

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

// Static extents of a tensor or a compute, e.g. Shape<64, 32>; `dyn` marks a run-time extent.
template <int64_t... E>
struct Shape {
  static_assert(((E > 0 || E == dyn) && ...), "static extents must be positive (or dyn)");
  static constexpr size_t rank = sizeof...(E);
  static constexpr std::array<int64_t, sizeof...(E)> extents{E...};
};

// A data-parallel axis variable over [0, E).
template <int64_t E>
class Index : public NodeBase {
 public:
  using value_type = int64_t;
  static constexpr int64_t extent = E;

  explicit Index(ir::Var v) : var_(std::move(v)) {}
  const ir::Var& var() const { return var_; }
  ir::Expr to_ir() const { return var_; }

 private:
  ir::Var var_;
};
template <int64_t E>
inline constexpr int64_t extent_of<Index<E>> = E;

// A reduction axis. It is an ir::IterVar too, so untyped code and schedules take it directly.
template <int64_t E>
class ReduceAxis : public ir::IterVar, public NodeBase {
 public:
  using value_type = int64_t;
  static constexpr int64_t extent = E;

  explicit ReduceAxis(ir::IterVar iv) : ir::IterVar(std::move(iv)) {}
  const ir::IterVar& iter_var() const { return *this; }
  ir::Expr to_ir() const { return var(); }
};
template <int64_t E>
inline constexpr int64_t extent_of<ReduceAxis<E>> = E;

// The same variable without its static extent, for reading a sub-range of a larger axis
// (an Index<32> into an axis of extent 64), which the static check would reject.
template <int64_t E>
Index<dyn> as_dynamic(const Index<E>& i) {
  return Index<dyn>(i.var());
}
template <int64_t E>
ReduceAxis<dyn> as_dynamic(const ReduceAxis<E>& k) {
  return ReduceAxis<dyn>(k.iter_var());
}

// A reduction axis of static extent E over [0, E): reduce_axis<32>("k").
template <int64_t E>
ReduceAxis<E> reduce_axis(std::string name = "r") {
  static_assert(E > 0, "a static reduction extent must be positive");
  return ReduceAxis<E>(te::reduce_axis(ir::Expr(E), std::move(name)));
}
// A reduction axis over [min, min + extent) with a run-time extent: reduce_axis(n, "k").
// A template, so that te::reduce_axis (untyped) wins where both are visible and equally good.
template <class X>
  requires std::is_convertible_v<X, ir::Expr>
ReduceAxis<dyn> reduce_axis(const X& extent, std::string name = "r", ir::Expr min = ir::Expr(int64_t(0))) {
  return ReduceAxis<dyn>(te::reduce_axis(ir::Expr(extent), std::move(name), std::move(min)));
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_index.hpp
// begin nnvm/te/typed_ops.hpp
// Operators of the typed DSL. The C++ type of `A(i, k) * B(k, j)` is
// `BinaryExpr<MulOp, Access<...>, Access<...>>` with `value_type` the element type; element
// types are checked here, at compile time, and each node lowers through the same ir functions
// the untyped operators use, so both paths produce identical IR.

#include <tuple>


NNVM_BEGIN_NAMESPACE
namespace te::dsl {

enum class OpClass { arithmetic, comparison, logical };

#define NNVM_DSL_OP(Tag, Class, expr)                            \
  struct Tag {                                                   \
    static constexpr OpClass op_class = OpClass::Class;          \
    static ir::Expr make(ir::Expr a, ir::Expr b) { return expr; } \
  };
NNVM_DSL_OP(AddOp, arithmetic, a + b)
NNVM_DSL_OP(SubOp, arithmetic, a - b)
NNVM_DSL_OP(MulOp, arithmetic, a * b)
NNVM_DSL_OP(DivOp, arithmetic, a / b)
NNVM_DSL_OP(ModOp, arithmetic, a % b)
NNVM_DSL_OP(MinOp, arithmetic, ir::min(a, b))
NNVM_DSL_OP(MaxOp, arithmetic, ir::max(a, b))
NNVM_DSL_OP(EqOp, comparison, a == b)
NNVM_DSL_OP(NeOp, comparison, a != b)
NNVM_DSL_OP(LtOp, comparison, a < b)
NNVM_DSL_OP(LeOp, comparison, a <= b)
NNVM_DSL_OP(GtOp, comparison, a > b)
NNVM_DSL_OP(GeOp, comparison, a >= b)
NNVM_DSL_OP(AndOp, logical, a && b)
NNVM_DSL_OP(OrOp, logical, a || b)
#undef NNVM_DSL_OP

template <class Op, class A, class B>
struct BinaryExpr : NodeBase {
  using value_type = std::conditional_t<Op::op_class == OpClass::arithmetic, value_t<A>, bool>;
  A a;
  B b;
  BinaryExpr(A a_, B b_) : a(std::move(a_)), b(std::move(b_)) {}
  ir::Expr to_ir() const { return Op::make(a.to_ir(), b.to_ir()); }
};

struct NegOp {
  static ir::Expr make(const ir::Expr& a) { return -a; }
};
struct NotOp {
  static ir::Expr make(const ir::Expr& a) { return !a; }
};
template <class Op, class A>
struct UnaryExpr : NodeBase {
  using value_type = value_t<A>;
  A a;
  explicit UnaryExpr(A a_) : a(std::move(a_)) {}
  ir::Expr to_ir() const { return Op::make(a.to_ir()); }
};

template <class U, class A>
struct CastExpr : NodeBase {
  using value_type = U;
  A a;
  explicit CastExpr(A a_) : a(std::move(a_)) {}
  ir::Expr to_ir() const { return ir::cast(dtype_v<U>, a.to_ir()); }
};

template <class C, class A, class B>
struct SelectExpr : NodeBase {
  using value_type = value_t<A>;
  C c;
  A a;
  B b;
  SelectExpr(C c_, A a_, B b_) : c(std::move(c_)), a(std::move(a_)), b(std::move(b_)) {}
  ir::Expr to_ir() const { return ir::select(c.to_ir(), a.to_ir(), b.to_ir()); }
};

// A math function call; isnan/isinf yield bool, every other op its argument's type.
template <ir::CallOp Op, class... A>
struct CallExpr : NodeBase {
  using value_type = std::conditional_t<Op == ir::CallOp::isnan || Op == ir::CallOp::isinf, bool,
                                        value_t<std::tuple_element_t<0, std::tuple<A...>>>>;
  std::tuple<A...> args;
  explicit CallExpr(A... a) : args(std::move(a)...) {}
  ir::Expr to_ir() const {
    return std::apply([](const auto&... a) { return ir::call(Op, a.to_ir()...); }, args);
  }
};

// Operands of a binary operation: at least one typed node; the other may be a literal or
// untyped IR, which adopts the node's element type.
template <class A, class B>
concept Operands = (Node<A> && (Node<B> || Literal<B> || IrExpr<B>)) || (Node<B> && (Literal<A> || IrExpr<A>));

namespace detail {

// Both operands as nodes of one element type (or Invalid after a diagnostic).
template <class A, class B>
auto lift_pair(const A& a, const B& b) {
  if constexpr (Node<A> && Node<B>)
    return std::pair<A, B>(a, b);
  else if constexpr (Node<A>)
    return std::pair(a, lift<value_t<A>>(b));
  else
    return std::pair(lift<value_t<B>>(a), b);
}

template <class... X>
constexpr bool no_reductions() {
  return (check::not_reduction<is_reduction<X>>() && ...);
}

template <class Op, class A, class B>
auto make_binary_nodes(A a, B b) {
  using TA = value_t<A>;
  using TB = value_t<B>;
  if constexpr (any_invalid<A, B>) {
    return Invalid{};
  } else if constexpr (!no_reductions<A, B>()) {
    return Invalid{};
  } else if constexpr (!check::same_element_type<TA, TB>()) {
    return Invalid{};
  } else if constexpr (Op::op_class == OpClass::logical) {
    if constexpr (!check::bool_type<TA>()) return Invalid{};
    else return BinaryExpr<Op, A, B>(std::move(a), std::move(b));
  } else if constexpr (Op::op_class == OpClass::comparison) {
    if constexpr (!check::not_storage_type<TA>()) return Invalid{};
    else return BinaryExpr<Op, A, B>(std::move(a), std::move(b));
  } else {
    if constexpr (!check::numeric_type<TA>()) return Invalid{};
    else return BinaryExpr<Op, A, B>(std::move(a), std::move(b));
  }
}

template <class Op, class A, class B>
auto make_binary(const A& a, const B& b) {
  if constexpr (any_invalid<A, B>) {
    return Invalid{};
  } else {
    auto [x, y] = lift_pair(a, b);
    return make_binary_nodes<Op>(std::move(x), std::move(y));
  }
}

}  // namespace detail

#define NNVM_DSL_BINARY(op, Tag)                         \
  template <class A, class B>                            \
    requires Operands<A, B>                              \
  auto operator op(const A& a, const B& b) {             \
    return detail::make_binary<Tag>(a, b);               \
  }
NNVM_DSL_BINARY(+, AddOp)
NNVM_DSL_BINARY(-, SubOp)
NNVM_DSL_BINARY(*, MulOp)
NNVM_DSL_BINARY(/, DivOp)
NNVM_DSL_BINARY(%, ModOp)
NNVM_DSL_BINARY(==, EqOp)
NNVM_DSL_BINARY(!=, NeOp)
NNVM_DSL_BINARY(<, LtOp)
NNVM_DSL_BINARY(<=, LeOp)
NNVM_DSL_BINARY(>, GtOp)
NNVM_DSL_BINARY(>=, GeOp)
NNVM_DSL_BINARY(&&, AndOp)
NNVM_DSL_BINARY(||, OrOp)
#undef NNVM_DSL_BINARY

// Elementwise minimum and maximum (the reductions are min_over / max_over).
template <class A, class B>
  requires Operands<A, B>
auto min(const A& a, const B& b) {
  return detail::make_binary<MinOp>(a, b);
}
template <class A, class B>
  requires Operands<A, B>
auto max(const A& a, const B& b) {
  return detail::make_binary<MaxOp>(a, b);
}

template <Node A>
auto operator-(const A& a) {
  if constexpr (any_invalid<A> || !detail::no_reductions<A>() || !check::numeric_type<value_t<A>>())
    return Invalid{};
  else
    return UnaryExpr<NegOp, A>(a);
}
template <Node A>
auto operator!(const A& a) {
  if constexpr (any_invalid<A> || !detail::no_reductions<A>() || !check::bool_type<value_t<A>>())
    return Invalid{};
  else
    return UnaryExpr<NotOp, A>(a);
}

// Converts to element type U; the one operation besides load and store that storage types allow.
template <class U, Node A>
auto cast(const A& a) {
  if constexpr (any_invalid<A> || !check::has_dtype<U>() || !detail::no_reductions<A>())
    return Invalid{};
  else
    return CastExpr<U, A>(a);
}

// `c ? t : f` per element; only the chosen branch is evaluated, so a guarded out-of-bounds
// read (padding) is safe. Literal branches adopt the other branch's element type.
template <Node C, class A, class B>
  requires(Operands<A, B> || (Literal<A> && Literal<B>))
auto select(const C& c, const A& t, const B& f) {
  if constexpr (any_invalid<C, A, B>) {
    return Invalid{};
  } else if constexpr (!detail::no_reductions<C>() || !check::bool_type<value_t<C>>()) {
    return Invalid{};
  } else {
    auto [x, y] = [&] {
      if constexpr (Literal<A> && Literal<B>) return std::pair(Const<A>(t), Const<B>(f));
      else return detail::lift_pair(t, f);
    }();
    using X = decltype(x);
    using Y = decltype(y);
    if constexpr (any_invalid<X, Y>)
      return Invalid{};
    else if constexpr (!detail::no_reductions<X, Y>())
      return Invalid{};
    else if constexpr (!check::same_element_type<value_t<X>, value_t<Y>>())
      return Invalid{};
    else
      return SelectExpr<C, X, Y>(c, std::move(x), std::move(y));
  }
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_ops.hpp

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

template <ir::Combiner C, class S>
struct ReduceExpr : NodeBase {
  using value_type = value_t<S>;
  S source;
  std::vector<ir::IterVar> axes;
  Expr<value_type> init;  // undefined: the combiner's identity

  ReduceExpr(S s, std::vector<ir::IterVar> ax, Expr<value_type> i)
      : source(std::move(s)), axes(std::move(ax)), init(std::move(i)) {}
  ir::Expr to_ir() const {
    ir::Expr src = source.to_ir(), in = init.to_ir();
    switch (C) {
      case ir::Combiner::sum: return te::sum(src, axes, in);
      case ir::Combiner::prod: return te::prod(src, axes, in);
      case ir::Combiner::max: return te::max_reduce(src, axes, in);
      case ir::Combiner::min: return te::min_reduce(src, axes, in);
    }
    return {};
  }
};
template <ir::Combiner C, class S>
inline constexpr bool is_reduction<ReduceExpr<C, S>> = true;

// One entry of a braced list of reduction axes of any static extents: sum(e, {k1, k2}).
class AxisRef {
 public:
  template <int64_t E>
  AxisRef(const ReduceAxis<E>& k) : iv_(k.iter_var()) {}
  const ir::IterVar& iter_var() const { return iv_; }

 private:
  ir::IterVar iv_;
};

namespace detail {
inline std::vector<ir::IterVar> axis_list(std::initializer_list<AxisRef> axes) {
  std::vector<ir::IterVar> out;
  for (auto& a : axes) out.push_back(a.iter_var());
  return out;
}

template <ir::Combiner C, class S, class Init>
auto make_reduce(const S& src, std::vector<ir::IterVar> axes, const Init* init) {
  using T = value_t<S>;
  if constexpr (any_invalid<S>) {
    return Invalid{};
  } else if constexpr (!no_reductions<S>() || !check::numeric_type<T>()) {
    return Invalid{};
  } else if constexpr (std::is_same_v<Init, void>) {
    return ReduceExpr<C, S>(src, std::move(axes), Expr<T>());
  } else {
    auto in = lift<T>(*init);
    using I = decltype(in);
    if constexpr (any_invalid<I>) return Invalid{};
    else if constexpr (!check::same_element_type<T, value_t<I>>()) return Invalid{};
    else return ReduceExpr<C, S>(src, std::move(axes), Expr<T>(in));
  }
}
}  // namespace detail

#define NNVM_DSL_REDUCTION(name, combiner)                                                      \
  template <Node S, int64_t E>                                                                  \
  auto name(const S& source, const ReduceAxis<E>& axis) {                                       \
    return detail::make_reduce<combiner>(source, {axis.iter_var()}, (const void*)nullptr);     \
  }                                                                                             \
  template <Node S, int64_t E, class Init>                                                      \
    requires(Node<Init> || Literal<Init>)                                                       \
  auto name(const S& source, const ReduceAxis<E>& axis, const Init& init) {                     \
    return detail::make_reduce<combiner>(source, {axis.iter_var()}, &init);                     \
  }                                                                                             \
  template <Node S>                                                                             \
  auto name(const S& source, std::initializer_list<AxisRef> axes) {                             \
    return detail::make_reduce<combiner>(source, detail::axis_list(axes), (const void*)nullptr); \
  }                                                                                             \
  template <Node S, class Init>                                                                 \
    requires(Node<Init> || Literal<Init>)                                                       \
  auto name(const S& source, std::initializer_list<AxisRef> axes, const Init& init) {           \
    return detail::make_reduce<combiner>(source, detail::axis_list(axes), &init);               \
  }
NNVM_DSL_REDUCTION(sum, ir::Combiner::sum)
NNVM_DSL_REDUCTION(prod, ir::Combiner::prod)
NNVM_DSL_REDUCTION(max_over, ir::Combiner::max)
NNVM_DSL_REDUCTION(min_over, ir::Combiner::min)
#undef NNVM_DSL_REDUCTION

}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_reduce.hpp
// begin nnvm/te/typed_tensor.hpp
// Typed tensor handles: Tensor<T, E...> is a te::Tensor whose element type T, rank
// sizeof...(E) and static extents E (or `dyn`) are part of its C++ type, so indexing it checks
// rank, index types and static extents at compile time. It converts to `const te::Tensor&`
// implicitly, so schedules and lowering take typed tensors as they are.


NNVM_BEGIN_NAMESPACE
namespace te::dsl {

// A read of tensor element (I...) of type T; I are the index nodes, as written.
template <class T, class... I>
struct Access : NodeBase {
  using value_type = T;
  te::Tensor tensor;
  std::tuple<I...> indices;
  Access(te::Tensor t, I... i) : tensor(std::move(t)), indices(std::move(i)...) {}
  ir::Expr to_ir() const {
    return std::apply([&](const auto&... i) { return tensor(std::vector<ir::Expr>{i.to_ir()...}); }, indices);
  }
};

namespace detail {

// An index argument as a node: integer literals become int64 constants.
template <class X>
auto as_index(const X& x) {
  if constexpr (Node<X>) {
    return x;
  } else if constexpr (IrExpr<X>) {
    return Expr<int64_t>(ir::Expr(x));
  } else if constexpr (std::is_integral_v<X> && !std::is_same_v<X, bool>) {
    return Const<int64_t>(x);
  } else {
    static_assert(dependent_false<X>, "tensor indices must be integer expressions");
    return Invalid{};
  }
}

template <class T, int64_t... E, size_t... D, class... X>
auto make_access(const te::Tensor& t, std::integer_sequence<int64_t, E...>, std::index_sequence<D...>, X... x) {
  if constexpr (any_invalid<X...>)
    return Invalid{};
  else if constexpr (!no_reductions<X...>())
    return Invalid{};
  else if constexpr (!(check::index_type<value_t<X>>() && ...))
    return Invalid{};
  else if constexpr (!(check::extent_matches<D, extent_of<X>, E>() && ...))
    return Invalid{};
  else
    return Access<T, X...>(t, std::move(x)...);
}

}  // namespace detail

template <class T, int64_t... E>
class Tensor {
  static_assert(check::has_dtype<T>());
  static_assert(((E > 0 || E == dyn) && ...), "static extents must be positive (or dyn)");

 public:
  using value_type = T;
  using shape_type = Shape<E...>;
  static constexpr size_t rank = sizeof...(E);
  static constexpr std::array<int64_t, sizeof...(E)> static_extents{E...};

  Tensor() = default;
  // Wraps an untyped tensor; throws UserError if its dtype, rank or a static extent differs
  // from the type's (ids nnvm.te.dtype_mismatch, nnvm.te.rank_mismatch, nnvm.te.extent_mismatch).
  explicit Tensor(te::Tensor t) : t_(std::move(t)) {
    if (!t_.defined()) return;
    if (t_.dtype() != dtype_v<T>)
      throw UserError("nnvm.te.dtype_mismatch", str_cat("tensor ", t_.name(), " has element type ", t_.dtype(),
                                                        " but its typed handle says ", dtype_v<T>));
    if (t_.rank() != rank)
      throw UserError("nnvm.te.rank_mismatch",
                      str_cat("tensor ", t_.name(), " has rank ", t_.rank(), " but its typed handle says ", rank));
    for (size_t d = 0; d < rank; ++d) {
      if (static_extents[d] == dyn) continue;
      const int64_t* c = ir::as_const_int(t_.shape()[d]);
      if (!c || *c != static_extents[d])
        throw UserError("nnvm.te.extent_mismatch",
                        str_cat("tensor ", t_.name(), " has extent ", c ? std::to_string(*c) : "(symbolic)",
                                " on axis ", d, " but its type says ", static_extents[d]));
    }
  }

  const te::Tensor& untyped() const { return t_; }
  operator const te::Tensor&() const { return t_; }

  bool defined() const { return t_.defined(); }
  const std::string& name() const { return t_.name(); }
  const std::vector<ir::Expr>& shape() const { return t_.shape(); }
  bool same_as(const te::Tensor& o) const { return t_.same_as(o); }

  // Element access, checked at compile time: the number of indices, that each is an integer
  // expression, and that index variables of static extent match the axes' static extents.
  template <class... I>
  auto operator()(const I&... idx) const {
    return access<void>(idx...);
  }

 protected:
  // `Name`: the tensor's compile-time name for the rank diagnostic (void: it has none).
  template <class Name, class... I>
  auto access(const I&... idx) const {
    if constexpr (rank != sizeof...(I)) {
      check::report_rank_mismatch<rank, sizeof...(I), Name>();
      return Invalid{};
    } else {
      return detail::make_access<T>(t_, std::integer_sequence<int64_t, E...>{}, std::index_sequence_for<I...>{},
                                    detail::as_index(idx)...);
    }
  }

 private:
  te::Tensor t_;
};

namespace detail {
template <class T, class Seq>
struct dyn_tensor;
template <class T, size_t... D>
struct dyn_tensor<T, std::index_sequence<D...>> {
  using type = Tensor<T, (void(D), dyn)...>;
};
template <int64_t... E>
std::vector<ir::Expr> static_shape(Shape<E...>) {
  return {ir::Expr(E)...};
}
}  // namespace detail

// A tensor name as a template argument: placeholder<"A", float, 64, 32>().
template <size_t N>
struct TensorName {
  char text[N]{};
  constexpr TensorName(const char (&s)[N]) {
    for (size_t i = 0; i < N; ++i) text[i] = s[i];
  }
};
// The tag that carries a tensor's compile-time name into a diagnostic, one character per
// template argument: GCC and Clang both print tensor_named<'A'>, where Clang would print a
// TensorName as its character codes.
template <char... C>
struct tensor_named {};
namespace detail {
template <TensorName Name, size_t... I>
tensor_named<Name.text[I]...> name_tag(std::index_sequence<I...>);
template <TensorName Name>
using name_tag_t = decltype(name_tag<Name>(std::make_index_sequence<sizeof(Name.text) - 1>{}));
}  // namespace detail

// A Tensor<T, E...> whose name is part of its type, so that indexing it with the wrong number
// of indices names it in the compiler's diagnostic. Everything else is the Tensor's.
template <TensorName Name, class T, int64_t... E>
class NamedTensor : public Tensor<T, E...> {
 public:
  using Tensor<T, E...>::Tensor;
  template <class... I>
  auto operator()(const I&... idx) const {
    return this->template access<detail::name_tag_t<Name>>(idx...);
  }
};

// A tensor of rank R whose extents are all known only at run time.
template <class T, size_t R>
using DynTensor = typename detail::dyn_tensor<T, std::make_index_sequence<R>>::type;

// An input tensor of static shape: placeholder<float, 64, 32>("A").
template <class T, int64_t... E>
Tensor<T, E...> placeholder(std::string name) {
  static_assert(((E != dyn) && ...), "a placeholder with dyn extents needs them: placeholder<T, ...>({n, ...}, name)");
  return Tensor<T, E...>(te::placeholder(detail::static_shape(Shape<E...>{}), dtype_v<T>, std::move(name)));
}
// The same with the name known at compile time: placeholder<"A", float, 64, 32>(). A rank
// mistake's diagnostic then names the tensor.
template <TensorName Name, class T, int64_t... E>
NamedTensor<Name, T, E...> placeholder() {
  static_assert(((E != dyn) && ...), "a placeholder with dyn extents needs them: placeholder<T, ...>({n, ...}, name)");
  return NamedTensor<Name, T, E...>(te::placeholder(detail::static_shape(Shape<E...>{}), dtype_v<T>, Name.text));
}
// The same, spelled placeholder<float>(Shape<64, 32>{}, "A").
template <class T, int64_t... E>
Tensor<T, E...> placeholder(Shape<E...>, std::string name) {
  return placeholder<T, E...>(std::move(name));
}
// An input tensor with run-time extents (int64 expressions such as a symbolic size Var, or
// integers): placeholder<float>({n, 32}, "B") is a Tensor<float, dyn, dyn>.
template <class T, size_t N>
DynTensor<T, N> placeholder(const ir::Expr (&shape)[N], std::string name) {
  return DynTensor<T, N>(te::placeholder(std::vector<ir::Expr>(shape, shape + N), dtype_v<T>, std::move(name)));
}
// Some extents static, some not: placeholder<float, dyn, 32>({n, 32}, "B"). The extents given
// for static axes must equal them (UserError nnvm.te.extent_mismatch).
template <class T, int64_t... E>
  requires(sizeof...(E) > 0)
Tensor<T, E...> placeholder(const ir::Expr (&shape)[sizeof...(E)], std::string name) {
  return Tensor<T, E...>(
      te::placeholder(std::vector<ir::Expr>(shape, shape + sizeof...(E)), dtype_v<T>, std::move(name)));
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_tensor.hpp

NNVM_BEGIN_NAMESPACE
namespace te::dsl {

namespace check {
// Rank is unused but shows in the diagnostic's "[with ...]" line.
template <bool Invocable, size_t Rank>
constexpr bool body_invocable() {
  static_assert(Invocable, "the compute body must take one index variable per output dimension");
  return Invocable;
}
template <class Body>
constexpr bool typed_body() {
  constexpr bool ok = Node<Body> || Literal<Body>;
  static_assert(ok, "the compute body must return a typed expression (untyped ir::Expr bodies go to te::compute)");
  return ok;
}
}  // namespace check

namespace detail {

template <int64_t... E, class F, size_t... D>
decltype(auto) invoke_body(F& f, const std::vector<ir::Var>& v, std::index_sequence<D...>) {
  return f(Index<E>(v[D])...);
}

template <class Raw>
auto body_node(const Raw& r) {
  if constexpr (Node<Raw>) return r;
  else return Const<Raw>(r);
}

template <int64_t... E, class F>
auto compute_impl(std::vector<ir::Expr> shape, F& f, std::string name, std::vector<std::string> axis_names) {
  using Fallback = Tensor<float, E...>;  // the result type after a diagnostic
  // A requires-expression rather than std::is_invocable keeps library internals out of the
  // instantiation context of errors inside the body.
  constexpr bool invocable = requires(F& g) { g(Index<E>(std::declval<ir::Var>())...); };
  if constexpr (!check::body_invocable<invocable, sizeof...(E)>()) {
    return Fallback();
  } else {
    using Raw = std::decay_t<decltype(f(Index<E>(std::declval<ir::Var>())...))>;
    if constexpr (!check::typed_body<Raw>()) {
      return Fallback();
    } else {
      using Body = decltype(body_node(std::declval<const Raw&>()));
      if constexpr (any_invalid<Body>) {
        return Fallback();
      } else {
        te::Tensor t = te::compute(
            std::move(shape),
            [&](const std::vector<ir::Var>& v) {
              return body_node(invoke_body<E...>(f, v, std::make_index_sequence<sizeof...(E)>{})).to_ir();
            },
            std::move(name), std::move(axis_names));
        return Tensor<value_t<Body>, E...>(std::move(t));
      }
    }
  }
}

template <class S>
struct is_shape : std::false_type {};
template <int64_t... E>
struct is_shape<Shape<E...>> : std::true_type {};

template <size_t... D>
Shape<(void(D), dyn)...> dyn_shape(std::index_sequence<D...>) {
  return {};
}

}  // namespace detail

// Static shape: compute(Shape<64, 64>{}, body, "C").
template <int64_t... E, class F>
auto compute(Shape<E...>, F&& f, std::string name = "compute", std::vector<std::string> axis_names = {}) {
  static_assert(((E != dyn) && ...), "a compute with dyn extents needs them: compute<Shape<...>>({n, ...}, body, name)");
  return detail::compute_impl<E...>(detail::static_shape(Shape<E...>{}), f, std::move(name), std::move(axis_names));
}
// The same, spelled compute<Shape<64, 64>>(body, "C").
template <class S, class F>
  requires detail::is_shape<S>::value
auto compute(F&& f, std::string name = "compute", std::vector<std::string> axis_names = {}) {
  return compute(S{}, f, std::move(name), std::move(axis_names));
}
// Run-time extents: compute({n, m}, body, "C") gives a Tensor<T, dyn, dyn>.
template <size_t N, class F>
auto compute(const ir::Expr (&shape)[N], F&& f, std::string name = "compute", std::vector<std::string> axis_names = {}) {
  return [&]<int64_t... E>(Shape<E...>) {
    return detail::compute_impl<E...>(std::vector<ir::Expr>(shape, shape + N), f, std::move(name),
                                      std::move(axis_names));
  }(detail::dyn_shape(std::make_index_sequence<N>{}));
}
// Some extents static, some not: compute<Shape<dyn, 64>>({n, 64}, body, "C"). The extents given
// for static axes must equal them (UserError nnvm.te.extent_mismatch).
template <class S, class F>
  requires detail::is_shape<S>::value
auto compute(const ir::Expr (&shape)[S::rank], F&& f, std::string name = "compute",
             std::vector<std::string> axis_names = {}) {
  return [&]<int64_t... E>(Shape<E...>) {
    return detail::compute_impl<E...>(std::vector<ir::Expr>(shape, shape + S::rank), f, std::move(name),
                                      std::move(axis_names));
  }(S{});
}

}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_compute.hpp
// begin nnvm/te/typed_math.hpp
// Elementwise math functions, one per ir::CallOp. They live in nnvm::te::dsl (and nnvm), not
// std, and take typed expressions only, so `exp(x)` finds them by argument-dependent lookup
// and never competes with std::exp on plain numbers.


NNVM_BEGIN_NAMESPACE
namespace te::dsl {

namespace detail {
template <ir::CallOp Op, class... A>
auto make_call(A... a) {
  using T = value_t<std::tuple_element_t<0, std::tuple<A...>>>;
  if constexpr (any_invalid<A...>) {
    return Invalid{};
  } else if constexpr (!no_reductions<A...>()) {
    return Invalid{};
  } else if constexpr (!(check::same_element_type<T, value_t<A>>() && ...)) {
    return Invalid{};
  } else if constexpr (Op == ir::CallOp::abs) {
    if constexpr (!check::numeric_type<T>()) return Invalid{};
    else return CallExpr<Op, A...>(std::move(a)...);
  } else {
    if constexpr (!check::float_argument<T>()) return Invalid{};
    else return CallExpr<Op, A...>(std::move(a)...);
  }
}
}  // namespace detail

#define NNVM_DSL_UNARY_CALL(name)                           \
  template <Node A>                                         \
  auto name(const A& a) {                                   \
    return detail::make_call<ir::CallOp::name>(a);          \
  }
#define NNVM_DSL_BINARY_CALL(name)                                   \
  template <class A, class B>                                        \
    requires Operands<A, B>                                          \
  auto name(const A& a, const B& b) {                                \
    if constexpr (any_invalid<A, B>) {                               \
      return Invalid{};                                              \
    } else {                                                         \
      auto [x, y] = detail::lift_pair(a, b);                         \
      return detail::make_call<ir::CallOp::name>(x, y);              \
    }                                                                \
  }
NNVM_DSL_UNARY_CALL(exp)
NNVM_DSL_UNARY_CALL(exp2)
NNVM_DSL_UNARY_CALL(log)
NNVM_DSL_UNARY_CALL(log2)
NNVM_DSL_UNARY_CALL(log1p)
NNVM_DSL_UNARY_CALL(expm1)
NNVM_DSL_UNARY_CALL(sqrt)
NNVM_DSL_UNARY_CALL(rsqrt)
NNVM_DSL_UNARY_CALL(tanh)
NNVM_DSL_UNARY_CALL(erf)
NNVM_DSL_UNARY_CALL(sigmoid)
NNVM_DSL_BINARY_CALL(pow)
NNVM_DSL_UNARY_CALL(abs)
NNVM_DSL_UNARY_CALL(floor)
NNVM_DSL_UNARY_CALL(ceil)
NNVM_DSL_UNARY_CALL(round)
NNVM_DSL_UNARY_CALL(trunc)
NNVM_DSL_UNARY_CALL(sin)
NNVM_DSL_UNARY_CALL(cos)
NNVM_DSL_UNARY_CALL(tan)
NNVM_DSL_UNARY_CALL(asin)
NNVM_DSL_UNARY_CALL(acos)
NNVM_DSL_UNARY_CALL(atan)
NNVM_DSL_BINARY_CALL(atan2)
NNVM_DSL_UNARY_CALL(sinh)
NNVM_DSL_UNARY_CALL(cosh)
NNVM_DSL_UNARY_CALL(asinh)
NNVM_DSL_UNARY_CALL(acosh)
NNVM_DSL_UNARY_CALL(atanh)
NNVM_DSL_BINARY_CALL(fmod)
NNVM_DSL_UNARY_CALL(isnan)
NNVM_DSL_UNARY_CALL(isinf)
NNVM_DSL_BINARY_CALL(copysign)
#undef NNVM_DSL_UNARY_CALL
#undef NNVM_DSL_BINARY_CALL

}  // namespace te::dsl
NNVM_END_NAMESPACE
// end nnvm/te/typed_math.hpp

NNVM_BEGIN_NAMESPACE

namespace dsl = te::dsl;

using te::dsl::dyn;
using te::dsl::DynTensor;
using te::dsl::Index;
using te::dsl::NamedTensor;
using te::dsl::ReduceAxis;
using te::dsl::Shape;
using te::dsl::Tensor;

using te::dsl::as_dynamic;
using te::dsl::cast;
using te::dsl::compute;
using te::dsl::placeholder;
using te::dsl::reduce_axis;
using te::dsl::select;

using te::dsl::max;
using te::dsl::max_over;
using te::dsl::min;
using te::dsl::min_over;
using te::dsl::prod;
using te::dsl::sum;

using te::dsl::abs;
using te::dsl::acos;
using te::dsl::acosh;
using te::dsl::asin;
using te::dsl::asinh;
using te::dsl::atan;
using te::dsl::atan2;
using te::dsl::atanh;
using te::dsl::ceil;
using te::dsl::copysign;
using te::dsl::cos;
using te::dsl::cosh;
using te::dsl::erf;
using te::dsl::exp;
using te::dsl::exp2;
using te::dsl::expm1;
using te::dsl::floor;
using te::dsl::fmod;
using te::dsl::isinf;
using te::dsl::isnan;
using te::dsl::log;
using te::dsl::log1p;
using te::dsl::log2;
using te::dsl::pow;
using te::dsl::round;
using te::dsl::rsqrt;
using te::dsl::sigmoid;
using te::dsl::sin;
using te::dsl::sinh;
using te::dsl::sqrt;
using te::dsl::tan;
using te::dsl::tanh;
using te::dsl::trunc;

NNVM_END_NAMESPACE
// end nnvm/te/dsl.hpp
// begin nnvm/schedule/schedule.hpp
// A Schedule holds one Stage per compute operation that the outputs depend on, producers
// first. `s[C]` is the stage of tensor C. cache_read, cache_write and rfactor add stages.

// begin nnvm/schedule/stage.hpp
// A Stage is the schedule of one compute operation: the order and kind of its loops.
// Every primitive validates its arguments and throws UserError with a stable id whose context
// names the stage and the axis.

#include <algorithm>
#include <tuple>
#include <unordered_map>

// begin nnvm/schedule/relations.hpp
// How a stage's loops derive from its tensor's axes: each split or fuse adds a relation.
// Relations are replayed downward to get loop extents and upward to express every original
// axis as a function of the loop variables.

#include <variant>


NNVM_BEGIN_NAMESPACE
namespace schedule {

using ir::Expr;
using ir::IterVar;

// parent = parent.min + outer * factor + inner; exactly one of factor / nparts is given.
struct SplitRelation {
  IterVar parent, outer, inner;
  Expr factor, nparts;
};
// fused = outer_offset * extent(inner) + inner_offset.
struct FuseRelation {
  IterVar outer, inner, fused;
};
using Relation = std::variant<SplitRelation, FuseRelation>;

inline Expr ceil_div(const Expr& a, const Expr& b) {
  const int64_t *ca = ir::as_const_int(a), *cb = ir::as_const_int(b);
  if (ca && cb) return Expr((*ca + *cb - 1) / *cb);
  return (a + (b - 1)) / b;
}
inline Expr mul_const(const Expr& a, const Expr& b) {
  const int64_t *ca = ir::as_const_int(a), *cb = ir::as_const_int(b);
  if (ca && cb) return Expr(*ca * *cb);
  return a * b;
}

}  // namespace schedule
NNVM_END_NAMESPACE
// end nnvm/schedule/relations.hpp
// begin nnvm/schedule/thread_axis.hpp
// The GPU grid axes a loop can be bound to, as values: `s[C].bind(bx, gpu::block_x)`. The IR
// keeps CUDA's spelling of each ("blockIdx.x") as the loop's thread tag, which every GPU
// dialect maps to its own (get_group_id(0), threadgroup_position_in_grid.x).

#include <cstdint>
#include <string>


NNVM_BEGIN_NAMESPACE
namespace schedule {

enum class ThreadAxis : uint8_t { block_x, block_y, block_z, thread_x, thread_y, thread_z, vthread };

inline const char* thread_tag(ThreadAxis a) {
  static const char* const tags[] = {"blockIdx.x",  "blockIdx.y",  "blockIdx.z", "threadIdx.x",
                                     "threadIdx.y", "threadIdx.z", "vthread"};
  return tags[static_cast<int>(a)];
}

// The axis a thread tag names, for schedules read back from text (tuning logs); UserError
// "nnvm.schedule.bind_tag" for any other string.
inline ThreadAxis thread_axis_named(const std::string& tag) {
  for (int a = 0; a <= static_cast<int>(ThreadAxis::vthread); ++a)
    if (tag == thread_tag(static_cast<ThreadAxis>(a))) return static_cast<ThreadAxis>(a);
  throw UserError("nnvm.schedule.bind_tag",
                  "unknown thread axis '" + printable(tag) + "'; use blockIdx.x/y/z, threadIdx.x/y/z or vthread");
}

}  // namespace schedule

// Short names for kernel authors.
namespace gpu {
inline constexpr schedule::ThreadAxis block_x = schedule::ThreadAxis::block_x;
inline constexpr schedule::ThreadAxis block_y = schedule::ThreadAxis::block_y;
inline constexpr schedule::ThreadAxis block_z = schedule::ThreadAxis::block_z;
inline constexpr schedule::ThreadAxis thread_x = schedule::ThreadAxis::thread_x;
inline constexpr schedule::ThreadAxis thread_y = schedule::ThreadAxis::thread_y;
inline constexpr schedule::ThreadAxis thread_z = schedule::ThreadAxis::thread_z;
inline constexpr schedule::ThreadAxis vthread = schedule::ThreadAxis::vthread;
}  // namespace gpu
NNVM_END_NAMESPACE
// end nnvm/schedule/thread_axis.hpp

NNVM_BEGIN_NAMESPACE
namespace schedule {

using ir::ForKind;

// Per-loop annotations set by vectorize/unroll/parallel/bind/pragma.
struct IterVarAttr {
  ForKind kind = ForKind::serial;
  std::string thread_tag;
  // pragma auto_unroll_max_step: loops nested in this one whose whole nest runs at most this
  // many iterations are unrolled (0: no pragma).
  int64_t auto_unroll_max_step = 0;
};

// Where a stage's loop nest goes: at the kernel's top level, inside a loop of a consumer
// stage, or nowhere (its body is substituted into its consumers).
enum class AttachKind : uint8_t { root, at, inlined };


struct StageNode {
  te::Tensor tensor;                    // the stage computes this tensor
  // What the stage computes, per element: starts as the op's body; cache_read, cache_write
  // and rfactor rewrite it (the op itself is immutable and may be shared).
  Expr body;
  std::vector<IterVar> axis;            // data-parallel axes, one per output dimension
  std::vector<IterVar> reduce_axes;     // the reduction axes of `body`
  std::vector<IterVar> root_iter_vars;  // axis then reduce_axes
  std::vector<IterVar> all_iter_vars;   // every iter var ever made for this stage
  std::vector<IterVar> leaf_iter_vars;  // current loops, outermost first
  std::vector<Relation> relations;      // in the order the primitives were applied
  std::unordered_map<const ir::IterVarNode*, IterVarAttr> attrs;
  AttachKind attach = AttachKind::root;
  std::weak_ptr<StageNode> attach_stage;  // for AttachKind::at
  IterVar attach_iv;                      // the consumer loop the nest goes into
  ir::MemoryScope scope = ir::MemoryScope::global;
  bool is_output = false;                 // an output of the schedule: never inlined or attached
};

class Stage {
 public:
  Stage() = default;
  explicit Stage(const te::Tensor& t) {
    if (t.op().kind != te::OpKind::compute)
      throw UserError("nnvm.schedule.not_compute", str_cat("tensor ", t.name(), " is a placeholder and has no stage"));
    *this = Stage(t, t.op().body, t.op().axis, t.op().reduce_axes);
  }
  // A stage computing `t` as `body` over the given axes (cache and rfactor stages).
  Stage(const te::Tensor& t, Expr body, std::vector<IterVar> axis, std::vector<IterVar> reduce_axes)
      : node_(std::make_shared<StageNode>()) {
    node_->tensor = t;
    reset(std::move(body), std::move(axis), std::move(reduce_axes));
  }
  explicit Stage(std::shared_ptr<StageNode> n) : node_(std::move(n)) {}

  const StageNode& node() const { return *node_; }
  const std::shared_ptr<StageNode>& node_ptr() const { return node_; }
  bool same_as(const Stage& o) const { return node_ == o.node_; }

  // Replaces what the stage computes and forgets its loop schedule (cache_write, rfactor).
  void reset(Expr body, std::vector<IterVar> axis, std::vector<IterVar> reduce_axes) {
    node_->body = std::move(body);
    node_->axis = std::move(axis);
    node_->reduce_axes = std::move(reduce_axes);
    node_->root_iter_vars = node_->axis;
    node_->root_iter_vars.insert(node_->root_iter_vars.end(), node_->reduce_axes.begin(), node_->reduce_axes.end());
    node_->all_iter_vars = node_->leaf_iter_vars = node_->root_iter_vars;
    node_->relations.clear();
    node_->attrs.clear();
  }
  // Overwrites the per-element body only (cache_read redirecting reads).
  void set_body(Expr body) { node_->body = std::move(body); }
  void mark_output() { node_->is_output = true; }
  const te::Tensor& tensor() const { return node_->tensor; }
  const std::string& name() const { return node_->tensor.name(); }

  // The d-th data-parallel axis of the tensor, or the one with the given name.
  IterVar axis(size_t d) const {
    const auto& ax = node_->axis;
    if (d >= ax.size())
      throw UserError("nnvm.schedule.axis_index",
                      str_cat("stage has ", ax.size(), " axes, asked for axis ", d), ctx());
    return ax[d];
  }
  IterVar axis(const std::string& name) const {
    for (auto& iv : node_->all_iter_vars)
      if (iv.name() == name) return iv;
    throw UserError("nnvm.schedule.axis_name", str_cat("no axis named '", name, "'"), ctx());
  }
  IterVar reduce_axis(size_t d) const {
    const auto& ax = node_->reduce_axes;
    if (d >= ax.size())
      throw UserError("nnvm.schedule.axis_index",
                      str_cat("stage has ", ax.size(), " reduction axes, asked for ", d), ctx());
    return ax[d];
  }
  const std::vector<IterVar>& leaf_iter_vars() const { return node_->leaf_iter_vars; }

  // Splits `parent` into outer and inner loops, the inner of extent `factor`.
  std::pair<IterVar, IterVar> split(const IterVar& parent, Expr factor) {
    check_positive("split_factor", parent, factor, "split factor");
    return do_split(parent, factor, Expr());
  }
  // Splits `parent` into `nparts` outer iterations.
  std::pair<IterVar, IterVar> split_nparts(const IterVar& parent, Expr nparts) {
    check_positive("split_nparts", parent, nparts, "split nparts");
    return do_split(parent, Expr(), nparts);
  }
  // Splits x and y by the factors and orders the loops x.outer, y.outer, x.inner, y.inner.
  std::tuple<IterVar, IterVar, IterVar, IterVar> tile(const IterVar& x, const IterVar& y, Expr x_factor,
                                                      Expr y_factor) {
    leaf_position(x, "tile");
    leaf_position(y, "tile");
    if (x.same_as(y)) throw UserError("nnvm.schedule.tile_same_axis", "tile needs two different axes", ctx(x));
    auto [xo, xi] = split(x, std::move(x_factor));
    auto [yo, yi] = split(y, std::move(y_factor));
    reorder({xo, yo, xi, yi});
    return {xo, yo, xi, yi};
  }
  // Puts the given leaf loops in this relative order; the other loops keep their places.
  void reorder(const std::vector<IterVar>& order) {
    std::vector<size_t> pos;
    for (size_t a = 0; a < order.size(); ++a) {
      for (size_t b = 0; b < a; ++b)
        if (order[a].same_as(order[b]))
          throw UserError("nnvm.schedule.reorder_duplicate", "axis appears twice in reorder", ctx(order[a]));
      pos.push_back(leaf_position(order[a], "reorder"));
    }
    std::vector<size_t> slots = pos;
    std::sort(slots.begin(), slots.end());
    auto leaves = node_->leaf_iter_vars;
    for (size_t a = 0; a < order.size(); ++a) leaves[slots[a]] = order[a];
    node_->leaf_iter_vars = std::move(leaves);
  }
  // Fuses two adjacent loops (outer immediately enclosing inner) into one.
  IterVar fuse(const IterVar& outer, const IterVar& inner) {
    size_t po = leaf_position(outer, "fuse"), pi = leaf_position(inner, "fuse");
    if (pi != po + 1)
      throw UserError("nnvm.schedule.fuse_not_adjacent",
                      str_cat("fuse needs '", outer.name(), "' to enclose '", inner.name(),
                              "' directly; reorder them first"),
                      ctx(outer));
    if (outer->kind != inner->kind)
      throw UserError("nnvm.schedule.fuse_mixed_kind",
                      "cannot fuse a reduction axis with a data-parallel axis", ctx(outer));
    IterVar fused = make_iter_var(outer.name() + "." + inner.name() + ".fused", outer->kind);
    node_->relations.push_back(FuseRelation{outer, inner, fused});
    auto& leaves = node_->leaf_iter_vars;
    leaves.erase(leaves.begin() + long(pi));
    leaves[po] = fused;
    return fused;
  }
  IterVar fuse(const std::vector<IterVar>& axes) {
    if (axes.empty()) throw UserError("nnvm.schedule.fuse_empty", "fuse needs at least one axis", ctx());
    IterVar f = axes[0];
    for (size_t a = 1; a < axes.size(); ++a) f = fuse(f, axes[a]);
    return f;
  }
  // Turns the loop into vector code. Its extent must be a constant after splitting.
  void vectorize(const IterVar& iv) {
    if (iv->kind == ir::IterKind::reduce)
      throw UserError("nnvm.schedule.vectorize_reduction",
                      "cannot vectorize a reduction axis (its iterations depend on each other); "
                      "vectorize a data-parallel axis instead",
                      ctx(iv));
    set_kind(iv, ForKind::vectorized, "vectorize");
  }
  // Replaces the loop by copies of its body. Its extent must be a constant after splitting.
  void unroll(const IterVar& iv) { set_kind(iv, ForKind::unrolled, "unroll"); }
  // Runs the loop's iterations on the thread pool.
  void parallel(const IterVar& iv) {
    if (iv->kind == ir::IterKind::reduce)
      throw UserError("nnvm.schedule.parallel_reduction",
                      "cannot parallelize a reduction axis: iterations would race on the same output; "
                      "parallelize a data-parallel axis instead",
                      ctx(iv));
    set_kind(iv, ForKind::parallel, "parallel");
  }

  // Computes this stage inside loop `iv` of `parent`, only over the region that one iteration
  // of that loop reads. Producer and consumer must be different stages.
  void compute_at(const Stage& parent, const IterVar& iv) {
    if (node_->is_output)
      throw UserError("nnvm.schedule.compute_at_output", "an output of the schedule cannot be computed inside another stage", ctx());
    if (parent.node_ == node_)
      throw UserError("nnvm.schedule.compute_at_self", "a stage cannot be computed inside its own loops", ctx());
    parent.leaf_position(iv, "compute_at");
    node_->attach = AttachKind::at;
    node_->attach_stage = parent.node_;
    node_->attach_iv = iv;
  }
  // Substitutes this stage's body into its consumers: no loops, no storage.
  void compute_inline() {
    if (node_->is_output)
      throw UserError("nnvm.schedule.inline_output", "an output of the schedule cannot be inlined", ctx());
    if (!node_->reduce_axes.empty())
      throw UserError("nnvm.schedule.inline_reduction",
                      "a reduction cannot be inlined (its value needs a loop); compute it at a consumer's loop instead", ctx());
    node_->attach = AttachKind::inlined;
  }
  // Computes the whole tensor at the kernel's top level (the default).
  void compute_root() {
    node_->attach = AttachKind::root;
    node_->attach_stage.reset();
    node_->attach_iv = IterVar();
  }
  // Where the stage's storage lives: global (workspace), shared (GPU block) or local (registers/stack).
  void set_scope(ir::MemoryScope scope) {
    if (node_->is_output && scope != ir::MemoryScope::global)
      throw UserError("nnvm.schedule.output_scope", "an output of the schedule lives in global memory", ctx());
    node_->scope = scope;
  }
  // Binds the loop to a GPU grid axis: gpu::block_x/y/z, gpu::thread_x/y/z or gpu::vthread.
  void bind(const IterVar& iv, ThreadAxis axis) {
    const std::string thread_tag = schedule::thread_tag(axis);
    if (iv->kind == ir::IterKind::reduce)
      throw UserError("nnvm.schedule.bind_reduction", "cannot bind a reduction axis to GPU threads", ctx(iv));
    for (auto& [other, a] : node_->attrs)
      if (a.kind == ForKind::thread_binding && a.thread_tag == thread_tag && other != iv.get())
        throw UserError("nnvm.schedule.bind_twice", str_cat("another loop of this stage is already bound to ", thread_tag), ctx(iv));
    set_kind(iv, ForKind::thread_binding, "bind");
    node_->attrs[iv.get()].thread_tag = thread_tag;
  }
  // Pragma "auto_unroll_max_step": unroll every loop nested in `iv` whose nest (the loop and
  // everything inside it) runs at most `max_step` iterations in all.
  void pragma_auto_unroll(const IterVar& iv, int64_t max_step) {
    leaf_position(iv, "pragma_auto_unroll");
    if (max_step <= 0 || max_step > 4096)
      throw UserError("nnvm.schedule.pragma_value", str_cat("auto_unroll_max_step must be in [1, 4096], got ", max_step), ctx(iv));
    node_->attrs[iv.get()].auto_unroll_max_step = max_step;
  }

  const IterVarAttr* attr(const IterVar& iv) const {
    auto it = node_->attrs.find(iv.get());
    return it == node_->attrs.end() ? nullptr : &it->second;
  }

  // Context for errors: "stage C › axis i.inner".
  std::vector<std::string> ctx(const IterVar& iv = IterVar()) const {
    std::vector<std::string> c{"stage " + name()};
    if (iv.defined()) c.push_back("axis " + iv.name());
    return c;
  }

 private:
  IterVar make_iter_var(std::string name, ir::IterKind kind) {
    IterVar iv(ir::Var(std::move(name)), ir::Range{}, kind);
    node_->all_iter_vars.push_back(iv);
    return iv;
  }
  size_t leaf_position(const IterVar& iv, const char* primitive) const {
    if (!iv.defined()) throw UserError("nnvm.schedule.undefined_axis", str_cat(primitive, " got an undefined axis"), ctx());
    auto& leaves = node_->leaf_iter_vars;
    for (size_t p = 0; p < leaves.size(); ++p)
      if (leaves[p].same_as(iv)) return p;
    bool known = std::any_of(node_->all_iter_vars.begin(), node_->all_iter_vars.end(),
                             [&](const IterVar& x) { return x.same_as(iv); });
    throw UserError("nnvm.schedule.not_leaf",
                    known ? str_cat(primitive, " needs a current loop, but axis was already split or fused")
                          : str_cat(primitive, " got an axis that belongs to another stage"),
                    ctx(iv));
  }
  void check_positive(const char* what, const IterVar& iv, const Expr& v, const char* label) const {
    if (!v.defined() || !v.dtype().is_int() || !v.dtype().is_scalar())
      throw UserError(str_cat("nnvm.schedule.", what), str_cat(label, " must be a scalar integer"), ctx(iv));
    if (auto* c = ir::as_const_int(v); c && *c <= 0)
      throw UserError(str_cat("nnvm.schedule.", what), str_cat(label, " must be positive, got ", *c), ctx(iv));
  }
  std::pair<IterVar, IterVar> do_split(const IterVar& parent, Expr factor, Expr nparts) {
    size_t p = leaf_position(parent, "split");
    if (factor.defined() && factor.dtype() != dtype::index) factor = ir::cast(dtype::index, factor);
    if (nparts.defined() && nparts.dtype() != dtype::index) nparts = ir::cast(dtype::index, nparts);
    IterVar outer = make_iter_var(parent.name() + ".outer", parent->kind);
    IterVar inner = make_iter_var(parent.name() + ".inner", parent->kind);
    node_->relations.push_back(SplitRelation{parent, outer, inner, factor, nparts});
    auto& leaves = node_->leaf_iter_vars;
    leaves[p] = outer;
    leaves.insert(leaves.begin() + long(p) + 1, inner);
    return {outer, inner};
  }
  void set_kind(const IterVar& iv, ForKind kind, const char* primitive) {
    leaf_position(iv, primitive);
    auto& a = node_->attrs[iv.get()];
    if (a.kind != ForKind::serial && a.kind != kind)
      throw UserError("nnvm.schedule.conflicting_kind",
                      str_cat(primitive, " on a loop already marked ", ir::for_kind_name(a.kind)), ctx(iv));
    a.kind = kind;
  }

  std::shared_ptr<StageNode> node_;
};

}  // namespace schedule
NNVM_END_NAMESPACE
// end nnvm/schedule/stage.hpp

NNVM_BEGIN_NAMESPACE
namespace schedule {

namespace detail {

// Replaces every read of one tensor by a read of another, in an expression.
inline Expr redirect_reads(const Expr& e, const ir::ProducerNode* from, const std::shared_ptr<const te::TensorNode>& to) {
  struct Redirect : ir::IRMutator {
    const ir::ProducerNode* from;
    const std::shared_ptr<const te::TensorNode>& to;
    Redirect(const ir::ProducerNode* f, const std::shared_ptr<const te::TensorNode>& t) : from(f), to(t) {}
    using ir::IRMutator::mutate;
    Expr visit(const ir::ProducerLoad* op, const Expr& e) override {
      Expr r = ir::IRMutator::visit(op, e);
      auto* load = r.as<ir::ProducerLoad>();
      if (load->tensor.get() != from) return r;
      return ir::make_expr<ir::ProducerLoad>(load->dtype, to, load->indices);
    }
  } m(from, to);
  return m.mutate(e);
}

// A compute tensor whose op is built directly (the stage's body says what it computes).
inline te::Tensor make_stage_tensor(std::string name, std::vector<Expr> shape, DataType dtype,
                                    std::vector<IterVar> axis, std::vector<IterVar> reduce_axes, Expr body) {
  auto op = std::make_shared<te::OperationNode>();
  op->kind = te::OpKind::compute;
  op->name = name;
  op->axis = std::move(axis);
  op->reduce_axes = std::move(reduce_axes);
  op->inputs = te::detail::collect_inputs(body);
  op->body = std::move(body);
  return te::Tensor(std::make_shared<const te::TensorNode>(te::TensorNode{{std::move(name), std::move(shape), dtype}, std::move(op)}));
}

// Fresh data-parallel axes with the same names and ranges.
inline std::vector<IterVar> copy_axes(const std::vector<IterVar>& axes, ir::VarMap& renamed) {
  std::vector<IterVar> out;
  for (auto& iv : axes) {
    ir::Var v(iv.name());
    renamed[iv.var()] = v;
    out.emplace_back(v, iv->dom, iv->kind);
  }
  return out;
}

}  // namespace detail

class Schedule {
 public:
  Schedule() = default;
  explicit Schedule(std::vector<te::Tensor> outputs) : outputs_(std::move(outputs)) {
    if (outputs_.empty()) throw UserError("nnvm.schedule.no_outputs", "a schedule needs at least one output tensor");
    for (auto& t : te::post_order(outputs_))
      if (t.op().kind == te::OpKind::compute) stages_.emplace_back(t);
    for (auto& o : outputs_) {
      if (o.op().kind != te::OpKind::compute)
        throw UserError("nnvm.schedule.output_placeholder", str_cat("output ", o.name(), " is a placeholder, not a computed tensor"));
      (*this)[o].mark_output();
    }
  }

  const std::vector<te::Tensor>& outputs() const { return outputs_; }
  // Stages in producer-before-consumer order.
  const std::vector<Stage>& stages() const { return stages_; }

  Stage operator[](const te::Tensor& t) const {
    for (auto& s : stages_)
      if (s.tensor().same_as(t)) return s;
    throw UserError("nnvm.schedule.unknown_tensor",
                    str_cat("tensor ", t.name(), " is not computed by this schedule"
                                                 " (a placeholder, or not an input of its outputs)"));
  }

  // A stage that copies `t` into memory of `scope` for the given readers, which then read the
  // copy. Returns the copy (schedule it like any stage, typically compute_at a reader's loop).
  te::Tensor cache_read(const te::Tensor& t, ir::MemoryScope scope, const std::vector<te::Tensor>& readers) {
    if (readers.empty())
      throw UserError("nnvm.schedule.cache_read_readers", str_cat("cache_read of ", t.name(), " needs at least one reader"));
    size_t first = stages_.size();
    for (auto& r : readers) {
      size_t p = position((*this)[r]);
      if (!reads(stages_[p].node().body, t.get()))
        throw UserError("nnvm.schedule.cache_read_not_reader", str_cat("stage ", r.name(), " does not read ", t.name()));
      first = std::min(first, p);
    }
    std::vector<IterVar> axis;
    std::vector<Expr> idx;
    for (size_t d = 0; d < t.rank(); ++d) {
      ir::Var v(te::detail::default_axis_name(d, t.rank()));
      axis.emplace_back(v, ir::Range{Expr(int64_t(0)), t.shape()[d]}, ir::IterKind::data_par);
      idx.push_back(v);
    }
    Expr body = t(idx);
    te::Tensor cache = detail::make_stage_tensor(t.name() + "." + ir::scope_name(scope), t.shape(), t.dtype(), axis, {}, body);
    for (auto& r : readers) {
      Stage st = (*this)[r];
      st.set_body(detail::redirect_reads(st.node().body, t.get(), cache.node_ptr()));
    }
    Stage cs(cache, body, axis, {});
    cs.set_scope(scope);
    stages_.insert(stages_.begin() + long(first), cs);
    return cache;
  }

  // Moves the computation of `t` into a new stage whose result lives in `scope`; `t`'s own
  // stage becomes a copy out of it. Returns the new stage's tensor. `t`'s stage must not be
  // scheduled yet (its loops are replaced).
  te::Tensor cache_write(const te::Tensor& t, ir::MemoryScope scope) {
    Stage st = (*this)[t];
    if (!st.node().relations.empty() || !st.node().attrs.empty())
      throw UserError("nnvm.schedule.cache_write_scheduled",
                      "cache_write must come before any other primitive on the stage (its loops are rebuilt)", st.ctx());
    ir::VarMap renamed;
    std::vector<IterVar> axis = detail::copy_axes(st.node().axis, renamed);
    Expr body = ir::substitute(st.node().body, renamed);
    te::Tensor cache = detail::make_stage_tensor(t.name() + "." + ir::scope_name(scope), t.shape(), t.dtype(), axis,
                                                 st.node().reduce_axes, body);
    Stage cs(cache, body, axis, st.node().reduce_axes);
    cs.set_scope(scope);
    std::vector<Expr> idx;
    for (auto& iv : st.node().axis) idx.push_back(iv.var());
    st.reset(cache(idx), st.node().axis, {});
    stages_.insert(stages_.begin() + long(position(st)), cs);
    return cache;
  }

  // Factors the reduction of `t` over the split part `factor_axis` (the outer or inner loop of
  // a split of one reduction axis) into a new stage with one more data-parallel dimension,
  // indexed by that loop: t_rf(f, i...) = partial reductions, t(i...) = reduce over f of t_rf.
  // Returns t_rf; `t`'s stage is reset to the final reduction over f.
  te::Tensor rfactor(const te::Tensor& t, const IterVar& factor_axis) {
    Stage st = (*this)[t];
    const StageNode& n = st.node();
    auto* red = n.body.as<ir::Reduce>();
    if (!red) throw UserError("nnvm.schedule.rfactor_not_reduction", "rfactor needs a reduction stage", st.ctx());
    const SplitRelation* split = nullptr;
    for (auto& rel : n.relations) {
      auto* s = std::get_if<SplitRelation>(&rel);
      if (s && (s->outer.same_as(factor_axis) || s->inner.same_as(factor_axis))) split = s;
    }
    bool root_reduce = split && std::any_of(n.reduce_axes.begin(), n.reduce_axes.end(),
                                            [&](const IterVar& r) { return r.same_as(split->parent); });
    if (!split || !root_reduce || n.relations.size() != 1)
      throw UserError("nnvm.schedule.rfactor_axis",
                      "rfactor needs the outer or inner loop of a single split of a reduction axis, "
                      "and no other split or fuse on the stage",
                      st.ctx(factor_axis));
    const IterVar& rk = split->parent;
    Expr ext = rk->dom.extent;
    Expr inner_ext = split->factor.defined() ? split->factor : ceil_div(ext, split->nparts);
    Expr outer_ext = split->factor.defined() ? ceil_div(ext, split->factor) : split->nparts;
    bool factor_is_inner = split->inner.same_as(factor_axis);
    Expr f_ext = factor_is_inner ? inner_ext : outer_ext, rest_ext = factor_is_inner ? outer_ext : inner_ext;

    // t_rf(f, i...) = reduce over (rest, other reduction axes) of source with rk rebuilt.
    ir::VarMap renamed;
    ir::Var f(factor_axis.name());
    std::vector<IterVar> rf_axis{IterVar(f, {Expr(int64_t(0)), f_ext}, ir::IterKind::data_par)};
    for (auto& iv : detail::copy_axes(n.axis, renamed)) rf_axis.push_back(iv);
    IterVar rest(ir::Var(factor_is_inner ? split->outer.name() : split->inner.name()), {Expr(int64_t(0)), rest_ext},
                 ir::IterKind::reduce);
    Expr outer_v = factor_is_inner ? Expr(rest.var()) : Expr(f), inner_v = factor_is_inner ? Expr(f) : Expr(rest.var());
    Expr rk_value = rk->dom.min + outer_v * inner_ext + inner_v;
    renamed[rk.var()] = rk_value;
    std::vector<IterVar> rf_reduce{rest};
    for (auto& r : n.reduce_axes)
      if (!r.same_as(rk)) rf_reduce.push_back(r);
    Expr cond = red->condition.defined() ? ir::substitute(red->condition, renamed) : Expr();
    const int64_t *ce = ir::as_const_int(ext), *ci = ir::as_const_int(inner_ext);
    if (!(ce && ci && *ce % *ci == 0)) {
      Expr in_range = rk_value < rk->dom.min + ext;
      cond = cond.defined() ? (cond && in_range) : in_range;
    }
    Expr rf_body = ir::make_expr<ir::Reduce>(red->dtype, red->combiner, ir::substitute(red->source, renamed), rf_reduce,
                                             ir::combiner_identity(red->combiner, red->dtype), cond);
    std::vector<Expr> rf_shape{f_ext};
    for (auto& e : t.shape()) rf_shape.push_back(e);
    te::Tensor rf = detail::make_stage_tensor(t.name() + ".rf", rf_shape, t.dtype(), rf_axis, rf_reduce, rf_body);

    // t(i...) = reduce over f' of t_rf(f', i...), starting from the user's init.
    IterVar f2(ir::Var(factor_axis.name() + ".v"), {Expr(int64_t(0)), f_ext}, ir::IterKind::reduce);
    std::vector<Expr> idx{f2.var()};
    for (auto& iv : n.axis) idx.push_back(iv.var());
    Expr final_body = ir::make_expr<ir::Reduce>(red->dtype, red->combiner, rf(idx), std::vector<IterVar>{f2}, red->init, Expr());
    std::vector<IterVar> axis = n.axis;
    st.reset(final_body, axis, {f2});
    stages_.insert(stages_.begin() + long(position(st)), Stage(rf, rf_body, rf_axis, rf_reduce));
    return rf;
  }

 private:
  size_t position(const Stage& s) const {
    for (size_t p = 0; p < stages_.size(); ++p)
      if (stages_[p].same_as(s)) return p;
    throw InternalError("nnvm.internal", "stage not in schedule");
  }
  static bool reads(const Expr& body, const ir::ProducerNode* t) {
    for (auto& in : te::detail::collect_inputs(body))
      if (in.get() == t) return true;
    return false;
  }

  std::vector<te::Tensor> outputs_;
  std::vector<Stage> stages_;
};

inline Schedule create_schedule(std::vector<te::Tensor> outputs) { return Schedule(std::move(outputs)); }
inline Schedule create_schedule(const te::Tensor& output) { return Schedule({output}); }

}  // namespace schedule
NNVM_END_NAMESPACE
// end nnvm/schedule/schedule.hpp
// begin nnvm/lower/interchange_reductions.hpp
// Reduction interchange: a serial loop whose every iteration accumulates into its own element,
//
//   for j:  X[f(j)] = init(j)
//           for k (one or more serial loops):  X[f(j)] = X[f(j)] + g(j, k)
//
// becomes
//
//   for j:  X[f(j)] = init(j)
//   for k:  for j':  X[f(j')] = X[f(j')] + g(j', k)
//
// so that the innermost loop is the data-parallel one and walks X contiguously (f(j+1) = f(j)+1).
// Each element still adds its terms in the same k order, so the results are bit-identical.
//
// The LLVM back end runs this before emitting: LLVM's loop vectorizer works on innermost loops
// only, so the unscheduled nest `for i, j: for k: C[i,j] += A[i,k]*B[k,j]` stays scalar there,
// while GCC (the C emitter's path) vectorizes its outer j loop by itself. Only what no schedule
// decided is touched: j and the k loops must be serial (not parallel, vectorized, unrolled or
// bound), and the nest must have exactly this shape; anything else is left as it is.
// Requires: flattened storage (Store/Load). Ensures: the same values, in the same order per element.


NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {

// Whether `e` reads buffer `x` anywhere other than at `index` (or reads it at all when `index`
// is undefined).
inline bool reads_elsewhere(const ir::Expr& e, const ir::Buffer& x, const ir::Expr& index) {
  struct Finder : ir::IRVisitor {
    const ir::Buffer& x;
    const ir::Expr& index;
    bool found = false;
    Finder(const ir::Buffer& b, const ir::Expr& i) : x(b), index(i) {}
    using ir::IRVisitor::visit;
    void visit(const ir::Load* op) override {
      if (op->buffer.same_as(x) && (!index.defined() || !ir::deep_equal(op->index, index))) found = true;
      ir::IRVisitor::visit(op);
    }
  } f(x, index);
  f.visit_expr(e);
  return f.found;
}

// True when `index` moves by exactly one element per step of `j`: f(j+1) - f(j) == 1.
inline bool unit_stride_in(const ir::Expr& index, const ir::Var& j) {
  if (!ir::has_affine_form(index.dtype()) || !ir::uses_var(index, j)) return false;
  ir::Expr step = ir::simplify(ir::substitute(index, j, j + 1) - index);
  const int64_t* c = ir::as_const_int(step);
  return c && *c == 1;
}

class ReductionInterchanger : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    ir::Stmt inner = ir::IRMutator::visit(op, s);
    auto* j = inner.as<ir::For>();
    if (!j || j->for_kind != ir::ForKind::serial) return inner;
    auto* seq = j->body.as<ir::Seq>();
    if (!seq || seq->seq.size() != 2) return inner;
    auto* init = seq->seq[0].as<ir::Store>();
    if (!init || !init->value.dtype().is_scalar()) return inner;
    const ir::Buffer& x = init->buffer;
    const ir::Expr& index = init->index;
    if (!unit_stride_in(index, j->loop_var) || reads_elsewhere(init->value, x, ir::Expr())) return inner;
    // The reduction loops: a perfect nest of serial loops whose bounds do not depend on j.
    std::vector<const ir::For*> ks;
    ir::Stmt at = seq->seq[1];
    while (auto* k = at.as<ir::For>()) {
      if (k->for_kind != ir::ForKind::serial || ir::uses_var(k->min, j->loop_var) ||
          ir::uses_var(k->extent, j->loop_var))
        return inner;
      ks.push_back(k);
      at = k->body;
    }
    auto* update = at.as<ir::Store>();
    if (ks.empty() || !update || !update->buffer.same_as(x) || !ir::deep_equal(update->index, index) ||
        reads_elsewhere(update->value, x, index))
      return inner;
    ir::Var j2(j->loop_var.name(), j->loop_var.dtype());
    ir::Stmt nest = ir::For::make(j2, j->min, j->extent, ir::ForKind::serial, ir::substitute(at, j->loop_var, j2));
    for (size_t n = ks.size(); n-- > 0;)
      nest = ir::For::make(ks[n]->loop_var, ks[n]->min, ks[n]->extent, ir::ForKind::serial, nest);
    return ir::Seq::make({ir::For::make(j->loop_var, j->min, j->extent, ir::ForKind::serial, seq->seq[0]), nest});
  }
};

}  // namespace detail

inline ir::Stmt interchange_reductions(const ir::Stmt& s) { return detail::ReductionInterchanger().mutate(s); }

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/interchange_reductions.hpp
// begin nnvm/lower/pipeline.hpp
// The whole lowering, as one table of passes: Schedule -> LoweredFunc.
//
// Each row is one pass: its name, the IR properties it requires, ensures and removes, and the
// target families it runs for. lower() runs the rows for LowerOptions::family in order; the
// table is checked when it is built, so a row whose requirements no earlier row ensures (for
// some family) is an error at the first lowering, not a silent miscompile.
//
// Set NNVM_DUMP_IR to a comma-separated list of pass names (or "all") to print the IR after
// those passes to stderr; LowerOptions::on_pass receives the same (name, IR) pairs, which is
// how tutorials show each step. Set NNVM_VERIFY_PASSES=1 to run the IR verifier after every
// pass that outputs loop IR (tensor form before storage_flatten, the lowered-IR contract
// after); a failure names the pass after which it was found. The test suite runs with it on.

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <iostream>
#include <sstream>

// begin nnvm/lower/infer_bounds.hpp
// Bound inference: the range of every loop of every stage, and the region each realized stage
// must store.
// Requires: inlined bodies (inline_stages). Ensures: every IterVar of every non-inlined stage
// has a range; leaf loops start at the range's min. A root stage computes its whole tensor. A
// stage computed at a consumer's loop computes, per iteration of that loop, the region the
// consumer reads inside it (points outside the tensor are skipped by edge guards), and stores
// it in a buffer whose extents are constant upper bounds of that region when they can be
// proved, else the shape.

#include <optional>
#include <unordered_map>

// begin nnvm/lower/inline_stages.hpp
// Inlining: the per-element body of every stage with reads of compute_inline'd stages
// replaced by those stages' bodies (recursively).
// Requires: inlined stages have no reduction (checked by compute_inline).
// Ensures: no body in the result reads an inlined stage.


NNVM_BEGIN_NAMESPACE
namespace lower {

using BodyMap = std::unordered_map<const schedule::StageNode*, ir::Expr>;

inline BodyMap inline_stages(const schedule::Schedule& sch) {
  std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*> inlined;
  BodyMap bodies;
  struct Inliner : ir::IRMutator {
    const std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*>& inlined;
    const BodyMap& bodies;
    Inliner(const std::unordered_map<const ir::ProducerNode*, const schedule::StageNode*>& i, const BodyMap& b)
        : inlined(i), bodies(b) {}
    using ir::IRMutator::mutate;
    ir::Expr visit(const ir::ProducerLoad* op, const ir::Expr& e) override {
      ir::Expr r = ir::IRMutator::visit(op, e);
      auto* load = r.as<ir::ProducerLoad>();
      auto it = inlined.find(load->tensor.get());
      if (it == inlined.end()) return r;
      ir::VarMap m;
      for (size_t d = 0; d < it->second->axis.size(); ++d) m[it->second->axis[d].var()] = load->indices[d];
      return ir::substitute(bodies.at(it->second), m);
    }
  };
  // Stages are in producer order, so an inlined producer's body is final before its readers.
  for (auto& st : sch.stages()) {
    bodies[&st.node()] = Inliner(inlined, bodies).mutate(st.node().body);
    if (st.node().attach == schedule::AttachKind::inlined) inlined[st.tensor().get()] = &st.node();
  }
  return bodies;
}

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/inline_stages.hpp

NNVM_BEGIN_NAMESPACE
namespace lower {

using ir::Expr;
using ir::IterVar;
using RangeMap = std::unordered_map<const ir::IterVarNode*, ir::Range>;
using Values = std::unordered_map<const ir::IterVarNode*, Expr>;

// Where a computed region may cross the tensor's edge (a consumer's tile overshooting it), the
// producer's loops keep their tile-sized, often constant, extents and guard each point instead.
struct EdgeGuard {
  bool lower = false;  // guard root >= 0
  Expr upper;          // guard root < upper (undefined: no guard)
};

struct Bounds {
  RangeMap ranges;
  std::unordered_map<const ir::IterVarNode*, EdgeGuard> edge_guards;
  // Realized region of each stage: its mins (the storage origin) and storage extents.
  std::unordered_map<const schedule::StageNode*, std::vector<ir::Range>> realize;
};

// Ranges of a stage's split/fused loops from the ranges of its root axes.
inline void pass_down(const schedule::Stage& stage, RangeMap& ranges) {
  for (auto& rel : stage.node().relations) {
    if (auto* s = std::get_if<schedule::SplitRelation>(&rel)) {
      const ir::Range& parent = ranges.at(s->parent.get());
      if (s->factor.defined()) {
        ranges[s->outer.get()] = {Expr(int64_t(0)), schedule::ceil_div(parent.extent, s->factor)};
        ranges[s->inner.get()] = {Expr(int64_t(0)), s->factor};
      } else {
        ranges[s->outer.get()] = {Expr(int64_t(0)), s->nparts};
        ranges[s->inner.get()] = {Expr(int64_t(0)), schedule::ceil_div(parent.extent, s->nparts)};
      }
    } else {
      auto& f = std::get<schedule::FuseRelation>(rel);
      ranges[f.fused.get()] = {Expr(int64_t(0)), schedule::mul_const(ranges.at(f.outer.get()).extent,
                                                                     ranges.at(f.inner.get()).extent)};
    }
  }
}

// Loops run from 0: the value of a leaf is its range's min plus its loop variable.
inline Expr leaf_value(const IterVar& iv, const RangeMap& ranges) {
  const Expr& mn = ranges.at(iv.get()).min;
  return ir::is_const_int(mn, 0) ? Expr(iv.var()) : mn + iv.var();
}

// The value of every iter var of a stage (root axes included) given its leaves' values.
inline Values pass_up(const schedule::Stage& stage, const RangeMap& ranges, Values value) {
  auto& rels = stage.node().relations;
  for (auto it = rels.rbegin(); it != rels.rend(); ++it) {
    if (auto* s = std::get_if<schedule::SplitRelation>(&*it)) {
      Expr factor = s->factor.defined() ? s->factor : ranges.at(s->inner.get()).extent;
      value[s->parent.get()] = ranges.at(s->parent.get()).min + value.at(s->outer.get()) * factor + value.at(s->inner.get());
    } else {
      auto& f = std::get<schedule::FuseRelation>(*it);
      const ir::Range &ro = ranges.at(f.outer.get()), &ri = ranges.at(f.inner.get());
      value[f.outer.get()] = ro.min + value.at(f.fused.get()) / ri.extent;
      value[f.inner.get()] = ri.min + value.at(f.fused.get()) % ri.extent;
    }
  }
  return value;
}

namespace detail {

inline std::vector<const ir::ProducerLoad*> reads_of(const Expr& body, const ir::ProducerNode* t) {
  struct Finder : ir::IRVisitor {
    const ir::ProducerNode* t;
    std::vector<const ir::ProducerLoad*> out;
    void visit(const ir::ProducerLoad* op) override {
      if (op->tensor.get() == t) out.push_back(op);
      ir::IRVisitor::visit(op);
    }
  } f;
  f.t = t;
  f.visit_expr(body);
  return f.out;
}

// Constant ranges of every loop known so far, for simplification and constant upper bounds.
inline ir::IntervalMap constant_ranges(const RangeMap& ranges, const schedule::Schedule& sch) {
  ir::IntervalMap out;
  for (auto& st : sch.stages())
    for (auto& iv : st.node().all_iter_vars) {
      auto it = ranges.find(iv.get());
      if (it == ranges.end()) continue;
      const int64_t* ex = ir::as_const_int(it->second.extent);
      if (ex) out[iv.var().get()] = ir::Interval{0, *ex - 1};
    }
  return out;
}

// Every leaf loop of `stage` ranging over its whole extent (loops run from 0).
inline void relax_leaves(const schedule::Stage& stage, const RangeMap& ranges, ir::SymIntervalMap& relaxed,
                         const IterVar& after = IterVar()) {
  bool inside = !after.defined();
  for (auto& iv : stage.leaf_iter_vars()) {
    if (inside) relaxed[iv.var().get()] = {Expr(int64_t(0)), ranges.at(iv.get()).extent - 1};
    if (after.defined() && iv.same_as(after)) inside = true;
  }
}

inline void merge_into(std::vector<ir::SymInterval>& region, bool& first, const std::vector<ir::SymInterval>& r) {
  for (size_t d = 0; d < region.size(); ++d) {
    if (first) {
      region[d] = r[d];
    } else {
      region[d].min = region[d].min.defined() && r[d].min.defined() ? ir::min(region[d].min, r[d].min) : Expr();
      region[d].max = region[d].max.defined() && r[d].max.defined() ? ir::max(region[d].max, r[d].max) : Expr();
    }
  }
  first = false;
}

// The region of `producer` that `reader` reads while the loops in `relaxed` run over their
// ranges (the loops of one iteration of the attach point).
inline void add_region_read(std::vector<ir::SymInterval>& region, bool& first, const schedule::Stage& reader,
                            const Expr& reader_body, const ir::ProducerNode* producer, const ir::SymIntervalMap& relaxed,
                            const RangeMap& ranges, const ir::IntervalMap& known) {
  Values leaf_values;
  for (auto& iv : reader.leaf_iter_vars()) leaf_values[iv.get()] = leaf_value(iv, ranges);
  Values value = pass_up(reader, ranges, leaf_values);
  ir::VarMap root_sub;
  for (auto& iv : reader.node().root_iter_vars) root_sub[iv.var()] = value.at(iv.get());
  for (auto* load : reads_of(reader_body, producer)) {
    std::vector<ir::SymInterval> r;
    for (auto& idx : load->indices) r.push_back(ir::eval_sym_interval(ir::substitute(idx, root_sub), relaxed, known));
    merge_into(region, first, r);
  }
}

// The stages between `reader` and `consumer` when `reader` is computed, directly or through
// other attached stages, inside loop `at` of `consumer` (or at it); nullopt when it is not.
inline std::optional<std::vector<schedule::Stage>> attach_chain(const schedule::Stage& reader,
                                                                const schedule::Stage& consumer, const IterVar& at) {
  std::vector<schedule::Stage> chain;
  schedule::Stage cur = reader;
  while (cur.node().attach == schedule::AttachKind::at) {
    chain.push_back(cur);
    schedule::Stage parent(cur.node().attach_stage.lock());
    if (parent.same_as(consumer)) {
      const auto& leaves = consumer.leaf_iter_vars();
      auto pos = [&](const IterVar& iv) { return std::find_if(leaves.begin(), leaves.end(), [&](auto& l) { return l.same_as(iv); }); };
      if (pos(cur.node().attach_iv) >= pos(at)) return chain;
      return std::nullopt;
    }
    cur = parent;
  }
  return std::nullopt;
}

}  // namespace detail

inline Bounds infer_bounds(const schedule::Schedule& sch, const BodyMap& bodies) {
  Bounds b;
  const auto& stages = sch.stages();
  // Consumers come after their producers: walk backwards so a consumer's loops are known
  // before the region of a producer attached to them is derived.
  for (auto it = stages.rbegin(); it != stages.rend(); ++it) {
    const schedule::Stage& st = *it;
    const schedule::StageNode& n = st.node();
    if (n.attach == schedule::AttachKind::inlined) continue;
    const auto& shape = st.tensor().shape();
    std::vector<ir::Range> realize;
    for (auto& e : shape) realize.push_back({Expr(int64_t(0)), e});
    for (auto& iv : n.root_iter_vars) b.ranges[iv.get()] = iv->dom;
    if (n.attach == schedule::AttachKind::at) {
      schedule::Stage consumer(n.attach_stage.lock());
      if (consumer.node().attach == schedule::AttachKind::inlined)
        throw UserError("nnvm.schedule.compute_at_inlined",
                        str_cat("stage ", st.name(), " is computed at a loop of ", consumer.name(), ", which is inlined"), st.ctx());
      // Readers: the consumer, and stages computed inside the attach loop (they run after this
      // stage's nest in each iteration). Any other reader would see a partial region.
      ir::IntervalMap known = detail::constant_ranges(b.ranges, sch);
      ir::SymIntervalMap consumer_relaxed;
      detail::relax_leaves(consumer, b.ranges, consumer_relaxed, n.attach_iv);
      std::vector<ir::SymInterval> region(n.axis.size());
      bool first = true;
      for (auto& reader : stages) {
        if (reader.same_as(st) || reader.node().attach == schedule::AttachKind::inlined) continue;
        const Expr& body = bodies.at(&reader.node());
        if (detail::reads_of(body, st.tensor().get()).empty()) continue;
        if (reader.same_as(consumer)) {
          detail::add_region_read(region, first, reader, body, st.tensor().get(), consumer_relaxed, b.ranges, known);
          continue;
        }
        auto chain = detail::attach_chain(reader, consumer, n.attach_iv);
        if (!chain)
          throw UserError("nnvm.schedule.compute_at_consumers",
                          str_cat("stage ", st.name(), " is computed at loop ", n.attach_iv.name(), " of ", consumer.name(),
                                  " but ", reader.name(), ", which runs outside that loop, reads it too; compute it at "
                                  "the root, or at a loop that encloses all its readers"),
                          st.ctx());
        ir::SymIntervalMap relaxed = consumer_relaxed;
        for (auto& c : *chain) detail::relax_leaves(c, b.ranges, relaxed);
        detail::add_region_read(region, first, reader, body, st.tensor().get(), relaxed, b.ranges, known);
      }
      for (size_t d = 0; d < n.axis.size(); ++d) {
        Expr lo = region[d].min, hi = region[d].max;
        if (!lo.defined() || !hi.defined()) continue;  // unbounded: compute the whole axis
        lo = ir::simplify(lo, known);
        hi = ir::simplify(hi, known);
        Expr extent = ir::simplify(hi - lo + 1, known);
        b.ranges[n.axis[d].get()] = {lo, extent};
        EdgeGuard g;
        g.lower = !ir::can_prove(lo >= 0, known);
        if (!ir::can_prove(hi < shape[d], known)) g.upper = shape[d];
        if (g.lower || g.upper.defined()) b.edge_guards[n.axis[d].get()] = g;
        ir::Interval bound = ir::const_bound(extent, known);
        const int64_t* full = ir::as_const_int(shape[d]);
        Expr storage = bound.max && (!full || *bound.max < *full) ? Expr(std::max<int64_t>(*bound.max, 1)) : shape[d];
        realize[d] = {lo, storage};
      }
    }
    b.realize[&n] = realize;
    pass_down(st, b.ranges);
  }
  return b;
}

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/infer_bounds.hpp
// begin nnvm/lower/legalize_vectors.hpp
// Vector legalization: a `vectorized` loop wider than one SIMD register of the target becomes an
// unrolled loop over register-wide vectorized loops, so no emitter is asked for a vector wider
// than the machine has. (GCC, given a 16-float vector on an AVX2 machine, moves it through the
// stack: the kernel runs several times slower than with two 8-float vectors.)
// Requires: flattened storage, before `vectorize`. Ensures: every vectorized loop of constant
// extent that is a multiple of the register's lanes has at most that many iterations. A loop
// whose extent is not such a multiple is left as scheduled: the schedule asked for it.

#include <algorithm>


NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {
// The widest element, in bits, that the statement loads or stores: it decides the lanes of
// one register for the loop's vectors.
inline int widest_element_bits(const ir::Stmt& s) {
  struct F : ir::IRVisitor {
    int bits = 0;
    void visit(const ir::Load* op) override {
      bits = std::max(bits, int(op->buffer->dtype.bits));
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Store* op) override {
      bits = std::max(bits, int(op->buffer->dtype.bits));
      ir::IRVisitor::visit(op);
    }
  } f;
  f.visit_stmt(s);
  return f.bits;
}
}  // namespace detail

// `vector_bits`: the target's SIMD register width; 0 leaves every loop as scheduled.
inline ir::Stmt legalize_vectors(const ir::Stmt& s, int vector_bits) {
  struct Legalize : ir::IRMutator {
    int vector_bits;
    using ir::IRMutator::visit;
    ir::Stmt visit(const ir::For* op, const ir::Stmt& st) override {
      ir::Stmt inner = ir::IRMutator::visit(op, st);
      auto* f = inner.as<ir::For>();
      if (!f || f->for_kind != ir::ForKind::vectorized) return inner;
      const int64_t* extent = ir::as_const_int(f->extent);
      int bits = detail::widest_element_bits(f->body);
      if (!extent || bits == 0) return inner;
      const int64_t lanes = std::max(1, vector_bits / bits);
      if (*extent <= lanes || *extent % lanes != 0) return inner;
      ir::Var outer(f->loop_var.name() + ".reg", f->loop_var.dtype());
      ir::Var lane(f->loop_var.name() + ".lane", f->loop_var.dtype());
      ir::Expr index = outer * lanes + lane;
      if (!ir::is_const_int(f->min, 0)) index = f->min + index;
      ir::Stmt body = ir::substitute(f->body, f->loop_var, index);
      DataType t = f->extent.dtype();
      return ir::For::make(outer, ir::make_zero(t), ir::make_const(t, double(*extent / lanes)), ir::ForKind::unrolled,
                           ir::For::make(lane, ir::make_zero(t), ir::make_const(t, double(lanes)),
                                         ir::ForKind::vectorized, body));
    }
  } l;
  if (vector_bits <= 0) return s;
  l.vector_bits = vector_bits;
  return l.mutate(s);
}

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/legalize_vectors.hpp
// begin nnvm/lower/schedule_ops.hpp
// Loop nest construction: turns each stage into loops over its leaf iter vars (each running
// from 0; a leaf whose range starts elsewhere is offset where it is used) around a
// ProducerStore of its body, puts the nests of stages computed at a consumer's loop at the top
// of that loop, and wraps intermediate tensors in ProducerRealize where they are computed.
// Requires: inlined bodies and bounds from infer_bounds. Ensures: a statement with
// ProducerStore/ProducerLoad on tensors (not yet on flat buffers). Non-divisible splits get guards on the original axes, so
// no point outside a tensor is ever computed; a non-divisible split whose inner loop is
// vectorized or unrolled is instead partitioned into full tiles and a serial tail, so the full
// tiles need no guard and still vectorize.

#include <functional>
#include <unordered_set>


NNVM_BEGIN_NAMESPACE
namespace lower {

using ir::Expr;
using ir::IterVar;
using ir::Stmt;

namespace detail {

using IterVarSet = std::unordered_set<const ir::IterVarNode*>;

// Which root axes each iter var of a stage derives from.
inline std::unordered_map<const ir::IterVarNode*, IterVarSet> root_sets(const schedule::Stage& st) {
  std::unordered_map<const ir::IterVarNode*, IterVarSet> roots;
  for (auto& iv : st.node().root_iter_vars) roots[iv.get()] = {iv.get()};
  for (auto& rel : st.node().relations) {
    if (auto* s = std::get_if<schedule::SplitRelation>(&rel)) {
      roots[s->outer.get()] = roots[s->inner.get()] = roots.at(s->parent.get());
    } else {
      auto& f = std::get<schedule::FuseRelation>(rel);
      IterVarSet u = roots.at(f.outer.get());
      u.insert(roots.at(f.inner.get()).begin(), roots.at(f.inner.get()).end());
      roots[f.fused.get()] = u;
    }
  }
  return roots;
}

inline bool provably_divides(const Expr& extent, const Expr& by) {
  const int64_t *e = ir::as_const_int(extent), *b = ir::as_const_int(by);
  if (e && b) return *e % *b == 0;
  return extent.same_as(by);
}

// A split that is partitioned into full tiles plus a tail instead of being guarded.
struct Partition {
  const ir::IterVarNode* outer;
  const ir::IterVarNode* inner;
  const ir::IterVarNode* root;
  Expr root_extent, factor;
};

inline Stmt guarded(const Expr& cond, Stmt s) { return cond.defined() ? ir::IfThenElse::make(cond, std::move(s)) : s; }
inline Expr conj(const Expr& a, const Expr& b) { return !a.defined() ? b : !b.defined() ? a : (a && b); }

// Builds the nest of one stage. `attach(iv, inner, ctx)` wraps the body of the loop of leaf `iv`
// with the nests of the stages computed at that loop.
class StageNestBuilder {
 public:
  // Where a nest is being built: which root axes still need guards, what a partition's tail
  // fixed (the outer loop's value, the inner loop's extent and kind), which loops are open,
  // and whether stages attached to loops go in here (not in a reduction's init nest).
  struct Ctx {
    IterVarSet guard_roots;
    std::unordered_map<const ir::IterVarNode*, Expr> fixed, extent;
    IterVarSet serial;
    IterVarSet bound;
    bool attachments = true;
    int64_t auto_unroll = 0;  // innermost enclosing auto_unroll_max_step pragma
  };
  using AttachFn = std::function<Stmt(const IterVar&, Stmt, const Ctx&)>;

  StageNestBuilder(const schedule::Stage& st, const Bounds& bounds, AttachFn attach)
      : st_(st), ranges_(bounds.ranges), edges_(bounds.edge_guards), attach_(std::move(attach)) {
    const RangeMap& ranges = bounds.ranges;
    auto roots = root_sets(st);
    for (auto& root : st.node().root_iter_vars)
      if (edges_.count(root.get())) guarded_.insert(root.get());
    for (auto& leaf : st.leaf_iter_vars())
      for (auto* r : roots.at(leaf.get())) leaves_of_root_[r].push_back(leaf.get());
    // A root axis needs a guard when some split under it may overshoot its extent.
    std::unordered_map<const ir::IterVarNode*, int> overshooting_splits;
    for (auto& rel : st.node().relations) {
      auto* s = std::get_if<schedule::SplitRelation>(&rel);
      if (!s) continue;
      const Expr& ext = ranges.at(s->parent.get()).extent;
      bool exact = s->factor.defined() ? provably_divides(ext, s->factor) : provably_divides(ext, s->nparts);
      if (exact) continue;
      for (auto* r : roots.at(s->parent.get())) {
        guarded_.insert(r);
        overshoot_.insert(r);
        ++overshooting_splits[r];
      }
    }
    // Partition the splits of a root axis whose inner loop wants vector or unrolled code.
    auto leaf_pos = [&](const IterVar& iv) {
      auto& l = st.leaf_iter_vars();
      for (size_t p = 0; p < l.size(); ++p)
        if (l[p].same_as(iv)) return long(p);
      return -1L;
    };
    for (auto& rel : st.node().relations) {
      auto* s = std::get_if<schedule::SplitRelation>(&rel);
      if (!s || !s->factor.defined() || !ir::as_const_int(s->factor)) continue;
      const ir::IterVarNode* root = s->parent.get();
      bool is_root = roots.at(root).size() == 1 && roots.at(root).count(root);
      if (!is_root || !guarded_.count(root) || overshooting_splits[root] != 1 || edges_.count(root)) continue;
      auto* a = st.attr(s->inner);
      if (!a || (a->kind != ir::ForKind::vectorized && a->kind != ir::ForKind::unrolled)) continue;
      long po = leaf_pos(s->outer), pi = leaf_pos(s->inner);
      if (po < 0 || pi < 0 || po > pi) continue;
      partitions_.push_back({s->outer.get(), s->inner.get(), root, ranges.at(root).extent, s->factor});
    }
  }

  Ctx root_ctx() const { return Ctx{guarded_, {}, {}, {}, {}, true, 0}; }

  // Loops over `leaves` (a subsequence of the stage's leaves) around `make_body(ctx)`.
  template <class MakeBody>
  Stmt build(const std::vector<IterVar>& leaves, const Ctx& ctx, MakeBody&& make_body) {
    return build_at(leaves, 0, ctx, make_body);
  }

  // The value of every iter var (root axes included) inside the innermost loop.
  Values values(const Ctx& ctx) const {
    Values value;
    for (auto& iv : st_.leaf_iter_vars()) {
      auto f = ctx.fixed.find(iv.get());
      value[iv.get()] = f != ctx.fixed.end() ? f->second : leaf_value(iv, ranges_);
    }
    return pass_up(st_, ranges_, std::move(value));
  }

  // The conjunction of the guards of the still-guarded roots of kind `only`.
  Expr guard(const Ctx& ctx, const Values& value, ir::IterKind only) const {
    Expr g;
    for (auto& root : st_.node().root_iter_vars)
      if (ctx.guard_roots.count(root.get()) && root->kind == only) g = conj(g, root_condition(root.get(), value));
    return g;
  }

  // A root axis stays inside its range (split overshoot) and inside the tensor (edge guard).
  Expr root_condition(const ir::IterVarNode* root, const Values& value) const {
    const ir::Range& r = ranges_.at(root);
    const Expr& v = value.at(root);
    Expr c = overshoot_.count(root) ? (v < r.min + r.extent) : Expr();
    auto e = edges_.find(root);
    if (e == edges_.end()) return c;
    if (e->second.lower) c = conj(c, v >= 0);
    if (e->second.upper.defined()) c = conj(c, v < e->second.upper);
    return c;
  }

 private:
  const Partition* partition_of(const IterVar& outer) const {
    for (auto& p : partitions_)
      if (p.outer == outer.get()) return &p;
    return nullptr;
  }

  // Emits each guard as soon as every loop its axis depends on is open, so it sits outside
  // the loops it does not depend on (and, in particular, outside vectorized inner loops).
  template <class MakeBody>
  Stmt build_at(const std::vector<IterVar>& leaves, size_t pos, const Ctx& outer, MakeBody& make_body) {
    Ctx ctx = outer;
    std::vector<const ir::IterVarNode*> taken;
    for (auto& root : st_.node().root_iter_vars) {
      if (!ctx.guard_roots.count(root.get())) continue;
      auto& deps = leaves_of_root_[root.get()];
      if (std::all_of(deps.begin(), deps.end(), [&](auto* l) { return ctx.bound.count(l) || ctx.fixed.count(l); }))
        taken.push_back(root.get());
    }
    Expr ready;
    if (!taken.empty()) {
      Values value = values(ctx);
      for (auto* r : taken) {
        ready = conj(ready, root_condition(r, value));
        ctx.guard_roots.erase(r);
      }
    }
    return guarded(ready, build_loop(leaves, pos, ctx, make_body));
  }

  // The product of the constant extents of leaves[pos..], or -1 if one is not constant.
  int64_t nest_steps(const std::vector<IterVar>& leaves, size_t pos, const Ctx& ctx) const {
    int64_t steps = 1;
    for (size_t p = pos; p < leaves.size(); ++p) {
      if (ctx.fixed.count(leaves[p].get())) continue;
      auto e = ctx.extent.find(leaves[p].get());
      const int64_t* c = ir::as_const_int(e != ctx.extent.end() ? e->second : ranges_.at(leaves[p].get()).extent);
      if (!c) return -1;
      steps *= *c;
    }
    return steps;
  }

  template <class MakeBody>
  Stmt build_loop(const std::vector<IterVar>& leaves, size_t pos, Ctx& ctx, MakeBody& make_body) {
    if (pos == leaves.size()) return make_body(ctx);
    const IterVar& iv = leaves[pos];
    auto with_attachments = [&](Stmt inner, const Ctx& c) { return c.attachments ? attach_(iv, std::move(inner), c) : inner; };
    if (ctx.fixed.count(iv.get())) return with_attachments(build_at(leaves, pos + 1, ctx, make_body), ctx);
    auto* a = st_.attr(iv);
    ir::ForKind kind = a && !ctx.serial.count(iv.get()) ? a->kind : ir::ForKind::serial;
    if (kind == ir::ForKind::serial && ctx.auto_unroll > 0) {
      int64_t steps = nest_steps(leaves, pos, ctx);
      if (steps >= 0 && steps <= ctx.auto_unroll) kind = ir::ForKind::unrolled;
    }
    if (a && a->auto_unroll_max_step > 0) ctx.auto_unroll = a->auto_unroll_max_step;
    std::string tag = a ? a->thread_tag : std::string();
    const Partition* part = partition_of(iv);
    if (part && ctx.guard_roots.count(part->root)) {
      const int64_t* ext = ir::as_const_int(part->root_extent);
      int64_t f = *ir::as_const_int(part->factor);
      Expr full_tiles = ext ? Expr(*ext / f) : part->root_extent / part->factor;
      Ctx main = ctx, tail = ctx;
      main.guard_roots.erase(part->root);
      tail.guard_roots.erase(part->root);
      tail.fixed[iv.get()] = full_tiles;
      tail.extent[part->inner] = ext ? Expr(*ext % f) : part->root_extent - full_tiles * part->factor;
      tail.serial.insert(part->inner);
      main.bound.insert(iv.get());
      Stmt main_loop = ir::For::make(iv.var(), Expr(int64_t(0)), full_tiles, kind,
                                     with_attachments(build_at(leaves, pos + 1, main, make_body), main), tag);
      // The tail runs once with the outer loop's variable fixed: the attached stages see it too.
      ir::VarMap fixed{{iv.var(), full_tiles}};
      Stmt tail_body = ir::substitute(with_attachments(build_at(leaves, pos + 1, tail, make_body), tail), fixed);
      return ir::Seq::make({main_loop, tail_body});
    }
    auto ext_it = ctx.extent.find(iv.get());
    Expr extent = ext_it != ctx.extent.end() ? ext_it->second : ranges_.at(iv.get()).extent;
    ctx.bound.insert(iv.get());
    return ir::For::make(iv.var(), Expr(int64_t(0)), extent, kind,
                         with_attachments(build_at(leaves, pos + 1, ctx, make_body), ctx), tag);
  }

  const schedule::Stage& st_;
  const RangeMap& ranges_;
  const std::unordered_map<const ir::IterVarNode*, EdgeGuard>& edges_;
  AttachFn attach_;
  IterVarSet guarded_;    // roots needing any guard
  IterVarSet overshoot_;  // roots a non-divisible split may push past their range
  std::unordered_map<const ir::IterVarNode*, std::vector<const ir::IterVarNode*>> leaves_of_root_;
  std::vector<Partition> partitions_;
};

inline Expr combine(ir::Combiner c, Expr acc, Expr x) {
  switch (c) {
    case ir::Combiner::sum: return acc + x;
    case ir::Combiner::prod: return acc * x;
    case ir::Combiner::min: return ir::min(acc, x);
    case ir::Combiner::max: return ir::max(acc, x);
  }
  return acc;
}

// Lowers every stage into nests, placing attached stages inside their consumers' loops.
class NestLowering {
 public:
  NestLowering(const schedule::Schedule& sch, const BodyMap& bodies, const Bounds& bounds,
               const std::vector<te::Tensor>& args)
      : sch_(sch), bodies_(bodies), bounds_(bounds), args_(args) {
    for (auto& st : sch.stages()) {
      const auto& n = st.node();
      bool is_arg = std::any_of(args.begin(), args.end(), [&](const te::Tensor& a) { return a.same_as(st.tensor()); });
      if (is_arg && n.attach != schedule::AttachKind::root)
        throw UserError("nnvm.lower.arg_not_root",
                        str_cat("tensor ", st.name(), " is a kernel argument, so it must be computed whole at the root, "
                                                     "not inlined or computed at another stage's loop"),
                        st.ctx());
      if (n.attach == schedule::AttachKind::at) attached_[n.attach_iv.get()].push_back(st);
    }
  }

  Stmt lower_all() {
    std::vector<Stmt> nests;
    std::vector<schedule::Stage> realized;
    for (auto& st : sch_.stages()) {
      if (st.node().attach != schedule::AttachKind::root) continue;
      nests.push_back(stage_nest(st));
      if (!is_arg(st)) realized.push_back(st);
    }
    Stmt body = ir::Seq::make(nests);
    for (auto it = realized.rbegin(); it != realized.rend(); ++it) body = realize(*it, body);
    for (auto& [iv, stages] : attached_)
      for (auto& st : stages)
        if (!placed_.count(&st.node()))
          throw UserError("nnvm.schedule.compute_at_unused_loop",
                          str_cat("stage ", st.name(), " is computed at loop ", st.node().attach_iv.name(),
                                  ", which is no longer a loop of its consumer (split or fused afterwards)"),
                          st.ctx());
    return body;
  }

 private:
  bool is_arg(const schedule::Stage& st) const {
    return std::any_of(args_.begin(), args_.end(), [&](const te::Tensor& a) { return a.same_as(st.tensor()); });
  }
  Stmt realize(const schedule::Stage& st, Stmt body) const {
    return ir::make_stmt<ir::ProducerRealize>(st.tensor().node_ptr(), bounds_.realize.at(&st.node()), st.node().scope,
                                              std::move(body));
  }

  // Attached stages of loop `iv`, computed first in its body and stored around it.
  Stmt attach(const IterVar& iv, Stmt inner) {
    auto it = attached_.find(iv.get());
    if (it == attached_.end()) return inner;
    std::vector<Stmt> seq;
    for (auto& st : it->second) {
      placed_.insert(&st.node());
      seq.push_back(stage_nest(st));
    }
    seq.push_back(inner);
    Stmt body = ir::Seq::make(seq);
    for (auto s = it->second.rbegin(); s != it->second.rend(); ++s) body = realize(*s, body);
    return body;
  }

  // The loop nest of one stage. A reduction becomes, inside the loops that enclose its first
  // reduction loop, an init nest over the remaining data-parallel loops followed by the update.
  Stmt stage_nest(const schedule::Stage& st) {
    using Ctx = StageNestBuilder::Ctx;
    const schedule::StageNode& n = st.node();
    const Expr& body = bodies_.at(&n);
    StageNestBuilder builder(st, bounds_, [this](const IterVar& iv, Stmt inner, const Ctx&) { return attach(iv, std::move(inner)); });
    auto substitute_axes = [&](const Expr& e, const Values& value) {
      ir::VarMap m;
      for (auto& iv : n.root_iter_vars) m[iv.var()] = value.at(iv.get());
      return ir::substitute(e, m);
    };
    auto out_indices = [&](const Values& value) {
      std::vector<Expr> idx;
      for (auto& iv : n.axis) idx.push_back(value.at(iv.get()));
      return idx;
    };
    const auto& tensor = st.tensor().node_ptr();
    const auto& leaves = st.leaf_iter_vars();
    const ir::Reduce* red = body.as<ir::Reduce>();
    if (!red) {
      return builder.build(leaves, builder.root_ctx(), [&](const Ctx& ctx) {
        auto value = builder.values(ctx);
        Stmt store = ir::make_stmt<ir::ProducerStore>(tensor, substitute_axes(body, value), out_indices(value));
        return guarded(builder.guard(ctx, value, ir::IterKind::data_par), store);
      });
    }
    auto is_reduce = [](const IterVar& iv) { return iv->kind == ir::IterKind::reduce; };
    auto first = std::find_if(leaves.begin(), leaves.end(), is_reduce);
    std::vector<IterVar> prefix(leaves.begin(), first), rest(first, leaves.end()), init_leaves;
    std::copy_if(rest.begin(), rest.end(), std::back_inserter(init_leaves), [&](auto& iv) { return !is_reduce(iv); });
    return builder.build(prefix, builder.root_ctx(), [&](const Ctx& outer) {
      Ctx init_ctx = outer;
      init_ctx.attachments = false;  // attached producers feed the update, not the init
      Stmt init = builder.build(init_leaves, init_ctx, [&](const Ctx& ctx) {
        auto value = builder.values(ctx);
        Stmt s = ir::make_stmt<ir::ProducerStore>(tensor, substitute_axes(red->init, value), out_indices(value));
        return guarded(builder.guard(ctx, value, ir::IterKind::data_par), s);
      });
      Stmt update = builder.build(rest, outer, [&](const Ctx& ctx) {
        auto value = builder.values(ctx);
        auto idx = out_indices(value);
        Expr acc = ir::make_expr<ir::ProducerLoad>(red->dtype, tensor, idx);
        Stmt s = ir::make_stmt<ir::ProducerStore>(tensor, combine(red->combiner, acc, substitute_axes(red->source, value)), idx);
        Expr cond = conj(builder.guard(ctx, value, ir::IterKind::data_par), builder.guard(ctx, value, ir::IterKind::reduce));
        if (red->condition.defined()) cond = conj(cond, substitute_axes(red->condition, value));
        return guarded(cond, s);
      });
      return ir::Seq::make({init, update});
    });
  }

  const schedule::Schedule& sch_;
  const BodyMap& bodies_;
  const Bounds& bounds_;
  const std::vector<te::Tensor>& args_;
  std::unordered_map<const ir::IterVarNode*, std::vector<schedule::Stage>> attached_;
  std::unordered_set<const schedule::StageNode*> placed_;
};

}  // namespace detail

// Requires: every tensor in `args` is a placeholder or a root stage of `sch`.
// Ensures: one nest per root stage in producer order, attached stages inside their consumers'
// loops; intermediates (stages not in args) realized where they are computed.
inline Stmt schedule_ops(const schedule::Schedule& sch, const BodyMap& bodies, const Bounds& bounds,
                         const std::vector<te::Tensor>& args) {
  return detail::NestLowering(sch, bodies, bounds, args).lower_all();
}

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/schedule_ops.hpp
// begin nnvm/lower/storage_flatten.hpp
// Storage flattening: multi-dimensional tensor accesses become flat buffer accesses.
// Requires: output of schedule_ops. Ensures: no ProducerStore/ProducerLoad/ProducerRealize;
// argument tensors read and written through the given param buffers; realized intermediates
// become Allocates of the realized region, indexed relative to the region's min.

#include <unordered_map>


NNVM_BEGIN_NAMESPACE
namespace lower {

// Row-major flat offset of `indices` within a region of `extents` starting at `mins`.
inline ir::Expr flat_index(const std::vector<ir::Expr>& indices, const std::vector<ir::Expr>& mins,
                           const std::vector<ir::Expr>& extents) {
  ir::Expr offset(int64_t(0));
  for (size_t d = 0; d < indices.size(); ++d) {
    ir::Expr i = mins.empty() ? indices[d] : indices[d] - mins[d];
    offset = d == 0 ? i : offset * extents[d] + i;
  }
  return offset;
}

class StorageFlattener : public ir::IRMutator {
 public:
  using ArgMap = std::unordered_map<const ir::ProducerNode*, ir::Buffer>;
  explicit StorageFlattener(ArgMap args) : args_(std::move(args)) {}
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  struct Region {
    ir::Buffer buffer;
    std::vector<ir::Expr> mins, extents;
  };

  const Region& region(const ir::ProducerNode* t) {
    auto it = regions_.find(t);
    if (it != regions_.end()) return it->second;
    auto a = args_.find(t);
    if (a == args_.end())
      throw UserError("nnvm.lower.missing_arg",
                      str_cat("tensor ", t->name, " is read but is neither a kernel argument nor computed by the schedule; "
                                                 "pass it in the argument list"));
    return regions_[t] = Region{a->second, {}, a->second->shape};
  }

  ir::Expr visit(const ir::ProducerLoad* op, const ir::Expr&) override {
    std::vector<ir::Expr> idx;
    for (auto& i : op->indices) idx.push_back(mutate(i));
    const Region& r = region(op->tensor.get());
    return ir::Load::make(r.buffer, flat_index(idx, r.mins, r.extents));
  }
  ir::Stmt visit(const ir::ProducerStore* op, const ir::Stmt&) override {
    std::vector<ir::Expr> idx;
    for (auto& i : op->indices) idx.push_back(mutate(i));
    const Region& r = region(op->tensor.get());
    return ir::Store::make(r.buffer, mutate(op->value), flat_index(idx, r.mins, r.extents));
  }
  ir::Stmt visit(const ir::ProducerRealize* op, const ir::Stmt&) override {
    std::vector<ir::Expr> mins, extents;
    for (auto& b : op->bounds) {
      mins.push_back(mutate(b.min));
      extents.push_back(mutate(b.extent));
    }
    ir::Buffer buf(op->tensor->name, op->tensor->dtype, extents, op->scope);
    regions_[op->tensor.get()] = Region{buf, mins, extents};
    ir::Stmt body = mutate(op->body);
    regions_.erase(op->tensor.get());
    return ir::Allocate::make(buf, body);
  }

 private:
  ArgMap args_;
  std::unordered_map<const ir::ProducerNode*, Region> regions_;
};

inline ir::Stmt storage_flatten(const ir::Stmt& s, const StorageFlattener::ArgMap& args) {
  return StorageFlattener(args).mutate(s);
}

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/storage_flatten.hpp
// begin nnvm/lower/unroll.hpp
// Unrolling: an `unrolled` loop of constant extent becomes that many copies of its body, each
// with the loop variable replaced by its value.
// Requires: flattened storage. Ensures: no `unrolled` loop is left.


NNVM_BEGIN_NAMESPACE
namespace lower {

// Beyond this many copies unrolling only bloats code; the schedule almost certainly meant
// to unroll an inner loop.
inline constexpr int64_t kMaxUnrollExtent = 256;

class Unroller : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    ir::Stmt inner = ir::IRMutator::visit(op, s);
    auto* f = inner.as<ir::For>();
    if (!f || f->for_kind != ir::ForKind::unrolled) return inner;
    const int64_t* ext = ir::as_const_int(f->extent);
    if (!ext)
      throw UserError("nnvm.schedule.unroll_extent",
                      str_cat("unrolled loop ", f->loop_var.name(),
                              " has a non-constant extent; split it by a constant factor and unroll the inner loop"));
    if (*ext > kMaxUnrollExtent)
      throw UserError("nnvm.schedule.unroll_extent",
                      str_cat("unrolled loop ", f->loop_var.name(), " has ", *ext, " iterations (at most ",
                              kMaxUnrollExtent, "); split it and unroll the inner loop"));
    std::vector<ir::Stmt> copies;
    for (int64_t k = 0; k < *ext; ++k) copies.push_back(ir::substitute(f->body, f->loop_var, f->min + k));
    return ir::Seq::make(copies);
  }
};

inline ir::Stmt unroll_loops(const ir::Stmt& s) { return Unroller().mutate(s); }

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/unroll.hpp
// begin nnvm/lower/vectorize.hpp
// Vectorization: a `vectorized` loop of constant extent becomes one pass of vector code in
// which the loop variable is ramp(min, 1, extent).
// Requires: flattened storage. Ensures: no `vectorized` loop is left. A loop whose body cannot
// become vector code without changing its meaning (a store to one address from every lane, a
// condition that differs per lane around a store or a load, a nested vector loop, an
// allocation) stays a serial loop, which is always correct.


NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {

inline bool contains_load(const ir::Expr& e) {
  struct F : ir::IRVisitor {
    bool found = false;
    void visit(const ir::Load*) override { found = true; }
  } f;
  f.visit_expr(e);
  return f.found;
}

// The first select in `e` (outermost first) with a load on a side: one that guards a load.
inline const ir::Select* guarding_select(const ir::Expr& e) {
  struct F : ir::IRVisitor {
    const ir::Select* found = nullptr;
    void visit(const ir::Select* op) override {
      if (found) return;
      if (contains_load(op->true_value) || contains_load(op->false_value)) {
        found = op;
        return;
      }
      ir::IRVisitor::visit(op);
    }
  } f;
  f.visit_expr(e);
  return f.found;
}

// `e` with the node `target` replaced by `with`.
inline ir::Expr replace_node(const ir::Expr& e, const ir::Select* target, const ir::Expr& with) {
  struct R : ir::IRMutator {
    const ir::Select* target;
    ir::Expr with;
    using ir::IRMutator::visit;
    ir::Expr visit(const ir::Select* op, const ir::Expr& x) override {
      return op == target ? with : ir::IRMutator::visit(op, x);
    }
  } r;
  r.target = target;
  r.with = with;
  return r.mutate(e);
}

// Widens the body of one vectorized loop; `failed` is set when the result would be wrong.
class Widen : public ir::IRMutator {
 public:
  Widen(const ir::Var& var, ir::Expr ramp) : var_(var), ramp_(std::move(ramp)) {}
  bool failed = false;
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Expr visit(const ir::VarNode* op, const ir::Expr& e) override {
    if (op == var_.get()) return ramp_;
    auto it = renamed_.find(op);
    return it == renamed_.end() ? e : it->second;
  }
  ir::Expr visit(const ir::Select* op, const ir::Expr& e) override {
    // A vector select evaluates both sides (and a condition the same for every lane becomes a
    // vector one when the sides are vectors), so a guarded load could read out of bounds. The
    // store of such a select becomes an if/else (visit Store); anywhere else the loop stays serial.
    if (contains_load(op->true_value) || contains_load(op->false_value)) {
      ir::Expr c = mutate(op->condition), t = mutate(op->true_value), f = mutate(op->false_value);
      if (c.dtype().lanes > 1 || t.dtype().lanes > 1 || f.dtype().lanes > 1) {
        failed = true;
        return e;
      }
    }
    return ir::IRMutator::visit(op, e);
  }
  ir::Expr visit(const ir::Let* op, const ir::Expr& e) override {
    ir::Expr v = mutate(op->value);
    if (v.dtype().lanes == 1) return ir::IRMutator::visit(op, e);
    ir::Var wide(op->var.name(), v.dtype());
    renamed_[op->var.get()] = wide;
    ir::Expr b = mutate(op->body);
    return ir::Let::make(wide, v, b);
  }
  ir::Stmt visit(const ir::LetStmt* op, const ir::Stmt& s) override {
    ir::Expr v = mutate(op->value);
    if (v.dtype().lanes == 1) return ir::IRMutator::visit(op, s);
    ir::Var wide(op->var.name(), v.dtype());
    renamed_[op->var.get()] = wide;
    return ir::LetStmt::make(wide, v, mutate(op->body));
  }
  ir::Stmt visit(const ir::Store* op, const ir::Stmt& s) override {
    // buf[i] = f(select(c, a, b)) with loads in a or b and c the same for every lane (a
    // zero-padded copy, or a convolution reading its input through the padding's select: the
    // condition is on outer axes): if (c) buf[i] = f(a); else buf[i] = f(b). Up to three such
    // selects per store (eight stores); more stay serial.
    if (const ir::Select* sel = guarding_select(op->value); sel && split_depth_ < 3) {
      ir::Expr c = mutate(sel->condition);
      if (c.dtype().lanes == 1) {
        ++split_depth_;
        auto side = [&](const ir::Expr& v) {
          ir::Stmt st = ir::Store::make(op->buffer, replace_node(op->value, sel, v), op->index);
          return mutate(st);
        };
        ir::Stmt t = side(sel->true_value), f = side(sel->false_value);
        --split_depth_;
        return ir::IfThenElse::make(c, t, f);
      }
    }
    return widen_store(op, op->value, s);
  }
  // The vector form of `op` storing `value` instead of its own value.
  ir::Stmt widen_store(const ir::Store* op, const ir::Expr& value, const ir::Stmt& s) {
    ir::Expr i = mutate(op->index), v = mutate(value);
    // Every lane would write the same address: a loop-carried dependence.
    if (i.dtype().lanes == 1) {
      failed = true;
      return s;
    }
    if (v.dtype().lanes == 1) v = ir::Broadcast::make(v, i.dtype().lanes);
    return ir::Store::make(op->buffer, v, i);
  }
  ir::Stmt visit(const ir::IfThenElse* op, const ir::Stmt& s) override {
    ir::Expr c = mutate(op->condition);
    if (c.dtype().lanes > 1) {
      failed = true;
      return s;
    }
    return ir::IRMutator::visit(op, s);
  }
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    if (ir::uses_var(op->min, var_) || ir::uses_var(op->extent, var_) || op->for_kind == ir::ForKind::parallel) {
      failed = true;
      return s;
    }
    return ir::IRMutator::visit(op, s);
  }
  ir::Stmt visit(const ir::Allocate*, const ir::Stmt& s) override {
    failed = true;
    return s;
  }

 private:
  const ir::Var& var_;
  ir::Expr ramp_;
  std::unordered_map<const ir::VarNode*, ir::Expr> renamed_;
  int split_depth_ = 0;  // selects split into if/else around the store being widened
};

class Vectorizer : public ir::IRMutator {
 public:
  using ir::IRMutator::mutate;

 protected:
  using ir::IRMutator::visit;
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    ir::Stmt inner = ir::IRMutator::visit(op, s);  // innermost loops first
    auto* f = inner.as<ir::For>();
    if (!f || f->for_kind != ir::ForKind::vectorized) return inner;
    const int64_t* ext = ir::as_const_int(f->extent);
    if (!ext)
      throw UserError("nnvm.schedule.vectorize_extent",
                      str_cat("vectorized loop ", f->loop_var.name(),
                              " has a non-constant extent; split it by a constant factor and vectorize the inner loop"));
    auto serial = [&] { return ir::For::make(f->loop_var, f->min, f->extent, ir::ForKind::serial, f->body); };
    // GCC/Clang vector types need a power-of-two lane count; a vector wider than 64 lanes is
    // certainly a scheduling mistake, and one lane is just a loop.
    if (*ext < 2 || *ext > 64 || (*ext & (*ext - 1)) != 0) return serial();
    if (contains_vector_code(f->body)) return serial();
    Widen widen(f->loop_var, ir::Ramp::make(f->min, ir::Expr(int64_t(1)), int(*ext)));
    ir::Stmt body = widen.mutate(f->body);
    if (widen.failed) return serial();
    return body;
  }

 private:
  static bool contains_vector_code(const ir::Stmt& s) {
    struct F : ir::IRVisitor {
      bool found = false;
      void visit_expr(const ir::Expr& e) override {
        if (e.defined() && e.dtype().lanes > 1) found = true;
        else ir::IRVisitor::visit_expr(e);
      }
    } f;
    f.visit_stmt(s);
    return f.found;
  }
};

}  // namespace detail

inline ir::Stmt vectorize_loops(const ir::Stmt& s) { return detail::Vectorizer().mutate(s); }

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/vectorize.hpp
// begin nnvm/target/family.hpp
// The two independent choices a target makes, as types: the family of device the code runs on
// (which decides the schedules and the lowering passes) and the emitter that prints it (which
// decides the source language or object format). Nothing in nnvm dispatches on a target's
// spelling; `--target` strings are parsed into these once (target/parse.hpp).

#include <cstdint>


NNVM_BEGIN_NAMESPACE
namespace target {

// Where the code runs. Schedules and lowering passes are chosen per family.
enum class Family : uint8_t {
  cpu,   // a host CPU with threads and SIMD registers (x86, Arm)
  gpu,   // a GPU: blocks of threads, shared memory, a host/device split
  mcu,   // a microcontroller: one thread, static memory, small code
  wasm,  // WebAssembly (the browser, node): one thread, 128-bit SIMD at most
};
inline constexpr Family all_families[] = {Family::cpu, Family::gpu, Family::mcu, Family::wasm};

inline const char* family_name(Family f) {
  switch (f) {
    case Family::cpu: return "cpu";
    case Family::gpu: return "gpu";
    case Family::mcu: return "mcu";
    case Family::wasm: return "wasm";
  }
  return "?";
}

// What prints the lowered IR, named as `--target` spells it.
enum class Emitter : uint8_t {
  c,             // C with GCC vector extensions, JIT-compiled by the host C compiler or saved
  llvm,          // LLVM IR, JIT-compiled by ORC or written as an object file
  cuda,          // CUDA C++
  opencl,        // OpenCL C 1.2
  metal,         // Metal Shading Language
  c_standalone,  // self-contained C99 for microcontrollers: no runtime, no threads, no malloc
  wasm,          // WebAssembly
};
inline constexpr Emitter all_emitters[] = {Emitter::c,     Emitter::llvm,         Emitter::cuda, Emitter::opencl,
                                           Emitter::metal, Emitter::c_standalone, Emitter::wasm};

inline const char* emitter_name(Emitter e) {
  switch (e) {
    case Emitter::c: return "c";
    case Emitter::llvm: return "llvm";
    case Emitter::cuda: return "cuda";
    case Emitter::opencl: return "opencl";
    case Emitter::metal: return "metal";
    case Emitter::c_standalone: return "c-standalone";
    case Emitter::wasm: return "wasm";
  }
  return "?";
}

// The family an emitter's code runs on when the target names no other.
inline Family default_family(Emitter e) {
  switch (e) {
    case Emitter::c:
    case Emitter::llvm: return Family::cpu;
    case Emitter::cuda:
    case Emitter::opencl:
    case Emitter::metal: return Family::gpu;
    case Emitter::c_standalone: return Family::mcu;
    case Emitter::wasm: return Family::wasm;
  }
  return Family::cpu;
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/family.hpp
// begin nnvm/target/target.hpp
// What code is generated for, as a typed value: the device family (schedules and lowering passes
// are chosen by it), the emitter (chosen separately), and the device facts schedules need: SIMD
// registers for CPUs, the thread-block limits of a GPU. Parsed from `--target` strings in one
// place (target/parse.hpp); nothing dispatches on a spelling.

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>


NNVM_BEGIN_NAMESPACE
namespace target {

// The limits a GPU schedule sizes its blocks by. Defaults are the portable minimums of the API
// the emitter targets (gpu_defaults); a device query may raise them.
struct GpuDevice {
  std::string arch;                  // CUDA compute capability as nvcc spells it ("sm_90"); else empty
  int warp_size = 32;                // threads that run in lockstep (a warp, wavefront or SIMD-group)
  int max_threads_per_block = 1024;  // threads in one block (work-group, threadgroup)
  int64_t shared_memory_bytes = 48 * 1024;  // shared (local, threadgroup) memory one block may use
};

// What schedules favour where the two part ways (nnvmc --opt-for): speed, or little RAM and
// small code. Microcontroller recipes read it (ops/schedule_mcu.hpp); faster families ignore it.
enum class OptFor : uint8_t { speed, size };

struct Target {
  Family family = Family::cpu;
  Emitter emitter = Emitter::c;
  // CPU, MCU and WASM: the SIMD registers. Width in bits: 128 (SSE, NEON, WASM SIMD), 256 (AVX2),
  // 512 (AVX-512); 0 for none (vector schedules then use one lane).
  int vector_bits = 256;
  // How many of them: register tiles (lesson 1, dense, conv) hold at most this many accumulators.
  int vector_registers = 16;
  // The CPU the code is for, in GCC's -march / LLVM's -mcpu spelling ("x86-64-v3", "znver3",
  // "cortex-m4"); empty means this machine ("native"). Emitters pass it to the compiler, and
  // for_cpu() derives the registers from it, so schedules and instructions agree.
  std::string cpu;
  GpuDevice gpu;  // Family::gpu only
  OptFor opt_for = OptFor::speed;

  // This target with SIMD registers `bits` wide, and as many of them as an ISA with such registers
  // has, so register tiles stay consistent with the width (a bench or test that sweeps widths).
  Target with_vector_bits(int bits) const {
    Target t = *this;
    t.vector_bits = bits;
    t.vector_registers = registers_for(bits);
    return t;
  }

  // This machine, for code JIT-compiled to run here through `emitter`, with the widest SIMD
  // registers the CPU has (x86: 512 with AVX-512F, 256 with AVX2, else 128; Arm: 128). A
  // default-constructed Target instead assumes 256, whatever the machine.
  static Target host(Emitter emitter = Emitter::c) {
    Target t;
    t.emitter = emitter;
    t.vector_bits = host_vector_bits();
    t.vector_registers = registers_for(t.vector_bits);
    return t;
  }
  static int host_vector_bits() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return 512;
    return __builtin_cpu_supports("avx2") ? 256 : 128;
#elif defined(__aarch64__) || defined(__arm__)
    return 128;
#else
    return 256;
#endif
  }

  // Code for `cpu` (empty or "native": this machine) through `emitter`: the registers are those
  // of that CPU, so default schedules pick its lanes and register tiles. An unknown CPU name is
  // an error that lists the known ones.
  static Target for_cpu(Emitter emitter, const std::string& cpu) {
    if (cpu.empty() || cpu == "native") return host(emitter);
    Target t;
    t.emitter = emitter;
    t.cpu = cpu;
    t.vector_bits = cpu_vector_bits(cpu);
    t.vector_registers = registers_for(t.vector_bits);
    return t;
  }
  // SIMD register width of a named CPU; throws for a name not in the table.
  static int cpu_vector_bits(const std::string& cpu) {
    struct Row { const char* name; int bits; };
    static constexpr Row rows[] = {
        {"x86-64", 128},          {"x86-64-v2", 128},      {"nehalem", 128},        {"westmere", 128},
        {"sandybridge", 128},     {"ivybridge", 128},      {"btver2", 128},         {"x86-64-v3", 256},
        {"haswell", 256},         {"broadwell", 256},      {"skylake", 256},        {"alderlake", 256},
        {"znver1", 256},          {"znver2", 256},         {"znver3", 256},         {"x86-64-v4", 512},
        {"skylake-avx512", 512},  {"cascadelake", 512},    {"cooperlake", 512},     {"icelake-client", 512},
        {"icelake-server", 512},  {"tigerlake", 512},      {"sapphirerapids", 512}, {"znver4", 512},
        {"generic", 128},         {"armv8-a", 128},        {"neoverse-n1", 128},    {"cortex-a72", 128},
        {"apple-m1", 128}};
    std::string known;
    for (auto& r : rows) {
      if (cpu == r.name) return r.bits;
      known += (known.empty() ? "" : ", ") + std::string(r.name);
    }
    throw UserError("nnvm.target.cpu", "unknown CPU '" + cpu + "'; known: native, " + known);
  }
  // Vector registers of an ISA with registers this wide: AVX-512 has 32, SSE and AVX2 16
  // (x86); NEON has 32.
  static int registers_for(int vector_bits) {
#if defined(__x86_64__) || defined(__i386__)
    return vector_bits >= 512 ? 32 : 16;
#else
    return 32;
#endif
  }

  // Code for a GPU through `emitter` (cuda, opencl or metal), with the portable limits of its
  // API: CUDA 1024 threads and 48 KiB shared memory per block, warps of 32; OpenCL 1.2 256
  // work-items and 32 KiB local memory (the minimum a device may report), sub-groups unknown
  // (1); Metal 1024 threads, 32 KiB threadgroup memory, SIMD-groups of 32.
  static Target for_gpu(Emitter emitter, std::string arch = {}) {
    Target t;
    t.family = Family::gpu;
    t.emitter = emitter;
    t.vector_bits = 128;  // float4 loads and stores
    t.gpu.arch = std::move(arch);
    if (emitter == Emitter::opencl) t.gpu = {t.gpu.arch, 1, 256, 32 * 1024};
    if (emitter == Emitter::metal) t.gpu = {t.gpu.arch, 32, 1024, 32 * 1024};
    return t;
  }

  // Whether code for this target can run on this machine (a CPU target whose registers are no
  // wider than this CPU's); tests use it to skip running what they can only compile.
  bool runs_here() const { return family == Family::cpu && vector_bits <= host_vector_bits(); }
  // The instruction-set level code for this target uses, as benchmarks print it.
  std::string isa_name() const {
    if (family == Family::gpu) return gpu.arch.empty() ? emitter_name(emitter) : gpu.arch;
#if defined(__x86_64__) || defined(__i386__)
    return vector_bits >= 512 ? "AVX-512" : vector_bits >= 256 ? "AVX2" : "SSE4.2";
#else
    return vector_bits >= 128 ? "NEON" : "scalar";
#endif
  }

  // Elements of `t` in one SIMD register (at least 1).
  int vector_lanes(DataType t) const { return std::max(1, vector_bits / std::max(1, int(t.bits))); }
  // Whether schedules may spread loops over threads: CPUs have a thread pool; microcontrollers
  // and WebAssembly run one thread, and a GPU's threads are bound axes, not parallel loops.
  bool has_thread_pool() const { return family == Family::cpu; }
  // The family whose schedules (ops' own, fused and generic recipes) and layouts this target
  // takes. WebAssembly with SIMD128 is a CPU with 16 128-bit registers and no threads: the CPU
  // recipes, which read vector_bits, vector_registers and has_thread_pool(), fit it (their
  // parallel loops run serially in standalone C). Without SIMD it keeps its plain loops.
  Family recipe_family() const { return family == Family::wasm && vector_bits >= 128 ? Family::cpu : family; }
};

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/target.hpp

NNVM_BEGIN_NAMESPACE
namespace lower {

// What a pass may rely on in the IR it is given. Each holds from the row that ensures it
// until a row removes it.
enum class IRProperty : uint8_t {
  stages_inlined,     // no stage body reads a compute_inline'd stage (inline_stages)
  bounds_inferred,    // every loop's range and every realized region is known (infer_bounds)
  loop_nest,          // the IR is a statement of loops, not only stage bodies (schedule_ops)
  flat_buffers,       // tensors are flat buffers: Load/Store/Allocate, no Producer* node
  folded_extents,     // a loop whose extent is a constant has a literal extent (simplify)
  vectorize_pending,  // `vectorized` loops are still loops, not yet vector code
  unroll_pending,     // `unrolled` loops are still loops, not yet copies of their body
};

inline const char* property_name(IRProperty p) {
  switch (p) {
    case IRProperty::stages_inlined: return "stages_inlined";
    case IRProperty::bounds_inferred: return "bounds_inferred";
    case IRProperty::loop_nest: return "loop_nest";
    case IRProperty::flat_buffers: return "flat_buffers";
    case IRProperty::folded_extents: return "folded_extents";
    case IRProperty::vectorize_pending: return "vectorize_pending";
    case IRProperty::unroll_pending: return "unroll_pending";
  }
  return "?";
}
inline constexpr IRProperty all_properties[] = {
    IRProperty::stages_inlined, IRProperty::bounds_inferred,   IRProperty::loop_nest,     IRProperty::flat_buffers,
    IRProperty::folded_extents, IRProperty::vectorize_pending, IRProperty::unroll_pending};

// A small set of enumerators (at most 32), written as a braced list: a row's properties or families.
template <class E>
struct EnumSet {
  uint32_t bits = 0;
  constexpr EnumSet() = default;
  constexpr EnumSet(std::initializer_list<E> items) {
    for (E e : items) bits |= 1u << unsigned(e);
  }
  constexpr bool has(E e) const { return (bits >> unsigned(e)) & 1u; }
  constexpr void add(EnumSet o) { bits |= o.bits; }
  constexpr void remove(EnumSet o) { bits &= ~o.bits; }
};
using IRProperties = EnumSet<IRProperty>;
using Families = EnumSet<target::Family>;
inline constexpr Families every_family{target::Family::cpu, target::Family::gpu, target::Family::mcu,
                                       target::Family::wasm};

struct LowerState;

// One row of the lowering table.
struct LowerPass {
  std::string name;  // what NNVM_DUMP_IR, --print-ir-after and pass_ms call it
  IRProperties required, ensured, removed;
  Families families;  // the target families whose lowering runs it
  std::function<void(LowerState&)> run;
};

struct LowerOptions {
  // Called after every pass with its name and the IR it produced. Before schedule_ops builds
  // loops, that IR is each computed stage's store of its (inlined) body, inside loops over its
  // axes' ranges once infer_bounds has run.
  std::function<void(const std::string& pass, const ir::Stmt&)> on_pass;
  // When set, each pass's wall time in milliseconds is added to (*pass_ms)[pass name], summed
  // over every kernel lowered.
  std::map<std::string, double>* pass_ms = nullptr;
  // The target's SIMD register width in bits: legalize_vectors splits wider vectorized loops
  // into register-wide ones. Defaults to this machine's, where JIT-compiled kernels run;
  // graph::compile sets it from CompileOptions::target. 0 keeps vectors as scheduled.
  int vector_bits = target::Target::host_vector_bits();
  // The family of the target: lower() runs the rows that list it.
  target::Family family = target::Family::cpu;
  // The table to run instead of lower_passes() (a caller's extra pass, a test's broken one);
  // it is checked like the built-in one. Not owned.
  const std::vector<LowerPass>* passes = nullptr;
};

// What the rows read and write while one kernel is lowered.
struct LowerState {
  const schedule::Schedule& schedule;
  const std::vector<te::Tensor>& args;
  const StorageFlattener::ArgMap& arg_buffers;
  const LowerOptions& options;
  BodyMap bodies;  // from inline_stages
  Bounds bounds;   // from infer_bounds
  ir::Stmt body;   // from schedule_ops on
};

// Throws InternalError nnvm.lower.pass_order when, for some family, a row requires a property
// that the rows before it do not leave in place, when the last row leaves IR that is not
// lowered (loops over flat buffers, no vectorized or unrolled loop left), or when two rows
// share a name.
inline void check_pass_table(const std::vector<LowerPass>& passes) {
  auto names = [](IRProperties set) {
    std::string out;
    for (IRProperty p : all_properties)
      if (set.has(p)) out += (out.empty() ? "" : ", ") + std::string(property_name(p));
    return out;
  };
  for (size_t i = 0; i < passes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (passes[i].name == passes[j].name)
        throw InternalError("nnvm.lower.pass_order", str_cat("two lowering passes are named ", passes[i].name));
  for (target::Family family : target::all_families) {
    IRProperties have;
    for (auto& pass : passes) {
      if (!pass.families.has(family)) continue;
      IRProperties missing = pass.required;
      missing.remove(have);
      if (missing.bits)
        throw InternalError("nnvm.lower.pass_order",
                            str_cat("lowering pass ", pass.name, " requires ", names(missing), ", which no earlier pass for ",
                                    target::family_name(family), " ensures"));
      have.remove(pass.removed);
      have.add(pass.ensured);
    }
    IRProperties missing{IRProperty::loop_nest, IRProperty::flat_buffers};
    missing.remove(have);
    IRProperties pending{IRProperty::vectorize_pending, IRProperty::unroll_pending};
    pending.bits &= have.bits;
    if (missing.bits || pending.bits)
      throw InternalError("nnvm.lower.pass_order",
                          str_cat("the lowering passes for ", target::family_name(family), " end",
                                  missing.bits ? " without " + names(missing) : "", missing.bits && pending.bits ? " and" : "",
                                  pending.bits ? " with " + names(pending) : ""));
  }
}

// The lowering, in order. Every row runs for every family unless it says otherwise.
inline const std::vector<LowerPass>& lower_passes() {
  using P = IRProperty;
  static const std::vector<LowerPass> passes = [] {
    std::vector<LowerPass> rows{
        {"inline_stages", {}, {P::stages_inlined}, {}, every_family,
         [](LowerState& s) { s.bodies = inline_stages(s.schedule); }},
        {"infer_bounds", {P::stages_inlined}, {P::bounds_inferred}, {}, every_family,
         [](LowerState& s) { s.bounds = infer_bounds(s.schedule, s.bodies); }},
        {"schedule_ops", {P::stages_inlined, P::bounds_inferred}, {P::loop_nest, P::vectorize_pending, P::unroll_pending},
         {}, every_family, [](LowerState& s) { s.body = schedule_ops(s.schedule, s.bodies, s.bounds, s.args); }},
        {"storage_flatten", {P::loop_nest}, {P::flat_buffers}, {}, every_family,
         [](LowerState& s) { s.body = storage_flatten(s.body, s.arg_buffers); }},
        {"simplify", {P::loop_nest}, {P::folded_extents}, {}, every_family,
         [](LowerState& s) { s.body = ir::simplify(s.body); }},
        // Register-wide vectors are what a CPU-like target (host, microcontroller, WebAssembly)
        // has; a GPU's vectors are per-thread types that its emitter spells, so it keeps them.
        // The split leaves an unrolled loop, which unroll must still see.
        {"legalize_vectors",
         {P::flat_buffers, P::folded_extents, P::vectorize_pending, P::unroll_pending},
         {},
         {},
         {target::Family::cpu, target::Family::mcu, target::Family::wasm},
         [](LowerState& s) { s.body = legalize_vectors(s.body, s.options.vector_bits); }},
        {"vectorize", {P::flat_buffers, P::folded_extents}, {}, {P::vectorize_pending}, every_family,
         [](LowerState& s) { s.body = vectorize_loops(s.body); }},
        {"unroll", {P::flat_buffers, P::folded_extents}, {}, {P::unroll_pending}, every_family,
         [](LowerState& s) { s.body = unroll_loops(s.body); }},
        {"final_simplify", {P::loop_nest}, {P::folded_extents}, {}, every_family,
         [](LowerState& s) { s.body = ir::simplify(s.body); }},
    };
    check_pass_table(rows);
    return rows;
  }();
  return passes;
}

// The pass names, in order (for every family); NNVM_DUMP_IR and nnvmc --print-ir-after accept these.
inline const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (auto& pass : lower_passes()) out.push_back(pass.name);
    return out;
  }();
  return names;
}

namespace detail {
inline bool dump_requested(const std::string& pass) {
  const char* env = std::getenv("NNVM_DUMP_IR");
  if (!env || !*env) return false;
  std::stringstream ss(env);
  for (std::string item; std::getline(ss, item, ',');)
    if (item == "all" || item == pass) return true;
  return false;
}

inline bool verify_requested() {
  const char* env = std::getenv("NNVM_VERIFY_PASSES");
  return env && *env && std::string(env) != "0";
}

// The IR after a row that has built no loops yet: each computed stage's store of its body
// (inlined once stages_inlined holds), inside loops over its axes' ranges once bounds_inferred does.
inline ir::Stmt stage_view(const LowerState& s, IRProperties have) {
  std::vector<ir::Stmt> stores;
  for (auto& st : s.schedule.stages()) {
    const schedule::StageNode& n = st.node();
    if (n.attach == schedule::AttachKind::inlined) continue;
    std::vector<ir::Expr> indices;
    for (auto& iv : n.axis) indices.push_back(iv.var());
    const ir::Expr& body = have.has(IRProperty::stages_inlined) ? s.bodies.at(&n) : n.body;
    ir::Stmt store = ir::make_stmt<ir::ProducerStore>(st.tensor().node_ptr(), body, indices);
    if (have.has(IRProperty::bounds_inferred))
      for (auto iv = n.axis.rbegin(); iv != n.axis.rend(); ++iv) {
        const ir::Range& r = s.bounds.ranges.at(iv->get());
        store = ir::For::make(iv->var(), r.min, r.extent, ir::ForKind::serial, store);
      }
    stores.push_back(store);
  }
  return ir::Seq::make(stores);
}

// The symbolic values the schedule mentions (in shapes, axis ranges and bodies) that are
// neither a stage's loop variable nor let-bound. Between passes they count as sizes: whether
// each is bound by an argument's shape is a user error that lower() reports once, at the end.
inline std::vector<ir::Var> symbolic_values(const schedule::Schedule& sch) {
  struct Mentions : ir::IRVisitor {
    std::unordered_set<const ir::VarNode*> skip, seen;
    std::vector<ir::Var> out;
    void visit_expr(const ir::Expr& e) override {
      if (!e.defined() || e.kind() != ir::ExprKind::Var) return ir::IRVisitor::visit_expr(e);
      auto* v = e.as<ir::VarNode>();
      if (seen.insert(v).second) out.push_back(ir::Var::from(e));
    }
    void visit(const ir::Let* op) override {
      skip.insert(op->var.get());
      ir::IRVisitor::visit(op);
    }
  } m;
  for (auto& st : sch.stages()) {
    const schedule::StageNode& n = st.node();
    for (auto& iv : n.all_iter_vars) m.skip.insert(iv.var().get());
    for (auto& e : st.tensor().shape()) m.visit_expr(e);
    for (auto& iv : n.root_iter_vars) {
      m.visit_expr(iv->dom.min);
      m.visit_expr(iv->dom.extent);
    }
    m.visit_expr(n.body);
  }
  std::vector<ir::Var> out;
  for (auto& v : m.out)
    if (!m.skip.count(v.get())) out.push_back(v);
  return out;
}

// Verifies the IR a pass produced; a failure names the pass.
inline void verify_after(const std::string& pass, const ir::Stmt& body, IRProperties have,
                         const ir::LoweredFunc& fn, const std::vector<ir::Var>& sizes) {
  try {
    ir::verify(body, fn.params, sizes, fn.name,
               have.has(IRProperty::flat_buffers) ? ir::IRForm::lowered : ir::IRForm::loop_nest);
  } catch (const InternalError& e) {
    throw InternalError(e.id(), str_cat("after lowering pass ", pass, ": ", e.message()), e.context());
  }
}

// Symbolic sizes that the parameters' shapes define, in first-use order.
inline std::vector<ir::Var> shape_vars(const std::vector<ir::Buffer>& params) {
  std::vector<ir::Var> out;
  for (auto& p : params)
    for (auto& e : p->shape)
      for (auto& v : ir::vars_of(e))
        if (std::none_of(out.begin(), out.end(), [&](const ir::Var& x) { return x.same_as(v); })) out.push_back(v);
  return out;
}

// Variables the body reads without defining them (loops, lets) — each must be a size var.
inline std::vector<ir::Var> free_vars(const ir::Stmt& body) {
  struct Finder : ir::IRVisitor {
    std::unordered_set<const ir::VarNode*> bound;
    std::vector<ir::Var> free;
    void visit_expr(const ir::Expr& e) override {
      if (e.defined() && e.kind() == ir::ExprKind::Var) {
        auto* v = e.as<ir::VarNode>();
        if (!bound.count(v) && std::none_of(free.begin(), free.end(), [&](auto& x) { return x.get() == v; }))
          free.push_back(ir::Var::from(e));
        return;
      }
      ir::IRVisitor::visit_expr(e);
    }
    void visit(const ir::For* op) override { bound.insert(op->loop_var.get()); ir::IRVisitor::visit(op); }
    void visit(const ir::LetStmt* op) override { bound.insert(op->var.get()); ir::IRVisitor::visit(op); }
    void visit(const ir::Let* op) override { bound.insert(op->var.get()); ir::IRVisitor::visit(op); }
  } f;
  f.visit_stmt(body);
  return f.free;
}

inline std::string describe_schedule(const schedule::Schedule& sch) {
  std::string out;
  for (auto& st : sch.stages()) {
    out += (out.empty() ? "" : "; ") + st.name() + ": ";
    for (size_t i = 0; i < st.leaf_iter_vars().size(); ++i) {
      auto& iv = st.leaf_iter_vars()[i];
      auto* a = st.attr(iv);
      out += (i ? ", " : "") + std::string(a && a->kind != ir::ForKind::serial ? ir::for_kind_name(a->kind) : "") +
             (a && a->kind != ir::ForKind::serial ? " " : "") + iv.name();
    }
  }
  return out;
}
// Which params the body stores into.
inline std::vector<bool> written_params(const ir::LoweredFunc& fn) {
  struct Stores : ir::IRVisitor {
    std::vector<const void*> targets;
    void visit(const ir::Store* op) override {
      targets.push_back(op->buffer.get());
      ir::IRVisitor::visit(op);
    }
  } stores;
  stores.visit_stmt(fn.body);
  std::vector<bool> out;
  for (auto& p : fn.params)
    out.push_back(std::find(stores.targets.begin(), stores.targets.end(), p.get()) != stores.targets.end());
  return out;
}
}  // namespace detail

// Lowers `sch` into a kernel named `name` whose arguments are `args` (inputs and outputs, in
// the caller's order). Every tensor the outputs read must be an argument or a stage.
inline ir::LoweredFunc lower(const schedule::Schedule& sch, const std::vector<te::Tensor>& args,
                             const std::string& name, const LowerOptions& options = {}) {
  if (args.empty()) throw UserError("nnvm.lower.no_args", str_cat("kernel ", name, " needs at least one argument"));
  for (auto& out : sch.outputs())
    if (std::none_of(args.begin(), args.end(), [&](const te::Tensor& a) { return a.same_as(out); }))
      throw UserError("nnvm.lower.output_not_arg",
                      str_cat("output ", out.name(), " of the schedule is not among the arguments of kernel ", name,
                              "; its result would be lost"));
  ir::LoweredFunc fn;
  fn.name = name;
  fn.origin = detail::describe_schedule(sch);
  StorageFlattener::ArgMap arg_buffers;
  for (auto& t : args) {
    if (arg_buffers.count(t.get()))
      throw UserError("nnvm.lower.duplicate_arg", str_cat("tensor ", t.name(), " appears twice among the arguments of kernel ", name));
    fn.params.emplace_back(t.name(), t.dtype(), t.shape());
    arg_buffers[t.get()] = fn.params.back();
  }
  const std::vector<LowerPass>& passes = options.passes ? *options.passes : lower_passes();
  if (options.passes) check_pass_table(passes);
  fn.size_vars = detail::shape_vars(fn.params);
  const bool verify = detail::verify_requested();
  std::vector<ir::Var> sizes;
  if (verify) {
    sizes = fn.size_vars;
    for (auto& v : detail::symbolic_values(sch))
      if (std::none_of(sizes.begin(), sizes.end(), [&](const ir::Var& x) { return x.same_as(v); })) sizes.push_back(v);
  }
  LowerState state{sch, args, arg_buffers, options, {}, {}, {}};
  IRProperties have;
  for (auto& pass : passes) {
    if (!pass.families.has(options.family)) continue;
    auto start = std::chrono::steady_clock::now();
    pass.run(state);
    if (options.pass_ms)
      (*options.pass_ms)[pass.name] +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    have.remove(pass.removed);
    have.add(pass.ensured);
    bool dump = detail::dump_requested(pass.name);
    if (options.on_pass || dump) {
      ir::Stmt shown = state.body.defined() ? state.body : detail::stage_view(state, have);
      if (options.on_pass) options.on_pass(pass.name, shown);
      if (dump) std::cerr << "// ---- after " << pass.name << " (" << name << ")\n" << ir::to_string(shown) << "\n";
    }
    if (verify && state.body.defined()) detail::verify_after(pass.name, state.body, have, fn, sizes);
  }
  fn.body = std::move(state.body);
  for (auto& v : detail::free_vars(fn.body))
    if (std::none_of(fn.size_vars.begin(), fn.size_vars.end(), [&](const ir::Var& x) { return x.same_as(v); }))
      throw UserError("nnvm.lower.unbound_size",
                      str_cat("symbolic size ", v.name(), " is used by kernel ", name,
                              " but is not an extent of any argument, so no call could bind it"));
  fn.written = detail::written_params(fn);
  ir::verify(fn);
  return fn;
}

}  // namespace lower
NNVM_END_NAMESPACE
// end nnvm/lower/pipeline.hpp
// begin nnvm/target/arguments.hpp
// Checks the buffers given to a kernel call against the kernel's signature and binds its
// symbolic sizes. Shared by the interpreter and every JIT, so all report the same errors.

#include <optional>
#include <span>


NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {
// Evaluates an integer shape expression once every symbolic size in it is bound.
inline std::optional<int64_t> eval_shape_expr(const ir::Expr& e, const ir::VarMap& bound) {
  ir::Expr s = ir::substitute(e, bound);
  struct Eval {
    std::optional<int64_t> operator()(const ir::Expr& x) const {
      if (auto* c = ir::as_const_int(x)) return *c;
      if (auto* c = x.as<ir::Cast>()) return (*this)(c->value);
      auto bin = [&](auto a, auto b, auto f) -> std::optional<int64_t> {
        auto va = (*this)(a), vb = (*this)(b);
        if (!va || !vb) return std::nullopt;
        return f(*va, *vb);
      };
      if (auto* o = x.as<ir::Add>()) return bin(o->a, o->b, [](int64_t p, int64_t q) { return p + q; });
      if (auto* o = x.as<ir::Sub>()) return bin(o->a, o->b, [](int64_t p, int64_t q) { return p - q; });
      if (auto* o = x.as<ir::Mul>()) return bin(o->a, o->b, [](int64_t p, int64_t q) { return p * q; });
      if (auto* o = x.as<ir::Div>()) return bin(o->a, o->b, [](int64_t p, int64_t q) { return q ? p / q : 0; });
      if (auto* o = x.as<ir::Mod>()) return bin(o->a, o->b, [](int64_t p, int64_t q) { return q ? p % q : 0; });
      if (auto* o = x.as<ir::Min>()) return bin(o->a, o->b, [](int64_t p, int64_t q) { return std::min(p, q); });
      if (auto* o = x.as<ir::Max>()) return bin(o->a, o->b, [](int64_t p, int64_t q) { return std::max(p, q); });
      return std::nullopt;
    }
  };
  return Eval{}(s);
}
}  // namespace detail

// Returns the value of each of fn.size_vars, in order. Throws UserError naming the kernel, the
// argument and the axis when the count, dtype, rank or an extent is wrong, or a size is unbound.
inline std::vector<int64_t> bind_arguments(const ir::LoweredFunc& fn, std::span<const BufferView> args) {
  if (args.size() != fn.params.size())
    throw UserError("nnvm.call.arg_count", str_cat("kernel ", fn.name, " takes ", fn.params.size(),
                                                   " buffers but was called with ", args.size()));
  ir::VarMap bound;
  std::unordered_map<const ir::VarNode*, int64_t> values;
  // First pass: bind every extent that is a bare symbolic size.
  for (size_t a = 0; a < args.size(); ++a) {
    const ir::Buffer& p = fn.params[a];
    const BufferView& v = args[a];
    auto where = [&] { return std::vector<std::string>{"kernel " + fn.name, "argument " + std::to_string(a) + " (" + p->name + ")"}; };
    if (v.dtype != p->dtype)
      throw UserError("nnvm.call.dtype", str_cat("expected a ", p->dtype, " buffer, got ", v.dtype), where());
    if (v.shape.size() != p->shape.size())
      throw UserError("nnvm.call.rank", str_cat("expected rank ", p->shape.size(), ", got rank ", v.shape.size()), where());
    if (v.data == nullptr && v.numel() > 0)
      throw UserError("nnvm.call.null_data", "buffer data pointer is null", where());
    for (size_t d = 0; d < v.shape.size(); ++d) {
      if (auto* var = p->shape[d].as<ir::VarNode>()) {
        auto [it, inserted] = values.emplace(var, v.shape[d]);
        if (!inserted && it->second != v.shape[d])
          throw UserError("nnvm.call.size_conflict",
                          str_cat("axis ", d, " has extent ", v.shape[d], " but size ", var->name,
                                  " was already bound to ", it->second, " by an earlier argument"),
                          where());
        bound[ir::Var::from(p->shape[d])] = ir::Expr(v.shape[d]);
      }
    }
  }
  // Kernels take their buffers as restrict pointers: a buffer the kernel writes may share memory
  // with no other (restrict and LLVM's noalias allow aliasing between buffers only read).
  for (size_t a = 0; a < args.size(); ++a)
    for (size_t b = a + 1; b < args.size(); ++b) {
      if (!fn.writes(a) && !fn.writes(b)) continue;
      auto lo_a = static_cast<const char*>(args[a].data), lo_b = static_cast<const char*>(args[b].data);
      size_t na = args[a].nbytes(), nb = args[b].nbytes();
      if (na && nb && lo_a < lo_b + nb && lo_b < lo_a + na)
        throw UserError("nnvm.call.aliasing",
                        str_cat("arguments ", a, " (", fn.params[a]->name, ") and ", b, " (", fn.params[b]->name,
                                ") overlap in memory; a kernel's buffers must be distinct"),
                        {"kernel " + fn.name});
    }
  // Second pass: every extent must now evaluate and match.
  for (size_t a = 0; a < args.size(); ++a) {
    const ir::Buffer& p = fn.params[a];
    for (size_t d = 0; d < p->shape.size(); ++d) {
      auto expect = detail::eval_shape_expr(p->shape[d], bound);
      std::vector<std::string> where{"kernel " + fn.name, "argument " + std::to_string(a) + " (" + p->name + ")",
                                     "axis " + std::to_string(d)};
      if (!expect)
        throw UserError("nnvm.call.unbound_size", "extent depends on a symbolic size no argument binds", where);
      if (*expect != args[a].shape[d])
        throw UserError("nnvm.call.shape", str_cat("expected extent ", *expect, ", got ", args[a].shape[d]), where);
    }
  }
  std::vector<int64_t> out;
  for (auto& v : fn.size_vars) {
    auto it = values.find(v.get());
    if (it == values.end())
      throw UserError("nnvm.call.unbound_size",
                      str_cat("symbolic size ", v.name(), " of kernel ", fn.name,
                              " is not the extent of any argument, so no call can bind it"));
    out.push_back(it->second);
  }
  return out;
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/arguments.hpp
// begin nnvm/target/interpreter.hpp
// The reference interpreter: runs a lowered kernel on host buffers with the exact semantics of
// docs/lowered_ir.md. It is the oracle every schedule and every emitter is checked against, so
// it is strict: every load and store is bounds-checked, scratch memory starts as NaN/garbage,
// and integer division by zero is an error instead of undefined behaviour.

#include <array>
#include <concepts>

// begin nnvm/target/interp/check.hpp
// The interpreter's static check of a kernel body, run before anything executes: nodes that
// lowering must have removed, element types no back end supports, and arithmetic on storage
// types are reported here, so the evaluator's hot path need not test for them.

// begin nnvm/target/interp/value.hpp
// Runtime values of the reference interpreter and the per-lane kernels that give the lowered
// IR its meaning (docs/lowered_ir.md). A lane is 64 raw bits, so scalar evaluation never touches
// the heap; the element type, known from the IR node, says how to read them.

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace target::interp {

// Signed integers are held sign-extended, unsigned integers and bool zero-extended, float32 in
// the low 32 bits, float64 in all 64. float16/bfloat16 values are held as the float32 they
// equal exactly: they are only loaded, stored and cast.
struct Lane {
  uint64_t u;
  int64_t i() const { return int64_t(u); }
  float f() const { return std::bit_cast<float>(uint32_t(u)); }
  double d() const { return std::bit_cast<double>(u); }
  static Lane of_i(int64_t v) { return {uint64_t(v)}; }
  static Lane of_u(uint64_t v) { return {v}; }
  static Lane of(float v) { return {std::bit_cast<uint32_t>(v)}; }
  static Lane of(double v) { return {std::bit_cast<uint64_t>(v)}; }
};

// A vector value. Up to 64 lanes live inline (no allocation per vector operation); wider
// vectors spill to the heap.
class LaneVec {
 public:
  static constexpr int kInline = 64;
  LaneVec() = default;
  LaneVec(const LaneVec&) = delete;
  LaneVec& operator=(const LaneVec&) = delete;

  void resize(int n) {
    n_ = n;
    if (n > kInline && heap_.size() < size_t(n)) heap_.resize(size_t(n));
  }
  int size() const { return n_; }
  Lane* data() { return n_ > kInline ? heap_.data() : inline_; }
  const Lane* data() const { return n_ > kInline ? heap_.data() : inline_; }
  Lane& operator[](int k) { return data()[k]; }
  Lane operator[](int k) const { return data()[k]; }

 private:
  int n_ = 0;
  Lane inline_[kInline];
  std::vector<Lane> heap_;
};

// The interpretation of a scalar element type; `unsupported` for types no back end handles.
enum class Elem : uint8_t { i, u, b, f32, f64, f16, bf16, unsupported };

inline Elem elem_of(DataType t) {
  bool int_width = t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  switch (t.code) {
    case DataType::Code::Int: return int_width ? Elem::i : Elem::unsupported;
    case DataType::Code::UInt: return int_width ? Elem::u : Elem::unsupported;
    case DataType::Code::Bool: return t.bits == 8 ? Elem::b : Elem::unsupported;
    case DataType::Code::Float:
      return t.bits == 32 ? Elem::f32 : t.bits == 64 ? Elem::f64 : t.bits == 16 ? Elem::f16 : Elem::unsupported;
    case DataType::Code::BFloat: return t.bits == 16 ? Elem::bf16 : Elem::unsupported;
    case DataType::Code::Handle: return Elem::unsupported;
  }
  return Elem::unsupported;
}
inline bool is_integral(Elem c) { return c == Elem::i || c == Elem::u || c == Elem::b; }

// Brings an integer result back to its type's width: narrow types wrap, bool becomes 0 or 1.
inline Lane wrap_int(Elem c, int bits, uint64_t v) {
  if (c == Elem::b) return {v != 0};
  if (bits >= 64) return {v};
  unsigned sh = unsigned(64 - bits);
  if (c == Elem::i) return Lane::of_i(int64_t(v << sh) >> sh);
  return {v & ((uint64_t(1) << bits) - 1)};
}

// Float to integer conversion is undefined in C when the value does not fit; the interpreter
// must not be, so it saturates to int64 (NaN gives 0) and then wraps to the target width,
// which agrees with C for every value that fits.
template <class F>
uint64_t float_to_int_bits(Elem to, int bits, F x) {
  if (std::isnan(x)) return 0;
  if (to == Elem::u && bits == 64 && x >= F(0)) {
    if (x >= F(18446744073709551616.0)) return std::numeric_limits<uint64_t>::max();
    return uint64_t(x);
  }
  if (x >= F(9223372036854775808.0)) return uint64_t(std::numeric_limits<int64_t>::max());
  if (x < F(-9223372036854775808.0)) return uint64_t(std::numeric_limits<int64_t>::min());
  return uint64_t(int64_t(x));
}

template <class S>
Lane convert(Elem to, int bits, S x) {
  switch (to) {
    case Elem::b: return {x != S(0)};
    case Elem::i:
    case Elem::u:
      if constexpr (std::is_floating_point_v<S>) return wrap_int(to, bits, float_to_int_bits(to, bits, x));
      else return wrap_int(to, bits, uint64_t(x));
    case Elem::f32: return Lane::of(float(x));
    case Elem::f64: return Lane::of(double(x));
    // Conversions to the storage types go through float32, as the emitted helpers do.
    case Elem::f16: return Lane::of(float16::to_float(float16::from_float(float(x))));
    case Elem::bf16: return Lane::of(bfloat16::to_float(bfloat16::from_float(float(x))));
    case Elem::unsupported: break;
  }
  return {0};
}

inline Lane cast_lane(Elem to, int to_bits, Elem from, Lane v) {
  switch (from) {
    case Elem::i: return convert(to, to_bits, v.i());
    case Elem::u:
    case Elem::b: return convert(to, to_bits, v.u);
    case Elem::f32:
    case Elem::f16:
    case Elem::bf16: return convert(to, to_bits, v.f());
    case Elem::f64: return convert(to, to_bits, v.d());
    case Elem::unsupported: break;
  }
  return {0};
}

template <class T>
Lane float_binop(ir::ExprKind k, T a, T b) {
  using K = ir::ExprKind;
  switch (k) {
    case K::Add: return Lane::of(T(a + b));
    case K::Sub: return Lane::of(T(a - b));
    case K::Mul: return Lane::of(T(a * b));
    case K::Div: return Lane::of(T(a / b));
    case K::Mod: return Lane::of(T(std::fmod(a, b)));
    // IEEE 754-2019 minimum/maximum: a NaN operand gives NaN, whichever side it is on.
    case K::Min: return Lane::of(a < b || a != a ? a : b);
    case K::Max: return Lane::of(a > b || a != a ? a : b);
    case K::EQ: return {a == b};
    case K::NE: return {a != b};
    case K::LT: return {a < b};
    case K::LE: return {a <= b};
    case K::GT: return {a > b};
    case K::GE: return {a >= b};
    default: return {0};
  }
}

// a*b + c (c negated when `negate_addend`) rounded once: the interpreter's reading of the
// products the emitters fuse (docs/lowered_ir.md). f32 or f64 only.
inline Lane fused_multiply_add(Elem c, Lane a, Lane b, Lane addend, bool negate_addend) {
  if (c == Elem::f32) return Lane::of(std::fma(a.f(), b.f(), negate_addend ? -addend.f() : addend.f()));
  return Lane::of(std::fma(a.d(), b.d(), negate_addend ? -addend.d() : addend.d()));
}

// Requires a non-zero divisor for Div and Mod (the caller reports division by zero).
inline Lane int_binop(ir::ExprKind k, Elem c, int bits, Lane a, Lane b) {
  using K = ir::ExprKind;
  bool s = c == Elem::i;
  auto lt = [s](Lane x, Lane y) { return s ? x.i() < y.i() : x.u < y.u; };
  switch (k) {
    case K::Add: return wrap_int(c, bits, a.u + b.u);
    case K::Sub: return wrap_int(c, bits, a.u - b.u);
    case K::Mul: return wrap_int(c, bits, a.u * b.u);
    // x / -1 is a negation; done in unsigned arithmetic so INT64_MIN / -1 cannot trap.
    case K::Div:
      if (!s) return wrap_int(c, bits, a.u / b.u);
      return wrap_int(c, bits, b.i() == -1 ? 0 - a.u : uint64_t(a.i() / b.i()));
    case K::Mod:
      if (!s) return wrap_int(c, bits, a.u % b.u);
      return wrap_int(c, bits, b.i() == -1 ? 0 : uint64_t(a.i() % b.i()));
    case K::Min: return lt(a, b) ? a : b;
    case K::Max: return lt(b, a) ? a : b;
    case K::EQ: return {a.u == b.u};
    case K::NE: return {a.u != b.u};
    case K::LT: return {lt(a, b)};
    case K::LE: return {!lt(b, a)};
    case K::GT: return {lt(b, a)};
    case K::GE: return {!lt(a, b)};
    case K::And: return {a.u != 0 && b.u != 0};
    case K::Or: return {a.u != 0 || b.u != 0};
    default: return {0};
  }
}

// A binary node's result; `c`/`bits` describe the operands' element type.
inline Lane binop(ir::ExprKind k, Elem c, int bits, Lane a, Lane b) {
  if (c == Elem::f32) return float_binop(k, a.f(), b.f());
  if (c == Elem::f64) return float_binop(k, a.d(), b.d());
  return int_binop(k, c, bits, a, b);
}

// The math library in the argument's precision: the float overloads of <cmath> are the C
// library's `f` functions (expf, ...), as emitted C calls them.
template <class T>
Lane float_call(ir::CallOp op, T x, T y) {
  using O = ir::CallOp;
  switch (op) {
    case O::exp: return Lane::of(T(std::exp(x)));
    case O::exp2: return Lane::of(T(std::exp2(x)));
    case O::log: return Lane::of(T(std::log(x)));
    case O::log2: return Lane::of(T(std::log2(x)));
    case O::log1p: return Lane::of(T(std::log1p(x)));
    case O::expm1: return Lane::of(T(std::expm1(x)));
    case O::sqrt: return Lane::of(T(std::sqrt(x)));
    case O::rsqrt: return Lane::of(T(T(1) / std::sqrt(x)));
    case O::tanh: return Lane::of(T(std::tanh(x)));
    case O::erf: return Lane::of(T(std::erf(x)));
    case O::sigmoid: return Lane::of(T(T(1) / (T(1) + std::exp(-x))));
    case O::pow: return Lane::of(T(std::pow(x, y)));
    case O::abs: return Lane::of(T(std::fabs(x)));
    case O::floor: return Lane::of(T(std::floor(x)));
    case O::ceil: return Lane::of(T(std::ceil(x)));
    case O::round: return Lane::of(T(std::nearbyint(x)));
    case O::trunc: return Lane::of(T(std::trunc(x)));
    case O::sin: return Lane::of(T(std::sin(x)));
    case O::cos: return Lane::of(T(std::cos(x)));
    case O::tan: return Lane::of(T(std::tan(x)));
    case O::asin: return Lane::of(T(std::asin(x)));
    case O::acos: return Lane::of(T(std::acos(x)));
    case O::atan: return Lane::of(T(std::atan(x)));
    case O::atan2: return Lane::of(T(std::atan2(x, y)));
    case O::sinh: return Lane::of(T(std::sinh(x)));
    case O::cosh: return Lane::of(T(std::cosh(x)));
    case O::asinh: return Lane::of(T(std::asinh(x)));
    case O::acosh: return Lane::of(T(std::acosh(x)));
    case O::atanh: return Lane::of(T(std::atanh(x)));
    case O::fmod: return Lane::of(T(std::fmod(x, y)));
    case O::isnan: return {std::isnan(x) ? 1u : 0u};
    case O::isinf: return {std::isinf(x) ? 1u : 0u};
    case O::copysign: return Lane::of(T(std::copysign(x, y)));
    default: break;  // the bitwise ops take integers
  }
  return {0};
}

// The bitwise ops on integers held as lanes (ir::CallOp: out-of-range shifts are defined).
inline Lane bitwise_call(ir::CallOp op, Elem c, int bits, Lane x, Lane y) {
  using O = ir::CallOp;
  // A negative signed amount reads as a huge unsigned one: out of range too.
  bool in_range = y.u < uint64_t(bits);
  switch (op) {
    case O::bitwise_and: return wrap_int(c, bits, x.u & y.u);
    case O::bitwise_or: return wrap_int(c, bits, x.u | y.u);
    case O::bitwise_xor: return wrap_int(c, bits, x.u ^ y.u);
    case O::bitwise_not: return wrap_int(c, bits, ~x.u);
    case O::shift_left: return in_range ? wrap_int(c, bits, x.u << y.u) : Lane{0};
    case O::shift_right:
      if (c == Elem::i) return Lane::of_i(x.i() >> (in_range ? y.u : uint64_t(bits - 1)));
      return in_range ? Lane{x.u >> y.u} : Lane{0};
    default: return {0};
  }
}

// `c`/`bits` describe the arguments' element type; `y` is ignored by unary ops. Only abs and
// the bitwise ops take integers (checked by Call::make).
inline Lane call_lane(ir::CallOp op, Elem c, int bits, Lane x, Lane y) {
  if (c == Elem::f32) return float_call(op, x.f(), y.f());
  if (c == Elem::f64) return float_call(op, x.d(), y.d());
  if (ir::is_bitwise(op)) return bitwise_call(op, c, bits, x, y);
  if (c == Elem::i && x.i() < 0) return wrap_int(c, bits, 0 - x.u);
  return x;
}

template <class T>
T read_as(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
void write_as(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

// Reads one element of type (c, bits) at p; bool bytes other than 0 read as true.
inline Lane load_elem(Elem c, int bits, const std::byte* p) {
  switch (c) {
    case Elem::i:
      switch (bits) {
        case 8: return Lane::of_i(read_as<int8_t>(p));
        case 16: return Lane::of_i(read_as<int16_t>(p));
        case 32: return Lane::of_i(read_as<int32_t>(p));
        default: return Lane::of_i(read_as<int64_t>(p));
      }
    case Elem::u:
      switch (bits) {
        case 8: return {read_as<uint8_t>(p)};
        case 16: return {read_as<uint16_t>(p)};
        case 32: return {read_as<uint32_t>(p)};
        default: return {read_as<uint64_t>(p)};
      }
    case Elem::b: return {read_as<uint8_t>(p) != 0};
    case Elem::f32: return Lane::of(read_as<float>(p));
    case Elem::f64: return Lane::of(read_as<double>(p));
    case Elem::f16: return Lane::of(float16::to_float(read_as<uint16_t>(p)));
    case Elem::bf16: return Lane::of(bfloat16::to_float(read_as<uint16_t>(p)));
    case Elem::unsupported: break;
  }
  return {0};
}

inline void store_elem(Elem c, int bits, std::byte* p, Lane v) {
  switch (c) {
    case Elem::i:
    case Elem::u:
      switch (bits) {
        case 8: return write_as(p, uint8_t(v.u));
        case 16: return write_as(p, uint16_t(v.u));
        case 32: return write_as(p, uint32_t(v.u));
        default: return write_as(p, v.u);
      }
    case Elem::b: return write_as(p, uint8_t(v.u != 0));
    case Elem::f32: return write_as(p, v.f());
    case Elem::f64: return write_as(p, v.d());
    case Elem::f16: return write_as(p, float16::from_float(v.f()));
    case Elem::bf16: return write_as(p, bfloat16::from_float(v.f()));
    case Elem::unsupported: break;
  }
}

// Fills fresh scratch memory so that a kernel reading it before writing it is caught: floats
// become quiet NaNs, every other type the byte pattern 0xCD.
inline void fill_uninitialized(Elem c, int bits, std::byte* p, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    switch (c) {
      case Elem::f32: write_as(p + 4 * k, uint32_t(0x7fc00000u)); break;
      case Elem::f64: write_as(p + 8 * k, uint64_t(0x7ff8000000000000u)); break;
      case Elem::f16: write_as(p + 2 * k, uint16_t(0x7e00u)); break;
      case Elem::bf16: write_as(p + 2 * k, uint16_t(0x7fc0u)); break;
      default: std::memset(p, 0xCD, size_t(n) * size_t(bits / 8)); return;
    }
  }
}

}  // namespace target::interp
NNVM_END_NAMESPACE
// end nnvm/target/interp/value.hpp

NNVM_BEGIN_NAMESPACE
namespace target::interp {

class InterpretableChecker : public ir::IRVisitor {
 public:
  explicit InterpretableChecker(const ir::LoweredFunc& fn) : fn_(fn) {}

  void visit_expr(const ir::Expr& e) override {
    if (!e.defined()) fail("nnvm.interp.malformed", "an expression operand is undefined");
    check_dtype(e.dtype(), "an expression");
    ir::IRVisitor::visit_expr(e);
  }

 protected:
  using ir::IRVisitor::visit;
#define NNVM_CHECK_BINARY(N)                                             \
  void visit(const ir::N* op) override {                                 \
    check_arith(op->a.dtype(), #N);                                      \
    ir::IRVisitor::visit(op);                                            \
  }
  NNVM_FOR_EACH_BINARY(NNVM_CHECK_BINARY)
#undef NNVM_CHECK_BINARY
  void visit(const ir::Call* op) override {
    for (auto& a : op->args) check_arith(a.dtype(), ir::call_op_name(op->op));
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    check_dtype(op->buffer->dtype, "buffer " + op->buffer->name);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Reduce*) override { unlowered("Reduce"); }
  void visit(const ir::ProducerLoad*) override { unlowered("ProducerLoad"); }

  void visit(const ir::For* op) override {
    if (!op->loop_var.dtype().is_scalar() || !op->min.dtype().is_scalar() || !op->extent.dtype().is_scalar())
      fail("nnvm.interp.malformed", str_cat("loop ", op->loop_var.name(), " has vector bounds"));
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    check_dtype(op->buffer->dtype, "buffer " + op->buffer->name);
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::Allocate* op) override {
    check_dtype(op->buffer->dtype, "buffer " + op->buffer->name);
    for (auto& e : op->buffer->shape)
      if (!e.defined() || !e.dtype().is_int() || !e.dtype().is_scalar())
        fail("nnvm.interp.malformed", str_cat("allocation ", op->buffer->name, " has a non-integer extent"));
    ir::IRVisitor::visit(op);
  }
  void visit(const ir::ProducerStore*) override { unlowered("ProducerStore"); }
  void visit(const ir::ProducerRealize*) override { unlowered("ProducerRealize"); }

 private:
  [[noreturn]] void fail(const char* id, std::string msg) const {
    throw InternalError(id, std::move(msg), {"kernel " + fn_.name});
  }
  [[noreturn]] void unlowered(const char* node) const {
    fail("nnvm.interp.unlowered", str_cat("a ", node, " node reached the interpreter; lowering must remove it"));
  }
  void check_dtype(DataType t, const std::string& what) const {
    if (elem_of(t) == Elem::unsupported)
      fail("nnvm.interp.unsupported_dtype", str_cat(what, " has type ", t, ", which no back end supports"));
  }
  void check_arith(DataType t, const char* op) const {
    if (t.is_storage_only())
      fail("nnvm.interp.storage_only_arith", str_cat(op, " on ", t, ", a storage type; cast to float32 first"));
  }

  const ir::LoweredFunc& fn_;
};

inline void check_interpretable(const ir::LoweredFunc& fn) {
  InterpretableChecker checker(fn);
  for (auto& p : fn.params) {
    if (elem_of(p->dtype) == Elem::unsupported || !p->dtype.is_scalar())
      throw InternalError("nnvm.interp.unsupported_dtype",
                          str_cat("parameter ", p->name, " has element type ", p->dtype), {"kernel " + fn.name});
  }
  checker.visit_stmt(fn.body);
}

}  // namespace target::interp
NNVM_END_NAMESPACE
// end nnvm/target/interp/check.hpp
// begin nnvm/target/interp/machine.hpp
// The reference interpreter's evaluator: walks a checked kernel body (interp/check.hpp) with
// variables and buffers resolved through maps keyed by node identity. Scalar expressions
// evaluate to one Lane, vector expressions into a LaneVec.

#include <optional>
#include <memory>
#include <span>
#include <unordered_map>


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
      case K::FloatImm: return convert(elem_of(n->dtype), n->dtype.bits, static_cast<const ir::FloatImm*>(n)->value);
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
        return cast_lane(elem_of(n->dtype), n->dtype.bits, elem_of(op->value.dtype()), eval(op->value));
      }
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
        return load_elem(elem_of(t), t.bits, slot.data + index * t.bytes());
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
        for (int k = 0; k < lanes; ++k) out[k] = cast_lane(to, n->dtype.bits, from, out[k]);
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
        for (int k = 0; k < lanes; ++k) out[k] = load_elem(c, t.bits, slot.data + index[k].i() * t.bytes());
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
      return store_elem(c, t.bits, slot.data + index * t.bytes(), v);
    }
    LaneVec index, value;
    eval_vec(op->index, index);
    eval_vec(op->value, value);
    if (value.size() != index.size()) malformed(str_cat("store to ", op->buffer->name, " has mismatched lanes"));
    // Check every lane before writing any, so a failing store leaves the buffer untouched.
    for (int k = 0; k < index.size(); ++k) check_index(op->buffer, slot, index[k].i(), "store");
    for (int k = 0; k < index.size(); ++k) store_elem(c, t.bits, slot.data + index[k].i() * t.bytes(), value[k]);
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
// end nnvm/target/interp/machine.hpp

NNVM_BEGIN_NAMESPACE
namespace target {

// Runs `fn` on `args` (one buffer per fn.params, in order; inputs are read, outputs written in
// place). Throws UserError for bad arguments (ids from bind_arguments) and integer division by
// zero ("nnvm.interp.div_by_zero"); InternalError for a kernel that breaks the lowered-IR
// contract: "nnvm.interp.out_of_bounds", "nnvm.interp.unbound_var", "nnvm.interp.unlowered",
// "nnvm.interp.unbound_buffer", "nnvm.interp.unsupported_dtype", "nnvm.interp.storage_only_arith",
// "nnvm.interp.bad_allocation", "nnvm.interp.malformed". A kernel that throws midway may have
// written part of its outputs.
inline void interpret(const ir::LoweredFunc& fn, std::span<const BufferView> args) {
  std::vector<int64_t> sizes = bind_arguments(fn, args);
  interp::check_interpretable(fn);
  interp::Machine(fn).run(args, sizes);
}

template <class A>
concept InterpretArgument = std::same_as<std::remove_reference_t<A>, NDArray> ||
                            std::same_as<std::remove_cvref_t<A>, BufferView>;

// interpret(fn, a, b, c) with NDArrays and/or BufferViews, in fn.params order.
template <InterpretArgument... A>
void interpret(const ir::LoweredFunc& fn, A&&... arrays) {
  auto view = [](auto& a) -> BufferView {
    if constexpr (std::same_as<std::remove_cvref_t<decltype(a)>, NDArray>) return a.view();
    else return a;
  };
  const std::array<BufferView, sizeof...(A)> views{view(arrays)...};
  interpret(fn, std::span<const BufferView>(views));
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/interpreter.hpp
// begin nnvm/target/c_like.hpp
// The shared emitter for C-family source (C, and later CUDA, OpenCL, Metal): a visitor that
// prints lowered IR (docs/lowered_ir.md) as statements and expressions. It knows no dialect's
// spelling: types, vector syntax, literals, qualifiers, thread indices, the barrier and math
// names come from a Dialect (dialect.hpp). A dialect whose kernels need more than spelling
// overrides the few virtual hooks (vector loads/stores, parallel loops, allocations) and writes
// its own function signatures; one that needs none prints kernels with emit_kernel_source().
//
// Vector values: arithmetic that every C-family vector type supports (+ - * and float /, and
// & | ^ on bool lanes) stays a vector expression; every other vector node (comparisons,
// select, cast, call, min/max, integer div/mod, gathers) is computed lane by lane in a short
// `for (int lane ...)` loop, printed by the scalar rules so that both agree exactly.

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

// begin nnvm/target/dialect.hpp
// A C-family dialect as data: every spelling the shared emitter (c_like.hpp) prints that is not
// common to C, CUDA, OpenCL C and Metal. The emitter reads these tables and knows no dialect;
// what needs more than spelling (the CPU kernel ABI, outlined parallel loops, the workspace)
// lives in a dialect's subclass of CLikeEmitter, which overrides the few virtual hooks there.
//
// Templates name their parts as ${part}; fill() substitutes them. A template gives the whole
// text of a construct, so a dialect can place each part where its language wants it.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>


NNVM_BEGIN_NAMESPACE
namespace target {

// `pattern` with each ${name} replaced by its value; an unknown ${name} is kept as written.
inline std::string fill(const std::string& pattern,
                        std::initializer_list<std::pair<const char*, std::string>> parts) {
  std::string out;
  size_t i = 0;
  while (i < pattern.size()) {
    size_t open = pattern.find("${", i), close = open == std::string::npos ? open : pattern.find('}', open);
    if (close == std::string::npos) break;
    out.append(pattern, i, open - i);
    std::string name = pattern.substr(open + 2, close - open - 2), value = pattern.substr(open, close - open + 1);
    for (auto& [n, v] : parts)
      if (name == n) value = v;
    out += value;
    i = close + 1;
  }
  return out.append(pattern, i, std::string::npos);
}

struct Dialect {
  // Scalar types as stored in memory: bool is one byte, float16 and bfloat16 are their bits
  // (storage types: the emitter converts them to float32 through helpers to compute).
  struct ScalarTypes {
    std::string boolean, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, bfloat16, float32,
        float64, handle;
  } types;
  std::string int_type;  // the plain int of lane counters and helper locals

  // Vector values. ${elem}: the element's dtype name (uint8 for bool, uint16 for a storage
  // type), ${scalar}: its scalar spelling, ${lanes}, ${type}: the vector type's spelling.
  std::string vector_type;   // ${elem} ${scalar} ${lanes}
  std::string vector_zero;   // ${type}: initializer of a temporary then filled lane by lane
  std::string broadcast;     // ${type} ${lanes} ${value} ${values} (${value} per lane, with ", ")
  std::string lane;          // lane ${lane} of vector variable ${vector}, readable and assignable
  std::string vector_load;   // expression: ${type} ${lanes} elements from &${buffer}[${base}]
  std::string vector_store;  // statement: ${type} vector variable ${value} into &${buffer}[${base}]

  // Literals the language spells its own way.
  std::string nan, infinity;                  // float32 NaN and +infinity
  std::string int64_literal, uint64_literal;  // ${value}: a 64-bit constant too big for 32 bits

  // Qualifiers and address spaces ("" where the language has none); each ends in a space.
  std::string restrict_qualifier, helper_qualifier, global_space, const_qualifier = "const ";

  // GPU axes: the expression for a thread_tag ("threadIdx.x"). A loop bound to a tag the table
  // lacks is a BackendError (a CPU dialect has none).
  std::map<std::string, std::string> thread_index;
  std::string barrier;  // the statement a Barrier node becomes

  // Math: names that differ from ir::call_op_name, and the suffix of float32 versions (C's
  // expf; empty where the names are overloaded).
  std::map<ir::CallOp, std::string> math_names;
  std::string float32_math_suffix;
  // Statement copying the 4 bytes of ${src} into ${dst} (a float and a uint32 variable), for
  // the float16/bfloat16 conversion helpers.
  std::string bit_copy;

  // Identifiers the emitted code must avoid (keywords, library names); the emitter adds its own.
  const std::unordered_set<std::string>* reserved_names = nullptr;
  // The largest private array (bytes) a kernel may declare.
  int64_t max_private_bytes = 0;

  // The generic kernel (CLikeEmitter::emit_kernel_source): ${name} ${params}; each buffer
  // parameter from buffer_param: ${space} ${const} ${type} ${restrict} ${name}.
  std::string kernel_signature, buffer_param;

  std::string scalar_type(DataType t) const {
    switch (t.code) {
      case DataType::Code::Bool: return types.boolean;
      case DataType::Code::Int:
        return t.bits == 8 ? types.int8 : t.bits == 16 ? types.int16 : t.bits == 32 ? types.int32 : types.int64;
      case DataType::Code::UInt:
        return t.bits == 8 ? types.uint8 : t.bits == 16 ? types.uint16 : t.bits == 32 ? types.uint32 : types.uint64;
      case DataType::Code::Float: return t.bits == 32 ? types.float32 : t.bits == 64 ? types.float64 : types.float16;
      case DataType::Code::BFloat: return types.bfloat16;
      case DataType::Code::Handle: return types.handle;
    }
    return "void";
  }
  // The function computing `op` in t's precision.
  std::string math_function(ir::CallOp op, DataType t) const {
    std::string name = math_name(op);
    return t.bits == 32 ? name + float32_math_suffix : name;
  }
  // The name of `op` without a precision suffix (isnan and isinf are type-generic everywhere).
  std::string math_name(ir::CallOp op) const {
    auto it = math_names.find(op);
    return it == math_names.end() ? ir::call_op_name(op) : it->second;
  }
};

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/dialect.hpp
// begin nnvm/target/name_table.hpp
// Unique, valid identifiers for generated C-family source: the emitters' locals and module
// symbols, and a standalone model's parameter names (graph/standalone_c.hpp).

#include <cctype>
#include <set>
#include <string>


NNVM_BEGIN_NAMESPACE
namespace target {

// Unique, valid C identifiers: `i.outer` becomes `i_outer`, a second `i` becomes `i_1`.
class NameTable {
 public:
  void reserve(const std::string& name) { used_.insert(name); }
  bool taken(const std::string& name) const { return used_.count(name) != 0; }
  std::string fresh(const std::string& hint) {
    std::string base = sanitize(hint), name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }
  static std::string sanitize(const std::string& hint) {
    std::string s;
    for (char c : hint) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    // Leading digits are invalid, leading underscores are reserved, nnvm_ is the emitter's.
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '_' ||
        s.rfind("nnvm_", 0) == 0 || s.rfind("NNVM_", 0) == 0)
      s = "v" + s;
    return s;
  }

 private:
  std::set<std::string> used_;
};

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/name_table.hpp
// begin nnvm/target/storage_helpers.hpp
// The float16 and bfloat16 conversion helpers generated code calls (storage types compute in
// float32), as source text in a dialect's spelling. Rounding is to nearest even, NaN stays a
// NaN and overflow gives infinity, as in nnvm::float16/bfloat16 (ir/dtype.hpp).


NNVM_BEGIN_NAMESPACE
namespace target {

// Which helpers a source calls, in StorageHelper order; the source defines only those (an
// unused static function is a warning under -Wall).
enum class StorageHelper { f16_to_f32, f32_to_f16, bf16_to_f32, f32_to_bf16 };

inline std::string storage_helpers_source(const Dialect& d, const bool (&used)[4]) {
  static const char* const text[4] = {
      // f16_to_f32
      R"(${qual}${f32} nnvm_f16_to_f32(${u16} h) {
  ${u32} sign = (${u32})(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu, out;
  ${f32} f;
  if (exp == 0x1fu) {
    out = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    out = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {
    out = sign;
  } else {
    ${int} e = -1;
    do { ++e; man <<= 1; } while (!(man & 0x400u));
    out = sign | ((${u32})(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  ${copy_f_out}
  return f;
}
)",
      // f32_to_f16
      R"(${qual}${u16} nnvm_f32_to_f16(${f32} f) {
  ${u32} x, sign, absx, half, rem;
  ${copy_x_f}
  sign = (x >> 16) & 0x8000u;
  absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return (${u16})(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
  if (absx >= 0x477ff000u) return (${u16})(sign | 0x7c00u);
  if (absx < 0x38800000u) {
    ${u32} man, mid;
    ${int} shift;
    if (absx < 0x33000000u) return (${u16})sign;
    man = (absx & 0x7fffffu) | 0x800000u;
    shift = 113 - (${int})(absx >> 23) + 13;
    half = man >> shift;
    rem = man & ((1u << shift) - 1u);
    mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return (${u16})(sign | half);
  }
  half = (absx >> 13) - (112u << 10);
  rem = absx & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return (${u16})(sign | half);
}
)",
      // bf16_to_f32
      R"(${qual}${f32} nnvm_bf16_to_f32(${u16} b) {
  ${u32} x = (${u32})b << 16;
  ${f32} f;
  ${copy_f_x}
  return f;
}
)",
      // f32_to_bf16
      R"(${qual}${u16} nnvm_f32_to_bf16(${f32} f) {
  ${u32} x;
  ${copy_x_f}
  if ((x & 0x7fffffffu) > 0x7f800000u) return (${u16})((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (${u16})(x >> 16);
}
)",
  };
  auto copy = [&](const char* dst, const char* src) { return fill(d.bit_copy, {{"dst", dst}, {"src", src}}); };
  std::string s;
  for (int h = 0; h < 4; ++h)
    if (used[h])
      s += fill(text[h], {{"qual", d.helper_qualifier},
                          {"f32", d.types.float32},
                          {"u16", d.types.uint16},
                          {"u32", d.types.uint32},
                          {"int", d.int_type},
                          {"copy_f_out", copy("f", "out")},
                          {"copy_f_x", copy("f", "x")},
                          {"copy_x_f", copy("x", "f")}});
  return s;
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/storage_helpers.hpp

NNVM_BEGIN_NAMESPACE
namespace target {

// A printed expression and the C precedence of its outermost operator. `atom` marks text that
// may be repeated freely (a name, a non-negative literal, a lane access).
struct CExpr {
  std::string text;
  int prec = 16;
  bool atom = false;
};

namespace cprec {
inline constexpr int primary = 16, unary = 15, mul = 13, add = 12, rel = 10, eq = 9, bit_and = 8,
                     bit_xor = 7, bit_or = 6, log_and = 5, log_or = 4, cond = 3;
}

class CLikeEmitter : public ir::IRVisitor {
 public:
  explicit CLikeEmitter(const Dialect& dialect) : dialect_(dialect) {}

  // A kernel as the dialect's generic function: its signature (kernel_signature, buffer_param)
  // with the buffers and then the symbolic sizes as parameters, around the body.
  std::string emit_kernel_source(const ir::LoweredFunc& fn) {
    kernel_name_ = fn.name;
    names_ = NameTable();
    reserve_common_names();
    reset_scopes();
    out_.clear();
    indent_ = 2;
    Scan scan;
    scan.visit_stmt(fn.body);
    std::string name = names_.fresh(fn.name.empty() ? "kernel" : fn.name), params;
    for (auto& b : fn.params)
      params += str_cat(params.empty() ? "" : ", ",
                        fill(dialect_.buffer_param, {{"space", dialect_.global_space},
                                                     {"const", scan.stored.count(b.get()) ? "" : dialect_.const_qualifier},
                                                     {"type", scalar_type(b->dtype)},
                                                     {"restrict", dialect_.restrict_qualifier},
                                                     {"name", bind_buffer(b)}}));
    for (auto& v : fn.size_vars) params += str_cat(params.empty() ? "" : ", ", scalar_type(v.dtype()), " ", bind_var(v));
    emit_body(fn.body);
    return str_cat(fill(dialect_.kernel_signature, {{"name", name}, {"params", params}}), " {\n", out_, "}\n");
  }

 protected:
  // ---- dialect hooks -------------------------------------------------------------------------

  // A contiguous load of t.lanes elements starting at &buf[base]; may emit statements.
  virtual CExpr contiguous_load(const std::string& buf, const CExpr& base, DataType t) {
    return {fill(dialect_.vector_load, {{"type", vector_type(t)}, {"lanes", std::to_string(t.lanes)},
                                        {"buffer", buf}, {"base", base.text}}),
            cprec::primary};
  }
  virtual void contiguous_store(const std::string& buf, const CExpr& base, const std::string& value, DataType t) {
    line(fill(dialect_.vector_store, {{"type", vector_type(t)}, {"lanes", std::to_string(t.lanes)},
                                      {"buffer", buf}, {"base", base.text}, {"value", value}}));
  }
  virtual void emit_parallel_for(const ir::For* op) { emit_serial_for(op); }
  // The loop variable takes the axis' index: the launch gives the axis exactly the loop's extent.
  virtual void emit_thread_bound_for(const ir::For* op) {
    auto it = dialect_.thread_index.find(op->thread_tag);
    if (it == dialect_.thread_index.end())
      throw BackendError("nnvm.codegen.thread_binding",
                         str_cat("loop ", op->loop_var.name(), " is bound to GPU axis '", op->thread_tag,
                                 "', which this CPU back end cannot run; build the kernel for a GPU target"),
                         context());
    CExpr mn = print(op->min);
    std::string v = bind_var(op->loop_var);
    line(str_cat("const ", scalar_type(op->loop_var.dtype()), " ", v, " = ",
                 ir::is_const_int(op->min, 0) ? it->second : operand(mn, cprec::add) + " + " + it->second, ";"));
    visit_stmt(op->body);
    unbind_var(op->loop_var);
  }
  virtual void emit_barrier(const ir::Barrier*) { line(dialect_.barrier); }
  // Declares `name` as a private array of `count` elements (the default: a stack array).
  virtual void emit_stack_array(const std::string& name, DataType t, int64_t count) {
    line(str_cat(scalar_type(t), " ", name, "[", std::max<int64_t>(count, 1), "];"));
  }
  // Memory for an Allocate; the default handles constant sizes on the stack.
  virtual void emit_allocate(const ir::Allocate* op) {
    emit_stack_allocate(op, "private");
  }

  // ---- state the dialect drives --------------------------------------------------------------

  const Dialect& dialect_;
  std::string out_;  // the function body being printed
  int indent_ = 0;
  NameTable names_;
  std::string kernel_name_;  // for error context
  std::map<std::string, DataType> used_vector_types_;
  // Which storage conversion helpers the code calls, in StorageHelper order.
  bool needs_storage_[4] = {false, false, false, false};

  std::vector<std::string> context() const { return {"kernel " + kernel_name_}; }
  void line(const std::string& s) { out_ += std::string(size_t(indent_), ' ') + s + "\n"; }

  std::string scalar_type(DataType t) const { return dialect_.scalar_type(t); }
  // The dialect's vector type, recorded in used_vector_types_ for dialects that declare them.
  std::string vector_type(DataType t) {
    std::string name = fill(dialect_.vector_type, {{"elem", vector_elem_name(t)},
                                                   {"scalar", scalar_type(t.element_of())},
                                                   {"lanes", std::to_string(t.lanes)}});
    used_vector_types_.emplace(name, t);
    return name;
  }
  std::string math_function(ir::CallOp op, DataType t) const { return dialect_.math_function(op, t); }

  // Names every emitted identifier must avoid: the dialect's reserved names, the math functions
  // the code may call in any precision, the lane counter, and `half` (a type in the GPU
  // languages, avoided everywhere so that kernels name things alike in every dialect).
  void reserve_common_names() {
    if (dialect_.reserved_names)
      for (auto& w : *dialect_.reserved_names) names_.reserve(w);
    for (const char* w : {"lane", "half"}) names_.reserve(w);
    for (int op = 0; op <= int(ir::CallOp::copysign); ++op) {
      std::string n = ir::call_op_name(ir::CallOp(op));
      names_.reserve(n);
      names_.reserve(n + dialect_.float32_math_suffix);
      names_.reserve(dialect_.math_function(ir::CallOp(op), dtype::float32));
      names_.reserve(dialect_.math_function(ir::CallOp(op), dtype::float64));
    }
  }

  // ---- scopes ------------------------------------------------------------------------------

  std::string bind_var(const ir::Var& v) {
    std::string name = names_.fresh(v.name());
    vars_[v.get()].push_back(name);
    return name;
  }
  void bind_var_as(const ir::Var& v, const std::string& name) { vars_[v.get()].push_back(name); }
  void unbind_var(const ir::Var& v) { vars_[v.get()].pop_back(); }
  bool is_bound(const ir::VarNode* v) const {
    auto it = vars_.find(v);
    return it != vars_.end() && !it->second.empty();
  }
  // The C name of a variable bound in the current scope.
  const std::string& bound_var_name(const ir::VarNode* v) const { return vars_.at(v).back(); }
  std::string bind_buffer(const ir::Buffer& b) {
    std::string name = names_.fresh(b->name);
    buffers_[b.get()].push_back(name);
    return name;
  }
  void bind_buffer_as(const ir::Buffer& b, const std::string& name) { buffers_[b.get()].push_back(name); }
  void unbind_buffer(const ir::Buffer& b) { buffers_[b.get()].pop_back(); }
  bool is_bound(const ir::BufferNode* b) const {
    auto it = buffers_.find(b);
    return it != buffers_.end() && !it->second.empty();
  }
  const std::string& buffer_name(const ir::Buffer& b) const {
    auto it = buffers_.find(b.get());
    if (it == buffers_.end() || it->second.empty())
      throw InternalError("nnvm.codegen.unbound_buffer",
                          str_cat("buffer ", b->name, " is neither a parameter nor allocated around its use"),
                          context());
    return it->second.back();
  }
  void reset_scopes() {
    vars_.clear();
    buffers_.clear();
    lane_values_.clear();
    vector_memo_.clear();
  }

  // ---- printing ----------------------------------------------------------------------------

  CExpr print(const ir::Expr& e) {
    if (!e.defined()) throw InternalError("nnvm.codegen.undefined_expr", "undefined expression", context());
    bool memo = e.dtype().is_vector();
    if (memo)
      if (auto it = vector_memo_.find(e.get()); it != vector_memo_.end()) return it->second;
    visit_expr(e);
    if (memo && result_.atom) vector_memo_[e.get()] = result_;
    return std::move(result_);
  }
  // A vector node shared within one statement (the same Load feeding several operands) is
  // computed once; the temporaries are not reused across statements, which may store between.
  void visit_stmt(const ir::Stmt& s) override {
    vector_memo_.clear();
    ir::IRVisitor::visit_stmt(s);
  }
  // `e` as an operand of an operator of precedence p (right: the right-hand side).
  static std::string operand(const CExpr& e, int p, bool right = false) {
    return e.prec < p || (right && e.prec == p) ? "(" + e.text + ")" : e.text;
  }
  // Text that may be repeated: `e` itself when it is an atom, else a new const temporary.
  std::string atom(const CExpr& e, DataType t, const char* hint = "t") {
    if (e.atom) return e.text;
    std::string name = names_.fresh(hint);
    line(str_cat("const ", type_name(t), " ", name, " = ", e.text, ";"));
    return name;
  }
  std::string type_name(DataType t) { return t.is_vector() ? vector_type(t) : scalar_type(t); }

  void emit_body(const ir::Stmt& s) { visit_stmt(s); }

  // What a kernel body touches: buffers it stores, buffers and variables it uses.
  struct Scan : ir::IRVisitor {
    std::unordered_set<const ir::BufferNode*> stored, used;
    std::unordered_set<const ir::VarNode*> vars;
    using ir::IRVisitor::visit;
    void visit(const ir::Store* op) override {
      stored.insert(op->buffer.get());
      used.insert(op->buffer.get());
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Load* op) override {
      used.insert(op->buffer.get());
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::VarNode* op) override { vars.insert(op); }
  };

  void emit_serial_for(const ir::For* op) {
    CExpr mn = print(op->min), ext = print(op->extent);
    std::string end;
    if (ir::is_const_int(op->min, 0)) {
      end = ext.text;
    } else {
      std::string m = atom(mn, op->min.dtype(), "begin");
      mn = {m, cprec::primary, true};
      end = m + " + " + operand(ext, cprec::add, true);
    }
    std::string v = bind_var(op->loop_var);
    line(str_cat("for (", scalar_type(op->loop_var.dtype()), " ", v, " = ", mn.text, "; ", v, " < ", end, "; ++", v, ") {"));
    block(op->body);
    line("}");
    unbind_var(op->loop_var);
  }
  void block(const ir::Stmt& s) {
    indent_ += 2;
    visit_stmt(s);
    indent_ -= 2;
  }

  // An Allocate that becomes a private stack array; a symbolic or huge size is an error.
  void emit_stack_allocate(const ir::Allocate* op, const char* why) {
    int64_t count = 1;
    for (auto& d : op->buffer->shape) {
      const int64_t* c = ir::as_const_int(d);
      if (!c || *c < 0 || (count = count * *c) * op->buffer->dtype.bytes() > dialect_.max_private_bytes)
        throw BackendError("nnvm.codegen.allocate_size",
                           str_cat("allocation ", op->buffer->name, " is ", why,
                                   " storage, which needs a constant size of at most ", dialect_.max_private_bytes,
                                   " bytes; move it out of the parallel loop or give it a constant shape"),
                           context());
    }
    std::string name = bind_buffer(op->buffer);
    emit_stack_array(name, op->buffer->dtype, count);
    visit_stmt(op->body);
    unbind_buffer(op->buffer);
  }

  // The conversion helpers the printed code calls, in the dialect's spelling.
  std::string storage_helpers_source() const { return target::storage_helpers_source(dialect_, needs_storage_); }

  static std::string vector_elem_name(DataType t) {
    if (t.is_bool()) return "uint8";
    if (t.is_storage_only()) return "uint16";
    return t.element_of().str();
  }

  // ---- literals ------------------------------------------------------------------------------

  virtual CExpr float_literal(double v, DataType t) {
    if (t.is_storage_only()) {
      uint16_t bits = t.code == DataType::Code::BFloat ? bfloat16::from_float(float(v)) : float16::from_float(float(v));
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%04x", unsigned(bits));
      return {"(" + scalar_type(t) + ")" + buf, cprec::unary};
    }
    bool f32 = t.bits == 32;
    // float64 NaN and infinity: the float32 constants, cast (both convert exactly).
    std::string as_t = f32 ? "" : "(" + scalar_type(t) + ")";
    if (std::isnan(v)) return {as_t + dialect_.nan, f32 ? cprec::primary : cprec::unary, true};
    if (std::isinf(v)) {
      std::string s = as_t + dialect_.infinity;
      return v > 0 ? CExpr{s, f32 ? cprec::primary : cprec::unary, true} : CExpr{"-" + s, cprec::unary, true};
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, f32 ? "%.9g" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    if (f32) s += "f";
    return {s, v < 0 || std::signbit(v) ? cprec::unary : cprec::primary, true};
  }
  CExpr int_literal(DataType t, int64_t v) const {
    std::string s;
    if (t.bits == 64 && (v < INT32_MIN || v > INT32_MAX))
      s = v == INT64_MIN ? "(-" + fill(dialect_.int64_literal, {{"value", "9223372036854775807"}}) + " - 1)"
                         : fill(dialect_.int64_literal, {{"value", std::to_string(v)}});
    else if (t.bits == 32 && v == INT32_MIN)
      s = "(-2147483647 - 1)";
    else
      s = std::to_string(v);
    return {s, s[0] == '-' ? cprec::unary : cprec::primary, s[0] != '('};
  }
  CExpr uint_literal(DataType t, uint64_t v) const {
    if (t.is_bool() || t.bits < 32) return {std::to_string(v), cprec::primary, true};
    if (v > 0xffffffffu) return {fill(dialect_.uint64_literal, {{"value", std::to_string(v)}}), cprec::primary, true};
    return {std::to_string(v) + "u", cprec::primary, true};
  }

  // ---- expressions ---------------------------------------------------------------------------

  using ir::IRVisitor::visit;

  void visit(const ir::IntImm* op) override { result_ = int_literal(op->dtype, op->value); }
  void visit(const ir::UIntImm* op) override { result_ = uint_literal(op->dtype, op->value); }
  void visit(const ir::FloatImm* op) override { result_ = float_literal(op->value, op->dtype); }
  void visit(const ir::VarNode* op) override {
    if (auto it = lane_values_.find(op); it != lane_values_.end()) {
      result_ = it->second;
      return;
    }
    auto it = vars_.find(op);
    if (it == vars_.end() || it->second.empty())
      throw InternalError("nnvm.codegen.unbound_var",
                          str_cat("variable ", op->name, " is used but is not a size, loop or let variable in scope"),
                          context());
    result_ = {it->second.back(), cprec::primary, true};
  }

#define NNVM_C_ARITH(Node, sym, p) \
  void visit(const ir::Node* op) override { result_ = arith(op, sym, p); }
  NNVM_C_ARITH(Add, "+", cprec::add)
  NNVM_C_ARITH(Sub, "-", cprec::add)
  NNVM_C_ARITH(Mul, "*", cprec::mul)
  NNVM_C_ARITH(Div, "/", cprec::mul)
  NNVM_C_ARITH(Mod, "%", cprec::mul)
#undef NNVM_C_ARITH
#define NNVM_C_CMP(Node, sym, p) \
  void visit(const ir::Node* op) override { result_ = compare(op, sym, p); }
  NNVM_C_CMP(EQ, "==", cprec::eq)
  NNVM_C_CMP(NE, "!=", cprec::eq)
  NNVM_C_CMP(LT, "<", cprec::rel)
  NNVM_C_CMP(LE, "<=", cprec::rel)
  NNVM_C_CMP(GT, ">", cprec::rel)
  NNVM_C_CMP(GE, ">=", cprec::rel)
#undef NNVM_C_CMP

  void visit(const ir::Min* op) override { result_ = min_max(op, "<"); }
  void visit(const ir::Max* op) override { result_ = min_max(op, ">"); }

  void visit(const ir::And* op) override { result_ = logical(op, "&&", "&", cprec::log_and, cprec::bit_and); }
  void visit(const ir::Or* op) override { result_ = logical(op, "||", "|", cprec::log_or, cprec::bit_or); }
  void visit(const ir::Not* op) override {
    CExpr a = print(op->a);
    if (op->dtype.is_vector()) {
      result_ = {bit_operand(a) + " ^ 1", cprec::bit_xor};
    } else {
      result_ = {"!" + operand(a, cprec::unary), cprec::unary};
    }
  }

  void visit(const ir::Select* op) override {
    if (op->dtype.is_vector()) {
      result_ = lanewise({op->condition, op->true_value, op->false_value},
                         [](const std::vector<ir::Expr>& x) { return ir::Select::make(x[0], x[1], x[2]); });
      return;
    }
    // Only the chosen branch runs (a guarded load may be out of bounds in the other one), so a
    // branch that needs statements of its own turns the select into an if/else.
    CExpr c = print(op->condition);
    auto [pre_t, t] = isolated(op->true_value);
    auto [pre_f, f] = isolated(op->false_value);
    if (pre_t.empty() && pre_f.empty()) {
      result_ = {str_cat(operand(c, cprec::log_or), " ? ", operand(t, cprec::log_or), " : ", operand(f, cprec::cond)),
                 cprec::cond};
      return;
    }
    std::string tmp = names_.fresh("t");
    line(str_cat(type_name(op->dtype), " ", tmp, ";"));
    line(str_cat("if (", c.text, ") {"));
    out_ += pre_t;
    line(str_cat("  ", tmp, " = ", t.text, ";"));
    line("} else {");
    out_ += pre_f;
    line(str_cat("  ", tmp, " = ", f.text, ";"));
    line("}");
    result_ = {tmp, cprec::primary, true};
  }

  void visit(const ir::Cast* op) override {
    if (op->dtype.is_vector()) {
      DataType to = op->dtype.element_of();
      result_ = lanewise({op->value}, [to](const std::vector<ir::Expr>& x) { return ir::Cast::make(to, x[0]); });
      return;
    }
    DataType from = op->value.dtype(), to = op->dtype;
    CExpr v = print(op->value);
    if (from.is_storage_only()) {
      v = {storage_to_float(from, v.text), cprec::primary};
      from = dtype::float32;
      if (to == from) { result_ = v; return; }
    }
    if (to.is_bool()) {
      result_ = {operand(v, cprec::rel) + " != 0", cprec::eq};
    } else if (to.is_storage_only()) {
      std::string f = from == dtype::float32 ? v.text : "(" + scalar_type(dtype::float32) + ")" + operand(v, cprec::unary);
      result_ = {float_to_storage(to, f), cprec::primary};
    } else {
      result_ = {"(" + scalar_type(to) + ")" + operand(v, cprec::unary), cprec::unary};
    }
  }

  void visit(const ir::Call* op) override {
    if (op->dtype.is_vector() || op->args[0].dtype().is_vector()) {
      ir::CallOp c = op->op;
      result_ = lanewise(op->args, [c](const std::vector<ir::Expr>& x) { return ir::Call::make(c, x); });
      return;
    }
    DataType t = op->args[0].dtype();
    std::vector<CExpr> a;
    for (auto& x : op->args) a.push_back(print(x));
    if (ir::is_bitwise(op->op)) {
      result_ = bitwise(op->op, t, a);
      return;
    }
    CExpr one = float_literal(1.0, t);
    switch (op->op) {
      case ir::CallOp::sigmoid:
        result_ = {str_cat(one.text, " / (", one.text, " + ", math_function(ir::CallOp::exp, t), "(-",
                           operand(a[0], cprec::unary), "))"),
                   cprec::mul};
        return;
      case ir::CallOp::rsqrt:
        result_ = {str_cat(one.text, " / ", math_function(ir::CallOp::sqrt, t), "(", a[0].text, ")"), cprec::mul};
        return;
      case ir::CallOp::isnan:
      case ir::CallOp::isinf:
        // C only promises a non-zero int (glibc's isinf gives -1 for -inf); a bool is 0 or 1.
        result_ = {str_cat(dialect_.math_name(op->op), "(", a[0].text, ") != 0"), cprec::eq};
        return;
      case ir::CallOp::abs:
        if (!t.is_float()) {
          std::string x = atom(a[0], t);
          CExpr r{str_cat(x, " < 0 ? -", x, " : ", x), cprec::cond};
          result_ = t.bits < 32 ? CExpr{"(" + scalar_type(t) + ")(" + r.text + ")", cprec::unary} : r;
          return;
        }
        break;
      default: break;
    }
    std::string s = math_function(op->op, t) + "(";
    for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i].text;
    result_ = {s + ")", cprec::primary};
  }

  void visit(const ir::Load* op) override {
    if (op->dtype.is_vector()) {
      if (auto* r = op->index.as<ir::Ramp>(); r && ir::is_const_int(r->stride, 1)) {
        result_ = contiguous_load(buffer_name(op->buffer), print(r->base), op->dtype);
        return;
      }
      ir::Buffer b = op->buffer;
      result_ = lanewise({op->index}, [b](const std::vector<ir::Expr>& x) { return ir::Load::make(b, x[0]); },
                         /*gather=*/true);
      return;
    }
    CExpr i = print(op->index);
    result_ = {buffer_name(op->buffer) + "[" + i.text + "]", cprec::primary};
  }

  void visit(const ir::Ramp* op) override { result_ = materialize_lanes(op->dtype, ramp_lane(op)); }
  void visit(const ir::Broadcast* op) override {
    std::string s = atom(print(op->value), op->value.dtype());
    std::string values;
    for (int l = 0; l < op->lanes; ++l) values += (l ? ", " : "") + s;
    result_ = {fill(dialect_.broadcast, {{"type", vector_type(op->dtype)}, {"lanes", std::to_string(op->lanes)},
                                         {"value", s}, {"values", values}}),
               cprec::primary};
  }
  void visit(const ir::Let* op) override {
    CExpr v = print(op->value);
    std::string name = names_.fresh(op->var.name());
    line(str_cat("const ", type_name(op->value.dtype()), " ", name, " = ", v.text, ";"));
    bind_var_as(op->var, name);
    CExpr b = print(op->body);
    unbind_var(op->var);
    result_ = b;
  }
  void visit(const ir::Reduce*) override { not_lowered("Reduce"); }
  void visit(const ir::ProducerLoad*) override { not_lowered("ProducerLoad"); }

  // ---- statements ----------------------------------------------------------------------------

  void visit(const ir::For* op) override {
    switch (op->for_kind) {
      case ir::ForKind::parallel: return emit_parallel_for(op);
      case ir::ForKind::thread_binding: return emit_thread_bound_for(op);
      default: return emit_serial_for(op);
    }
  }
  void visit(const ir::Store* op) override {
    const std::string& buf = buffer_name(op->buffer);
    DataType t = op->value.dtype();
    if (t.is_vector()) {
      if (auto* r = op->index.as<ir::Ramp>(); r && ir::is_const_int(r->stride, 1)) {
        CExpr base = print(r->base);
        std::string v = atom(print(op->value), t, "v");
        contiguous_store(buf, base, v, t);
        return;
      }
      CExpr i = lane_value(op->index), v = lane_value(op->value);
      line(str_cat("for (", dialect_.int_type, " lane = 0; lane < ", t.lanes, "; ++lane) ", buf, "[", i.text, "] = ",
                   v.text, ";"));
      return;
    }
    CExpr i = print(op->index), v = print(op->value);
    line(str_cat(buf, "[", i.text, "] = ", v.text, ";"));
  }
  void visit(const ir::Allocate* op) override { emit_allocate(op); }
  void visit(const ir::IfThenElse* op) override {
    CExpr c = print(op->condition);
    line("if (" + c.text + ") {");
    block(op->then_case);
    if (op->else_case.defined()) {
      line("} else {");
      block(op->else_case);
    }
    line("}");
  }
  void visit(const ir::LetStmt* op) override {
    CExpr v = print(op->value);
    std::string name = bind_var(op->var);
    line(str_cat("const ", type_name(op->value.dtype()), " ", name, " = ", v.text, ";"));
    const ir::VarNode* var = op->var.get();
    if (!ir::uses_var_if(op->body, [var](const ir::VarNode* n) { return n == var; })) line("(void)" + name + ";");
    visit_stmt(op->body);
    unbind_var(op->var);
  }
  void visit(const ir::Evaluate* op) override {
    if (ir::is_const(op->value)) return;
    CExpr v = print(op->value);
    line("(void)(" + v.text + ");");
  }
  void visit(const ir::Barrier* op) override { emit_barrier(op); }
  void visit(const ir::ProducerStore*) override { not_lowered("ProducerStore"); }
  void visit(const ir::ProducerRealize*) override { not_lowered("ProducerRealize"); }

 private:
  std::unordered_map<const ir::VarNode*, std::vector<std::string>> vars_;
  std::unordered_map<const ir::BufferNode*, std::vector<std::string>> buffers_;
  // Placeholder variables standing for one lane of a vector operand inside a lane loop.
  std::unordered_map<const ir::VarNode*, CExpr> lane_values_;
  std::unordered_map<const ir::ExprNode*, CExpr> vector_memo_;
  CExpr result_;

  [[noreturn]] void not_lowered(const char* node) const {
    throw InternalError("nnvm.codegen.not_lowered",
                        str_cat(node, " reached the emitter; lower() removes it (see docs/lowered_ir.md)"), context());
  }

  // Prints `e` into a separate buffer, one level deeper, returning (statements, value).
  std::pair<std::string, CExpr> isolated(const ir::Expr& e) {
    std::string saved = std::move(out_);
    out_.clear();
    indent_ += 2;
    CExpr v = print(e);
    indent_ -= 2;
    std::string pre = std::move(out_);
    out_ = std::move(saved);
    return {std::move(pre), std::move(v)};
  }

  std::string storage_to_float(DataType t, const std::string& v) {
    bool bf = t.code == DataType::Code::BFloat;
    needs_storage_[int(bf ? StorageHelper::bf16_to_f32 : StorageHelper::f16_to_f32)] = true;
    return (bf ? "nnvm_bf16_to_f32(" : "nnvm_f16_to_f32(") + v + ")";
  }
  std::string float_to_storage(DataType t, const std::string& v) {
    bool bf = t.code == DataType::Code::BFloat;
    needs_storage_[int(bf ? StorageHelper::f32_to_bf16 : StorageHelper::f32_to_f16)] = true;
    return (bf ? "nnvm_f32_to_bf16(" : "nnvm_f32_to_f16(") + v + ")";
  }

  // Operands of & | ^ are parenthesized unless primary, which also keeps -Wparentheses quiet.
  static std::string bit_operand(const CExpr& e) { return e.prec >= cprec::unary ? e.text : "(" + e.text + ")"; }

  template <class N>
  CExpr arith(const N* op, const char* sym, int p) {
    DataType t = op->dtype;
    bool native = t.is_vector() && !t.is_bool() &&
                  (N::kKind == ir::ExprKind::Add || N::kKind == ir::ExprKind::Sub || N::kKind == ir::ExprKind::Mul ||
                   (N::kKind == ir::ExprKind::Div && t.is_float()));
    if (t.is_vector() && !native)
      return lanewise({op->a, op->b}, [](const std::vector<ir::Expr>& x) { return N::make(x[0], x[1]); });
    if (t.is_vector()) {
      // A broadcast operand becomes the scalar: vector-op-scalar is supported and cheaper.
      auto side = [&](const ir::Expr& e, const ir::Expr& other) {
        if (auto* b = e.as<ir::Broadcast>(); b && !other.as<ir::Broadcast>())
          return CExpr{atom(print(b->value), b->value.dtype()), cprec::primary, true};
        return print(e);
      };
      CExpr a = side(op->a, op->b), b = side(op->b, op->a);
      return {operand(a, p) + " " + sym + " " + operand(b, p, true), p};
    }
    CExpr a = print(op->a), b = print(op->b);
    if (N::kKind == ir::ExprKind::Mod && t.is_float())
      return {str_cat(math_function(ir::CallOp::fmod, t), "(", a.text, ", ", b.text, ")"), cprec::primary};
    std::string at = operand(a, p), bt = operand(b, p, true);
    // Two int64 literals would be computed in int and could overflow: widen one.
    if (t.bits == 64 && t.is_integer() && ir::is_const(op->a) && ir::is_const(op->b))
      at = "(" + scalar_type(t) + ")" + operand(a, cprec::unary);
    if (t.is_integer() && t.bits < 32) {
      // C computes narrow types in int; wrap back to the type's width. uint16 products would
      // overflow int, so they are computed in uint32.
      if (t.is_uint() && N::kKind == ir::ExprKind::Mul) at = "(" + scalar_type(dtype::uint32) + ")" + operand(a, cprec::unary);
      return {str_cat("(", scalar_type(t), ")(", at, " ", sym, " ", bt, ")"), cprec::unary};
    }
    return {at + " " + sym + " " + bt, p};
  }

  // C's integer operators, cast back to t because narrow types compute in int. Shifts follow
  // ir::CallOp: an amount outside [0, bits) (a negative one reads as a huge unsigned value) gives
  // 0, or the sign bits for a signed right shift; left shifts run on an unsigned type wide
  // enough that no bit overflows, so no shift is undefined.
  CExpr bitwise(ir::CallOp op, DataType t, const std::vector<CExpr>& a) {
    std::string ty = scalar_type(t);
    auto cast = [&](const std::string& s) { return CExpr{"(" + ty + ")(" + s + ")", cprec::unary}; };
    switch (op) {
      case ir::CallOp::bitwise_and: return cast(bit_operand(a[0]) + " & " + bit_operand(a[1]));
      case ir::CallOp::bitwise_or: return cast(bit_operand(a[0]) + " | " + bit_operand(a[1]));
      case ir::CallOp::bitwise_xor: return cast(bit_operand(a[0]) + " ^ " + bit_operand(a[1]));
      case ir::CallOp::bitwise_not: return cast("~" + operand(a[0], cprec::unary));
      default: break;
    }
    std::string amount = atom(a[1], t), bits = std::to_string(t.bits);
    std::string u64 = "(" + scalar_type(dtype::uint64) + ")";
    std::string in_range = str_cat(u64, amount, " < ", bits);
    if (op == ir::CallOp::shift_left) {
      std::string x = operand(a[0], cprec::unary);
      if (t.bits < 32) x = "(" + scalar_type(DataType::uint(t.bits)) + ")" + x;
      x = (t.bits == 64 ? u64 : "(" + scalar_type(dtype::uint32) + ")") + x;
      return cast(str_cat(in_range, " ? ", x, " << ", amount, " : 0"));
    }
    if (t.is_int())
      return cast(str_cat(operand(a[0], cprec::mul), " >> (", in_range, " ? ", amount, " : ", t.bits - 1, ")"));
    return cast(str_cat(in_range, " ? ", operand(a[0], cprec::mul), " >> ", amount, " : 0"));
  }

  template <class N>
  CExpr compare(const N* op, const char* sym, int p) {
    if (op->dtype.is_vector())
      return lanewise({op->a, op->b}, [](const std::vector<ir::Expr>& x) { return N::make(x[0], x[1]); });
    CExpr a = print(op->a), b = print(op->b);
    // Comparisons of comparisons get parentheses, as -Wparentheses asks.
    return {operand(a, cprec::rel + 1) + " " + sym + " " + operand(b, cprec::rel + 1), p};
  }

  template <class N>
  CExpr min_max(const N* op, const char* sym) {
    if (op->dtype.is_vector())
      return lanewise({op->a, op->b}, [](const std::vector<ir::Expr>& x) { return N::make(x[0], x[1]); });
    std::string a = atom(print(op->a), op->dtype), b = atom(print(op->b), op->dtype);
    // Floats: a NaN on either side gives NaN (IEEE 754-2019 minimum/maximum; docs/lowered_ir.md).
    if (op->dtype.is_float()) return {str_cat(a, " ", sym, " ", b, " || ", a, " != ", a, " ? ", a, " : ", b), cprec::cond};
    return {str_cat(a, " ", sym, " ", b, " ? ", a, " : ", b), cprec::cond};
  }

  template <class N>
  CExpr logical(const N* op, const char* sym, const char* bit_sym, int p, int bit_p) {
    CExpr a = print(op->a), b = print(op->b);
    if (op->dtype.is_vector()) return {bit_operand(a) + " " + bit_sym + " " + bit_operand(b), bit_p};
    auto side = [&](const CExpr& e) {
      bool paren = e.prec < p || (p == cprec::log_or && e.prec == cprec::log_and);
      return paren ? "(" + e.text + ")" : e.text;
    };
    return {side(a) + " " + sym + " " + side(b), p};
  }

  // One lane of `e` as text valid inside a `for (int lane ...)` loop: a scalar or broadcast is
  // its (hoisted) value, a ramp its formula, anything else an element of a vector temporary.
  CExpr lane_value(const ir::Expr& e) {
    if (e.dtype().is_scalar()) {
      CExpr s = print(e);
      return s.atom ? s : CExpr{atom(s, e.dtype()), cprec::primary, true};
    }
    if (auto* b = e.as<ir::Broadcast>()) return lane_value(b->value);
    if (auto* r = e.as<ir::Ramp>()) return ramp_lane(r);
    std::string v = atom(print(e), e.dtype(), "v");
    return {fill(dialect_.lane, {{"vector", v}, {"lane", "lane"}}), cprec::primary, true};
  }

  CExpr ramp_lane(const ir::Ramp* r) {
    std::string step = ir::is_const_int(r->stride, 1) ? "lane" : atom(print(r->stride), r->stride.dtype()) + " * lane";
    if (ir::is_const_int(r->base, 0)) return {step, step == "lane" ? cprec::primary : cprec::mul, true};
    return {"(" + atom(print(r->base), r->base.dtype()) + " + " + step + ")", cprec::primary, true};
  }

  // A vector temporary made from `lane` (text over the loop variable `lane`), returned as an
  // atom: a gather (`gather`: lanes loaded from scattered addresses) or lane-by-lane arithmetic.
  // Where the dialect builds a vector from per-lane values, a gather and any vector of at most 4
  // lanes is one initializer with each lane spelled out: a loop of lane stores makes GCC and
  // clang's WebAssembly back end assemble such a vector in memory (scalar stores, then a vector
  // load that store forwarding cannot serve), several times slower. Wider arithmetic keeps the
  // loop: spelled out, 16 lanes of a NaN-propagating max (relu) cost ResNet-18 5 % through GCC
  // on AVX-512 and gained SqueezeNet 22 %; the lasting fix is printing selects, comparisons and
  // min/max as vector operations.
  CExpr materialize_lanes(DataType t, const CExpr& lane, bool gather = false) {
    std::string v = names_.fresh("v");
    std::string type = vector_type(t);
    if (t.lanes <= (gather ? 16 : 4) && dialect_.broadcast.find("${values}") != std::string::npos) {
      std::string values;
      for (int k = 0; k < t.lanes; ++k) values += str_cat(k ? ", " : "", with_lane(lane.text, k));
      line(str_cat(type, " ", v, " = ",
                   fill(dialect_.broadcast, {{"type", type}, {"lanes", std::to_string(t.lanes)}, {"value", ""},
                                             {"values", values}}),
                   ";"));
      return {v, cprec::primary, true};
    }
    line(str_cat(type, " ", v, " = ", fill(dialect_.vector_zero, {{"type", type}}), ";"));
    line(str_cat("for (", dialect_.int_type, " lane = 0; lane < ", t.lanes, "; ++lane) ",
                 fill(dialect_.lane, {{"vector", v}, {"lane", "lane"}}), " = ", lane.text, ";"));
    return {v, cprec::primary, true};
  }

  // `text` with every identifier `lane` (the lane loop's variable; no other name is `lane`)
  // replaced by the constant `k`.
  static std::string with_lane(const std::string& text, int k) {
    auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::string out;
    for (size_t i = 0; i < text.size();) {
      if (text.compare(i, 4, "lane") == 0 && (i == 0 || !ident(text[i - 1])) && (i + 4 >= text.size() || !ident(text[i + 4]))) {
        out += "(" + std::to_string(k) + ")";
        i += 4;
      } else {
        out += text[i++];
      }
    }
    return out;
  }

  // Computes a vector node lane by lane: `build` makes the scalar node from one lane of each
  // operand, and the scalar printing rules give its text (`gather`: see materialize_lanes).
  template <class Build>
  CExpr lanewise(const std::vector<ir::Expr>& operands, Build build, bool gather = false) {
    std::vector<ir::Expr> lanes;
    std::vector<ir::Var> placeholders;
    int n = 1;
    for (auto& x : operands) {
      n = std::max<int>(n, x.dtype().lanes);
      ir::Var p("lane", x.dtype().element_of());
      lane_values_[p.get()] = lane_value(x);
      placeholders.push_back(p);
      lanes.push_back(p);
    }
    ir::Expr scalar = build(lanes);
    // Printing a node over atoms adds no statements, so the text is valid inside the loop.
    CExpr text = print(scalar);
    for (auto& p : placeholders) lane_values_.erase(p.get());
    return materialize_lanes(scalar.dtype().with_lanes(n), text, gather);
  }
};

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/c_like.hpp
// begin nnvm/target/c_emitter.hpp
// The C dialect: lowered kernels as one self-contained C99 source (GCC/Clang vector extensions
// for vector values) that compiles with `cc -std=c99 -Wall -Wextra -Werror -pedantic`.
//
// Each kernel `name` exports the calling convention of docs/lowered_ir.md,
//   int32_t name(void* const* args, const int64_t* sizes, void* workspace,
//                uint64_t workspace_bytes, const nnvm_kernel_env* env);
// and `uint64_t name_workspace_bytes(const int64_t* sizes)`.
// Memory: every global-scope Allocate outside parallel loops gets its own 64-byte aligned slice
// of the caller's workspace (no reuse between allocations: that is the storage planner's job);
// local-scope Allocates of constant size, and every Allocate inside a parallel loop, are stack
// arrays private to their scope (inside a parallel loop a symbolic or >64 KiB size is a
// BackendError, nnvm.codegen.allocate_size). The kernel never calls malloc and returns
// NNVM_STATUS_WORKSPACE_TOO_SMALL when workspace_bytes is too small.
// Parallel loops are outlined into static functions taking a closure struct and run through
// env->parallel_for (serially when env or env->parallel_for is NULL); parallel loops nested in
// them run serially.
// A standalone module (CModuleOptions::standalone: c-standalone, wasm) is one translation unit
// of a program with no runtime: its kernels are static, it exports no _workspace_bytes functions
// (constant_workspace_bytes gives the caller each kernel's need at compile time), and its
// parallel loops run serially in place.

#include <algorithm>
#include <set>
#include <unordered_set>

// begin nnvm/target/kernel_abi_source.hpp
// The kernel ABI (nnvm/runtime/kernel_abi.h) as C source text, for pasting into
// generated C and generated headers so that they stand alone.

#include <string>

// begin nnvm/runtime/kernel_abi.h
/* The binary interface between compiled nnvm kernels and whoever calls them (the C JIT, the
 * LLVM JIT, the deploy runtime, or a user's own C program). Plain C99.
 *
 * A kernel is
 *   int32_t name(void* const* args, const int64_t* sizes, void* workspace,
 *                uint64_t workspace_bytes, const nnvm_kernel_env* env);
 * args[i] is the data of tensor parameter i, sizes[j] the value of symbolic size j (see
 * docs/lowered_ir.md). workspace is caller-owned scratch memory, 64-byte aligned, of at least
 * name_workspace_bytes(sizes) bytes; it may be NULL when that is 0. env may be NULL: parallel
 * loops then run serially. The kernel returns 0 on success or one of the nnvm_status codes.
 *
 * The declarations live in one macro so that the C emitter can paste this very text into
 * generated sources (which must stand alone) without a second copy: see kernel_abi_source()
 * in nnvm/target/c_like.hpp. Comments inside the macro vanish when it is stringified. */
#ifndef NNVM_KERNEL_ABI_H
#define NNVM_KERNEL_ABI_H

#include <stdint.h>

#define NNVM_KERNEL_ABI_DECLS                                                               \
  /* Status codes a kernel (or a parallel body) returns. */                                \
  enum nnvm_status {                                                                        \
    NNVM_STATUS_OK = 0,                                                                     \
    NNVM_STATUS_WORKSPACE_TOO_SMALL = 1, /* workspace_bytes < name_workspace_bytes(sizes) */ \
    NNVM_STATUS_RUNTIME_FAILURE = 2      /* the thread pool could not run a parallel loop */ \
  };                                                                                        \
  /* One chunk [begin, end) of a parallel loop's iterations; returns a status. */           \
  typedef int32_t (*nnvm_parallel_body)(int64_t begin, int64_t end, void* closure);        \
  /* Runs body over [0, n) in chunks, possibly concurrently; returns the first non-zero     \
     status of any chunk. */                                                                \
  typedef int32_t (*nnvm_parallel_for_fn)(void* pool, int64_t n, nnvm_parallel_body body,  \
                                          void* closure);                                  \
  /* What the caller lends a kernel. pool is opaque to the kernel. */                       \
  typedef struct nnvm_kernel_env {                                                          \
    void* pool;                                                                             \
    nnvm_parallel_for_fn parallel_for;                                                      \
  } nnvm_kernel_env;                                                                        \
  typedef int32_t (*nnvm_kernel_fn)(void* const* args, const int64_t* sizes, void* workspace, \
                                    uint64_t workspace_bytes, const nnvm_kernel_env* env); \
  typedef uint64_t (*nnvm_workspace_bytes_fn)(const int64_t* sizes);

NNVM_KERNEL_ABI_DECLS

#endif /* NNVM_KERNEL_ABI_H */
// end nnvm/runtime/kernel_abi.h

NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {
#define NNVM_KERNEL_ABI_STR_(...) #__VA_ARGS__
#define NNVM_KERNEL_ABI_STR(...) NNVM_KERNEL_ABI_STR_(__VA_ARGS__)
// Lays the one-line stringified declarations out one per line, with braces indented.
inline std::string format_c_decls(const std::string& text) {
  std::string out;
  int indent = 0, paren = 0;
  bool at_start = true;
  auto newline = [&] {
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
    at_start = true;
  };
  auto put = [&](char c) {
    if (at_start) {
      if (c == ' ') return;
      out.append(size_t(indent), ' ');
      at_start = false;
    }
    out += c;
  };
  for (char c : text) {
    if (c == '{') {
      put('{');
      indent += 2;
      newline();
    } else if (c == '}') {
      if (!at_start) newline();
      indent -= 2;
      put('}');
    } else if ((c == ';' || (c == ',' && indent > 0)) && paren == 0) {
      put(c);
      newline();
    } else {
      paren += c == '(' ? 1 : c == ')' ? -1 : 0;
      put(c);
    }
  }
  return out;
}
}  // namespace detail

// kernel_abi.h's declarations under its own include guard, for pasting into generated C so
// that the source stands alone. The text comes from the NNVM_KERNEL_ABI_DECLS macro, the only
// definition of the ABI.
inline const std::string& kernel_abi_source() {
  static const std::string text =
      "#ifndef NNVM_KERNEL_ABI_H\n#define NNVM_KERNEL_ABI_H\n#include <stdint.h>\n" +
      detail::format_c_decls(NNVM_KERNEL_ABI_STR(NNVM_KERNEL_ABI_DECLS)) + "#endif\n";
  return text;
}
#undef NNVM_KERNEL_ABI_STR
#undef NNVM_KERNEL_ABI_STR_

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/kernel_abi_source.hpp
// begin nnvm/target/kernel_signature.hpp
// What a compiled kernel states about its parameters, for a loader that must not trust its
// plan file: a deploy artifact's kernels.so exports, for each kernel symbol S, the C string
//   const char S_signature[] = "float32 [1x64x56x56];float32 [64]";
// (each parameter's dtype and shape in the deploy runtime's own spelling, in parameter order,
// ';' between them). The runtime compares model.json's parameter types with it, so an edited
// model.json cannot make a kernel read or write past the tensors it is given. Both back ends
// (the C emitter and LLVM object code) compile the same source from here into the library.

#include <string>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace target {

// The suffix of the exported signature string's symbol; emitters keep kernel symbols from
// colliding with it as they do with "_workspace_bytes".
inline constexpr const char* kSignatureSuffix = "_signature";

// "float32 [1x64]" for `b` (a symbolic extent is printed as its expression).
inline std::string param_type_text(const ir::Buffer& b) {
  std::string s = b->dtype.str() + " [";
  for (size_t d = 0; d < b->shape.size(); ++d) {
    ir::Expr e = ir::simplify(b->shape[d]);
    const int64_t* c = ir::as_const_int(e);
    s += (d ? "x" : "") + (c ? std::to_string(*c) : ir::to_string(e));
  }
  return s + "]";
}

// The signature of `fn`: its parameters' type texts joined by ';'.
inline std::string kernel_signature(const ir::LoweredFunc& fn) {
  std::string s;
  for (size_t p = 0; p < fn.params.size(); ++p) s += (p ? ";" : "") + param_type_text(fn.params[p]);
  return s;
}

// C99 source defining `<symbols[i]>_signature` for each kernel of `fns`.
inline std::string signatures_c_source(const std::vector<ir::LoweredFunc>& fns, const std::vector<std::string>& symbols) {
  std::string s = "\n/* Each kernel's parameter types, which the deploy runtime checks model.json against. */\n";
  for (size_t i = 0; i < fns.size(); ++i) {
    std::string text = kernel_signature(fns[i]);
    std::string quoted;
    for (char c : text) quoted += (c == '"' || c == '\\') ? std::string{'\\', c} : std::string(1, c);
    s += "const char " + symbols.at(i) + kSignatureSuffix + "[] = \"" + quoted + "\";\n";
  }
  return s;
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/kernel_signature.hpp
// begin nnvm/target/reserved_names.hpp
// Names a kernel symbol or a generated identifier must never take: C's keywords, everything the
// C99 <math.h>, <stdint.h> and <stddef.h> that generated C includes declare (functions in their
// double, float and long double forms, and macros), glibc's extra math functions, and the C
// library functions generated code or its loader calls. A kernel named after an op or a node
// ("nan", "exp", "floor", "free") would otherwise clash with the declaration (a compile error in
// the C emitter) or, exported from a shared library, capture the calls the library makes to that
// function (LLVM artifacts). Both emitters add a suffix to a name found here.

#include <string>
#include <unordered_set>


NNVM_BEGIN_NAMESPACE
namespace target {

inline const std::unordered_set<std::string>& reserved_c_names() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> s = {
        // keywords and main
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum", "extern",
        "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return", "short", "signed",
        "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "main",
        "bool", "true", "false",
        // <stdint.h>, <stddef.h>
        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t",
        "uintptr_t", "intmax_t", "uintmax_t", "size_t", "ptrdiff_t", "wchar_t", "max_align_t", "offsetof", "NULL",
        // <math.h> macros and types
        "INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "float_t", "double_t", "fpclassify", "isfinite",
        "isinf", "isnan", "isnormal", "signbit", "isgreater", "isgreaterequal", "isless", "islessequal",
        "islessgreater", "isunordered", "math_errhandling", "MATH_ERRNO", "MATH_ERREXCEPT", "FP_NAN", "FP_INFINITE",
        "FP_ZERO", "FP_SUBNORMAL", "FP_NORMAL", "FP_FAST_FMA", "FP_FAST_FMAF", "FP_ILOGB0", "FP_ILOGBNAN",
        // C library functions generated code or loaders call
        "memcpy", "memset", "memmove", "memcmp", "malloc", "calloc", "realloc", "free", "abort", "exit", "strlen",
        "printf", "puts", "errno"};
    // <math.h> functions (C99) and glibc's extras, each with its f and l forms.
    for (const char* f :
         {"acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh", "tanh",
          "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb", "modf", "scalbn",
          "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma", "tgamma", "ceil", "floor",
          "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround", "trunc", "fmod", "remainder", "remquo",
          "copysign", "nan", "nextafter", "nexttoward", "fdim", "fmax", "fmin", "fma", "j0", "j1", "jn", "y0", "y1",
          "yn", "gamma", "drem", "finite", "significand", "scalb", "exp10", "pow10", "sincos", "lgamma_r", "roundeven",
          "isinf", "isnan"}) {
      s.insert(f);
      s.insert(std::string(f) + "f");
      s.insert(std::string(f) + "l");
    }
    return s;
  }();
  return names;
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/reserved_names.hpp
// begin nnvm/target/storage_plan.hpp
// Decisions every CPU emitter (C, LLVM) makes the same way, so that they agree on the workspace
// layout and on what an outlined parallel body captures.

#include <unordered_set>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace target {

// The largest allocation (bytes) that lives on the stack instead of in the workspace.
inline constexpr int64_t kMaxStackBytes = 64 * 1024;

// A local-scope allocation of constant size small enough for the stack.
inline bool stack_eligible(const ir::Allocate* op) {
  if (op->buffer->scope != ir::MemoryScope::local) return false;
  int64_t bytes = op->buffer->dtype.bytes();
  for (auto& d : op->buffer->shape) {
    const int64_t* c = ir::as_const_int(d);
    if (!c || *c < 0 || (bytes *= *c) > kMaxStackBytes) return false;
  }
  return true;
}

// The allocations that take workspace: outside parallel loops and not stack-eligible, in
// first-visit order (the order of their slices in the workspace).
inline std::vector<const ir::Allocate*> workspace_allocations(const ir::Stmt& body) {
  struct Scan : ir::IRVisitor {
    int parallel_depth = 0;
    std::vector<const ir::Allocate*> workspace;
    using ir::IRVisitor::visit;
    void visit(const ir::For* op) override {
      int p = op->for_kind == ir::ForKind::parallel;
      parallel_depth += p;
      ir::IRVisitor::visit(op);
      parallel_depth -= p;
    }
    void visit(const ir::Allocate* op) override {
      if (parallel_depth == 0 && !stack_eligible(op)) workspace.push_back(op);
      ir::IRVisitor::visit(op);
    }
  } scan;
  scan.visit_stmt(body);
  return scan.workspace;
}

// Variables and buffers a parallel loop reads from its enclosing scope, in first-use order:
// what its outlined body must receive. `is_bound(node)` says whether a variable or buffer node
// is defined in the enclosing scope.
struct LoopCaptures {
  std::vector<const ir::VarNode*> vars;
  std::vector<ir::Buffer> buffers;
};

template <class IsBound>
LoopCaptures loop_captures(const ir::For* loop, IsBound is_bound) {
  struct Collect : ir::IRVisitor {
    IsBound& is_bound;
    LoopCaptures out;
    std::unordered_set<const void*> seen, inner;
    explicit Collect(IsBound& b) : is_bound(b) {}
    using ir::IRVisitor::visit;
    void visit(const ir::VarNode* op) override {
      if (inner.count(op) || !is_bound(op) || !seen.insert(op).second) return;
      out.vars.push_back(op);
    }
    void buffer(const ir::Buffer& b) {
      if (inner.count(b.get()) || !is_bound(b.get()) || !seen.insert(b.get()).second) return;
      out.buffers.push_back(b);
    }
    void visit(const ir::Load* op) override {
      buffer(op->buffer);
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Store* op) override {
      buffer(op->buffer);
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::Allocate* op) override {
      inner.insert(op->buffer.get());
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::For* op) override {
      inner.insert(op->loop_var.get());
      ir::IRVisitor::visit(op);
    }
    void visit(const ir::LetStmt* op) override {
      visit_expr(op->value);
      inner.insert(op->var.get());
      visit_stmt(op->body);
    }
    void visit(const ir::Let* op) override {
      visit_expr(op->value);
      inner.insert(op->var.get());
      visit_expr(op->body);
    }
  } c(is_bound);
  c.inner.insert(loop->loop_var.get());
  c.visit_expr(loop->min);
  c.visit_stmt(loop->body);
  return std::move(c.out);
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/storage_plan.hpp

NNVM_BEGIN_NAMESPACE
namespace target {

// C99 with GCC/Clang vector extensions: typedef'd vector types indexed by lane, compound-literal
// broadcasts, and memcpy for the bit casts of the float16/bfloat16 helpers.
inline const Dialect& c_dialect() {
  static const Dialect d = [] {
    Dialect c;
    c.types = {"uint8_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
               "uint32_t", "uint64_t", "uint16_t", "uint16_t", "float", "double", "void*"};
    c.int_type = "int";
    c.vector_type = "nnvm_${elem}x${lanes}";  // typedefs from used_vector_types_ (emit_module)
    c.vector_zero = "{0}";
    c.broadcast = "((${type}){${values}})";
    c.lane = "${vector}[${lane}]";
    // No vector_load/vector_store: CEmitter copies with memcpy, since a buffer element is not
    // aligned for a vector access.
    c.nan = "NAN";
    c.infinity = "INFINITY";
    c.int64_literal = "INT64_C(${value})";
    c.uint64_literal = "UINT64_C(${value})";
    c.restrict_qualifier = "restrict ";
    c.helper_qualifier = "static inline ";
    c.barrier = "// barrier: a no-op for one CPU thread";
    c.math_names = {{ir::CallOp::abs, "fabs"}, {ir::CallOp::round, "nearbyint"}};
    c.float32_math_suffix = "f";
    c.bit_copy = "__builtin_memcpy(&${dst}, &${src}, 4);";
    c.reserved_names = &reserved_c_names();
    c.max_private_bytes = kMaxStackBytes;
    return c;
  }();
  return d;
}

// C source for several kernels plus the exported symbol of each (kernel names are sanitized
// and made unique within the module: two kernels named "add" export add and add_1).
struct CModule {
  std::string source;
  std::vector<std::string> symbols;
};

// How emit_module links the kernels it prints.
struct CModuleOptions {
  // Part of a standalone program (no runtime, no threads): static kernels, no _workspace_bytes
  // functions, serial parallel loops.
  bool standalone = false;
  // Kernels (indices into the module's functions) that some call runs with an output over one
  // of its inputs (a standalone model's in-place elementwise steps): their buffer parameters are
  // not restrict, since they may be one buffer.
  std::set<size_t> aliasing_kernels;
};

// The workspace bytes a kernel with constant allocation sizes needs: the layout its
// _workspace_bytes function computes (each allocation 64-byte aligned, in first-visit order).
// Throws InternalError for a symbolic size (standalone kernels have static shapes).
inline uint64_t constant_workspace_bytes(const ir::LoweredFunc& fn) {
  uint64_t total = 0;
  for (const ir::Allocate* a : workspace_allocations(fn.body)) {
    uint64_t bytes = uint64_t(a->buffer->dtype.bytes());
    for (auto& d : a->buffer->shape) {
      const int64_t* c = ir::as_const_int(d);
      if (!c || *c < 0)
        throw InternalError("nnvm.codegen.allocate_size",
                            str_cat("allocation ", a->buffer->name, " has a symbolic size in a static kernel"),
                            {"kernel " + fn.name});
      bytes *= uint64_t(*c);
    }
    total += (bytes + 63) / 64 * 64;
  }
  return total;
}

class CEmitter : public CLikeEmitter {
 public:
  explicit CEmitter(CModuleOptions options = {}) : CLikeEmitter(c_dialect()), options_(options) {}

  CModule emit_module(const std::vector<ir::LoweredFunc>& fns) {
    CModule m;
    // Symbols avoid C keywords and the library functions the code calls, but not each other's
    // local names (a kernel's locals are distinct from every module-level name).
    NameTable reserved;
    std::swap(names_, reserved);
    reserve_names();
    std::swap(names_, reserved);
    for (auto& fn : fns) {
      std::string base = NameTable::sanitize(fn.name.empty() ? "kernel" : fn.name), name = base;
      // A kernel exports name, name_workspace_bytes and, in a deploy artifact, name_signature.
      auto clashes = [&](const std::string& n) {
        return reserved.taken(n) || module_names_.count(n) || module_names_.count(n + "_workspace_bytes") ||
               module_names_.count(n + kSignatureSuffix);
      };
      for (int k = 1; clashes(name); ++k) name = base + "_" + std::to_string(k);
      module_names_.insert(name);
      module_names_.insert(name + "_workspace_bytes");
      module_names_.insert(name + kSignatureSuffix);
      m.symbols.push_back(name);
    }
    std::string kernels;
    for (size_t i = 0; i < fns.size(); ++i) {
      restrict_ = options_.aliasing_kernels.count(i) == 0;
      kernels += "\n" + emit_kernel(fns[i], m.symbols[i]);
    }

    std::string& s = m.source;
    s = "// Generated by nnvm " + std::to_string(NNVM_VERSION_MAJOR) + "." + std::to_string(NNVM_VERSION_MINOR) +
        "." + std::to_string(NNVM_VERSION_PATCH) + ": C99" +
        (used_vector_types_.empty() ? "" : " with GCC/Clang vector extensions") + ".\n";
    for (size_t i = 0; i < fns.size(); ++i) s += "//   " + m.symbols[i] + ": " + comment_text(fns[i].origin) + "\n";
    s += "#include <math.h>\n#include <stddef.h>\n#include <stdint.h>\n\n" + kernel_abi_source();
    if (!used_vector_types_.empty()) s += "\n";
    for (auto& [name, t] : used_vector_types_)
      s += str_cat("typedef ", scalar_type(t.element_of()), " ", name, " __attribute__((vector_size(",
                   padded_lanes(t.lanes) * t.bytes(), ")));\n");
    std::string helpers = storage_helpers_source();
    if (needs_launch_)
      helpers += R"(static int32_t nnvm_parallel_launch(const nnvm_kernel_env* env, int64_t n, nnvm_parallel_body body, void* closure) {
  if (env != NULL && env->parallel_for != NULL) return env->parallel_for(env->pool, n, body, closure);
  return body(0, n, closure);
}
)";
    if (!helpers.empty()) s += "\n" + helpers;
    s += kernels;
    return m;
  }

 protected:
  CExpr contiguous_load(const std::string& buf, const CExpr& base, DataType t) override {
    std::string v = names_.fresh("v");
    line(str_cat(vector_type(t), " ", v, padded_lanes(t.lanes) != t.lanes ? " = {0}" : "", ";"));
    line(str_cat("__builtin_memcpy(&", v, ", &", buf, "[", base.text, "], ", t.lanes, " * sizeof(",
                 scalar_type(t.element_of()), "));"));
    return {v, cprec::primary, true};
  }
  void contiguous_store(const std::string& buf, const CExpr& base, const std::string& value, DataType t) override {
    line(str_cat("__builtin_memcpy(&", buf, "[", base.text, "], &", value, ", ", t.lanes, " * sizeof(",
                 scalar_type(t.element_of()), "));"));
  }
  void emit_stack_array(const std::string& name, DataType t, int64_t count) override {
    line(str_cat(scalar_type(t), " ", name, "[", std::max<int64_t>(count, 1), "] __attribute__((aligned(64)));"));
  }
  void emit_allocate(const ir::Allocate* op) override {
    auto it = workspace_offsets_.find(op);
    if (it == workspace_offsets_.end()) {
      emit_stack_allocate(op, in_parallel_ ? "inside a parallel loop, so per-iteration private" : "local-scope");
      return;
    }
    std::string name = bind_buffer(op->buffer), t = scalar_type(op->buffer->dtype);
    line(str_cat(t, "* ", name, " = (", t, "*)((char*)workspace + ", it->second, ");"));
    visit_stmt(op->body);
    unbind_buffer(op->buffer);
  }
  void emit_parallel_for(const ir::For* op) override {
    if (in_parallel_ || options_.standalone) return emit_serial_for(op);
    LoopCaptures cap = loop_captures(op, [&](const auto* node) { return is_bound(node); });
    CExpr extent = print(op->extent);
    std::string fname = names_.fresh(symbol_ + "_parallel_" + std::to_string(parallel_count_++));
    std::string sname = names_.fresh(fname + "_closure");
    module_names_.insert(fname);
    module_names_.insert(sname);
    std::vector<std::pair<std::string, std::string>> fields;  // (type, name)
    for (auto& b : cap.buffers) fields.push_back({pointer_type(b), buffer_name(b)});
    for (auto* v : cap.vars) fields.push_back({type_name(v->dtype), bound_var_name(v)});
    if (!fields.empty()) {
      std::string s = "typedef struct " + sname + " {\n";
      for (auto& [t, n] : fields) s += "  " + t + " " + n + ";\n";
      defs_ += s + "} " + sname + ";\n";
    }

    // The outlined body, printed with the same names for everything it captures. It takes the
    // captured buffers as restrict parameters (they never overlap), which is what lets the C
    // compiler keep accumulators in registers; a thin entry unpacks the closure into them.
    std::string saved = std::move(out_);
    int saved_indent = indent_;
    out_.clear();
    indent_ = 2;
    in_parallel_ = true;
    std::string closure = names_.fresh("closure"), begin = names_.fresh("begin"), end = names_.fresh("end");
    if (ir::is_const_int(op->min, 0) && op->loop_var.dtype() == dtype::int64) {
      std::string v = bind_var(op->loop_var);
      line(str_cat("for (int64_t ", v, " = ", begin, "; ", v, " < ", end, "; ++", v, ") {"));
    } else {
      std::string mn = atom(print(op->min), op->min.dtype(), "first");
      std::string it = names_.fresh("iter");
      line(str_cat("for (int64_t ", it, " = ", begin, "; ", it, " < ", end, "; ++", it, ") {"));
      std::string v = bind_var(op->loop_var), t = scalar_type(op->loop_var.dtype());
      line(str_cat("  const ", t, " ", v, " = (", t, ")(", mn, " + ", it, ");"));
    }
    block(op->body);
    line("}");
    unbind_var(op->loop_var);
    line("return NNVM_STATUS_OK;");
    std::string params = str_cat("int64_t ", begin, ", int64_t ", end), call_args = str_cat(begin, ", ", end);
    std::string c = names_.fresh("captured");
    for (size_t f = 0; f < fields.size(); ++f) {
      bool is_buffer = f < cap.buffers.size();
      params += str_cat(", ", fields[f].first, is_buffer && restrict_ ? " restrict " : " ", fields[f].second);
      call_args += str_cat(", ", c, "->", fields[f].second);
    }
    std::string body_fn = names_.fresh(fname + "_body");
    module_names_.insert(body_fn);
    defs_ += str_cat("static int32_t ", body_fn, "(", params, ") {\n", out_, "}\n");
    defs_ += str_cat("static int32_t ", fname, "(int64_t ", begin, ", int64_t ", end, ", void* ", closure, ") {\n",
                     fields.empty() ? str_cat("  (void)", closure, ";\n")
                                    : str_cat("  const ", sname, "* ", c, " = (const ", sname, "*)", closure, ";\n"),
                     "  return ", body_fn, "(", call_args, ");\n}\n");
    out_ = std::move(saved);
    indent_ = saved_indent;
    in_parallel_ = false;

    std::string status = names_.fresh("status"), arg = "NULL";
    line("{");
    if (!fields.empty()) {
      arg = names_.fresh("closure");
      std::string init;
      for (auto& f : fields) init += (init.empty() ? "" : ", ") + f.second;
      line(str_cat("  ", sname, " ", arg, " = {", init, "};"));
      arg = "&" + arg;
    }
    line(str_cat("  const int32_t ", status, " = nnvm_parallel_launch(env, ", extent.text, ", ", fname, ", ", arg, ");"));
    line(str_cat("  if (", status, " != 0) return ", status, ";"));
    line("}");
    needs_launch_ = uses_env_ = true;
  }

 private:
  CModuleOptions options_;
  bool restrict_ = true;  // the kernel being printed takes restrict buffers (not an aliasing one)
  std::set<std::string> module_names_;
  std::string symbol_, defs_;
  bool in_parallel_ = false, needs_launch_ = false, uses_env_ = false;
  int parallel_count_ = 0;
  std::unordered_map<const ir::Allocate*, std::string> workspace_offsets_;
  std::unordered_set<const ir::BufferNode*> stored_;

  // The common names and the kernel ABI's parameters.
  void reserve_names() {
    reserve_common_names();
    for (const char* w : {"args", "sizes", "workspace", "workspace_bytes", "env"}) names_.reserve(w);
  }
  // Lanes rounded up to a power of two: GCC/Clang vector sizes must be one.
  static int padded_lanes(int lanes) {
    int p = 1;
    while (p < lanes) p *= 2;
    return p;
  }

  static std::string comment_text(const std::string& s) {
    std::string out;
    for (char c : s) out += (c == '\n' || c == '\r') ? ' ' : c == '\\' ? '/' : c;
    return out.empty() ? "(origin not recorded)" : out;
  }
  std::string pointer_type(const ir::Buffer& b) const {
    return (stored_.count(b.get()) ? "" : "const ") + scalar_type(b->dtype) + "*";
  }

  // Emits the workspace layout; returns the name of the total byte count ("" when none).
  std::string emit_layout(const ir::LoweredFunc& fn, const std::vector<const ir::Allocate*>& plan, bool offsets) {
    if (plan.empty()) return "";
    std::string total = names_.fresh("workspace_needed");
    line("uint64_t " + total + " = 0;");
    for (auto* a : plan) {
      std::string bytes;
      int64_t constant = a->buffer->dtype.bytes();
      for (auto& d : a->buffer->shape) {
        if (auto* c = ir::as_const_int(d)) {
          constant *= *c;
          continue;
        }
        if (ir::uses_var_if(d, [&](const ir::VarNode* v) {
              return std::none_of(fn.size_vars.begin(), fn.size_vars.end(), [&](auto& s) { return s.get() == v; });
            }))
          throw BackendError("nnvm.codegen.allocate_size",
                             str_cat("allocation ", a->buffer->name,
                                     " has a size that depends on a loop or let variable; workspace sizes may only "
                                     "use the kernel's symbolic sizes"),
                             context());
        bytes += "(uint64_t)" + operand(print(d), cprec::unary) + " * ";
      }
      bytes += std::to_string(constant) + "u";
      if (offsets) {
        std::string off = names_.fresh(a->buffer->name + "_offset");
        line(str_cat("const uint64_t ", off, " = ", total, ";"));
        workspace_offsets_[a] = off;
      }
      line(str_cat(total, " += (", bytes, " + 63u) / 64u * 64u;"));
    }
    return total;
  }

  // Declares the size variables `pred` selects from sizes[]; returns how many.
  template <class Pred>
  int bind_sizes(const ir::LoweredFunc& fn, Pred pred) {
    int n = 0;
    for (size_t j = 0; j < fn.size_vars.size(); ++j) {
      const ir::Var& v = fn.size_vars[j];
      if (!pred(v.get())) continue;
      std::string name = bind_var(v), t = scalar_type(v.dtype());
      line(str_cat("const ", t, " ", name, " = ", t == "int64_t" ? "" : "(" + t + ")", "sizes[", j, "];"));
      ++n;
    }
    return n;
  }

  std::string emit_kernel(const ir::LoweredFunc& fn, const std::string& symbol) {
    kernel_name_ = fn.name;
    symbol_ = symbol;
    names_ = NameTable();
    reserve_names();
    for (auto& n : module_names_) names_.reserve(n);
    reset_scopes();
    defs_.clear();
    parallel_count_ = 0;
    uses_env_ = false;
    workspace_offsets_.clear();
    if (!fn.body.defined())
      throw InternalError("nnvm.codegen.empty_kernel", "kernel has no body", context());
    Scan scan;
    scan.visit_stmt(fn.body);
    stored_ = scan.stored;
    const std::vector<const ir::Allocate*> workspace = workspace_allocations(fn.body);
    std::unordered_set<const ir::VarNode*> layout_vars;
    for (auto* a : workspace)
      for (auto& d : a->buffer->shape)
        ir::uses_var_if(d, [&](const ir::VarNode* v) { return layout_vars.insert(v), false; });

    // name_workspace_bytes, printed with its own copy of the name table.
    NameTable kernel_names = names_;
    out_.clear();
    indent_ = 2;
    int n_sizes = bind_sizes(fn, [&](const ir::VarNode* v) { return layout_vars.count(v) != 0; });
    std::string total = emit_layout(fn, workspace, false);
    std::string ws = options_.standalone ? ""
                                         : str_cat("uint64_t ", symbol, "_workspace_bytes(const int64_t* sizes) {\n",
                                                   n_sizes ? "" : "  (void)sizes;\n", out_, "  return ",
                                                   total.empty() ? "0" : total, ";\n}\n");
    reset_scopes();
    names_ = kernel_names;

    // The kernel body takes the arguments as restrict parameters (kernel arguments never
    // overlap: bind_arguments checks it; CModuleOptions::aliasing_kernels are the exception),
    // so the C compiler may keep values in registers across stores; the exported entry point
    // unpacks `args` into them.
    out_.clear();
    std::string params, call_args, unused;
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const ir::Buffer& p = fn.params[i];
      std::string name = bind_buffer(p), t = pointer_type(p);
      params += str_cat(t, restrict_ ? " restrict " : " ", name, ", ");
      call_args += str_cat("(", t, ")args[", i, "], ");
      if (!scan.used.count(p.get())) unused += str_cat("  (void)", name, ";\n");
    }
    n_sizes = bind_sizes(fn, [&](const ir::VarNode* v) { return scan.vars.count(v) || layout_vars.count(v); });
    total = emit_layout(fn, workspace, true);
    if (!total.empty())
      line(str_cat("if (workspace_bytes < ", total, ") return NNVM_STATUS_WORKSPACE_TOO_SMALL;"));
    emit_body(fn.body);
    line("return NNVM_STATUS_OK;");

    if (!n_sizes) unused += "  (void)sizes;\n";
    if (total.empty()) unused += "  (void)workspace;\n  (void)workspace_bytes;\n";
    if (!uses_env_) unused += "  (void)env;\n";
    std::string body_fn = names_.fresh(symbol + "_body");
    std::string entry_unused = fn.params.empty() ? "  (void)args;\n" : "";
    return str_cat("// Kernel ", symbol, " (", comment_text(fn.origin), ")\n", defs_, ws, "static int32_t ", body_fn, "(",
                   params, "const int64_t* sizes, void* workspace, uint64_t workspace_bytes, const nnvm_kernel_env* env) {\n",
                   unused, out_, "}\n", options_.standalone ? "static int32_t " : "int32_t ", symbol,
                   "(void* const* args, const int64_t* sizes, void* workspace, uint64_t workspace_bytes, "
                   "const nnvm_kernel_env* env) {\n",
                   entry_unused, "  return ", body_fn, "(", call_args, "sizes, workspace, workspace_bytes, env);\n}\n");
  }
};

// C source of one kernel, or of a module of several (one compiler call builds them all).
inline std::string emit_c(const std::vector<ir::LoweredFunc>& fns) { return CEmitter().emit_module(fns).source; }
inline std::string emit_c(const ir::LoweredFunc& fn) { return emit_c(std::vector<ir::LoweredFunc>{fn}); }
// The symbols emit_c exports for `fns`, in order (name_workspace_bytes is each plus that suffix).
inline CModule emit_c_module(const std::vector<ir::LoweredFunc>& fns, CModuleOptions options = {}) {
  return CEmitter(options).emit_module(fns);
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/c_emitter.hpp
// begin nnvm/target/c_jit.hpp
// The host C JIT: emits C for lowered kernels, compiles it with the system C compiler into a
// shared library, dlopens it, and calls it through the kernel ABI (POSIX only).
//
// Compiled libraries are cached by an FNV-1a 64 hash of (source, flags, compiler command and its
// --version, host CPU model and flags) both on disk (NNVM_CACHE_DIR, else $XDG_CACHE_HOME/nnvm,
// else ~/.cache/nnvm; a folder this user alone may write, see kernel_cache.hpp) and in a
// process-wide map, so a kernel is compiled once per machine, not once per run.

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <span>
#include <sstream>
#include <unordered_map>

// begin nnvm/target/kernel_cache.hpp
// Where the host C JIT keeps compiled kernels, and the checks that make the cache safe to load
// from (POSIX only).
//
// A cached library is dlopen()ed, which runs its constructors: whoever can write into the cache
// directory runs code in every process that uses it, and cache file names are hashes anyone can
// compute. So the directory must belong to this user alone: it is created 0700 (as are the
// missing folders above it), and an existing one is used only when lstat() shows a real
// directory (not a symlink) owned by this user that neither group nor others may write. Each
// cached library is checked the same way (a regular file, owned by this user, not group- or
// other-writable) right before it is loaded.

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace target {
namespace detail {

// The cache directory when none is given: $NNVM_CACHE_DIR, else $XDG_CACHE_HOME/nnvm, else
// ~/.cache/nnvm ($HOME, else the password database). Never a shared folder such as /tmp.
inline std::string default_cache_dir() {
  if (const char* d = std::getenv("NNVM_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/nnvm";
  std::string home;
  if (const char* h = std::getenv("HOME"); h && *h) {
    home = h;
  } else {
    std::vector<char> buf(16384);
    passwd pw{}, *found = nullptr;
    if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found && found->pw_dir) home = found->pw_dir;
  }
  if (home.empty())
    throw BackendError("nnvm.codegen.c.cache_dir",
                       "no cache directory for compiled kernels: set NNVM_CACHE_DIR (or XDG_CACHE_HOME or HOME)");
  return home + "/.cache/nnvm";
}

// Why `st` (lstat of a cache entry) is not this user's alone, or "" when it is.
inline std::string cache_entry_problem(const struct stat& st, bool directory) {
  if (S_ISLNK(st.st_mode)) return "is a symbolic link";
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return directory ? "is not a directory" : "is not a regular file";
  if (st.st_uid != geteuid())
    return str_cat("is owned by uid ", st.st_uid, ", not by this user (uid ", geteuid(), ")");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return str_cat("is writable by ", (st.st_mode & S_IWOTH) ? "other users" : "its group", " (mode ",
                   std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                       std::to_string(st.st_mode & 7),
                   ")");
  return "";
}

[[noreturn]] inline void refuse_cache_entry(const std::string& path, const std::string& why, bool directory) {
  throw BackendError("nnvm.codegen.c.cache_unsafe",
                     str_cat(directory ? "kernel cache directory " : "cached kernel library ", path, " ", why,
                             "; nnvm loads compiled code from there, so it must belong to this user alone",
                             directory ? " (a real directory, chmod 700; or set NNVM_CACHE_DIR to one)"
                                       : " (delete it, and check who else can write to the cache directory)"));
}

// Creates `dir` (and missing folders above it) with mode 0700, then refuses it, with error
// "nnvm.codegen.c.cache_unsafe" naming the path, unless it is a real directory owned by this
// user with no group or other write permission.
inline void ensure_private_cache_dir(const std::string& dir) {
  if (dir.empty()) throw BackendError("nnvm.codegen.c.cache_dir", "the kernel cache directory is an empty path");
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i == dir.size() || dir[i] == '/') {
      std::string prefix = dir.substr(0, i);
      if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
        throw BackendError("nnvm.codegen.c.cache_dir",
                           str_cat("cannot create cache directory ", prefix, ": ", std::strerror(errno)));
    }
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0)
    throw BackendError("nnvm.codegen.c.cache_dir", str_cat("cannot stat cache directory ", dir, ": ", std::strerror(errno)));
  if (std::string why = cache_entry_problem(st, true); !why.empty()) refuse_cache_entry(dir, why, true);
}

// Whether `path` exists; when it does, refuses it (error "nnvm.codegen.c.cache_unsafe") unless
// it is a regular file owned by this user with no group or other write permission.
inline bool check_cached_library(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return false;
    throw BackendError("nnvm.codegen.c.cache_dir", str_cat("cannot stat ", path, ": ", std::strerror(errno)));
  }
  if (std::string why = cache_entry_problem(st, false); !why.empty()) refuse_cache_entry(path, why, false);
  return true;
}

}  // namespace detail
}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/kernel_cache.hpp
// begin nnvm/target/kernel.hpp
// A compiled kernel, whatever compiled it: the C JIT (target/c_jit.hpp), the LLVM JIT
// (codegen/llvm_jit.hpp) and the graph executor all hand out this one type. It is the lowered
// function, its entry points under the kernel ABI (runtime/kernel_abi.h) and the module that
// holds the code; calls go through target::call_kernel, so every back end checks arguments,
// lends workspace and threads, and reports failures the same way.
//
// The thread count is not part of a kernel: each call says how many threads its parallel loops
// may use (0: the pool's count, NNVM_NUM_THREADS or all cores).

#include <array>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

// begin nnvm/target/kernel_call.hpp
// The host side of calling a compiled kernel through the kernel ABI (docs/lowered_ir.md), shared
// by every JIT (C, LLVM) so that all validate arguments, lend workspace and threads, and report
// failures the same way.

#include <cstdlib>
#include <memory>
#include <new>
#include <span>

// begin nnvm/runtime/thread_pool.hpp
// nnvm's one CPU parallel runtime: a small fixed pool of worker threads that compiled kernels
// reach through the C ABI in kernel_abi.h (env->parallel_for), so generated code needs no OpenMP.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace runtime {

namespace detail {
// True on pool workers, and on a caller while it runs its own chunk: a parallel_for started
// there runs serially instead of waiting on workers that may all be busy with its parent.
inline thread_local bool in_parallel_region = false;

// A spin-wait hint to the CPU (frees the core's resources for its sibling thread).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield");
#endif
}

// The integer environment variable `name` when it is one of at least `lo`, at most `hi`
// (larger values are `hi`); else nothing.
inline std::optional<long> env_int(const char* name, long lo, long hi) {
  const char* s = std::getenv(name);
  if (!s) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo) return std::nullopt;
  return std::min(v, hi);
}
}  // namespace detail

// How long an idle worker, or a caller waiting for its workers, spins before it sleeps:
// NNVM_POOL_SPIN_US microseconds when set (0: sleep at once), else 100. Waking a sleeping
// thread takes tens of microseconds, as long as a whole small kernel (a 14x14 depthwise conv
// runs in about 10), so back-to-back parallel loops (a network's kernels) should find the
// workers awake; a pool idle for longer costs no CPU.
inline int default_spin_us() { return int(detail::env_int("NNVM_POOL_SPIN_US", 0, 1000000).value_or(100)); }

// NNVM_NUM_THREADS when set to a positive number, else the hardware's thread count (at least 1).
inline int default_num_threads() {
  if (auto v = detail::env_int("NNVM_NUM_THREADS", 1, 1024)) return int(*v);
  return std::max(1, int(std::thread::hardware_concurrency()));
}

// Splits [0, n) into at most num_threads() equal contiguous chunks (static chunking), runs one
// on the calling thread and the rest on workers, and waits for all of them. One parallel_for
// runs at a time per pool; concurrent callers queue.
class ThreadPool {
 public:
  // num_threads counts the caller too, so a pool of 1 has no workers and runs serially.
  explicit ThreadPool(int num_threads = default_num_threads(), int spin_us = default_spin_us())
      : default_threads_(std::max(1, num_threads)), spin_us_(std::max(0, spin_us)) {}
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lk(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }

  int num_threads() const { return default_threads_; }

  // The process-wide pool that JIT-compiled kernels use (sized by default_num_threads()).
  static ThreadPool& global() {
    static ThreadPool pool;
    return pool;
  }

  // Runs body over [0, n) with up to `num_threads` threads (0: the pool's own count; more than
  // that starts extra workers, which then stay). Returns the first non-zero status that a chunk
  // returned; chunks not yet started when one fails are skipped. May throw std::system_error
  // when a thread cannot be started (nnvm_pool_parallel_for turns that into a status).
  int32_t parallel_for(int64_t n, nnvm_parallel_body body, void* closure, int num_threads = 0) {
    if (n <= 0) return 0;
    int threads = num_threads > 0 ? num_threads : default_threads_;
    int64_t chunks = std::min<int64_t>(n, threads);
    if (chunks <= 1 || detail::in_parallel_region) return body(0, n, closure);

    std::lock_guard<std::mutex> serial(dispatch_);
    // A worker that woke late for the previous job may still be looking at it (below).
    spin_for([&] { return active_.load(std::memory_order_acquire) == 0; });
    {
      std::unique_lock<std::mutex> lk(mutex_);
      while (int64_t(workers_.size()) < chunks - 1) workers_.emplace_back([this] { worker_loop(); });
      done_.wait(lk, [&] { return active_ == 0; });
      job_.body = body;
      job_.closure = closure;
      job_.n = n;
      job_.chunks = chunks;
      job_.helpers = int(chunks - 1);
      job_.next.store(0);
      job_.finished.store(0);
      job_.status.store(0);
      ++generation_;
    }
    wake_.notify_all();
    detail::in_parallel_region = true;
    run_chunks();
    detail::in_parallel_region = false;
    spin_for([&] { return job_.finished.load(std::memory_order_acquire) == job_.chunks; });
    std::unique_lock<std::mutex> lk(mutex_);
    done_.wait(lk, [&] { return job_.finished.load() == job_.chunks; });
    return job_.status.load();
  }

 private:
  struct Job {
    nnvm_parallel_body body = nullptr;
    void* closure = nullptr;
    int64_t n = 0, chunks = 0;
    int helpers = 0;  // how many workers may join (the rest stay asleep)
    std::atomic<int64_t> next{0}, finished{0};
    std::atomic<int32_t> status{0};
  };

  void run_chunks() {
    for (;;) {
      int64_t c = job_.next.fetch_add(1);
      if (c >= job_.chunks) return;
      if (job_.status.load(std::memory_order_relaxed) == 0) {
        int64_t begin = job_.n * c / job_.chunks, end = job_.n * (c + 1) / job_.chunks;
        int32_t st = job_.body(begin, end, job_.closure);
        int32_t zero = 0;
        if (st != 0) job_.status.compare_exchange_strong(zero, st);
      }
      if (job_.finished.fetch_add(1) + 1 == job_.chunks) {
        std::lock_guard<std::mutex> lk(mutex_);
        done_.notify_all();
      }
    }
  }

  // Spins, holding no lock, for up to spin_us_ microseconds until `ready()`; true if it held.
  template <class Ready>
  bool spin_for(Ready&& ready) const {
    if (spin_us_ == 0) return ready();
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
    for (unsigned i = 1;; ++i) {
      if (ready()) return true;
      detail::cpu_relax();
      if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return false;
    }
  }

  void worker_loop() {
    detail::in_parallel_region = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lk(mutex_);
    seen = generation_;
    for (;;) {
      if (!stop_ && generation_ == seen) {
        lk.unlock();
        spin_for([&] { return stop_.load(std::memory_order_relaxed) || generation_.load(std::memory_order_acquire) != seen; });
        lk.lock();
      }
      wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (job_.helpers == 0) continue;
      --job_.helpers;
      ++active_;
      lk.unlock();
      run_chunks();
      lk.lock();
      if (--active_ == 0) done_.notify_all();
    }
  }

  const int default_threads_;
  const int spin_us_;
  std::mutex dispatch_;  // one job at a time
  std::mutex mutex_;     // guards everything below except the job's atomics; the other atomics
                         // are written under it and read without it only by spinning threads
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  Job job_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> active_{0};
  std::atomic<bool> stop_{false};
};

// What env->pool points to for nnvm_pool_parallel_for: a pool and a thread limit (0: the pool's).
struct PoolRef {
  ThreadPool* pool = nullptr;
  int32_t num_threads = 0;
};

}  // namespace runtime
NNVM_END_NAMESPACE

// The C ABI entry compiled kernels call through env->parallel_for. `pool` is a
// nnvm::runtime::PoolRef*; NULL means the global pool. Never throws: failures become
// NNVM_STATUS_RUNTIME_FAILURE.
extern "C" inline int32_t nnvm_pool_parallel_for(void* pool, int64_t n, nnvm_parallel_body body,
                                                 void* closure) {
  try {
    auto* ref = static_cast<const nnvm::runtime::PoolRef*>(pool);
    nnvm::runtime::ThreadPool& p = ref && ref->pool ? *ref->pool : nnvm::runtime::ThreadPool::global();
    return p.parallel_for(n, body, closure, ref ? ref->num_threads : 0);
  } catch (...) {
    return NNVM_STATUS_RUNTIME_FAILURE;
  }
}
// end nnvm/runtime/thread_pool.hpp

NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {

// A 64-byte aligned scratch buffer per calling thread that only grows.
inline void* thread_workspace(uint64_t bytes) {
  struct Free {
    void operator()(void* p) const { std::free(p); }
  };
  thread_local std::unique_ptr<void, Free> buf;
  thread_local uint64_t capacity = 0;
  if (bytes == 0) return nullptr;
  if (bytes > capacity) {
    uint64_t cap = (std::max(bytes, capacity * 2) + 63) / 64 * 64;
    buf.reset(std::aligned_alloc(64, size_t(cap)));
    if (!buf) {
      capacity = 0;
      throw std::bad_alloc();
    }
    capacity = cap;
  }
  return buf.get();
}

}  // namespace detail

// Runs `kernel` (compiled from `fn`) on `args`: bind_arguments checks them (a wrong buffer is a
// UserError), the calling thread's workspace supplies name_workspace_bytes(sizes) bytes, and
// parallel loops use the global pool with `num_threads` threads (0: the pool's count). A
// non-zero status becomes a BackendError; `status_id` is the id for statuses other than a
// thread pool failure (each back end names its own).
inline void call_kernel(const ir::LoweredFunc& fn, nnvm_kernel_fn kernel, nnvm_workspace_bytes_fn workspace_bytes,
                        std::span<const BufferView> args, int num_threads, const char* status_id) {
  std::vector<int64_t> sizes = bind_arguments(fn, args);
  std::vector<void*> data;
  data.reserve(args.size());
  for (auto& a : args) data.push_back(a.data);
  uint64_t need = workspace_bytes(sizes.data());
  void* ws = detail::thread_workspace(need);
  runtime::PoolRef pool{&runtime::ThreadPool::global(), num_threads};
  nnvm_kernel_env env{&pool, &nnvm_pool_parallel_for};
  int32_t status = kernel(data.data(), sizes.data(), ws, need, &env);
  if (status == NNVM_STATUS_OK) return;
  if (status == NNVM_STATUS_RUNTIME_FAILURE)
    throw BackendError("nnvm.runtime.parallel_failure",
                       str_cat("kernel ", fn.name, ": the thread pool could not run a parallel loop"));
  throw BackendError(status_id, str_cat("kernel ", fn.name, " returned status ", status,
                                        status == NNVM_STATUS_WORKSPACE_TOO_SMALL ? " (workspace too small)" : ""));
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/kernel_call.hpp

NNVM_BEGIN_NAMESPACE
namespace target {

// The code one compiler call produced for a batch of kernels; it stays loaded while any of
// their Kernels exists.
struct KernelModule {
  Emitter emitter = Emitter::c;
  std::string code;          // what was compiled: the C source, or the optimized LLVM IR
  std::string library_path;  // the shared library the code was loaded from; empty when in memory
  double compile_ms = 0;     // building and compiling (or loading from the disk cache) the module
  std::shared_ptr<const void> keep_alive;  // the loaded library or JIT session
};

class Kernel {
 public:
  Kernel() = default;
  Kernel(std::shared_ptr<const KernelModule> module, ir::LoweredFunc fn, std::string symbol, nnvm_kernel_fn kernel,
         nnvm_workspace_bytes_fn workspace_bytes, bool from_cache = false)
      : module_(std::move(module)), fn_(std::move(fn)), symbol_(std::move(symbol)), kernel_(kernel),
        workspace_bytes_(workspace_bytes), from_cache_(from_cache) {}

  bool defined() const { return kernel_ != nullptr; }
  const ir::LoweredFunc& func() const { return fn_; }
  // The kernel's symbol in its module.
  const std::string& symbol() const { return symbol_; }
  const KernelModule& module() const {
    check_defined();
    return *module_;
  }
  Emitter emitter() const { return module().emitter; }
  const std::string& code() const { return module().code; }
  const std::string& library_path() const { return module().library_path; }
  double compile_ms() const { return module().compile_ms; }
  // Whether the JIT found the module in one of its caches instead of compiling it.
  bool from_cache() const { return from_cache_; }

  // The raw entry points, for callers that drive the kernel ABI themselves (the run loop).
  nnvm_kernel_fn raw_function() const { return kernel_; }
  nnvm_workspace_bytes_fn raw_workspace_bytes() const { return workspace_bytes_; }

  // Scratch bytes a call with these symbolic sizes (in func().size_vars order) needs.
  uint64_t workspace_bytes(std::span<const int64_t> sizes) const {
    check_defined();
    if (sizes.size() != fn_.size_vars.size())
      throw UserError("nnvm.call.size_count", str_cat("kernel ", fn_.name, " has ", fn_.size_vars.size(),
                                                      " symbolic sizes, got ", sizes.size()));
    return workspace_bytes_(sizes.data());
  }

  // Runs the kernel on `args` (one per func().params, checked by bind_arguments: a wrong buffer
  // is a UserError), its parallel loops on `num_threads` threads (0: the pool's count).
  void call(std::span<const BufferView> args, int num_threads = 0) const {
    check_defined();
    call_kernel(fn_, kernel_, workspace_bytes_, args, num_threads, "nnvm.call.kernel_status");
  }
  void operator()(std::span<const BufferView> args) const { call(args); }
  // kernel(a, b, c) with NDArrays or BufferViews.
  template <class... A>
    requires(std::is_constructible_v<BufferView, A&> && ...)
  void operator()(A&&... args) const {
    std::array<BufferView, sizeof...(A)> views{BufferView(args)...};
    call(std::span<const BufferView>(views.data(), views.size()));
  }

 private:
  void check_defined() const {
    if (!kernel_) throw UserError("nnvm.call.undefined_kernel", "called a default-constructed Kernel");
  }
  std::shared_ptr<const KernelModule> module_;
  ir::LoweredFunc fn_;
  std::string symbol_;
  nnvm_kernel_fn kernel_ = nullptr;
  nnvm_workspace_bytes_fn workspace_bytes_ = nullptr;
  bool from_cache_ = false;
};

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/kernel.hpp

NNVM_BEGIN_NAMESPACE
namespace target {

struct CJitOptions {
  std::string compiler;                 // empty: $CC, else "cc"
  std::vector<std::string> extra_flags;  // appended after the default flags
  std::string cache_dir;                // empty: detail::default_cache_dir()
  std::string cpu;                      // -march= value (Target::cpu); empty: "native", this machine
};

namespace detail {

inline uint64_t fnv1a64(const std::string& s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

inline std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs a shell command; returns (exit status, stdout+stderr).
inline std::pair<int, std::string> run_command(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) throw BackendError("nnvm.codegen.c.compile_failed", "cannot start a shell to run: " + cmd);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

inline std::string cache_dir(const CJitOptions& o) { return o.cache_dir.empty() ? default_cache_dir() : o.cache_dir; }

inline void make_dirs(const std::string& path) {
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
        throw BackendError("nnvm.codegen.c.cache_dir", str_cat("cannot create cache directory ", prefix, ": ",
                                                               std::strerror(errno)));
    }
  }
}

// Writes `text` to `path` through a temporary file and a rename, so readers never see half.
inline void write_atomically(const std::string& path, const std::string& text) {
  static std::atomic<uint64_t> counter{0};
  std::string tmp = str_cat(path, ".tmp.", getpid(), ".", counter++);
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f) throw BackendError("nnvm.codegen.c.cache_dir", "cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw BackendError("nnvm.codegen.c.cache_dir", "cannot rename " + tmp + " to " + path);
}

struct Library {
  void* handle = nullptr;
  std::string path;
  ~Library() {
    if (handle) dlclose(handle);
  }
  void* symbol(const std::string& name) const {
    void* s = dlsym(handle, name.c_str());
    if (!s) throw BackendError("nnvm.codegen.c.missing_symbol", str_cat("symbol ", name, " not found in ", path));
    return s;
  }
};

// What -march=native means on this machine: the CPU's model and feature flags (Linux), so a
// cache directory shared between machines never hands one a library built for another.
inline const std::string& host_cpu_identity() {
  static const std::string id = [] {
    std::ifstream in("/proc/cpuinfo");
    std::string line, model, flags;
    while (std::getline(in, line) && (model.empty() || flags.empty())) {
      if (model.empty() && line.rfind("model name", 0) == 0) model = line;
      if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
    }
    return model + "\n" + flags;
  }();
  return id;
}

// How `source` is compiled under `o`: the compiler command, its flags, and the cache key (an
// FNV-1a 64 hash of the source, flags, compiler and its --version, and this CPU).
struct CCompilePlan {
  std::string cc, flags;
  uint64_t key = 0;
  // The cached library's path in cache directory `dir` (".so"; ".c" for its source).
  std::string stem(const std::string& dir) const {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(key));
    return dir + "/nnvm_" + hex;
  }
};

inline CCompilePlan plan_c_compile(const std::string& source, const CJitOptions& o) {
  CCompilePlan p;
  p.cc = o.compiler;
  if (p.cc.empty()) p.cc = std::getenv("CC") && *std::getenv("CC") ? std::getenv("CC") : "cc";
  std::string march = o.cpu.empty() ? "native" : o.cpu;
  if (march.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") != std::string::npos)
    throw UserError("nnvm.codegen.c.cpu", str_cat("CPU name '", march, "' has characters no -march value has"));
  p.flags = str_cat("-O3 -march=", march, " -ffp-contract=fast -std=c99 -fPIC -shared");
  for (auto& f : o.extra_flags) p.flags += " " + shell_quote(f);
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  auto v = versions.find(p.cc);
  if (v == versions.end()) v = versions.emplace(p.cc, run_command(p.cc + " --version").second).first;
  p.key = fnv1a64(source + "\n" + p.flags + "\n" + p.cc + "\n" + v->second + "\n" + host_cpu_identity());
  return p;
}

// Compiles (or finds in the caches) the shared library for `source`; sets *from_cache, when
// given, to whether one of the caches had it.
inline std::shared_ptr<const Library> compile_c(const std::string& source, const CJitOptions& o,
                                                bool* from_cache = nullptr) {
  CCompilePlan plan = plan_c_compile(source, o);
  const std::string &cc = plan.cc, &flags = plan.flags;
  static std::mutex mutex;
  static std::unordered_map<uint64_t, std::shared_ptr<const Library>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (from_cache) *from_cache = true;
  if (auto it = loaded.find(plan.key); it != loaded.end()) return it->second;

  std::string dir = cache_dir(o);
  ensure_private_cache_dir(dir);
  std::string stem = plan.stem(dir), c_path = stem + ".c", so_path = stem + ".so";

  auto lib = std::make_shared<Library>();
  lib->path = so_path;
  if (check_cached_library(so_path)) lib->handle = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);  // the disk cache
  if (!lib->handle) {
    if (from_cache) *from_cache = false;
    write_atomically(c_path, source);
    std::string tmp = str_cat(so_path, ".tmp.", getpid());
    std::string cmd = str_cat(cc, " ", flags, " -o ", shell_quote(tmp), " ", shell_quote(c_path), " -lm");
    auto [status, output] = run_command(cmd);
    if (status != 0) {
      std::remove(tmp.c_str());
      throw BackendError("nnvm.codegen.c.compile_failed",
                         str_cat("the C compiler failed (exit status ", status, ") on ", c_path, "\ncommand: ", cmd,
                                 "\n", output));
    }
    // Whatever the umask, the library is this user's alone, as check_cached_library requires.
    chmod(tmp.c_str(), S_IRWXU);
    if (std::rename(tmp.c_str(), so_path.c_str()) != 0)
      throw BackendError("nnvm.codegen.c.cache_dir", "cannot rename " + tmp + " to " + so_path);
    lib->handle = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle)
      throw BackendError("nnvm.codegen.c.load_failed", str_cat("dlopen of ", so_path, " failed: ", dlerror()));
  }
  loaded.emplace(plan.key, lib);
  return lib;
}

}  // namespace detail

// Compiles all `fns` with ONE compiler call (a module), returning their kernels in order.
inline std::vector<Kernel> jit_c(const std::vector<ir::LoweredFunc>& fns, const CJitOptions& options = {}) {
  if (fns.empty()) return {};
  CModule m = emit_c_module(fns);
  bool from_cache = false;
  auto start = std::chrono::steady_clock::now();
  std::shared_ptr<const detail::Library> lib = detail::compile_c(m.source, options, &from_cache);
  auto module = std::make_shared<KernelModule>();
  module->emitter = Emitter::c;
  module->code = std::move(m.source);
  module->library_path = lib->path;
  module->compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  module->keep_alive = lib;
  std::vector<Kernel> out;
  for (size_t i = 0; i < fns.size(); ++i) {
    const std::string& s = m.symbols[i];
    out.emplace_back(module, fns[i], s, reinterpret_cast<nnvm_kernel_fn>(lib->symbol(s)),
                     reinterpret_cast<nnvm_workspace_bytes_fn>(lib->symbol(s + "_workspace_bytes")), from_cache);
  }
  return out;
}
inline Kernel jit_c(const ir::LoweredFunc& fn, const CJitOptions& options = {}) {
  return std::move(jit_c(std::vector<ir::LoweredFunc>{fn}, options)[0]);
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/c_jit.hpp
// end nnvm/tensor.hpp
// begin nnvm/ops/ops.hpp
// The operator library: op definitions, the registry with the built-in ops, and build/jit.

// begin nnvm/ops/registry.hpp
// The operator registry: op definitions by name and by importer name ("onnx:Relu").
//
// There is one default registry, made with the built-in ops on first use (a function-local
// static, so no static initializers run), and a user's op joins it with one call:
//   ops::register_op(OpDef{.name = "hard_swish", ...});
// Code that must not see other code's ops (tests, a plugin host) makes its own OpRegistry.
//
// Thread safety: registration and lookup may run concurrently (a shared mutex guards the maps).
// Ops are never removed or replaced, so an `const OpDef&` a lookup returned stays valid, and
// unchanged, for as long as the registry exists.

#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

// begin nnvm/ops/builtin.hpp
// The built-in operators, joined from one sorted list per family (each family's family.hpp) and
// sorted by name.
// Adding an op is one file, one include and one line in its family's list.

// begin nnvm/ops/broadcast/family.hpp
// Broadcasting ops: elementwise after broadcasting the inputs to one shape (NumPy rules).
// One sorted list per family; builtin.hpp joins the families.

// begin nnvm/ops/broadcast/binary.hpp
// The arithmetic broadcast ops (ONNX Add, Sub, Mul, Div, Pow): each one named definition over
// the shared broadcasting compute in broadcast.hpp. Any number type; integer arithmetic wraps
// for types narrower than 32 bits and, as in C, int32/int64 overflow is undefined.

// begin nnvm/ops/broadcast/broadcast.hpp
// Numpy/ONNX multidirectional broadcasting, shared by the binary broadcast ops: shapes are
// aligned from the right, a missing leading axis counts as extent 1, and an extent of 1 stretches
// to the other input's extent.

// begin nnvm/ops/checks.hpp
// Input checks shared by op computes. Each throws UserError naming the input and the rule, so an
// op's compute states its shape rules in a few readable lines.

// begin nnvm/ops/attrs.hpp
// Operator attributes: the named, typed parameters of one use of an operator (Gemm's transB,
// Softmax's axis). The graph layer fills them from a model's attributes; kernel authors fill them
// with the typed setters.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace ops {

// The five kinds a model file can carry (ONNX INT, FLOAT, STRING, INTS, FLOATS).
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

inline const char* attr_kind_name(const AttrValue& v) {
  static const char* const names[] = {"an int", "a float", "a string", "a list of ints", "a list of floats"};
  return names[v.index()];
}

// A name -> value map with typed getters. A getter without a default throws UserError
// "nnvm.ops.attr" when the attribute is missing; every getter throws it when the attribute has
// another kind. One widening is allowed because model files write `1` for `1.0`: an int (or an
// int list) is accepted where a float (float list) is asked for. A float is never read as an int.
class Attrs {
 public:
  // Typed setters (named, because an overloaded set("k", 1) would be ambiguous); they chain:
  // Attrs().set_int("transB", 1).set_float("alpha", 0.5).
  Attrs& set_int(std::string name, int64_t v) { return set(std::move(name), AttrValue(v)); }
  Attrs& set_float(std::string name, double v) { return set(std::move(name), AttrValue(v)); }
  Attrs& set_string(std::string name, std::string v) { return set(std::move(name), AttrValue(std::move(v))); }
  Attrs& set_ints(std::string name, std::vector<int64_t> v) { return set(std::move(name), AttrValue(std::move(v))); }
  Attrs& set_floats(std::string name, std::vector<double> v) { return set(std::move(name), AttrValue(std::move(v))); }
  // A data type is stored as its name ("float32"), so it prints, hashes and exports as text.
  Attrs& set_dtype(std::string name, DataType t) { return set_string(std::move(name), t.element_of().str()); }
  // For importers that already hold a variant. Replaces an existing value.
  Attrs& set(std::string name, AttrValue v) {
    values_.insert_or_assign(std::move(name), std::move(v));
    return *this;
  }

  // Removes the attribute if present (an importer dropping a value that means "not given").
  Attrs& erase(std::string_view name) {
    if (auto it = values_.find(name); it != values_.end()) values_.erase(it);
    return *this;
  }

  bool has(std::string_view name) const { return values_.find(name) != values_.end(); }
  const AttrValue* find(std::string_view name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : &it->second;
  }
  // Sorted by name, for printing and for hashing a kernel cache key.
  const std::map<std::string, AttrValue, std::less<>>& values() const { return values_; }
  size_t size() const { return values_.size(); }

  int64_t get_int(std::string_view name) const { return *as<int64_t>(require(name), name, "an int"); }
  int64_t get_int(std::string_view name, int64_t fallback) const {
    auto* v = find(name);
    return v ? *as<int64_t>(*v, name, "an int") : fallback;
  }
  double get_float(std::string_view name) const { return to_float(require(name), name); }
  double get_float(std::string_view name, double fallback) const {
    auto* v = find(name);
    return v ? to_float(*v, name) : fallback;
  }
  const std::string& get_string(std::string_view name) const { return *as<std::string>(require(name), name, "a string"); }
  std::string get_string(std::string_view name, std::string fallback) const {
    auto* v = find(name);
    return v ? *as<std::string>(*v, name, "a string") : fallback;
  }
  const std::vector<int64_t>& get_ints(std::string_view name) const {
    return *as<std::vector<int64_t>>(require(name), name, "a list of ints");
  }
  std::vector<int64_t> get_ints(std::string_view name, std::vector<int64_t> fallback) const {
    auto* v = find(name);
    return v ? *as<std::vector<int64_t>>(*v, name, "a list of ints") : fallback;
  }
  std::vector<double> get_floats(std::string_view name) const { return to_floats(require(name), name); }
  std::vector<double> get_floats(std::string_view name, std::vector<double> fallback) const {
    auto* v = find(name);
    return v ? to_floats(*v, name) : fallback;
  }
  // A data type name as set_dtype stores it; "nnvm.ops.attr" for any other string.
  DataType get_dtype(std::string_view name) const { return to_dtype(require(name), name); }
  DataType get_dtype(std::string_view name, DataType fallback) const {
    auto* v = find(name);
    return v ? to_dtype(*v, name) : fallback;
  }

 private:
  static std::vector<std::string> where(std::string_view name) { return {"attribute " + std::string(name)}; }
  const AttrValue& require(std::string_view name) const {
    auto* v = find(name);
    if (!v) {
      std::string present;
      for (auto& [k, _] : values_) present += (present.empty() ? "" : ", ") + k;
      throw UserError("nnvm.ops.attr",
                      str_cat("required attribute '", name, "' is missing (given: ",
                              present.empty() ? "none" : present, ")"),
                      where(name));
    }
    return *v;
  }
  template <class T>
  static const T* as(const AttrValue& v, std::string_view name, const char* wanted) {
    if (auto* p = std::get_if<T>(&v)) return p;
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute '", name, "' is ", attr_kind_name(v), " but must be ", wanted), where(name));
  }
  static double to_float(const AttrValue& v, std::string_view name) {
    if (auto* i = std::get_if<int64_t>(&v)) return double(*i);
    return *as<double>(v, name, "a float");
  }
  static DataType to_dtype(const AttrValue& v, std::string_view name) {
    const std::string* s = std::get_if<std::string>(&v);
    if (auto t = s ? parse_dtype(*s) : std::nullopt) return *t;
    // An int here is usually a model format's type code that its importer did not translate.
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute '", name, "' is ", s ? "'" + *s + "'" : std::string(attr_kind_name(v)),
                            " but must name a data type: ", tensor_type_names()),
                    where(name));
  }
  static std::vector<double> to_floats(const AttrValue& v, std::string_view name) {
    if (auto* is = std::get_if<std::vector<int64_t>>(&v)) return std::vector<double>(is->begin(), is->end());
    return *as<std::vector<double>>(v, name, "a list of floats");
  }

  std::map<std::string, AttrValue, std::less<>> values_;
};

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/attrs.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

// "nnvm.ops.input_shape" unless `t` has rank in [least, most].
inline void check_rank(const te::Tensor& t, const char* input, size_t least, size_t most) {
  if (t.rank() < least || t.rank() > most)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " (tensor ", t.name(), ") has rank ", t.rank(), ", expected ",
                            least == most ? str_cat(least) : str_cat(least, " to ", most)),
                    {"input " + std::string(input)});
}
inline void check_rank(const te::Tensor& t, const char* input, size_t rank) { check_rank(t, input, rank, rank); }

// "nnvm.ops.input_dtype" unless `t` holds float32 or float64 (types with arithmetic).
inline void check_float(const te::Tensor& t, const char* input) {
  DataType d = t.dtype();
  if (!d.is_float() || d.is_storage_only() || !d.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", d, ", expected float32 or float64"),
                    {"input " + std::string(input)});
}
inline void check_same_dtype(const te::Tensor& a, const char* ia, const te::Tensor& b, const char* ib) {
  if (a.dtype() != b.dtype())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("inputs ", ia, " (", a.dtype(), ") and ", ib, " (", b.dtype(), ") must have the same dtype"),
                    {"input " + std::string(ib)});
}

// True when two extents are equal for every binding of their symbolic sizes that nnvm can see:
// equal constants or structurally equal expressions. Different size variables are not equal:
// the graph layer gives one dimension one variable.
inline bool same_extent(const ir::Expr& a, const ir::Expr& b) {
  ir::Expr sa = ir::simplify(a), sb = ir::simplify(b);
  auto *ca = ir::as_const_int(sa), *cb = ir::as_const_int(sb);
  if (ca && cb) return *ca == *cb;
  return ir::deep_equal(sa, sb);
}
// "nnvm.ops.input_shape" unless extents are the same_extent; `what` says which axes.
inline void check_same_extent(const ir::Expr& a, const ir::Expr& b, const std::string& what) {
  if (!same_extent(a, b))
    throw UserError("nnvm.ops.input_shape",
                    str_cat(what, " must be equal, got ", ir::to_string(a), " and ", ir::to_string(b)));
}

// An axis attribute in [-rank, rank) as an index in [0, rank); "nnvm.ops.attr" otherwise.
inline size_t normalize_axis(int64_t axis, size_t rank, const char* attr) {
  int64_t r = int64_t(rank);
  if (axis < -r || axis >= r)
    throw UserError("nnvm.ops.attr", str_cat("attribute '", attr, "' is ", axis, " but must lie in [", -r, ", ", r, ")"),
                    {"attribute " + std::string(attr)});
  return size_t(axis < 0 ? axis + r : axis);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/checks.hpp
// begin nnvm/ops/elementwise/dtypes.hpp
// The input dtype rules the elementwise and broadcast ops share: which element types an input
// may have, and the type their arithmetic runs in.


NNVM_BEGIN_NAMESPACE
namespace ops {

enum class DtypeKind : uint8_t {
  any,      // every scalar type, bool and the storage floats included (copies, selects)
  number,   // integers and floats
  float_,   // floats (float16/bfloat16 compute in float32)
  integer,  // signed and unsigned integers
  boolean,  // bool
  compare,  // numbers and bool (operands of comparisons)
};

inline bool dtype_in(DataType t, DtypeKind k) {
  if (!t.is_scalar() || t.is_handle()) return false;
  switch (k) {
    case DtypeKind::any:
      return true;
    case DtypeKind::number:
      return !t.is_bool();
    case DtypeKind::float_:
      return t.is_float();
    case DtypeKind::integer:
      return t.is_integer();
    case DtypeKind::boolean:
      return t.is_bool();
    case DtypeKind::compare:
      return true;
  }
  return false;
}
inline const char* dtype_kind_text(DtypeKind k) {
  static const char* const names[] = {"any type", "a number", "a float", "an integer", "bool", "a number or bool"};
  return names[static_cast<int>(k)];
}

// "nnvm.ops.input_dtype" unless `t`'s element type is of kind `k`.
inline void check_input_kind(const te::Tensor& t, const std::string& input, DtypeKind k) {
  if (!dtype_in(t.dtype(), k))
    throw UserError(
        "nnvm.ops.input_dtype",
        str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected ", dtype_kind_text(k)),
        {"input " + input});
}

// The type arithmetic on `t` runs in: float16/bfloat16 are storage types and compute in float32.
inline DataType arith_type(DataType t) { return t.is_storage_only() ? dtype::float32.with_lanes(t.lanes) : t; }

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/dtypes.hpp
// begin nnvm/ops/op_def.hpp
// The definition of one operator: everything nnvm knows about it, in one value. Built-in ops
// and a user's own ops are the same kind of thing; the registry (registry.hpp) only stores them.
//
// Shape and dtype rules are not a separate function: `compute` checks its inputs and decides
// the output shapes and dtypes as it builds the output tensors, and `infer_types` runs it on
// placeholders. Building the compute is cheap (no lowering), and one function cannot drift
// from another that restates its rules.
//
// Attribute names: an op that answers to an importer name uses that format's attribute names
// (Gemm's transA, Softmax's axis), so an importer passes a node's attributes through unchanged.

#include <algorithm>
#include <functional>


NNVM_BEGIN_NAMESPACE
namespace ops {

using target::Target;

// How an op's outputs read its inputs; the graph layer decides what to fuse from it.
enum class OpPattern : uint8_t {
  elementwise,  // output[i] depends on input[i] only, same shape
  broadcast,    // elementwise after broadcasting inputs to a common shape
  injective,    // each output element reads a few input elements (transpose, reshape, slice)
  reduction,    // output elements combine many input elements along axes (sum, softmax)
  out_fusable,  // heavy compute whose output an elementwise op can follow in one loop (dense, conv)
  opaque,       // do not fuse
};
inline const char* pattern_name(OpPattern p) {
  static const char* const names[] = {"elementwise", "broadcast", "injective", "reduction", "out_fusable", "opaque"};
  return names[static_cast<int>(p)];
}

// The type of one tensor value: element type and extents (constants, or symbolic sizes such as
// a batch `Var`).
struct TensorType {
  DataType dtype;
  std::vector<ir::Expr> shape;
  // An optional input left out in the middle of the list (ONNX writes "" for it: Clip(X, "", max)).
  bool absent = false;

  TensorType() = default;
  TensorType(DataType t, std::vector<ir::Expr> s) : dtype(t), shape(std::move(s)) {}
  TensorType(DataType t, const std::vector<int64_t>& s) : dtype(t) {
    for (int64_t e : s) shape.emplace_back(e);
  }
  TensorType(DataType t, std::initializer_list<int64_t> s) : TensorType(t, std::vector<int64_t>(s)) {}
  static TensorType of(const te::Tensor& t) { return {t.dtype(), t.shape()}; }
  static TensorType none() {
    TensorType t;
    t.absent = true;
    return t;
  }
};

using ComputeFn = std::function<std::vector<te::Tensor>(const std::vector<te::Tensor>& inputs, const Attrs& attrs)>;
// Schedules the stages that produce `outputs` (as made by the op's compute) for `target`.
using ScheduleFn = std::function<void(schedule::Schedule& sch, const std::vector<te::Tensor>& outputs,
                                      const Target& target)>;
// Schedules the op's stages together with `epilogue`, the one output of a fused group whose other
// members (elementwise ops reading the op's single output, and their other inputs) are inlined
// into it: the op's result then never goes to memory (TVM's out-fusable epilogue). `epilogue`
// has the op's output shape. Returns false when it cannot, and the caller schedules as usual.
using FusedScheduleFn = std::function<bool(schedule::Schedule& sch, const std::vector<te::Tensor>& outputs,
                                           const te::Tensor& epilogue, const Target& target)>;

// An aggregate, so a definition reads as designated initializers:
//   OpDef{.name = "hard_swish", .importer_names = {"onnx:HardSwish"}, .input_names = {"X"},
//         .pattern = OpPattern::elementwise, .compute = ..., .cpu_schedule = ...}
struct OpDef {
  // Lowercase identifier, dots allowed for families ("dense", "image.resize"). Unique in a registry.
  std::string name;
  // "format:OpType" names importers look the op up by ("onnx:Gemm"); each unique in a registry.
  std::vector<std::string> importer_names;
  // One name per input, in order; they name the kernel's parameters and appear in errors.
  std::vector<std::string> input_names;
  // How many trailing inputs are optional (Gemm's C). Trailing ones may be left out; one in the
  // middle may be given as an undefined tensor (te::Tensor()), which the compute must accept.
  size_t optional_inputs = 0;
  // Inputs whose values must be known when the op is compiled, by input name (Reshape's shape,
  // Slice's starts). The graph layer takes them from constant producers and passes them to the
  // compute as attributes of the same name: integer and bool data as a list of ints, float data as
  // a list of floats (a scalar is a list of one). The compute still receives a placeholder at their
  // position but must not read it, and kernels do not take them as parameters.
  std::vector<std::string> value_inputs;
  OpPattern pattern = OpPattern::opaque;
  // Required. Checks ranks, extents, dtypes and attributes (UserError ids nnvm.ops.input_shape,
  // nnvm.ops.input_dtype, nnvm.ops.attr) and returns the output tensors (at least one).
  ComputeFn compute;
  // Optional: checks the data of inputs that are constants in the graph, for what ONNX calls an
  // error but a kernel cannot report (Gather's indices out of range). `data[i]` is the data of
  // input i, or null when it is not a constant; the types and attributes are infer_types'.
  // UserError (nnvm.ops.index_range) with "input <name>" as context.
  std::function<void(const std::vector<TensorType>& inputs, const std::vector<const NDArray*>& data,
                     const Attrs& attrs)>
      check_constants;
  // Optional, one per target family: the op's dedicated schedule. A family the op has none for
  // gets that family's generic recipe for the op's pattern (schedule_generic.hpp), so a new
  // family needs no change here unless an op wants a schedule of its own.
  ScheduleFn cpu_schedule;
  ScheduleFn gpu_schedule;
  // Optional, for out_fusable ops on CPUs: the schedule when elementwise ops follow in the same
  // kernel.
  FusedScheduleFn cpu_fused_schedule;
  // One line for listings and generated docs.
  std::string doc;
};

namespace detail {
inline bool valid_op_name(const std::string& s) {
  if (s.empty() || s.front() == '.' || s.back() == '.' || !(s.front() >= 'a' && s.front() <= 'z')) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.')) return false;
  return true;
}
inline bool valid_importer_name(const std::string& s) {
  size_t colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size() || s.find(':', colon + 1) != std::string::npos)
    return false;
  for (char c : s)
    if (c == ' ' || c == '\t' || c == '\n') return false;
  return true;
}

// Prepends `outer` to a UserError's context chain (outermost first: op › attribute).
[[noreturn]] inline void rethrow_with_context(const UserError& e, const std::string& outer) {
  std::vector<std::string> ctx{outer};
  ctx.insert(ctx.end(), e.context().begin(), e.context().end());
  throw UserError(e.id(), e.message(), std::move(ctx));
}
}  // namespace detail

// Throws UserError "nnvm.ops.invalid" naming what is wrong with `def`.
inline void validate(const OpDef& def) {
  auto bad = [&](const std::string& why) {
    throw UserError("nnvm.ops.invalid", why, {"op " + (def.name.empty() ? std::string("<unnamed>") : def.name)});
  };
  if (!detail::valid_op_name(def.name))
    bad(str_cat("op name '", def.name, "' must be a lowercase identifier (a-z, 0-9, '_', inner '.')"));
  if (!def.compute) bad("the op has no compute function");
  if (def.optional_inputs > def.input_names.size())
    bad(str_cat(def.optional_inputs, " optional inputs but only ", def.input_names.size(), " input names"));
  for (auto& v : def.value_inputs)
    if (std::find(def.input_names.begin(), def.input_names.end(), v) == def.input_names.end())
      bad(str_cat("value input '", v, "' is not one of the input names"));
  for (size_t i = 0; i < def.input_names.size(); ++i) {
    if (def.input_names[i].empty()) bad(str_cat("input ", i, " has an empty name"));
    for (size_t j = 0; j < i; ++j)
      if (def.input_names[i] == def.input_names[j]) bad(str_cat("input name '", def.input_names[i], "' appears twice"));
  }
  for (size_t i = 0; i < def.importer_names.size(); ++i) {
    if (!detail::valid_importer_name(def.importer_names[i]))
      bad(str_cat("importer name '", def.importer_names[i], "' must read format:OpType, e.g. onnx:Relu"));
    for (size_t j = 0; j < i; ++j)
      if (def.importer_names[i] == def.importer_names[j])
        bad(str_cat("importer name '", def.importer_names[i], "' appears twice"));
  }
}

// Runs the op's compute on `inputs` (placeholders, or tensors of an enclosing computation, as a
// TOPI function would be called). Checks the input count (UserError "nnvm.ops.input_count") and
// that the compute returned outputs; UserErrors from the compute get "op <name>" as the outermost
// context.
inline std::vector<te::Tensor> apply(const OpDef& def, const std::vector<te::Tensor>& inputs, const Attrs& attrs = {}) {
  std::string where = "op " + def.name;
  if (!def.compute) throw UserError("nnvm.ops.invalid", "the op has no compute function", {where});
  size_t most = def.input_names.size(), least = most - std::min(def.optional_inputs, most);
  if (inputs.size() < least || inputs.size() > most)
    throw UserError("nnvm.ops.input_count",
                    str_cat("takes ", least == most ? str_cat(most) : str_cat(least, " to ", most), " input",
                            most == 1 ? "" : "s", ", got ", inputs.size()),
                    {where});
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined() && i < least)
      throw UserError("nnvm.ops.input_count", str_cat("input ", i, " (", def.input_names[i], ") is required"), {where});
  std::vector<te::Tensor> outs;
  try {
    outs = def.compute(inputs, attrs);
  } catch (const UserError& e) {
    detail::rethrow_with_context(e, where);
  }
  if (outs.empty()) throw UserError("nnvm.ops.invalid", "the compute function returned no outputs", {where});
  for (auto& o : outs)
    if (!o.defined()) throw UserError("nnvm.ops.invalid", "the compute function returned an undefined tensor", {where});
  return outs;
}

// True when input `i` of `def` is one of its value inputs.
inline bool is_value_input(const OpDef& def, size_t i) {
  return i < def.input_names.size() &&
         std::find(def.value_inputs.begin(), def.value_inputs.end(), def.input_names[i]) != def.value_inputs.end();
}

// One placeholder per input, named after the op's input names; undefined for an absent input.
inline std::vector<te::Tensor> placeholders(const OpDef& def, const std::vector<TensorType>& inputs) {
  std::vector<te::Tensor> ph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].absent) {
      ph.emplace_back();
      continue;
    }
    std::vector<ir::Expr> shape = inputs[i].shape;
    // A value input is never read, so an empty one (ReduceSum's axes = []) needs no real extent;
    // tensors cannot have zero extents.
    if (is_value_input(def, i))
      for (auto& e : shape)
        if (ir::is_const_int(e, 0)) e = ir::Expr(int64_t(1));
    ph.push_back(te::placeholder(shape, inputs[i].dtype, i < def.input_names.size() ? def.input_names[i] : str_cat("in", i)));
  }
  return ph;
}

// The output types for inputs of the given types: the op's shape and dtype rule. Output extents
// are expressions of the input extents (simplified), so symbolic sizes flow through.
inline std::vector<TensorType> infer_types(const OpDef& def, const std::vector<TensorType>& inputs,
                                           const Attrs& attrs = {}) {
  std::vector<TensorType> out;
  std::vector<te::Tensor> ph = placeholders(def, inputs);
  for (auto& t : apply(def, ph, attrs)) {
    TensorType tt = TensorType::of(t);
    for (auto& e : tt.shape) e = ir::simplify(e);
    out.push_back(std::move(tt));
  }
  return out;
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/op_def.hpp
// begin nnvm/ops/schedule_cpu.hpp
// Schedule building blocks that CPU schedules share (TOPI's schedule_injective and friends), also
// the CPU family's generic recipes (schedule_generic.hpp): each takes one stage and the target,
// and only uses split, fuse, vectorize and parallel, so every result is correct for any extent,
// constant or symbolic. Parallel loops only where the target has a thread pool (not on WASM).


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// Waking the thread pool costs more than a few thousand multiply-adds of work.
inline bool worth_parallel(const schedule::Stage& st) {
  int64_t work = 1;
  for (auto& iv : st.node().root_iter_vars) {
    auto* c = ir::as_const_int(iv->dom.extent);
    if (!c) return true;  // symbolic: may be large
    work *= *c;
  }
  return work >= (int64_t(1) << 14);
}
}  // namespace detail

// Data-parallel stage: the innermost axis is split by the SIMD width and vectorized (the
// lowering peels the remainder into a scalar tail, so odd extents stay vectorized); the other
// axes are fused into one parallel loop. Splitting a fused axis instead would leave div/mod in
// every index and defeat vectorization.
inline void schedule_injective(schedule::Stage st, const target::Target& target) {
  const auto& axes = st.tensor().op().axis;
  if (axes.empty()) return;
  ir::IterVar par = axes.size() >= 2 ? st.fuse(std::vector<ir::IterVar>(axes.begin(), axes.end() - 1)) : ir::IterVar();
  int lanes = target.vector_lanes(st.tensor().dtype());
  if (lanes > 1) {
    auto [outer, inner] = st.split(axes.back(), lanes);
    st.vectorize(inner);
    if (!par.defined()) par = outer;
  } else if (!par.defined()) {
    par = axes.back();
  }
  if (target.has_thread_pool() && detail::worth_parallel(st)) st.parallel(par);
}

// Reduction stage: its data-parallel axes fused into one parallel loop; each iteration runs the
// whole reduction serially (no vectorization: the reduce axis must stay innermost).
inline void schedule_reduction(schedule::Stage st, const target::Target& target) {
  const auto& axes = st.tensor().op().axis;
  if (axes.empty() || !target.has_thread_pool()) return;
  ir::IterVar par = st.fuse(axes);
  if (detail::worth_parallel(st)) st.parallel(par);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/schedule_cpu.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
inline std::string shape_string(const std::vector<ir::Expr>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + ir::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}
}  // namespace detail

// The broadcast result shape. Symbolic extents combine only with 1 or with an extent shown equal
// (same_extent): a size variable against 5 could be either, so it is refused rather than guessed.
// Throws UserError "nnvm.ops.broadcast" naming both shapes and the (output, right-aligned) axis.
inline std::vector<ir::Expr> broadcast_shape(const std::vector<ir::Expr>& a, const std::vector<ir::Expr>& b) {
  size_t rank = std::max(a.size(), b.size());
  std::vector<ir::Expr> out(rank);
  for (size_t d = 0; d < rank; ++d) {
    size_t from_right = rank - d;
    ir::Expr ea = from_right <= a.size() ? a[a.size() - from_right] : ir::Expr(int64_t(1));
    ir::Expr eb = from_right <= b.size() ? b[b.size() - from_right] : ir::Expr(int64_t(1));
    if (ir::is_const_int(ir::simplify(eb), 1) || same_extent(ea, eb))
      out[d] = ea;
    else if (ir::is_const_int(ir::simplify(ea), 1))
      out[d] = eb;
    else
      throw UserError("nnvm.ops.broadcast",
                      str_cat("cannot broadcast shapes ", detail::shape_string(a), " and ", detail::shape_string(b),
                              ": axis ", d, " of the result has extents ", ir::to_string(ea), " and ",
                              ir::to_string(eb), " (each must be 1 or equal to the other)"));
  }
  return out;
}

// The indices that read `t` at output position `v` of a broadcast of rank v.size(): t's axes
// align with the last ones, and an extent-1 axis always reads index 0.
inline std::vector<ir::Expr> broadcast_indices(const te::Tensor& t, const std::vector<ir::Var>& v) {
  std::vector<ir::Expr> idx;
  size_t skip = v.size() - t.rank();
  for (size_t d = 0; d < t.rank(); ++d)
    idx.push_back(ir::is_const_int(ir::simplify(t.shape()[d]), 1) ? ir::Expr(int64_t(0)) : ir::Expr(v[skip + d]));
  return idx;
}

// The broadcast shape of all of `ins` (named `names` in errors), folded from the left.
inline std::vector<ir::Expr> broadcast_shape_of(const std::vector<te::Tensor>& ins,
                                                const std::vector<std::string>& names) {
  std::vector<ir::Expr> shape = ins[0].shape();
  for (size_t k = 1; k < ins.size(); ++k) {
    try {
      shape = broadcast_shape(shape, ins[k].shape());
    } catch (const UserError& e) {
      std::string who = k == 1 ? str_cat("inputs ", names[0], " (tensor ", ins[0].name(), ") and ", names[1],
                                         " (tensor ", ins[1].name(), ")")
                               : str_cat("input ", names[k], " (tensor ", ins[k].name(), ") and the inputs before it");
      throw UserError(e.id(), str_cat(who, ": ", e.message()), e.context());
    }
  }
  return shape;
}

using NaryFn = std::function<ir::Expr(const std::vector<ir::Expr>&)>;

// f(elements of ins) over their broadcast shape. `f` receives the elements as stored: the
// caller converts storage floats and picks the output dtype.
inline te::Tensor broadcast_map(const std::vector<te::Tensor>& ins, const std::vector<std::string>& names,
                                const NaryFn& f, std::string name) {
  std::vector<ir::Expr> shape = broadcast_shape_of(ins, names);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> x;
        for (auto& t : ins) x.push_back(t(broadcast_indices(t, v)));
        return f(x);
      },
      std::move(name));
}

// "nnvm.ops.input_dtype" unless every input has the first one's dtype, of kind `kind`.
inline void check_same_dtypes(const std::vector<te::Tensor>& ins, const std::vector<std::string>& names,
                              DtypeKind kind) {
  check_input_kind(ins[0], names[0], kind);
  for (size_t k = 1; k < ins.size(); ++k) check_same_dtype(ins[0], names[0].c_str(), ins[k], names[k].c_str());
}

using BinaryFn = std::function<ir::Expr(const ir::Expr&, const ir::Expr&)>;

// f(A, B) over the broadcast shape. Both inputs must share a dtype of kind `kind`
// ("nnvm.ops.input_dtype"); float16/bfloat16 compute in float32 and round back.
inline te::Tensor broadcast_binary(const te::Tensor& a, const te::Tensor& b, const BinaryFn& f, DtypeKind kind,
                                   std::string name) {
  check_same_dtypes({a, b}, {"A", "B"}, kind);
  DataType t = a.dtype(), ct = arith_type(t);
  return broadcast_map(
      {a, b}, {"A", "B"},
      [&](const std::vector<ir::Expr>& x) { return ir::cast(t, f(ir::cast(ct, x[0]), ir::cast(ct, x[1]))); },
      std::move(name));
}

// The definition of a two-input broadcast op (inputs A and B, no attributes).
inline OpDef broadcast_binary_def(std::string name, std::string importer_name, std::string doc, BinaryFn f,
                                  DtypeKind kind = DtypeKind::number) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute = [op, f, kind](
                     const std::vector<te::Tensor>& in,
                     const Attrs&) { return std::vector<te::Tensor>{broadcast_binary(in[0], in[1], f, kind, op)}; },
      .doc = std::move(doc),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/broadcast.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// -a in the unsigned type of a's width, converted back: defined even for the most negative value.
inline ir::Expr wrapping_neg(const ir::Expr& a) {
  DataType u = DataType::uint(a.dtype().bits, a.dtype().lanes);
  return ir::cast(a.dtype(), ir::make_zero(u) - ir::cast(u, a));
}
}  // namespace detail

// Integer a / b truncated toward zero (C, ONNX Div), or a % b with the dividend's sign. Kernels
// cannot fail, so the cases C leaves undefined get values: a zero divisor gives 0 (as NumPy), and
// a signed divisor of -1 negates (wrapping: INT_MIN / -1 is INT_MIN) or gives remainder 0.
inline ir::Expr int_div_mod(const ir::Expr& a, const ir::Expr& b, bool mod) {
  DataType t = a.dtype();
  ir::Expr zero = ir::make_zero(t), one = ir::make_int_const(t, 1);
  ir::Expr is_zero = b == zero;
  if (!t.is_int()) {
    ir::Expr safe = ir::select(is_zero, one, b);
    return ir::select(is_zero, zero, mod ? a % safe : a / safe);
  }
  ir::Expr minus_one = b == ir::make_int_const(t, -1);
  ir::Expr safe = ir::select(is_zero || minus_one, one, b);
  ir::Expr special = mod ? zero : ir::select(is_zero, zero, detail::wrapping_neg(a));
  return ir::select(is_zero || minus_one, special, mod ? a % safe : a / safe);
}

inline OpDef add_def() {
  return broadcast_binary_def("add", "onnx:Add", "A + B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a + b; });
}
inline OpDef div_def() {
  return broadcast_binary_def("div", "onnx:Div", "A / B with broadcasting (integers truncate toward zero)",
                              [](const ir::Expr& a, const ir::Expr& b) {
                                return a.dtype().is_float() ? a / b : int_div_mod(a, b, /*mod=*/false);
                              });
}
inline OpDef mul_def() {
  return broadcast_binary_def("mul", "onnx:Mul", "A * B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a * b; });
}
inline OpDef sub_def() {
  return broadcast_binary_def("sub", "onnx:Sub", "A - B with broadcasting",
                              [](const ir::Expr& a, const ir::Expr& b) { return a - b; });
}

// ONNX Pow: the exponent B may have another number type than the base A; the output has A's.
// The exponent converts to the base's arithmetic type; an integer base computes in float64 and
// converts back (exact while the result fits in 53 bits).
inline te::Tensor power(const te::Tensor& a, const te::Tensor& b, std::string name = "pow") {
  check_input_kind(a, "A", DtypeKind::number);
  check_input_kind(b, "B", DtypeKind::number);
  DataType t = a.dtype(), ct = t.is_float() ? arith_type(t) : dtype::float64;
  return broadcast_map(
      {a, b}, {"A", "B"},
      [&](const std::vector<ir::Expr>& x) {
        return ir::cast(t, ir::call(ir::CallOp::pow, ir::cast(ct, x[0]), ir::cast(ct, x[1])));
      },
      std::move(name));
}

inline OpDef pow_def() {
  return OpDef{
      .name = "pow",
      .importer_names = {"onnx:Pow"},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute = [](const std::vector<te::Tensor>& in,
                    const Attrs&) { return std::vector<te::Tensor>{power(in[0], in[1])}; },
      .doc = "A ^ B with broadcasting; B may have another number type, the output has A's",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/binary.hpp
// begin nnvm/ops/broadcast/bitwise.hpp
// Bitwise ops on integers with broadcasting: ONNX BitwiseAnd, BitwiseOr, BitwiseXor, BitShift.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef bitwise_and_def() {
  return broadcast_binary_def(
      "bitwise_and", "onnx:BitwiseAnd", "A & B for integers, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return ir::call(ir::CallOp::bitwise_and, a, b); }, DtypeKind::integer);
}
inline OpDef bitwise_or_def() {
  return broadcast_binary_def(
      "bitwise_or", "onnx:BitwiseOr", "A | B for integers, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return ir::call(ir::CallOp::bitwise_or, a, b); }, DtypeKind::integer);
}
inline OpDef bitwise_xor_def() {
  return broadcast_binary_def(
      "bitwise_xor", "onnx:BitwiseXor", "A ^ B for integers, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return ir::call(ir::CallOp::bitwise_xor, a, b); }, DtypeKind::integer);
}

// ONNX BitShift (attribute direction, "LEFT" or "RIGHT", required). ONNX defines it for unsigned
// integers; signed ones are accepted too and shift right arithmetically. An amount of the bit
// width or more gives 0 (all sign bits for a negative signed value shifted right) instead of C's
// undefined behavior (ir::CallOp::shift_left/shift_right).
inline OpDef bit_shift_def() {
  return OpDef{
      .name = "bit_shift",
      .importer_names = {"onnx:BitShift"},
      .input_names = {"X", "Y"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const std::string& dir = attrs.get_string("direction");
            if (dir != "LEFT" && dir != "RIGHT")
              throw UserError("nnvm.ops.attr",
                              str_cat("attribute 'direction' is '", dir, "' but must be LEFT or RIGHT"),
                              {"attribute direction"});
            ir::CallOp op = dir == "LEFT" ? ir::CallOp::shift_left : ir::CallOp::shift_right;
            check_same_dtypes(in, {"X", "Y"}, DtypeKind::integer);
            return std::vector<te::Tensor>{broadcast_map(
                in, {"X", "Y"}, [op](const std::vector<ir::Expr>& x) { return ir::call(op, x[0], x[1]); },
                "bit_shift")};
          },
      .doc = "X << Y or X >> Y (attribute direction LEFT or RIGHT) for integers, with broadcasting",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/bitwise.hpp
// begin nnvm/ops/broadcast/compare.hpp
// Comparisons with broadcasting and a bool output: ONNX Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual. Operands: numbers or bools, both of one dtype; float16/bfloat16 compare as
// the float32 values they hold exactly.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef compare_def(std::string name, std::string importer_name, std::string doc, BinaryFn f) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute =
          [op, f](const std::vector<te::Tensor>& in, const Attrs&) {
            check_same_dtypes(in, {"A", "B"}, DtypeKind::compare);
            DataType ct = arith_type(in[0].dtype());
            return std::vector<te::Tensor>{broadcast_map(
                in, {"A", "B"},
                [&](const std::vector<ir::Expr>& x) { return f(ir::cast(ct, x[0]), ir::cast(ct, x[1])); }, op)};
          },
      .doc = std::move(doc),
  };
}

inline OpDef equal_def() {
  return compare_def("equal", "onnx:Equal", "A == B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a == b; });
}
inline OpDef greater_def() {
  return compare_def("greater", "onnx:Greater", "A > B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a > b; });
}
inline OpDef greater_or_equal_def() {
  return compare_def("greater_or_equal", "onnx:GreaterOrEqual", "A >= B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a >= b; });
}
inline OpDef less_def() {
  return compare_def("less", "onnx:Less", "A < B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a < b; });
}
inline OpDef less_or_equal_def() {
  return compare_def("less_or_equal", "onnx:LessOrEqual", "A <= B with broadcasting (bool output)",
                     [](const ir::Expr& a, const ir::Expr& b) { return a <= b; });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/compare.hpp
// begin nnvm/ops/broadcast/logical.hpp
// Logical ops on bools with broadcasting: ONNX And, Or, Xor.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef and_def() {
  return broadcast_binary_def(
      "and", "onnx:And", "A and B for bools, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a && b; }, DtypeKind::boolean);
}
inline OpDef or_def() {
  return broadcast_binary_def(
      "or", "onnx:Or", "A or B for bools, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a || b; }, DtypeKind::boolean);
}
inline OpDef xor_def() {
  return broadcast_binary_def(
      "xor", "onnx:Xor", "A xor B for bools, with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a != b; }, DtypeKind::boolean);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/logical.hpp
// begin nnvm/ops/broadcast/mod.hpp
// ONNX Mod with broadcasting. Attribute fmod: 0 (default) gives the remainder with the sign of
// the divisor (Python's %, NumPy's mod), 1 the remainder with the sign of the dividend (C's fmod
// and integer %). Any number type.


NNVM_BEGIN_NAMESPACE
namespace ops {

// ONNX requires fmod=1 for floats; fmod=0 on floats is taken as NumPy's mod rather than refused.
// A zero integer divisor gives 0 (int_div_mod).
inline ir::Expr mod_expr(const ir::Expr& a, const ir::Expr& b, bool c_fmod) {
  DataType t = a.dtype();
  ir::Expr r = t.is_float() ? ir::call(ir::CallOp::fmod, a, b) : int_div_mod(a, b, /*mod=*/true);
  if (c_fmod || t.is_uint()) return r;
  // A non-zero remainder whose sign differs from the divisor's moves by one divisor.
  ir::Expr zero = ir::make_zero(t);
  return ir::select(r != zero && ((r < zero) != (b < zero)), r + b, r);
}

inline OpDef mod_def() {
  return OpDef{
      .name = "mod",
      .importer_names = {"onnx:Mod"},
      .input_names = {"A", "B"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            int64_t fmod = attrs.get_int("fmod", 0);
            if (fmod != 0 && fmod != 1)
              throw UserError("nnvm.ops.attr", str_cat("attribute 'fmod' is ", fmod, " but must be 0 or 1"),
                              {"attribute fmod"});
            return std::vector<te::Tensor>{broadcast_binary(
                in[0], in[1], [fmod](const ir::Expr& a, const ir::Expr& b) { return mod_expr(a, b, fmod == 1); },
                DtypeKind::number, "mod")};
          },
      .doc = "A mod B with broadcasting; attribute fmod 0: sign of B (Python), 1: sign of A (C fmod)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/mod.hpp
// begin nnvm/ops/broadcast/prelu.hpp
// prelu(X, slope) = X if X >= 0 else slope * X. ONNX PRelu: slope broadcasts to X's shape
// (unidirectionally: the output always has X's shape).


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor prelu(const te::Tensor& x, const te::Tensor& slope, std::string name = "prelu") {
  check_same_dtypes({x, slope}, {"X", "slope"}, DtypeKind::number);
  std::vector<ir::Expr> shape = broadcast_shape_of({x, slope}, {"X", "slope"});
  bool stays = shape.size() == x.rank();
  for (size_t d = 0; stays && d < shape.size(); ++d) stays = same_extent(shape[d], x.shape()[d]);
  if (!stays)
    throw UserError(
        "nnvm.ops.broadcast",
        str_cat("input slope (tensor ", slope.name(), ") of shape ", detail::shape_string(slope.shape()),
                " must broadcast to the shape of X ", detail::shape_string(x.shape()), " without changing it"),
        {"input slope"});
  DataType t = x.dtype(), ct = arith_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        ir::Expr s = ir::cast(ct, slope(broadcast_indices(slope, v)));
        return ir::cast(t, ir::select(e < ir::make_zero(ct), e * s, e));
      },
      std::move(name));
}

inline OpDef prelu_def() {
  return OpDef{
      .name = "prelu",
      .importer_names = {"onnx:PRelu"},
      .input_names = {"X", "slope"},
      .pattern = OpPattern::broadcast,
      .compute = [](const std::vector<te::Tensor>& in,
                    const Attrs&) { return std::vector<te::Tensor>{prelu(in[0], in[1])}; },
      .doc = "X if X >= 0 else slope * X; slope broadcasts to X's shape",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/prelu.hpp
// begin nnvm/ops/broadcast/variadic.hpp
// The ONNX ops that fold any number of inputs with broadcasting: Max, Min, Sum, Mean. They take
// 1 to 8 inputs (A..H); one input is copied.

// begin nnvm/ops/elementwise/unary.hpp
// Unary elementwise ops that are one math call each (ONNX Exp, Log, Sqrt, ...). They differ only
// in the scalar function, so one generator makes their definitions; each op is still one named
// definition (exp_def, log_def, ...) in the sorted built-in list.


NNVM_BEGIN_NAMESPACE
namespace ops {

using ScalarFn = std::function<ir::Expr(const ir::Expr&)>;

// Applies `f` to every element of `x`, whose dtype must be of `kind` ("nnvm.ops.input_dtype");
// float16/bfloat16 (storage types) compute in float32 and round back.
inline te::Tensor unary_elementwise(const te::Tensor& x, const ScalarFn& f, DtypeKind kind, std::string name) {
  check_input_kind(x, "X", kind);
  DataType t = x.dtype();
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(std::vector<ir::Expr>(v.begin(), v.end()));
        if (!t.is_storage_only()) return f(e);
        return ir::cast(t, f(ir::cast(dtype::float32, e)));
      },
      std::move(name));
}

// The definition of a one-input, one-output elementwise op with the injective default schedule.
// `f` reads the attributes once per build, so per-use parameters (alpha) become constants.
inline OpDef unary_def(std::string name, std::string importer_name, std::string doc,
                       std::function<ScalarFn(const Attrs&)> make_f, DtypeKind kind = DtypeKind::float_) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"X"},
      .pattern = OpPattern::elementwise,
      .compute =
          [op, make_f, kind](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{unary_elementwise(in[0], make_f(attrs), kind, op)};
          },
      .doc = std::move(doc),
  };
}

// A definition whose scalar function is a single math intrinsic and takes no attributes.
inline OpDef unary_call_def(std::string name, std::string importer_name, ir::CallOp call, std::string doc) {
  return unary_def(std::move(name), std::move(importer_name), std::move(doc), [call](const Attrs&) -> ScalarFn {
    return [call](const ir::Expr& e) { return ir::call(call, e); };
  });
}

// Any number; unsigned values are their own absolute value.
inline OpDef abs_def() {
  return unary_def("abs", "onnx:Abs", "|X|, elementwise", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return e.dtype().is_uint() ? e : ir::call(ir::CallOp::abs, e); };
  }, DtypeKind::number);
}
inline OpDef acos_def() { return unary_call_def("acos", "onnx:Acos", ir::CallOp::acos, "acos(X), elementwise"); }
inline OpDef acosh_def() { return unary_call_def("acosh", "onnx:Acosh", ir::CallOp::acosh, "acosh(X), elementwise"); }
inline OpDef asin_def() { return unary_call_def("asin", "onnx:Asin", ir::CallOp::asin, "asin(X), elementwise"); }
inline OpDef asinh_def() { return unary_call_def("asinh", "onnx:Asinh", ir::CallOp::asinh, "asinh(X), elementwise"); }
inline OpDef atan_def() { return unary_call_def("atan", "onnx:Atan", ir::CallOp::atan, "atan(X), elementwise"); }
inline OpDef atanh_def() { return unary_call_def("atanh", "onnx:Atanh", ir::CallOp::atanh, "atanh(X), elementwise"); }
inline OpDef ceil_def() { return unary_call_def("ceil", "onnx:Ceil", ir::CallOp::ceil, "ceil(X), elementwise"); }
inline OpDef cos_def() { return unary_call_def("cos", "onnx:Cos", ir::CallOp::cos, "cos(X), elementwise"); }
inline OpDef cosh_def() { return unary_call_def("cosh", "onnx:Cosh", ir::CallOp::cosh, "cosh(X), elementwise"); }
inline OpDef erf_def() { return unary_call_def("erf", "onnx:Erf", ir::CallOp::erf, "erf(X), elementwise"); }
inline OpDef exp_def() { return unary_call_def("exp", "onnx:Exp", ir::CallOp::exp, "e^X, elementwise"); }
inline OpDef floor_def() { return unary_call_def("floor", "onnx:Floor", ir::CallOp::floor, "floor(X), elementwise"); }
inline OpDef log_def() { return unary_call_def("log", "onnx:Log", ir::CallOp::log, "natural log of X, elementwise"); }
inline OpDef neg_def() {
  return unary_def("neg", "onnx:Neg", "-X, elementwise", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return -e; };
  }, DtypeKind::number);
}
inline OpDef reciprocal_def() {
  return unary_def("reciprocal", "onnx:Reciprocal", "1 / X, elementwise", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return 1.0 / e; };
  });
}
// Half-way cases round to even (ONNX Round): nearbyint in the default rounding mode.
inline OpDef round_def() {
  return unary_call_def("round", "onnx:Round", ir::CallOp::round, "X rounded to the nearest integer, ties to even");
}
inline OpDef sigmoid_def() {
  return unary_call_def("sigmoid", "onnx:Sigmoid", ir::CallOp::sigmoid, "1 / (1 + e^-X), elementwise");
}
inline OpDef sin_def() { return unary_call_def("sin", "onnx:Sin", ir::CallOp::sin, "sin(X), elementwise"); }
inline OpDef sinh_def() { return unary_call_def("sinh", "onnx:Sinh", ir::CallOp::sinh, "sinh(X), elementwise"); }
inline OpDef sqrt_def() { return unary_call_def("sqrt", "onnx:Sqrt", ir::CallOp::sqrt, "sqrt(X), elementwise"); }
inline OpDef tan_def() { return unary_call_def("tan", "onnx:Tan", ir::CallOp::tan, "tan(X), elementwise"); }
inline OpDef tanh_def() { return unary_call_def("tanh", "onnx:Tanh", ir::CallOp::tanh, "tanh(X), elementwise"); }

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/unary.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

// f folded over the elements of `ins` from the left, in their arithmetic type; `finish` (when
// set) maps the folded value, before it converts back to the inputs' dtype.
inline te::Tensor broadcast_fold(const std::vector<te::Tensor>& ins, const BinaryFn& f, DtypeKind kind,
                                 const ScalarFn& finish, std::string name) {
  std::vector<std::string> names;
  for (size_t k = 0; k < ins.size(); ++k) names.push_back(std::string(1, char('A' + k)));
  check_same_dtypes(ins, names, kind);
  DataType t = ins[0].dtype(), ct = arith_type(t);
  return broadcast_map(
      ins, names,
      [&](const std::vector<ir::Expr>& x) {
        ir::Expr acc = ir::cast(ct, x[0]);
        for (size_t k = 1; k < x.size(); ++k) acc = f(acc, ir::cast(ct, x[k]));
        return ir::cast(t, finish ? finish(acc) : acc);
      },
      std::move(name));
}

inline OpDef variadic_def(std::string name, std::string importer_name, std::string doc, BinaryFn f,
                          DtypeKind kind = DtypeKind::number, std::function<ScalarFn(size_t inputs)> finish = {}) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"A", "B", "C", "D", "E", "F", "G", "H"},
      .optional_inputs = 7,
      .pattern = OpPattern::broadcast,
      .compute =
          [op, f, kind, finish](const std::vector<te::Tensor>& in, const Attrs&) {
            for (size_t k = 0; k < in.size(); ++k)
              if (!in[k].defined())
                throw UserError("nnvm.ops.input_count",
                                str_cat("input ", char('A' + k), " is absent; ", op, " takes its inputs without gaps"),
                                {"input " + std::string(1, char('A' + k))});
            return std::vector<te::Tensor>{broadcast_fold(in, f, kind, finish ? finish(in.size()) : ScalarFn(), op)};
          },
      .doc = std::move(doc),
  };
}

inline OpDef max_def() {
  return variadic_def("max", "onnx:Max", "elementwise max of 1 to 8 inputs with broadcasting",
                      [](const ir::Expr& a, const ir::Expr& b) { return ir::max(a, b); });
}
inline OpDef mean_def() {
  return variadic_def(
      "mean", "onnx:Mean", "elementwise mean of 1 to 8 float inputs with broadcasting",
      [](const ir::Expr& a, const ir::Expr& b) { return a + b; }, DtypeKind::float_,
      [](size_t n) -> ScalarFn { return [n](const ir::Expr& s) { return s / double(n); }; });
}
inline OpDef min_def() {
  return variadic_def("min", "onnx:Min", "elementwise min of 1 to 8 inputs with broadcasting",
                      [](const ir::Expr& a, const ir::Expr& b) { return ir::min(a, b); });
}
inline OpDef sum_def() {
  return variadic_def("sum", "onnx:Sum", "elementwise sum of 1 to 8 inputs with broadcasting",
                      [](const ir::Expr& a, const ir::Expr& b) { return a + b; });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/variadic.hpp
// begin nnvm/ops/broadcast/where.hpp
// where(condition, X, Y) = X where condition holds, else Y; the three broadcast together. ONNX
// Where: condition is bool, X and Y share any dtype.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef where_def() {
  return OpDef{
      .name = "where",
      .importer_names = {"onnx:Where"},
      .input_names = {"condition", "X", "Y"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            check_input_kind(in[0], "condition", DtypeKind::boolean);
            check_same_dtypes({in[1], in[2]}, {"X", "Y"}, DtypeKind::any);
            return std::vector<te::Tensor>{broadcast_map(
                in, {"condition", "X", "Y"},
                [](const std::vector<ir::Expr>& x) { return ir::select(x[0], x[1], x[2]); }, "where")};
          },
      .doc = "X where condition else Y, the three broadcast together",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/where.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> broadcast_ops() {
  return {
      add_def(),
      and_def(),
      bit_shift_def(),
      bitwise_and_def(),
      bitwise_or_def(),
      bitwise_xor_def(),
      div_def(),
      equal_def(),
      greater_def(),
      greater_or_equal_def(),
      less_def(),
      less_or_equal_def(),
      max_def(),
      mean_def(),
      min_def(),
      mod_def(),
      mul_def(),
      or_def(),
      pow_def(),
      prelu_def(),
      sub_def(),
      sum_def(),
      where_def(),
      xor_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/broadcast/family.hpp
// begin nnvm/ops/conv/family.hpp
// Convolutions and pooling: conv1d/2d/3d, depthwise, conv-transpose, max/avg/lp/global pools,
// and the blocked NCHW[x]c convolutions with their layout transform.
// One sorted list per family; builtin.hpp joins the families.

// begin nnvm/ops/conv/average_pool.hpp
// average_pool: the mean of each window (ONNX AveragePool). The divisor counts the taps inside
// X, or with count_include_pad also those in the explicit (or auto_pad) padding; taps past the
// end padding, which only ceil_mode makes, never count. A window with nothing to count gives 0.

// begin nnvm/ops/conv/pooling.hpp
// What the pools share: the pooling window of X (N, C, D1, ...) and the reduction over its taps
// that lie inside X. Taps in the padding are skipped by a guard on the reduction (no padded copy),
// so max pooling never sees a padding value and the sum pools add nothing for it.

// begin nnvm/ops/conv/nchwc_schedule.hpp
// The CPU schedule of convolutions in the blocked layout NCHW[x]c (conv_nchwc,
// depthwise_conv_nchwc): output (N, M / ob, OH, OW, ob). TVM's x86 conv2d_NCHWc schedule, in nnvm:
//
//   parallel over (n, output channel block, output row)
//     for each tile of `row_tile` output columns
//       acc[row_tile][ob] = bias                 (registers: row_tile x ob / lanes vectors)
//       for every reduction step (input block, kh, kw, input channel in the block)
//         for each column of the tile (unrolled)
//           acc[column][:] += x (one input value, broadcast) * w[:] (one weight vector)
//       out[...] = epilogue(acc)                 (vectorized over the channel block)
//
// Each loaded weight vector feeds row_tile independent multiply-adds, so the loop is bound by
// FMA throughput, not by loads or FMA latency; the accumulators never go to memory, and the
// elementwise ops fused after the convolution (relu, a residual add) run on them at write-back.

#include <optional>


NNVM_BEGIN_NAMESPACE
namespace ops {

// The vector registers a blocked conv's accumulator tile may take: the target's own count
// (Target::vector_registers: 32 with AVX-512, 16 with AVX2), at most 16 below 512-bit vectors
// (NEON's 32 are 128-bit, so a block needs more of them than an AVX-512 block does).
inline int64_t vector_registers(const Target& t) {
  return std::min<int64_t>(t.vector_registers, t.vector_bits >= 512 ? 32 : 16);
}

namespace detail {

// Output columns per register tile: the largest of 14..4 that divides `out_width` (a tile that
// divides the row leaves no tail), else 6, with the accumulators (tile x vectors_per_block
// registers) leaving 4 of the target's vector registers (16 with AVX2, 32 with AVX-512) for the
// weight vectors and the broadcast input. AVX-512 thus takes 14 x 2 vectors at 14 or 28 columns,
// 7 x 2 at 7: twice the multiply-adds per loaded weight of the 16-accumulator limit it had.
inline int64_t nchwc_row_tile(int64_t out_width, int64_t vectors_per_block, int64_t registers) {
  int64_t most = std::max<int64_t>(1, (registers - 4) / std::max<int64_t>(1, vectors_per_block));
  for (int64_t t = std::min<int64_t>(14, most); t >= 4; --t)
    if (out_width % t == 0) return std::min(t, out_width);
  return std::min({int64_t(6), most, out_width});
}

// Bytes of the padded input `pad` (rank 5, constant shape) that one output row of `Y` reads:
// every channel block and column of the input rows one window spans (KH rows at dilation 1, more
// when dilated). The span is bounded from the row index Y reads `pad` at, with the output row
// fixed and the reduce axes over their ranges. Empty when a shape or the span is not constant.
inline std::optional<int64_t> padded_rows_bytes(const te::Tensor& Y, const te::Tensor& pad) {
  struct FindRow : ir::IRVisitor {
    const ir::ProducerNode* pad;
    ir::Expr row;
    using ir::IRVisitor::visit;
    void visit(const ir::ProducerLoad* op) override {
      if (op->tensor.get() == pad && op->indices.size() == 5) row = op->indices[2];
      ir::IRVisitor::visit(op);
    }
  } find;
  find.pad = pad.get();
  find.visit_expr(Y.op().body);
  if (!find.row.defined()) return std::nullopt;
  ir::IntervalMap ranges;
  ranges[Y.op().axis[2].var().get()] = ir::Interval::point(0);
  for (auto& r : Y.op().reduce_axes) {
    auto* extent = ir::as_const_int(ir::simplify(r->dom.extent));
    if (!extent || *extent < 1) return std::nullopt;
    ranges[r.var().get()] = ir::Interval::range(0, *extent - 1);
  }
  ir::Interval span = ir::const_bound(find.row, ranges);
  if (!span.is_bounded()) return std::nullopt;
  int64_t bytes = (*span.max - *span.min + 1) * pad.dtype().bytes();
  for (int d : {1, 3, 4}) {
    auto* e = ir::as_const_int(ir::simplify(pad.shape()[d]));
    if (!e) return std::nullopt;
    bytes *= *e;
  }
  return bytes;
}

// Schedules conv stage `Y` (rank 5, a reduction) whose result reaches memory as `out`: `Y` itself
// or an elementwise epilogue of it with Y's shape. False (nothing changed) when the shapes are not
// constant.
//
// `channelwise`: each output channel reads only its own input channel (depthwise convs, pools).
// Such an op reads its input through the padding's select instead of a padded copy: it does a
// few multiply-adds per input element, so copying the padded rows (up to KH times each) cost it
// as much as its own work (2x at 3x3 stride 2); vectorize turns each guarded tap into an if/else
// on a condition that is constant for the tile's rows and mostly for its columns. A block of
// several vectors runs one vector at a time, as if blocked by one vector, so the rows a task
// reads stay a vector wide while the layout keeps the block its producer chose.
inline bool schedule_nchwc(schedule::Schedule& s, const te::Tensor& Y, const te::Tensor& out, const Target& target,
                           bool channelwise = false) {
  if (Y.rank() != 5 || out.rank() != 5 || Y.op().reduce_axes.empty()) return false;
  auto* ow = ir::as_const_int(ir::simplify(Y.shape()[3]));
  auto* ob = ir::as_const_int(ir::simplify(Y.shape()[4]));
  if (!ow || !ob) return false;
  int64_t lanes = target.vector_lanes(Y.dtype());
  bool by_vector = channelwise && *ob > lanes && *ob % lanes == 0;
  te::Tensor acc = s.cache_write(Y, ir::MemoryScope::local);
  if (!out.same_as(Y)) s[Y].compute_inline();
  auto o = s[out];
  const auto& axes = out.op().axis;
  auto [col_tile, col] =
      o.split(axes[3], nchwc_row_tile(*ow, by_vector ? 1 : (*ob + lanes - 1) / lanes, vector_registers(target)));
  ir::IterVar rows;
  if (by_vector) {
    auto [vec, lane] = o.split(axes[4], lanes);
    o.reorder({axes[0], axes[1], axes[2], vec, col_tile, col, lane});
    o.vectorize(lane);
    rows = o.fuse({axes[0], axes[1], axes[2], vec});
  } else {
    o.reorder({axes[0], axes[1], axes[2], col_tile, col, axes[4]});
    o.vectorize(axes[4]);
    rows = o.fuse({axes[0], axes[1], axes[2]});
  }
  if (worth_parallel(o)) o.parallel(rows);
  s[acc].compute_at(o, col_tile);
  // The zero-padded input, when the convolution has pads: inlined into a channelwise op (see
  // above); for the others the rows one output row reads, padded per output row into a small
  // buffer that stays in cache (a whole padded copy of the input would cost a pass over memory),
  // a few percent of the conv's work. Inside the parallel loop that buffer is each task's own
  // stack array, which the emitters cap at kMaxStackBytes: where the rows are wider (many
  // channels, wide rows or tall windows: ResNet-50's 512-channel 3x3 convs, VGG's 224-wide rows)
  // the whole input is padded once, in parallel, before the convolution.
  for (auto& in : Y.op().inputs)
    if (in->op->kind == te::OpKind::compute) {
      auto pad = s[te::Tensor(in)];
      if (channelwise) {
        pad.compute_inline();
        continue;
      }
      const auto& pax = pad.tensor().op().axis;
      std::optional<int64_t> tile = padded_rows_bytes(Y, pad.tensor());
      if (tile && *tile <= target::kMaxStackBytes) {
        pad.compute_at(o, rows);
      } else if (pax.size() == 5) {
        ir::IterVar pad_rows = pad.fuse({pax[0], pax[1], pax[2]});
        if (worth_parallel(pad)) pad.parallel(pad_rows);
      }
      if (pax.size() == 5 && *ob % lanes == 0) {
        auto [outer, inner] = pad.split(pax[4], lanes);
        (void)outer;
        pad.vectorize(inner);
      }
    }
  auto a = s[acc];
  std::vector<ir::IterVar> order{a.axis(0), a.axis(1), a.axis(2)};
  for (size_t r = 0; r < Y.op().reduce_axes.size(); ++r) order.push_back(a.reduce_axis(r));
  order.push_back(a.axis(3));
  order.push_back(a.axis(4));
  a.reorder(order);
  a.unroll(a.axis(3));
  a.vectorize(a.axis(4));
  return true;
}

}  // namespace detail

// The output channel block of a blocked (not depthwise) conv whose output rows are `out_width`
// wide: 2 or 4 vectors, whichever divides `channels` and gives the register tile (see
// nchwc_row_tile) the most accumulators, 2 on a tie or when 4's tile leaves a tail; else 1
// vector when that divides; else 0.
// 4 vectors pay off where rows are short: at 7 columns, 2 vectors fill 14 accumulators and 4
// fill 28 (ResNet-18's 7x7 3x3 convs ran at 0.66-0.72 of oneDNN with 2, 0.80-0.84 with 4).
inline int64_t nchwc_output_block(int64_t channels, int64_t out_width, const Target& t) {
  const int64_t lanes = t.vector_lanes(dtype::float32), regs = vector_registers(t);
  int64_t best = 0, best_acc = 0;
  for (int64_t v : {2, 4}) {
    if (channels % (v * lanes) != 0) continue;
    int64_t tile = detail::nchwc_row_tile(out_width, v, regs);
    if (v == 4 && out_width % tile != 0) continue;  // its tail would run without the tile
    if (tile * v > best_acc) best = v * lanes, best_acc = tile * v;
  }
  if (best == 0 && channels % lanes == 0) best = lanes;
  return best;
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/nchwc_schedule.hpp
// begin nnvm/ops/conv/window.hpp
// The sliding window that convolution and pooling share: ONNX's kernel_shape, strides,
// dilations, pads, auto_pad and ceil_mode, checked against the input and resolved to concrete
// pads and output extents. The spatial extents must be constants (auto_pad and the output
// extents are arithmetic on them); the batch and channel extents may be symbolic.


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
[[noreturn]] inline void bad_window_attr(const char* attr, const std::string& message) {
  throw UserError("nnvm.ops.attr", message, {"attribute " + std::string(attr)});
}
}  // namespace detail

// The window attributes of one node, as the model wrote them (empty lists: the ONNX default).
struct WindowParams {
  std::vector<int64_t> kernel_shape;        // conv takes it from W when empty; pools require it
  std::vector<int64_t> strides, dilations;  // one per spatial axis; empty: all 1
  std::vector<int64_t> pads;                // [x1_begin, x2_begin, ..., x1_end, x2_end, ...]; empty: all 0
  std::string auto_pad = "NOTSET";          // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  bool ceil_mode = false;                   // pools only: round the output extent up

  static WindowParams from(const Attrs& a) {
    WindowParams p;
    p.kernel_shape = a.get_ints("kernel_shape", {});
    p.strides = a.get_ints("strides", {});
    p.dilations = a.get_ints("dilations", {});
    p.pads = a.get_ints("pads", {});
    p.auto_pad = a.get_string("auto_pad", "NOTSET");
    p.ceil_mode = a.get_int("ceil_mode", 0) != 0;
    return p;
  }
};

// A resolved window over `in.size()` spatial axes. Along axis d, tap k of output o reads input
// coordinate o * strides[d] - pad_begin[d] + k * dilations[d]; coordinates outside [0, in[d])
// are padding.
struct Window {
  std::vector<int64_t> in, kernel, strides, dilations, pad_begin, pad_end, out;

  size_t rank() const { return in.size(); }
  // Input coordinates one window covers, first tap to last.
  int64_t span(size_t d) const { return (kernel[d] - 1) * dilations[d] + 1; }
  ir::Expr tap(size_t d, const ir::Expr& o, const ir::Expr& k) const {
    ir::Expr e = o;
    if (strides[d] != 1) e = e * ir::Expr(strides[d]);
    if (pad_begin[d] != 0) e = e - ir::Expr(pad_begin[d]);
    return e + (dilations[d] == 1 ? k : k * ir::Expr(dilations[d]));
  }
};

// The constant extents of x's axes 2.. ("nnvm.ops.input_shape" for a symbolic one).
inline std::vector<int64_t> spatial_extents(const te::Tensor& x, const char* input) {
  std::vector<int64_t> out;
  for (size_t d = 2; d < x.rank(); ++d) {
    auto* c = ir::as_const_int(ir::simplify(x.shape()[d]));
    if (!c)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", input, " (tensor ", x.name(), ") axis ", d, " has the symbolic extent ",
                              ir::to_string(x.shape()[d]), "; spatial extents must be constants"),
                      {"input " + std::string(input)});
    out.push_back(*c);
  }
  return out;
}

// `values` with one entry per spatial axis (`n`), each at least `least`; empty means `fallback`
// everywhere. "nnvm.ops.attr" naming `attr` otherwise.
inline std::vector<int64_t> spatial_ints(const std::vector<int64_t>& values, const char* attr, size_t n,
                                         int64_t fallback, int64_t least) {
  if (values.empty()) return std::vector<int64_t>(n, fallback);
  if (values.size() != n)
    detail::bad_window_attr(attr, str_cat("attribute '", attr, "' has ", values.size(), " values, expected ", n,
                                          " (one per spatial axis)"));
  for (int64_t v : values)
    if (v < least)
      detail::bad_window_attr(attr, str_cat("attribute '", attr, "' holds ", v, "; values must be at least ", least));
  return values;
}

// Explicit pads split into begin and end halves (2n values, each >= 0).
inline std::pair<std::vector<int64_t>, std::vector<int64_t>> split_window_pads(const std::vector<int64_t>& pads,
                                                                               size_t n) {
  if (pads.empty()) return {std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  if (pads.size() != 2 * n)
    detail::bad_window_attr("pads", str_cat("attribute 'pads' has ", pads.size(), " values, expected ", 2 * n,
                                            " (begin and end for each of the ", n, " spatial axes)"));
  for (int64_t v : pads)
    if (v < 0) detail::bad_window_attr("pads", str_cat("attribute 'pads' holds ", v, "; pads must be >= 0"));
  return {std::vector<int64_t>(pads.begin(), pads.begin() + n), std::vector<int64_t>(pads.begin() + n, pads.end())};
}

inline void check_auto_pad(const std::string& auto_pad) {
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    detail::bad_window_attr("auto_pad", str_cat("attribute 'auto_pad' is '", auto_pad,
                                                "'; expected NOTSET, SAME_UPPER, SAME_LOWER or VALID"));
}

// The window of a convolution or pool over input extents `in` with the resolved `kernel`.
// Output extents follow ONNX: NOTSET floor((in + pads - span) / stride) + 1, or with ceil_mode
// the ceiling, less one when the last window would start in the end padding; SAME_* ceil(in /
// stride) with the total padding (never negative) split evenly, the odd one at the end (UPPER) or
// the beginning (LOWER); VALID no padding. `pads` is ignored under SAME_* and VALID.
inline Window resolve_window(const WindowParams& p, std::vector<int64_t> in, std::vector<int64_t> kernel) {
  size_t n = in.size();
  check_auto_pad(p.auto_pad);
  Window w;
  w.in = std::move(in);
  w.kernel = std::move(kernel);
  w.strides = spatial_ints(p.strides, "strides", n, 1, 1);
  w.dilations = spatial_ints(p.dilations, "dilations", n, 1, 1);
  auto [begin, end] = split_window_pads(p.pads, n);
  w.pad_begin = std::move(begin);
  w.pad_end = std::move(end);
  w.out.resize(n);
  for (size_t d = 0; d < n; ++d) {
    int64_t s = w.strides[d], span = w.span(d);
    if (p.auto_pad == "SAME_UPPER" || p.auto_pad == "SAME_LOWER") {
      w.out[d] = (w.in[d] + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (w.out[d] - 1) * s + span - w.in[d]);
      w.pad_begin[d] = p.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[d] = total - w.pad_begin[d];
      continue;
    }
    if (p.auto_pad == "VALID") w.pad_begin[d] = w.pad_end[d] = 0;
    int64_t room = w.in[d] + w.pad_begin[d] + w.pad_end[d] - span;
    if (room < 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("spatial axis ", d, ": the window (kernel_shape ", w.kernel[d], ", dilation ",
                              w.dilations[d], ") spans ", span, " but the padded input has only ",
                              w.in[d] + w.pad_begin[d] + w.pad_end[d], " elements, so the output would be empty"),
                      {"attribute kernel_shape"});
    w.out[d] = (p.ceil_mode ? (room + s - 1) / s : room / s) + 1;
    // ONNX (as PyTorch): a window that would start inside the end padding is dropped.
    if (p.ceil_mode && (w.out[d] - 1) * s >= w.in[d] + w.pad_begin[d]) --w.out[d];
  }
  return w;
}

// True where every tap of the output point `o` (spatial indices) along the guarded axes lies in
// [lo[d], hi[d]); `k` are the tap indices. Undefined when no axis needs a guard.
inline ir::Expr window_guard(const Window& w, const std::vector<ir::Expr>& o, const std::vector<ir::Expr>& k,
                             const std::vector<int64_t>& lo, const std::vector<int64_t>& hi) {
  ir::Expr cond;
  for (size_t d = 0; d < w.rank(); ++d) {
    int64_t first = -w.pad_begin[d], last = (w.out[d] - 1) * w.strides[d] - w.pad_begin[d] + w.span(d) - 1;
    if (first >= lo[d] && last < hi[d]) continue;
    ir::Expr c = w.tap(d, o[d], k[d]);
    ir::Expr in = first < lo[d] ? ir::Expr(c >= ir::Expr(lo[d])) : ir::Expr();
    if (last >= hi[d]) in = in.defined() ? ir::Expr(in && (c < ir::Expr(hi[d]))) : ir::Expr(c < ir::Expr(hi[d]));
    cond = cond.defined() ? ir::Expr(cond && in) : in;
  }
  return cond;
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/window.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

// The window of a pool with attributes `p` over X; kernel_shape is required.
inline Window pool_window(const te::Tensor& X, const WindowParams& p) {
  check_rank(X, "X", 3, 5);
  std::vector<int64_t> in = spatial_extents(X, "X");
  if (p.kernel_shape.empty())
    detail::bad_window_attr("kernel_shape", "attribute 'kernel_shape' is required and must not be empty");
  return resolve_window(p, in, spatial_ints(p.kernel_shape, "kernel_shape", in.size(), 1, 1));
}

// The window of a global pool: one output per channel, covering all of X's spatial extents.
inline Window global_window(const te::Tensor& X) {
  check_rank(X, "X", 3, 5);
  std::vector<int64_t> in = spatial_extents(X, "X");
  WindowParams p;
  return resolve_window(p, in, in);
}

// "nnvm.ops.input_dtype" unless X holds float32 or float64, or (when `ints`) an 8..64-bit integer.
inline void check_pool_dtype(const te::Tensor& X, bool ints) {
  DataType t = X.dtype();
  if (ints && t.is_scalar() && !t.is_bool() && !t.is_handle() && !t.is_float()) return;
  check_float(X, "X");
}

// Y[n, c, o...] = `combiner` over the window taps inside X of value(X[n, c, tap...]), starting
// from the combiner's identity.
inline te::Tensor window_reduce(const te::Tensor& X, const Window& w, ir::Combiner combiner,
                                const std::function<ir::Expr(ir::Expr)>& value, const std::string& name) {
  size_t n = w.rank();
  std::vector<ir::IterVar> taps;
  for (size_t d = 0; d < n; ++d) taps.push_back(te::reduce_axis(ir::Expr(w.kernel[d]), str_cat("rk", d)));
  std::vector<ir::Expr> shape{X.shape()[0], X.shape()[1]};
  for (int64_t o : w.out) shape.emplace_back(o);
  std::vector<int64_t> lo(n, 0);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> o(v.begin() + 2, v.end()), k, idx{v[0], v[1]};
        for (auto& t : taps) k.push_back(t.var());
        for (size_t d = 0; d < n; ++d) idx.push_back(w.tap(d, o[d], k[d]));
        ir::Expr source = value(X(idx));
        // Only taps inside X update the result: the guarded read never leaves X.
        return ir::Reduce::make(combiner, source, taps, ir::Expr(), window_guard(w, o, k, lo, w.in));
      },
      name);
}

// A pool in the blocked layout NCHW[x]c, as the layout pass makes it: a 3-D window over
// (H, W, channel block) that is one element wide along the block.
inline bool is_blocked_pool(const te::Tensor& R) {
  const auto& taps = R.op().reduce_axes;
  if (R.rank() != 5 || taps.size() != 3) return false;
  auto* block_taps = ir::as_const_int(ir::simplify(taps.back()->dom.extent));
  return block_taps && *block_taps == 1;
}

// A pool made by window_reduce, possibly followed by one elementwise stage reading only it
// (average's division, lp's root): the reduction runs its outputs in parallel, the last stage
// is vectorized. A blocked pool gets the blocked conv's schedule instead: a tile of output
// columns in registers, vectorized over the channel block.
inline void schedule_pool(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  te::Tensor R = Y.op().reduce_axes.empty() ? te::Tensor(Y.op().inputs.at(0)) : Y;
  if (is_blocked_pool(R) && detail::schedule_nchwc(s, R, Y, target, /*channelwise=*/true)) return;
  if (!Y.op().reduce_axes.empty()) {
    schedule_reduction(s[Y], target);
    return;
  }
  schedule_reduction(s[te::Tensor(Y.op().inputs.at(0))], target);
  schedule_injective(s[Y], target);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/pooling.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// How many taps of the window at output point `o` lie in [lo, hi) along every axis: per axis
// the taps k in [0, K) with lo <= o * stride - pad_begin + k * dilation < hi, a constant where
// every window along the axis lies inside.
inline ir::Expr window_count(const Window& w, const std::vector<ir::Expr>& o, const std::vector<int64_t>& lo,
                             const std::vector<int64_t>& hi) {
  ir::Expr count(int64_t(1));
  for (size_t d = 0; d < w.rank(); ++d) {
    int64_t first = -w.pad_begin[d], last = (w.out[d] - 1) * w.strides[d] - w.pad_begin[d] + w.span(d) - 1;
    if (first >= lo[d] && last < hi[d]) {
      count = count * ir::Expr(w.kernel[d]);
      continue;
    }
    // First tap at or past lo and first tap at or past hi: ceil((bound - start) / dilation),
    // clamped to [0, K]. Division truncates, which agrees with the ceiling wherever the clamp
    // does not already decide.
    ir::Expr start = w.tap(d, o[d], ir::Expr(int64_t(0))), dil(w.dilations[d]), zero(int64_t(0));
    auto taps_before = [&](int64_t bound) {
      ir::Expr t = (ir::Expr(bound) - start + ir::Expr(w.dilations[d] - 1)) / dil;
      return ir::min(ir::max(t, zero), ir::Expr(w.kernel[d]));
    };
    count = count * ir::max(taps_before(hi[d]) - taps_before(lo[d]), zero);
  }
  return ir::max(count, ir::Expr(int64_t(1)));
}
}  // namespace detail

// Two stages: the window sums (guarded, see window_reduce) and their division.
inline te::Tensor average_pool(const te::Tensor& X, const Window& w, bool count_include_pad,
                               const std::string& name = "average_pool") {
  check_pool_dtype(X, false);
  size_t n = w.rank();
  te::Tensor sum = window_reduce(
      X, w, ir::Combiner::sum, [](ir::Expr x) { return x; }, name + "_sum");
  std::vector<int64_t> lo(n, 0), hi = w.in;
  if (count_include_pad)
    for (size_t d = 0; d < n; ++d) lo[d] = -w.pad_begin[d], hi[d] = w.in[d] + w.pad_end[d];
  DataType t = X.dtype();
  return te::compute(
      sum.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> o(v.begin() + 2, v.end());
        return sum(std::vector<ir::Expr>(v.begin(), v.end())) / ir::cast(t, detail::window_count(w, o, lo, hi));
      },
      name);
}

inline OpDef average_pool_def() {
  return OpDef{
      .name = "average_pool",
      .importer_names = {"onnx:AveragePool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            Window w = pool_window(in[0], WindowParams::from(attrs));
            return std::vector<te::Tensor>{average_pool(in[0], w, attrs.get_int("count_include_pad", 0) != 0)};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc =
          "mean of each window (AveragePool; attributes kernel_shape, strides, dilations, pads, auto_pad, "
          "ceil_mode, count_include_pad)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/average_pool.hpp
// begin nnvm/ops/conv/conv.hpp
// conv: convolution over 1, 2 or 3 spatial axes (ONNX Conv). X is (N, C, D1, ...), W is
// (M, C / group, K1, ...), the optional bias B is (M). Output channel m belongs to group
// g = m / (M / group), which reads input channels g * (C / group) + c:
//   Y[n, m, o...] = B[m] + sum over c, k... of X[n, g * C/group + c, o * stride - pad + k * dilation] * W[m, c, k...]
// with zeros outside X. Depthwise convolution is group == C.


NNVM_BEGIN_NAMESPACE
namespace ops {

struct ConvParams {
  WindowParams window;  // kernel_shape, when given, must equal W's spatial extents
  int64_t group = 1;

  static ConvParams from(const Attrs& a) { return {WindowParams::from(a), a.get_int("group", 1)}; }
};

namespace detail {
inline int64_t conv_extent(const te::Tensor& t, size_t axis, const char* input) {
  auto* c = ir::as_const_int(ir::simplify(t.shape()[axis]));
  if (!c)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " (tensor ", t.name(), ") axis ", axis, " has the symbolic extent ",
                            ir::to_string(t.shape()[axis]), "; it must be a constant"),
                    {"input " + std::string(input)});
  return *c;
}

// Checks the bias of a conv-like op with `channels` output channels.
inline void check_conv_bias(const te::Tensor& B, const te::Tensor& X, int64_t channels) {
  check_rank(B, "B", 1);
  check_same_dtype(X, "X", B, "B");
  if (!same_extent(B.shape()[0], ir::Expr(channels)))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("bias B has ", ir::to_string(B.shape()[0]), " elements, expected one per output channel (",
                            channels, ")"),
                    {"input B"});
}

// X with the window's pads around its spatial axes (axes 2 to 2 + w.rank(); axes after them, such
// as a channel block, are kept), zero outside X; X itself when there are none.
inline te::Tensor pad_spatial(const te::Tensor& X, const Window& w, const std::string& name) {
  bool any = false;
  std::vector<ir::Expr> shape{X.shape()[0], X.shape()[1]};
  for (size_t d = 0; d < w.rank(); ++d) {
    any |= w.pad_begin[d] > 0 || w.pad_end[d] > 0;
    shape.emplace_back(w.in[d] + w.pad_begin[d] + w.pad_end[d]);
  }
  for (size_t a = 2 + w.rank(); a < X.rank(); ++a) shape.push_back(X.shape()[a]);
  if (!any) return X;
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx{v[0], v[1]};
        ir::Expr inside;
        for (size_t d = 0; d < w.rank(); ++d) {
          ir::Expr i = v[2 + d];
          if (w.pad_begin[d] == 0 && w.pad_end[d] == 0) {
            idx.push_back(i);
            continue;
          }
          ir::Expr c = (i >= ir::Expr(w.pad_begin[d])) && (i < ir::Expr(w.pad_begin[d] + w.in[d]));
          inside = inside.defined() ? ir::Expr(inside && c) : c;
          idx.push_back(w.pad_begin[d] ? ir::Expr(i - ir::Expr(w.pad_begin[d])) : i);
        }
        for (size_t a = 2 + w.rank(); a < X.rank(); ++a) idx.push_back(v[a]);
        // A scalar select runs only the chosen side, so the read outside X never happens.
        return ir::select(inside, X(idx), ir::make_zero(X.dtype()));
      },
      name);
}
}  // namespace detail

// One reduction stage over (C / group, K1, ...) reading a zero-padded copy of X (its own stage,
// made only when there are pads), so the reduction needs no guards and its output width can be
// vectorized. float32 and float64.
inline te::Tensor conv(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {}, const ConvParams& p = {},
                       std::string name = "conv") {
  check_rank(X, "X", 3, 5);
  check_float(X, "X");
  check_same_dtype(X, "X", W, "W");
  check_rank(W, "W", X.rank());
  if (p.group < 1)
    detail::bad_window_attr("group", str_cat("attribute 'group' is ", p.group, "; it must be at least 1"));
  std::vector<int64_t> in = spatial_extents(X, "X"), kernel = spatial_extents(W, "W");
  int64_t M = detail::conv_extent(W, 0, "W"), Cg = detail::conv_extent(W, 1, "W");
  if (!p.window.kernel_shape.empty() && p.window.kernel_shape != kernel)
    detail::bad_window_attr("kernel_shape",
                            str_cat("attribute 'kernel_shape' has ", p.window.kernel_shape.size(),
                                    " values that differ from W's spatial extents (W is tensor ", W.name(), ")"));
  if (!same_extent(X.shape()[1], ir::Expr(Cg * p.group)))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X has ", ir::to_string(X.shape()[1]), " channels but W (", Cg,
                            " input channels per group) with group ", p.group, " expects ", Cg * p.group),
                    {"input W"});
  if (M % p.group != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("W has ", M, " output channels, which group ", p.group, " does not divide"), {"input W"});
  if (B.defined()) detail::check_conv_bias(B, X, M);
  Window w = resolve_window(p.window, in, kernel);
  te::Tensor src = detail::pad_spatial(X, w, name + "_pad");
  // In the padded copy, tap k of output o sits at o * stride + k * dilation.
  Window at = w;
  if (!src.same_as(X)) std::fill(at.pad_begin.begin(), at.pad_begin.end(), 0);
  int64_t Mg = M / p.group;
  size_t n = w.rank();
  std::vector<ir::IterVar> red{te::reduce_axis(ir::Expr(Cg), "rc")};
  for (size_t d = 0; d < n; ++d) red.push_back(te::reduce_axis(ir::Expr(kernel[d]), str_cat("rk", d)));
  std::vector<ir::Expr> shape{X.shape()[0], ir::Expr(M)};
  for (int64_t o : w.out) shape.emplace_back(o);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr m = v[1], c = red[0].var();
        // Input channel of (m, c): the group's first channel plus c, without arithmetic when
        // there is one group or one channel per group.
        if (p.group > 1) {
          ir::Expr first = Mg == 1 ? m : ir::Expr(m / ir::Expr(Mg));
          c = Cg == 1 ? first : ir::Expr(first * ir::Expr(Cg) + c);
        }
        std::vector<ir::Expr> xi{v[0], c}, wi{m, red[0].var()};
        for (size_t d = 0; d < n; ++d) {
          xi.push_back(at.tap(d, v[2 + d], red[1 + d].var()));
          wi.push_back(red[1 + d].var());
        }
        return te::sum(src(xi) * W(wi), red, B.defined() ? B(m) : ir::Expr());
      },
      std::move(name));
}

// The padded copy fills in parallel; the convolution runs its outer output axes in parallel and
// vectorizes the output's innermost axis under the whole reduction (each lane accumulates one
// output element, the weight broadcast across lanes).
namespace detail {
// 2-D convolutions with enough output channels and width: a register tile of kConvTileOc output
// channels by one vector of output columns is accumulated in a local buffer (cache_write) over
// the whole reduction, so each loaded input vector feeds kConvTileOc independent FMAs instead of
// one (a single accumulator is bound by FMA latency). The tile is written back vectorized.
constexpr int64_t kConvTileOc = 8;
inline bool schedule_conv2d_register_tile(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  if (Y.rank() != 4 || Y.op().reduce_axes.size() != 3) return false;
  int64_t lanes = target.vector_lanes(Y.dtype());
  auto* oc = ir::as_const_int(Y.shape()[1]);
  auto* ow = ir::as_const_int(Y.shape()[3]);
  if (!oc || !ow || *oc < kConvTileOc || *ow < lanes || lanes < 2) return false;
  te::Tensor acc = s.cache_write(Y, ir::MemoryScope::local);
  auto st = s[Y];
  const auto& axes = Y.op().axis;
  auto [oco, oci] = st.split(axes[1], kConvTileOc);
  auto [owo, owi] = st.split(axes[3], lanes);
  st.reorder({axes[0], oco, axes[2], owo, oci, owi});
  st.vectorize(owi);
  ir::IterVar outer = st.fuse({axes[0], oco, axes[2]});
  if (worth_parallel(st)) st.parallel(outer);
  s[acc].compute_at(st, owo);
  auto a = s[acc];
  a.reorder({a.reduce_axis(0), a.reduce_axis(1), a.reduce_axis(2), a.axis(0), a.axis(1), a.axis(2), a.axis(3)});
  a.unroll(a.axis(1));
  a.vectorize(a.axis(3));
  return true;
}
}  // namespace detail

inline void schedule_conv(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  for (auto& in : Y.op().inputs)
    if (in->op->kind == te::OpKind::compute) schedule_injective(s[te::Tensor(in)], target);
  if (detail::schedule_conv2d_register_tile(s, Y, target)) return;
  auto st = s[Y];
  const auto& axes = Y.op().axis;
  ir::IterVar outer = st.fuse(std::vector<ir::IterVar>(axes.begin(), axes.end() - 1));
  auto [wo, wi] = st.split(axes.back(), target.vector_lanes(Y.dtype()));
  std::vector<ir::IterVar> order{outer, wo};
  for (size_t r = 0; r < Y.op().reduce_axes.size(); ++r) order.push_back(st.reduce_axis(r));
  order.push_back(wi);
  st.reorder(order);
  st.vectorize(wi);
  if (detail::worth_parallel(st)) st.parallel(outer);
}

inline OpDef conv_def() {
  return OpDef{
      .name = "conv",
      .importer_names = {"onnx:Conv"},
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                conv(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), ConvParams::from(attrs))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_conv(s, out[0], t); },
      .doc =
          "1-D/2-D/3-D convolution of X by W plus optional bias B (Conv; attributes kernel_shape, strides, "
          "dilations, pads, group, auto_pad)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/conv.hpp
// begin nnvm/ops/conv/conv_nchwc.hpp
// conv_nchwc: 2-D convolution (one group) in the blocked layout NCHW[x]c, which the layout pass
// (graph/passes/alter_layout.hpp) substitutes for conv on CPUs. With input block ib and output
// block ob:
//   X (N, C / ib, H, W, ib)   W (M / ob, C / ib, KH, KW, ib, ob)   B (M / ob, ob), optional
//   Y[n, mo, oh, ow, mi] = B[mo, mi] + sum over co, kh, kw, ci of
//       X[n, co, oh * stride - pad + kh * dilation, ow * stride - pad + kw * dilation, ci] * W[mo, co, kh, kw, ci, mi]
// with zeros outside X. Window attributes as conv's (strides, dilations, pads, auto_pad).
// The weight layout puts the ob output channels of one input channel and tap next to each other,
// so the inner loop loads them as vectors (nchwc_schedule.hpp).


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// The window of a blocked convolution or pool: spatial axes 2 and 3 of X (rank 5), kernel `kernel`.
inline Window blocked_window(const te::Tensor& X, const WindowParams& p, std::vector<int64_t> kernel) {
  std::vector<int64_t> in{conv_extent(X, 2, "X"), conv_extent(X, 3, "X")};
  if (!p.kernel_shape.empty() && p.kernel_shape != kernel)
    bad_window_attr("kernel_shape", "attribute 'kernel_shape' differs from W's spatial extents");
  return resolve_window(p, std::move(in), std::move(kernel));
}

inline void check_extent(const te::Tensor& t, size_t axis, const char* input, const ir::Expr& want, const char* why) {
  if (!same_extent(t.shape()[axis], want))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " axis ", axis, " has ", ir::to_string(t.shape()[axis]), " elements, expected ",
                            ir::to_string(want), " (", why, ")"),
                    {str_cat("input ", input)});
}
}  // namespace detail

inline te::Tensor conv_nchwc(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {},
                             const WindowParams& p = {}, std::string name = "conv_nchwc") {
  check_rank(X, "X", 5);
  check_float(X, "X");
  check_rank(W, "W", 6);
  check_same_dtype(X, "X", W, "W");
  detail::check_extent(W, 1, "W", X.shape()[1], "X's channel blocks");
  detail::check_extent(W, 4, "W", X.shape()[4], "X's channel block size");
  int64_t ib = detail::conv_extent(X, 4, "X"), ob = detail::conv_extent(W, 5, "W");
  if (B.defined()) {
    check_rank(B, "B", 2);
    check_same_dtype(X, "X", B, "B");
    detail::check_extent(B, 0, "B", W.shape()[0], "W's output channel blocks");
    detail::check_extent(B, 1, "B", W.shape()[5], "W's output channel block size");
  }
  Window w = detail::blocked_window(X, p, {detail::conv_extent(W, 2, "W"), detail::conv_extent(W, 3, "W")});
  te::Tensor src = detail::pad_spatial(X, w, name + "_pad");
  Window at = w;
  if (!src.same_as(X)) std::fill(at.pad_begin.begin(), at.pad_begin.end(), 0);
  auto co = te::reduce_axis(X.shape()[1], "rco");
  auto kh = te::reduce_axis(ir::Expr(w.kernel[0]), "rkh");
  auto kw = te::reduce_axis(ir::Expr(w.kernel[1]), "rkw");
  auto ci = te::reduce_axis(ir::Expr(ib), "rci");
  return te::compute(
      {X.shape()[0], W.shape()[0], ir::Expr(w.out[0]), ir::Expr(w.out[1]), ir::Expr(ob)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr x = src({v[0], co.var(), at.tap(0, v[2], kh.var()), at.tap(1, v[3], kw.var()), ci.var()});
        ir::Expr wt = W({v[1], co.var(), kh.var(), kw.var(), ci.var(), v[4]});
        return te::sum(x * wt, {co, kh, kw, ci}, B.defined() ? B({v[1], v[4]}) : ir::Expr());
      },
      std::move(name));
}

inline OpDef conv_nchwc_def() {
  return OpDef{
      .name = "conv_nchwc",
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                conv_nchwc(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), WindowParams::from(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            detail::schedule_nchwc(s, out[0], out[0], t);
          },
      .cpu_fused_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const te::Tensor& epilogue, const Target& t) {
            return detail::schedule_nchwc(s, out[0], epilogue, t);
          },
      .doc = "2-D convolution in the blocked layout NCHW[x]c: X (N, C/ib, H, W, ib), W (M/ob, C/ib, KH, KW, ib, ob), "
             "B (M/ob, ob); conv's window attributes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/conv_nchwc.hpp
// begin nnvm/ops/conv/conv_transpose.hpp
// conv_transpose: the transposed convolution (ONNX ConvTranspose), the gradient of conv with
// respect to its input. X is (N, C, D1, ...), W is (C, M / group, K1, ...), the optional bias B
// is (M). Written as a gather, so each output element is computed once with no scatter:
//   Y[n, m, o...] = B[m] + sum over c, k... of X[n, g * C/group + c, i...] * W[g * C/group + c, m % (M/group), k...]
// over the taps where t = o + pad_begin - k * dilation is a non-negative multiple of the
// stride with i = t / stride inside X (g = m / (M / group)).


NNVM_BEGIN_NAMESPACE
namespace ops {

struct ConvTransposeParams {
  WindowParams window;  // ceil_mode unused
  int64_t group = 1;
  std::vector<int64_t> output_padding;  // added at the end of each spatial axis; empty: zeros
  // The spatial output extents (a full-rank list's trailing values are taken); when given, the
  // pads are derived from it and the `pads` attribute is ignored.
  std::vector<int64_t> output_shape;

  static ConvTransposeParams from(const Attrs& a) {
    return {WindowParams::from(a), a.get_int("group", 1), a.get_ints("output_padding", {}),
            a.get_ints("output_shape", {})};
  }
};

// The window of a transposed convolution: `out` are its output extents and `pad_begin` the
// shift of output coordinates into the full (unpadded) result. ONNX: the full extent is
// stride * (in - 1) + output_padding + span; output_shape or SAME_* (output in * stride) fix the
// output extent and the total padding (full - output, never negative) is split with the odd one
// at the end for SAME_UPPER and at the beginning otherwise; NOTSET crops the explicit pads.
inline Window resolve_transpose_window(const ConvTransposeParams& p, std::vector<int64_t> in,
                                       std::vector<int64_t> kernel) {
  size_t n = in.size();
  WindowParams wp = p.window;
  wp.ceil_mode = false;
  std::vector<int64_t> given = p.output_shape;
  if (given.size() == n + 2) given.erase(given.begin(), given.begin() + 2);
  given = spatial_ints(given, "output_shape", n, 0, 1);
  if (!p.output_shape.empty() || wp.auto_pad != "NOTSET") wp.pads.clear();
  Window w;
  check_auto_pad(wp.auto_pad);
  w.in = std::move(in);
  w.kernel = std::move(kernel);
  w.strides = spatial_ints(wp.strides, "strides", n, 1, 1);
  w.dilations = spatial_ints(wp.dilations, "dilations", n, 1, 1);
  std::tie(w.pad_begin, w.pad_end) = split_window_pads(wp.pads, n);
  std::vector<int64_t> extra = spatial_ints(p.output_padding, "output_padding", n, 0, 0);
  w.out.resize(n);
  for (size_t d = 0; d < n; ++d) {
    if (extra[d] >= std::max(w.strides[d], w.dilations[d]))
      detail::bad_window_attr("output_padding", str_cat("attribute 'output_padding' holds ", extra[d], " on axis ", d,
                                                        "; it must be less than the stride or the dilation"));
    int64_t full = w.strides[d] * (w.in[d] - 1) + extra[d] + w.span(d);
    bool fixed = !p.output_shape.empty() || wp.auto_pad == "SAME_UPPER" || wp.auto_pad == "SAME_LOWER";
    if (fixed) {
      w.out[d] = p.output_shape.empty() ? w.in[d] * w.strides[d] : given[d];
      int64_t total = std::max<int64_t>(0, full - w.out[d]);
      w.pad_begin[d] = wp.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[d] = total - w.pad_begin[d];
      continue;
    }
    w.out[d] = full - w.pad_begin[d] - w.pad_end[d];
    if (w.out[d] < 1)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("spatial axis ", d, ": the pads (", w.pad_begin[d], " + ", w.pad_end[d],
                              ") crop the whole output of extent ", full),
                      {"attribute pads"});
  }
  return w;
}

// One guarded reduction stage over (C / group, K1, ...); float32 and float64.
inline te::Tensor conv_transpose(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {},
                                 const ConvTransposeParams& p = {}, std::string name = "conv_transpose") {
  check_rank(X, "X", 3, 5);
  check_float(X, "X");
  check_same_dtype(X, "X", W, "W");
  check_rank(W, "W", X.rank());
  if (p.group < 1)
    detail::bad_window_attr("group", str_cat("attribute 'group' is ", p.group, "; it must be at least 1"));
  std::vector<int64_t> in = spatial_extents(X, "X"), kernel = spatial_extents(W, "W");
  int64_t C = detail::conv_extent(W, 0, "W"), Mg = detail::conv_extent(W, 1, "W");
  if (!p.window.kernel_shape.empty() && p.window.kernel_shape != kernel)
    detail::bad_window_attr("kernel_shape",
                            str_cat("attribute 'kernel_shape' has ", p.window.kernel_shape.size(),
                                    " values that differ from W's spatial extents (W is tensor ", W.name(), ")"));
  if (!same_extent(X.shape()[1], ir::Expr(C)))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X has ", ir::to_string(X.shape()[1]), " channels but W's first axis has ", C),
                    {"input W"});
  if (C % p.group != 0)
    throw UserError("nnvm.ops.input_shape", str_cat("group ", p.group, " does not divide the ", C, " input channels"),
                    {"attribute group"});
  int64_t Cg = C / p.group, M = Mg * p.group;
  if (B.defined()) detail::check_conv_bias(B, X, M);
  Window w = resolve_transpose_window(p, in, kernel);
  size_t n = w.rank();
  std::vector<ir::IterVar> red{te::reduce_axis(ir::Expr(Cg), "rc")};
  for (size_t d = 0; d < n; ++d) red.push_back(te::reduce_axis(ir::Expr(kernel[d]), str_cat("rk", d)));
  std::vector<ir::Expr> shape{X.shape()[0], ir::Expr(M)};
  for (int64_t o : w.out) shape.emplace_back(o);
  DataType t = X.dtype();
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr m = v[1], c = red[0].var(), wm = m;
        if (p.group > 1) {
          ir::Expr g = Mg == 1 ? m : ir::Expr(m / ir::Expr(Mg));
          c = Cg == 1 ? g : ir::Expr(g * ir::Expr(Cg) + c);
          wm = Mg == 1 ? ir::Expr(int64_t(0)) : ir::Expr(m % ir::Expr(Mg));
        }
        std::vector<ir::Expr> xi{v[0], c}, wi{c, wm};
        ir::Expr cond;
        for (size_t d = 0; d < n; ++d) {
          ir::Expr k = red[1 + d].var(), s(w.strides[d]);
          ir::Expr tt = ir::Expr(v[2 + d]) + ir::Expr(w.pad_begin[d]) - k * ir::Expr(w.dilations[d]);
          ir::Expr ok = (tt >= ir::Expr(int64_t(0))) && (tt < ir::Expr(w.in[d] * w.strides[d]));
          if (w.strides[d] != 1) ok = ok && (tt % s == ir::Expr(int64_t(0)));
          cond = cond.defined() ? ir::Expr(cond && ok) : ok;
          xi.push_back(w.strides[d] == 1 ? tt : ir::Expr(tt / s));
          wi.push_back(k);
        }
        // The guarded update runs only where the condition holds, so X is never read outside.
        return ir::Reduce::make(ir::Combiner::sum, X(xi) * W(wi), red, B.defined() ? B(m) : ir::make_zero(t), cond);
      },
      std::move(name));
}

inline OpDef conv_transpose_def() {
  return OpDef{
      .name = "conv_transpose",
      .importer_names = {"onnx:ConvTranspose"},
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                conv_transpose(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), ConvTransposeParams::from(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_reduction(s[out[0]], t);
          },
      .doc =
          "1-D/2-D/3-D transposed convolution plus optional bias B (ConvTranspose; attributes kernel_shape, "
          "strides, dilations, pads, group, output_padding, output_shape, auto_pad)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/conv_transpose.hpp
// begin nnvm/ops/conv/depthwise_conv_nchwc.hpp
// depthwise_conv_nchwc: depthwise 2-D convolution (group == channels, one output per channel)
// in the blocked layout NCHW[x]c, which the layout pass substitutes for such a conv on CPUs:
//   X (N, C / b, H, W, b)   W (C / b, KH, KW, b)   B (C / b, b), optional
//   Y[n, co, oh, ow, ci] = B[co, ci] + sum over kh, kw of
//       X[n, co, oh * stride - pad + kh * dilation, ow * stride - pad + kw * dilation, ci] * W[co, kh, kw, ci]
// with zeros outside X. Window attributes as conv's. Each tap is one vector multiply-add over the
// b channels of a block.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor depthwise_conv_nchwc(const te::Tensor& X, const te::Tensor& W, const te::Tensor& B = {},
                                       const WindowParams& p = {}, std::string name = "depthwise_conv_nchwc") {
  check_rank(X, "X", 5);
  check_float(X, "X");
  check_rank(W, "W", 4);
  check_same_dtype(X, "X", W, "W");
  detail::check_extent(W, 0, "W", X.shape()[1], "X's channel blocks");
  detail::check_extent(W, 3, "W", X.shape()[4], "X's channel block size");
  if (B.defined()) {
    check_rank(B, "B", 2);
    check_same_dtype(X, "X", B, "B");
    detail::check_extent(B, 0, "B", X.shape()[1], "X's channel blocks");
    detail::check_extent(B, 1, "B", X.shape()[4], "X's channel block size");
  }
  Window w = detail::blocked_window(X, p, {detail::conv_extent(W, 1, "W"), detail::conv_extent(W, 2, "W")});
  te::Tensor src = detail::pad_spatial(X, w, name + "_pad");
  Window at = w;
  if (!src.same_as(X)) std::fill(at.pad_begin.begin(), at.pad_begin.end(), 0);
  auto kh = te::reduce_axis(ir::Expr(w.kernel[0]), "rkh");
  auto kw = te::reduce_axis(ir::Expr(w.kernel[1]), "rkw");
  return te::compute(
      {X.shape()[0], X.shape()[1], ir::Expr(w.out[0]), ir::Expr(w.out[1]), X.shape()[4]},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr x = src({v[0], v[1], at.tap(0, v[2], kh.var()), at.tap(1, v[3], kw.var()), v[4]});
        ir::Expr wt = W({v[1], kh.var(), kw.var(), v[4]});
        return te::sum(x * wt, {kh, kw}, B.defined() ? B({v[1], v[4]}) : ir::Expr());
      },
      std::move(name));
}

inline OpDef depthwise_conv_nchwc_def() {
  return OpDef{
      .name = "depthwise_conv_nchwc",
      .input_names = {"X", "W", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{depthwise_conv_nchwc(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(),
                                                                WindowParams::from(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            detail::schedule_nchwc(s, out[0], out[0], t, /*channelwise=*/true);
          },
      .cpu_fused_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const te::Tensor& epilogue, const Target& t) {
            return detail::schedule_nchwc(s, out[0], epilogue, t, /*channelwise=*/true);
          },
      .doc = "depthwise 2-D convolution in the blocked layout NCHW[x]c: X (N, C/b, H, W, b), W (C/b, KH, KW, b), "
             "B (C/b, b); conv's window attributes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/depthwise_conv_nchwc.hpp
// begin nnvm/ops/conv/global_pool.hpp
// The global pools: one value per (n, c) over all spatial elements, output (N, C, 1, ...):
// global_average_pool, global_max_pool and global_lp_pool (ONNX GlobalAveragePool,
// GlobalMaxPool, GlobalLpPool with p default 2). Each is its windowed pool with one window
// covering the whole input.

// begin nnvm/ops/conv/lp_pool.hpp
// lp_pool: the p-norm of each window, (sum |x|^p)^(1/p) (ONNX LpPool, p default 2). Padding adds
// nothing to the sum.


NNVM_BEGIN_NAMESPACE
namespace ops {

// The window sums of |x|^p, then the root (one stage when p is 1). p = 2 squares and takes
// sqrt, exactly; other p use pow.
inline te::Tensor lp_pool(const te::Tensor& X, const Window& w, int64_t p, const std::string& name = "lp_pool") {
  check_pool_dtype(X, false);
  if (p < 1) detail::bad_window_attr("p", str_cat("attribute 'p' is ", p, "; it must be at least 1"));
  DataType t = X.dtype();
  auto power = [&](ir::Expr x) {
    if (p == 2) return x * x;
    ir::Expr a = ir::call(ir::CallOp::abs, x);
    return p == 1 ? a : ir::call(ir::CallOp::pow, a, ir::make_const(t, double(p)));
  };
  te::Tensor sum = window_reduce(X, w, ir::Combiner::sum, power, p == 1 ? name : name + "_sum");
  if (p == 1) return sum;
  return te::compute(
      sum.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr s = sum(std::vector<ir::Expr>(v.begin(), v.end()));
        return p == 2 ? ir::call(ir::CallOp::sqrt, s)
                      : ir::call(ir::CallOp::pow, s, ir::make_const(t, 1.0 / double(p)));
      },
      name);
}

inline OpDef lp_pool_def() {
  return OpDef{
      .name = "lp_pool",
      .importer_names = {"onnx:LpPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            Window w = pool_window(in[0], WindowParams::from(attrs));
            return std::vector<te::Tensor>{lp_pool(in[0], w, attrs.get_int("p", 2))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc =
          "p-norm of each window (LpPool; attributes p, kernel_shape, strides, dilations, pads, auto_pad, "
          "ceil_mode)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/lp_pool.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef global_average_pool_def() {
  return OpDef{
      .name = "global_average_pool",
      .importer_names = {"onnx:GlobalAveragePool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            return std::vector<te::Tensor>{average_pool(in[0], global_window(in[0]), false, "global_average_pool")};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc = "mean over all spatial elements of each channel (GlobalAveragePool)",
  };
}

inline OpDef global_lp_pool_def() {
  return OpDef{
      .name = "global_lp_pool",
      .importer_names = {"onnx:GlobalLpPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                lp_pool(in[0], global_window(in[0]), attrs.get_int("p", 2), "global_lp_pool")};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc = "p-norm over all spatial elements of each channel (GlobalLpPool; attribute p)",
  };
}

inline OpDef global_max_pool_def() {
  return OpDef{
      .name = "global_max_pool",
      .importer_names = {"onnx:GlobalMaxPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            check_pool_dtype(in[0], true);
            return std::vector<te::Tensor>{window_reduce(
                in[0], global_window(in[0]), ir::Combiner::max, [](ir::Expr x) { return x; }, "global_max_pool")};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_pool(s, out[0], t); },
      .doc = "largest element over all spatial elements of each channel (GlobalMaxPool)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/global_pool.hpp
// begin nnvm/ops/conv/layout_transform.hpp
// layout_transform: moves a feature map between the plain channel-major layout and a blocked one,
// as TVM's layout_transform does. Layouts are written "NCHW" (any spatial letters after "NC":
// "NCW", "NCDHW") or, blocked, the same followed by the block size and "c": "NCHW8c" is
// (N, C / 8, H, W, 8), channel c stored at [c / 8, ..., c % 8]. Blocked layouts let a
// convolution load a vector of 8 channels with one instruction (layout pass: passes/alter_layout.hpp).
// Both layouts must name the same axes; the channel count must be a multiple of every block.

#include <cctype>


NNVM_BEGIN_NAMESPACE
namespace ops {

// A parsed layout: the plain axis letters ("NCHW") and the channel block (0 when not blocked).
struct ChannelLayout {
  std::string axes;
  int64_t block = 0;

  bool blocked() const { return block > 0; }
  size_t rank() const { return axes.size() + (blocked() ? 1 : 0); }
  std::string to_string() const { return blocked() ? str_cat(axes, block, "c") : axes; }

  static ChannelLayout plain(size_t spatial) {
    static const char* const letters[] = {"", "W", "HW", "DHW"};
    return {std::string("NC") + letters[std::min<size_t>(spatial, 3)], 0};
  }
  static ChannelLayout blocked_by(size_t spatial, int64_t block) {
    ChannelLayout l = plain(spatial);
    l.block = block;
    return l;
  }
  // "nnvm.ops.attr" naming `attr` unless `text` is "NC" + 1-3 spatial letters, then optionally a
  // positive block size and "c".
  static ChannelLayout parse(const std::string& text, const char* attr) {
    ChannelLayout l;
    size_t i = 0;
    while (i < text.size() && std::isupper(static_cast<unsigned char>(text[i]))) l.axes += text[i++];
    bool ok = l.axes.size() >= 3 && l.axes.size() <= 5 && l.axes.compare(0, 2, "NC") == 0;
    if (ok && i < text.size()) {
      size_t digits = i;
      while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - digits < 6)
        l.block = l.block * 10 + (text[i++] - '0');
      ok = i > digits && l.block > 0 && i + 1 == text.size() && text[i] == 'c';
    }
    if (!ok)
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute '", attr, "' is '", text,
                              "'; expected a layout such as NCHW or NCHW8c (N, C, spatial axes, then an optional "
                              "channel block and 'c')"),
                      {str_cat("attribute ", attr)});
    return l;
  }
};

inline te::Tensor layout_transform(const te::Tensor& X, const ChannelLayout& src, const ChannelLayout& dst,
                                   std::string name = "layout_transform") {
  if (src.axes != dst.axes)
    throw UserError("nnvm.ops.attr",
                    str_cat("layouts ", src.to_string(), " and ", dst.to_string(), " name different axes"),
                    {"attribute dst_layout"});
  check_rank(X, "X", src.rank());
  size_t spatial = src.axes.size() - 2;
  // The logical channel count, constant so blocks can be checked against it.
  auto* c1 = ir::as_const_int(ir::simplify(X.shape()[1]));
  if (!c1)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X axis 1 has the symbolic extent ", ir::to_string(X.shape()[1]),
                            "; layout_transform needs a constant channel count"),
                    {"input X"});
  int64_t channels = *c1;
  if (src.blocked()) {
    if (!same_extent(X.shape()[src.rank() - 1], ir::Expr(src.block)))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input X's last axis has ", ir::to_string(X.shape()[src.rank() - 1]),
                              " elements but src_layout ", src.to_string(), " says ", src.block),
                      {"input X"});
    channels *= src.block;
  }
  if (dst.blocked() && channels % dst.block != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input X has ", channels, " channels, which the block of dst_layout ", dst.to_string(),
                            " does not divide"),
                    {"input X"});
  std::vector<ir::Expr> shape{X.shape()[0], ir::Expr(dst.blocked() ? channels / dst.block : channels)};
  for (size_t d = 0; d < spatial; ++d) shape.push_back(X.shape()[2 + d]);
  if (dst.blocked()) shape.emplace_back(dst.block);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr c = dst.blocked() ? ir::Expr(v[1] * ir::Expr(dst.block) + v[2 + spatial]) : ir::Expr(v[1]);
        std::vector<ir::Expr> idx{v[0], src.blocked() ? ir::Expr(c / ir::Expr(src.block)) : c};
        for (size_t d = 0; d < spatial; ++d) idx.push_back(v[2 + d]);
        if (src.blocked()) idx.push_back(c % ir::Expr(src.block));
        return X(idx);
      },
      std::move(name));
}

inline OpDef layout_transform_def() {
  return OpDef{
      .name = "layout_transform",
      .input_names = {"X"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                layout_transform(in[0], ChannelLayout::parse(attrs.get_string("src_layout"), "src_layout"),
                                 ChannelLayout::parse(attrs.get_string("dst_layout"), "dst_layout"))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_injective(s[out[0]], t); },
      .doc = "feature map between layouts NCHW and blocked NCHW[x]c (attributes src_layout, dst_layout)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/layout_transform.hpp
// begin nnvm/ops/conv/max_pool.hpp
// max_pool: the largest element of each window (ONNX MaxPool), and the position of the first
// largest one in the window's row-major scan order (output Indices, int64), as an index into the
// flattened X that ignores padding: row-major (storage_order 0) or with the first spatial axis
// fastest (storage_order 1) within each (n, c) slice of D1 * D2 * ... elements.
// A window with no tap inside X (possible only with pads as large as the window) gives the
// lowest value of the dtype and the index of its slice's first element.


NNVM_BEGIN_NAMESPACE
namespace ops {

// Three stages: Y, the smallest row-major spatial position in the window holding Y (an int64
// reduction), and Indices from it. float32, float64 and integer X.
inline std::vector<te::Tensor> max_pool(const te::Tensor& X, const WindowParams& p, int64_t storage_order = 0,
                                        const std::string& name = "max_pool") {
  Window w = pool_window(X, p);
  check_pool_dtype(X, true);
  if (storage_order != 0 && storage_order != 1)
    detail::bad_window_attr("storage_order",
                            str_cat("attribute 'storage_order' is ", storage_order, "; expected 0 or 1"));
  size_t n = w.rank();
  te::Tensor Y = window_reduce(
      X, w, ir::Combiner::max, [](ir::Expr x) { return x; }, name);
  // Strides of the spatial axes within one (n, c) slice, row-major and column-major.
  std::vector<int64_t> row(n, 1), col(n, 1);
  for (size_t d = n - 1; d-- > 0;) row[d] = row[d + 1] * w.in[d + 1];
  for (size_t d = 1; d < n; ++d) col[d] = col[d - 1] * w.in[d - 1];
  int64_t slice = row[0] * w.in[0];
  std::vector<ir::IterVar> taps;
  for (size_t d = 0; d < n; ++d) taps.push_back(te::reduce_axis(ir::Expr(w.kernel[d]), str_cat("rk", d)));
  std::vector<int64_t> lo(n, 0);
  te::Tensor pos = te::compute(
      Y.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> o(v.begin() + 2, v.end()), k, idx{v[0], v[1]};
        ir::Expr at(int64_t(0));
        for (auto& t : taps) k.push_back(t.var());
        for (size_t d = 0; d < n; ++d) {
          idx.push_back(w.tap(d, o[d], k[d]));
          at = at + idx.back() * ir::Expr(row[d]);
        }
        ir::Expr none(slice);
        ir::Expr source = ir::select(X(idx) == Y(std::vector<ir::Expr>(v.begin(), v.end())), at, none);
        return ir::Reduce::make(ir::Combiner::min, source, taps, none, window_guard(w, o, k, lo, w.in));
      },
      name + "_argmax");
  te::Tensor indices = te::compute(
      Y.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr at = pos(std::vector<ir::Expr>(v.begin(), v.end()));
        at = ir::select(at < ir::Expr(slice), at, ir::Expr(int64_t(0)));
        if (storage_order == 1 && n > 1) {
          ir::Expr moved(int64_t(0));
          for (size_t d = 0; d < n; ++d) {
            ir::Expr coord =
                d == 0 ? ir::Expr(at / ir::Expr(row[0])) : ir::Expr(at / ir::Expr(row[d]) % ir::Expr(w.in[d]));
            moved = moved + coord * ir::Expr(col[d]);
          }
          at = moved;
        }
        ir::Expr base = (ir::Expr(v[0]) * X.shape()[1] + ir::Expr(v[1])) * ir::Expr(slice);
        return ir::cast(dtype::int64, base + at);
      },
      name + "_indices");
  return {Y, indices};
}

inline OpDef max_pool_def() {
  return OpDef{
      .name = "max_pool",
      .importer_names = {"onnx:MaxPool"},
      .input_names = {"X"},
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            auto outs = max_pool(in[0], WindowParams::from(attrs), attrs.get_int("storage_order", 0));
            // compute_indices 0 (set by simplify_inference when nothing reads Indices): Y alone.
            if (attrs.get_int("compute_indices", 1) == 0) outs.resize(1);
            return outs;
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_pool(s, out[0], t);
            if (out.size() < 2) return;
            te::Tensor pos(out[1]->op->inputs.at(0));
            schedule_reduction(s[pos], t);
            schedule_injective(s[out[1]], t);
          },
      .doc =
          "largest element of each window, and its flat index (MaxPool; outputs Y, Indices; attributes "
          "kernel_shape, strides, dilations, pads, auto_pad, ceil_mode, storage_order; compute_indices 0: Y only)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/max_pool.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> conv_ops() {
  return {
      average_pool_def(),
      conv_def(),
      conv_nchwc_def(),
      conv_transpose_def(),
      depthwise_conv_nchwc_def(),
      global_average_pool_def(),
      global_lp_pool_def(),
      global_max_pool_def(),
      layout_transform_def(),
      lp_pool_def(),
      max_pool_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/conv/family.hpp
// begin nnvm/ops/elementwise/family.hpp
// Elementwise ops: one input element makes one output element.
// One sorted list per family; builtin.hpp joins the families.

// begin nnvm/ops/elementwise/clip.hpp
// clip(X) = min(max(X, min), max). ONNX Clip: the bounds are the optional inputs min and max
// (opset 11 and later: tensors of one element, X's dtype) or, for older models, the float
// attributes min and max. A bound given neither way does not clamp.


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// The one element of a bound input (rank 0, or every extent 1).
inline ir::Expr clip_bound(const te::Tensor& x, const te::Tensor& b, const char* input) {
  check_same_dtype(x, "input", b, input);
  for (auto& e : b.shape())
    if (!ir::is_const_int(ir::simplify(e), 1))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", input, " (tensor ", b.name(), ") must hold one element, its extent is ",
                              ir::to_string(e)),
                      {"input " + std::string(input)});
  return b(std::vector<ir::Expr>(b.rank(), ir::Expr(int64_t(0))));
}
}  // namespace detail

inline te::Tensor clip(const te::Tensor& x, const te::Tensor& lo, const te::Tensor& hi, const Attrs& attrs,
                       std::string name = "clip") {
  DataType t = x.dtype();
  if (t.is_bool() || t.is_handle() || !t.is_scalar())
    throw UserError("nnvm.ops.input_dtype", str_cat("input input (tensor ", x.name(), ") is ", t, ", expected a number"),
                    {"input input"});
  DataType ct = t.is_storage_only() ? dtype::float32 : t;
  auto bound = [&](const te::Tensor& b, const char* which) -> ir::Expr {
    if (b.defined()) return ir::cast(ct, detail::clip_bound(x, b, which));
    if (attrs.has(which)) return ir::make_const(ct, attrs.get_float(which));
    return {};
  };
  ir::Expr lo_e = bound(lo, "min"), hi_e = bound(hi, "max");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        if (lo_e.defined()) e = ir::max(e, lo_e);
        if (hi_e.defined()) e = ir::min(e, hi_e);
        return ct == t ? e : ir::cast(t, e);
      },
      std::move(name));
}

inline OpDef clip_def() {
  return OpDef{
      .name = "clip",
      .importer_names = {"onnx:Clip"},
      .input_names = {"input", "min", "max"},
      .optional_inputs = 2,
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            te::Tensor lo = in.size() > 1 ? in[1] : te::Tensor(), hi = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{clip(in[0], lo, hi, attrs)};
          },
      .doc = "min(max(input, min), max); bounds from the optional inputs min/max or the attributes min/max",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/clip.hpp
// begin nnvm/ops/elementwise/elu.hpp
// The exponential linear units: ONNX Elu, Selu and Celu. Each is X for X > 0 and a scaled
// e^X - 1 below (expm1, which keeps small negative inputs precise).


NNVM_BEGIN_NAMESPACE
namespace ops {

// elu(X) = X if X > 0 else alpha * (e^X - 1); attribute alpha, default 1.
inline OpDef elu_def() {
  return unary_def("elu", "onnx:Elu", "X if X > 0 else alpha * (e^X - 1) (attribute alpha, default 1)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.0);
                     return [alpha](const ir::Expr& e) {
                       return ir::select(e > 0.0, e, ir::call(ir::CallOp::expm1, e) * alpha);
                     };
                   });
}

// selu(X) = gamma * (X if X > 0 else alpha * (e^X - 1)); ONNX's defaults are float32 constants.
inline OpDef selu_def() {
  return unary_def("selu", "onnx:Selu",
                   "gamma * (X if X > 0 else alpha * (e^X - 1)) (attributes alpha ~1.6733, gamma ~1.0507)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.67326319217681884765625);
                     double gamma = attrs.get_float("gamma", 1.05070102214813232421875);
                     return [alpha, gamma](const ir::Expr& e) {
                       return ir::select(e > 0.0, e * gamma, ir::call(ir::CallOp::expm1, e) * (alpha * gamma));
                     };
                   });
}

// celu(X) = max(0, X) + min(0, alpha * (e^(X / alpha) - 1)); attribute alpha, default 1.
inline OpDef celu_def() {
  return unary_def("celu", "onnx:Celu", "max(0, X) + min(0, alpha * (e^(X / alpha) - 1)) (attribute alpha, default 1)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.0);
                     if (alpha == 0.0)
                       throw UserError("nnvm.ops.attr", "attribute 'alpha' must not be 0 (Celu divides by it)",
                                       {"attribute alpha"});
                     return [alpha](const ir::Expr& e) {
                       ir::Expr zero = ir::make_zero(e.dtype());
                       return ir::max(zero, e) + ir::min(zero, ir::call(ir::CallOp::expm1, e * (1.0 / alpha)) * alpha);
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/elu.hpp
// begin nnvm/ops/elementwise/gelu.hpp
// gelu(X) = 0.5 * X * (1 + erf(X / sqrt(2))). ONNX Gelu (opset 20): attribute approximate
// "none" (default) or "tanh", which uses 0.5 * X * (1 + tanh(sqrt(2/pi) * (X + 0.044715 X^3))).


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef gelu_def() {
  return unary_def("gelu", "onnx:Gelu", "0.5 * X * (1 + erf(X / sqrt(2))) (attribute approximate: none or tanh)",
                   [](const Attrs& attrs) -> ScalarFn {
                     std::string approximate = attrs.get_string("approximate", "none");
                     if (approximate == "tanh")
                       return [](const ir::Expr& e) {
                         ir::Expr inner = (e + e * e * e * 0.044715) * 0.7978845608028654;  // sqrt(2/pi)
                         return e * 0.5 * (ir::call(ir::CallOp::tanh, inner) + 1.0);
                       };
                     if (approximate != "none")
                       throw UserError("nnvm.ops.attr",
                                       str_cat("attribute 'approximate' is '", approximate, "' but must be none or tanh"),
                                       {"attribute approximate"});
                     return [](const ir::Expr& e) {
                       return e * 0.5 * (ir::call(ir::CallOp::erf, e * 0.7071067811865476) + 1.0);  // 1/sqrt(2)
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/gelu.hpp
// begin nnvm/ops/elementwise/hard_sigmoid.hpp
// hard_sigmoid(X) = max(0, min(1, alpha * X + beta)) (attributes alpha 0.2, beta 0.5).
// ONNX HardSigmoid.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef hard_sigmoid_def() {
  return unary_def("hard_sigmoid", "onnx:HardSigmoid",
                   "max(0, min(1, alpha * X + beta)) (attributes alpha, default 0.2, and beta, default 0.5)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 0.2), beta = attrs.get_float("beta", 0.5);
                     return [alpha, beta](const ir::Expr& e) {
                       DataType t = e.dtype();
                       return ir::max(ir::make_zero(t), ir::min(ir::make_const(t, 1.0), e * alpha + beta));
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/hard_sigmoid.hpp
// begin nnvm/ops/elementwise/hard_swish.hpp
// hard_swish(X) = X * max(0, min(1, X / 6 + 0.5)). ONNX HardSwish.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef hard_swish_def() {
  return unary_def("hard_swish", "onnx:HardSwish", "X * max(0, min(1, X / 6 + 0.5))", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) {
      DataType t = e.dtype();
      return e * ir::max(ir::make_zero(t), ir::min(ir::make_const(t, 1.0), e * (1.0 / 6.0) + 0.5));
    };
  });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/hard_swish.hpp
// begin nnvm/ops/elementwise/identity.hpp
// Copies of the input: ONNX Identity, and Dropout in inference mode (where it is the identity).


NNVM_BEGIN_NAMESPACE
namespace ops {

// Y = X for any dtype (bool and the storage floats included).
inline OpDef identity_def() {
  return unary_def(
      "identity", "onnx:Identity", "Y = X, any dtype",
      [](const Attrs&) -> ScalarFn { return [](const ir::Expr& e) { return e; }; }, DtypeKind::any);
}

// ONNX Dropout (opset 22) for inference: output = data, and the optional mask output is all true.
// ratio is not read (it scales nothing when no element is dropped). training_mode is a value
// input; true asks for random dropping, which nnvm does not do ("nnvm.ops.attr").
inline OpDef dropout_def() {
  return OpDef{
      .name = "dropout",
      .importer_names = {"onnx:Dropout"},
      .input_names = {"data", "ratio", "training_mode"},
      .optional_inputs = 2,
      .value_inputs = {"training_mode"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const te::Tensor& x = in[0];
            check_input_kind(x, "data", DtypeKind::any);
            for (int64_t v : attrs.get_ints("training_mode", {}))
              if (v != 0)
                throw UserError("nnvm.ops.attr", "training mode is not supported: Dropout runs as the identity",
                                {"input training_mode"});
            te::Tensor out = unary_elementwise(
                x, [](const ir::Expr& e) { return e; }, DtypeKind::any, "dropout");
            te::Tensor mask = te::compute(
                x.shape(), [](const std::vector<ir::Var>&) { return ir::const_true(); }, "dropout_mask");
            return std::vector<te::Tensor>{out, mask};
          },
      .doc = "inference-mode dropout: output = data, mask = all true (training_mode must be false)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/identity.hpp
// begin nnvm/ops/elementwise/is_nan_inf.hpp
// Float classification with a bool output: ONNX IsNaN and IsInf.


NNVM_BEGIN_NAMESPACE
namespace ops {

// The bool tensor of pred(X) for a float X; float16/bfloat16 widen to float32 exactly first.
inline te::Tensor float_predicate(const te::Tensor& x, const ScalarFn& pred, std::string name) {
  check_input_kind(x, "X", DtypeKind::float_);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        return pred(ir::cast(arith_type(x.dtype()), x(std::vector<ir::Expr>(v.begin(), v.end()))));
      },
      std::move(name));
}

inline OpDef float_predicate_def(std::string name, std::string importer_name, std::string doc,
                                 std::function<ScalarFn(const Attrs&)> make_pred) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"X"},
      .pattern = OpPattern::elementwise,
      .compute =
          [op, make_pred](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{float_predicate(in[0], make_pred(attrs), op)};
          },
      .doc = std::move(doc),
  };
}

inline OpDef isnan_def() {
  return float_predicate_def("isnan", "onnx:IsNaN", "true where X is NaN (bool output)", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return ir::call(ir::CallOp::isnan, e); };
  });
}

// Attributes detect_positive and detect_negative (default 1 each) choose which infinities count.
inline OpDef isinf_def() {
  return float_predicate_def("isinf", "onnx:IsInf",
                             "true where X is infinite (bool output; attributes detect_positive, detect_negative)",
                             [](const Attrs& attrs) -> ScalarFn {
                               bool pos = attrs.get_int("detect_positive", 1) != 0;
                               bool neg = attrs.get_int("detect_negative", 1) != 0;
                               return [pos, neg](const ir::Expr& e) -> ir::Expr {
                                 if (pos && neg) return ir::call(ir::CallOp::isinf, e);
                                 if (!pos && !neg) return ir::const_false();
                                 ir::Expr inf = ir::make_const(e.dtype(), pos ? HUGE_VAL : -HUGE_VAL);
                                 return e == inf;
                               };
                             });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/is_nan_inf.hpp
// begin nnvm/ops/elementwise/leaky_relu.hpp
// leaky_relu(X) = X for X >= 0, alpha * X otherwise (attribute alpha, default 0.01). ONNX LeakyRelu.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef leaky_relu_def() {
  return unary_def("leaky_relu", "onnx:LeakyRelu", "X if X >= 0 else alpha * X (attribute alpha, default 0.01)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 0.01);
                     return [alpha](const ir::Expr& e) {
                       return ir::select(e >= 0.0, e, e * alpha);
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/leaky_relu.hpp
// begin nnvm/ops/elementwise/mish.hpp
// mish(X) = X * tanh(softplus(X)). ONNX Mish.


NNVM_BEGIN_NAMESPACE
namespace ops {

// softplus as in softplus.hpp: max(X, 0) + log1p(e^-|X|), which cannot overflow.
inline OpDef mish_def() {
  return unary_def("mish", "onnx:Mish", "X * tanh(log(1 + e^X))", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) {
      ir::Expr sp = ir::max(e, ir::make_zero(e.dtype())) +
                    ir::call(ir::CallOp::log1p, ir::call(ir::CallOp::exp, -ir::call(ir::CallOp::abs, e)));
      return e * ir::call(ir::CallOp::tanh, sp);
    };
  });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/mish.hpp
// begin nnvm/ops/elementwise/not.hpp
// Elementwise negation of bools and integers: ONNX Not (logical) and BitwiseNot.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef not_def() {
  return unary_def(
      "not", "onnx:Not", "logical not of a bool X",
      [](const Attrs&) -> ScalarFn { return [](const ir::Expr& e) { return !e; }; }, DtypeKind::boolean);
}

inline OpDef bitwise_not_def() {
  return unary_def(
      "bitwise_not", "onnx:BitwiseNot", "~X for an integer X",
      [](const Attrs&) -> ScalarFn { return [](const ir::Expr& e) { return ir::call(ir::CallOp::bitwise_not, e); }; },
      DtypeKind::integer);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/not.hpp
// begin nnvm/ops/elementwise/relu.hpp
// relu(X) = max(X, 0), elementwise. ONNX Relu.


NNVM_BEGIN_NAMESPACE
namespace ops {

// Any numeric dtype; float16/bfloat16 (storage types) compute in float32 and round back.
inline te::Tensor relu(const te::Tensor& x, std::string name = "relu") {
  DataType t = x.dtype();
  if (t.is_bool() || t.is_handle())
    throw UserError("nnvm.ops.input_dtype", str_cat("input X (tensor ", x.name(), ") is ", t, ", expected a number"),
                    {"input X"});
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(std::vector<ir::Expr>(v.begin(), v.end()));
        if (!t.is_storage_only()) return ir::max(e, ir::make_zero(t));
        return ir::cast(t, ir::max(ir::cast(dtype::float32, e), ir::make_zero(dtype::float32)));
      },
      std::move(name));
}

inline OpDef relu_def() {
  return OpDef{
      .name = "relu",
      .importer_names = {"onnx:Relu"},
      .input_names = {"X"},
      .pattern = OpPattern::elementwise,
      .compute = [](const std::vector<te::Tensor>& in, const Attrs&) { return std::vector<te::Tensor>{relu(in[0])}; },
      .doc = "max(X, 0), elementwise",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/relu.hpp
// begin nnvm/ops/elementwise/shrink.hpp
// shrink(X) = X + bias if X < -lambd, X - bias if X > lambd, else 0 (attributes bias, default 0,
// and lambd, default 0.5). ONNX Shrink; any number.


NNVM_BEGIN_NAMESPACE
namespace ops {

// Integers compute in float64 and convert back, truncating, as ONNX's reference does (the
// comparison with a fractional lambd must not round lambd to an integer first).
inline OpDef shrink_def() {
  return unary_def(
      "shrink", "onnx:Shrink", "X + bias if X < -lambd, X - bias if X > lambd, else 0 (attributes bias 0, lambd 0.5)",
      [](const Attrs& attrs) -> ScalarFn {
        double bias = attrs.get_float("bias", 0.0), lambd = attrs.get_float("lambd", 0.5);
        return [bias, lambd](const ir::Expr& x) {
          DataType t = x.dtype();
          ir::Expr e = t.is_float() ? x : ir::cast(dtype::float64, x);
          ir::Expr r = ir::select(e < -lambd, e + bias, ir::select(e > lambd, e - bias, ir::make_zero(e.dtype())));
          return ir::cast(t, r);
        };
      },
      DtypeKind::number);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/shrink.hpp
// begin nnvm/ops/elementwise/sign.hpp
// sign(X) = -1, 0 or 1 by the sign of X, in X's dtype (ONNX Sign). Any number; NaN stays NaN.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef sign_def() {
  return unary_def(
      "sign", "onnx:Sign", "-1, 0 or 1 by the sign of X (any number; NaN stays NaN)",
      [](const Attrs&) -> ScalarFn {
        return [](const ir::Expr& e) {
          DataType t = e.dtype();
          ir::Expr zero = ir::make_zero(t), one = ir::make_const(t, 1.0);
          if (t.is_uint()) return ir::select(e > zero, one, zero);
          ir::Expr rest = t.is_float() ? ir::select(e != e, e, zero) : zero;
          return ir::select(e > zero, one, ir::select(e < zero, ir::make_const(t, -1.0), rest));
        };
      },
      DtypeKind::number);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/sign.hpp
// begin nnvm/ops/elementwise/softplus.hpp
// softplus(X) = log(1 + e^X). ONNX Softplus.


NNVM_BEGIN_NAMESPACE
namespace ops {

// Written as max(X, 0) + log1p(e^-|X|): the same value, but e^X cannot overflow for large X and
// small results keep their precision.
inline OpDef softplus_def() {
  return unary_def("softplus", "onnx:Softplus", "log(1 + e^X), elementwise, computed stably",
                   [](const Attrs&) -> ScalarFn {
                     return [](const ir::Expr& e) {
                       ir::Expr neg_abs = -ir::call(ir::CallOp::abs, e);
                       return ir::max(e, ir::make_zero(e.dtype())) +
                              ir::call(ir::CallOp::log1p, ir::call(ir::CallOp::exp, neg_abs));
                     };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/softplus.hpp
// begin nnvm/ops/elementwise/softsign.hpp
// softsign(X) = X / (1 + |X|). ONNX Softsign.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef softsign_def() {
  return unary_def("softsign", "onnx:Softsign", "X / (1 + |X|)", [](const Attrs&) -> ScalarFn {
    return [](const ir::Expr& e) { return e / (ir::call(ir::CallOp::abs, e) + 1.0); };
  });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/softsign.hpp
// begin nnvm/ops/elementwise/thresholded_relu.hpp
// thresholded_relu(X) = X if X > alpha else 0 (attribute alpha, default 1). ONNX ThresholdedRelu.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline OpDef thresholded_relu_def() {
  return unary_def("thresholded_relu", "onnx:ThresholdedRelu", "X if X > alpha else 0 (attribute alpha, default 1)",
                   [](const Attrs& attrs) -> ScalarFn {
                     double alpha = attrs.get_float("alpha", 1.0);
                     return [alpha](const ir::Expr& e) { return ir::select(e > alpha, e, ir::make_zero(e.dtype())); };
                   });
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/thresholded_relu.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> elementwise_ops() {
  return {
      abs_def(),
      acos_def(),
      acosh_def(),
      asin_def(),
      asinh_def(),
      atan_def(),
      atanh_def(),
      bitwise_not_def(),
      ceil_def(),
      celu_def(),
      clip_def(),
      cos_def(),
      cosh_def(),
      dropout_def(),
      elu_def(),
      erf_def(),
      exp_def(),
      floor_def(),
      gelu_def(),
      hard_sigmoid_def(),
      hard_swish_def(),
      identity_def(),
      isinf_def(),
      isnan_def(),
      leaky_relu_def(),
      log_def(),
      mish_def(),
      neg_def(),
      not_def(),
      reciprocal_def(),
      relu_def(),
      round_def(),
      selu_def(),
      shrink_def(),
      sigmoid_def(),
      sign_def(),
      sin_def(),
      sinh_def(),
      softplus_def(),
      softsign_def(),
      sqrt_def(),
      tan_def(),
      tanh_def(),
      thresholded_relu_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/elementwise/family.hpp
// begin nnvm/ops/nn/family.hpp
// Neural-network ops: dense/matmul, normalizations, attention.
// One sorted list per family; builtin.hpp joins the families.

// begin nnvm/ops/nn/attention.hpp
// attention: ONNX Attention (scaled dot-product attention, opset 23 with the later additions:
// nonpad_kv_seqlen, offset-aware causal masking, sliding windows, zero rows for fully masked
// queries). Q (B, Hq, Sq, D), K (B, Hkv, Skv, D), V (B, Hkv, Skv, Dv), or 3-D with the heads
// packed in the last axis (B, S, H * D) and attributes q_num_heads / kv_num_heads. Grouped-query:
// query head h reads key/value head h / (Hq / Hkv).
//
// A chain of computes over the present keys/values (past_key/past_value, when given, followed
// by K/V along the sequence axis; L = P + Skv keys):
//   S = (Q K^T) * scale                    (B, Hq, Sq, L), scale default 1/sqrt(D)
//   C = softcap * tanh(S / softcap)        when softcap > 0
//   Z = C + float attn_mask, or C where allowed and -inf elsewhere (bool attn_mask, is_causal,
//       nonpad_kv_seqlen, left/right_window_size)
//   P = softmax(Z) along L (in softmax_precision), a zero row where every key is masked
//   Y = P V
// Outputs: Y, present_key, present_value (the concatenations), qk_matmul_output (S, C, Z or P by
// qk_matmul_output_mode 0..3). float16/bfloat16 inputs compute in float32.

#include <cmath>

// begin nnvm/ops/nn/moments.hpp
// Means over a set of axes, shared by the normalization ops (layer_norm, instance_norm,
// rms_norm, mean_variance_normalization, batch_norm's parameter reads). Results keep the reduced
// axes with extent 1 so a consumer reads them at the same rank as the input.


NNVM_BEGIN_NAMESPACE
namespace ops {

// The type a normalization computes in: float16/bfloat16 inputs compute in float32.
inline DataType norm_compute_type(DataType t) { return t.is_storage_only() ? dtype::float32 : t; }

// The statistics type named by attribute stash_type (a data type name, default float32):
// "nnvm.ops.attr" unless it is float32 or float64.
inline DataType stash_dtype(const Attrs& attrs) {
  DataType t = attrs.get_dtype("stash_type", dtype::float32);
  if (t != dtype::float32 && t != dtype::float64)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'stash_type' is ", t, " but must be float32 or float64"),
                    {"attribute stash_type"});
  return t;
}

// "nnvm.ops.input_dtype" unless `t` is a float (float16/bfloat16 included: they compute in float32).
inline void check_norm_float(const te::Tensor& t, const char* input) {
  DataType d = t.dtype();
  if (!d.is_float() || !d.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", d, ", expected a float type"),
                    {"input " + std::string(input)});
}

// Index into a kept-axes result at input position v: reduced axes read 0.
inline std::vector<ir::Expr> kept_index(const std::vector<ir::Var>& v, const std::vector<bool>& reduced) {
  std::vector<ir::Expr> idx;
  for (size_t d = 0; d < v.size(); ++d) idx.push_back(reduced[d] ? ir::Expr(int64_t(0)) : ir::Expr(v[d]));
  return idx;
}

// The mean of value(i) over the axes marked in `reduced` of `shape`, in type `t`; the result has
// `shape` with reduced axes set to 1. `value` gets the full index (kept axes from the output,
// reduced ones from reduce axes).
inline te::Tensor mean_over(const std::vector<ir::Expr>& shape, const std::vector<bool>& reduced, DataType t,
                            const std::function<ir::Expr(const std::vector<ir::Expr>&)>& value, std::string name) {
  std::vector<ir::Expr> kept = shape;
  std::vector<ir::IterVar> axes;
  ir::Expr count = ir::Expr(int64_t(1));
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) {
      kept[d] = ir::Expr(int64_t(1));
      axes.push_back(te::reduce_axis(shape[d], str_cat("r", d)));
      count = count * shape[d];
    }
  // Scaling each term keeps the reduction the top of the body (te::compute's rule).
  ir::Expr inv_count = ir::simplify(ir::make_const(t, 1.0) / ir::cast(t, count));
  return te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0, r = 0; d < shape.size(); ++d)
          idx.push_back(reduced[d] ? ir::Expr(axes[r++].var()) : ir::Expr(v[d]));
        ir::Expr term = value(idx) * inv_count;
        return axes.empty() ? term : te::sum(term, axes);
      },
      std::move(name));
}

// Mean and (biased) variance of x over the reduced axes, in type `t`: two passes, the variance
// as the mean of squared deviations (stabler than E[x^2] - E[x]^2).
inline std::pair<te::Tensor, te::Tensor> moments(const te::Tensor& x, const std::vector<bool>& reduced, DataType t,
                                                 const std::string& name) {
  te::Tensor mean = mean_over(x.shape(), reduced, t, [&](const std::vector<ir::Expr>& i) { return ir::cast(t, x(i)); }, name + "_mean");
  te::Tensor var = mean_over(
      x.shape(), reduced, t,
      [&](const std::vector<ir::Expr>& i) {
        std::vector<ir::Expr> m = i;
        for (size_t d = 0; d < m.size(); ++d)
          if (reduced[d]) m[d] = ir::Expr(int64_t(0));
        ir::Expr dev = ir::cast(t, x(i)) - mean(m);
        return dev * dev;
      },
      name + "_var");
  return {mean, var};
}

// "nnvm.ops.input_shape" unless `p` broadcasts to `shape` from the right without growing it
// (ONNX unidirectional broadcasting: each of its axes is 1 or the matching extent).
inline void check_unidirectional(const te::Tensor& p, const char* input, const std::vector<ir::Expr>& shape) {
  bool ok = p.rank() <= shape.size();
  for (size_t d = 0; ok && d < p.rank(); ++d) {
    const ir::Expr& e = p.shape()[d];
    ok = ir::is_const_int(ir::simplify(e), 1) || same_extent(e, shape[shape.size() - p.rank() + d]);
  }
  if (!ok) {
    std::string want = "(";
    for (size_t d = 0; d < shape.size(); ++d) want += (d ? ", " : "") + ir::to_string(shape[d]);
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", input, " (tensor ", p.name(), ") must broadcast to ", want, ")"),
                    {"input " + std::string(input)});
  }
}
// Reads `p` (checked by check_unidirectional) at position v of the shape it broadcasts to.
inline ir::Expr read_broadcast(const te::Tensor& p, const std::vector<ir::Var>& v) {
  std::vector<ir::Expr> idx;
  for (size_t d = 0; d < p.rank(); ++d)
    idx.push_back(ir::is_const_int(ir::simplify(p.shape()[d]), 1) ? ir::Expr(int64_t(0))
                                                                   : ir::Expr(v[v.size() - p.rank() + d]));
  return p(idx);
}

// "nnvm.ops.input_shape" unless `p` is 1-D with the channel count `c` (axis 1 of the input X).
inline void check_channel_param(const te::Tensor& p, const char* input, const ir::Expr& c) {
  check_rank(p, input, 1);
  check_same_extent(p.shape()[0], c, str_cat("the extent of input ", input, " and the channel count of X (axis 1)"));
}

// Schedules every stage an op made between its inputs and `outputs` (normalizations, attention):
// reductions parallel over their rows, the rest vectorized along the last axis.
inline void schedule_stages(schedule::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  for (auto& t : te::post_order(outputs)) {
    if (t.op().kind != te::OpKind::compute) continue;
    if (!t.op().reduce_axes.empty()) schedule_reduction(s[t], target);
    else schedule_injective(s[t], target);
  }
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/moments.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

struct AttentionParams {
  bool is_causal = false;
  std::optional<double> scale;       // default 1 / sqrt(head size)
  int64_t q_num_heads = 0, kv_num_heads = 0;  // 3-D inputs only
  double softcap = 0.0;
  int64_t qk_matmul_output_mode = 0;
  std::optional<DataType> softmax_precision;
  int64_t left_window_size = -1, right_window_size = -1;
};

namespace detail {
inline int64_t attention_const(const ir::Expr& e, const char* what) {
  const int64_t* c = ir::as_const_int(ir::simplify(e));
  if (!c) throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent"));
  return *c;
}
}  // namespace detail

inline std::vector<te::Tensor> attention(const te::Tensor& Q, const te::Tensor& K, const te::Tensor& V,
                                         const te::Tensor& mask, const te::Tensor& past_key,
                                         const te::Tensor& past_value, const te::Tensor& nonpad,
                                         const AttentionParams& p, const std::string& name = "attention") {
  check_rank(Q, "Q", 3, 4);
  check_rank(K, "K", Q.rank());
  check_rank(V, "V", Q.rank());
  check_norm_float(Q, "Q");
  check_same_dtype(Q, "Q", K, "K");
  check_same_dtype(Q, "Q", V, "V");
  DataType t = Q.dtype(), ct = norm_compute_type(t);
  DataType st = p.softmax_precision ? norm_compute_type(*p.softmax_precision) : ct;
  bool packed = Q.rank() == 3;
  ir::Expr B = Q.shape()[0], Sq, Skv, D, Dv;
  int64_t Hq, Hkv;
  if (packed) {
    if (p.q_num_heads <= 0 || p.kv_num_heads <= 0)
      throw UserError("nnvm.ops.attr", "3-D Q, K and V need positive attributes q_num_heads and kv_num_heads",
                      {"attribute q_num_heads"});
    Hq = p.q_num_heads, Hkv = p.kv_num_heads;
    int64_t qh = detail::attention_const(Q.shape()[2], "the last axis of Q"),
            kh = detail::attention_const(K.shape()[2], "the last axis of K"),
            vh = detail::attention_const(V.shape()[2], "the last axis of V");
    if (qh % Hq || kh % Hkv || vh % Hkv || qh / Hq != kh / Hkv)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axes of Q (", qh, "), K (", kh, ") and V (", vh, ") must split into q_num_heads (",
                              Hq, ") and kv_num_heads (", Hkv, ") heads, Q's and K's of one size"),
                      {"input Q"});
    Sq = Q.shape()[1], Skv = K.shape()[1], D = ir::Expr(qh / Hq), Dv = ir::Expr(vh / Hkv);
  } else {
    Hq = detail::attention_const(Q.shape()[1], "the head axis of Q");
    Hkv = detail::attention_const(K.shape()[1], "the head axis of K");
    check_same_extent(K.shape()[1], V.shape()[1], "the head counts of K and V");
    check_same_extent(Q.shape()[3], K.shape()[3], "the head sizes of Q and K");
    Sq = Q.shape()[2], Skv = K.shape()[2], D = Q.shape()[3], Dv = V.shape()[3];
  }
  if (Hq % Hkv != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the ", Hq, " query heads must be a multiple of the ", Hkv, " key/value heads"), {"input K"});
  int64_t group = Hq / Hkv;
  for (auto* x : {&K, &V}) check_same_extent((*x).shape()[0], B, "the batch extents of Q, K and V");
  check_same_extent(K.shape()[packed ? 1 : 2], V.shape()[packed ? 1 : 2], "the sequence lengths of K and V");

  if (past_key.defined() != past_value.defined())
    throw UserError("nnvm.ops.input_count", "past_key and past_value must be given together",
                    {past_key.defined() ? "input past_value" : "input past_key"});
  ir::Expr P = ir::Expr(int64_t(0));
  if (past_key.defined()) {
    check_rank(past_key, "past_key", 4);
    check_rank(past_value, "past_value", 4);
    check_same_dtype(Q, "Q", past_key, "past_key");
    check_same_dtype(Q, "Q", past_value, "past_value");
    const ir::Expr want_k[] = {B, ir::Expr(Hkv), past_key.shape()[2], D}, want_v[] = {B, ir::Expr(Hkv), past_key.shape()[2], Dv};
    for (size_t d = 0; d < 4; ++d) {
      check_same_extent(past_key.shape()[d], want_k[d], str_cat("axis ", d, " of past_key and of the keys"));
      check_same_extent(past_value.shape()[d], want_v[d], str_cat("axis ", d, " of past_value and of the values"));
    }
    P = past_key.shape()[2];
  }
  ir::Expr L = ir::simplify(P + Skv);
  if (nonpad.defined()) {
    check_rank(nonpad, "nonpad_kv_seqlen", 1);
    if (nonpad.dtype() != dtype::int64)
      throw UserError("nnvm.ops.input_dtype", str_cat("input nonpad_kv_seqlen is ", nonpad.dtype(), ", expected int64"),
                      {"input nonpad_kv_seqlen"});
    check_same_extent(nonpad.shape()[0], B, "the extent of nonpad_kv_seqlen and the batch of Q");
  }
  // The mask broadcasts to (B, Hq, Sq, L) from the right; its key axis may be shorter than L
  // (keys past its end are masked: ONNX requires it to cover every non-padding key).
  ir::Expr mask_len;
  bool bool_mask = false;
  if (mask.defined()) {
    check_rank(mask, "attn_mask", 2, 4);
    bool_mask = mask.dtype().is_bool();
    if (!bool_mask) check_same_dtype(Q, "Q", mask, "attn_mask");
    const ir::Expr full[] = {B, ir::Expr(Hq), Sq, L};
    for (size_t d = 0; d + 1 < mask.rank(); ++d) {
      const ir::Expr& e = mask.shape()[d];
      if (!ir::is_const_int(ir::simplify(e), 1) && !same_extent(e, full[4 - mask.rank() + d]))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("attn_mask axis ", d, " has extent ", ir::to_string(e), "; it must be 1 or ",
                                ir::to_string(full[4 - mask.rank() + d])),
                        {"input attn_mask"});
    }
    mask_len = mask.shape().back();
    auto* ml = ir::as_const_int(ir::simplify(mask_len));
    auto* lc = ir::as_const_int(L);
    if (!same_extent(mask_len, L) && !(ml && lc && *ml <= *lc))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axis of attn_mask has extent ", ir::to_string(mask_len),
                              "; it must not exceed the ", ir::to_string(L), " keys"),
                      {"input attn_mask"});
  }
  if (p.qk_matmul_output_mode < 0 || p.qk_matmul_output_mode > 3)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'qk_matmul_output_mode' is ", p.qk_matmul_output_mode, " but must be 0, 1, 2 or 3"),
                    {"attribute qk_matmul_output_mode"});

  ir::Expr zero = ir::Expr(int64_t(0)), one = ir::Expr(int64_t(1));
  // Reads of the unpacked 4-D views of Q, K and V.
  auto head_read = [&](const te::Tensor& x, ir::Expr b, ir::Expr h, ir::Expr s, ir::Expr d, const ir::Expr& hd) {
    return packed ? x(b, s, h * hd + d) : x(b, h, s, d);
  };
  // present = past followed by new, along the sequence axis; the reads are clamped so the branch
  // not taken stays in bounds.
  auto present = [&](const te::Tensor& past, const te::Tensor& x, const ir::Expr& hd, const std::string& n) {
    return te::compute(
        {B, ir::Expr(Hkv), L, hd},
        [&](const std::vector<ir::Var>& v) {
          if (!past.defined()) return head_read(x, v[0], v[1], v[2], v[3], hd);
          ir::Expr from_x = head_read(x, v[0], v[1], ir::max(v[2] - P, zero), v[3], hd);
          return ir::select(v[2] < P, past(v[0], v[1], ir::min(ir::Expr(v[2]), P - one), v[3]), from_x);
        },
        n);
  };
  te::Tensor pk = present(past_key, K, D, name + "_present_key");
  te::Tensor pv = present(past_value, V, Dv, name + "_present_value");

  double scale = p.scale ? *p.scale : 1.0 / std::sqrt(double(detail::attention_const(D, "the head size of Q")));
  auto kd = te::reduce_axis(D, "d");
  std::vector<ir::Expr> scores_shape = {B, ir::Expr(Hq), Sq, L};
  auto all = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>(v.begin(), v.end()); };
  te::Tensor S = te::compute(
      scores_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr q = ir::cast(ct, head_read(Q, v[0], v[1], v[2], kd.var(), D));
        ir::Expr k = ir::cast(ct, pk(v[0], v[1] / ir::Expr(group), v[3], kd.var()));
        return te::sum(q * k * ir::make_const(ct, scale), {kd});
      },
      name + "_qk");
  te::Tensor C = S;
  if (p.softcap > 0.0)
    C = te::compute(
        scores_shape,
        [&](const std::vector<ir::Var>& v) {
          ir::Expr cap = ir::make_const(ct, p.softcap);
          return cap * ir::call(ir::CallOp::tanh, S(all(v)) / cap);
        },
        name + "_softcap");
  bool restricted = bool_mask || p.is_causal || nonpad.defined() || p.left_window_size >= 0 ||
                    p.right_window_size >= 0 || (mask.defined() && !same_extent(mask_len, L));
  te::Tensor Z = C;
  if (mask.defined() || restricted)
    Z = te::compute(
        scores_shape,
        [&](const std::vector<ir::Var>& v) {
          ir::Expr z = C(all(v));
          ir::Expr j = v[3], allowed;
          auto both = [&](ir::Expr c) { allowed = allowed.defined() ? (allowed && c) : c; };
          if (mask.defined()) {
            std::vector<ir::Expr> idx;
            for (size_t d = 0; d < mask.rank(); ++d)
              idx.push_back(ir::is_const_int(ir::simplify(mask.shape()[d]), 1) ? zero : ir::Expr(v[4 - mask.rank() + d]));
            if (!same_extent(mask_len, L)) {
              both(j < mask_len);
              idx.back() = ir::min(j, mask_len - one);
            }
            if (bool_mask) both(mask(idx));
            else z = z + ir::cast(ct, mask(idx));
          }
          // Offset of the query block: the past length, or the non-padding keys after the queries.
          ir::Expr offset = P;
          if (nonpad.defined()) {
            ir::Expr valid = ir::cast(dtype::index, nonpad(v[0]));
            both(j < valid);
            if (!past_key.defined()) offset = valid - Sq;
          }
          ir::Expr pos = v[2] + offset;
          if (p.is_causal) both(j <= pos);
          if (p.left_window_size >= 0) both(j >= pos - ir::Expr(p.left_window_size));
          if (p.right_window_size >= 0) both(j <= pos + ir::Expr(p.right_window_size));
          if (allowed.defined()) z = ir::select(allowed, z, ir::make_const(ct, -INFINITY));
          return z;
        },
        name + "_bias");

  // Softmax along the keys; a row whose every key is masked sums to 0 and becomes a zero row.
  auto km = te::reduce_axis(L, "j");
  std::vector<ir::Expr> row_shape = {B, ir::Expr(Hq), Sq, one};
  auto row = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>{v[0], v[1], v[2], int64_t(0)}; };
  te::Tensor mx = te::compute(
      row_shape, [&](const std::vector<ir::Var>& v) { return te::max_reduce(ir::cast(st, Z(v[0], v[1], v[2], km.var())), {km}); },
      name + "_max");
  te::Tensor ex = te::compute(
      scores_shape,
      [&](const std::vector<ir::Var>& v) { return ir::call(ir::CallOp::exp, ir::cast(st, Z(all(v))) - mx(row(v))); },
      name + "_exp");
  auto ks = te::reduce_axis(L, "j");
  te::Tensor sm = te::compute(
      row_shape, [&](const std::vector<ir::Var>& v) { return te::sum(ex(v[0], v[1], v[2], ks.var()), {ks}); },
      name + "_sum");
  te::Tensor prob = te::compute(
      scores_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr s = sm(row(v));
        return ir::select(s > ir::make_zero(st), ex(all(v)) / s, ir::make_zero(st));
      },
      name + "_softmax");

  auto kv = te::reduce_axis(L, "j");
  std::vector<ir::Expr> y_shape = packed ? std::vector<ir::Expr>{B, Sq, ir::simplify(ir::Expr(Hq) * Dv)}
                                         : std::vector<ir::Expr>{B, ir::Expr(Hq), Sq, Dv};
  te::Tensor Yacc = te::compute(
      y_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr b = v[0], h = packed ? v[2] / Dv : ir::Expr(v[1]), s = packed ? ir::Expr(v[1]) : ir::Expr(v[2]),
                 d = packed ? v[2] % Dv : ir::Expr(v[3]);
        ir::Expr pr = ir::cast(ct, prob(b, h, s, kv.var()));
        return te::sum(pr * ir::cast(ct, pv(b, h / ir::Expr(group), kv.var(), d)), {kv});
      },
      name + "_pv");
  te::Tensor Y = Yacc;
  if (ct != t)
    Y = te::compute(y_shape, [&](const std::vector<ir::Var>& v) { return ir::cast(t, Yacc(all(v))); }, name);
  const te::Tensor modes[] = {S, C, Z, prob};
  const te::Tensor& chosen = modes[p.qk_matmul_output_mode];
  te::Tensor qk = te::compute(
      scores_shape, [&](const std::vector<ir::Var>& v) { return ir::cast(t, chosen(all(v))); },
      name + "_qk_matmul_output");
  return {Y, pk, pv, qk};
}

inline OpDef attention_def() {
  return OpDef{
      .name = "attention",
      .importer_names = {"onnx:Attention"},
      .input_names = {"Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"},
      .optional_inputs = 4,
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            AttentionParams p;
            p.is_causal = attrs.get_int("is_causal", 0) != 0;
            if (attrs.has("scale")) p.scale = attrs.get_float("scale");
            p.q_num_heads = attrs.get_int("q_num_heads", 0);
            p.kv_num_heads = attrs.get_int("kv_num_heads", 0);
            p.softcap = attrs.get_float("softcap", 0.0);
            p.qk_matmul_output_mode = attrs.get_int("qk_matmul_output_mode", 0);
            if (attrs.has("softmax_precision")) {
              DataType sp = attrs.get_dtype("softmax_precision");
              if (!sp.is_float())
                throw UserError("nnvm.ops.attr", str_cat("attribute 'softmax_precision' is ", sp, ", expected a float type"),
                                {"attribute softmax_precision"});
              p.softmax_precision = sp;
            }
            p.left_window_size = attrs.get_int("left_window_size", -1);
            p.right_window_size = attrs.get_int("right_window_size", -1);
            auto opt = [&](size_t i) { return i < in.size() ? in[i] : te::Tensor(); };
            return attention(in[0], in[1], in[2], opt(3), opt(4), opt(5), opt(6), p);
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "softmax(Q K^T * scale + mask) V with grouped-query heads, KV cache, causal/window masks, softcap; "
             "outputs Y, present_key, present_value, qk_matmul_output",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/attention.hpp
// begin nnvm/ops/nn/batch_norm.hpp
// batch_norm: ONNX BatchNormalization in inference mode, per channel c (axis 1 of X):
// Y = (X - input_mean[c]) / sqrt(input_var[c] + epsilon) * scale[c] + B[c]. Training mode
// (running statistics as extra outputs) is not supported: training_mode=1 is refused.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor batch_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                             const te::Tensor& mean, const te::Tensor& var, double epsilon,
                             std::string name = "batch_norm") {
  check_rank(x, "X", 2, 8);
  check_norm_float(x, "X");
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  const te::Tensor* params[] = {&scale, &bias, &mean, &var};
  for (int i = 0; i < 4; ++i) {
    check_norm_float(*params[i], names[i]);
    check_channel_param(*params[i], names[i], x.shape()[1]);
  }
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        auto p = [&](const te::Tensor& q) { return ir::cast(ct, q(v[1])); };
        ir::Expr xv = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        ir::Expr inv = ir::make_const(ct, 1.0) / ir::call(ir::CallOp::sqrt, p(var) + ir::make_const(ct, epsilon));
        return ir::cast(t, (xv - p(mean)) * inv * p(scale) + p(bias));
      },
      std::move(name));
}

inline OpDef batch_norm_def() {
  return OpDef{
      .name = "batch_norm",
      .importer_names = {"onnx:BatchNormalization"},
      .input_names = {"X", "scale", "B", "input_mean", "input_var"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            if (attrs.get_int("training_mode", 0) != 0)
              throw UserError("nnvm.ops.attr",
                              "attribute 'training_mode' is 1 but only inference (training_mode=0) is supported",
                              {"attribute training_mode"});
            return std::vector<te::Tensor>{
                batch_norm(in[0], in[1], in[2], in[3], in[4], attrs.get_float("epsilon", 1e-5))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "(X - input_mean) / sqrt(input_var + epsilon) * scale + B per channel (inference)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/batch_norm.hpp
// begin nnvm/ops/nn/dense.hpp
// dense: Y = alpha * A' * B' + beta * C, the ONNX Gemm. A' is A (M x K) or, with transA, A's
// transpose; B' likewise (K x N); the optional bias C broadcasts to (M, N) from the right
// (shape (), (N), (1, N), (M, 1), (M, N), ...). It owns onnx:Gemm; matmul.hpp (onnx:MatMul) shares
// its dtype rule and its tiled schedule.


NNVM_BEGIN_NAMESPACE
namespace ops {

// "nnvm.ops.input_dtype" unless `t` holds a type the matrix products compute in: float32, float64
// or a 32/64-bit integer (ONNX Gemm and MatMul; float16 would need a float32 accumulator stage).
inline void check_matmul_dtype(const te::Tensor& t, const char* input) {
  DataType d = t.dtype();
  bool ok = d.is_scalar() && !d.is_storage_only() && !d.is_bool() && !d.is_handle() &&
            (d.is_float() || d.bits == 32 || d.bits == 64);
  if (!ok)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", d,
                            ", expected float32, float64 or a 32/64-bit integer"),
                    {"input " + std::string(input)});
}

struct DenseParams {
  bool trans_a = false, trans_b = false;
  double alpha = 1.0, beta = 1.0;
};

// One stage: the bias is the reduction's starting value, so Y is written once per element.
inline te::Tensor dense(const te::Tensor& A, const te::Tensor& B, const te::Tensor& C = {}, DenseParams p = {},
                        std::string name = "dense") {
  check_rank(A, "A", 2);
  check_rank(B, "B", 2);
  check_matmul_dtype(A, "A");
  check_same_dtype(A, "A", B, "B");
  // Integer products cannot take a fractional factor without changing the output type.
  for (auto [v, attr] : {std::pair{p.alpha, "alpha"}, std::pair{p.beta, "beta"}})
    if (!A.dtype().is_float() && v != std::floor(v))
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute '", attr, "' is ", v, " but must be a whole number for ", A.dtype(), " inputs"),
                      {std::string("attribute ") + attr});
  ir::Expr M = A.shape()[p.trans_a ? 1 : 0], K = A.shape()[p.trans_a ? 0 : 1];
  ir::Expr KB = B.shape()[p.trans_b ? 1 : 0], N = B.shape()[p.trans_b ? 0 : 1];
  check_same_extent(K, KB, str_cat("the inner extents of A", p.trans_a ? " (transposed)" : "", " and B",
                                   p.trans_b ? " (transposed)" : ""));
  // For each axis of C (right-aligned to (M, N)): false when it has extent 1, so reads index 0.
  std::vector<bool> c_follows;
  if (C.defined()) {
    check_rank(C, "C", 0, 2);
    check_same_dtype(A, "A", C, "C");
    const ir::Expr out[2] = {M, N};
    for (size_t d = 0; d < C.rank(); ++d) {
      const ir::Expr& want = out[2 - C.rank() + d];
      bool one = ir::is_const_int(ir::simplify(C.shape()[d]), 1);
      if (!one && !same_extent(C.shape()[d], want))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("bias C axis ", d, " has extent ", ir::to_string(C.shape()[d]),
                                "; it must be 1 or equal the output's ", ir::to_string(want)),
                        {"input C"});
      c_follows.push_back(!one);
    }
  }
  DataType t = A.dtype();
  auto k = te::reduce_axis(K, "k");
  return te::compute(
      {M, N},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr a = p.trans_a ? A(k.var(), v[0]) : A(v[0], k.var());
        ir::Expr b = p.trans_b ? B(v[1], k.var()) : B(k.var(), v[1]);
        ir::Expr prod = p.alpha == 1.0 ? a * b : a * b * ir::make_const(t, p.alpha);
        ir::Expr init;
        if (C.defined()) {
          std::vector<ir::Expr> idx;
          for (size_t d = 0; d < C.rank(); ++d)
            idx.push_back(c_follows[d] ? ir::Expr(v[2 - C.rank() + d]) : ir::Expr(int64_t(0)));
          init = C(idx);
          if (p.beta != 1.0) init = init * ir::make_const(t, p.beta);
        }
        return te::sum(prod, {k}, init);
      },
      std::move(name));
}

// Register tiles over the last two axes of a matrix-product stage (one reduction axis): 4 rows
// by two SIMD vectors of columns, the reduction split by 4 and unrolled inside; the leading
// (batch) axes and the rows of tiles are fused into one loop spread over threads.
inline void schedule_matmul_tiles(schedule::Stage st, const Target& target) {
  size_t rank = st.tensor().rank();
  int lanes = target.vector_lanes(st.tensor().dtype());
  auto [io, jo, ii, ji] = st.tile(st.axis(rank - 2), st.axis(rank - 1), 4, 2 * lanes);
  auto [ko, ki] = st.split(st.reduce_axis(0), 4);
  std::vector<ir::IterVar> outer;
  for (size_t d = 0; d + 2 < rank; ++d) outer.push_back(st.axis(d));
  outer.push_back(io);
  std::vector<ir::IterVar> order = outer;
  order.insert(order.end(), {jo, ko, ki, ii, ji});
  st.reorder(order);
  st.vectorize(ji);
  st.unroll(ii);
  st.unroll(ki);
  ir::IterVar par = st.fuse(outer);
  if (detail::worth_parallel(st)) st.parallel(par);
}

inline void schedule_dense(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  schedule_matmul_tiles(s[Y], target);
}

inline OpDef dense_def() {
  return OpDef{
      .name = "dense",
      .importer_names = {"onnx:Gemm"},
      .input_names = {"A", "B", "C"},
      .optional_inputs = 1,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            DenseParams p{attrs.get_int("transA", 0) != 0, attrs.get_int("transB", 0) != 0,
                          attrs.get_float("alpha", 1.0), attrs.get_float("beta", 1.0)};
            return std::vector<te::Tensor>{dense(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), p)};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_dense(s, out[0], t); },
      .doc = "alpha * A' * B' + beta * C (Gemm; attributes transA, transB, alpha, beta; floats and 32/64-bit ints)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/dense.hpp
// begin nnvm/ops/nn/einsum.hpp
// einsum: ONNX Einsum, Einstein summation over any number of operands. The equation names each
// operand axis with a letter ("ij,jk->ik"); an output axis per output letter, and every letter that
// is not in the output is summed. Repeated letters in one operand read its diagonal ("ii->i"),
// "..." stands for the axes no letter names (broadcast between operands, right-aligned), and
// without "->" the output is "..." then the letters used exactly once, in alphabetical order.
// The whole product is one compute: one index variable per letter, reduce axes for the summed ones.

#include <map>


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// One operand's (or the output's) term: letters in order, with the "..." position (npos if none).
struct EinsumTerm {
  std::string letters;
  size_t ellipsis = std::string::npos;  // index into letters where the "..." axes go
};

[[noreturn]] inline void einsum_bad(const std::string& eq, const std::string& why) {
  throw UserError("nnvm.ops.attr", str_cat("attribute 'equation' (\"", eq, "\"): ", why), {"attribute equation"});
}

inline EinsumTerm parse_einsum_term(const std::string& eq, std::string term) {
  EinsumTerm t;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0 || t.ellipsis != std::string::npos)
        einsum_bad(eq, "'.' may only appear as one \"...\" per term");
      t.ellipsis = t.letters.size();
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters += c;
    } else {
      einsum_bad(eq, str_cat("unexpected character '", c, "'"));
    }
  }
  return t;
}
}  // namespace detail

inline te::Tensor einsum(const std::vector<te::Tensor>& xs, const std::string& eq, std::string name = "einsum") {
  using detail::einsum_bad;
  if (xs.empty()) throw UserError("nnvm.ops.input_count", "einsum needs at least one input");
  DataType t = xs[0].dtype();
  if (!t.is_scalar() || t.is_bool() || t.is_handle() || t.is_storage_only())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input Inputs (tensor ", xs[0].name(), ") is ", t, ", expected float32, float64 or an integer"),
                    {"input Inputs"});
  for (size_t i = 1; i < xs.size(); ++i) check_same_dtype(xs[0], "Inputs[0]", xs[i], "Inputs[i]");

  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<detail::EinsumTerm> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(detail::parse_einsum_term(eq, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != xs.size())
    einsum_bad(eq, str_cat("it names ", terms.size(), " operands but the op has ", xs.size(), " inputs"));

  // Extent of each letter, and the broadcast extents of the "..." axes.
  std::map<char, ir::Expr> extent;
  std::map<char, int> uses;
  std::vector<ir::Expr> ell_shape;
  std::vector<size_t> ell_rank(xs.size(), 0);
  for (size_t o = 0; o < xs.size(); ++o) {
    const auto& term = terms[o];
    size_t named = term.letters.size();
    bool has_ell = term.ellipsis != std::string::npos;
    if (xs[o].rank() < named || (!has_ell && xs[o].rank() != named))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", o, " (tensor ", xs[o].name(), ") has rank ", xs[o].rank(), " but equation term ",
                              o, " names ", named, " axes", has_ell ? " plus \"...\"" : ""),
                      {str_cat("input Inputs[", o, "]")});
    ell_rank[o] = xs[o].rank() - named;
    std::vector<ir::Expr> mine;
    for (size_t d = 0; d < ell_rank[o]; ++d) mine.push_back(xs[o].shape()[term.ellipsis + d]);
    try {
      ell_shape = broadcast_shape(ell_shape, mine);
    } catch (const UserError& e) {
      throw UserError("nnvm.ops.input_shape", "the \"...\" axes: " + e.message(), {str_cat("input Inputs[", o, "]")});
    }
    for (size_t l = 0; l < named; ++l) {
      char c = term.letters[l];
      const ir::Expr& e = xs[o].shape()[l < term.ellipsis ? l : l + ell_rank[o]];
      ++uses[c];
      if (auto it = extent.find(c); it == extent.end()) extent.emplace(c, e);
      else if (!same_extent(it->second, e))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("letter '", c, "' has extents ", ir::to_string(it->second), " and ", ir::to_string(e)),
                        {str_cat("input Inputs[", o, "]")});
    }
  }

  detail::EinsumTerm out;
  if (arrow != std::string::npos) {
    out = detail::parse_einsum_term(eq, eq.substr(arrow + 2));
    for (size_t i = 0; i < out.letters.size(); ++i) {
      if (!extent.count(out.letters[i])) einsum_bad(eq, str_cat("output letter '", out.letters[i], "' names no input axis"));
      if (out.letters.find(out.letters[i]) != i) einsum_bad(eq, str_cat("output letter '", out.letters[i], "' repeats"));
    }
  } else {
    out.ellipsis = 0;
    for (auto& [c, n] : uses)
      if (n == 1) out.letters += c;  // std::map: alphabetical (upper case first, as NumPy)
  }
  bool out_ell = out.ellipsis != std::string::npos;

  std::vector<ir::Expr> shape;
  for (size_t l = 0; l <= out.letters.size(); ++l) {
    if (l == out.ellipsis) shape.insert(shape.end(), ell_shape.begin(), ell_shape.end());
    if (l < out.letters.size()) shape.push_back(extent[out.letters[l]]);
  }
  // Summed: letters missing from the output, and the "..." axes when the output has no "...".
  std::vector<ir::IterVar> reduce;
  std::map<char, ir::Expr> summed;
  for (auto& [c, e] : extent)
    if (out.letters.find(c) == std::string::npos) {
      reduce.push_back(te::reduce_axis(e, std::string(1, c)));
      summed.emplace(c, reduce.back().var());
    }
  std::vector<ir::Expr> ell_summed;
  if (!out_ell)
    for (size_t d = 0; d < ell_shape.size(); ++d) {
      reduce.push_back(te::reduce_axis(ell_shape[d], str_cat("e", d)));
      ell_summed.push_back(reduce.back().var());
    }

  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::map<char, ir::Expr> at = summed;
        std::vector<ir::Expr> ell = ell_summed;
        size_t pos = 0;
        for (size_t l = 0; l <= out.letters.size(); ++l) {
          if (l == out.ellipsis)
            for (size_t d = 0; d < ell_shape.size(); ++d) ell.push_back(v[pos++]);
          if (l < out.letters.size()) at[out.letters[l]] = v[pos++];
        }
        ir::Expr prod;
        for (size_t o = 0; o < xs.size(); ++o) {
          const auto& term = terms[o];
          std::vector<ir::Expr> idx;
          for (size_t l = 0; l <= term.letters.size(); ++l) {
            if (l == term.ellipsis)
              for (size_t d = 0; d < ell_rank[o]; ++d) {
                const ir::Expr& e = xs[o].shape()[term.ellipsis + d];
                idx.push_back(ir::is_const_int(ir::simplify(e), 1) ? ir::Expr(int64_t(0))
                                                                   : ell[ell.size() - ell_rank[o] + d]);
              }
            if (l < term.letters.size()) idx.push_back(at[term.letters[l]]);
          }
          ir::Expr x = xs[o](idx);
          prod = prod.defined() ? prod * x : x;
        }
        return reduce.empty() ? prod : te::sum(prod, reduce);
      },
      std::move(name));
}

inline OpDef einsum_def() {
  return OpDef{
      .name = "einsum",
      .importer_names = {"onnx:Einsum"},
      // ONNX's one variadic input; an importer passes however many the node has.
      .input_names = {"Inputs0", "Inputs1", "Inputs2", "Inputs3", "Inputs4", "Inputs5", "Inputs6", "Inputs7"},
      .optional_inputs = 7,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            for (auto& x : in)
              if (!x.defined()) throw UserError("nnvm.ops.input_count", "einsum inputs cannot be left out");
            return std::vector<te::Tensor>{einsum(in, attrs.get_string("equation"))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            if (out[0].op().reduce_axes.empty()) schedule_injective(s[out[0]], t);
            else schedule_reduction(s[out[0]], t);
          },
      .doc = "Einstein summation of up to 8 inputs by attribute equation (\"ij,jk->ik\", \"ii->i\", \"...ij->...ji\")",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/einsum.hpp
// begin nnvm/ops/nn/group_norm.hpp
// group_norm: ONNX GroupNormalization (opset 21 meaning: scale and bias per channel). The C
// channels of X (N, C, D1, ...) form num_groups groups of C / num_groups consecutive channels;
// each (n, group) is normalized over its channels and spatial axes, with statistics in
// stash_type (default float32): Y = (X - mean) / sqrt(var + epsilon) * scale[c] + bias[c].


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor group_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias, int64_t groups,
                             double epsilon, DataType st, const std::string& name = "group_norm") {
  check_rank(x, "X", 2, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "scale");
  check_norm_float(bias, "bias");
  check_channel_param(scale, "scale", x.shape()[1]);
  check_channel_param(bias, "bias", x.shape()[1]);
  const int64_t* c = ir::as_const_int(ir::simplify(x.shape()[1]));
  if (!c) throw UserError("nnvm.ops.input_shape", "input X needs a constant channel count (axis 1)", {"input X"});
  if (groups <= 0 || *c % groups != 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'num_groups' is ", groups, " but must be positive and divide the ", *c,
                            " channels of X"),
                    {"attribute num_groups"});
  int64_t per = *c / groups;
  // Statistics over (channel in group, spatial...): the view X as (N, G, C/G, D1, ...).
  std::vector<ir::Expr> view = {x.shape()[0], ir::Expr(groups), ir::Expr(per)};
  view.insert(view.end(), x.shape().begin() + 2, x.shape().end());
  std::vector<bool> reduced(view.size(), true);
  reduced[0] = reduced[1] = false;
  auto read_view = [&](const std::vector<ir::Expr>& i) {
    std::vector<ir::Expr> idx = {i[0], i[1] * ir::Expr(per) + i[2]};
    idx.insert(idx.end(), i.begin() + 3, i.end());
    return ir::cast(st, x(idx));
  };
  te::Tensor mean = mean_over(view, reduced, st, read_view, name + "_mean");
  te::Tensor var = mean_over(
      view, reduced, st,
      [&](const std::vector<ir::Expr>& i) {
        std::vector<ir::Expr> m(view.size(), ir::Expr(int64_t(0)));
        m[0] = i[0];
        m[1] = i[1];
        ir::Expr dev = read_view(i) - mean(m);
        return dev * dev;
      },
      name + "_var");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> m(view.size(), ir::Expr(int64_t(0)));
        m[0] = v[0];
        m[1] = v[1] / ir::Expr(per);
        ir::Expr inv = ir::make_const(st, 1.0) / ir::call(ir::CallOp::sqrt, var(m) + ir::make_const(st, epsilon));
        ir::Expr n = (ir::cast(st, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(m)) * inv;
        return ir::cast(t, ir::cast(ct, n) * ir::cast(ct, scale(v[1])) + ir::cast(ct, bias(v[1])));
      },
      name);
}

inline OpDef group_norm_def() {
  return OpDef{
      .name = "group_norm",
      .importer_names = {"onnx:GroupNormalization"},
      .input_names = {"X", "scale", "bias"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{group_norm(in[0], in[1], in[2], attrs.get_int("num_groups"),
                                                      attrs.get_float("epsilon", 1e-5), stash_dtype(attrs))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "normalize X over channel groups (attribute num_groups) and spatial axes, then * scale[c] + bias[c]",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/group_norm.hpp
// begin nnvm/ops/nn/instance_norm.hpp
// instance_norm: ONNX InstanceNormalization. Each (n, c) slice of X (N, C, D1, ...) is
// normalized over its spatial axes: Y = (X - mean) / sqrt(var + epsilon) * scale[c] + B[c].


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor instance_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias, double epsilon,
                                const std::string& name = "instance_norm") {
  check_rank(x, "X", 3, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "scale");
  check_norm_float(bias, "B");
  check_channel_param(scale, "scale", x.shape()[1]);
  check_channel_param(bias, "B", x.shape()[1]);
  DataType t = x.dtype(), ct = norm_compute_type(t);
  std::vector<bool> reduced(x.rank(), true);
  reduced[0] = reduced[1] = false;
  auto [mean, var] = moments(x, reduced, ct, name);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> k = kept_index(v, reduced);
        ir::Expr inv = ir::make_const(ct, 1.0) / ir::call(ir::CallOp::sqrt, var(k) + ir::make_const(ct, epsilon));
        ir::Expr n = (ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(k)) * inv;
        return ir::cast(t, n * ir::cast(ct, scale(v[1])) + ir::cast(ct, bias(v[1])));
      },
      name);
}

inline OpDef instance_norm_def() {
  return OpDef{
      .name = "instance_norm",
      .importer_names = {"onnx:InstanceNormalization"},
      .input_names = {"input", "scale", "B"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{instance_norm(in[0], in[1], in[2], attrs.get_float("epsilon", 1e-5))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "normalize each (n, c) slice over its spatial axes, then * scale[c] + B[c]",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/instance_norm.hpp
// begin nnvm/ops/nn/layer_norm.hpp
// layer_norm: ONNX LayerNormalization. X is normalized over its axes from `axis` (default -1)
// to the end: Y = (X - Mean) * InvStdDev * Scale + B, InvStdDev = 1 / sqrt(Var + epsilon), with
// the statistics computed in stash_type (default float32). Scale and B broadcast to X's shape
// from the right. Outputs Y (X's type), Mean and InvStdDev (stash_type, X's shape with the
// normalized axes set to 1).


NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<te::Tensor> layer_norm(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& bias,
                                          int64_t axis, double epsilon, DataType st,
                                          const std::string& name = "layer_norm") {
  check_rank(x, "X", 1, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "Scale");
  check_unidirectional(scale, "Scale", x.shape());
  if (bias.defined()) {
    check_norm_float(bias, "B");
    check_unidirectional(bias, "B", x.shape());
  }
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<bool> reduced(x.rank(), false);
  for (size_t d = a; d < x.rank(); ++d) reduced[d] = true;
  auto [mean, var] = moments(x, reduced, st, name);
  te::Tensor inv = te::compute(
      mean.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> i(v.begin(), v.end());
        return ir::make_const(st, 1.0) / ir::call(ir::CallOp::sqrt, var(i) + ir::make_const(st, epsilon));
      },
      name + "_inv_std_dev");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  te::Tensor y = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> k = kept_index(v, reduced);
        ir::Expr n = (ir::cast(st, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(k)) * inv(k);
        ir::Expr y = ir::cast(ct, n) * ir::cast(ct, read_broadcast(scale, v));
        if (bias.defined()) y = y + ir::cast(ct, read_broadcast(bias, v));
        return ir::cast(t, y);
      },
      name);
  return {y, mean, inv};
}

inline OpDef layer_norm_def() {
  return OpDef{
      .name = "layer_norm",
      .importer_names = {"onnx:LayerNormalization"},
      .input_names = {"X", "Scale", "B"},
      .optional_inputs = 1,
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return layer_norm(in[0], in[1], in.size() > 2 ? in[2] : te::Tensor(), attrs.get_int("axis", -1),
                              attrs.get_float("epsilon", 1e-5), stash_dtype(attrs));
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "normalize X over axes [axis, rank) then * Scale + B; outputs Y, Mean, InvStdDev",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/layer_norm.hpp
// begin nnvm/ops/nn/lp_normalization.hpp
// lp_normalization: ONNX LpNormalization. X divided by its L1 (p = 1) or L2 (p = 2, default) norm
// along attribute axis (default -1): Y = X / (sum |X|^p)^(1/p). Where the norm is 0, Y is 0 (as the
// ONNX reference gives), not NaN. float16/bfloat16 compute in float32.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor lp_normalization(const te::Tensor& x, int64_t axis, int64_t p,
                                   const std::string& name = "lp_normalization") {
  check_rank(x, "input", 1, 8);
  check_norm_float(x, "input");
  if (p != 1 && p != 2)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'p' is ", p, " but must be 1 or 2"), {"attribute p"});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  std::vector<ir::Expr> kept = x.shape();
  kept[a] = ir::Expr(int64_t(1));
  auto k = te::reduce_axis(x.shape()[a], "k");
  te::Tensor norm = te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        idx[a] = k.var();
        ir::Expr e = ir::cast(ct, x(idx));
        return te::sum(p == 1 ? ir::call(ir::CallOp::abs, e) : e * e, {k});
      },
      name + "_norm");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end()), at = idx;
        at[a] = ir::Expr(int64_t(0));
        ir::Expr n = p == 1 ? norm(at) : ir::call(ir::CallOp::sqrt, norm(at));
        ir::Expr zero = ir::make_zero(ct);
        // Dividing by 1 where the norm is 0 keeps the division finite; the select gives 0.
        ir::Expr y = ir::select(n == zero, zero, ir::cast(ct, x(idx)) / ir::select(n == zero, ir::make_const(ct, 1.0), n));
        return ir::cast(t, y);
      },
      name);
}

inline OpDef lp_normalization_def() {
  return OpDef{
      .name = "lp_normalization",
      .importer_names = {"onnx:LpNormalization"},
      .input_names = {"input"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{lp_normalization(in[0], attrs.get_int("axis", -1), attrs.get_int("p", 2))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "input / its L1 or L2 norm along attribute axis (default -1); 0 where the norm is 0",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/lp_normalization.hpp
// begin nnvm/ops/nn/lrn.hpp
// lrn: ONNX LRN, local response normalization across channels (axis 1 of X (N, C, D1, ...)):
// Y = X / (bias + alpha / size * square_sum) ^ beta, where square_sum at channel c sums X^2 over
// channels [c - floor((size-1)/2), c + ceil((size-1)/2)] that exist.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor lrn(const te::Tensor& x, int64_t size, double alpha, double beta, double bias,
                      const std::string& name = "lrn") {
  check_rank(x, "X", 2, 8);
  check_norm_float(x, "X");
  if (size <= 0)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'size' is ", size, " but must be positive"), {"attribute size"});
  DataType t = x.dtype(), ct = norm_compute_type(t);
  ir::Expr channels = x.shape()[1];
  auto r = te::reduce_axis(ir::Expr(size), "r");
  te::Tensor sq = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr c = v[1] - ir::Expr((size - 1) / 2) + r.var();
        // Channels outside [0, C) add nothing; the read index is clamped so it stays in bounds.
        idx[1] = ir::max(ir::Expr(int64_t(0)), ir::min(c, channels - ir::Expr(int64_t(1))));
        ir::Expr e = ir::cast(ct, x(idx));
        ir::Expr inside = c >= ir::Expr(int64_t(0)) && c < channels;
        return te::sum(ir::select(inside, e * e, ir::make_zero(ct)), {r});
      },
      name + "_square_sum");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr den = ir::make_const(ct, bias) + ir::make_const(ct, alpha / double(size)) * sq(idx);
        return ir::cast(t, ir::cast(ct, x(idx)) / ir::call(ir::CallOp::pow, den, ir::make_const(ct, beta)));
      },
      name);
}

inline OpDef lrn_def() {
  return OpDef{
      .name = "lrn",
      .importer_names = {"onnx:LRN"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{lrn(in[0], attrs.get_int("size"), attrs.get_float("alpha", 1e-4),
                                               attrs.get_float("beta", 0.75), attrs.get_float("bias", 1.0))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "X / (bias + alpha / size * sum of X^2 over `size` neighbouring channels) ^ beta",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/lrn.hpp
// begin nnvm/ops/nn/matmul.hpp
// matmul: the NumPy matrix product, ONNX MatMul. A 1-D A is a row vector and a 1-D B a column
// vector, and that axis is dropped from the result; the leading (batch) axes of rank > 2
// operands broadcast against each other as NumPy does: (2, 1, 3, 4) x (5, 4, 6) -> (2, 5, 3, 6).


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor matmul(const te::Tensor& A, const te::Tensor& B, std::string name = "matmul") {
  check_rank(A, "A", 1, 8);
  check_rank(B, "B", 1, 8);
  check_matmul_dtype(A, "A");
  check_same_dtype(A, "A", B, "B");
  bool a_vec = A.rank() == 1, b_vec = B.rank() == 1;
  ir::Expr K = A.shape().back(), KB = B.shape()[b_vec ? 0 : B.rank() - 2];
  check_same_extent(K, KB, "the inner extents of A (its last axis) and B (its second-to-last axis)");
  std::vector<ir::Expr> a_batch(A.shape().begin(), A.shape().end() - (a_vec ? 1 : 2));
  std::vector<ir::Expr> b_batch(B.shape().begin(), B.shape().end() - (b_vec ? 1 : 2));
  std::vector<ir::Expr> shape;
  try {
    shape = broadcast_shape(a_batch, b_batch);
  } catch (const UserError& e) {
    throw UserError("nnvm.ops.input_shape", "the batch axes of A and B: " + e.message(), {"input B"});
  }
  size_t nb = shape.size();
  if (!a_vec) shape.push_back(A.shape()[A.rank() - 2]);
  if (!b_vec) shape.push_back(B.shape().back());
  // Reads the batch part of an operand at output position v: right-aligned, extent 1 reads 0.
  auto batch_idx = [nb](const std::vector<ir::Expr>& batch, const std::vector<ir::Var>& v) {
    std::vector<ir::Expr> idx;
    for (size_t d = 0; d < batch.size(); ++d)
      idx.push_back(ir::is_const_int(ir::simplify(batch[d]), 1) ? ir::Expr(int64_t(0))
                                                               : ir::Expr(v[nb - batch.size() + d]));
    return idx;
  };
  auto k = te::reduce_axis(K, "k");
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> ai = batch_idx(a_batch, v), bi = batch_idx(b_batch, v);
        if (!a_vec) ai.push_back(v[nb]);
        ai.push_back(k.var());
        bi.push_back(k.var());
        if (!b_vec) bi.push_back(v.back());
        return te::sum(A(ai) * B(bi), {k});
      },
      std::move(name));
}

// Matrix results (rank >= 2) take dense's register tiles over their last two axes; a vector or
// scalar result is a plain reduction per element.
inline void schedule_matmul(schedule::Schedule& s, const te::Tensor& Y, const Target& target) {
  te::Tensor a(Y.op().inputs.at(0)), b(Y.op().inputs.at(Y.op().inputs.size() - 1));
  if (a.rank() >= 2 && b.rank() >= 2) schedule_matmul_tiles(s[Y], target);
  else schedule_reduction(s[Y], target);
}

inline OpDef matmul_def() {
  return OpDef{
      .name = "matmul",
      .importer_names = {"onnx:MatMul"},
      .input_names = {"A", "B"},
      .pattern = OpPattern::out_fusable,
      .compute = [](const std::vector<te::Tensor>& in,
                    const Attrs&) { return std::vector<te::Tensor>{matmul(in[0], in[1])}; },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_matmul(s, out[0], t); },
      .doc = "NumPy matrix product of A and B (1-D operands, broadcast batch axes; floats and 32/64-bit ints)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/matmul.hpp
// begin nnvm/ops/nn/mean_variance_normalization.hpp
// mean_variance_normalization: ONNX MeanVarianceNormalization. X is normalized over `axes`
// (default [0, 2, 3]): Y = (X - mean) / (sqrt(var) + 1e-9), the constant ONNX's function body
// adds to the standard deviation.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor mean_variance_normalization(const te::Tensor& x, const std::vector<int64_t>& axes,
                                              const std::string& name = "mean_variance_normalization") {
  check_rank(x, "X", 1, 8);
  check_norm_float(x, "X");
  std::vector<bool> reduced(x.rank(), false);
  for (int64_t a : axes) {
    size_t d = normalize_axis(a, x.rank(), "axes");
    if (reduced[d])
      throw UserError("nnvm.ops.attr", str_cat("attribute 'axes' names axis ", d, " twice"), {"attribute axes"});
    reduced[d] = true;
  }
  DataType t = x.dtype(), ct = norm_compute_type(t);
  auto [mean, var] = moments(x, reduced, ct, name);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> k = kept_index(v, reduced);
        ir::Expr sd = ir::call(ir::CallOp::sqrt, var(k)) + ir::make_const(ct, 1e-9);
        return ir::cast(t, (ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end()))) - mean(k)) / sd);
      },
      name);
}

inline OpDef mean_variance_normalization_def() {
  return OpDef{
      .name = "mean_variance_normalization",
      .importer_names = {"onnx:MeanVarianceNormalization"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                mean_variance_normalization(in[0], attrs.get_ints("axes", {0, 2, 3}))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_stages(s, out, t);
          },
      .doc = "(X - mean) / (std + 1e-9) over attribute axes (default [0, 2, 3])",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/mean_variance_normalization.hpp
// begin nnvm/ops/nn/nll_loss.hpp
// negative_log_likelihood_loss: ONNX NegativeLogLikelihoodLoss (opset 22). input is [N, C] or
// [N, C, d1..dk] (log-probabilities), target [N] or [N, d1..dk] holds class indices; each
// element's loss is -input[n, target, d..] * weight[target] (weight defaults to 1). A target
// equal to attribute ignore_index contributes 0 and, for reduction "mean", no weight.
// Reduction "none" keeps target's shape; "sum" and "mean" (the default, sum / sum of the
// weights used) give a scalar. Kernels cannot fail, so a target outside [0, C) that is not
// ignore_index is clamped to the nearest class (ONNX leaves it undefined; its reference clips
// the weight gather the same way).

#include <optional>


NNVM_BEGIN_NAMESPACE
namespace ops {

// The ONNX reduction attribute: "none", "sum" or "mean" (default); "nnvm.ops.attr" otherwise.
inline std::string loss_reduction(const Attrs& attrs) {
  std::string r = attrs.get_string("reduction", "mean");
  if (r != "none" && r != "sum" && r != "mean")
    throw UserError("nnvm.ops.attr", str_cat("attribute 'reduction' is '", r, "' but must be none, sum or mean"),
                    {"attribute reduction"});
  return r;
}

inline std::optional<int64_t> loss_ignore_index(const Attrs& attrs) {
  if (!attrs.has("ignore_index")) return std::nullopt;
  return attrs.get_int("ignore_index");
}

// `input` is read as log-probabilities; `weight` may be undefined (no weights). Shared by
// softmax_cross_entropy_loss, which passes its log_softmax.
inline te::Tensor nll_loss(const te::Tensor& input, const te::Tensor& target, const te::Tensor& weight,
                           const std::string& reduction, std::optional<int64_t> ignore_index,
                           const std::string& name = "nll_loss", const char* input_name = "input",
                           const char* target_name = "target", const char* weight_name = "weight") {
  check_rank(input, input_name, 2, 8);
  check_norm_float(input, input_name);
  check_rank(target, target_name, input.rank() - 1);
  if (target.dtype() != dtype::int32 && target.dtype() != dtype::int64)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", target_name, " (tensor ", target.name(), ") is ", target.dtype(),
                            ", expected int32 or int64"),
                    {"input " + std::string(target_name)});
  for (size_t d = 0; d < target.rank(); ++d)
    check_same_extent(target.shape()[d], input.shape()[d == 0 ? 0 : d + 1],
                      str_cat("extent ", d, " of input ", target_name, " and extent ", d == 0 ? 0 : d + 1,
                              " of input ", input_name));
  const ir::Expr& classes = input.shape()[1];
  if (weight.defined()) {
    check_same_dtype(weight, weight_name, input, input_name);
    check_channel_param(weight, weight_name, classes);
  }
  DataType t = input.dtype(), ct = norm_compute_type(t);

  // The ignore test, the clamped class and the weight used at target index i.
  auto kept = [&](const ir::Expr& cls) {
    return ignore_index ? cls != ir::Expr(*ignore_index) : ir::const_true();
  };
  auto element = [&](const std::vector<ir::Expr>& i, bool want_weight) {
    ir::Expr cls = ir::cast(dtype::index, target(i));
    ir::Expr c = ir::min(ir::max(cls, ir::Expr(int64_t(0))), classes - int64_t(1));
    ir::Expr w = weight.defined() ? ir::cast(ct, weight({c})) : ir::make_const(ct, 1.0);
    if (want_weight) return ir::select(kept(cls), w, ir::make_zero(ct));
    std::vector<ir::Expr> at = {i[0], c};
    at.insert(at.end(), i.begin() + 1, i.end());
    // A select, not a multiply by 0: an ignored element may point at -inf.
    return ir::select(kept(cls), -(ir::cast(ct, input(at)) * w), ir::make_zero(ct));
  };

  if (reduction == "none")
    return te::compute(
        target.shape(), [&](const std::vector<ir::Var>& v) { return ir::cast(t, element({v.begin(), v.end()}, false)); },
        name);

  auto total = [&](bool want_weight, const std::string& stage) {
    std::vector<ir::IterVar> axes;
    std::vector<ir::Expr> idx;
    for (size_t d = 0; d < target.rank(); ++d) {
      axes.push_back(te::reduce_axis(target.shape()[d], str_cat("r", d)));
      idx.push_back(axes.back().var());
    }
    return te::compute({}, [&](const std::vector<ir::Var>&) { return te::sum(element(idx, want_weight), axes); },
                       stage);
  };
  te::Tensor loss_sum = total(false, name + "_sum");
  if (reduction == "sum")
    return te::compute({}, [&](const std::vector<ir::Var>&) { return ir::cast(t, loss_sum({})); }, name);
  te::Tensor weight_sum = total(true, name + "_weight_sum");
  // Every element ignored gives 0 / 0 = NaN, as the ONNX reference does.
  return te::compute(
      {}, [&](const std::vector<ir::Var>&) { return ir::cast(t, loss_sum({}) / weight_sum({})); }, name);
}

inline OpDef negative_log_likelihood_loss_def() {
  return OpDef{
      .name = "negative_log_likelihood_loss",
      .importer_names = {"onnx:NegativeLogLikelihoodLoss"},
      .input_names = {"input", "target", "weight"},
      .optional_inputs = 1,
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            te::Tensor w = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{
                nll_loss(in[0], in[1], w, loss_reduction(attrs), loss_ignore_index(attrs))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_stages(s, out, t);
          },
      .doc = "-input[n, target, d..] * weight[target], reduced by attribute reduction (none/sum/mean); "
             "ignore_index skipped; out-of-range targets clamped",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/nll_loss.hpp
// begin nnvm/ops/nn/rms_norm.hpp
// rms_norm: ONNX RMSNormalization (opset 23). X is scaled over its axes from `axis` (default -1)
// to the end: Y = X / sqrt(mean(X^2) + epsilon) * scale, the mean computed in stash_type
// (default float32); scale broadcasts to X's shape from the right.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor rms_norm(const te::Tensor& x, const te::Tensor& scale, int64_t axis, double epsilon, DataType st,
                           const std::string& name = "rms_norm") {
  check_rank(x, "X", 1, 8);
  check_norm_float(x, "X");
  check_norm_float(scale, "scale");
  check_unidirectional(scale, "scale", x.shape());
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<bool> reduced(x.rank(), false);
  for (size_t d = a; d < x.rank(); ++d) reduced[d] = true;
  te::Tensor ms = mean_over(
      x.shape(), reduced, st,
      [&](const std::vector<ir::Expr>& i) {
        ir::Expr e = ir::cast(st, x(i));
        return e * e;
      },
      name + "_mean_square");
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr inv = ir::make_const(st, 1.0) / ir::call(ir::CallOp::sqrt, ms(kept_index(v, reduced)) +
                                                                                 ir::make_const(st, epsilon));
        ir::Expr n = ir::cast(st, x(std::vector<ir::Expr>(v.begin(), v.end()))) * inv;
        return ir::cast(t, ir::cast(ct, n) * ir::cast(ct, read_broadcast(scale, v)));
      },
      name);
}

inline OpDef rms_norm_def() {
  return OpDef{
      .name = "rms_norm",
      .importer_names = {"onnx:RMSNormalization"},
      .input_names = {"X", "scale"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{rms_norm(in[0], in[1], attrs.get_int("axis", -1),
                                                    attrs.get_float("epsilon", 1e-5), stash_dtype(attrs))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_stages(s, out, t); },
      .doc = "X / sqrt(mean(X^2) + epsilon) * scale over axes [axis, rank)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/rms_norm.hpp
// begin nnvm/ops/nn/rotary_embedding.hpp
// rotary_embedding: ONNX RotaryEmbedding (opset 23). X is (batch, heads, seq, head_size), or
// (batch, seq, hidden) with attribute num_heads giving head_size = hidden / num_heads. The first
// rotary_embedding_dim (default: all) elements of each head are rotated pairwise by the angle
// whose cosine and sine the caches hold; the rest pass through. Pairs are (j, j + dim/2) by
// default, or (2i, 2i + 1) with interleaved = 1:
//   y1 = cos * x1 - sin * x2,   y2 = sin * x1 + cos * x2.
// With position_ids (batch, seq) the caches are (max_position, dim/2) tables indexed by position;
// without, they are (batch, seq, dim/2). A position outside the table is clamped into it (ONNX
// leaves it undefined; kernels cannot fail). float16/bfloat16 compute in float32.

// begin nnvm/ops/transform/common.hpp
// Helpers the layout and indexing ops share: constant extents, value inputs read as integer
// lists, row-major index arithmetic, index wrapping and clamping, and the default schedule of an
// op whose outputs are all injective.


NNVM_BEGIN_NAMESPACE
namespace ops {
namespace transform_detail {

inline std::vector<ir::Expr> exprs(const std::vector<ir::Var>& v) { return {v.begin(), v.end()}; }

// The constant value of extent `e`; "nnvm.ops.input_shape" naming `what` when it is symbolic
// (ops whose index arithmetic or output shape needs the number).
inline int64_t const_extent(const ir::Expr& e, const std::string& what) {
  if (auto* c = ir::as_const_int(ir::simplify(e))) return *c;
  throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent, got ", ir::to_string(e)));
}

// "nnvm.ops.input_shape" unless `extent` (of output axis `axis`) is non-negative; an empty axis
// (extent 0) is a valid result, as in ONNX.
inline void check_output_extent(int64_t extent, size_t axis, const std::string& why) {
  if (extent < 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("output axis ", axis, " would have extent ", extent, " (", why, ")"));
}

// An output extent computed in floating point (Resize's floor(scale * n)): "nnvm.ops.too_large"
// when it is not finite or above max_tensor_bytes, which no tensor's extent can be, so a
// hostile scale cannot wrap the int64 conversion.
inline int64_t extent_from_double(double v, size_t axis, const std::string& why) {
  if (!(v <= double(max_tensor_bytes)))
    throw UserError("nnvm.ops.too_large",
                    str_cat("output axis ", axis, " would have extent ", v, " (", why, "), larger than 2^48"));
  return int64_t(v);
}

// "[2, -1, 3]", for messages.
inline std::string list_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

inline ir::Expr product(const std::vector<ir::Expr>& shape, size_t begin = 0, size_t end = SIZE_MAX) {
  ir::Expr p(int64_t(1));
  for (size_t d = begin; d < std::min(end, shape.size()); ++d) p = p * shape[d];
  return ir::simplify(p);
}

// Row-major flat offset of `idx` in `shape`, and its inverse.
inline ir::Expr ravel(const std::vector<ir::Expr>& idx, const std::vector<ir::Expr>& shape) {
  ir::Expr flat(int64_t(0));
  for (size_t d = 0; d < idx.size(); ++d) flat = flat * shape[d] + idx[d];
  return flat;
}
inline std::vector<ir::Expr> unravel(ir::Expr flat, const std::vector<ir::Expr>& shape) {
  std::vector<ir::Expr> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = d == 0 ? flat : flat % shape[d];
    if (d > 0) flat = flat / shape[d];
  }
  return idx;
}

// An index element read from a tensor, as int64, with a negative value counting from the end
// (ONNX's wrap for Gather and friends).
inline ir::Expr wrap_negative(const ir::Expr& i, const ir::Expr& n) {
  ir::Expr x = ir::cast(dtype::int64, i);
  return ir::select(x < 0, x + n, x);
}
// Kernels cannot fail, so an index that is out of range even after wrapping is clamped into
// [0, n - 1]: the read stays inside the tensor (ONNX leaves the result undefined).
inline ir::Expr wrap_clamp(const ir::Expr& i, const ir::Expr& n) {
  return ir::min(ir::max(wrap_negative(i, n), ir::Expr(int64_t(0))), n - int64_t(1));
}

// "nnvm.ops.index_range" unless every value of the constant index tensor `idx` (int32 or int64)
// lies in [-n, n), where n = extents[flat position % extents.size()] (one extent for Gather, one
// per coordinate of GatherND's last axis). A negative extent is symbolic: not checked. ONNX calls
// an index out of range an error; a kernel cannot report one, so only constants are caught.
inline void check_index_values(const NDArray& idx, const std::vector<int64_t>& extents, const char* input,
                               const std::string& what) {
  if (extents.empty() || (idx.dtype() != dtype::int32 && idx.dtype() != dtype::int64)) return;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t v = idx.dtype() == dtype::int64 ? idx.data<int64_t>()[i] : idx.data<int32_t>()[i];
    int64_t n = extents[size_t(i) % extents.size()];
    if (n >= 0 && (v < -n || v >= n))
      throw UserError("nnvm.ops.index_range",
                      str_cat(input, " holds ", v, " at flat position ", i, ", outside [", -n, ", ", n, ") for ",
                              what, " (extent ", n, ")"),
                      {str_cat("input ", input)});
  }
}

// "nnvm.ops.empty_axis" when `extent` is the constant 0 but the op reads from it (`reads`: the
// output is not empty): every index is out of range, and clamping has no element to clamp to.
inline void check_readable_axis(const ir::Expr& extent, const std::vector<ir::Expr>& out_shape, const std::string& what) {
  if (!ir::is_const_int(ir::simplify(extent), 0)) return;
  for (auto& e : out_shape)
    if (auto* c = ir::as_const_int(ir::simplify(e)); !c || *c == 0) return;
  throw UserError("nnvm.ops.empty_axis", str_cat(what, " has extent 0, so no index into it is valid"), {"input data"});
}

// The constant extents of `t`'s axes (-1 for a symbolic one).
inline int64_t extent_or_unknown(const TensorType& t, size_t axis) {
  auto* c = axis < t.shape.size() ? ir::as_const_int(ir::simplify(t.shape[axis])) : nullptr;
  return c ? *c : -1;
}

// "nnvm.ops.input_dtype" unless `t` holds int32 or int64 (ONNX's index types).
inline void check_index_dtype(const te::Tensor& t, const char* input) {
  if (t.dtype() != dtype::int32 && t.dtype() != dtype::int64)
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected int32 or int64"),
                    {"input " + std::string(input)});
}

// Axis values from a value input or attribute, normalized to [0, rank) and checked for repeats.
inline std::vector<size_t> normalize_axes(const std::vector<int64_t>& axes, size_t rank, const char* what) {
  std::vector<size_t> out;
  for (int64_t a : axes) {
    size_t n = normalize_axis(a, rank, what);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw UserError("nnvm.ops.attr", str_cat(what, " names axis ", a, " more than once"),
                      {str_cat("attribute ", what)});
    out.push_back(n);
  }
  return out;
}

// True when optional input `i` was given (left out at the end, or undefined in the middle).
inline bool given(const std::vector<te::Tensor>& in, size_t i) { return i < in.size() && in[i].defined(); }

}  // namespace transform_detail
}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/common.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

struct RotarySpec {
  bool interleaved = false;
  int64_t rotary_dim = 0;  // 0: head_size
  int64_t num_heads = 0;   // required for 3-D X
};

// `position_ids` may be undefined (absent).
inline te::Tensor rotary_embedding(const te::Tensor& x, const te::Tensor& cos_cache, const te::Tensor& sin_cache,
                                   const te::Tensor& position_ids, const RotarySpec& spec,
                                   std::string name = "rotary_embedding") {
  using transform_detail::const_extent;
  check_rank(x, "X", 3, 4);
  check_norm_float(x, "X");
  check_same_dtype(x, "X", cos_cache, "cos_cache");
  check_same_dtype(x, "X", sin_cache, "sin_cache");
  bool three_d = x.rank() == 3;
  int64_t last = const_extent(x.shape().back(), "the last axis of input X");
  int64_t head = last;
  if (three_d) {
    if (spec.num_heads <= 0 || last % spec.num_heads != 0)
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute 'num_heads' is ", spec.num_heads, " but a 3-D X needs a positive divisor of its hidden size ", last),
                      {"attribute num_heads"});
    head = last / spec.num_heads;
  }
  int64_t rot = spec.rotary_dim == 0 ? head : spec.rotary_dim;
  if (rot <= 0 || rot > head || rot % 2 != 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'rotary_embedding_dim' is ", spec.rotary_dim, " but must be even and at most the head size ", head),
                    {"attribute rotary_embedding_dim"});
  int64_t half = rot / 2;
  ir::Expr batch = x.shape()[0], seq = x.shape()[three_d ? 1 : 2];
  bool by_position = position_ids.defined();
  if (by_position) {
    if (position_ids.dtype() != dtype::int64)
      throw UserError("nnvm.ops.input_dtype",
                      str_cat("input position_ids (tensor ", position_ids.name(), ") is ", position_ids.dtype(), ", expected int64"),
                      {"input position_ids"});
    check_rank(position_ids, "position_ids", 2);
    check_same_extent(position_ids.shape()[0], batch, "the batch extents of position_ids and X");
    check_same_extent(position_ids.shape()[1], seq, "the sequence extents of position_ids and X");
  }
  for (auto [c, input] : {std::pair{cos_cache, "cos_cache"}, std::pair{sin_cache, "sin_cache"}}) {
    check_rank(c, input, by_position ? 2 : 3);
    if (!by_position) {
      check_same_extent(c.shape()[0], batch, str_cat("the batch extents of ", input, " and X"));
      check_same_extent(c.shape()[1], seq, str_cat("the sequence extents of ", input, " and X"));
    }
    if (const_extent(c.shape().back(), str_cat("the last axis of input ", input)) != half)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("the last axis of input ", input, " has extent ", ir::to_string(c.shape().back()),
                              ", expected rotary_embedding_dim / 2 = ", half),
                      {str_cat("input ", input)});
  }
  DataType t = x.dtype(), ct = norm_compute_type(t);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr k = v.back();
        ir::Expr j = three_d ? k % head : k;   // index within the head
        ir::Expr base = k - j;                 // the head's first element on X's last axis
        ir::Expr s = v[three_d ? 1 : 2];
        // Which half of its pair j is, the pair's other element and the cache column; indices are
        // clamped so the unused ones (j >= rot) stay in bounds too.
        ir::Expr first = spec.interleaved ? j % int64_t(2) == int64_t(0) : j < half;
        ir::Expr other = spec.interleaved ? ir::select(first, j + int64_t(1), j - int64_t(1))
                                          : ir::select(first, j + half, j - half);
        ir::Expr col = spec.interleaved ? j / int64_t(2) : ir::select(first, j, j - half);
        other = ir::min(other, ir::Expr(head - 1));
        col = ir::min(col, ir::Expr(half - 1));
        std::vector<ir::Expr> at;
        if (by_position) {
          ir::Expr pos = position_ids({v[0], s});
          ir::Expr n = cos_cache.shape()[0];
          at = {ir::min(ir::max(pos, ir::Expr(int64_t(0))), n - int64_t(1)), col};
        } else {
          at = {v[0], s, col};
        }
        ir::Expr c = ir::cast(ct, cos_cache(at)), sn = ir::cast(ct, sin_cache(at));
        ir::Expr xj = ir::cast(ct, x(idx));
        std::vector<ir::Expr> oi = idx;
        oi.back() = base + other;
        ir::Expr xo = ir::cast(ct, x(oi));
        ir::Expr rotated = ir::select(first, c * xj - sn * xo, sn * xo + c * xj);
        return ir::cast(t, ir::select(j < rot, rotated, xj));
      },
      std::move(name));
}

inline OpDef rotary_embedding_def() {
  return OpDef{
      .name = "rotary_embedding",
      .importer_names = {"onnx:RotaryEmbedding"},
      .input_names = {"X", "cos_cache", "sin_cache", "position_ids"},
      .optional_inputs = 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            RotarySpec spec;
            spec.interleaved = attrs.get_int("interleaved", 0) != 0;
            spec.rotary_dim = attrs.get_int("rotary_embedding_dim", 0);
            spec.num_heads = attrs.get_int("num_heads", 0);
            te::Tensor pos = in.size() > 3 ? in[3] : te::Tensor();
            return std::vector<te::Tensor>{rotary_embedding(in[0], in[1], in[2], pos, spec)};
          },
      .doc = "X's heads rotated pairwise by the angles of cos_cache/sin_cache (by position_ids when given)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/rotary_embedding.hpp
// begin nnvm/ops/nn/softmax_cross_entropy_loss.hpp
// softmax_cross_entropy_loss: ONNX SoftmaxCrossEntropyLoss (opset 13). scores [N, C] or
// [N, C, d1..dk] become log_prob = log_softmax(scores) over the class axis 1, and the loss is
// negative_log_likelihood_loss(log_prob, labels, weights) with the same reduction and
// ignore_index (out-of-range labels clamped, see nll_loss.hpp). Both outputs are always
// returned: output, and log_prob (ONNX's optional second output, shaped like scores).

// begin nnvm/ops/reduce/log_softmax.hpp
// log_softmax along one axis: Y = X - max(X) - log(sum(exp(X - max(X)))). ONNX LogSoftmax with
// the opset-13 meaning (one axis, default -1).

// begin nnvm/ops/reduce/reduce_common.hpp
// What the reductions and the ops built on them share: ONNX's axes / keepdims rules, the index
// plumbing between an input and its reduced output, dtype checks, and the stage lookup their
// default schedules use.

#include <cmath>
#include <functional>
#include <unordered_set>


NNVM_BEGIN_NAMESPACE
namespace ops {

// An ONNX flag attribute (keepdims, exclusive, largest, ...): 0 or 1; "nnvm.ops.attr" otherwise.
inline bool flag_attr(const Attrs& attrs, const char* name, bool fallback) {
  int64_t v = attrs.get_int(name, fallback ? 1 : 0);
  if (v != 0 && v != 1)
    throw UserError("nnvm.ops.attr", str_cat("attribute '", name, "' is ", v, " but must be 0 or 1"),
                    {"attribute " + std::string(name)});
  return v == 1;
}

// The dimensions an ONNX Reduce* op folds, one flag per input dimension. The "axes" value input
// (an attribute here) absent or empty means every dimension, or none when noop_with_empty_axes
// is 1. Negative axes count from the back; an axis out of range or listed twice is
// "nnvm.ops.attr".
inline std::vector<bool> reduce_axes_mask(size_t rank, const Attrs& attrs) {
  std::vector<int64_t> axes = attrs.get_ints("axes", {});
  bool noop = flag_attr(attrs, "noop_with_empty_axes", false);
  std::vector<bool> mask(rank, axes.empty() && !noop);
  for (int64_t a : axes) {
    size_t d = normalize_axis(a, rank, "axes");
    if (mask[d])
      throw UserError("nnvm.ops.attr", str_cat("attribute 'axes' lists dimension ", d, " twice"), {"attribute axes"});
    mask[d] = true;
  }
  return mask;
}

// The extents after reducing `shape` over `mask`: reduced dimensions become 1 (keepdims) or go.
inline std::vector<ir::Expr> reduced_shape(const std::vector<ir::Expr>& shape, const std::vector<bool>& mask,
                                           bool keepdims) {
  std::vector<ir::Expr> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!mask[d])
      out.push_back(shape[d]);
    else if (keepdims)
      out.emplace_back(int64_t(1));
  }
  return out;
}

// The input index that output index `out` (of reduced_shape) reads, with the reduced dimensions
// at `r` (one expression per reduced dimension, in dimension order).
inline std::vector<ir::Expr> unreduced_index(const std::vector<ir::Var>& out, const std::vector<bool>& mask,
                                             bool keepdims, const std::vector<ir::Expr>& r) {
  std::vector<ir::Expr> idx;
  size_t o = 0, k = 0;
  for (size_t d = 0; d < mask.size(); ++d) {
    if (mask[d]) {
      idx.push_back(r.at(k++));
      if (keepdims) ++o;
    } else {
      idx.emplace_back(out.at(o++));
    }
  }
  return idx;
}

// The index into a keepdims reduction of one dimension `axis` for input index `in`.
inline std::vector<ir::Expr> row_index(const std::vector<ir::Var>& in, size_t axis) {
  std::vector<ir::Expr> idx(in.begin(), in.end());
  idx[axis] = ir::Expr(int64_t(0));
  return idx;
}

inline std::vector<ir::Expr> as_index(const std::vector<ir::Var>& v) { return {v.begin(), v.end()}; }

// The type arithmetic on elements of type `t` runs in: float16 and bfloat16 are storage types and
// compute in float32; bool (only min/max take it) compares as uint8.
inline DataType compute_dtype(DataType t) {
  if (t.is_storage_only()) return dtype::float32;
  if (t.is_bool()) return dtype::uint8;
  return t;
}
// Element `idx` of `x`, in its compute_dtype.
inline ir::Expr load_compute(const te::Tensor& x, std::vector<ir::Expr> idx) {
  return ir::cast(compute_dtype(x.dtype()), x(std::move(idx)));
}

// Which element types an op takes; floats (float16/bfloat16 too) always.
struct DtypeRule {
  bool ints = false;  // integers of at least `int_bits` bits, signed or unsigned
  int int_bits = 32;
  bool bools = false;
};
// "nnvm.ops.input_dtype" unless `x`'s element type is one `rule` allows.
inline void check_reduce_dtype(const te::Tensor& x, const char* input, DtypeRule rule) {
  DataType t = x.dtype();
  bool ok = t.is_scalar() &&
            (t.is_float() || (rule.bools && t.is_bool()) || (rule.ints && t.is_integer() && t.bits >= rule.int_bits));
  if (!ok) {
    std::string want = !rule.ints          ? "a float"
                       : rule.int_bits > 8 ? str_cat("a float or an integer of at least ", rule.int_bits, " bits")
                                           : "a number";
    if (rule.bools) want += " or bool";
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input ", input, " (tensor ", x.name(), ") is ", t, ", expected ", want),
                    {"input " + std::string(input)});
  }
}

// +inf / -inf in a float type, else the type's largest / smallest value: where max and min start,
// so that an input holding -inf still has -inf as its maximum.
inline ir::Expr highest_value(DataType t) { return t.is_float() ? ir::make_const(t, INFINITY) : ir::max_value(t); }
inline ir::Expr lowest_value(DataType t) { return t.is_float() ? ir::make_const(t, -INFINITY) : ir::min_value(t); }

// A reduction stage scheduled by schedule_reduction, anything else by schedule_injective.
inline void schedule_stage(schedule::Schedule& s, const te::Tensor& t, const Target& target) {
  if (t.op().reduce_axes.empty())
    schedule_injective(s[t], target);
  else
    schedule_reduction(s[t], target);
}

// The compute stage named `name` that `t`'s compute reads; how a default schedule finds the
// intermediate stages its op's compute made without touching the stages of an enclosing
// computation that feed the op.
inline te::Tensor stage_read_by(const te::Tensor& t, const std::string& name) {
  for (auto& in : t.op().inputs)
    if (in->name == name && in->op->kind == te::OpKind::compute) return te::Tensor(in);
  throw InternalError("nnvm.ops.schedule", str_cat("stage ", t.name(), " reads no stage named ", name));
}

// Schedules `outputs` and the intermediate stages the op made for them (schedule_stage each, the
// intermediates computed at root). By the convention of this family an intermediate is named
// after the output it feeds, "<output>_<what>", so the walk stops at the op's inputs.
inline void schedule_op_stages(schedule::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  std::unordered_set<const ir::ProducerNode*> done;
  std::function<void(const te::Tensor&, const std::string&)> visit = [&](const te::Tensor& t,
                                                                         const std::string& prefix) {
    if (!done.insert(t.get()).second) return;
    schedule_stage(s, t, target);
    for (auto& in : t.op().inputs)
      if (in->op->kind == te::OpKind::compute && in->name.rfind(prefix, 0) == 0) visit(te::Tensor(in), prefix);
  };
  for (auto& o : outputs) visit(o, o.name() + "_");
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/reduce_common.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

// Three stages: the maximum and the sum of exponentials keep the axis with extent 1. Subtracting
// the maximum keeps exp from overflowing, and the log of a sum of at least exp(0) = 1 never
// underflows to log(0).
inline te::Tensor log_softmax(const te::Tensor& x, int64_t axis = -1, std::string name = "log_softmax") {
  check_rank(x, "input", 1, 8);
  check_float(x, "input");
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<ir::Expr> kept = x.shape();
  kept[a] = ir::Expr(int64_t(1));
  auto along = [a](const std::vector<ir::Var>& v, const ir::IterVar& k) {
    std::vector<ir::Expr> idx = as_index(v);
    idx[a] = k.var();
    return idx;
  };
  auto k1 = te::reduce_axis(x.shape()[a], "r");
  te::Tensor mx = te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) { return te::max_reduce(x(along(v, k1)), {k1}, lowest_value(x.dtype())); },
      name + "_max");
  auto k2 = te::reduce_axis(x.shape()[a], "s");
  te::Tensor sm = te::compute(
      kept,
      [&](const std::vector<ir::Var>& v) {
        return te::sum(ir::call(ir::CallOp::exp, x(along(v, k2)) - mx(as_index(v))), {k2});
      },
      name + "_sum");
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        auto row = row_index(v, a);
        return x(as_index(v)) - mx(row) - ir::call(ir::CallOp::log, sm(row));
      },
      std::move(name));
}

inline OpDef log_softmax_def() {
  return OpDef{
      .name = "log_softmax",
      .importer_names = {"onnx:LogSoftmax"},
      .input_names = {"input"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{log_softmax(in[0], attrs.get_int("axis", -1))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = "X - log(sum(exp(X))) along attribute axis (default -1), computed stably",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/log_softmax.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<te::Tensor> softmax_cross_entropy_loss(const te::Tensor& scores, const te::Tensor& labels,
                                                          const te::Tensor& weights, const std::string& reduction,
                                                          std::optional<int64_t> ignore_index) {
  check_rank(scores, "scores", 2, 8);
  check_float(scores, "scores");
  te::Tensor log_prob = log_softmax(scores, 1, "log_prob");
  te::Tensor loss = nll_loss(log_prob, labels, weights, reduction, ignore_index, "softmax_cross_entropy_loss",
                             "scores", "labels", "weights");
  return {loss, log_prob};
}

inline OpDef softmax_cross_entropy_loss_def() {
  return OpDef{
      .name = "softmax_cross_entropy_loss",
      .importer_names = {"onnx:SoftmaxCrossEntropyLoss"},
      .input_names = {"scores", "labels", "weights"},
      .optional_inputs = 1,
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            te::Tensor w = in.size() > 2 ? in[2] : te::Tensor();
            return softmax_cross_entropy_loss(in[0], in[1], w, loss_reduction(attrs), loss_ignore_index(attrs));
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_stages(s, out, t);
          },
      .doc = "negative_log_likelihood_loss of log_softmax(scores) over axis 1 (reduction none/sum/mean, "
             "ignore_index); outputs the loss and log_prob",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/softmax_cross_entropy_loss.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> nn_ops() {
  return {
      attention_def(),
      batch_norm_def(),
      dense_def(),
      einsum_def(),
      group_norm_def(),
      instance_norm_def(),
      layer_norm_def(),
      lp_normalization_def(),
      lrn_def(),
      matmul_def(),
      mean_variance_normalization_def(),
      negative_log_likelihood_loss_def(),
      rms_norm_def(),
      rotary_embedding_def(),
      softmax_cross_entropy_loss_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/nn/family.hpp
// begin nnvm/ops/quant/family.hpp
// Quantization ops: conversions between float tensors and integer tensors with a scale and zero
// point (ONNX QuantizeLinear / DequantizeLinear).
// One sorted list per family; builtin.hpp joins the families.

// begin nnvm/ops/quant/dequantize_linear.hpp
// dequantize_linear: ONNX DequantizeLinear (opset 25). Y = (X - x_zero_point) * x_scale, with the
// scale and zero point per tensor, per axis or per block (quant_params.hpp). X is int8, uint8,
// int16, uint16 or int32 and the zero point (default 0) has X's type. Y has the type of
// attribute output_dtype when given, else x_scale's; float16/bfloat16 are stored, the arithmetic
// runs in float32 (float64 when the scale or output is float64). float8/int4 inputs cannot reach
// the op: nnvm has no such tensor types, and the importer reports them unsupported.

// begin nnvm/ops/quant/quant_params.hpp
// How ONNX QuantizeLinear and DequantizeLinear lay out their scale and zero point over the
// tensor X they apply to: one value for all of X (a scalar or a 1-element tensor), one per index
// of X's `axis` (a 1-D tensor), or one per block of `block_size` consecutive indices along
// `axis` (a tensor of X's rank whose extent on `axis` is ceil(X's extent / block_size) and equal
// elsewhere; the last block may be short).


NNVM_BEGIN_NAMESPACE
namespace ops {

struct QuantLayout {
  int64_t axis_attr = 1;   // as given, for messages
  size_t axis = 0;         // normalized; X's rank when axis_attr lies outside it
  int64_t block_size = 0;  // 0: not blocked
};

namespace quant_detail {

inline bool one_element(const te::Tensor& p) {
  for (auto& e : p.shape())
    if (!ir::is_const_int(ir::simplify(e), 1)) return false;
  return true;
}

inline int64_t const_extent_of(const ir::Expr& e, const std::string& what) {
  if (auto* c = ir::as_const_int(ir::simplify(e))) return *c;
  throw UserError("nnvm.ops.input_shape", str_cat(what, " must be a constant extent, got ", ir::to_string(e)));
}

}  // namespace quant_detail

// Reads attributes axis (default 1) and block_size (default 0) for X; "nnvm.ops.attr" for a
// negative block_size. The axis is checked only where a layout needs it (check_quant_param): a
// per-tensor scale ignores it, so X may be a scalar or 1-D under the default axis 1.
inline QuantLayout quant_layout(const te::Tensor& x, const Attrs& attrs) {
  QuantLayout l;
  l.block_size = attrs.get_int("block_size", 0);
  if (l.block_size < 0)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'block_size' is ", l.block_size, " but must be >= 0"),
                    {"attribute block_size"});
  l.axis_attr = attrs.get_int("axis", 1);
  int64_t r = int64_t(x.rank());
  l.axis = l.axis_attr < -r || l.axis_attr >= r ? x.rank() : size_t(l.axis_attr < 0 ? l.axis_attr + r : l.axis_attr);
  return l;
}

// "nnvm.ops.input_shape" unless `p` (input `input`) fits one of the three layouts for X.
inline void check_quant_param(const te::Tensor& p, const char* input, const te::Tensor& x, const QuantLayout& l) {
  using quant_detail::const_extent_of;
  if (quant_detail::one_element(p) && p.rank() <= 1) return;
  auto bad = [&](const std::string& why) {
    throw UserError("nnvm.ops.input_shape", str_cat("input ", input, " (tensor ", p.name(), ") ", why),
                    {"input " + std::string(input)});
  };
  if (l.axis >= x.rank())
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'axis' is ", l.axis_attr, " but must lie in [", -int64_t(x.rank()),
                            ", ", x.rank(), ") for a per-axis or blocked ", input),
                    {"attribute axis"});
  if (l.block_size == 0) {
    if (p.rank() != 1 || !same_extent(p.shape()[0], x.shape()[l.axis]))
      bad(str_cat("must be a scalar or 1-D with the extent of X's axis ", l.axis, " (",
                  ir::to_string(x.shape()[l.axis]), "); give block_size for blocked quantization"));
    return;
  }
  if (p.rank() != x.rank()) bad(str_cat("has rank ", p.rank(), " but blocked quantization needs X's rank ", x.rank()));
  for (size_t d = 0; d < x.rank(); ++d) {
    if (d != l.axis) {
      if (!same_extent(p.shape()[d], x.shape()[d]))
        bad(str_cat("has extent ", ir::to_string(p.shape()[d]), " on axis ", d, " but X has ", ir::to_string(x.shape()[d])));
      continue;
    }
    int64_t n = const_extent_of(x.shape()[d], str_cat("axis ", d, " of input X"));
    int64_t blocks = (n + l.block_size - 1) / l.block_size;
    if (const_extent_of(p.shape()[d], str_cat("axis ", d, " of input ", input)) != blocks)
      bad(str_cat("has extent ", ir::to_string(p.shape()[d]), " on axis ", d, ", expected ceil(", n, " / block_size ",
                  l.block_size, ") = ", blocks));
  }
}

// The element of `p` (checked by check_quant_param) that applies to X at index `v`.
inline ir::Expr read_quant_param(const te::Tensor& p, const QuantLayout& l, const std::vector<ir::Var>& v) {
  if (quant_detail::one_element(p) && p.rank() <= 1)
    return p(std::vector<ir::Expr>(p.rank(), ir::Expr(int64_t(0))));
  if (l.block_size == 0) return p({ir::Expr(v[l.axis])});
  std::vector<ir::Expr> idx(v.begin(), v.end());
  idx[l.axis] = ir::Expr(v[l.axis]) / l.block_size;
  return p(idx);
}

// The integer types nnvm quantizes to and from: 8 and 16 bits (and int32 for DequantizeLinear).
inline bool quant_integer(DataType t, bool allow_int32) {
  return t == dtype::int8 || t == dtype::uint8 || t == dtype::int16 || t == dtype::uint16 ||
         (allow_int32 && t == dtype::int32);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/quant/quant_params.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

// `zero_point` may be undefined (absent).
inline te::Tensor dequantize_linear(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& zero_point,
                                    const QuantLayout& layout, std::optional<DataType> output_dtype = std::nullopt,
                                    std::string name = "dequantize_linear") {
  if (!quant_integer(x.dtype(), true))
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input x (tensor ", x.name(), ") is ", x.dtype(), ", expected int8, uint8, int16, uint16 or int32"),
                    {"input x"});
  DataType st = scale.dtype();
  if (!st.is_float() || !st.is_scalar())
    throw UserError("nnvm.ops.input_dtype", str_cat("input x_scale (tensor ", scale.name(), ") is ", st, ", expected a float type"),
                    {"input x_scale"});
  DataType out = output_dtype.value_or(st);
  if (!out.is_float())
    throw UserError("nnvm.ops.attr", str_cat("attribute 'output_dtype' is ", out, " but must be a float type"),
                    {"attribute output_dtype"});
  check_quant_param(scale, "x_scale", x, layout);
  if (zero_point.defined()) {
    check_same_dtype(x, "x", zero_point, "x_zero_point");
    check_quant_param(zero_point, "x_zero_point", x, layout);
  }
  DataType ct = st == dtype::float64 || out == dtype::float64 ? dtype::float64 : dtype::float32;
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr q = ir::cast(ct, x(std::vector<ir::Expr>(v.begin(), v.end())));
        if (zero_point.defined()) q = q - ir::cast(ct, read_quant_param(zero_point, layout, v));
        ir::Expr y = q * ir::cast(ct, read_quant_param(scale, layout, v));
        return out.is_storage_only() && ct != dtype::float32 ? ir::cast(out, ir::cast(dtype::float32, y)) : ir::cast(out, y);
      },
      std::move(name));
}

inline OpDef dequantize_linear_def() {
  return OpDef{
      .name = "dequantize_linear",
      .importer_names = {"onnx:DequantizeLinear"},
      .input_names = {"x", "x_scale", "x_zero_point"},
      .optional_inputs = 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::optional<DataType> out;
            if (attrs.has("output_dtype")) out = attrs.get_dtype("output_dtype");
            te::Tensor zp = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{dequantize_linear(in[0], in[1], zp, quant_layout(in[0], attrs), out)};
          },
      .doc = "(x - x_zero_point) * x_scale, per tensor, per axis or per block",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/quant/dequantize_linear.hpp
// begin nnvm/ops/quant/quantize_linear.hpp
// quantize_linear: ONNX QuantizeLinear (opset 25). Y = saturate(round(X / y_scale) + y_zero_point),
// rounding half to even and saturating to the range of Y's integer type, with the scale and zero
// point per tensor, per axis or per block (quant_params.hpp). Y's type is the zero point's, else
// attribute output_dtype, else uint8; nnvm quantizes to int8, uint8, int16 and uint16. float8 and
// int4/int2 outputs are reported unsupported (nnvm has no such types), so attribute `saturate`,
// which only concerns float8, is accepted and has no effect. The division runs in attribute
// precision's type when given, else in float32 (float64 when X or the scale is float64).
// A NaN element quantizes to the lowest value of Y's type, as the ONNX reference does.


NNVM_BEGIN_NAMESPACE
namespace ops {

struct QuantizeSpec {
  QuantLayout layout;
  std::optional<DataType> output_dtype;  // attribute output_dtype, when given
  std::optional<DataType> precision;     // attribute precision, when given
};

// `zero_point` may be undefined (absent).
inline te::Tensor quantize_linear(const te::Tensor& x, const te::Tensor& scale, const te::Tensor& zero_point,
                                  const QuantizeSpec& spec, std::string name = "quantize_linear") {
  for (auto [t, input] : {std::pair{x, "x"}, std::pair{scale, "y_scale"}})
    if (!t.dtype().is_float() || !t.dtype().is_scalar())
      throw UserError("nnvm.ops.input_dtype",
                      str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected a float type"),
                      {str_cat("input ", input)});
  DataType out = spec.output_dtype.value_or(dtype::uint8);
  if (zero_point.defined()) {
    if (spec.output_dtype && *spec.output_dtype != zero_point.dtype())
      throw UserError("nnvm.ops.attr",
                      str_cat("attribute 'output_dtype' is ", *spec.output_dtype, " but input y_zero_point is ",
                              zero_point.dtype(), "; they must agree"),
                      {"attribute output_dtype"});
    out = zero_point.dtype();
  }
  if (!quant_integer(out, false))
    throw UserError(zero_point.defined() ? "nnvm.ops.input_dtype" : "nnvm.ops.attr",
                    str_cat("quantizing to ", out, " is not supported; Y must be int8, uint8, int16 or uint16"),
                    {zero_point.defined() ? "input y_zero_point" : "attribute output_dtype"});
  DataType prec = spec.precision.value_or(x.dtype() == dtype::float64 || scale.dtype() == dtype::float64
                                              ? dtype::float64 : dtype::float32);
  if (!prec.is_float())
    throw UserError("nnvm.ops.attr", str_cat("attribute 'precision' is ", prec, " but must be a float type"),
                    {"attribute precision"});
  check_quant_param(scale, "y_scale", x, spec.layout);
  if (zero_point.defined()) check_quant_param(zero_point, "y_zero_point", x, spec.layout);
  // float16/bfloat16 precision: round the operands and the quotient to it, divide in float32.
  DataType ct = arith_type(prec);
  auto in_prec = [&](ir::Expr e) { return prec.is_storage_only() ? ir::cast(ct, ir::cast(prec, ir::cast(ct, e))) : ir::cast(ct, e); };
  ir::Expr lo = ir::min_value(out), hi = ir::max_value(out);
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr q = in_prec(in_prec(x(std::vector<ir::Expr>(v.begin(), v.end()))) /
                             in_prec(read_quant_param(scale, spec.layout, v)));
        q = ir::call(ir::CallOp::round, q);
        if (zero_point.defined()) q = q + ir::cast(ct, read_quant_param(zero_point, spec.layout, v));
        // Saturate in float (NaN to the lowest value first), so the cast to Y's type is in range.
        q = ir::select(ir::call(ir::CallOp::isnan, q), ir::cast(ct, lo), q);
        return ir::cast(out, ir::min(ir::max(q, ir::cast(ct, lo)), ir::cast(ct, hi)));
      },
      std::move(name));
}

inline OpDef quantize_linear_def() {
  return OpDef{
      .name = "quantize_linear",
      .importer_names = {"onnx:QuantizeLinear"},
      .input_names = {"x", "y_scale", "y_zero_point"},
      .optional_inputs = 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            QuantizeSpec spec;
            spec.layout = quant_layout(in[0], attrs);
            if (attrs.has("output_dtype")) spec.output_dtype = attrs.get_dtype("output_dtype");
            if (attrs.has("precision")) spec.precision = attrs.get_dtype("precision");
            attrs.get_int("saturate", 1);  // float8 only; checked for its kind
            te::Tensor zp = in.size() > 2 ? in[2] : te::Tensor();
            return std::vector<te::Tensor>{quantize_linear(in[0], in[1], zp, spec)};
          },
      .doc = "saturate(round_half_even(x / y_scale) + y_zero_point) to int8/uint8/int16/uint16",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/quant/quantize_linear.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> quant_ops() {
  return {
      dequantize_linear_def(),
      quantize_linear_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/quant/family.hpp
// begin nnvm/ops/reduce/family.hpp
// Reductions over axes, and ops built on them (softmax, argmax, cumulative sums, top-k).
// One sorted list per family; builtin.hpp joins the families.

// begin nnvm/ops/reduce/arg_reduce.hpp
// argmax / argmin along one axis: the int64 index of the largest / smallest element. ONNX ArgMax
// and ArgMin (opset 13): attributes axis (default 0), keepdims (default 1), select_last_index
// (default 0: the first of equal extremes).


NNVM_BEGIN_NAMESPACE
namespace ops {

// Two reductions: the extreme value ("<name>_best"), then the first (or last) index holding it.
// The index search starts from the last (or first) index, so even when no element equals the
// extreme (NaN inputs) the result is a valid index.
inline te::Tensor arg_reduce(const te::Tensor& x, bool is_max, int64_t axis, bool keepdims, bool select_last,
                             std::string name) {
  check_rank(x, "data", 1, 8);
  check_reduce_dtype(x, "data", {.ints = true, .int_bits = 8});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<bool> mask(x.rank(), false);
  mask[a] = true;
  DataType ct = compute_dtype(x.dtype());
  std::vector<ir::Expr> shape = reduced_shape(x.shape(), mask, keepdims);
  ir::Expr n = x.shape()[a];
  auto r = te::reduce_axis(n, "r");
  te::Tensor best = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        return ir::Reduce::make(is_max ? ir::Combiner::max : ir::Combiner::min,
                                load_compute(x, unreduced_index(v, mask, keepdims, {r.var()})), {r},
                                is_max ? lowest_value(ct) : highest_value(ct));
      },
      name + "_best");
  auto s = te::reduce_axis(n, "s");
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr hit = load_compute(x, unreduced_index(v, mask, keepdims, {s.var()})) == best(as_index(v));
        ir::Expr k = s.var();
        return select_last ? ir::Reduce::make(ir::Combiner::max, k, {s}, ir::make_zero(dtype::index), hit)
                           : ir::Reduce::make(ir::Combiner::min, k, {s}, ir::simplify(n - int64_t(1)), hit);
      },
      std::move(name));
}

namespace detail {
inline OpDef arg_reduce_def(std::string name, std::string importer_name, bool is_max, std::string doc) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"data"},
      .pattern = OpPattern::reduction,
      .compute =
          [op, is_max](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{arg_reduce(in[0], is_max, attrs.get_int("axis", 0),
                                                      flag_attr(attrs, "keepdims", true),
                                                      flag_attr(attrs, "select_last_index", false), op)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = std::move(doc),
  };
}
}  // namespace detail

inline OpDef argmax_def() {
  return detail::arg_reduce_def("argmax", "onnx:ArgMax", true, "int64 index of the largest element along axis");
}
inline OpDef argmin_def() {
  return detail::arg_reduce_def("argmin", "onnx:ArgMin", false, "int64 index of the smallest element along axis");
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/arg_reduce.hpp
// begin nnvm/ops/reduce/cumulative.hpp
// cumsum / cumprod along one axis: ONNX CumSum (opset 14) and CumProd (opset 26). The axis is the
// value input "axis" (a scalar); attributes exclusive (default 0: element i is included in
// output i) and reverse (default 0: accumulate from the front).
//
// Cost: each output element is its own reduction over the whole axis, guarded to the elements
// before (or after) it, so a row of n elements costs O(n^2). Correct first; a scan primitive
// would make it O(n).


NNVM_BEGIN_NAMESPACE
namespace ops {

// Arithmetic runs in compute_dtype(x); float16/bfloat16 get a cast back ("<name>_acc" -> name).
inline te::Tensor cumulative(const te::Tensor& x, ir::Combiner combiner, int64_t axis, bool exclusive, bool reverse,
                             std::string name) {
  check_rank(x, "x", 1, 8);
  check_reduce_dtype(x, "x", {.ints = true});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  DataType t = x.dtype(), ct = compute_dtype(t);
  auto r = te::reduce_axis(x.shape()[a], "r");
  bool cast_back = ct != t;
  te::Tensor acc = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx = as_index(v);
        idx[a] = r.var();
        ir::Expr k = r.var(), i = v[a];
        ir::Expr take = reverse ? (exclusive ? k > i : k >= i) : (exclusive ? k < i : k <= i);
        return ir::Reduce::make(combiner, load_compute(x, idx), {r}, ir::Expr(), take);
      },
      cast_back ? name + "_acc" : name);
  if (!cast_back) return acc;
  return te::compute(
      x.shape(), [&](const std::vector<ir::Var>& v) { return ir::cast(t, acc(as_index(v))); }, std::move(name));
}

namespace detail {
inline OpDef cumulative_def(std::string name, std::string importer_name, ir::Combiner combiner, std::string doc) {
  std::string op = name;
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"x", "axis"},
      .value_inputs = {"axis"},
      .pattern = OpPattern::reduction,
      .compute =
          [op, combiner](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const std::vector<int64_t>& axis = attrs.get_ints("axis");
            if (axis.size() != 1)
              throw UserError("nnvm.ops.attr", str_cat("input axis holds ", axis.size(), " values, expected one"),
                              {"input axis"});
            return std::vector<te::Tensor>{cumulative(in[0], combiner, axis[0], flag_attr(attrs, "exclusive", false),
                                                      flag_attr(attrs, "reverse", false), op)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = std::move(doc),
  };
}
}  // namespace detail

inline OpDef cumprod_def() {
  return detail::cumulative_def("cumprod", "onnx:CumProd", ir::Combiner::prod,
                                "running product along input axis (exclusive, reverse); O(n^2) per row");
}
inline OpDef cumsum_def() {
  return detail::cumulative_def("cumsum", "onnx:CumSum", ir::Combiner::sum,
                                "running sum along input axis (exclusive, reverse); O(n^2) per row");
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/cumulative.hpp
// begin nnvm/ops/reduce/hardmax.hpp
// hardmax along one axis: 1 where the first maximum of each row along `axis` is, 0 elsewhere.
// ONNX Hardmax with the opset-13 meaning (one axis, default -1).


NNVM_BEGIN_NAMESPACE
namespace ops {

// The first index of the maximum (arg_reduce, kept dimension), then a one-hot comparison.
inline te::Tensor hardmax(const te::Tensor& x, int64_t axis = -1, std::string name = "hardmax") {
  check_rank(x, "input", 1, 8);
  check_reduce_dtype(x, "input", {});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  te::Tensor index =
      arg_reduce(x, /*is_max=*/true, int64_t(a), /*keepdims=*/true, /*select_last=*/false, name + "_index");
  DataType t = x.dtype();
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr one = index(row_index(v, a)) == ir::Expr(v[a]);
        return ir::cast(t, ir::select(one, ir::make_const(dtype::float32, 1), ir::make_const(dtype::float32, 0)));
      },
      std::move(name));
}

inline OpDef hardmax_def() {
  return OpDef{
      .name = "hardmax",
      .importer_names = {"onnx:Hardmax"},
      .input_names = {"input"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{hardmax(in[0], attrs.get_int("axis", -1))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = "one-hot of the first maximum along attribute axis (default -1)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/hardmax.hpp
// begin nnvm/ops/reduce/reduce.hpp
// The ONNX Reduce* ops (ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1,
// ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp) at their newest versions: the axes
// are the optional value input "axes"; attributes keepdims (default 1) and noop_with_empty_axes
// (default 0). They differ only in a per-element map, a combiner and a map of the result, so one
// generator makes their definitions.
//
// Reducing over no axes (noop_with_empty_axes with empty axes, or a rank-0 input) still applies
// the maps, as ONNX's reference does: ReduceSumSquare gives X², ReduceL1 |X|, ReduceLogSum log(X).
// Zero-size inputs cannot be expressed (tensor extents are positive), so ONNX's empty-set results
// (ReduceMax of nothing = -inf, ReduceSum = 0) never arise here.


NNVM_BEGIN_NAMESPACE
namespace ops {

struct ReduceRule {
  ir::Combiner combiner;
  DtypeRule dtypes;
  // Applied to each element before combining; null: the element itself.
  std::function<ir::Expr(const ir::Expr&)> pre;
  // Applied to the combined value; `count` is how many elements were combined (index type).
  // Null: the combined value itself.
  std::function<ir::Expr(const ir::Expr& acc, const ir::Expr& count)> post;
};

// Reduces `x` over the dimensions flagged in `mask` by `rule`. Arithmetic runs in
// compute_dtype(x) and the result is cast back to x's type. One reduction stage, plus an
// elementwise stage "<name>_red" -> name when there is a post map or a cast back.
inline te::Tensor reduce_over(const te::Tensor& x, const std::vector<bool>& mask, bool keepdims, const ReduceRule& rule,
                              std::string name) {
  DataType t = x.dtype(), ct = compute_dtype(t);
  std::vector<ir::Expr> shape = reduced_shape(x.shape(), mask, keepdims);
  std::vector<ir::IterVar> axes;
  std::vector<ir::Expr> rvars;
  ir::Expr count(int64_t(1));
  for (size_t d = 0; d < mask.size(); ++d) {
    if (!mask[d]) continue;
    axes.push_back(te::reduce_axis(x.shape()[d], str_cat("r", d)));
    rvars.emplace_back(axes.back().var());
    count = ir::simplify(count * x.shape()[d]);
  }
  auto element = [&](std::vector<ir::Expr> idx) {
    ir::Expr e = load_compute(x, std::move(idx));
    return rule.pre ? rule.pre(e) : e;
  };
  auto finish = [&](const ir::Expr& acc) { return ir::cast(t, rule.post ? rule.post(acc, count) : acc); };
  if (axes.empty())
    return te::compute(
        shape, [&](const std::vector<ir::Var>& v) { return finish(element(as_index(v))); }, std::move(name));
  ir::Expr init;
  if (rule.combiner == ir::Combiner::max) init = lowest_value(ct);
  if (rule.combiner == ir::Combiner::min) init = highest_value(ct);
  bool direct = !rule.post && ct == t;
  te::Tensor red = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        return ir::Reduce::make(rule.combiner, element(unreduced_index(v, mask, keepdims, rvars)), axes, init);
      },
      direct ? name : name + "_red");
  if (direct) return red;
  return te::compute(
      shape, [&](const std::vector<ir::Var>& v) { return finish(red(as_index(v))); }, std::move(name));
}

// log(sum(exp(X))) over `mask`, as m + log(sum(exp(X - m))) with m the maximum, so exp cannot
// overflow. An infinite maximum is not subtracted (m = 0 then): all -inf gives -inf, any +inf
// gives +inf. Three stages: "<name>_max", "<name>_sum", name.
inline te::Tensor reduce_log_sum_exp(const te::Tensor& x, const std::vector<bool>& mask, bool keepdims,
                                     std::string name = "reduce_log_sum_exp") {
  check_reduce_dtype(x, "data", {});
  DataType t = x.dtype(), ct = compute_dtype(t);
  if (std::find(mask.begin(), mask.end(), true) == mask.end())  // the log-sum-exp of one element is itself
    return te::compute(
        x.shape(), [&](const std::vector<ir::Var>& v) { return x(as_index(v)); }, std::move(name));
  std::vector<ir::Expr> shape = reduced_shape(x.shape(), mask, keepdims);
  auto axes_for = [&](const char* prefix) {
    std::vector<ir::IterVar> axes;
    std::vector<ir::Expr> vars;
    for (size_t d = 0; d < mask.size(); ++d)
      if (mask[d]) {
        axes.push_back(te::reduce_axis(x.shape()[d], str_cat(prefix, d)));
        vars.emplace_back(axes.back().var());
      }
    return std::pair{axes, vars};
  };
  auto [max_axes, max_vars] = axes_for("r");
  te::Tensor mx = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        return te::max_reduce(load_compute(x, unreduced_index(v, mask, keepdims, max_vars)), max_axes,
                              lowest_value(ct));
      },
      name + "_max");
  auto shift = [&](const std::vector<ir::Var>& v) {
    ir::Expr m = mx(as_index(v));
    return ir::select(ir::call(ir::CallOp::isinf, m), ir::make_zero(ct), m);
  };
  auto [sum_axes, sum_vars] = axes_for("s");
  te::Tensor sm = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = load_compute(x, unreduced_index(v, mask, keepdims, sum_vars));
        return te::sum(ir::call(ir::CallOp::exp, e - shift(v)), sum_axes);
      },
      name + "_sum");
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) { return ir::cast(t, ir::call(ir::CallOp::log, sm(as_index(v))) + shift(v)); },
      std::move(name));
}

namespace detail {
using ReduceFn = std::function<te::Tensor(const te::Tensor& x, const std::vector<bool>& mask, bool keepdims)>;

inline OpDef reduce_def_from(std::string name, std::string importer_name, std::string doc, ReduceFn fn) {
  return OpDef{
      .name = std::move(name),
      .importer_names = {std::move(importer_name)},
      .input_names = {"data", "axes"},
      .optional_inputs = 1,
      .value_inputs = {"axes"},
      .pattern = OpPattern::reduction,
      .compute =
          [fn](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            check_rank(in[0], "data", 0, 8);
            bool keepdims = flag_attr(attrs, "keepdims", true);
            return std::vector<te::Tensor>{fn(in[0], reduce_axes_mask(in[0].rank(), attrs), keepdims)};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            schedule_op_stages(s, out, t);
          },
      .doc = std::move(doc),
  };
}

inline OpDef reduce_def(std::string name, std::string importer_name, std::string doc, ReduceRule rule) {
  std::string op = name;
  return reduce_def_from(std::move(name), std::move(importer_name), std::move(doc),
                         [op, rule](const te::Tensor& x, const std::vector<bool>& mask, bool keepdims) {
                           check_reduce_dtype(x, "data", rule.dtypes);
                           return reduce_over(x, mask, keepdims, rule, op);
                         });
}

inline ir::Expr square(const ir::Expr& e) { return e * e; }
inline ir::Expr magnitude(const ir::Expr& e) { return e.dtype().is_uint() ? e : ir::call(ir::CallOp::abs, e); }
constexpr DtypeRule arithmetic_types{.ints = true};
}  // namespace detail

inline OpDef reduce_l1_def() {
  return detail::reduce_def(
      "reduce_l1", "onnx:ReduceL1", "sum(|data|) over axes",
      {.combiner = ir::Combiner::sum, .dtypes = detail::arithmetic_types, .pre = detail::magnitude});
}
inline OpDef reduce_l2_def() {
  return detail::reduce_def(
      "reduce_l2", "onnx:ReduceL2", "sqrt(sum(data^2)) over axes",
      {.combiner = ir::Combiner::sum, .pre = detail::square, .post = [](const ir::Expr& acc, const ir::Expr&) {
         return ir::call(ir::CallOp::sqrt, acc);
       }});
}
inline OpDef reduce_log_sum_def() {
  return detail::reduce_def("reduce_log_sum", "onnx:ReduceLogSum", "log(sum(data)) over axes",
                            {.combiner = ir::Combiner::sum, .post = [](const ir::Expr& acc, const ir::Expr&) {
                               return ir::call(ir::CallOp::log, acc);
                             }});
}
inline OpDef reduce_log_sum_exp_def() {
  return detail::reduce_def_from("reduce_log_sum_exp", "onnx:ReduceLogSumExp",
                                 "log(sum(exp(data))) over axes, computed stably",
                                 [](const te::Tensor& x, const std::vector<bool>& mask, bool keepdims) {
                                   return reduce_log_sum_exp(x, mask, keepdims);
                                 });
}
inline OpDef reduce_max_def() {
  return detail::reduce_def("reduce_max", "onnx:ReduceMax", "max(data) over axes (any number type or bool)",
                            {.combiner = ir::Combiner::max, .dtypes = {.ints = true, .int_bits = 8, .bools = true}});
}
inline OpDef reduce_mean_def() {
  return detail::reduce_def(
      "reduce_mean", "onnx:ReduceMean", "sum(data) / count over axes (integers: the quotient truncated toward zero)",
      {.combiner = ir::Combiner::sum,
       .dtypes = detail::arithmetic_types,
       .post = [](const ir::Expr& acc, const ir::Expr& count) { return acc / ir::cast(acc.dtype(), count); }});
}
inline OpDef reduce_min_def() {
  return detail::reduce_def("reduce_min", "onnx:ReduceMin", "min(data) over axes (any number type or bool)",
                            {.combiner = ir::Combiner::min, .dtypes = {.ints = true, .int_bits = 8, .bools = true}});
}
inline OpDef reduce_prod_def() {
  return detail::reduce_def("reduce_prod", "onnx:ReduceProd", "product of data over axes",
                            {.combiner = ir::Combiner::prod, .dtypes = detail::arithmetic_types});
}
inline OpDef reduce_sum_def() {
  return detail::reduce_def("reduce_sum", "onnx:ReduceSum", "sum of data over axes",
                            {.combiner = ir::Combiner::sum, .dtypes = detail::arithmetic_types});
}
inline OpDef reduce_sum_square_def() {
  return detail::reduce_def("reduce_sum_square", "onnx:ReduceSumSquare", "sum(data^2) over axes",
                            {.combiner = ir::Combiner::sum, .dtypes = detail::arithmetic_types, .pre = detail::square});
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/reduce.hpp
// begin nnvm/ops/reduce/softmax.hpp
// softmax along one axis: Y = exp(X - max(X)) / sum(exp(X - max(X))). ONNX Softmax with the
// opset-13 meaning (normalize along `axis`, default -1); the importer rewrites opset < 13
// models (which flatten to 2-D at `axis`) before they reach this op.


NNVM_BEGIN_NAMESPACE
namespace ops {

// Four stages, as TOPI: the maximum and the sum keep the normalized axis with extent 1.
// Subtracting the maximum keeps exp from overflowing.
inline te::Tensor softmax(const te::Tensor& x, int64_t axis = -1, std::string name = "softmax") {
  check_rank(x, "X", 1, 8);
  check_float(x, "X");
  size_t a = normalize_axis(axis, x.rank(), "axis");
  std::vector<ir::Expr> kept = x.shape();
  kept[a] = ir::Expr(int64_t(1));
  auto at = [a](const std::vector<ir::Var>& v, ir::Expr e) {
    std::vector<ir::Expr> idx(v.begin(), v.end());
    idx[a] = std::move(e);
    return idx;
  };
  auto all = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>(v.begin(), v.end()); };
  auto k1 = te::reduce_axis(x.shape()[a], "k");
  te::Tensor mx = te::compute(kept, [&](auto& v) { return te::max_reduce(x(at(v, k1.var())), {k1}); }, name + "_max");
  te::Tensor ex = te::compute(
      x.shape(), [&](auto& v) { return ir::call(ir::CallOp::exp, x(all(v)) - mx(at(v, int64_t(0)))); }, name + "_exp");
  auto k2 = te::reduce_axis(x.shape()[a], "k");
  te::Tensor sm = te::compute(kept, [&](auto& v) { return te::sum(ex(at(v, k2.var())), {k2}); }, name + "_sum");
  return te::compute(x.shape(), [&](auto& v) { return ex(all(v)) / sm(at(v, int64_t(0))); }, std::move(name));
}

// Reductions parallel over their rows; the elementwise stages vectorized along the last axis.
inline void schedule_softmax(schedule::Schedule& s, const te::Tensor& y, const Target& target) {
  // The stages softmax() made, found from its output so no other op's stage is touched.
  te::Tensor ex(y.op().inputs.at(0)), sm(y.op().inputs.at(1)), mx(ex.op().inputs.at(1));
  schedule_reduction(s[mx], target);
  schedule_injective(s[ex], target);
  schedule_reduction(s[sm], target);
  schedule_injective(s[y], target);
}

inline OpDef softmax_def() {
  return OpDef{
      .name = "softmax",
      .importer_names = {"onnx:Softmax"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{softmax(in[0], attrs.get_int("axis", -1))};
          },
      .cpu_schedule = [](schedule::Schedule& s, const std::vector<te::Tensor>& out,
                             const Target& t) { schedule_softmax(s, out[0], t); },
      .doc = "exp(X) / sum(exp(X)) along attribute axis (default -1), computed stably",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/softmax.hpp
// begin nnvm/ops/reduce/top_k.hpp
// top_k along one axis: the K largest (or smallest) elements and their int64 indices, in order.
// ONNX TopK (opset 11): K is the value input "K" (one integer); attributes axis (default -1),
// largest (default 1), sorted (default 1). Equal values keep their input order (the lower index
// first), as ONNX says. The output is always sorted, which sorted = 0 allows.
//
// Cost: without a sort primitive each element's rank along the axis is counted (O(n^2) per row
// of n), then output position p finds the element of rank p (O(K n)).


NNVM_BEGIN_NAMESPACE
namespace ops {

// Returns {values, indices}. Stages: "<name>_rank" (how many elements come before each one),
// "<name>_indices" (the element of rank p; it starts from the last index, so ranks that NaN inputs
// leave unmatched still give a valid index), and name (the values, gathered at those indices).
inline std::vector<te::Tensor> top_k(const te::Tensor& x, int64_t k, int64_t axis = -1, bool largest = true,
                                     std::string name = "top_k") {
  check_rank(x, "X", 1, 8);
  check_reduce_dtype(x, "X", {.ints = true, .int_bits = 8});
  size_t a = normalize_axis(axis, x.rank(), "axis");
  ir::Expr n = x.shape()[a];
  const int64_t* known = ir::as_const_int(ir::simplify(n));
  if (k < 1 || (known && k > *known))
    throw UserError("nnvm.ops.attr",
                    str_cat("input K is ", k, " but must lie in [1, ",
                            known ? str_cat(*known) : std::string("axis extent"), "] (the extent of axis ", a, ")"),
                    {"input K"});
  auto at = [a](const std::vector<ir::Var>& v, ir::Expr e) {
    std::vector<ir::Expr> idx = as_index(v);
    idx[a] = std::move(e);
    return idx;
  };
  auto j = te::reduce_axis(n, "r");
  te::Tensor rank = te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr xi = load_compute(x, as_index(v)), xj = load_compute(x, at(v, j.var()));
        ir::Expr ahead = largest ? xj > xi : xj < xi;
        ir::Expr before = ahead || (xj == xi && ir::Expr(j.var()) < ir::Expr(v[a]));
        return ir::Reduce::make(ir::Combiner::sum, ir::make_const(dtype::index, 1), {j}, ir::Expr(), before);
      },
      name + "_rank");
  std::vector<ir::Expr> out_shape = x.shape();
  out_shape[a] = ir::Expr(k);
  auto i = te::reduce_axis(n, "s");
  te::Tensor indices = te::compute(
      out_shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr hit = rank(at(v, i.var())) == ir::Expr(v[a]);
        return ir::Reduce::make(ir::Combiner::min, i.var(), {i}, ir::simplify(n - int64_t(1)), hit);
      },
      name + "_indices");
  te::Tensor values = te::compute(
      out_shape, [&](const std::vector<ir::Var>& v) { return x(at(v, indices(as_index(v)))); }, std::move(name));
  return {values, indices};
}

// All three stages parallel over their rows and not vectorized: the values stage is a gather
// (its index differs per lane), the others are reductions.
inline void schedule_top_k(schedule::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  const te::Tensor& values = outs.at(0);
  const te::Tensor& indices = outs.at(1);
  schedule_reduction(s[values], target);
  schedule_reduction(s[indices], target);
  schedule_reduction(s[stage_read_by(indices, values.name() + "_rank")], target);
}

inline OpDef top_k_def() {
  return OpDef{
      .name = "top_k",
      .importer_names = {"onnx:TopK"},
      .input_names = {"X", "K"},
      .value_inputs = {"K"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            const std::vector<int64_t>& k = attrs.get_ints("K");
            if (k.size() != 1)
              throw UserError("nnvm.ops.attr", str_cat("input K holds ", k.size(), " values, expected one"),
                              {"input K"});
            flag_attr(attrs, "sorted", true);  // validated only: the output is always sorted
            return top_k(in[0], k[0], attrs.get_int("axis", -1), flag_attr(attrs, "largest", true));
          },
      .cpu_schedule = schedule_top_k,
      .doc = "the K largest (or smallest) elements along axis and their int64 indices, sorted; O(n^2) per row",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/top_k.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> reduce_ops() {
  return {
      argmax_def(),
      argmin_def(),
      cumprod_def(),
      cumsum_def(),
      hardmax_def(),
      log_softmax_def(),
      reduce_l1_def(),
      reduce_l2_def(),
      reduce_log_sum_def(),
      reduce_log_sum_exp_def(),
      reduce_max_def(),
      reduce_mean_def(),
      reduce_min_def(),
      reduce_prod_def(),
      reduce_sum_def(),
      reduce_sum_square_def(),
      softmax_def(),
      top_k_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/reduce/family.hpp
// begin nnvm/ops/transform/family.hpp
// Layout and indexing ops: reshape, transpose, slice, gather, concat, pad, casts and shape queries.
// One sorted list per family; builtin.hpp joins the families.

// begin nnvm/ops/transform/cast.hpp
// cast (ONNX Cast) and cast_like (ONNX CastLike): every element converted to another dtype.
// Float to integer truncates toward zero; a value outside the target's range is undefined (as in
// C; ONNX's saturate attribute only concerns float8 types, which nnvm lacks). Anything to bool
// is "!= 0"; bool to a number is 0 or 1. float16/bfloat16 convert through float32.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor cast(const te::Tensor& x, DataType to, std::string name = "cast") {
  DataType from = x.dtype();
  if (!from.is_scalar() || from.is_handle())
    throw UserError("nnvm.ops.input_dtype", str_cat("input input (tensor ", x.name(), ") is ", from, ", expected a scalar type"),
                    {"input input"});
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr e = x(transform_detail::exprs(v));
        // Storage types have no conversions of their own but to and from float32.
        if (from.is_storage_only() && to.is_storage_only() && from != to) e = ir::cast(dtype::float32, e);
        return ir::cast(to, e);
      },
      std::move(name));
}

inline OpDef cast_def() {
  return OpDef{
      .name = "cast",
      .importer_names = {"onnx:Cast"},
      .input_names = {"input"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{cast(in[0], attrs.get_dtype("to"))};
          },
      .doc = "input converted to the dtype of attribute to (a data type name, e.g. float32)",
  };
}

inline OpDef cast_like_def() {
  return OpDef{
      .name = "cast_like",
      .importer_names = {"onnx:CastLike"},
      .input_names = {"input", "target_type"},
      .pattern = OpPattern::elementwise,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) {
            return std::vector<te::Tensor>{cast(in[0], in[1].dtype(), "cast_like")};
          },
      .doc = "input converted to the dtype of input target_type (whose data is not read)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/cast.hpp
// begin nnvm/ops/transform/center_crop_pad.hpp
// center_crop_pad: ONNX CenterCropPad (opset 18). Each axis in attribute `axes` (default: all) is
// cropped or zero-padded to the extent in value input `shape`, keeping the center: a crop drops
// floor(diff / 2) elements at the start and the rest at the end; a pad adds floor(diff / 2) zeros
// at the start and the rest at the end. Any element type.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor center_crop_pad(const te::Tensor& x, const std::vector<int64_t>& shape, const std::vector<int64_t>& axes_in,
                                  std::string name = "center_crop_pad") {
  using namespace transform_detail;
  std::vector<int64_t> all;
  for (size_t d = 0; d < x.rank(); ++d) all.push_back(int64_t(d));
  std::vector<size_t> axes = normalize_axes(axes_in.empty() ? all : axes_in, x.rank(), "axes");
  if (shape.size() != axes.size())
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input shape has ", shape.size(), " elements, expected ", axes.size(), " (one per axis in axes)"),
                    {"input shape"});
  // Per axis: the offset added to an output index to get the input index (negative: padding).
  std::vector<int64_t> offset(x.rank(), 0), extent(x.rank(), 0);
  std::vector<bool> padded(x.rank(), false);
  std::vector<ir::Expr> out = x.shape();
  for (size_t i = 0; i < axes.size(); ++i) {
    size_t a = axes[i];
    if (shape[i] < 0)
      throw UserError("nnvm.ops.input_shape", str_cat("input shape asks extent ", shape[i], " for axis ", a), {"input shape"});
    int64_t n = const_extent(x.shape()[a], str_cat("axis ", a, " of input input_data"));
    extent[a] = n;
    out[a] = ir::Expr(shape[i]);
    if (shape[i] < n) offset[a] = (n - shape[i]) / 2;
    if (shape[i] > n) offset[a] = -((shape[i] - n) / 2), padded[a] = true;
  }
  return te::compute(
      out,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.end());
        ir::Expr inside;
        for (size_t d = 0; d < x.rank(); ++d) {
          if (offset[d] != 0) idx[d] = idx[d] + offset[d];
          if (!padded[d]) continue;
          ir::Expr in = idx[d] >= int64_t(0) && idx[d] < extent[d];
          inside = inside.defined() ? (inside && in) : in;
          idx[d] = ir::min(ir::max(idx[d], ir::Expr(int64_t(0))), ir::Expr(extent[d] - 1));
        }
        ir::Expr value = x(idx);
        return inside.defined() ? ir::select(inside, value, ir::make_zero(x.dtype())) : value;
      },
      std::move(name));
}

inline OpDef center_crop_pad_def() {
  return OpDef{
      .name = "center_crop_pad",
      .importer_names = {"onnx:CenterCropPad"},
      .input_names = {"input_data", "shape"},
      .value_inputs = {"shape"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{center_crop_pad(in[0], attrs.get_ints("shape"), attrs.get_ints("axes", {}))};
          },
      .doc = "input_data center-cropped or zero-padded to value input shape over attribute axes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/center_crop_pad.hpp
// begin nnvm/ops/transform/concat.hpp
// concat (ONNX Concat): inputs joined along `axis`. ONNX takes any number of inputs; this op
// takes 1 to 256 (inputs0 .. inputs255, all after the first optional): DenseNets join every
// earlier layer of a block (DenseNet-121: 25 inputs, DenseNet-264: 65).


NNVM_BEGIN_NAMESPACE
namespace ops {

inline constexpr size_t concat_max_inputs = 256;

// Each output element reads exactly one input: a chain of selects on the axis index, which
// only evaluates the chosen branch, so no read leaves its input.
inline te::Tensor concat(const std::vector<te::Tensor>& xs, int64_t axis, std::string name = "concat") {
  if (xs.empty()) throw UserError("nnvm.ops.input_shape", "concat needs at least one input");
  for (size_t k = 0; k < xs.size(); ++k)
    if (!xs[k].defined())
      throw UserError("nnvm.ops.input_shape", str_cat("input inputs", k, " is absent; concat takes no gaps"),
                      {str_cat("input inputs", k)});
  const te::Tensor& first = xs[0];
  if (first.rank() == 0)
    throw UserError("nnvm.ops.input_shape", "input inputs0 has rank 0; concat needs rank 1 or more", {"input inputs0"});
  size_t a = normalize_axis(axis, first.rank(), "axis");
  std::vector<ir::Expr> offsets{ir::Expr(int64_t(0))};
  for (size_t k = 0; k < xs.size(); ++k) {
    std::string in = str_cat("inputs", k);
    check_rank(xs[k], in.c_str(), first.rank());
    check_same_dtype(first, "inputs0", xs[k], in.c_str());
    for (size_t d = 0; d < first.rank(); ++d)
      if (d != a) check_same_extent(first.shape()[d], xs[k].shape()[d], str_cat("axis ", d, " of inputs0 and ", in));
    offsets.push_back(ir::simplify(offsets.back() + xs[k].shape()[a]));
  }
  std::vector<ir::Expr> shape = first.shape();
  shape[a] = offsets.back();
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        auto read = [&](size_t k) {
          std::vector<ir::Expr> idx = transform_detail::exprs(v);
          idx[a] = idx[a] - offsets[k];
          return xs[k](idx);
        };
        ir::Expr e = read(xs.size() - 1);
        for (size_t k = xs.size() - 1; k-- > 0;) e = ir::select(v[a] < offsets[k + 1], read(k), e);
        return e;
      },
      std::move(name));
}

inline OpDef concat_def() {
  std::vector<std::string> names;
  for (size_t k = 0; k < concat_max_inputs; ++k) names.push_back(str_cat("inputs", k));
  return OpDef{
      .name = "concat",
      .importer_names = {"onnx:Concat"},
      .input_names = std::move(names),
      .optional_inputs = concat_max_inputs - 1,
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{concat(in, attrs.get_int("axis"))};
          },
      .doc = "inputs0 .. inputsN (1 to 256 inputs) joined along attribute axis",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/concat.hpp
// begin nnvm/ops/transform/depth_space.hpp
// depth_to_space (ONNX DepthToSpace) and space_to_depth (ONNX SpaceToDepth) on NCHW tensors:
// blocks of blocksize x blocksize pixels trade places with groups of channels.


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace transform_detail {
inline int64_t check_blocksize(const te::Tensor& x, int64_t b) {
  check_rank(x, "input", 4);
  if (b <= 0)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'blocksize' is ", b, " but must be positive"),
                    {"attribute blocksize"});
  return b;
}
}  // namespace transform_detail

// (N, C, H, W) -> (N, C/b², H*b, W*b). Mode DCR reads channel (bh*b + bw)*C/b² + c; CRD reads
// c*b² + bh*b + bw, where (bh, bw) is the output pixel's place in its block.
inline te::Tensor depth_to_space(const te::Tensor& x, int64_t blocksize, const std::string& mode = "DCR",
                                 std::string name = "depth_to_space") {
  using namespace transform_detail;
  int64_t b = check_blocksize(x, blocksize);
  if (mode != "DCR" && mode != "CRD")
    throw UserError("nnvm.ops.attr", str_cat("attribute 'mode' is '", mode, "' but must be DCR or CRD"),
                    {"attribute mode"});
  int64_t c = const_extent(x.shape()[1], "the channel axis of input");
  if (c % (b * b) != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input has ", c, " channels, not a multiple of blocksize² = ", b * b), {"input input"});
  int64_t co = c / (b * b);
  const auto& s = x.shape();
  return te::compute(
      {s[0], ir::Expr(co), ir::simplify(s[2] * b), ir::simplify(s[3] * b)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr bh = v[2] % b, bw = v[3] % b;
        ir::Expr ch = mode == "DCR" ? (bh * b + bw) * co + v[1] : v[1] * (b * b) + bh * b + bw;
        return x(v[0], ch, v[2] / b, v[3] / b);
      },
      std::move(name));
}

// (N, C, H, W) -> (N, C*b², H/b, W/b): output channel (bh*b + bw)*C + c holds pixel (bh, bw) of
// each block of channel c (the inverse of depth_to_space DCR).
inline te::Tensor space_to_depth(const te::Tensor& x, int64_t blocksize, std::string name = "space_to_depth") {
  using namespace transform_detail;
  int64_t b = check_blocksize(x, blocksize);
  int64_t c = const_extent(x.shape()[1], "the channel axis of input");
  int64_t h = const_extent(x.shape()[2], "the height axis of input");
  int64_t w = const_extent(x.shape()[3], "the width axis of input");
  if (h % b != 0 || w % b != 0)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input's spatial extents ", h, " x ", w, " are not multiples of blocksize ", b),
                    {"input input"});
  return te::compute(
      {x.shape()[0], ir::Expr(c * b * b), ir::Expr(h / b), ir::Expr(w / b)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr blk = v[1] / c, ch = v[1] % c;
        return x(v[0], ch, v[2] * b + blk / b, v[3] * b + blk % b);
      },
      std::move(name));
}

inline OpDef depth_to_space_def() {
  return OpDef{
      .name = "depth_to_space",
      .importer_names = {"onnx:DepthToSpace"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                depth_to_space(in[0], attrs.get_int("blocksize"), attrs.get_string("mode", "DCR"))};
          },
      .doc = "NCHW channels moved into blocksize x blocksize spatial blocks (attribute mode DCR or CRD)",
  };
}

inline OpDef space_to_depth_def() {
  return OpDef{
      .name = "space_to_depth",
      .importer_names = {"onnx:SpaceToDepth"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{space_to_depth(in[0], attrs.get_int("blocksize"))};
          },
      .doc = "NCHW blocksize x blocksize spatial blocks moved into channels",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/depth_space.hpp
// begin nnvm/ops/transform/expand.hpp
// expand (ONNX Expand) and tile (ONNX Tile): the input repeated to a larger shape, by
// broadcasting or by whole copies.


NNVM_BEGIN_NAMESPACE
namespace ops {

// The broadcast of input's shape with `shape` (both ways: a 1 in `shape` keeps the input's
// extent, as ONNX Expand says). Broadcast failures are "nnvm.ops.input_shape".
inline te::Tensor expand(const te::Tensor& x, const std::vector<int64_t>& shape, std::string name = "expand") {
  std::vector<ir::Expr> want;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] <= 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input shape[", d, "] is ", shape[d], "; extents must be positive"), {"input shape"});
    want.emplace_back(shape[d]);
  }
  std::vector<ir::Expr> out;
  try {
    out = broadcast_shape(x.shape(), want);
  } catch (const UserError& e) {
    throw UserError("nnvm.ops.input_shape", str_cat("input and shape do not broadcast: ", e.message()), {"input shape"});
  }
  return te::compute(
      out, [&](const std::vector<ir::Var>& v) { return x(broadcast_indices(x, v)); }, std::move(name));
}

// Output extent d is x's extent d times repeats[d]; element i reads i mod x's extent.
inline te::Tensor tile(const te::Tensor& x, const std::vector<int64_t>& repeats, std::string name = "tile") {
  if (repeats.size() != x.rank())
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input repeats has ", repeats.size(), " elements but input has rank ", x.rank()),
                    {"input repeats"});
  std::vector<ir::Expr> shape;
  for (size_t d = 0; d < x.rank(); ++d) {
    if (repeats[d] <= 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input repeats[", d, "] is ", repeats[d], "; repeats must be positive"),
                      {"input repeats"});
    shape.push_back(ir::simplify(x.shape()[d] * repeats[d]));
  }
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < v.size(); ++d) idx.push_back(repeats[d] == 1 ? ir::Expr(v[d]) : v[d] % x.shape()[d]);
        return x(idx);
      },
      std::move(name));
}

inline OpDef expand_def() {
  return OpDef{
      .name = "expand",
      .importer_names = {"onnx:Expand"},
      .input_names = {"input", "shape"},
      .value_inputs = {"shape"},
      .pattern = OpPattern::broadcast,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{expand(in[0], attrs.get_ints("shape"))};
          },
      .doc = "input broadcast with value input shape (both ways)",
  };
}

inline OpDef tile_def() {
  return OpDef{
      .name = "tile",
      .importer_names = {"onnx:Tile"},
      .input_names = {"input", "repeats"},
      .value_inputs = {"repeats"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{tile(in[0], attrs.get_ints("repeats"))};
          },
      .doc = "input repeated repeats[d] times along each axis d (value input repeats)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/expand.hpp
// begin nnvm/ops/transform/gather.hpp
// The gathers: gather (ONNX Gather), gather_elements (ONNX GatherElements) and gather_nd (ONNX
// GatherND). Index tensors are int32 or int64; a negative index counts from the end of its axis.
// ONNX calls an index out of range an error: constant indices are checked when the graph is
// built (check_constants, nnvm.ops.index_range); at run time a kernel cannot report one, so it
// clamps to the nearest valid index and never reads outside the data. Reading from an axis of
// extent 0 has nothing to clamp to and is refused (nnvm.ops.empty_axis).


NNVM_BEGIN_NAMESPACE
namespace ops {

// out[i.., j.., k..] = data[i.., indices[j..], k..] with j.. over indices' axes at `axis`.
inline te::Tensor gather(const te::Tensor& data, const te::Tensor& indices, int64_t axis = 0,
                         std::string name = "gather") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_index_dtype(indices, "indices");
  size_t a = normalize_axis(axis, data.rank(), "axis"), q = indices.rank();
  std::vector<ir::Expr> shape(data.shape().begin(), data.shape().begin() + a);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), data.shape().begin() + a + 1, data.shape().end());
  check_readable_axis(data.shape()[a], shape, str_cat("axis ", a, " of data"));
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.begin() + a);
        ir::Expr i = indices(std::vector<ir::Expr>(v.begin() + a, v.begin() + a + q));
        idx.push_back(wrap_clamp(i, data.shape()[a]));
        idx.insert(idx.end(), v.begin() + a + q, v.end());
        return data(idx);
      },
      std::move(name));
}

// out[p] = data[p with p[axis] = indices[p]]; indices has data's rank and, off `axis`, extents
// no larger than data's.
inline te::Tensor gather_elements(const te::Tensor& data, const te::Tensor& indices, int64_t axis = 0,
                                  std::string name = "gather_elements") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", data.rank());
  check_index_dtype(indices, "indices");
  size_t a = normalize_axis(axis, data.rank(), "axis");
  for (size_t d = 0; d < data.rank(); ++d) {
    if (d == a) continue;
    auto *ci = ir::as_const_int(ir::simplify(indices.shape()[d])), *cd = ir::as_const_int(ir::simplify(data.shape()[d]));
    bool ok = ci && cd ? *ci <= *cd : same_extent(indices.shape()[d], data.shape()[d]);
    if (!ok)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("indices axis ", d, " has extent ", ir::to_string(indices.shape()[d]),
                              ", more than data's ", ir::to_string(data.shape()[d])),
                      {"input indices"});
  }
  check_readable_axis(data.shape()[a], indices.shape(), str_cat("axis ", a, " of data"));
  return te::compute(
      indices.shape(),
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx = exprs(v);
        idx[a] = wrap_clamp(indices(exprs(v)), data.shape()[a]);
        return data(idx);
      },
      std::move(name));
}

// indices' last axis (constant extent K) holds coordinates into data's axes b .. b+K-1 (b =
// batch_dims, axes shared by data and indices): out[j.., k..] = data[j[:b].., indices[j..],
// k..] where j runs over indices' axes but the last, k over data's axes after b+K.
inline te::Tensor gather_nd(const te::Tensor& data, const te::Tensor& indices, int64_t batch_dims = 0,
                            std::string name = "gather_nd") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", 1, SIZE_MAX);
  check_index_dtype(indices, "indices");
  size_t q = indices.rank(), r = data.rank();
  if (batch_dims < 0 || size_t(batch_dims) >= std::min(q, r))
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'batch_dims' is ", batch_dims, " but must lie in [0, ", std::min(q, r), ")"),
                    {"attribute batch_dims"});
  size_t b = size_t(batch_dims);
  for (size_t d = 0; d < b; ++d)
    check_same_extent(data.shape()[d], indices.shape()[d], str_cat("batch axis ", d, " of data and indices"));
  int64_t k = const_extent(indices.shape()[q - 1], "the last axis of indices");
  if (k < 1 || size_t(k) > r - b)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axis of indices has extent ", k, " but data has ", r - b,
                            " axes after the batch axes"),
                    {"input indices"});
  std::vector<ir::Expr> shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + b + k, data.shape().end());
  for (int64_t j = 0; j < k; ++j) check_readable_axis(data.shape()[b + j], shape, str_cat("axis ", b + j, " of data"));
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(v.begin(), v.begin() + b), at(v.begin(), v.begin() + (q - 1));
        at.emplace_back(int64_t(0));
        for (int64_t j = 0; j < k; ++j) {
          at.back() = ir::Expr(j);
          idx.push_back(wrap_clamp(indices(at), data.shape()[b + j]));
        }
        idx.insert(idx.end(), v.begin() + (q - 1), v.end());
        return data(idx);
      },
      std::move(name));
}

inline OpDef gather_def() {
  return OpDef{
      .name = "gather",
      .importer_names = {"onnx:Gather"},
      .input_names = {"data", "indices"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{gather(in[0], in[1], attrs.get_int("axis", 0))};
          },
      .check_constants =
          [](const std::vector<TensorType>& in, const std::vector<const NDArray*>& data, const Attrs& attrs) {
            using namespace transform_detail;
            size_t a = normalize_axis(attrs.get_int("axis", 0), in[0].shape.size(), "axis");
            if (data[1]) check_index_values(*data[1], {extent_or_unknown(in[0], a)}, "indices", str_cat("axis ", a, " of data"));
          },
      .doc = "data indexed along attribute axis by indices (negative wrap, out of range clamps)",
  };
}

inline OpDef gather_elements_def() {
  return OpDef{
      .name = "gather_elements",
      .importer_names = {"onnx:GatherElements"},
      .input_names = {"data", "indices"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{gather_elements(in[0], in[1], attrs.get_int("axis", 0))};
          },
      .check_constants =
          [](const std::vector<TensorType>& in, const std::vector<const NDArray*>& data, const Attrs& attrs) {
            using namespace transform_detail;
            size_t a = normalize_axis(attrs.get_int("axis", 0), in[0].shape.size(), "axis");
            if (data[1]) check_index_values(*data[1], {extent_or_unknown(in[0], a)}, "indices", str_cat("axis ", a, " of data"));
          },
      .doc = "data[p with p[axis] = indices[p]] for every position p of indices",
  };
}

inline OpDef gather_nd_def() {
  return OpDef{
      .name = "gather_nd",
      .importer_names = {"onnx:GatherND"},
      .input_names = {"data", "indices"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{gather_nd(in[0], in[1], attrs.get_int("batch_dims", 0))};
          },
      .check_constants =
          [](const std::vector<TensorType>& in, const std::vector<const NDArray*>& data, const Attrs& attrs) {
            using namespace transform_detail;
            if (!data[1]) return;
            // Coordinate j of each index (indices' last axis) addresses data's axis batch_dims + j.
            size_t b = size_t(attrs.get_int("batch_dims", 0));
            int64_t k = extent_or_unknown(in[1], in[1].shape.size() - 1);
            std::vector<int64_t> extents;
            for (int64_t j = 0; j < k; ++j) extents.push_back(extent_or_unknown(in[0], b + size_t(j)));
            check_index_values(*data[1], extents, "indices", str_cat("data's axes ", b, " to ", b + size_t(k) - 1));
          },
      .doc = "slices of data at the coordinates in indices' last axis (attribute batch_dims)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/gather.hpp
// begin nnvm/ops/transform/generate.hpp
// Ops that make a tensor from compile-time values: constant_of_shape (ONNX ConstantOfShape),
// range (ONNX Range) and eye_like (ONNX EyeLike).

#include <cmath>


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace transform_detail {
// One constant of dtype `t` (storage types through float32).
inline ir::Expr typed_const(DataType t, double v) {
  return t.is_storage_only() ? ir::cast(t, ir::make_const(dtype::float32, v)) : ir::make_const(t, v);
}
}  // namespace transform_detail

// Every element `value` (already of the output's dtype).
inline te::Tensor constant_of_shape(const std::vector<int64_t>& shape, const ir::Expr& value,
                                    std::string name = "constant_of_shape") {
  std::vector<ir::Expr> extents;
  for (size_t d = 0; d < shape.size(); ++d) {
    transform_detail::check_output_extent(shape[d], d, "input holds it");
    extents.emplace_back(shape[d]);
  }
  return te::compute(extents, [&](const std::vector<ir::Var>&) { return value; }, std::move(name));
}

namespace transform_detail {
// The range's length, "nnvm.ops.input_shape" when it is empty (nnvm tensors cannot be) or absurd.
inline int64_t range_length(double n, const std::string& what) {
  if (!(n >= 1 && n <= double(int64_t(1) << 40)))
    throw UserError("nnvm.ops.input_shape", str_cat(what, " has ", n, " elements; it must have 1 to 2^40"));
  return int64_t(n);
}
}  // namespace transform_detail

// start, start + delta, ... before limit: max(ceil((limit - start) / delta), 0) elements of the
// float dtype `t` (float16/bfloat16 computed in float32).
inline te::Tensor range(DataType t, double start, double limit, double delta, std::string name = "range") {
  std::string what = str_cat("range from ", start, " to ", limit, " by ", delta);
  int64_t n = transform_detail::range_length(std::ceil((limit - start) / delta), what);
  DataType ct = t.is_storage_only() ? dtype::float32 : t;
  return te::compute(
      {ir::Expr(n)},
      [&](const std::vector<ir::Var>& v) {
        return ir::cast(t, ir::make_const(ct, start) + ir::cast(ct, v[0]) * ir::make_const(ct, delta));
      },
      std::move(name));
}
// The same for an integer dtype `t`, counted exactly.
inline te::Tensor range(DataType t, int64_t start, int64_t limit, int64_t delta, std::string name = "range") {
  std::string what = str_cat("range from ", start, " to ", limit, " by ", delta);
  if (delta == 0) throw UserError("nnvm.ops.input_shape", what + " never ends", {"input delta"});
  bool up = delta > 0;
  uint64_t span = up ? uint64_t(limit) - uint64_t(start) : uint64_t(start) - uint64_t(limit);
  uint64_t step = up ? uint64_t(delta) : uint64_t(0) - uint64_t(delta);
  bool empty = up ? limit <= start : limit >= start;
  int64_t n = transform_detail::range_length(empty ? 0.0 : double(span / step + (span % step != 0)), what);
  return te::compute(
      {ir::Expr(n)},
      [&](const std::vector<ir::Var>& v) {
        return ir::make_int_const(t, start) + ir::cast(t, v[0]) * ir::make_int_const(t, delta);
      },
      std::move(name));
}

// A matrix of x's shape with ones on diagonal k (column - row == k) and zeros elsewhere.
inline te::Tensor eye_like(const te::Tensor& x, DataType t, int64_t k = 0, std::string name = "eye_like") {
  check_rank(x, "input", 2);
  ir::Expr one = transform_detail::typed_const(t, 1), zero = transform_detail::typed_const(t, 0);
  return te::compute(
      x.shape(), [&](const std::vector<ir::Var>& v) { return ir::select(v[1] - v[0] == k, one, zero); },
      std::move(name));
}

inline OpDef constant_of_shape_def() {
  return OpDef{
      .name = "constant_of_shape",
      .importer_names = {"onnx:ConstantOfShape"},
      .input_names = {"input"},
      .value_inputs = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>&, const Attrs& attrs) {
            // The importer passes ONNX's one-element tensor attribute `value` as the attribute
            // value (a list of one number) plus value_dtype (its data type).
            DataType t = attrs.get_dtype("value_dtype", dtype::float32);
            ir::Expr value = transform_detail::typed_const(t, 0);
            if (const AttrValue* v = attrs.find("value")) {
              if (auto* ints = std::get_if<std::vector<int64_t>>(v); ints && ints->size() == 1 && !t.is_float())
                value = ir::make_int_const(t, (*ints)[0]);
              else if (std::vector<double> f = attrs.get_floats("value"); f.size() == 1)
                value = transform_detail::typed_const(t, f[0]);
              else
                throw UserError("nnvm.ops.attr", str_cat("attribute 'value' has ", f.size(), " numbers, expected one"),
                                {"attribute value"});
            }
            return std::vector<te::Tensor>{constant_of_shape(attrs.get_ints("input"), value)};
          },
      .doc = "a tensor of the shape in value input input, filled with attribute value (dtype value_dtype; default "
             "float32 0)",
  };
}

inline OpDef eye_like_def() {
  return OpDef{
      .name = "eye_like",
      .importer_names = {"onnx:EyeLike"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            DataType t = attrs.get_dtype("dtype", in[0].dtype());
            return std::vector<te::Tensor>{eye_like(in[0], t, attrs.get_int("k", 0))};
          },
      .doc = "ones on diagonal k (attribute) of a matrix shaped like input, dtype attribute dtype or input's",
  };
}

inline OpDef range_def() {
  return OpDef{
      .name = "range",
      .importer_names = {"onnx:Range"},
      .input_names = {"start", "limit", "delta"},
      .value_inputs = {"start", "limit", "delta"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            DataType t = in[0].dtype();
            auto scalar = [&](size_t i, const char* name) {
              if (i > 0) check_same_dtype(in[0], "start", in[i], name);
              size_t n = t.is_float() ? attrs.get_floats(name).size() : attrs.get_ints(name).size();
              if (n != 1)
                throw UserError("nnvm.ops.input_shape", str_cat("input ", name, " has ", n, " elements, expected one"),
                                {str_cat("input ", name)});
            };
            scalar(0, "start"), scalar(1, "limit"), scalar(2, "delta");
            if (t.is_float())
              return std::vector<te::Tensor>{
                  range(t, attrs.get_floats("start")[0], attrs.get_floats("limit")[0], attrs.get_floats("delta")[0])};
            if (t.is_bool() || !t.is_scalar())
              throw UserError("nnvm.ops.input_dtype", str_cat("input start is ", t, ", expected a number"),
                              {"input start"});
            return std::vector<te::Tensor>{
                range(t, attrs.get_ints("start")[0], attrs.get_ints("limit")[0], attrs.get_ints("delta")[0])};
          },
      .doc = "start, start + delta, ... before limit (value inputs, one dtype)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/generate.hpp
// begin nnvm/ops/transform/grid_sample.hpp
// grid_sample: ONNX GridSample (opset 22), for any number r >= 1 of spatial axes (2-D images and
// 3-D volumes). X is (N, C, D1..Dr) and grid (N, H1..Hr, r) holds normalized coordinates in
// [-1, 1], last spatial axis first (grid[..., 0] indexes Dr). Y is (N, C, H1..Hr).
//
// Per spatial axis, as the ONNX reference (after PyTorch's grid_sampler): the coordinate is
// denormalized (align_corners: -1 and 1 are the centers of the corner pixels; else their outer
// edges), rounded half to even for mode nearest, and, when outside the border ([0, D - 1] with
// align_corners, else [-0.5, D - 0.5]), clamped to [0, D - 1] (padding_mode border) or reflected
// back inside (reflection). Mode linear weights 2 taps per axis, cubic 4 (Keys, a = -0.75). A
// tap outside the input reads 0 (zeros), the nearest edge pixel (border) or its reflection; every
// read index is clamped into the input, so no kernel read leaves X whatever the grid holds.
// Coordinates are clamped to [-(D + 4), D + 4] before becoming integers, and a NaN coordinate
// counts as -(D + 4) (ONNX leaves it undefined): with zeros padding it reads 0. Coordinates are computed in the grid's arithmetic type (float32 unless float64), the
// reflection in float64, the weighted sum in float32 (float64 for float64 X or grid).

#include <cmath>


NNVM_BEGIN_NAMESPACE
namespace ops {

struct GridSampleSpec {
  std::string mode = "linear";  // linear, nearest, cubic (opset 16's bilinear/bicubic accepted)
  std::string padding_mode = "zeros";
  bool align_corners = false;
};

namespace grid_sample_detail {

// Reflects x (float64) into [lo, hi] by repeated mirroring at the nearer border.
inline ir::Expr reflect(const ir::Expr& x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return ir::select(x < lo || x > hi, ir::Expr(lo), x);
  auto fold = [&](const ir::Expr& dx, double near, double far) {
    ir::Expr n = ir::call(ir::CallOp::trunc, dx / range);
    ir::Expr rest = dx - n * range;
    ir::Expr even = ir::call(ir::CallOp::fmod, n, ir::Expr(2.0)) == 0.0;
    return ir::select(even, near < far ? ir::Expr(near) + rest : ir::Expr(near) - rest,
                      near < far ? ir::Expr(far) - rest : ir::Expr(far) + rest);
  };
  return ir::select(x < lo, fold(ir::Expr(lo) - x, lo, hi), ir::select(x > hi, fold(x - hi, hi, lo), x));
}

// One Keys cubic weight for a tap at distance d (|d| < 2), a = -0.75.
inline ir::Expr cubic_weight(const ir::Expr& d, bool near) {
  const double a = -0.75;
  DataType t = d.dtype();
  return near ? ((ir::make_const(t, a + 2) * d - (a + 3)) * d) * d + 1.0
              : ((ir::make_const(t, a) * d - 5 * a) * d + 8 * a) * d - 4 * a;
}

}  // namespace grid_sample_detail

inline te::Tensor grid_sample(const te::Tensor& x, const te::Tensor& grid, const GridSampleSpec& spec,
                              std::string name = "grid_sample") {
  using namespace transform_detail;
  namespace gd = grid_sample_detail;
  std::string mode = spec.mode == "bilinear" ? "linear" : spec.mode == "bicubic" ? "cubic" : spec.mode;
  if (mode != "linear" && mode != "nearest" && mode != "cubic")
    throw UserError("nnvm.ops.attr", str_cat("attribute 'mode' is '", spec.mode, "' but must be linear, nearest or cubic"),
                    {"attribute mode"});
  const std::string& pm = spec.padding_mode;
  if (pm != "zeros" && pm != "border" && pm != "reflection")
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'padding_mode' is '", pm, "' but must be zeros, border or reflection"),
                    {"attribute padding_mode"});
  check_rank(x, "X", 3, 8);
  size_t r = x.rank() - 2;
  check_rank(grid, "grid", r + 2);
  for (auto [t, input] : {std::pair{x, "X"}, std::pair{grid, "grid"}})
    if (!t.dtype().is_float() || !t.dtype().is_scalar())
      throw UserError("nnvm.ops.input_dtype",
                      str_cat("input ", input, " (tensor ", t.name(), ") is ", t.dtype(), ", expected a float type"),
                      {str_cat("input ", input)});
  check_same_extent(grid.shape()[0], x.shape()[0], "the batch extents of grid and X (axis 0)");
  if (const_extent(grid.shape()[r + 1], "the last axis of grid") != int64_t(r))
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axis of grid has extent ", ir::to_string(grid.shape()[r + 1]), ", expected ", r,
                            " (one coordinate per spatial axis of X)"),
                    {"input grid"});
  std::vector<int64_t> dims(r);
  for (size_t i = 0; i < r; ++i) {
    dims[i] = const_extent(x.shape()[2 + i], str_cat("spatial axis ", 2 + i, " of input X"));
    if (dims[i] == 0) throw UserError("nnvm.ops.input_shape", str_cat("spatial axis ", 2 + i, " of input X is empty"), {"input X"});
  }
  DataType t = x.dtype();
  DataType gt = arith_type(grid.dtype());
  DataType ct = t == dtype::float64 || gt == dtype::float64 ? dtype::float64 : dtype::float32;
  std::vector<ir::Expr> shape{x.shape()[0], x.shape()[1]};
  for (size_t i = 0; i < r; ++i) shape.push_back(grid.shape()[1 + i]);

  // The source coordinate along each spatial axis, one stage per axis computed ahead of the
  // sampling: the sampling reads it 2-4 times per axis, and an expression (not a stage) would be
  // copied into every tap, the reflections nested in each copy.
  std::vector<double> lo(r), hi(r);
  std::vector<te::Tensor> coords(r);
  std::vector<ir::Expr> grid_shape{grid.shape()[0]};
  for (size_t i = 0; i < r; ++i) grid_shape.push_back(grid.shape()[1 + i]);
  for (size_t i = 0; i < r; ++i) {
    double d = double(dims[i]);
    lo[i] = spec.align_corners ? 0 : -0.5;
    hi[i] = spec.align_corners ? d - 1 : d - 0.5;
    coords[i] = te::compute(
        grid_shape,
        [&](const std::vector<ir::Var>& v) -> ir::Expr {
          std::vector<ir::Expr> gi(v.begin(), v.end());
          gi.push_back(ir::Expr(int64_t(r - 1 - i)));
          ir::Expr n = ir::cast(gt, grid(gi));
          ir::Expr c = spec.align_corners ? (n + 1.0) / 2.0 * (d - 1) : ((n + 1.0) * d - 1.0) / 2.0;
          if (mode == "nearest") c = ir::call(ir::CallOp::round, c);
          if (pm == "border")
            c = ir::select(c < lo[i] || c > hi[i], ir::min(ir::max(c, ir::make_zero(gt)), ir::make_const(gt, d - 1)), c);
          else if (pm == "reflection")
            c = ir::cast(gt, gd::reflect(ir::cast(dtype::float64, c), lo[i], hi[i]));
          // Past D + 4 pixels every tap reads padding (or is already clamped or reflected), so
          // clamping there (and sending NaN there) changes no result and keeps the integer casts
          // below in range.
          ir::Expr far = ir::make_const(gt, d + 4);
          c = ir::select(ir::call(ir::CallOp::isnan, c), -far, c);
          return ir::min(ir::max(c, -far), far);
        },
        str_cat(name, "_coord", i));
  }

  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) -> ir::Expr {
        std::vector<ir::Expr> coord(r), at_point{v[0]};
        for (size_t j = 0; j < r; ++j) at_point.push_back(v[2 + j]);
        for (size_t i = 0; i < r; ++i) coord[i] = coords[i](at_point);
        // The value of X at integer source index idx[i] per axis, after padding.
        auto pixel = [&](const std::vector<ir::Expr>& idx) {
          std::vector<ir::Expr> at{v[0], v[1]};
          ir::Expr inside;
          for (size_t i = 0; i < r; ++i) {
            ir::Expr k = idx[i];
            if (pm == "zeros") {
              ir::Expr in = k >= int64_t(0) && k < dims[i];
              inside = inside.defined() ? (inside && in) : in;
            } else if (pm == "reflection") {
              k = ir::cast(dtype::int64, gd::reflect(ir::cast(dtype::float64, k), lo[i], hi[i]));
            }
            at.push_back(ir::min(ir::max(k, ir::Expr(int64_t(0))), ir::Expr(dims[i] - 1)));
          }
          ir::Expr value = ir::cast(ct, x(at));
          return inside.defined() ? ir::select(inside, value, ir::make_zero(ct)) : value;
        };
        ir::Expr value;
        if (mode == "nearest") {
          std::vector<ir::Expr> idx;
          for (auto& c : coord) idx.push_back(ir::cast(dtype::int64, c));
          value = pixel(idx);
        } else {
          bool cubic = mode == "cubic";
          int64_t taps = cubic ? 4 : 2, first = cubic ? -1 : 0;
          std::vector<ir::Expr> base(r);
          std::vector<std::vector<ir::Expr>> weight(r);
          for (size_t i = 0; i < r; ++i) {
            ir::Expr f = ir::call(ir::CallOp::floor, coord[i]);
            ir::Expr frac = ir::cast(ct, coord[i] - f);
            base[i] = ir::cast(dtype::int64, f);
            ir::Expr one = ir::make_const(ct, 1.0);
            weight[i] = cubic ? std::vector<ir::Expr>{gd::cubic_weight(frac + one, false), gd::cubic_weight(frac, true),
                                                      gd::cubic_weight(one - frac, true),
                                                      gd::cubic_weight(one - frac + one, false)}
                              : std::vector<ir::Expr>{one - frac, frac};
          }
          size_t terms = 1;
          for (size_t i = 0; i < r; ++i) terms *= size_t(taps);
          for (size_t c = 0; c < terms; ++c) {
            std::vector<ir::Expr> idx(r);
            ir::Expr w;
            size_t rest = c;
            for (size_t i = r; i-- > 0;) {  // last axis varies fastest
              int64_t q = int64_t(rest % size_t(taps));
              rest /= size_t(taps);
              idx[i] = base[i] + (first + q);
              w = w.defined() ? w * weight[i][q] : weight[i][q];
            }
            ir::Expr term = w * pixel(idx);
            value = value.defined() ? value + term : term;
          }
        }
        return t.is_storage_only() && ct != dtype::float32 ? ir::cast(t, ir::cast(dtype::float32, value)) : ir::cast(t, value);
      },
      std::move(name));
}

inline OpDef grid_sample_def() {
  return OpDef{
      .name = "grid_sample",
      .importer_names = {"onnx:GridSample"},
      .input_names = {"X", "grid"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            GridSampleSpec spec;
            spec.mode = attrs.get_string("mode", "linear");
            spec.padding_mode = attrs.get_string("padding_mode", "zeros");
            spec.align_corners = attrs.get_int("align_corners", 0) != 0;
            return std::vector<te::Tensor>{grid_sample(in[0], in[1], spec)};
          },
      .doc = "X sampled at the normalized coordinates of grid; mode linear/nearest/cubic, padding zeros/border/reflection",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/grid_sample.hpp
// begin nnvm/ops/transform/one_hot.hpp
// one_hot (ONNX OneHot): a new axis of extent depth (value input) at `axis` of the output; the
// element is values[1] (on) where its position on that axis equals the index, else values[0]
// (off). A negative index counts from depth's end; an index out of [-depth, depth) matches no
// position, so its row is all off.

#include <cmath>


NNVM_BEGIN_NAMESPACE
namespace ops {

// indices: any number type (floats truncate toward zero); values: two elements [off, on].
inline te::Tensor one_hot(const te::Tensor& indices, int64_t depth, const te::Tensor& values, int64_t axis = -1,
                          std::string name = "one_hot") {
  DataType it = indices.dtype();
  if (it.is_bool() || it.is_storage_only() || !it.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input indices (tensor ", indices.name(), ") is ", it, ", expected a number type"),
                    {"input indices"});
  if (depth < 1)
    throw UserError("nnvm.ops.input_shape", str_cat("input depth is ", depth, "; it must be at least 1"),
                    {"input depth"});
  check_rank(values, "values", 1);
  if (transform_detail::const_extent(values.shape()[0], "the extent of values") != 2)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input values has ", ir::to_string(values.shape()[0]), " elements, expected 2 (off, on)"),
                    {"input values"});
  size_t a = normalize_axis(axis, indices.rank() + 1, "axis");
  std::vector<ir::Expr> shape = indices.shape();
  shape.insert(shape.begin() + a, ir::Expr(depth));
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> at = transform_detail::exprs(v);
        at.erase(at.begin() + a);
        ir::Expr i = transform_detail::wrap_negative(indices(at), ir::Expr(depth));
        return ir::select(i == ir::Expr(v[a]), values(int64_t(1)), values(int64_t(0)));
      },
      std::move(name));
}

inline OpDef one_hot_def() {
  return OpDef{
      .name = "one_hot",
      .importer_names = {"onnx:OneHot"},
      .input_names = {"indices", "depth", "values"},
      .value_inputs = {"depth"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::vector<double> d = attrs.get_floats("depth");
            if (d.size() != 1)
              throw UserError("nnvm.ops.input_shape", str_cat("input depth has ", d.size(), " elements, expected one"),
                              {"input depth"});
            if (!(std::abs(d[0]) < 1e12))
              throw UserError("nnvm.ops.input_shape", str_cat("input depth is ", d[0]), {"input depth"});
            return std::vector<te::Tensor>{one_hot(in[0], int64_t(d[0]), in[2], attrs.get_int("axis", -1))};
          },
      .doc = "values[1] where the new axis (attribute axis) equals indices, values[0] elsewhere; depth is a value input",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/one_hot.hpp
// begin nnvm/ops/transform/pad.hpp
// pad (ONNX Pad, opset 19+: pads, constant_value and axes are value inputs). pads holds the
// begin amounts of the padded axes, then their end amounts; a negative amount crops. Modes:
// constant (constant_value, default 0), edge (repeat the border element), reflect (mirror
// without repeating the border; an extent-1 axis repeats its one element) and wrap (periodic).


NNVM_BEGIN_NAMESPACE
namespace ops {

struct PadSpec {
  std::vector<int64_t> pads;
  std::vector<int64_t> axes;  // empty: every axis
  std::string mode = "constant";
  double value = 0;  // constant mode
};

inline te::Tensor pad(const te::Tensor& x, const PadSpec& spec, std::string name = "pad") {
  using namespace transform_detail;
  const std::string& mode = spec.mode;
  if (mode != "constant" && mode != "edge" && mode != "reflect" && mode != "wrap")
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'mode' is '", mode, "' but must be constant, edge, reflect or wrap"),
                    {"attribute mode"});
  std::vector<int64_t> axes_in = spec.axes;
  if (axes_in.empty())
    for (size_t d = 0; d < x.rank(); ++d) axes_in.push_back(int64_t(d));
  std::vector<size_t> axes = normalize_axes(axes_in, x.rank(), "axes");
  if (spec.pads.size() != 2 * axes.size())
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input pads has ", spec.pads.size(), " elements; expected 2 per padded axis (",
                            2 * axes.size(), ")"),
                    {"input pads"});
  std::vector<int64_t> before(x.rank(), 0), extent(x.rank(), 0);
  std::vector<ir::Expr> shape = x.shape();
  for (size_t k = 0; k < axes.size(); ++k) {
    size_t a = axes[k];
    int64_t b = spec.pads[k], e = spec.pads[k + axes.size()];
    if (b == 0 && e == 0) continue;
    int64_t n = const_extent(x.shape()[a], str_cat("padded axis ", a, " of input data"));
    check_output_extent(n + b + e, a, str_cat("extent ", n, " padded by ", b, " and ", e));
    before[a] = b;
    extent[a] = n;
    shape[a] = ir::Expr(n + b + e);
  }
  DataType t = x.dtype();
  ir::Expr fill = t.is_storage_only() ? ir::cast(t, ir::make_const(dtype::float32, spec.value))
                                      : ir::make_const(t, spec.value);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        ir::Expr inside;
        for (size_t d = 0; d < v.size(); ++d) {
          int64_t n = extent[d];
          if (n == 0) {  // not padded
            idx.push_back(v[d]);
            continue;
          }
          ir::Expr j = v[d] - before[d];
          if (mode == "constant") {
            ir::Expr in = j >= int64_t(0) && j < n;
            inside = inside.defined() ? (inside && in) : in;
          } else if (mode == "edge") {
            j = ir::min(ir::max(j, ir::Expr(int64_t(0))), ir::Expr(n - 1));
          } else if (mode == "wrap") {
            j = (j % n + n) % n;
          } else if (n == 1) {
            j = ir::Expr(int64_t(0));
          } else {  // reflect: fold into one period of 2(n - 1), then mirror its second half
            int64_t m = 2 * (n - 1);
            j = (j % m + m) % m;
            j = ir::select(j >= n, m - j, j);
          }
          idx.push_back(j);
        }
        return inside.defined() ? ir::select(inside, x(idx), fill) : x(idx);
      },
      std::move(name));
}

inline OpDef pad_def() {
  return OpDef{
      .name = "pad",
      .importer_names = {"onnx:Pad"},
      .input_names = {"data", "pads", "constant_value", "axes"},
      .optional_inputs = 2,
      .value_inputs = {"pads", "constant_value", "axes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            PadSpec spec{attrs.get_ints("pads"), {}, attrs.get_string("mode", "constant"), 0.0};
            if (transform_detail::given(in, 2)) {
              std::vector<double> c = attrs.get_floats("constant_value");
              if (c.size() != 1)
                throw UserError("nnvm.ops.input_shape",
                                str_cat("input constant_value has ", c.size(), " elements, expected one"),
                                {"input constant_value"});
              spec.value = c[0];
            }
            if (transform_detail::given(in, 3)) spec.axes = attrs.get_ints("axes");
            return std::vector<te::Tensor>{pad(in[0], spec)};
          },
      .doc = "data padded by value input pads (begins, then ends) over axes; attribute mode constant/edge/reflect/wrap",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/pad.hpp
// begin nnvm/ops/transform/reshape.hpp
// reshape (ONNX Reshape, opset 14+) and flatten (ONNX Flatten): the input's elements in
// row-major order under a new shape.

#include <optional>


NNVM_BEGIN_NAMESPACE
namespace ops {

// `x` read in row-major order as a tensor of `shape` (same element count, not checked here).
inline te::Tensor reshape_to(const te::Tensor& x, const std::vector<ir::Expr>& shape, std::string name) {
  using namespace transform_detail;
  return te::compute(
      shape, [&](const std::vector<ir::Var>& v) { return x(unravel(ravel(exprs(v), shape), x.shape())); },
      std::move(name));
}

// ONNX's shape spec: 0 copies the input's extent at that position (unless `allowzero`, where it
// would mean an empty axis, which nnvm refuses), one -1 takes what is left.
inline te::Tensor reshape(const te::Tensor& x, const std::vector<int64_t>& spec, bool allowzero = false,
                          std::string name = "reshape") {
  using namespace transform_detail;
  std::vector<ir::Expr> shape;
  ir::Expr known(int64_t(1));
  std::optional<size_t> infer;
  for (size_t d = 0; d < spec.size(); ++d) {
    int64_t s = spec[d];
    if (s == -1) {
      if (infer)
        throw UserError("nnvm.ops.input_shape", str_cat("input shape has -1 at positions ", *infer, " and ", d,
                                                        "; at most one extent can be inferred"),
                        {"input shape"});
      infer = d;
      shape.emplace_back();
      continue;
    }
    if (s == 0 && !allowzero) {
      if (d >= x.rank())
        throw UserError("nnvm.ops.input_shape",
                        str_cat("input shape[", d, "] is 0 (copy the input's extent) but input data has rank ",
                                x.rank()),
                        {"input shape"});
      shape.push_back(x.shape()[d]);
    } else if (s <= 0) {
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input shape[", d, "] is ", s, "; extents must be positive (nnvm tensors cannot be empty)"),
                      {"input shape"});
    } else {
      shape.emplace_back(s);
    }
    known = known * shape.back();
  }
  ir::Expr total = product(x.shape());
  known = ir::simplify(known);
  auto mismatch = [&] {
    return UserError("nnvm.ops.input_shape",
                     str_cat("input data has ", ir::to_string(total), " elements but shape ", list_string(spec),
                             " holds ", infer ? "a multiple of " : "", ir::to_string(known)),
                     {"input shape"});
  };
  if (infer) {
    // Cancel the symbolic extents the output keeps (a batch `n` copied by 0) so that the
    // inferred extent comes out constant when the rest is.
    std::vector<ir::Expr> in_left = x.shape(), out_left;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (d == *infer) continue;
      auto it = std::find_if(in_left.begin(), in_left.end(), [&](const ir::Expr& e) {
        return !ir::as_const_int(ir::simplify(e)) && same_extent(e, shape[d]);
      });
      if (it != in_left.end()) in_left.erase(it);
      else out_left.push_back(shape[d]);
    }
    ir::Expr t = product(in_left), k = product(out_left);
    auto *tc = ir::as_const_int(t), *kc = ir::as_const_int(k);
    if (tc && kc && *tc % *kc != 0) throw mismatch();
    shape[*infer] = tc && kc ? ir::Expr(*tc / *kc) : ir::simplify(t / k);
  } else if (!same_extent(total, known)) {
    throw mismatch();
  }
  return reshape_to(x, shape, std::move(name));
}

// 2-D result: the axes before `axis` (in [-rank, rank]) fold into rows, the rest into columns.
inline te::Tensor flatten(const te::Tensor& x, int64_t axis = 1, std::string name = "flatten") {
  using namespace transform_detail;
  int64_t r = int64_t(x.rank());
  if (axis < -r || axis > r)
    throw UserError("nnvm.ops.attr", str_cat("attribute 'axis' is ", axis, " but must lie in [", -r, ", ", r, "]"),
                    {"attribute axis"});
  size_t a = size_t(axis < 0 ? axis + r : axis);
  return reshape_to(x, {product(x.shape(), 0, a), product(x.shape(), a)}, std::move(name));
}

inline OpDef flatten_def() {
  return OpDef{
      .name = "flatten",
      .importer_names = {"onnx:Flatten"},
      .input_names = {"input"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{flatten(in[0], attrs.get_int("axis", 1))};
          },
      .doc = "2-D view of input: axes before attribute axis (default 1) as rows, the rest as columns",
  };
}

inline OpDef reshape_def() {
  return OpDef{
      .name = "reshape",
      .importer_names = {"onnx:Reshape"},
      .input_names = {"data", "shape"},
      .value_inputs = {"shape"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                reshape(in[0], attrs.get_ints("shape"), attrs.get_int("allowzero", 0) != 0)};
          },
      .doc = "data in row-major order under the shape given by value input shape (0 copies, one -1 inferred)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/reshape.hpp
// begin nnvm/ops/transform/resize.hpp
// resize (ONNX Resize, opset 19; the importer rewrites Upsample and older Resize into it). roi,
// scales and sizes are value inputs over `axes` (default: every axis). Each output index maps to
// a source coordinate per resized axis (coordinate_transformation_mode); mode nearest rounds it
// (nearest_mode), linear is multilinear over the resized axes (2 taps per axis) and cubic is
// separable with 4 taps per axis (cubic_coeff_a, exclude_outside). Taps outside the input are
// clamped to the border, as the ONNX reference pads with edge values, so no read leaves the
// tensor; tf_crop_and_resize gives extrapolation_value where a coordinate falls outside.
// Coordinates and weights are computed in float64. antialias = 1 is not supported.

#include <cmath>


NNVM_BEGIN_NAMESPACE
namespace ops {

struct ResizeSpec {
  std::vector<double> roi;      // starts then ends of the resized axes; tf_crop_and_resize only
  std::vector<double> scales;   // one per resized axis, or empty
  std::vector<int64_t> sizes;   // one per resized axis, or empty
  std::vector<int64_t> axes;    // empty: every axis
  std::string mode = "nearest";
  std::string coordinate_transformation_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  double extrapolation_value = 0;
  std::string keep_aspect_ratio_policy = "stretch";
};

namespace resize_detail {

inline void check_choice(const std::string& value, const char* attr, std::initializer_list<const char*> allowed) {
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  throw UserError("nnvm.ops.attr", str_cat("attribute '", attr, "' is '", value, "' but must be one of ", list),
                  {str_cat("attribute ", attr)});
}

// One resized axis: input extent n, output extent m, scale and the roi window.
struct Axis {
  int64_t n = 0, m = 0;
  double scale = 1, roi_start = 0, roi_end = 1;
};

// The source coordinate of output index `o` (float64), as the ONNX reference computes it.
inline ir::Expr source_coordinate(const ir::Expr& o, const Axis& a, const std::string& ctm) {
  ir::Expr x = ir::cast(dtype::float64, o);
  double n = double(a.n), out = a.scale * n;  // ONNX's float output width
  if (ctm == "asymmetric") return x / ir::Expr(a.scale);
  if (ctm == "align_corners")
    return out == 1 ? ir::Expr(0.0) : x * ir::Expr((n - 1) / (out - 1));
  if (ctm == "pytorch_half_pixel")
    return out == 1 ? ir::Expr(-0.5) : (x + 0.5) / ir::Expr(a.scale) - 0.5;
  if (ctm == "tf_crop_and_resize") {
    double w = (a.roi_end - a.roi_start) * (n - 1);
    ir::Expr base(a.roi_start * (n - 1));
    return out == 1 ? base + ir::Expr(w / 2) : base + x * ir::Expr(w / (out - 1));
  }
  if (ctm == "half_pixel_symmetric") {
    double offset = n / 2 * (1 - double(a.m) / out);
    return ir::Expr(offset) + (x + 0.5) / ir::Expr(a.scale) - 0.5;
  }
  return (x + 0.5) / ir::Expr(a.scale) - 0.5;  // half_pixel
}

inline ir::Expr clamp_index(const ir::Expr& i, int64_t n) {
  return ir::min(ir::max(i, ir::Expr(int64_t(0))), ir::Expr(n - 1));
}

// Cubic convolution weights of the taps at floor(x) - 1 .. floor(x) + 2, t = x - floor(x).
inline std::vector<ir::Expr> cubic_weights(const ir::Expr& t, double a) {
  auto near = [&](const ir::Expr& d) { return ((ir::Expr(a + 2) * d - (a + 3)) * d) * d + 1.0; };  // |d| <= 1
  auto far = [&](const ir::Expr& d) { return ((ir::Expr(a) * d - 5 * a) * d + 8 * a) * d - 4 * a; };  // 1 < |d| < 2
  ir::Expr u = ir::Expr(1.0) - t;
  return {far(t + 1.0), near(t), near(u), far(u + 1.0)};
}

}  // namespace resize_detail

inline te::Tensor resize(const te::Tensor& x, const ResizeSpec& spec, std::string name = "resize") {
  using namespace transform_detail;
  using resize_detail::Axis;
  resize_detail::check_choice(spec.mode, "mode", {"nearest", "linear", "cubic"});
  const std::string& ctm = spec.coordinate_transformation_mode;
  resize_detail::check_choice(ctm, "coordinate_transformation_mode",
                              {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
                               "asymmetric", "tf_crop_and_resize"});
  resize_detail::check_choice(spec.nearest_mode, "nearest_mode",
                              {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"});
  resize_detail::check_choice(spec.keep_aspect_ratio_policy, "keep_aspect_ratio_policy",
                              {"stretch", "not_larger", "not_smaller"});
  DataType t = x.dtype();
  if (spec.mode != "nearest" && !t.is_float())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input X (tensor ", x.name(), ") is ", t, "; mode ", spec.mode, " needs a float type"),
                    {"input X"});

  std::vector<int64_t> axes_in = spec.axes;
  if (axes_in.empty())
    for (size_t d = 0; d < x.rank(); ++d) axes_in.push_back(int64_t(d));
  std::vector<size_t> axes = normalize_axes(axes_in, x.rank(), "axes");
  size_t k = axes.size();
  bool by_sizes = !spec.sizes.empty();
  if (by_sizes == !spec.scales.empty())
    throw UserError("nnvm.ops.input_shape", "exactly one of the inputs scales and sizes must be given (non-empty)",
                    {"input scales"});
  if ((by_sizes ? spec.sizes.size() : spec.scales.size()) != k)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input ", by_sizes ? "sizes" : "scales", " has ",
                            by_sizes ? spec.sizes.size() : spec.scales.size(), " elements, expected ", k,
                            " (one per resized axis)"),
                    {by_sizes ? "input sizes" : "input scales"});
  if (ctm == "tf_crop_and_resize" && spec.roi.size() != 2 * k)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("input roi has ", spec.roi.size(), " elements, expected ", 2 * k,
                            " (starts then ends of the resized axes)"),
                    {"input roi"});

  std::vector<Axis> info(k);
  for (size_t i = 0; i < k; ++i) info[i].n = const_extent(x.shape()[axes[i]], str_cat("resized axis ", axes[i], " of input X"));
  if (by_sizes && spec.keep_aspect_ratio_policy != "stretch") {
    // One scale for every resized axis, the largest (not_larger) or smallest (not_smaller) fit.
    bool smaller = spec.keep_aspect_ratio_policy == "not_larger";
    double s = smaller ? INFINITY : 0;
    for (size_t i = 0; i < k; ++i) {
      double r = double(spec.sizes[i]) / double(info[i].n);
      s = smaller ? std::min(s, r) : std::max(s, r);
    }
    for (auto& a : info) {
      a.scale = s;
      a.m = extent_from_double(std::floor(s * double(a.n) + 0.5), axes[&a - info.data()], "resize");
    }
  } else {
    for (size_t i = 0; i < k; ++i) {
      Axis& a = info[i];
      if (by_sizes) {
        a.m = spec.sizes[i];
        a.scale = double(a.m) / double(a.n);
      } else {
        a.scale = spec.scales[i];
        if (!(a.scale > 0))
          throw UserError("nnvm.ops.input_shape", str_cat("input scales has ", a.scale, " for axis ", axes[i], "; scales must be positive"),
                          {"input scales"});
        a.m = extent_from_double(std::floor(a.scale * double(a.n)), axes[i], "resize");
      }
    }
  }
  for (size_t i = 0; i < k; ++i) {
    check_output_extent(info[i].m, axes[i], "resize");
    if (info[i].n == 0 && info[i].m > 0)  // nothing to read from
      throw UserError("nnvm.ops.input_shape", str_cat("resized axis ", axes[i], " of input X is empty"), {"input X"});
    if (ctm == "tf_crop_and_resize") info[i].roi_start = spec.roi[i], info[i].roi_end = spec.roi[i + k];
  }

  // Axes whose output equals their input index need no taps (true for every mode but
  // tf_crop_and_resize when the extent and scale are unchanged).
  std::vector<size_t> active;
  std::vector<Axis> act;
  std::vector<ir::Expr> shape = x.shape();
  for (size_t i = 0; i < k; ++i) {
    shape[axes[i]] = ir::Expr(info[i].m);
    if (info[i].m == info[i].n && info[i].scale == 1 && ctm != "tf_crop_and_resize") continue;
    active.push_back(axes[i]);
    act.push_back(info[i]);
  }

  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) -> ir::Expr {
        std::vector<ir::Expr> base = exprs(v);
        std::vector<ir::Expr> coord(act.size());
        ir::Expr outside;  // tf_crop_and_resize: some coordinate outside [0, n - 1]
        for (size_t j = 0; j < act.size(); ++j) {
          coord[j] = resize_detail::source_coordinate(v[active[j]], act[j], ctm);
          if (ctm == "tf_crop_and_resize") {
            ir::Expr o = coord[j] < 0.0 || coord[j] > double(act[j].n - 1);
            outside = outside.defined() ? (outside || o) : o;
          }
        }
        ir::Expr value;
        if (spec.mode == "nearest") {
          std::vector<ir::Expr> idx = base;
          for (size_t j = 0; j < act.size(); ++j) {
            const ir::Expr& c = coord[j];
            ir::Expr r;
            if (spec.nearest_mode == "floor") r = ir::call(ir::CallOp::floor, c);
            else if (spec.nearest_mode == "ceil") r = ir::call(ir::CallOp::ceil, c);
            else if (spec.nearest_mode == "round_prefer_ceil") r = ir::call(ir::CallOp::floor, c + 0.5);
            else r = ir::call(ir::CallOp::ceil, c - 0.5);
            idx[active[j]] = resize_detail::clamp_index(ir::cast(dtype::int64, r), act[j].n);
          }
          value = x(idx);
        } else {
          bool cubic = spec.mode == "cubic";
          int64_t taps = cubic ? 4 : 2, first = cubic ? -1 : 0;
          std::vector<ir::Expr> floor_i(act.size());
          std::vector<std::vector<ir::Expr>> weight(act.size());
          for (size_t j = 0; j < act.size(); ++j) {
            ir::Expr f = ir::call(ir::CallOp::floor, coord[j]);
            ir::Expr frac = coord[j] - f;
            floor_i[j] = ir::cast(dtype::int64, f);
            weight[j] = cubic ? resize_detail::cubic_weights(frac, spec.cubic_coeff_a)
                              : std::vector<ir::Expr>{ir::Expr(1.0) - frac, frac};
            if (spec.exclude_outside) {  // drop taps outside the input, renormalize the rest
              ir::Expr total(0.0);
              for (int64_t q = 0; q < taps; ++q) {
                ir::Expr p = floor_i[j] + (first + q);
                weight[j][q] = ir::select(p >= int64_t(0) && p < act[j].n, weight[j][q], ir::Expr(0.0));
                total = total + weight[j][q];
              }
              for (auto& w : weight[j]) w = w / total;
            }
          }
          // Sum over every combination of taps: taps^active terms.
          size_t terms = 1;
          for (size_t j = 0; j < act.size(); ++j) terms *= size_t(taps);
          for (size_t c = 0; c < terms; ++c) {
            std::vector<ir::Expr> idx = base;
            ir::Expr w;
            size_t rest = c;
            for (size_t j = 0; j < act.size(); ++j) {
              int64_t q = int64_t(rest % size_t(taps));
              rest /= size_t(taps);
              idx[active[j]] = resize_detail::clamp_index(floor_i[j] + (first + q), act[j].n);
              w = w.defined() ? w * weight[j][q] : weight[j][q];
            }
            ir::Expr term = ir::cast(dtype::float64, x(idx));
            if (w.defined()) term = term * w;
            value = value.defined() ? value + term : term;
          }
          value = t.is_storage_only() ? ir::cast(t, ir::cast(dtype::float32, value)) : ir::cast(t, value);
        }
        if (outside.defined()) {
          ir::Expr fill = t.is_storage_only() ? ir::cast(t, ir::make_const(dtype::float32, spec.extrapolation_value))
                                              : ir::make_const(t, spec.extrapolation_value);
          value = ir::select(outside, fill, value);
        }
        return value;
      },
      std::move(name));
}

inline OpDef resize_def() {
  return OpDef{
      .name = "resize",
      .importer_names = {"onnx:Resize"},
      .input_names = {"X", "roi", "scales", "sizes"},
      .optional_inputs = 3,
      .value_inputs = {"roi", "scales", "sizes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            using transform_detail::given;
            if (attrs.get_int("antialias", 0) != 0)
              throw UserError("nnvm.ops.attr", "attribute 'antialias' is 1, which nnvm does not support (use 0)",
                              {"attribute antialias"});
            ResizeSpec spec;
            if (given(in, 1)) spec.roi = attrs.get_floats("roi", {});
            if (given(in, 2)) spec.scales = attrs.get_floats("scales", {});
            if (given(in, 3)) spec.sizes = attrs.get_ints("sizes", {});
            spec.axes = attrs.get_ints("axes", {});
            spec.mode = attrs.get_string("mode", "nearest");
            spec.coordinate_transformation_mode = attrs.get_string("coordinate_transformation_mode", "half_pixel");
            spec.nearest_mode = attrs.get_string("nearest_mode", "round_prefer_floor");
            spec.cubic_coeff_a = attrs.get_float("cubic_coeff_a", -0.75);
            spec.exclude_outside = attrs.get_int("exclude_outside", 0) != 0;
            spec.extrapolation_value = attrs.get_float("extrapolation_value", 0.0);
            spec.keep_aspect_ratio_policy = attrs.get_string("keep_aspect_ratio_policy", "stretch");
            return std::vector<te::Tensor>{resize(in[0], spec)};
          },
      .doc = "X resized over axes to value input sizes or floor(extent * scales); mode nearest/linear/cubic",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/resize.hpp
// begin nnvm/ops/transform/scatter.hpp
// The scatters: scatter_elements (ONNX ScatterElements) and scatter_nd (ONNX ScatterND), with
// reduction none, add, mul, max or min.
//
// Written as computes over the output: element p looks at every update that could land on it
// (along `axis` for scatter_elements, every index row for scatter_nd) and combines those whose
// index hits p, in update order. With reduction none the last such update wins (ONNX leaves
// duplicates undefined), found as the largest hitting update position. Negative indices count
// from the end; an index still out of range hits nothing, so its update is dropped.


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace transform_detail {

inline ir::Combiner scatter_combiner(const std::string& reduction) {
  if (reduction == "add") return ir::Combiner::sum;
  if (reduction == "mul") return ir::Combiner::prod;
  if (reduction == "max") return ir::Combiner::max;
  if (reduction == "min") return ir::Combiner::min;
  throw UserError("nnvm.ops.attr",
                  str_cat("attribute 'reduction' is '", reduction, "' but must be none, add, mul, max or min"),
                  {"attribute reduction"});
}

inline void check_scatter_inputs(const te::Tensor& data, const te::Tensor& indices, const te::Tensor& updates,
                                 const std::string& reduction) {
  check_index_dtype(indices, "indices");
  check_same_dtype(data, "data", updates, "updates");
  if (reduction == "none") return;
  scatter_combiner(reduction);
  DataType t = data.dtype();
  if (t.is_bool() || t.is_storage_only() || !t.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input data (tensor ", data.name(), ") is ", t, "; reduction ", reduction,
                            " needs a number type with arithmetic"),
                    {"input data"});
}

// The output: data where no update hits, else the hitting updates combined. `hit(p, r)` is the
// condition that update row `r` (the reduce axes' vars) lands on p; `update(p, r)` reads it;
// `flat(r)` numbers the rows in update order.
using ScatterFn = std::function<ir::Expr(const std::vector<ir::Var>&, const std::vector<ir::Expr>&)>;
inline te::Tensor scatter_compute(const te::Tensor& data, const std::vector<ir::Expr>& rows, const ScatterFn& hit,
                                  const ScatterFn& update, const std::string& reduction, const std::string& name) {
  auto axes = [&] {
    std::vector<ir::IterVar> r;
    for (size_t d = 0; d < rows.size(); ++d) r.push_back(te::reduce_axis(rows[d], str_cat("r", d)));
    return r;
  };
  auto vars = [](const std::vector<ir::IterVar>& r) {
    std::vector<ir::Expr> v;
    for (auto& iv : r) v.push_back(iv->var);
    return v;
  };
  if (reduction != "none") {
    return te::compute(
        data.shape(),
        [&](const std::vector<ir::Var>& p) {
          auto r = axes();
          return ir::Reduce::make(scatter_combiner(reduction), update(p, vars(r)), r, data(exprs(p)), hit(p, vars(r)));
        },
        name);
  }
  te::Tensor last = te::compute(
      data.shape(),
      [&](const std::vector<ir::Var>& p) {
        auto r = axes();
        return ir::Reduce::make(ir::Combiner::max, ravel(vars(r), rows), r, ir::Expr(int64_t(-1)), hit(p, vars(r)));
      },
      name + "_last");
  return te::compute(
      data.shape(),
      [&](const std::vector<ir::Var>& p) {
        ir::Expr l = last(exprs(p));
        return ir::select(l >= int64_t(0), update(p, unravel(ir::max(l, ir::Expr(int64_t(0))), rows)), data(exprs(p)));
      },
      name);
}

inline void schedule_scatter(schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& target) {
  const te::Tensor& y = out[0];
  if (!y.op().reduce_axes.empty()) {
    schedule_reduction(s[y], target);
    return;
  }
  for (auto& in : y.op().inputs)
    if (in->name == y.name() + "_last") schedule_reduction(s[te::Tensor(in)], target);
  schedule_injective(s[y], target);
}

}  // namespace transform_detail

// indices and updates share a shape, of data's rank, no larger than data off `axis`: update u
// at position q goes to data's position q with q[axis] = indices[q].
inline te::Tensor scatter_elements(const te::Tensor& data, const te::Tensor& indices, const te::Tensor& updates,
                                   int64_t axis = 0, const std::string& reduction = "none",
                                   std::string name = "scatter_elements") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", data.rank());
  check_rank(updates, "updates", data.rank());
  check_scatter_inputs(data, indices, updates, reduction);
  size_t a = normalize_axis(axis, data.rank(), "axis");
  // Off `axis`, an output position beyond indices' extent gets no update; reads clamp there.
  std::vector<bool> shorter(data.rank(), false);
  for (size_t d = 0; d < data.rank(); ++d) {
    check_same_extent(indices.shape()[d], updates.shape()[d], str_cat("axis ", d, " of indices and updates"));
    if (d == a || same_extent(indices.shape()[d], data.shape()[d])) continue;
    auto *ci = ir::as_const_int(ir::simplify(indices.shape()[d])), *cd = ir::as_const_int(ir::simplify(data.shape()[d]));
    if (!ci || !cd || *ci > *cd)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("indices axis ", d, " has extent ", ir::to_string(indices.shape()[d]),
                              ", more than data's ", ir::to_string(data.shape()[d])),
                      {"input indices"});
    shorter[d] = true;
  }
  auto at = [&](const std::vector<ir::Var>& p, const ir::Expr& k) {
    std::vector<ir::Expr> q;
    for (size_t d = 0; d < p.size(); ++d)
      q.push_back(d == a ? k : shorter[d] ? ir::min(ir::Expr(p[d]), indices.shape()[d] - int64_t(1)) : ir::Expr(p[d]));
    return q;
  };
  ScatterFn hit = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& r) {
    ir::Expr h = wrap_negative(indices(at(p, r[0])), data.shape()[a]) == ir::Expr(p[a]);
    for (size_t d = 0; d < p.size(); ++d)
      if (shorter[d]) h = h && p[d] < indices.shape()[d];
    return h;
  };
  ScatterFn update = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& r) {
    return updates(at(p, r[0]));
  };
  return scatter_compute(data, {indices.shape()[a]}, hit, update, reduction, std::move(name));
}

// indices' last axis (constant extent K <= data's rank) holds coordinates of data's first K
// axes; updates has shape indices.shape[:-1] + data.shape[K:].
inline te::Tensor scatter_nd(const te::Tensor& data, const te::Tensor& indices, const te::Tensor& updates,
                             const std::string& reduction = "none", std::string name = "scatter_nd") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", 1, SIZE_MAX);
  check_scatter_inputs(data, indices, updates, reduction);
  size_t q = indices.rank(), r = data.rank();
  int64_t k = const_extent(indices.shape()[q - 1], "the last axis of indices");
  if (k < 1 || size_t(k) > r)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axis of indices has extent ", k, " but data has rank ", r), {"input indices"});
  std::vector<ir::Expr> rows(indices.shape().begin(), indices.shape().end() - 1);
  std::vector<ir::Expr> want = rows;
  want.insert(want.end(), data.shape().begin() + k, data.shape().end());
  check_rank(updates, "updates", want.size());
  for (size_t d = 0; d < want.size(); ++d)
    check_same_extent(updates.shape()[d], want[d], str_cat("axis ", d, " of updates and indices.shape[:-1] + data.shape[K:]"));
  // One index row (indices of rank 1) still needs a reduce axis: a single row of extent 1.
  bool single = rows.empty();
  if (single) rows.emplace_back(int64_t(1));
  auto row = [&](const std::vector<ir::Expr>& m) {
    return single ? std::vector<ir::Expr>{} : m;
  };
  ScatterFn hit = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& m) {
    std::vector<ir::Expr> at = row(m);
    at.emplace_back(int64_t(0));
    ir::Expr h;
    for (int64_t j = 0; j < k; ++j) {
      at.back() = ir::Expr(j);
      ir::Expr e = wrap_negative(indices(at), data.shape()[size_t(j)]) == ir::Expr(p[size_t(j)]);
      h = h.defined() ? (h && e) : e;
    }
    return h;
  };
  ScatterFn update = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& m) {
    std::vector<ir::Expr> at = row(m);
    at.insert(at.end(), p.begin() + k, p.end());
    return updates(at);
  };
  return scatter_compute(data, rows, hit, update, reduction, std::move(name));
}

inline OpDef scatter_elements_def() {
  return OpDef{
      .name = "scatter_elements",
      .importer_names = {"onnx:ScatterElements", "onnx:Scatter"},
      .input_names = {"data", "indices", "updates"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                scatter_elements(in[0], in[1], in[2], attrs.get_int("axis", 0), attrs.get_string("reduction", "none"))};
          },
      .cpu_schedule = transform_detail::schedule_scatter,
      .doc = "data with updates written at indices along attribute axis (attribute reduction none/add/mul/max/min)",
  };
}

inline OpDef scatter_nd_def() {
  return OpDef{
      .name = "scatter_nd",
      .importer_names = {"onnx:ScatterND"},
      .input_names = {"data", "indices", "updates"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{scatter_nd(in[0], in[1], in[2], attrs.get_string("reduction", "none"))};
          },
      .cpu_schedule = transform_detail::schedule_scatter,
      .doc = "data with updates written at the coordinates in indices' last axis (attribute reduction)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/scatter.hpp
// begin nnvm/ops/transform/shape.hpp
// shape (ONNX Shape) and size (ONNX Size): the input's extents as int64 data. Neither reads the
// input's elements; a symbolic extent becomes the size variable's value at run time.

#include <optional>


NNVM_BEGIN_NAMESPACE
namespace ops {

// Extents start .. end-1 (ONNX's start/end: negative counts from the end, both clamp to
// [0, rank]). An empty range is "nnvm.ops.input_shape": nnvm tensors cannot be empty.
inline te::Tensor shape_of(const te::Tensor& x, int64_t start = 0, std::optional<int64_t> end = std::nullopt,
                           std::string name = "shape") {
  int64_t r = int64_t(x.rank());
  auto clamp = [r](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + r : i, 0, r); };
  int64_t s = clamp(start), e = end ? clamp(*end) : r;
  if (e - s <= 0)
    throw UserError("nnvm.ops.input_shape", str_cat("extents ", s, " to ", e, " of a rank-", r,
                                                    " input are none: the shape would be an empty tensor"));
  std::vector<ir::Expr> dims(x.shape().begin() + s, x.shape().begin() + e);
  return te::compute(
      {ir::Expr(e - s)},
      [&](const std::vector<ir::Var>& v) {
        ir::Expr out = ir::cast(dtype::int64, dims.back());
        for (size_t d = dims.size() - 1; d-- > 0;)
          out = ir::select(v[0] == int64_t(d), ir::cast(dtype::int64, dims[d]), out);
        return out;
      },
      std::move(name));
}

// The element count as an int64 scalar.
inline te::Tensor size_of(const te::Tensor& x, std::string name = "size") {
  ir::Expr n = ir::cast(dtype::int64, transform_detail::product(x.shape()));
  return te::compute({}, [&](const std::vector<ir::Var>&) { return n; }, std::move(name));
}

inline OpDef shape_def() {
  return OpDef{
      .name = "shape",
      .importer_names = {"onnx:Shape"},
      .input_names = {"data"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::optional<int64_t> end;
            if (attrs.has("end")) end = attrs.get_int("end");
            return std::vector<te::Tensor>{shape_of(in[0], attrs.get_int("start", 0), end)};
          },
      .doc = "the extents of data (attributes start, end) as int64, without reading its elements",
  };
}

inline OpDef size_def() {
  return OpDef{
      .name = "size",
      .importer_names = {"onnx:Size"},
      .input_names = {"data"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs&) { return std::vector<te::Tensor>{size_of(in[0])}; },
      .doc = "the element count of data as an int64 scalar, without reading its elements",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/shape.hpp
// begin nnvm/ops/transform/slice.hpp
// slice (ONNX Slice, opset 13+: starts, ends, axes and steps are value inputs). Per sliced axis
// of extent n: a negative start or end counts from the end, then both clamp as ONNX says
// (step > 0: [0, n]; step < 0: start to [0, n - 1], end to [-1, n - 1]), and the output takes
// ceil((end - start) / step) elements start, start + step, ... (possibly none: an empty result
// is valid, as in ONNX).


NNVM_BEGIN_NAMESPACE
namespace ops {

struct SliceSpec {
  std::vector<int64_t> starts, ends, axes, steps;  // axes and steps may be empty (defaults)
};

inline te::Tensor slice(const te::Tensor& x, const SliceSpec& spec, std::string name = "slice") {
  using namespace transform_detail;
  size_t count = spec.starts.size();
  auto same_length = [&](const std::vector<int64_t>& v, const char* what) {
    if (v.size() != count)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", what, " has ", v.size(), " elements but starts has ", count),
                      {str_cat("input ", what)});
  };
  same_length(spec.ends, "ends");
  std::vector<int64_t> axes_in = spec.axes;
  if (axes_in.empty())
    for (size_t k = 0; k < count; ++k) axes_in.push_back(int64_t(k));
  same_length(axes_in, "axes");
  if (!spec.steps.empty()) same_length(spec.steps, "steps");
  std::vector<size_t> axes = normalize_axes(axes_in, x.rank(), "axes");
  std::vector<ir::Expr> shape = x.shape();
  std::vector<int64_t> first(x.rank(), 0), stride(x.rank(), 1);
  for (size_t k = 0; k < count; ++k) {
    size_t a = axes[k];
    int64_t step = spec.steps.empty() ? 1 : spec.steps[k];
    if (step == 0) throw UserError("nnvm.ops.attr", str_cat("steps[", k, "] is 0"), {"input steps"});
    int64_t n = const_extent(x.shape()[a], str_cat("sliced axis ", a, " of input data"));
    int64_t s = spec.starts[k], e = spec.ends[k];
    if (s < 0) s += n;
    if (e < 0) e += n;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
    } else {
      s = std::clamp<int64_t>(s, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
    }
    int64_t len = step > 0 ? (e - s + step - 1) / step : (s - e + (-step) - 1) / (-step);
    check_output_extent(len, a, str_cat("slice from ", s, " to ", e, " by ", step));
    shape[a] = ir::Expr(len);
    first[a] = s;
    stride[a] = step;
  }
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < v.size(); ++d)
          idx.push_back(first[d] == 0 && stride[d] == 1 ? ir::Expr(v[d]) : v[d] * stride[d] + first[d]);
        return x(idx);
      },
      std::move(name));
}

inline OpDef slice_def() {
  return OpDef{
      .name = "slice",
      .importer_names = {"onnx:Slice"},
      .input_names = {"data", "starts", "ends", "axes", "steps"},
      .optional_inputs = 2,
      .value_inputs = {"starts", "ends", "axes", "steps"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            SliceSpec spec{attrs.get_ints("starts"), attrs.get_ints("ends"), {}, {}};
            if (transform_detail::given(in, 3)) spec.axes = attrs.get_ints("axes");
            if (transform_detail::given(in, 4)) spec.steps = attrs.get_ints("steps");
            return std::vector<te::Tensor>{slice(in[0], spec)};
          },
      .doc = "data[starts:ends:steps] along axes (value inputs; negative indices and steps, ONNX clamping)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/slice.hpp
// begin nnvm/ops/transform/split.hpp
// split (ONNX Split, opset 18): the input cut into consecutive pieces along `axis`, one output
// per piece.
//
// How many outputs: the value input `split` lists the piece sizes; otherwise the attribute
// `num_outputs` gives the count and pieces are ceil(n / num_outputs) long, the last one shorter
// (opset 18). An opset-13 node with neither has as many equal pieces as it has outputs, which
// the op cannot see, so the importer sets `num_outputs` from the node's output count; an
// uneven extent then gets the opset-18 pieces instead of ONNX's error.


NNVM_BEGIN_NAMESPACE
namespace ops {

// One output per entry of `sizes`, which must be positive and sum to the axis's extent.
inline std::vector<te::Tensor> split(const te::Tensor& x, int64_t axis, const std::vector<int64_t>& sizes,
                                     std::string name = "split") {
  using namespace transform_detail;
  check_rank(x, "input", 1, SIZE_MAX);
  size_t a = normalize_axis(axis, x.rank(), "axis");
  int64_t n = const_extent(x.shape()[a], str_cat("the split axis ", a, " of input"));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s <= 0)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("split sizes ", list_string(sizes), " hold ", s, "; pieces must not be empty"),
                      {"input split"});
    total += s;
  }
  if (sizes.empty() || total != n)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("split sizes ", list_string(sizes), " sum to ", total, " but axis ", a, " has extent ", n),
                    {"input split"});
  std::vector<te::Tensor> out;
  int64_t begin = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::vector<ir::Expr> shape = x.shape();
    shape[a] = ir::Expr(sizes[k]);
    out.push_back(te::compute(
        shape,
        [&](const std::vector<ir::Var>& v) {
          std::vector<ir::Expr> idx = exprs(v);
          idx[a] = idx[a] + begin;
          return x(idx);
        },
        str_cat(name, k)));
    begin += sizes[k];
  }
  return out;
}

// The opset-18 pieces for `count` outputs over extent n.
inline std::vector<int64_t> split_sizes(int64_t n, int64_t count) {
  if (count <= 0 || count > n)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'num_outputs' is ", count, " but must lie in [1, ", n,
                            "] (the extent of the split axis)"),
                    {"attribute num_outputs"});
  int64_t piece = (n + count - 1) / count;
  std::vector<int64_t> sizes(size_t(count), piece);
  sizes.back() = n - piece * (count - 1);
  if (sizes.back() <= 0)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'num_outputs' is ", count, ": pieces of ", piece, " leave nothing for the last of ",
                            "the ", n, " elements"),
                    {"attribute num_outputs"});
  return sizes;
}

inline OpDef split_def() {
  return OpDef{
      .name = "split",
      .importer_names = {"onnx:Split"},
      .input_names = {"input", "split"},
      .optional_inputs = 1,
      .value_inputs = {"split"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            int64_t axis = attrs.get_int("axis", 0);
            if (transform_detail::given(in, 1)) return split(in[0], axis, attrs.get_ints("split"));
            if (!attrs.has("num_outputs"))
              throw UserError("nnvm.ops.attr",
                              "split needs value input split or attribute num_outputs (the importer sets it from the "
                              "node's output count)",
                              {"attribute num_outputs"});
            check_rank(in[0], "input", 1, SIZE_MAX);
            size_t a = normalize_axis(axis, in[0].rank(), "axis");
            int64_t n = transform_detail::const_extent(in[0].shape()[a], str_cat("the split axis ", a, " of input"));
            return split(in[0], axis, split_sizes(n, attrs.get_int("num_outputs")));
          },
      .doc = "input cut along attribute axis into pieces: value input split, or attribute num_outputs "
             "(ceil-sized pieces)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/split.hpp
// begin nnvm/ops/transform/squeeze.hpp
// squeeze and unsqueeze (ONNX Squeeze/Unsqueeze, opset 13+: axes is an input): remove or insert
// axes of extent 1. Each is an index mapping, with no division.

#include <optional>


NNVM_BEGIN_NAMESPACE
namespace ops {

// Without `axes`, removes every axis whose extent is the constant 1 (a symbolic extent stays).
// A listed axis whose extent is not 1 is "nnvm.ops.input_shape".
inline te::Tensor squeeze(const te::Tensor& x, const std::optional<std::vector<int64_t>>& axes,
                          std::string name = "squeeze") {
  using namespace transform_detail;
  std::vector<bool> drop(x.rank(), false);
  if (axes) {
    for (size_t a : normalize_axes(*axes, x.rank(), "axes")) {
      if (!ir::is_const_int(ir::simplify(x.shape()[a]), 1))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("axes names axis ", a, " of input data, whose extent is ",
                                ir::to_string(x.shape()[a]), ", not 1"),
                        {"input axes"});
      drop[a] = true;
    }
  } else {
    for (size_t d = 0; d < x.rank(); ++d) drop[d] = ir::is_const_int(ir::simplify(x.shape()[d]), 1);
  }
  std::vector<ir::Expr> shape;
  for (size_t d = 0; d < x.rank(); ++d)
    if (!drop[d]) shape.push_back(x.shape()[d]);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        size_t k = 0;
        for (size_t d = 0; d < x.rank(); ++d) idx.push_back(drop[d] ? ir::Expr(int64_t(0)) : ir::Expr(v[k++]));
        return x(idx);
      },
      std::move(name));
}

// Inserts extent-1 axes at the positions `axes` name in the output (rank + axes.size()).
inline te::Tensor unsqueeze(const te::Tensor& x, const std::vector<int64_t>& axes, std::string name = "unsqueeze") {
  using namespace transform_detail;
  size_t rank = x.rank() + axes.size();
  std::vector<bool> added(rank, false);
  for (size_t a : normalize_axes(axes, rank, "axes")) added[a] = true;
  std::vector<ir::Expr> shape;
  for (size_t d = 0, k = 0; d < rank; ++d) shape.push_back(added[d] ? ir::Expr(int64_t(1)) : x.shape()[k++]);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx;
        for (size_t d = 0; d < rank; ++d)
          if (!added[d]) idx.push_back(v[d]);
        return x(idx);
      },
      std::move(name));
}

inline OpDef squeeze_def() {
  return OpDef{
      .name = "squeeze",
      .importer_names = {"onnx:Squeeze"},
      .input_names = {"data", "axes"},
      .optional_inputs = 1,
      .value_inputs = {"axes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            std::optional<std::vector<int64_t>> axes;
            if (transform_detail::given(in, 1)) axes = attrs.get_ints("axes");
            return std::vector<te::Tensor>{squeeze(in[0], axes)};
          },
      .doc = "data without the extent-1 axes named by value input axes (without axes: every constant 1)",
  };
}

inline OpDef unsqueeze_def() {
  return OpDef{
      .name = "unsqueeze",
      .importer_names = {"onnx:Unsqueeze"},
      .input_names = {"data", "axes"},
      .value_inputs = {"axes"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{unsqueeze(in[0], attrs.get_ints("axes"))};
          },
      .doc = "data with extent-1 axes inserted at the output positions named by value input axes",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/squeeze.hpp
// begin nnvm/ops/transform/transpose.hpp
// transpose (ONNX Transpose): output axis d is input axis perm[d]; perm defaults to reversing
// the axes.


NNVM_BEGIN_NAMESPACE
namespace ops {

// `perm` empty: reversed axes. Otherwise a permutation of [0, rank) ("nnvm.ops.attr").
inline te::Tensor transpose(const te::Tensor& x, std::vector<int64_t> perm = {}, std::string name = "transpose") {
  size_t rank = x.rank();
  if (perm.empty())
    for (size_t d = rank; d-- > 0;) perm.push_back(int64_t(d));
  std::vector<bool> seen(rank, false);
  bool ok = perm.size() == rank;
  for (int64_t p : perm) {
    ok = ok && p >= 0 && p < int64_t(rank) && !seen[size_t(p)];
    if (ok) seen[size_t(p)] = true;
  }
  if (!ok)
    throw UserError("nnvm.ops.attr",
                    str_cat("attribute 'perm' is ", transform_detail::list_string(perm),
                            " but must be a permutation of the ", rank, " axes of input data"),
                    {"attribute perm"});
  std::vector<ir::Expr> shape;
  for (int64_t p : perm) shape.push_back(x.shape()[size_t(p)]);
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::vector<ir::Expr> idx(rank);
        for (size_t d = 0; d < rank; ++d) idx[size_t(perm[d])] = v[d];
        return x(idx);
      },
      std::move(name));
}

inline OpDef transpose_def() {
  return OpDef{
      .name = "transpose",
      .importer_names = {"onnx:Transpose"},
      .input_names = {"data"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{transpose(in[0], attrs.get_ints("perm", {}))};
          },
      .doc = "data with its axes permuted by attribute perm (default: reversed)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/transpose.hpp
// begin nnvm/ops/transform/trilu.hpp
// trilu (ONNX Trilu): the upper (upper = 1, default) or lower triangle of each matrix in the
// last two axes, from diagonal k (value input, default 0; positive k is above the main
// diagonal); other elements become 0.


NNVM_BEGIN_NAMESPACE
namespace ops {

inline te::Tensor trilu(const te::Tensor& x, bool upper = true, int64_t k = 0, std::string name = "trilu") {
  check_rank(x, "input", 2, SIZE_MAX);
  DataType t = x.dtype();
  ir::Expr zero = t.is_storage_only() ? ir::cast(t, ir::make_zero(dtype::float32)) : ir::make_zero(t);
  size_t r = x.rank();
  return te::compute(
      x.shape(),
      [&](const std::vector<ir::Var>& v) {
        ir::Expr diag = v[r - 1] - v[r - 2];
        ir::Expr keep = upper ? diag >= k : diag <= k;
        return ir::select(keep, x(transform_detail::exprs(v)), zero);
      },
      std::move(name));
}

inline OpDef trilu_def() {
  return OpDef{
      .name = "trilu",
      .importer_names = {"onnx:Trilu"},
      .input_names = {"input", "k"},
      .optional_inputs = 1,
      .value_inputs = {"k"},
      .pattern = OpPattern::injective,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            int64_t k = 0;
            if (transform_detail::given(in, 1)) {
              const auto& ks = attrs.get_ints("k");
              if (ks.size() != 1)
                throw UserError("nnvm.ops.input_shape", str_cat("input k has ", ks.size(), " elements, expected one"),
                                {"input k"});
              k = ks[0];
            }
            return std::vector<te::Tensor>{trilu(in[0], attrs.get_int("upper", 1) != 0, k)};
          },
      .doc = "upper (attribute upper = 1) or lower triangle of the last two axes from diagonal k, zeros elsewhere",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/trilu.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> transform_ops() {
  return {
      cast_def(),
      cast_like_def(),
      center_crop_pad_def(),
      concat_def(),
      constant_of_shape_def(),
      depth_to_space_def(),
      expand_def(),
      eye_like_def(),
      flatten_def(),
      gather_def(),
      gather_elements_def(),
      gather_nd_def(),
      grid_sample_def(),
      one_hot_def(),
      pad_def(),
      range_def(),
      reshape_def(),
      resize_def(),
      scatter_elements_def(),
      scatter_nd_def(),
      shape_def(),
      size_def(),
      slice_def(),
      space_to_depth_def(),
      split_def(),
      squeeze_def(),
      tile_def(),
      transpose_def(),
      trilu_def(),
      unsqueeze_def(),
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/transform/family.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

inline std::vector<OpDef> builtin_ops() {
  std::vector<OpDef> all;
  for (auto family : {broadcast_ops, conv_ops, elementwise_ops, nn_ops, quant_ops, reduce_ops, transform_ops})
    for (auto& def : family()) all.push_back(std::move(def));
  std::sort(all.begin(), all.end(), [](const OpDef& a, const OpDef& b) { return a.name < b.name; });
  return all;
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/builtin.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace detail

class OpRegistry {
 public:
  // An empty registry; with_builtins() for one holding the built-in ops.
  OpRegistry() = default;
  OpRegistry(const OpRegistry& other) {
    std::shared_lock lock(other.mutex_);
    by_name_ = other.by_name_;
    by_importer_name_ = other.by_importer_name_;
  }
  OpRegistry& operator=(const OpRegistry&) = delete;

  static OpRegistry with_builtins() {
    OpRegistry r;
    for (auto& def : builtin_ops()) r.register_op(std::move(def));
    return r;
  }

  // Adds `def` and returns the stored definition. Throws UserError "nnvm.ops.invalid" for a
  // malformed definition (see validate) and "nnvm.ops.duplicate" when its name or one of its
  // importer names is taken; on error nothing is added.
  const OpDef& register_op(OpDef def) {
    validate(def);
    std::unique_lock lock(mutex_);
    if (by_name_.count(def.name))
      throw UserError("nnvm.ops.duplicate", str_cat("an op named '", def.name, "' is already registered"),
                      {"op " + def.name});
    for (auto& n : def.importer_names)
      if (auto it = by_importer_name_.find(n); it != by_importer_name_.end())
        throw UserError("nnvm.ops.duplicate",
                        str_cat("importer name '", n, "' already belongs to op '", it->second->name, "'"),
                        {"op " + def.name});
    auto stored = std::make_shared<const OpDef>(std::move(def));
    by_name_.emplace(stored->name, stored);
    for (auto& n : stored->importer_names) by_importer_name_.emplace(n, stored);
    return *stored;
  }

  // nullptr when absent.
  const OpDef* find(std::string_view name) const {
    std::shared_lock lock(mutex_);
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second.get();
  }
  const OpDef* find_by_importer_name(std::string_view importer_name) const {
    std::shared_lock lock(mutex_);
    auto it = by_importer_name_.find(importer_name);
    return it == by_importer_name_.end() ? nullptr : it->second.get();
  }
  // Like find, but a missing op is UserError "nnvm.ops.unknown" (with a close name, if any).
  const OpDef& get(std::string_view name) const {
    if (auto* d = find(name)) return *d;
    throw UserError("nnvm.ops.unknown", str_cat("no op named '", name, "' is registered", suggestion(name, names())));
  }
  const OpDef& get_by_importer_name(std::string_view importer_name) const {
    if (auto* d = find_by_importer_name(importer_name)) return *d;
    throw UserError("nnvm.ops.unknown", str_cat("no op answers to importer name '", importer_name, "'",
                                                suggestion(importer_name, importer_names())));
  }

  // Sorted.
  std::vector<std::string> names() const {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    for (auto& [n, _] : by_name_) out.push_back(n);
    return out;
  }
  std::vector<std::string> importer_names() const {
    std::shared_lock lock(mutex_);
    std::vector<std::string> out;
    for (auto& [n, _] : by_importer_name_) out.push_back(n);
    return out;
  }
  // Every definition, sorted by name.
  std::vector<const OpDef*> ops() const {
    std::shared_lock lock(mutex_);
    std::vector<const OpDef*> out;
    for (auto& [_, d] : by_name_) out.push_back(d.get());
    return out;
  }
  size_t size() const {
    std::shared_lock lock(mutex_);
    return by_name_.size();
  }

 private:
  static std::string suggestion(std::string_view wanted, const std::vector<std::string>& known) {
    std::string best;
    size_t best_d = 3;  // only close names: a typo, not an unrelated op
    for (auto& k : known)
      if (size_t d = detail::edit_distance(wanted, k); d < best_d) best_d = d, best = k;
    return best.empty() ? "" : str_cat("; did you mean '", best, "'?");
  }

  mutable std::shared_mutex mutex_;
  std::map<std::string, std::shared_ptr<const OpDef>, std::less<>> by_name_, by_importer_name_;
};

// The process-wide registry, holding the built-in ops from its first use.
inline OpRegistry& default_registry() {
  static OpRegistry registry = OpRegistry::with_builtins();
  return registry;
}

// The one call that makes a user's op visible to everything that uses the default registry
// (the graph layer, importers, ops::get_op). Returns the stored definition.
inline const OpDef& register_op(OpDef def) { return default_registry().register_op(std::move(def)); }
// Lookups in the default registry.
inline const OpDef& get_op(std::string_view name) { return default_registry().get(name); }
inline const OpDef& get_op_by_importer_name(std::string_view importer_name) {
  return default_registry().get_by_importer_name(importer_name);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/registry.hpp
// begin nnvm/ops/build.hpp
// From an op definition to a runnable kernel: placeholders for the inputs, the op's compute, its
// schedule for the target's family (its own, or the family's generic recipe), lowering; then,
// for the host CPU, the C JIT. This is the path the graph executor takes for each (fused) op,
// and the quickest way to try a new op.

// begin nnvm/ops/schedule_generic.hpp
// The schedule an op gets on a target: the op's own for the target's family when it has one,
// else the family's generic recipe for the op's pattern. Adding a family means writing its
// recipes here; op files change only where an op wants a dedicated schedule.
//
//   family  elementwise / broadcast / injective   reduction                 out_fusable / opaque
//   cpu     vectorized innermost, parallel rest   parallel over outputs     plain loops
//   gpu     one thread per output element         one thread per output     one thread per output
//   mcu     plain loops (one thread, small code); internal stages in place when optimizing for
//           size, and an epilogue's producer computed inside it (schedule_mcu.hpp)
//   wasm    vectorized innermost, no threads      plain loops               plain loops
//           (with -msimd128, Target::recipe_family() gives WebAssembly the CPU's recipes)

#include <string>
#include <vector>

// begin nnvm/ops/schedule_gpu.hpp
// Schedule building blocks for GPUs (the GPU family's generic recipes use them): a stage's data-
// parallel axes become one thread per output element, in blocks of the target's thread limit.
// The lowering guards the last block when the thread grid does not divide the extent.

#include <algorithm>


NNVM_BEGIN_NAMESPACE
namespace ops {

// One thread per element of the stage's output: its axes fused, split by the block size,
// bound to blockIdx.x and threadIdx.x. A reduction stage runs its whole reduction in the
// thread (cross-thread reductions are the dedicated schedules' job). A stage without axes (a
// scalar) is left alone.
inline void gpu_schedule_injective(schedule::Stage st, const target::Target& target) {
  const auto& axes = st.tensor().op().axis;
  if (axes.empty()) return;
  ir::IterVar fused = axes.size() >= 2 ? st.fuse(axes) : axes.front();
  auto [block, thread] = st.split(fused, std::max(1, target.gpu.max_threads_per_block));
  st.bind(block, gpu::block_x);
  st.bind(thread, gpu::thread_x);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/schedule_gpu.hpp
// begin nnvm/ops/schedule_mcu.hpp
// The microcontroller family's recipes (schedule_generic.hpp): one thread, no SIMD unless the
// core has it, and RAM as the scarce resource. Every stage keeps plain loops; what a recipe
// decides is which intermediate values get a buffer:
//   - an op's internal injective stages (a conv's padded input, a pool's window sum feeding a
//     division) are computed where they are read when Target::opt_for is size, and keep their
//     buffer (a faster inner loop, more RAM) when it is speed. Stages that call math functions
//     (softmax's exp) keep their buffer either way: recomputing them costs more than it saves;
//   - an out-fusable op followed by elementwise ops (conv + bias + relu) computes each of its
//     output elements inside the epilogue's innermost loop (TVM's compute_at), so its result
//     needs one element of storage instead of a whole tensor.

#include <vector>


NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// Whether computing `e` again at each use is cheap: no math-library calls.
inline bool calls_no_math(const ir::Expr& e) {
  struct Scan : ir::IRVisitor {
    bool found = false;
    using ir::IRVisitor::visit;
    void visit(const ir::Call* op) override {
      found = true;
      ir::IRVisitor::visit(op);
    }
  } scan;
  scan.visit_expr(e);
  return !scan.found;
}
}  // namespace detail

// The internal stages of the stages computing `outputs` that opt_for size computes in place:
// compute stages that are not outputs, reduce nothing and call no math function.
inline void mcu_inline_intermediates(schedule::Schedule& s, const std::vector<te::Tensor>& outputs,
                                     const target::Target& target) {
  if (target.opt_for != target::OptFor::size) return;
  for (auto& t : te::post_order(outputs)) {
    const te::OperationNode& op = t.op();
    if (op.kind != te::OpKind::compute || !op.reduce_axes.empty() || !detail::calls_no_math(op.body)) continue;
    schedule::Stage st = s[t];
    if (!st.node().is_output && st.node().attach == schedule::AttachKind::root) st.compute_inline();
  }
}

// The fused recipe (ops::FusedScheduleFn) for any out-fusable op on a microcontroller: its one
// output computed element by element in the epilogue's innermost loop.
inline bool mcu_fused_schedule(schedule::Schedule& s, const std::vector<te::Tensor>& outputs, const te::Tensor& epilogue,
                               const target::Target& target) {
  if (outputs.size() != 1 || epilogue.op().axis.empty()) return false;
  mcu_inline_intermediates(s, outputs, target);
  schedule::Stage st = s[outputs[0]];
  if (st.node().attach != schedule::AttachKind::root) return false;
  st.compute_at(s[epilogue], epilogue.op().axis.back());
  return true;
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/schedule_mcu.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

// The op's dedicated schedule for `family`; empty when it has none.
inline const ScheduleFn& own_schedule(const OpDef& def, target::Family family) {
  static const ScheduleFn none;
  switch (family) {
    case target::Family::cpu: return def.cpu_schedule;
    case target::Family::gpu: return def.gpu_schedule;
    case target::Family::mcu:
    case target::Family::wasm: return none;
  }
  return none;
}

// The op's schedule for `family` when elementwise ops follow it in one kernel; empty when it has
// none. CPU ops bring their own; on a microcontroller every op takes the family's.
inline const FusedScheduleFn& own_fused_schedule(const OpDef& def, target::Family family) {
  static const FusedScheduleFn none, mcu = mcu_fused_schedule;
  return family == target::Family::cpu ? def.cpu_fused_schedule : family == target::Family::mcu ? mcu : none;
}

// The family's generic recipe for `pattern`, applied to the stages that compute `outputs`
// (every compute stage between them and the placeholders, for the GPU, whose kernels have no
// serial host loops to run an unscheduled stage in).
inline void generic_schedule(OpPattern pattern, schedule::Schedule& s, const std::vector<te::Tensor>& outputs,
                             const target::Target& target) {
  const bool data_parallel =
      pattern == OpPattern::elementwise || pattern == OpPattern::broadcast || pattern == OpPattern::injective;
  switch (target.recipe_family()) {
    case target::Family::cpu:
    case target::Family::wasm:
      for (auto& o : outputs) {
        if (data_parallel) schedule_injective(s[o], target);
        else if (pattern == OpPattern::reduction) schedule_reduction(s[o], target);
      }
      return;
    case target::Family::gpu:
      for (auto& t : te::post_order(outputs)) {
        if (t.op().kind != te::OpKind::compute) continue;
        schedule::Stage st = s[t];
        // Stages an op's own schedule already arranged (an epilogue's producer) are left as they are.
        if (st.node().attach == schedule::AttachKind::root && st.node().relations.empty())
          gpu_schedule_injective(st, target);
      }
      return;
    case target::Family::mcu: mcu_inline_intermediates(s, outputs, target); return;
  }
}

// How apply_schedule scheduled, for a kernel's origin line ("cpu schedule", "generic gpu
// recipe for injective ops").
inline std::string schedule_source(const OpDef& def, const target::Target& target) {
  const target::Family family = target.recipe_family();
  if (own_schedule(def, family)) return str_cat(target::family_name(family), " schedule");
  return str_cat("generic ", target::family_name(family), " recipe for ", pattern_name(def.pattern), " ops");
}

// Schedules the stages `def`'s compute made (its `outputs`) for `target`.
inline void apply_schedule(const OpDef& def, schedule::Schedule& s, const std::vector<te::Tensor>& outputs,
                           const target::Target& target) {
  if (const ScheduleFn& own = own_schedule(def, target.recipe_family())) own(s, outputs, target);
  else generic_schedule(def.pattern, s, outputs, target);
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/schedule_generic.hpp
// begin nnvm/target/parse.hpp
// `--target` strings to typed targets and back: the one place a target's spelling is read.
//
//   c | llvm [-mcpu=NAME]            host CPU (NAME as GCC's -march / LLVM's -mcpu; default native)
//   cuda [-arch=sm_NN]               NVIDIA GPU through CUDA C++
//   opencl | metal                   GPU through OpenCL C 1.2 / the Metal Shading Language
//   c-standalone [-mcpu=cortex-mN]   microcontroller: self-contained C99
//   wasm [-msimd128]                 WebAssembly, with 128-bit SIMD when asked
//
// Parsing checks the words; whether this build has the emitter is the caller's question
// (nnvmc answers "not built yet" for the back ends later issues add).

#include <sstream>
#include <string>


NNVM_BEGIN_NAMESPACE
namespace target {

namespace detail {
// Vector width of a microcontroller core: only Cortex-M55/M85 (Helium) have vector registers.
inline int mcu_vector_bits(const std::string& cpu) {
  static const char* const plain[] = {"cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m33"};
  for (const char* n : plain)
    if (cpu == n) return 0;
  if (cpu == "cortex-m55" || cpu == "cortex-m85") return 128;
  std::string known;
  for (const char* n : plain) known += std::string(n) + ", ";
  throw UserError("nnvm.target.cpu", "unknown microcontroller '" + cpu + "'; known: " + known + "cortex-m55, cortex-m85");
}
}  // namespace detail

// Throws UserError "nnvm.target.parse" naming the word it cannot read, and "nnvm.target.cpu"
// for an unknown CPU.
inline Target parse_target(const std::string& spec) {
  std::istringstream in(spec);
  std::string name, word;
  in >> name;
  Emitter emitter{};
  bool found = false;
  std::string names;
  for (Emitter e : all_emitters) {
    names += (names.empty() ? "" : ", ") + std::string(emitter_name(e));
    if (name == emitter_name(e)) emitter = e, found = true;
  }
  if (!found)
    throw UserError("nnvm.target.parse", "target '" + printable(spec) + "': unknown back end '" + printable(name) +
                                             "'; known: " + names);
  std::string cpu, arch;
  bool simd128 = false;
  const Family family = default_family(emitter);
  while (in >> word) {
    bool takes_cpu = family == Family::cpu || family == Family::mcu;
    if (takes_cpu && word.rfind("-mcpu=", 0) == 0 && word.size() > 6) {
      cpu = word.substr(6);
    } else if (family == Family::wasm && word == "-msimd128") {
      simd128 = true;
    } else if (emitter == Emitter::cuda && word.rfind("-arch=sm_", 0) == 0 && word.size() > 9 &&
               word.find_first_not_of("0123456789", 9) == std::string::npos) {
      arch = word.substr(6);
    } else {
      std::string expected = takes_cpu                   ? "-mcpu=NAME, e.g. llvm -mcpu=x86-64-v3"
                             : emitter == Emitter::cuda ? "-arch=sm_NN, e.g. cuda -arch=sm_90"
                             : family == Family::wasm   ? "-msimd128"
                                                        : std::string("no options for ") + emitter_name(emitter);
      throw UserError("nnvm.target.parse",
                      "target '" + printable(spec) + "': unknown option '" + printable(word) + "' (expected " + expected + ")");
    }
  }
  switch (family) {
    case Family::cpu: return Target::for_cpu(emitter, cpu);
    case Family::gpu: return Target::for_gpu(emitter, arch);
    case Family::mcu: {
      Target t;
      t.family = Family::mcu;
      t.emitter = emitter;
      t.cpu = cpu;
      t.vector_bits = cpu.empty() ? 0 : detail::mcu_vector_bits(cpu);
      t.vector_registers = t.vector_bits ? 8 : 0;
      return t;
    }
    case Family::wasm: {
      Target t;
      t.family = Family::wasm;
      t.emitter = emitter;
      t.vector_bits = simd128 ? 128 : 0;
      t.vector_registers = simd128 ? 16 : 0;
      return t;
    }
  }
  return {};
}

// The spelling parse_target reads back to an equal target ("llvm -mcpu=x86-64-v3", "cuda -arch=sm_90").
inline std::string to_string(const Target& t) {
  std::string s = emitter_name(t.emitter);
  if (!t.cpu.empty()) s += " -mcpu=" + t.cpu;
  if (!t.gpu.arch.empty()) s += " -arch=" + t.gpu.arch;
  if (t.family == Family::wasm && t.vector_bits >= 128) s += " -msimd128";
  return s;
}

}  // namespace target
NNVM_END_NAMESPACE
// end nnvm/target/parse.hpp

NNVM_BEGIN_NAMESPACE
namespace ops {

struct BuildOptions {
  std::string name;          // kernel name; empty: the op name with '.' as '_'
  bool schedule = true;      // false: the plain loop nest, e.g. to measure what the schedule buys
  lower::LowerOptions lower;  // on_pass shows the IR after each lowering pass
};

// One op lowered for concrete input types. The kernel's parameters are the given inputs that are
// not value inputs, in the op's order, then the outputs.
struct BuiltOp {
  std::string op;                   // the op's name
  std::vector<te::Tensor> inputs;   // placeholders named after the op's input_names (undefined if absent)
  // Positions in `inputs` that are kernel parameters: every given input except value inputs.
  std::vector<size_t> kernel_inputs;
  std::vector<te::Tensor> outputs;
  schedule::Schedule schedule;
  ir::LoweredFunc func;
};

// Throws the op's UserErrors ("nnvm.ops.input_count", "nnvm.ops.input_shape", "nnvm.ops.attr",
// ...) and those of its schedule, each with "op <name>" as the outermost context.
inline BuiltOp build(const OpDef& def, const std::vector<TensorType>& inputs, const Attrs& attrs = {},
                     const Target& target = {}, const BuildOptions& options = {}) {
  BuiltOp out;
  out.op = def.name;
  out.inputs = placeholders(def, inputs);
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].absent && !is_value_input(def, i)) out.kernel_inputs.push_back(i);
  out.outputs = apply(def, out.inputs, attrs);
  std::string name = options.name;
  if (name.empty()) {
    name = def.name;
    std::replace(name.begin(), name.end(), '.', '_');
  }
  std::string how = "unscheduled";
  try {
    out.schedule = schedule::create_schedule(out.outputs);
    if (options.schedule) {
      apply_schedule(def, out.schedule, out.outputs, target);
      how = schedule_source(def, target);
    }
    std::vector<te::Tensor> args;
    for (size_t i : out.kernel_inputs) args.push_back(out.inputs[i]);
    args.insert(args.end(), out.outputs.begin(), out.outputs.end());
    lower::LowerOptions lowering = options.lower;
    lowering.vector_bits = target.vector_bits;
    lowering.family = target.family;
    out.func = lower::lower(out.schedule, args, name, lowering);
  } catch (const UserError& e) {
    detail::rethrow_with_context(e, "op " + def.name);
  }
  out.func.origin = str_cat("op ", def.name, ", ", how, ": ", out.func.origin);
  return out;
}

namespace detail {
inline target::CJitOptions jit_options(const Target& target) {
  if (target.emitter != target::Emitter::c || target.family != target::Family::cpu)
    throw UserError("nnvm.ops.target", str_cat("ops::jit compiles C for this CPU, not for target '",
                                               target::to_string(target), "'"));
  target::CJitOptions o;
  o.cpu = target.cpu;
  return o;
}
}  // namespace detail

// Compiles built ops with the host C compiler, all in one compiler call.
inline std::vector<target::Kernel> jit(const std::vector<BuiltOp>& built, const Target& target = {}) {
  std::vector<ir::LoweredFunc> fns;
  for (auto& b : built) fns.push_back(b.func);
  return target::jit_c(fns, detail::jit_options(target));
}
inline target::Kernel jit(const BuiltOp& built, const Target& target = {}) {
  return target::jit_c(built.func, detail::jit_options(target));
}

}  // namespace ops
NNVM_END_NAMESPACE
// end nnvm/ops/build.hpp
// end nnvm/ops/ops.hpp
// begin nnvm/graph/graph.hpp
// The graph layer: the IR (node.hpp), the builder, shape/dtype inference, the printers,
// constant evaluation and the executor (compile + run).

// begin nnvm/graph/builder.hpp
// Writing a model in code:
//   GraphBuilder b("mlp");
//   ir::Var n("n");
//   auto x = b.input("x", dtype::float32, {n, 784});
//   auto w = b.constant("w", NDArray::from(weights, {784, 128}));
//   auto y = b.op("relu", {b.op("dense", {x, w})});
//   b.output(y);
//   Graph g = b.build();
// Each call checks its node at once (unknown op, input count, types through the op's rule), so an
// error points at the line that made the node.

#include <optional>

// begin nnvm/graph/evaluate.hpp
// Evaluating one op node at compile time, for constant folding: the op is built for its input
// types (value inputs as attributes), lowered without a schedule and run by the reference
// interpreter. The interpreter runs the same compute the kernels run, so a folded constant
// equals what the compiled model would have computed, and folding needs no C compiler.

#include <optional>
#include <set>

// begin nnvm/graph/infer.hpp
// Shape and dtype inference: each op node's output types from its inputs' types, by the op's own
// rule (ops::infer_types). Symbolic extents (an ir::Var batch size) flow through as expressions
// until bind_shapes replaces them with numbers.

#include <cmath>
#include <cstring>
#include <set>

// begin nnvm/graph/node.hpp
// The graph IR: a model as a list of nodes in topological order. A node is a graph input, a
// constant, or one use of a registered op; a value is one output of one node. Passes and the
// executor walk `nodes` front to back, so the order is the evaluation order and stays stable
// (the builder appends, a pass that rewrites keeps producers before consumers).

#include <limits>
#include <memory>


NNVM_BEGIN_NAMESPACE
namespace graph {

using ops::Attrs;
using ops::TensorType;

// One output of one node: the producer's index in Graph::nodes and the output's index.
struct Value {
  static constexpr size_t npos = std::numeric_limits<size_t>::max();
  size_t node = npos;
  size_t index = 0;

  bool defined() const { return node != npos; }
  friend bool operator==(const Value&, const Value&) = default;
};

enum class NodeKind : uint8_t { input, constant, op };

struct Node {
  NodeKind kind = NodeKind::op;
  // Unique in the graph; names the node in errors, printouts and importer round trips.
  std::string name;
  // The registered op's name (kind op only).
  std::string op;
  std::vector<Value> inputs;
  Attrs attrs;
  // One per output: set by the builder for inputs and constants, by inference for ops.
  std::vector<TensorType> types;
  // The data of a constant; shared so copying a graph in a pass does not copy weights.
  std::shared_ptr<const NDArray> data;

  size_t num_outputs() const { return types.size(); }
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::vector<Value> outputs;
  // Where op names resolve; never null. The default registry unless the builder was given one.
  const ops::OpRegistry* registry = &ops::default_registry();

  // The input nodes' indices, in the order they were declared.
  std::vector<size_t> inputs() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].kind == NodeKind::input) out.push_back(i);
    return out;
  }
  const Node& node(const Value& v) const { return nodes.at(v.node); }
  const TensorType& type(const Value& v) const { return nodes.at(v.node).types.at(v.index); }
  // Index of the node called `name`, or Value::npos.
  size_t find(std::string_view name) const {
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i].name == name) return i;
    return Value::npos;
  }
};

namespace detail {
// Names come from model files, so they are escaped (printable) before they enter a message.
inline std::vector<std::string> where(const Graph& g, const Node* n = nullptr) {
  std::vector<std::string> ctx{"graph " + (g.name.empty() ? std::string("<unnamed>") : printable(g.name))};
  if (n) ctx.push_back("node " + printable(n->name));
  return ctx;
}

// UserError "nnvm.graph.too_large" when output `k` of `n`, typed `t`, is larger than
// max_tensor_bytes. Only a type whose extents are all constants is checked; a symbolic one is
// checked again once bind_shapes has replaced its extents with numbers.
inline void check_size(const Graph& g, const Node& n, const TensorType& t, size_t k) {
  std::vector<int64_t> extents;
  for (auto& e : t.shape) {
    const int64_t* c = ir::as_const_int(e);
    if (!c) return;
    extents.push_back(*c);
  }
  if (checked_tensor_bytes(extents, uint64_t(t.dtype.bytes()))) return;
  std::string shape;
  for (size_t d = 0; d < extents.size(); ++d) shape += str_cat(d ? ", " : "", extents[d]);
  throw UserError("nnvm.graph.too_large",
                  str_cat(n.kind == NodeKind::op ? str_cat("output ", k, " would be") : std::string("it is"), " a ",
                          t.dtype, " tensor of shape [", shape, "], larger than 2^48 bytes"),
                  where(g, &n));
}
inline const char* kind_name(NodeKind k) {
  static const char* const names[] = {"input", "constant", "op"};
  return names[static_cast<int>(k)];
}
// Throws "nnvm.graph.dangling_value" unless `v` names an output of a node before `before`.
inline void check_value(const Graph& g, const Value& v, size_t before, const Node* user, const std::string& what) {
  if (!v.defined() || v.node >= before)
    throw UserError("nnvm.graph.dangling_value",
                    str_cat(what, " refers to ", v.defined() ? str_cat("node #", v.node) : std::string("no node"),
                            ", which is not defined before it"),
                    where(g, user));
  const Node& p = g.nodes[v.node];
  if (v.index >= p.num_outputs())
    throw UserError("nnvm.graph.dangling_value",
                    str_cat(what, " refers to output ", v.index, " of node ", p.name, ", which has ",
                            p.num_outputs(), " output", p.num_outputs() == 1 ? "" : "s"),
                    where(g, user));
}

// Every check on node `i` except name uniqueness (which needs the whole graph).
inline void check_node(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  if (n.name.empty()) throw UserError("nnvm.graph.invalid", str_cat("node #", i, " has no name"), where(g));
  if (n.kind != NodeKind::op && (!n.inputs.empty() || n.types.size() != 1))
    throw UserError("nnvm.graph.invalid",
                    str_cat("a graph ", kind_name(n.kind), " has no inputs and exactly one output"), where(g, &n));
  if (n.kind == NodeKind::input) check_size(g, n, n.types[0], 0);
  if (n.kind == NodeKind::constant) {
    const TensorType& t = n.types[0];
    bool ok = n.data && n.data->dtype() == t.dtype && n.data->shape().size() == t.shape.size();
    for (size_t d = 0; ok && d < t.shape.size(); ++d) ok = ir::is_const_int(t.shape[d], n.data->shape()[d]);
    if (!ok)
      throw UserError("nnvm.graph.invalid", "a constant's data is missing or does not match its type", where(g, &n));
  }
  if (n.kind != NodeKind::op) return;
  const ops::OpDef* def = nullptr;
  try {
    def = &g.registry->get(n.op);
  } catch (const UserError& e) {
    throw UserError("nnvm.graph.unknown_op", e.message(), where(g, &n));
  }
  size_t most = def->input_names.size(), least = most - std::min(def->optional_inputs, most);
  if (n.inputs.size() < least || n.inputs.size() > most)
    throw UserError("nnvm.graph.input_count",
                    str_cat("op ", n.op, " takes ", least == most ? str_cat(most) : str_cat(least, " to ", most),
                            " input", most == 1 ? "" : "s", ", got ", n.inputs.size()),
                    where(g, &n));
  // An undefined value is an optional input left out (ONNX's "" input).
  for (size_t k = 0; k < n.inputs.size(); ++k)
    if (n.inputs[k].defined() || k < least)
      check_value(g, n.inputs[k], i, &n, str_cat("input ", k, " (", def->input_names[k], ")"));
}
}  // namespace detail

// Checks the structure: unique non-empty names, every value produced by an earlier node, op
// names registered, input counts within the op's bounds, constants with data matching their type,
// at least one output. UserError ids: nnvm.graph.duplicate_name, nnvm.graph.dangling_value,
// nnvm.graph.unknown_op, nnvm.graph.input_count, nnvm.graph.invalid, nnvm.graph.no_outputs.
inline void validate(const Graph& g) {
  std::map<std::string_view, size_t> names;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (auto [it, fresh] = names.emplace(g.nodes[i].name, i); !fresh && !g.nodes[i].name.empty())
      throw UserError("nnvm.graph.duplicate_name",
                      str_cat("nodes #", it->second, " and #", i, " are both named '", g.nodes[i].name, "'"),
                      detail::where(g));
    detail::check_node(g, i);
  }
  if (g.outputs.empty()) throw UserError("nnvm.graph.no_outputs", "the graph has no outputs", detail::where(g));
  for (size_t k = 0; k < g.outputs.size(); ++k)
    detail::check_value(g, g.outputs[k], g.nodes.size(), nullptr, str_cat("graph output ", k));
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/node.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
// The op's errors keep their ids (nnvm.ops.input_shape, nnvm.ops.attr) and gain graph › node as
// the outermost context, so a message reads "(graph mlp › node fc1 › op dense › input B)".
// The value input's data as an attribute: integers and bools as ints, floats as floats.
inline ops::AttrValue value_attr(const NDArray& a) {
  DataType t = a.dtype();
  int64_t n = a.numel();
  auto read = [&](auto tag) {
    using T = decltype(tag);
    const T* p = static_cast<const T*>(a.raw());
    return std::vector<T>(p, p + n);
  };
  auto ints = [&](auto tag) {
    auto v = read(tag);
    return ops::AttrValue(std::vector<int64_t>(v.begin(), v.end()));
  };
  if (t == dtype::int64) return read(int64_t{});
  if (t == dtype::int32) return ints(int32_t{});
  if (t == dtype::int16) return ints(int16_t{});
  if (t == dtype::int8) return ints(int8_t{});
  if (t == dtype::uint8 || t == dtype::boolean) return ints(uint8_t{});
  if (t == dtype::uint16) return ints(uint16_t{});
  if (t == dtype::uint32) return ints(uint32_t{});
  if (t == dtype::uint64) return ints(uint64_t{});
  if (t == dtype::float64) return read(double{});
  if (t == dtype::float32) {
    auto v = read(float{});
    return std::vector<double>(v.begin(), v.end());
  }
  if (t == dtype::float16 || t == dtype::bfloat16) {
    auto bits = read(uint16_t{});
    std::vector<double> out;
    for (uint16_t h : bits) {
      if (t == dtype::bfloat16) {
        uint32_t w = uint32_t(h) << 16;
        float f;
        std::memcpy(&f, &w, 4);
        out.push_back(f);
        continue;
      }
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
      out.push_back((h & 0x8000) ? -v : v);
    }
    return out;
  }
  throw UserError("nnvm.graph.value_input", str_cat("a ", t, " tensor cannot be read as an attribute value"));
}

// The node's attributes plus its value inputs' data (ops::OpDef::value_inputs), which must come
// from constants by now; "nnvm.graph.not_constant" otherwise.
inline Attrs node_attrs(const Graph& g, const Node& n, const ops::OpDef& def) {
  if (def.value_inputs.empty()) return n.attrs;
  Attrs attrs = n.attrs;
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    if (!n.inputs[k].defined() || !ops::is_value_input(def, k)) continue;
    const Node& p = g.node(n.inputs[k]);
    std::string in = def.input_names[k];
    if (p.kind != NodeKind::constant)
      throw UserError("nnvm.graph.not_constant",
                      str_cat("input ", k, " (", in, ") of op ", n.op, " must be known at compile time, but it is ",
                              p.kind == NodeKind::input ? "graph input " : "computed by node ", p.name),
                      where(g, &n));
    try {
      attrs.set(in, value_attr(*p.data));
    } catch (const UserError& e) {
      throw UserError(e.id(), e.message(), {where(g, &n).at(0), where(g, &n).at(1), "input " + in});
    }
  }
  return attrs;
}

// The types of the node's inputs; an absent optional input is TensorType::none().
inline std::vector<TensorType> input_types(const Graph& g, const Node& n) {
  std::vector<TensorType> in;
  for (auto& v : n.inputs) in.push_back(v.defined() ? g.type(v) : TensorType::none());
  return in;
}

// Runs the op's check_constants on the node's constant inputs (none: nothing to check).
inline void check_constants(const Graph& g, const Node& n, const ops::OpDef& def, const std::vector<TensorType>& in,
                            const Attrs& attrs) {
  std::vector<const NDArray*> data;
  bool any = false;
  for (auto& v : n.inputs) {
    const Node* p = v.defined() ? &g.node(v) : nullptr;
    data.push_back(p && p->kind == NodeKind::constant ? p->data.get() : nullptr);
    any = any || data.back();
  }
  if (!any) return;
  try {
    def.check_constants(in, data, attrs);
  } catch (const UserError& e) {
    ops::detail::rethrow_with_context(e, "op " + def.name);
  }
}

inline std::vector<TensorType> infer_node(const Graph& g, const Node& n) {
  try {
    const ops::OpDef& def = g.registry->get(n.op);
    std::vector<TensorType> in = input_types(g, n);
    Attrs attrs = node_attrs(g, n, def);
    std::vector<TensorType> types = ops::infer_types(def, in, attrs);
    for (size_t k = 0; k < types.size(); ++k) check_size(g, n, types[k], k);
    if (def.check_constants) check_constants(g, n, def, in, attrs);
    return types;
  } catch (const UserError& e) {
    if (!e.context().empty() && e.context()[0].rfind("graph ", 0) == 0) throw;
    std::vector<std::string> ctx = where(g, &n);
    ctx.insert(ctx.end(), e.context().begin(), e.context().end());
    throw UserError(e.id(), e.message(), std::move(ctx));
  }
}

class VarCollector : public ir::IRVisitor {
 public:
  std::vector<ir::Var> vars;
  void visit_expr(const ir::Expr& e) override {
    if (e.defined() && e.as<ir::VarNode>()) {
      vars.push_back(ir::Var::from(e));
      return;
    }
    IRVisitor::visit_expr(e);
  }
};
inline std::vector<ir::Var> input_vars(const Graph& g) {
  VarCollector c;
  for (size_t i : g.inputs())
    for (auto& t : g.nodes[i].types)
      for (auto& d : t.shape) c.visit_expr(d);
  return c.vars;
}
}  // namespace detail

// Validates `g`, then recomputes every op node's output types in node order.
inline void infer_types(Graph& g) {
  validate(g);
  for (auto& n : g.nodes)
    if (n.kind == NodeKind::op) n.types = detail::infer_node(g, n);
}

// The names of the symbolic extents in the graph inputs' shapes, sorted.
inline std::vector<std::string> symbolic_dims(const Graph& g) {
  std::set<std::string> names;
  for (auto& v : detail::input_vars(g)) names.insert(v.name());
  return {names.begin(), names.end()};
}

// A copy of `g` with the named symbolic extents replaced by numbers and types re-inferred, so a
// graph written for any batch size compiles for one. UserError "nnvm.graph.unknown_dim" when a
// name is not a symbolic extent of the inputs, "nnvm.graph.bad_dim" for a negative value.
inline Graph bind_shapes(const Graph& g, const std::map<std::string, int64_t>& dims) {
  std::vector<ir::Var> vars = detail::input_vars(g);
  ir::VarMap map;
  for (auto& [name, value] : dims) {
    if (value < 0)
      throw UserError("nnvm.graph.bad_dim", str_cat("extent '", name, "' is bound to ", value, "; it must be >= 0"),
                      detail::where(g));
    bool found = false;
    for (auto& v : vars)
      if (v.name() == name) map[v] = ir::Expr(value), found = true;
    if (!found) {
      std::string known;
      for (auto& s : symbolic_dims(g)) known += (known.empty() ? "" : ", ") + s;
      throw UserError("nnvm.graph.unknown_dim",
                      str_cat("no graph input has a symbolic extent named '", name, "' (symbolic: ",
                              known.empty() ? "none" : known, ")"),
                      detail::where(g));
    }
  }
  Graph out = g;
  for (size_t i : out.inputs())
    for (auto& t : out.nodes[i].types)
      for (auto& d : t.shape) d = ir::simplify(ir::substitute(d, map));
  infer_types(out);
  return out;
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/infer.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
// The placeholders the outputs' computes read, directly or through intermediate stages.
inline std::set<const te::TensorNode*> read_placeholders(const std::vector<te::Tensor>& outputs) {
  std::set<const te::TensorNode*> seen, placeholders;
  std::vector<const te::TensorNode*> work;
  for (auto& o : outputs) work.push_back(o.get());
  while (!work.empty()) {
    const te::TensorNode* t = work.back();
    work.pop_back();
    if (!seen.insert(t).second) continue;
    if (t->op->kind == te::OpKind::placeholder) placeholders.insert(t);
    for (auto& in : t->op->inputs) work.push_back(in.get());
  }
  return placeholders;
}

inline std::vector<int64_t> constant_shape(const TensorType& t, const Graph& g, const Node& n) {
  std::vector<int64_t> shape;
  for (auto& e : t.shape) {
    auto* c = ir::as_const_int(ir::simplify(e));
    if (!c) throw UserError("nnvm.graph.not_constant", "a folded value has a symbolic extent", where(g, &n));
    shape.push_back(*c);
  }
  return shape;
}

// Runs `f`, a step of folding node `n`. Lowering and the interpreter know the tensor or buffer
// that went wrong but not the node being folded, so their errors get "graph › node › constant
// folding" in front (an error that already names the graph is passed on as it is).
template <class F>
auto folding(const Graph& g, const Node& n, F&& f) -> decltype(f()) {
  auto named = [](const Error& e) { return !e.context().empty() && e.context()[0].rfind("graph ", 0) == 0; };
  auto at_node = [&](const Error& e) {
    std::vector<std::string> ctx = where(g, &n);
    ctx.push_back("constant folding");
    ctx.insert(ctx.end(), e.context().begin(), e.context().end());
    return ctx;
  };
  try {
    return f();
  } catch (const InternalError& e) {
    if (named(e)) throw;
    throw InternalError(e.id(), e.message(), at_node(e));
  } catch (const UserError& e) {
    if (named(e)) throw;
    throw UserError(e.id(), e.message(), at_node(e));
  }
}

// The op of node `n` built for folding: its compute lowered without a schedule.
inline ops::BuiltOp build_for_folding(const Graph& g, const Node& n, const ops::OpDef& def) {
  return folding(g, n, [&] { return ops::build(def, input_types(g, n), node_attrs(g, n, def), {}, {.schedule = false}); });
}
}  // namespace detail

// The bytes of node `n`'s outputs together, or nullopt when an extent is symbolic.
inline std::optional<uint64_t> output_bytes(const Node& n) {
  uint64_t total = 0;
  for (auto& t : n.types) {
    std::vector<int64_t> extents;
    for (auto& d : t.shape) {
      auto* c = ir::as_const_int(ir::simplify(d));
      if (!c) return std::nullopt;
      extents.push_back(*c);
    }
    // Inference already bounded each output (nnvm.graph.too_large), so this cannot fail or wrap.
    total += checked_tensor_bytes(extents, uint64_t(t.dtype.bytes())).value_or(max_tensor_bytes);
  }
  return total;
}

// True when node `n` can be folded: every input its computed outputs actually read is a
// constant (a Shape op reads none), and its outputs have constant extents.
inline bool foldable(const Graph& g, const Node& n) {
  if (n.kind != NodeKind::op) return false;
  const ops::OpDef& def = g.registry->get(n.op);
  for (auto& t : n.types)
    for (auto& e : t.shape)
      if (!ir::as_const_int(ir::simplify(e))) return false;
  ops::BuiltOp b = detail::build_for_folding(g, n, def);
  auto reads = detail::read_placeholders(b.outputs);
  for (size_t k : b.kernel_inputs)
    if (reads.count(b.inputs[k].get()) && g.node(n.inputs[k]).kind != NodeKind::constant) return false;
  return true;
}

// The outputs of op node `n`, computed by the interpreter from its constant inputs. Inputs the
// compute does not read (Shape's) are given as zeroed buffers of the right type.
inline std::vector<NDArray> evaluate(const Graph& g, const Node& n) {
  const ops::OpDef& def = g.registry->get(n.op);
  ops::BuiltOp b = detail::build_for_folding(g, n, def);
  auto reads = detail::read_placeholders(b.outputs);
  std::vector<NDArray> outs;
  for (auto& t : n.types) outs.emplace_back(t.dtype, detail::constant_shape(t, g, n));
  std::vector<NDArray> unread;
  std::vector<BufferView> views;
  for (size_t k : b.kernel_inputs) {
    const Node& p = g.node(n.inputs[k]);
    if (p.kind == NodeKind::constant) {
      views.push_back(const_cast<NDArray&>(*p.data).view());
    } else if (!reads.count(b.inputs[k].get())) {
      // A real (zeroed) buffer: a smaller one would look like it overlapped the outputs.
      unread.emplace_back(g.type(n.inputs[k]).dtype, detail::constant_shape(g.type(n.inputs[k]), g, n));
      views.push_back(unread.back().view());
    } else {
      throw UserError("nnvm.graph.not_constant",
                      str_cat("input ", k, " (", def.input_names[k], ") is not a constant"), detail::where(g, &n));
    }
  }
  for (auto& o : outs) views.push_back(o.view());
  detail::folding(g, n, [&] { target::interpret(b.func, std::span<const BufferView>(views)); });
  return outs;
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/evaluate.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "graph", const ops::OpRegistry& registry = ops::default_registry()) {
    g_.name = std::move(name);
    g_.registry = &registry;
  }

  // A graph input; an extent may be an ir::Var left symbolic until bind_shapes.
  Value input(std::string name, DataType dtype, std::vector<ir::Expr> shape) {
    Node n;
    n.kind = NodeKind::input;
    n.name = std::move(name);
    n.types = {TensorType(dtype, std::move(shape))};
    return add(std::move(n)).front();
  }

  Value constant(std::string name, NDArray data) {
    Node n;
    n.kind = NodeKind::constant;
    n.name = std::move(name);
    n.types = {TensorType(data.dtype(), data.shape())};
    n.data = std::make_shared<const NDArray>(std::move(data));
    return add(std::move(n)).front();
  }

  // One use of a registered op; returns its first output. An empty name becomes "<op>_<k>".
  Value op(const std::string& op, std::vector<Value> inputs, Attrs attrs = {}, std::string name = {}) {
    return op_outputs(op, std::move(inputs), std::move(attrs), std::move(name)).front();
  }
  // Like op, for ops with several outputs.
  std::vector<Value> op_outputs(const std::string& op, std::vector<Value> inputs, Attrs attrs = {},
                                std::string name = {}) {
    // A failed call must not use up an automatic name, so the count moves only on success.
    size_t k = counts_[op];
    bool automatic = name.empty();
    if (automatic)
      while (names_.count(name = str_cat(op, "_", k))) ++k;
    Node n;
    n.kind = NodeKind::op;
    n.op = op;
    n.name = std::move(name);
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    auto out = add(std::move(n));
    if (automatic) counts_[op] = k + 1;
    return out;
  }

  void output(Value v) { g_.outputs.push_back(v); }

  // With folding on, an op whose computed outputs read only constants (a Shape op reads none) is
  // evaluated when it is added and becomes constant nodes: output 0 keeps the node's name,
  // output k is named "<name>:<k>". Importers turn it on, so shape arithmetic (Shape → Gather →
  // Concat → Reshape) is known by the time a Reshape needs its shape.
  // Folding stops taking big results once `budget` is spent (FoldBudget); those nodes stay ops.
  GraphBuilder& fold_constants(bool on = true, FoldBudget budget = {}) {
    fold_ = on;
    budget_ = budget;
    return *this;
  }

  // The graph so far (not validated: it may have no outputs yet), for importers that need the
  // type of a value they already added.
  const Graph& graph() const { return g_; }

  // The finished graph, validated. The builder keeps its state, so it can go on growing.
  Graph build() const {
    validate(g_);
    return g_;
  }

 private:
  std::vector<Value> add(Node n) {
    if (names_.count(n.name))
      throw UserError("nnvm.graph.duplicate_name", str_cat("a node named '", n.name, "' already exists"),
                      detail::where(g_));
    g_.nodes.push_back(std::move(n));
    std::optional<std::vector<NDArray>> folded;
    try {
      detail::check_node(g_, g_.nodes.size() - 1);
      Node& added = g_.nodes.back();
      if (added.kind == NodeKind::op) added.types = detail::infer_node(g_, added);
      if (fold_ && worth_folding(added) && foldable(g_, added) && budget_.take(*output_bytes(added)))
        folded = evaluate(g_, added);
    } catch (...) {
      g_.nodes.pop_back();  // a failed call leaves the graph as it was
      throw;
    }
    if (folded) {
      std::string name = g_.nodes.back().name;
      g_.nodes.pop_back();
      return add_constants(name, std::move(*folded));
    }
    names_.insert(g_.nodes.back().name);
    std::vector<Value> out;
    for (size_t k = 0; k < g_.nodes.back().num_outputs(); ++k) out.push_back({g_.nodes.size() - 1, k});
    return out;
  }

  // The interpreter folds tens of millions of elements per second; bigger results stay ops.
  static bool worth_folding(const Node& n) {
    if (n.kind != NodeKind::op) return false;
    int64_t elements = 0;
    for (auto& t : n.types) {
      int64_t e = 1;
      for (auto& d : t.shape) {
        auto* c = ir::as_const_int(ir::simplify(d));
        if (!c) return false;
        e *= std::max<int64_t>(*c, 1);
      }
      elements += e;
    }
    return elements <= (int64_t(1) << 24);
  }

  // Constants holding a folded node's outputs; the names were checked when the node was added.
  std::vector<Value> add_constants(const std::string& name, std::vector<NDArray> data) {
    std::vector<Value> out;
    for (size_t k = 0; k < data.size(); ++k) {
      Node c;
      c.kind = NodeKind::constant;
      c.name = k == 0 ? name : str_cat(name, ":", k);
      c.types = {TensorType(data[k].dtype(), data[k].shape())};
      c.data = std::make_shared<const NDArray>(std::move(data[k]));
      g_.nodes.push_back(std::move(c));
      names_.insert(g_.nodes.back().name);
      out.push_back({g_.nodes.size() - 1, 0});
    }
    return out;
  }

  Graph g_;
  bool fold_ = false;
  FoldBudget budget_;
  std::map<std::string, size_t> counts_;  // next automatic name per op
  std::set<std::string, std::less<>> names_;
};

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/builder.hpp
// begin nnvm/graph/executor.hpp
// Compiling a graph into a runnable CompiledModel: prepare() (graph/prepare.hpp) plans and lowers
// the kernels, link() compiles them in one batch with a back end's KernelCompiler, compile() does
// both. The model runs through the runtime's run loop (graph/compiled_model.hpp).

// begin nnvm/graph/compiled_model.hpp
// A compiled model: the optimized graph, its kernels, and the plan that runs them. It runs
// through the deploy runtime's run loop (runtime/plan.hpp), the one loop every nnvm model runs
// by, in process or from an artifact. A CompiledModel is immutable, so one model can run from
// several threads at once; each run has its own arena.
//
// Made by prepare() (graph/prepare.hpp) and link() (graph/executor.hpp).

#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>

// begin nnvm/graph/profile.hpp
// Per-kernel timings of one model run: a table (name, op, shape, time, % of total) and Chrome's
// trace-event JSON (open it at chrome://tracing or ui.perfetto.dev).

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace graph {

struct ProfileEntry {
  std::string node, op;
  std::vector<int64_t> shape;  // of the first output
  double start_us = 0;         // from the start of the run
  double duration_us = 0;
};

inline std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s + "]";
}

struct Profile {
  std::vector<ProfileEntry> entries;

  double total_us() const {
    double t = 0;
    for (auto& e : entries) t += e.duration_us;
    return t;
  }

  // One line per kernel call, slowest first.
  std::string table() const {
    std::vector<const ProfileEntry*> order;
    for (auto& e : entries) order.push_back(&e);
    std::stable_sort(order.begin(), order.end(),
                     [](auto* a, auto* b) { return a->duration_us > b->duration_us; });
    double total = std::max(total_us(), 1e-9);
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-32s %-20s %-22s %12s %7s\n", "node", "op", "shape", "time (us)", "%");
    out += line;
    for (auto* e : order) {
      std::snprintf(line, sizeof line, "%-32s %-20s %-22s %12.1f %6.1f%%\n", e->node.c_str(), e->op.c_str(),
                    shape_text(e->shape).c_str(), e->duration_us, 100.0 * e->duration_us / total);
      out += line;
    }
    std::snprintf(line, sizeof line, "%-76s %12.1f %6.1f%%\n", "total", total_us(), 100.0);
    return out + line;
  }

  // Trace-event format: one complete ("X") event per kernel call.
  std::string chrome_trace() const {
    auto quote = [](const std::string& s) {
      std::string q = "\"";
      for (char c : s) {
        if (c == '"' || c == '\\') q += '\\';
        if (static_cast<unsigned char>(c) < 0x20) continue;
        q += c;
      }
      return q + "\"";
    };
    std::string out = "{\"traceEvents\":[";
    for (size_t i = 0; i < entries.size(); ++i) {
      auto& e = entries[i];
      out += str_cat(i ? "," : "", "\n{\"name\":", quote(e.node), ",\"cat\":", quote(e.op),
                     ",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":", e.start_us, ",\"dur\":", e.duration_us,
                     ",\"args\":{\"shape\":", quote(shape_text(e.shape)), "}}");
    }
    return out + "\n]}\n";
  }
};

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/profile.hpp
// begin nnvm/runtime/plan.hpp
// A compiled model's plan and the one loop that runs it. The deploy runtime (runtime/src/run.cpp,
// from a loaded artifact) and the in-process executor (graph/compiled_model.hpp, from compile())
// both run their models here, so both bind tensors, lend workspace and threads, and write outputs
// in place the same way. Static shapes only: kernels are called with no symbolic sizes.
//
// Part of the runtime layer: it uses the kernel ABI and the thread pool, nothing of the compiler,
// and compiles as C++17 (the runtime's public standard).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace runtime {

// Where a value's data lives during a run.
struct PlanSlot {
  enum class Kind : uint8_t { input, constant, activation } kind = Kind::activation;
  uint64_t bytes = 0;
  size_t index = 0;     // input: position in the run's inputs; constant: in Plan::constants
  uint64_t offset = 0;  // activation: in the run's arena
};

// One kernel call.
struct PlanStep {
  size_t kernel = 0;         // in Plan::kernels
  std::vector<size_t> args;  // slots: the kernel's inputs, then its outputs
};

struct Plan {
  std::vector<nnvm_kernel_fn> kernels;
  std::vector<PlanSlot> slots;
  std::vector<PlanStep> steps;
  std::vector<size_t> inputs, outputs;  // slots, in the model's order
  std::vector<const void*> constants;   // the constant slots' data, read-only
  // Every activation has arena space, the model outputs included (after the shared part), so an
  // output that cannot be written in place still has somewhere to go.
  uint64_t arena_bytes = 0;
  uint64_t workspace_bytes = 0;  // the largest step's scratch, lent after the activations
  size_t max_args = 0;

  // What a run's arena must hold (64-byte aligned).
  uint64_t run_bytes() const { return arena_bytes + workspace_bytes; }
};

// Measures kernel calls for a profile; run_plan calls it around each step.
class StepObserver {
 public:
  virtual void before_step(size_t step) = 0;
  virtual void after_step(size_t step) = 0;

 protected:
  ~StepObserver() = default;
};

// A step whose kernel returned a non-zero status (none: step == SIZE_MAX).
struct StepFailure {
  size_t step = SIZE_MAX;
  int32_t status = NNVM_STATUS_OK;
  explicit operator bool() const { return step != SIZE_MAX; }
};

namespace detail {
inline bool overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return a_bytes && b_bytes && x < y + b_bytes && y < x + a_bytes;
}
}  // namespace detail

// Whether output `o` can be computed straight into the caller's buffer: a kernel computes it
// (not an input or a constant), it is no other output too, and the caller's buffer overlaps no
// input and no other output buffer (a kernel still reading an input must not see it change).
inline bool output_in_place(const Plan& p, size_t o, const void* const* inputs, void* const* outputs) {
  const size_t slot = p.outputs[o];
  const uint64_t bytes = p.slots[slot].bytes;
  if (p.slots[slot].kind != PlanSlot::Kind::activation || bytes == 0) return false;
  for (size_t i = 0; i < p.inputs.size(); ++i)
    if (detail::overlap(outputs[o], bytes, inputs[i], p.slots[p.inputs[i]].bytes)) return false;
  for (size_t q = 0; q < p.outputs.size(); ++q)
    if (q != o && (p.outputs[q] == slot || detail::overlap(outputs[o], bytes, outputs[q], p.slots[p.outputs[q]].bytes)))
      return false;
  return true;
}

// Runs the plan on the caller's checked buffers (inputs and outputs in the plan's order), with
// `arena` (run_bytes(), 64-byte aligned) holding the activations and the workspace. Parallel
// loops use the global pool with `num_threads` threads (0: the pool's count). Stops at the first
// kernel that fails and returns it; outputs are then unspecified.
inline StepFailure run_plan(const Plan& p, const void* const* inputs, void* const* outputs, char* arena,
                            int num_threads, StepObserver* observer = nullptr) {
  std::vector<void*> data(p.slots.size());
  for (size_t s = 0; s < p.slots.size(); ++s) {
    const PlanSlot& sl = p.slots[s];
    data[s] = sl.kind == PlanSlot::Kind::input      ? const_cast<void*>(inputs[sl.index])
              : sl.kind == PlanSlot::Kind::constant ? const_cast<void*>(p.constants[sl.index])
                                                    : arena + sl.offset;
  }
  // Outputs have arena space of their own, so pointing one at the caller's buffer takes nothing
  // from another tensor.
  for (size_t o = 0; o < p.outputs.size(); ++o)
    if (output_in_place(p, o, inputs, outputs)) data[p.outputs[o]] = outputs[o];

  PoolRef pool{&ThreadPool::global(), num_threads > 0 ? num_threads : 0};
  nnvm_kernel_env env{&pool, &nnvm_pool_parallel_for};
  std::vector<void*> args(p.max_args);
  const int64_t no_sizes = 0;
  void* workspace = p.workspace_bytes ? arena + p.arena_bytes : nullptr;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    const PlanStep& st = p.steps[i];
    for (size_t a = 0; a < st.args.size(); ++a) args[a] = data[st.args[a]];
    if (observer) observer->before_step(i);
    int32_t status = p.kernels[st.kernel](args.data(), &no_sizes, workspace, p.workspace_bytes, &env);
    if (observer) observer->after_step(i);
    if (status != NNVM_STATUS_OK) return {i, status};
  }
  // The rest: outputs that are inputs or constants, or shown twice, or whose buffers overlap
  // (memmove).
  for (size_t o = 0; o < p.outputs.size(); ++o)
    if (uint64_t bytes = p.slots[p.outputs[o]].bytes; bytes && data[p.outputs[o]] != outputs[o])
      std::memmove(outputs[o], data[p.outputs[o]], size_t(bytes));
  return {};
}

}  // namespace runtime
NNVM_END_NAMESPACE
// end nnvm/runtime/plan.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

// One kernel call of the plan.
struct Step {
  std::vector<size_t> nodes;      // the fused op nodes, in graph order; the first is the master
  std::string label;              // the ops, "conv+add+relu", for profiles
  size_t kernel = 0;              // index in CompiledModel::kernels()
  std::vector<size_t> inputs;     // value slots read, in kernel parameter order
  std::vector<size_t> outputs;    // value slots written
};

// A value of the compiled graph: its type, where its data comes from, and its name.
struct Slot {
  enum class Kind : uint8_t { input, constant, activation } kind = Kind::activation;
  DataType dtype;
  std::vector<int64_t> shape;
  size_t input_index = 0;                // kind input: position in the model's inputs
  std::shared_ptr<const NDArray> data;   // kind constant
  std::string name;                      // the producing node (and output), for messages
  // kind activation: offset in the planned (shared) part of the arena, or none (UINT64_MAX) for
  // a model output, which the caller's array receives.
  uint64_t arena_offset = UINT64_MAX;
  uint64_t bytes() const {
    uint64_t n = uint64_t(dtype.bytes());
    for (int64_t d : shape) n *= uint64_t(d);
    return n;
  }
};

// What memory planning achieved, for reports.
struct MemoryStats {
  uint64_t arena_bytes = 0;      // the planned arena: peak activation bytes
  uint64_t unplanned_bytes = 0;  // all activations allocated separately
  uint64_t output_bytes = 0;     // model outputs (always separate)
};

struct PreparedModel;
struct CompileOptions;
// Compiles lowered functions (all in one batch) for a back end (graph/executor.hpp has the host
// C compiler's; codegen/llvm_graph.hpp has LLVM's).
using KernelCompiler = std::function<std::vector<target::Kernel>(const std::vector<ir::LoweredFunc>&)>;

class CompiledModel {
 public:
  CompiledModel() = default;

  const Graph& graph() const { return graph_; }
  const std::vector<target::Kernel>& kernels() const { return kernels_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<Slot>& slots() const { return slots_; }
  // The model's inputs and outputs, as value slots, with names and types.
  const std::vector<size_t>& input_slots() const { return input_slots_; }
  const std::vector<size_t>& output_slots() const { return output_slots_; }
  const MemoryStats& memory() const { return memory_; }
  // What runs: the plan the run loop executes (slots, steps, kernel entry points, arena size).
  const runtime::Plan& plan() const { return plan_; }
  // What the kernels were lowered and compiled for (CompileOptions::target).
  const target::Target& target() const { return target_; }
  std::vector<std::string> input_names() const {
    std::vector<std::string> out;
    for (size_t s : input_slots_) out.push_back(slots_[s].name);
    return out;
  }

  // Runs the model on `inputs` (in input_names() order), returning the outputs. Wrong input
  // count, dtype or shape: UserError "nnvm.run.input" naming the input and what was expected.
  // Parallel loops use `num_threads` threads (0: the pool's count, NNVM_NUM_THREADS or all);
  // `profile`, when given, receives one entry per kernel call.
  std::vector<NDArray> run(const std::vector<NDArray>& inputs, int num_threads = 0, Profile* profile = nullptr) const {
    std::vector<NDArray> out;
    for (size_t s : output_slots_) out.emplace_back(slots_[s].dtype, slots_[s].shape);
    run_into(inputs, out, num_threads, profile);
    return out;
  }

  // Runs the model writing its outputs into `outputs`, arrays the caller made (and may reuse
  // from run to run) of the model's output dtypes and shapes: nothing is allocated per run once
  // the calling thread's arena is big enough. A wrong output count, dtype or shape: UserError
  // "nnvm.run.output" naming the output and what was expected. Otherwise as run().
  void run_into(const std::vector<NDArray>& inputs, std::vector<NDArray>& outputs, int num_threads = 0,
                Profile* profile = nullptr) const {
    check_inputs(inputs);
    check_outputs(outputs);
    std::vector<const void*> in;
    std::vector<void*> out;
    for (auto& a : inputs) in.push_back(a.raw());
    for (auto& a : outputs) out.push_back(a.raw());
    ProfileRecorder recorder(*this, profile);
    runtime::StepFailure failed = runtime::run_plan(plan_, in.data(), out.data(), thread_arena(plan_.run_bytes()),
                                                    num_threads, profile ? &recorder : nullptr);
    if (!failed) return;
    const Step& st = steps_[failed.step];
    std::vector<std::string> context = {"graph " + graph_.name, "node " + graph_.nodes[st.nodes.front()].name};
    if (failed.status == NNVM_STATUS_RUNTIME_FAILURE)
      throw BackendError("nnvm.runtime.parallel_failure",
                         str_cat("kernel ", kernels_[st.kernel].func().name, " (", st.label,
                                 "): the thread pool could not run a parallel loop"),
                         context);
    throw BackendError("nnvm.run.kernel_status",
                       str_cat("kernel ", kernels_[st.kernel].func().name, " (", st.label, ") returned status ",
                               failed.status,
                               failed.status == NNVM_STATUS_WORKSPACE_TOO_SMALL ? " (workspace too small)" : ""),
                       context);
  }

 private:
  friend PreparedModel prepare(const Graph& input, const CompileOptions& options);
  friend std::vector<CompiledModel> link(std::vector<PreparedModel> prepared, const KernelCompiler& compiler);

  // The run loop's plan for the slots and steps (the kernels' entry points and workspace come
  // with link()). The planned activations share the arena's first part; each model output gets
  // space after it, for a run whose output array cannot take it in place.
  void plan_run() {
    runtime::Plan& plan = plan_;
    plan.arena_bytes = (memory_.arena_bytes + 63) / 64 * 64;
    plan.slots.resize(slots_.size());
    for (size_t s = 0; s < slots_.size(); ++s) {
      const Slot& sl = slots_[s];
      runtime::PlanSlot& ps = plan.slots[s];
      ps.bytes = sl.bytes();
      if (sl.kind == Slot::Kind::input) {
        ps.kind = runtime::PlanSlot::Kind::input;
        ps.index = sl.input_index;
      } else if (sl.kind == Slot::Kind::constant) {
        ps.kind = runtime::PlanSlot::Kind::constant;
        ps.index = plan.constants.size();
        plan.constants.push_back(sl.data->raw());
      } else {
        ps.offset = sl.arena_offset;
      }
    }
    for (const Step& st : steps_) {
      runtime::PlanStep& ps = plan.steps.emplace_back();
      ps.kernel = st.kernel;
      ps.args = st.inputs;
      ps.args.insert(ps.args.end(), st.outputs.begin(), st.outputs.end());
      plan.max_args = std::max(plan.max_args, ps.args.size());
      for (size_t s : st.outputs)
        if (plan.slots[s].offset == UINT64_MAX) {
          plan.slots[s].offset = plan.arena_bytes;
          plan.arena_bytes += (plan.slots[s].bytes + 63) / 64 * 64;
        }
    }
    // Values no step writes (a fused group's inlined ones) are never touched.
    for (runtime::PlanSlot& ps : plan.slots)
      if (ps.offset == UINT64_MAX) ps.offset = 0;
    plan.inputs = input_slots_;
    plan.outputs = output_slots_;
  }

  // Times each step into a Profile.
  class ProfileRecorder final : public runtime::StepObserver {
   public:
    ProfileRecorder(const CompiledModel& m, Profile* profile) : m_(m), profile_(profile) {}
    void before_step(size_t) override { t0_ = std::chrono::steady_clock::now(); }
    void after_step(size_t step) override {
      auto t1 = std::chrono::steady_clock::now();
      const Step& st = m_.steps_[step];
      profile_->entries.push_back({m_.graph_.nodes[st.nodes.front()].name, st.label, m_.slots_[st.outputs.at(0)].shape,
                                   std::chrono::duration<double, std::micro>(t0_ - start_).count(),
                                   std::chrono::duration<double, std::micro>(t1 - t0_).count()});
    }

   private:
    const CompiledModel& m_;
    Profile* profile_;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), t0_;
  };

  void check_outputs(const std::vector<NDArray>& outputs) const {
    if (outputs.size() != output_slots_.size())
      throw UserError("nnvm.run.output", str_cat("the model has ", output_slots_.size(), " output",
                                                 output_slots_.size() == 1 ? "" : "s", ", got ", outputs.size(),
                                                 " arrays for them"),
                      {"graph " + graph_.name});
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Slot& sl = slots_[output_slots_[o]];
      if (outputs[o].dtype() != sl.dtype || outputs[o].shape() != sl.shape || (sl.bytes() && !outputs[o].raw()))
        throw UserError("nnvm.run.output",
                        str_cat("output ", o, " ('", sl.name, "') is given as ", outputs[o].dtype(), " ",
                                shape_text(outputs[o].shape()), " but the model writes ", sl.dtype, " ",
                                shape_text(sl.shape)),
                        {"graph " + graph_.name, str_cat("output ", o)});
    }
  }

  void check_inputs(const std::vector<NDArray>& inputs) const {
    if (inputs.size() != input_slots_.size())
      throw UserError("nnvm.run.input", str_cat("the model takes ", input_slots_.size(), " input",
                                                input_slots_.size() == 1 ? "" : "s", ", got ", inputs.size()),
                      {"graph " + graph_.name});
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Slot& sl = slots_[input_slots_[i]];
      if (inputs[i].dtype() != sl.dtype || inputs[i].shape() != sl.shape)
        throw UserError("nnvm.run.input",
                        str_cat("input '", sl.name, "' is ", inputs[i].dtype(), " ", shape_text(inputs[i].shape()),
                                " but the model expects ", sl.dtype, " ", shape_text(sl.shape)),
                        {"graph " + graph_.name, "input " + sl.name});
    }
  }

  // The calling thread's arena, kept from run to run and grown when a model needs more: a fresh
  // one per run would cost a page fault per 4 KiB touched, on every run. A kernel never runs a
  // model, so one run per thread uses it at a time.
  static char* thread_arena(uint64_t bytes) {
    struct Arena {
      std::unique_ptr<char, decltype(&std::free)> data{nullptr, &std::free};
      uint64_t size = 0;
    };
    thread_local Arena arena;
    if (arena.size < bytes) {
      uint64_t rounded = (bytes + 63) / 64 * 64;
      arena.data.reset(static_cast<char*>(std::aligned_alloc(64, rounded)));
      if (!arena.data) throw std::bad_alloc();
      arena.size = rounded;
    }
    return arena.data.get();
  }

  Graph graph_;
  std::vector<target::Kernel> kernels_;
  std::vector<Step> steps_;
  std::vector<Slot> slots_;
  std::vector<size_t> input_slots_, output_slots_;
  MemoryStats memory_;
  runtime::Plan plan_;
  target::Target target_;
};

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/compiled_model.hpp
// begin nnvm/graph/prepare.hpp
// The first half of compiling a graph: bind symbolic sizes, run the graph passes
// (passes/pipeline.hpp), group ops into fused kernels (passes/fuse.hpp), lower one kernel per
// distinct group (graph/group_kernel.hpp), and plan slots, steps and memory: activations share one
// arena by liveness (passes/memory_plan.hpp). link() (graph/executor.hpp) compiles the kernels.

#include <map>

// begin nnvm/graph/group_kernel.hpp
// One kernel per fused group: the group's ops applied to placeholders for the values it reads
// from outside, scheduled for the target's family, and lowered. prepare() (graph/prepare.hpp)
// calls it once per distinct group that fusion (passes/fuse.hpp) formed.

#include <map>
#include <set>


NNVM_BEGIN_NAMESPACE
namespace graph {
namespace detail {

// One fused group's kernel: the group's nodes applied to placeholders for the values it reads
// from outside, the master's default schedule, the other members' internal outputs inlined and
// their external outputs scheduled as injective stages.
struct GroupKernel {
  ir::LoweredFunc func;
  std::vector<Value> inputs;   // kernel parameters read, in order
  std::vector<Value> outputs;  // kernel parameters written, in order
};

// True when the group is an out-fusable master with a fused schedule followed only by
// elementwise/broadcast members, and its single output is the last member's, shaped like the
// master's: the case a fused schedule (ops::own_fused_schedule) handles.
inline bool epilogue_only(const Graph& g, const std::vector<size_t>& nodes, const std::vector<Value>& group_outputs,
                          const std::vector<std::vector<te::Tensor>>& node_outs) {
  if (nodes.size() < 2 || group_outputs.size() != 1 || node_outs[0].size() != 1 ||
      group_outputs[0].node != nodes.back())
    return false;
  for (size_t m = 1; m < nodes.size(); ++m) {
    auto p = g.registry->get(g.nodes[nodes[m]].op).pattern;
    if (p != ops::OpPattern::elementwise && p != ops::OpPattern::broadcast) return false;
  }
  const te::Tensor& first = node_outs[0][0];
  const te::Tensor& last = node_outs.back().at(group_outputs[0].index);
  if (first.rank() != last.rank()) return false;
  for (size_t d = 0; d < first.rank(); ++d) {
    auto* a = ir::as_const_int(ir::simplify(first.shape()[d]));
    auto* b = ir::as_const_int(ir::simplify(last.shape()[d]));
    if (!a || !b || *a != *b) return false;
  }
  return true;
}

inline GroupKernel build_group(const Graph& g, const std::vector<size_t>& nodes,
                               const std::vector<std::vector<int>>& uses, const target::Target& target,
                               const lower::LowerOptions& lower_options, const std::string& name) {
  std::set<size_t> members(nodes.begin(), nodes.end());
  std::map<std::pair<size_t, size_t>, te::Tensor> tensors;
  GroupKernel gk;
  std::vector<te::Tensor> params;
  std::vector<std::vector<te::Tensor>> node_outs;
  for (size_t i : nodes) {
    const Node& n = g.nodes[i];
    const ops::OpDef& def = g.registry->get(n.op);
    std::vector<TensorType> types = input_types(g, n);
    std::vector<te::Tensor> ins;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& v = n.inputs[k];
      if (!v.defined()) {
        ins.emplace_back();
      } else if (ops::is_value_input(def, k)) {
        ins.push_back(te::placeholder(types[k].shape, types[k].dtype, def.input_names[k]));
      } else if (auto it = tensors.find({v.node, v.index}); it != tensors.end()) {
        ins.push_back(it->second);
      } else {
        // One parameter per distinct value: a value read twice must not become two aliasing buffers.
        te::Tensor p = te::placeholder(types[k].shape, types[k].dtype, def.input_names[k]);
        tensors[{v.node, v.index}] = p;
        params.push_back(p);
        gk.inputs.push_back(v);
        ins.push_back(p);
      }
    }
    auto outs = ops::apply(def, ins, node_attrs(g, n, def));
    for (size_t k = 0; k < outs.size(); ++k) tensors[{i, k}] = outs[k];
    node_outs.push_back(outs);
  }
  // A value leaves the group when a node outside it or the graph's outputs read it.
  std::vector<bool> external_use;
  std::vector<te::Tensor> outputs;
  for (size_t m = 0; m < nodes.size(); ++m) {
    size_t i = nodes[m];
    for (size_t k = 0; k < node_outs[m].size(); ++k) {
      int inside = 0;
      for (size_t j : nodes)
        for (auto& v : g.nodes[j].inputs)
          if (v.defined() && v.node == i && v.index == k) ++inside;
      bool leaves = uses[i][k] > inside || uses[i][k] == 0;
      if (leaves) {
        outputs.push_back(node_outs[m][k]);
        gk.outputs.push_back({i, k});
      }
    }
  }
  schedule::Schedule sch = schedule::create_schedule(outputs);
  const ops::OpDef& master = g.registry->get(g.nodes[nodes[0]].op);
  for (size_t m = 1; m < nodes.size(); ++m)
    for (size_t k = 0; k < node_outs[m].size(); ++k)
      if (std::find(gk.outputs.begin(), gk.outputs.end(), Value{nodes[m], k}) == gk.outputs.end())
        sch[node_outs[m][k]].compute_inline();
  const ops::FusedScheduleFn& fused_schedule = ops::own_fused_schedule(master, target.recipe_family());
  bool fused = fused_schedule && epilogue_only(g, nodes, gk.outputs, node_outs) &&
               fused_schedule(sch, node_outs[0], outputs[0], target);
  if (!fused) {
    ops::apply_schedule(master, sch, node_outs[0], target);
    // The other members' outputs that leave the group: the family's recipe for injective stages.
    std::vector<te::Tensor> member_outputs;
    for (size_t m = 1; m < nodes.size(); ++m)
      for (size_t k = 0; k < node_outs[m].size(); ++k)
        if (std::find(gk.outputs.begin(), gk.outputs.end(), Value{nodes[m], k}) != gk.outputs.end())
          member_outputs.push_back(node_outs[m][k]);
    ops::generic_schedule(ops::OpPattern::injective, sch, member_outputs, target);
  }
  // The master's own outputs feed the chain: inline them too when the master is injective.
  if (nodes.size() > 1 && (master.pattern == ops::OpPattern::elementwise || master.pattern == ops::OpPattern::broadcast ||
                           master.pattern == ops::OpPattern::injective)) {
    for (size_t k = 0; k < node_outs[0].size(); ++k)
      if (std::find(gk.outputs.begin(), gk.outputs.end(), Value{nodes[0], k}) == gk.outputs.end())
        sch[node_outs[0][k]].compute_inline();
  }
  std::vector<te::Tensor> args = params;
  args.insert(args.end(), outputs.begin(), outputs.end());
  lower::LowerOptions lowering = lower_options;
  lowering.vector_bits = target.vector_bits;
  lowering.family = target.family;
  gk.func = lower::lower(sch, args, name, lowering);
  std::string ops_text;
  for (size_t i : nodes) ops_text += (ops_text.empty() ? "" : "+") + g.nodes[i].op;
  gk.func.origin = str_cat("fused ", ops_text, ": ", gk.func.origin);
  return gk;
}

}  // namespace detail
}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/group_kernel.hpp
// begin nnvm/graph/passes/fuse.hpp
// Operator fusion: which op nodes compile into one kernel. A group starts at any op (its
// "master": a dense, conv, reduction or injective op) and grows along chains of elementwise,
// broadcast and injective consumers that read a value of the group nobody else reads; inside a
// kernel those consumers' producers are inlined, so the chain makes one pass over memory
// (TVM's rule for injective ops and out-fusable epilogues). A master with a fused schedule takes
// only elementwise and broadcast consumers.

// begin nnvm/graph/passes/rewrite.hpp
// The shared machinery of graph passes: a new graph is built node by node from an old one. Each
// old node is kept (copied with its inputs remapped), dropped, or replaced by values of the new
// graph; the outputs follow. Node order stays topological because nodes are visited in order.


NNVM_BEGIN_NAMESPACE
namespace graph {

class GraphRewriter {
 public:
  explicit GraphRewriter(const Graph& src) : src_(src), map_(src.nodes.size()) {
    out_.name = src.name;
    out_.registry = src.registry;
  }

  const Graph& source() const { return src_; }
  const Graph& result() const { return out_; }

  // The new value standing for old value `v` (undefined stays undefined).
  Value map(const Value& v) const {
    if (!v.defined()) return v;
    return map_.at(v.node).at(v.index);
  }
  bool mapped(size_t old_node) const { return !map_[old_node].empty(); }

  // Copies old node `i` with remapped inputs; returns its index in the new graph.
  size_t keep(size_t i) {
    Node n = src_.nodes[i];
    for (auto& v : n.inputs) v = map(v);
    out_.nodes.push_back(std::move(n));
    size_t at = out_.nodes.size() - 1;
    map_[i].clear();
    for (size_t k = 0; k < out_.nodes[at].num_outputs(); ++k) map_[i].push_back({at, k});
    return at;
  }
  // Copies old node `i` under its name with remapped inputs and attributes `attrs`, its types
  // inferred again (the attributes may change its outputs); old outputs it no longer has map to
  // no value. Returns its index in the new graph.
  size_t keep_with(size_t i, Attrs attrs) {
    Node n = src_.nodes[i];
    for (auto& v : n.inputs) v = map(v);
    n.attrs = std::move(attrs);
    n.types = detail::infer_node(out_, n);
    size_t at = add(std::move(n));
    map_[i].assign(src_.nodes[i].num_outputs(), Value{});
    for (size_t k = 0; k < std::min(map_[i].size(), out_.nodes[at].num_outputs()); ++k) map_[i][k] = {at, k};
    return at;
  }
  // Old node `i`'s outputs become `values` (of the new graph).
  void replace(size_t i, std::vector<Value> values) { map_[i] = std::move(values); }

  // Appends a node to the new graph (its inputs already refer to the new graph).
  size_t add(Node n) {
    out_.nodes.push_back(std::move(n));
    return out_.nodes.size() - 1;
  }
  // Appends a constant node holding `data`, named after `base`.
  Value add_constant(const std::string& base, NDArray data) {
    Node c;
    c.kind = NodeKind::constant;
    c.name = fresh_name(base);
    c.types = {TensorType(data.dtype(), data.shape())};
    c.data = std::make_shared<const NDArray>(std::move(data));
    return Value{add(std::move(c)), 0};
  }
  // Appends a use of op `op` on `inputs` (of the new graph), its output types inferred.
  Value add_op(const std::string& base, const std::string& op, std::vector<Value> inputs, Attrs attrs) {
    Node n;
    n.name = fresh_name(base);
    n.op = op;
    n.inputs = std::move(inputs);
    n.attrs = std::move(attrs);
    n.types = detail::infer_node(out_, n);
    return Value{add(std::move(n)), 0};
  }
  Node& node(size_t new_index) { return out_.nodes[new_index]; }
  void pop() { out_.nodes.pop_back(); }

  // A fresh node name based on `base`, unique in both graphs.
  std::string fresh_name(const std::string& base) {
    std::string name = base;
    for (int k = 1; src_.find(name) != Value::npos || out_.find(name) != Value::npos; ++k) name = str_cat(base, "_", k);
    return name;
  }

  Graph finish() {
    out_.outputs.clear();
    for (auto& v : src_.outputs) out_.outputs.push_back(map(v));
    return std::move(out_);
  }

 private:
  const Graph& src_;
  Graph out_;
  std::vector<std::vector<Value>> map_;
};

// The number of uses of every node output (graph outputs count as uses).
inline std::vector<std::vector<int>> use_counts(const Graph& g) {
  std::vector<std::vector<int>> uses(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) uses[i].assign(g.nodes[i].num_outputs(), 0);
  for (auto& n : g.nodes)
    for (auto& v : n.inputs)
      if (v.defined()) ++uses[v.node][v.index];
  for (auto& v : g.outputs) ++uses[v.node][v.index];
  return uses;
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/rewrite.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

struct FusionOptions {
  size_t max_group_size = 16;
  // The family the kernels are built for: it decides which masters have a fused schedule.
  target::Family family = target::Family::cpu;
};

namespace detail {
// A group's kernel runs where its master stands in node order, so a node may join only if every
// value it reads from outside the group is computed before the master.
inline bool inputs_ready(const Graph& g, const Node& n, const ops::OpDef& def, const std::vector<size_t>& group,
                         size_t id, size_t master) {
  for (size_t k = 0; k < n.inputs.size(); ++k) {
    const Value& v = n.inputs[k];
    if (!v.defined() || ops::is_value_input(def, k) || group[v.node] == id) continue;
    if (g.nodes[v.node].kind == NodeKind::op && v.node > master) return false;
  }
  return true;
}

// A master with its own fused schedule (a blocked conv: accumulators in registers, the epilogue
// applied at write-back) takes only elementwise and broadcast epilogues, which keep its output's
// shape; anything else (a layout transform, a reshape) would push it back to the generic
// compute-at-root schedule, so it starts a kernel of its own.
inline bool takes_epilogue(const Graph& g, size_t master, const ops::OpDef& consumer, target::Family family) {
  if (!ops::own_fused_schedule(g.registry->get(g.nodes[master].op), family)) return true;
  return consumer.pattern == ops::OpPattern::elementwise || consumer.pattern == ops::OpPattern::broadcast;
}
}  // namespace detail

// The group of every node: op nodes get an id (groups numbered in node order; a group's nodes
// are in node order, its first node is the master); inputs and constants get Value::npos.
inline std::vector<size_t> fusion_groups(const Graph& g, const FusionOptions& options = {}) {
  auto uses = use_counts(g);
  std::vector<bool> is_output(g.nodes.size(), false);
  for (auto& v : g.outputs) is_output[v.node] = true;
  std::vector<size_t> group(g.nodes.size(), Value::npos), size, master;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind != NodeKind::op) continue;
    const ops::OpDef& def = g.registry->get(n.op);
    bool injective = def.pattern == ops::OpPattern::elementwise || def.pattern == ops::OpPattern::broadcast ||
                     def.pattern == ops::OpPattern::injective;
    size_t join = Value::npos;
    if (injective) {
      for (size_t k = 0; k < n.inputs.size() && join == Value::npos; ++k) {
        const Value& v = n.inputs[k];
        if (!v.defined() || ops::is_value_input(def, k)) continue;
        size_t p = group[v.node];
        if (p != Value::npos && uses[v.node][v.index] == 1 && !is_output[v.node] && size[p] < options.max_group_size &&
            detail::takes_epilogue(g, master[p], def, options.family) && detail::inputs_ready(g, n, def, group, p, master[p]))
          join = p;
      }
    }
    if (join == Value::npos) {
      join = size.size();
      size.push_back(0);
      master.push_back(i);
    }
    group[i] = join;
    ++size[join];
  }
  return group;
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/fuse.hpp
// begin nnvm/graph/passes/memory_plan.hpp
// Memory planning: the activations of one run share one arena. Each activation lives from the
// step that writes it to the last step that reads it; a greedy best-fit assignment (largest
// first) places values whose lifetimes do not overlap at the same offsets.

#include <algorithm>
#include <cstdint>
#include <vector>


NNVM_BEGIN_NAMESPACE
namespace graph {

struct BufferLifetime {
  uint64_t bytes = 0;
  size_t first = 0, last = 0;  // steps, inclusive
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // per buffer, 64-byte aligned
  uint64_t arena_bytes = 0;       // planned peak
  uint64_t unplanned_bytes = 0;   // every buffer separately
};

inline MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  auto aligned = [](uint64_t b) { return (b + 63) / 64 * 64; };
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferLifetime& b = buffers[i];
    plan.unplanned_bytes += aligned(b.bytes);
    // Intervals taken by buffers alive at the same time, sorted by offset; take the smallest gap
    // that fits.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed)
      if (!(buffers[j].last < b.first || b.last < buffers[j].first))
        taken.push_back({plan.offsets[j], plan.offsets[j] + aligned(buffers[j].bytes)});
    std::sort(taken.begin(), taken.end());
    uint64_t best = UINT64_MAX, best_gap = UINT64_MAX, cursor = 0;
    for (auto& [lo, hi] : taken) {
      if (lo >= cursor + aligned(b.bytes) && lo - cursor < best_gap) best = cursor, best_gap = lo - cursor;
      cursor = std::max(cursor, hi);
    }
    if (best == UINT64_MAX) best = cursor;
    plan.offsets[i] = best;
    plan.arena_bytes = std::max(plan.arena_bytes, best + aligned(b.bytes));
    placed.push_back(i);
  }
  return plan;
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/memory_plan.hpp
// begin nnvm/graph/passes/pipeline.hpp
// The graph pass pipeline, in one list. Level 0 runs nothing; level 1 and up simplify for
// inference, fold constants, merge common subexpressions and remove dead code; level 2 also puts
// convolutions in the target's blocked layout. Fusion (level 2) and memory planning (level 1)
// happen when the executor turns the graph into kernels.

#include <chrono>
#include <functional>

// begin nnvm/graph/passes/alter_layout.hpp
// Layout alteration for CPUs: 2-D float32 convolutions with constant weights run in the blocked
// layout NCHW[x]c (conv_nchwc, depthwise_conv_nchwc), and the feature maps between them stay
// blocked, so layout transforms appear only where the chain meets an op that needs NCHW (a
// reshape, a graph output). TVM's AlterOpLayout for x86, in one walk over the graph:
//   - a convertible conv becomes the blocked op; its weights and bias are repacked here, once;
//   - max, average and global pools of a blocked value pool it blocked (see convert_pool);
//   - an elementwise op on a blocked value, and a broadcasting op whose operands are blocked
//     alike (a residual add) or are one element (a scalar), run on the blocked values;
//   - any other consumer of a blocked value gets it back in NCHW through one layout_transform,
//     made on first use and shared.
// Block sizes: one, two or four vectors of output channels (several when they divide the channel
// count, for independent weight vectors per input load; one for what a depthwise conv reads, see
// output_block); a conv takes its input in whatever block its producer left it when that divides
// its channels, so chains need no repacking.

#include <optional>


NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {

// A value of the new graph in the blocked layout NCHW{block}c.
struct BlockedValue {
  Value value;
  int64_t block = 0;
};

inline std::optional<std::vector<int64_t>> constant_shape(const TensorType& t) {
  std::vector<int64_t> out;
  for (auto& e : t.shape) {
    auto* c = ir::as_const_int(ir::simplify(e));
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

inline const NDArray* float32_constant(const Graph& g, const Value& v) {
  if (!v.defined()) return nullptr;
  const Node& n = g.node(v);
  return n.kind == NodeKind::constant && n.data->dtype() == dtype::float32 ? n.data.get() : nullptr;
}

// W (M, C, KH, KW) as (M / ob, C / ib, KH, KW, ib, ob).
inline NDArray pack_conv_weights(const NDArray& w, int64_t ib, int64_t ob) {
  auto s = w.shape();
  int64_t M = s[0], C = s[1], KH = s[2], KW = s[3];
  NDArray p(dtype::float32, {M / ob, C / ib, KH, KW, ib, ob});
  auto src = w.values<float>();
  auto dst = p.values<float>();
  size_t at = 0;
  for (int64_t mo = 0; mo < M / ob; ++mo)
    for (int64_t co = 0; co < C / ib; ++co)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          for (int64_t ci = 0; ci < ib; ++ci)
            for (int64_t mi = 0; mi < ob; ++mi)
              dst[at++] = src[size_t((((mo * ob + mi) * C + co * ib + ci) * KH + kh) * KW + kw)];
  return p;
}

// Depthwise W (C, 1, KH, KW) as (C / b, KH, KW, b).
inline NDArray pack_depthwise_weights(const NDArray& w, int64_t b) {
  auto s = w.shape();
  int64_t C = s[0], KH = s[2], KW = s[3];
  NDArray p(dtype::float32, {C / b, KH, KW, b});
  auto src = w.values<float>();
  auto dst = p.values<float>();
  size_t at = 0;
  for (int64_t co = 0; co < C / b; ++co)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t ci = 0; ci < b; ++ci) dst[at++] = src[size_t(((co * b + ci) * KH + kh) * KW + kw)];
  return p;
}

// A bias (M) as (M / ob, ob): the same elements in the same order.
inline NDArray pack_bias(const NDArray& b, int64_t ob) {
  NDArray p(dtype::float32, {b.shape()[0] / ob, ob});
  std::copy(b.values<float>().begin(), b.values<float>().end(), p.values<float>().begin());
  return p;
}

class LayoutAlteration {
 public:
  LayoutAlteration(const Graph& g, const target::Target& t)
      : g_(g),
        rw_(g),
        target_(t),
        lanes_(t.vector_lanes(dtype::float32)),
        uses_(use_counts(g)),
        feeds_depthwise_(depthwise_inputs(g)),
        blocked_(g.nodes.size()),
        pending_(g.nodes.size()) {}

  Graph run() {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.kind == NodeKind::op && (convert_conv(i) || convert_pool(i) || convert_elementwise(i))) continue;
      for (auto& v : n.inputs) plain(v);
      rw_.keep(i);
    }
    for (auto& v : g_.outputs) plain(v);
    return rw_.finish();
  }

 private:
  // Old value `v` in NCHW in the new graph; a blocked-only value gets its layout_transform here.
  Value plain(const Value& v) {
    if (v.defined() && pending_[v.node]) {
      pending_[v.node] = false;
      const BlockedValue& b = *blocked_[v.node];
      std::string layout = ops::ChannelLayout::blocked_by(2, b.block).to_string();
      rw_.replace(v.node, {transform(g_.nodes[v.node].name + "_nchw", b.value, layout, "NCHW")});
    }
    return rw_.map(v);
  }

  // Old value `v` (NCHW, 4-D) in NCHW{block}c in the new graph.
  Value in_block(const Value& v, int64_t block) {
    if (auto& b = blocked_[v.node]; b && b->block == block) return b->value;
    auto key = std::make_pair(v.node, block);
    if (auto it = repacked_.find(key); it != repacked_.end()) return it->second;
    std::string dst = ops::ChannelLayout::blocked_by(2, block).to_string();
    Value out = blocked_[v.node]
                    ? transform(g_.nodes[v.node].name + "_" + dst, blocked_[v.node]->value,
                                ops::ChannelLayout::blocked_by(2, blocked_[v.node]->block).to_string(), dst)
                    : transform(g_.nodes[v.node].name + "_" + dst, plain(v), "NCHW", dst);
    repacked_[key] = out;
    return out;
  }

  Value transform(const std::string& base, const Value& v, const std::string& src, const std::string& dst) {
    Attrs a;
    a.set_string("src_layout", src);
    a.set_string("dst_layout", dst);
    return rw_.add_op(base, "layout_transform", {v}, std::move(a));
  }

  // The block of a value's channels the conv reading it should use: the producer's, when it
  // divides `channels`; else the largest of two vectors, one vector, 4, 2, 1 that does.
  int64_t input_block(const Value& x, int64_t channels) const {
    if (auto& b = blocked_[x.node]; b && channels % b->block == 0) return b->block;
    for (int64_t c : {2 * lanes_, lanes_, int64_t(4), int64_t(2)})
      if (channels % c == 0) return c;
    return 1;
  }
  // The block of a conv's output channels: two or four vectors (ops::nchwc_output_block, for
  // several weight vectors per input load), except for a value a depthwise conv reads (node `i` in
  // `feeds_depthwise_`): a depthwise conv runs fastest on one-vector blocks (its padded input
  // rows stay in L1), and its producer's block is its own. Zero when no vector divides them.
  int64_t output_block(int64_t channels, size_t i) const {
    if (feeds_depthwise_[i]) return channels % lanes_ == 0 ? lanes_ : 0;
    auto shape = constant_shape(g_.nodes[i].types[0]);
    return ops::nchwc_output_block(channels, shape ? shape->back() : 1, target_);
  }

  // A conv node the pass can block: float32 2-D, constant weights and bias, one group or
  // depthwise (a group per channel).
  struct ConvForm {
    int64_t C = 0, M = 0;
    const NDArray* w = nullptr;
    const NDArray* bias = nullptr;
    bool depthwise = false;
  };
  static std::optional<ConvForm> blockable_conv(const Graph& g, const Node& n) {
    if (n.kind != NodeKind::op || n.op != "conv" || n.inputs.size() < 2 || n.num_outputs() != 1) return std::nullopt;
    const TensorType& xt = g.type(n.inputs[0]);
    auto xs = constant_shape(xt);
    ConvForm f;
    f.w = float32_constant(g, n.inputs[1]);
    bool has_bias = n.inputs.size() > 2 && n.inputs[2].defined();
    f.bias = has_bias ? float32_constant(g, n.inputs[2]) : nullptr;
    if (xt.dtype != dtype::float32 || !xs || xs->size() != 4 || !f.w || f.w->shape().size() != 4 || (has_bias && !f.bias))
      return std::nullopt;
    f.C = (*xs)[1];
    f.M = f.w->shape()[0];
    int64_t group = n.attrs.get_int("group", 1);
    f.depthwise = group > 1 && group == f.C && f.M == f.C && f.w->shape()[1] == 1;
    if (group != 1 && !f.depthwise) return std::nullopt;
    return f;
  }

  // By node: whether its output reaches a depthwise conv's input directly or through
  // elementwise and broadcast ops (MobileNet's expand conv -> clip -> depthwise conv).
  static std::vector<bool> depthwise_inputs(const Graph& g) {
    std::vector<bool> feeds(g.nodes.size());
    for (size_t i = g.nodes.size(); i-- > 0;) {
      const Node& n = g.nodes[i];
      if (n.kind != NodeKind::op) continue;
      auto conv = blockable_conv(g, n);
      const ops::OpPattern p = g.registry->get(n.op).pattern;
      bool passes_on = feeds[i] && (p == ops::OpPattern::elementwise || p == ops::OpPattern::broadcast);
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k].defined() && ((conv && conv->depthwise && k == 0) || passes_on)) feeds[n.inputs[k].node] = true;
    }
    return feeds;
  }

  bool convert_conv(size_t i) {
    const Node& n = g_.nodes[i];
    auto conv = lanes_ >= 2 ? blockable_conv(g_, n) : std::nullopt;
    if (!conv) return false;
    const auto [C, M, w, bias, depthwise] = *conv;
    // A depthwise conv keeps a one- or two-vector block its producer chose (no repacking), else
    // takes one vector.
    int64_t ob = output_block(M, i);
    if (depthwise) {
      auto& producer = blocked_[n.inputs[0].node];
      bool vector_block = producer && (producer->block == lanes_ || producer->block == 2 * lanes_);
      ob = vector_block ? producer->block : C % lanes_ == 0 ? lanes_ : 0;
    }
    if (ob == 0) return false;
    Attrs a;
    for (const char* k : {"strides", "dilations", "pads", "kernel_shape"})
      if (n.attrs.has(k)) a.set_ints(k, n.attrs.get_ints(k));
    if (n.attrs.has("auto_pad")) a.set_string("auto_pad", n.attrs.get_string("auto_pad"));
    std::vector<Value> in;
    if (depthwise) {
      in = {in_block(n.inputs[0], ob), rw_.add_constant(n.name + "_w_nchwc", pack_depthwise_weights(*w, ob))};
    } else {
      int64_t ib = input_block(n.inputs[0], C);
      in = {in_block(n.inputs[0], ib), rw_.add_constant(n.name + "_w_nchwc", pack_conv_weights(*w, ib, ob))};
    }
    if (bias) in.push_back(rw_.add_constant(n.name + "_b_nchwc", pack_bias(*bias, ob)));
    Value y = rw_.add_op(n.name + "_nchwc", depthwise ? "depthwise_conv_nchwc" : "conv_nchwc", std::move(in), a);
    mark_blocked(i, y, ob);
    return true;
  }

  // A 2-D pool of a blocked value stays blocked as a 3-D pool whose window is one element along
  // the channel block: kernel (KH, KW, 1), strides and dilations (.., 1), no pads on that axis;
  // a global pool becomes the pool whose window is the whole image. A max pool's Indices (flat
  // NCHW positions) would change meaning, so a max pool whose Indices are read stays in NCHW.
  bool convert_pool(size_t i) {
    const Node& n = g_.nodes[i];
    bool global = n.op == "global_average_pool" || n.op == "global_max_pool";
    if (!global && n.op != "average_pool" && n.op != "max_pool") return false;
    if (n.inputs.empty() || !n.inputs[0].defined() || !blocked_[n.inputs[0].node]) return false;
    if (n.num_outputs() > 1 && uses_[i][1] > 0) return false;
    const TensorType& xt = g_.type(n.inputs[0]);
    auto xs = constant_shape(xt);
    if (xt.dtype != dtype::float32 || !xs || xs->size() != 4) return false;
    Attrs a;
    if (global) {
      a.set_ints("kernel_shape", {(*xs)[2], (*xs)[3], 1});
    } else {
      if (!n.attrs.has("kernel_shape") || n.attrs.get_ints("kernel_shape").size() != 2) return false;
      auto widen = [&](const char* key, size_t rank) {
        if (!n.attrs.has(key)) return true;
        auto v = n.attrs.get_ints(key);
        if (v.size() != rank) return false;
        if (rank == 4) v = {v[0], v[1], 0, v[2], v[3], 0};  // pads: begins, then ends
        else v.push_back(1);
        a.set_ints(key, v);
        return true;
      };
      if (!widen("kernel_shape", 2) || !widen("strides", 2) || !widen("dilations", 2) || !widen("pads", 4))
        return false;
      for (const char* k : {"ceil_mode", "count_include_pad"})
        if (n.attrs.has(k)) a.set_int(k, n.attrs.get_int(k));
      if (n.attrs.has("auto_pad")) a.set_string("auto_pad", n.attrs.get_string("auto_pad"));
    }
    const BlockedValue& x = *blocked_[n.inputs[0].node];
    std::string op = n.op == "global_average_pool" ? "average_pool" : n.op == "global_max_pool" ? "max_pool" : n.op;
    if (op == "max_pool") a.set_int("compute_indices", 0);
    mark_blocked(i, rw_.add_op(n.name + "_nchwc", op, {x.value}, std::move(a)), x.block);
    return true;
  }

  // An elementwise op reading one blocked value (its other inputs compile-time values), or a
  // broadcast op whose operands are all blocked alike or single elements.
  bool convert_elementwise(size_t i) {
    const Node& n = g_.nodes[i];
    const ops::OpDef& def = g_.registry->get(n.op);
    if ((def.pattern != ops::OpPattern::elementwise && def.pattern != ops::OpPattern::broadcast) ||
        n.num_outputs() != 1 || g_.nodes[i].types[0].shape.size() != 4)
      return false;
    int64_t block = 0;
    bool any_blocked = false;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& v = n.inputs[k];
      if (!v.defined() || ops::is_value_input(def, k)) continue;
      if (auto& b = blocked_[v.node]; b && same_shape(g_.type(v), n.types[0])) {
        if (block != 0 && block != b->block) return false;
        block = b->block;
        any_blocked = true;
      } else if (!single_element(g_.type(v))) {
        return false;
      }
    }
    if (!any_blocked) return false;
    std::vector<Value> in;
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const Value& v = n.inputs[k];
      bool blocked_operand = v.defined() && !ops::is_value_input(def, k) && blocked_[v.node];
      in.push_back(!v.defined() ? v : blocked_operand ? blocked_[v.node]->value : plain(v));
    }
    mark_blocked(i, rw_.add_op(n.name + "_nchwc", n.op, std::move(in), n.attrs), block);
    return true;
  }

  void mark_blocked(size_t i, const Value& v, int64_t block) {
    blocked_[i] = BlockedValue{v, block};
    pending_[i] = true;
  }

  static bool same_shape(const TensorType& a, const TensorType& b) {
    auto x = constant_shape(a), y = constant_shape(b);
    return x && y && *x == *y;
  }
  static bool single_element(const TensorType& t) {
    auto s = constant_shape(t);
    return s && s->size() <= 4 && std::all_of(s->begin(), s->end(), [](int64_t e) { return e == 1; });
  }

  const Graph& g_;
  GraphRewriter rw_;
  target::Target target_;
  int64_t lanes_;
  std::vector<std::vector<int>> uses_;                // by old node and output: its readers
  std::vector<bool> feeds_depthwise_;                 // by old node: see depthwise_inputs
  std::vector<std::optional<BlockedValue>> blocked_;  // by old node: its output in a blocked layout
  std::vector<bool> pending_;                         // blocked, and its NCHW form not made yet
  std::map<std::pair<size_t, int64_t>, Value> repacked_;
};

}  // namespace detail

// `g` with its convolutions in NCHW[x]c for CPU target `t` (unchanged for other targets).
inline Graph alter_layout(const Graph& g, const target::Target& t) {
  if (t.recipe_family() != target::Family::cpu) return g;
  return detail::LayoutAlteration(g, t).run();
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/alter_layout.hpp
// begin nnvm/graph/passes/common_subexpr.hpp
// Common-subexpression elimination: an op node with the same op, attributes and inputs as an
// earlier one is replaced by it; constants with equal type and bytes are merged. Ops are pure
// (no random ops are registered), so equal inputs give equal outputs.

#include <cstring>

// begin nnvm/graph/printer.hpp
// Text and Graphviz forms of a graph. Both are deterministic (node order, attributes sorted by
// name), so tests compare them verbatim and a diff of two printouts is a diff of two graphs.
//
//   graph mlp(%x: float32[n, 784]) {
//     %w1 = constant float32[784, 128]
//     %dense_0 = dense(%x, %w1) : float32[n, 128]
//     %sm = softmax(%dense_0) {axis=1} : float32[n, 128]
//     return %sm
//   }

#include <iomanip>


NNVM_BEGIN_NAMESPACE
namespace graph {

inline std::string to_string(const TensorType& t) {
  std::string s = t.dtype.str() + "[";
  for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + ir::to_string(t.shape[i]);
  return s + "]";
}

inline std::string to_string(const ops::AttrValue& v) {
  auto num = [](double d) {
    std::ostringstream os;
    os << std::setprecision(17) << d;
    return os.str();
  };
  switch (v.index()) {
    case 0: return std::to_string(std::get<int64_t>(v));
    case 1: return num(std::get<double>(v));
    case 2: return str_cat(std::quoted(std::get<std::string>(v)));
    case 3: {
      std::string s = "[";
      for (auto& e : std::get<std::vector<int64_t>>(v)) s += (s.size() > 1 ? ", " : "") + std::to_string(e);
      return s + "]";
    }
    default: {
      std::string s = "[";
      for (auto& e : std::get<std::vector<double>>(v)) s += (s.size() > 1 ? ", " : "") + num(e);
      return s + "]";
    }
  }
}

// "{name=value, ...}" sorted by name; empty for no attributes.
inline std::string to_string(const Attrs& a) {
  std::string s;
  for (auto& [k, v] : a.values()) s += (s.empty() ? "{" : ", ") + k + "=" + to_string(v);
  return s.empty() ? s : s + "}";
}

namespace detail {
inline std::string ref(const Graph& g, const Value& v) {
  if (!v.defined()) return "none";  // an optional input left out
  std::string s = "%" + g.nodes.at(v.node).name;
  return v.index ? str_cat(s, ":", v.index) : s;
}
inline std::string types_text(const Node& n) {
  if (n.types.size() == 1) return to_string(n.types[0]);
  std::string s = "(";
  for (size_t i = 0; i < n.types.size(); ++i) s += (i ? ", " : "") + to_string(n.types[i]);
  return s + ")";
}
}  // namespace detail

inline std::string to_string(const Graph& g) {
  std::string s = "graph " + g.name + "(";
  bool first = true;
  for (size_t i : g.inputs()) {
    s += (first ? "%" : ", %") + g.nodes[i].name + ": " + detail::types_text(g.nodes[i]);
    first = false;
  }
  s += ") {\n";
  for (auto& n : g.nodes) {
    if (n.kind == NodeKind::input) continue;
    s += "  %" + n.name + " = ";
    if (n.kind == NodeKind::constant) {
      s += "constant " + detail::types_text(n) + "\n";
      continue;
    }
    s += n.op + "(";
    for (size_t k = 0; k < n.inputs.size(); ++k) s += (k ? ", " : "") + detail::ref(g, n.inputs[k]);
    s += ")";
    if (n.attrs.size()) s += " " + to_string(n.attrs);
    s += " : " + detail::types_text(n) + "\n";
  }
  s += "  return ";
  for (size_t k = 0; k < g.outputs.size(); ++k) s += (k ? ", " : "") + detail::ref(g, g.outputs[k]);
  return s + "\n}\n";
}

inline std::ostream& operator<<(std::ostream& os, const Graph& g) { return os << to_string(g); }

namespace detail {
inline std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}
}  // namespace detail

// Graphviz: one box per node (name, op or kind, attributes), one edge per use labelled with the
// value's type, and a point per graph output. Render with `dot -Tsvg`.
inline std::string to_dot(const Graph& g) {
  std::string s = "digraph \"" + detail::dot_escape(g.name) + "\" {\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    using detail::dot_escape;
    // "\n" is Graphviz's line break, so it joins parts after they are escaped.
    std::string label = dot_escape(n.name) + "\\n" + dot_escape(n.kind == NodeKind::op ? n.op : detail::kind_name(n.kind));
    if (n.attrs.size()) label += "\\n" + dot_escape(to_string(n.attrs));
    if (n.kind != NodeKind::op) label += "\\n" + dot_escape(detail::types_text(n));
    s += str_cat("  n", i, " [label=\"", label, "\"", n.kind == NodeKind::op ? "" : ", style=rounded", "];\n");
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (auto& v : g.nodes[i].inputs)
      if (v.defined())
        s += str_cat("  n", v.node, " -> n", i, " [label=\"", detail::dot_escape(to_string(g.type(v))), "\"];\n");
  for (size_t k = 0; k < g.outputs.size(); ++k)
    s += str_cat("  out", k, " [shape=point];\n  n", g.outputs[k].node, " -> out", k, " [label=\"",
                 detail::dot_escape(to_string(g.type(g.outputs[k]))), "\"];\n");
  return s + "}\n";
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/printer.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

inline Graph eliminate_common_subexpressions(const Graph& g) {
  GraphRewriter rw(g);
  std::map<std::string, size_t> seen_ops;                 // key -> new node
  std::map<std::string, std::vector<size_t>> seen_consts;  // type text -> new nodes
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::input) {
      rw.keep(i);
      continue;
    }
    if (n.kind == NodeKind::constant) {
      std::string key = to_string(n.types[0]);
      bool merged = false;
      for (size_t c : seen_consts[key]) {
        const NDArray& d = *rw.result().nodes[c].data;
        if (d.nbytes() == n.data->nbytes() && std::memcmp(d.raw(), n.data->raw(), d.nbytes()) == 0) {
          rw.replace(i, {{c, 0}});
          merged = true;
          break;
        }
      }
      if (!merged) seen_consts[key].push_back(rw.keep(i));
      continue;
    }
    std::string key = n.op + "(";
    for (auto& v : n.inputs) {
      Value m = rw.map(v);
      key += m.defined() ? str_cat(m.node, ":", m.index, ",") : std::string("-,");
    }
    key += ")" + to_string(n.attrs);
    if (auto it = seen_ops.find(key); it != seen_ops.end()) {
      std::vector<Value> same;
      for (size_t k = 0; k < n.num_outputs(); ++k) same.push_back({it->second, k});
      rw.replace(i, same);
      continue;
    }
    seen_ops[key] = rw.keep(i);
  }
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/common_subexpr.hpp
// begin nnvm/graph/passes/dead_code.hpp
// Dead-code elimination: nodes no graph output depends on are removed. Graph inputs stay, even
// unused ones, because they are the model's calling signature.


NNVM_BEGIN_NAMESPACE
namespace graph {

inline Graph eliminate_dead_code(const Graph& g) {
  std::vector<bool> live(g.nodes.size(), false);
  for (auto& v : g.outputs) live[v.node] = true;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    if (g.nodes[i].kind == NodeKind::input) live[i] = true;
    if (!live[i]) continue;
    for (auto& v : g.nodes[i].inputs)
      if (v.defined()) live[v.node] = true;
  }
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (live[i]) rw.keep(i);
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/dead_code.hpp
// begin nnvm/graph/passes/fold_constants.hpp
// Constant folding: op nodes whose computed outputs read only constants (a Shape op reads none)
// are evaluated by the reference interpreter and become constants. Large results stay ops: the
// interpreter is slow, and a big folded tensor would only move work from run time to the blob.


NNVM_BEGIN_NAMESPACE
namespace graph {

struct FoldOptions {
  int64_t max_elements = int64_t(1) << 22;  // per folded node, all outputs together
  FoldBudget budget;                        // for the whole graph (limits.hpp)
};

inline Graph fold_constants(const Graph& g, const FoldOptions& options = {}) {
  FoldBudget budget = options.budget;
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    size_t at = rw.keep(i);
    const Node& n = rw.result().nodes[at];
    if (n.kind != NodeKind::op) continue;
    int64_t elements = 0;
    bool static_shape = true;
    for (auto& t : n.types) {
      int64_t e = 1;
      for (auto& d : t.shape) {
        auto* c = ir::as_const_int(ir::simplify(d));
        if (!c) static_shape = false;
        else e *= std::max<int64_t>(*c, 1);
      }
      elements += e;
    }
    if (!static_shape || elements > options.max_elements || !foldable(rw.result(), n) ||
        !budget.take(*output_bytes(n)))
      continue;
    std::vector<NDArray> data = evaluate(rw.result(), n);
    std::string name = n.name;
    rw.pop();
    std::vector<Value> values;
    for (size_t k = 0; k < data.size(); ++k) {
      Node c;
      c.kind = NodeKind::constant;
      c.name = k == 0 ? name : rw.fresh_name(str_cat(name, ":", k));
      c.types = {TensorType(data[k].dtype(), data[k].shape())};
      c.data = std::make_shared<const NDArray>(std::move(data[k]));
      values.push_back({rw.add(std::move(c)), 0});
    }
    rw.replace(i, values);
  }
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/fold_constants.hpp
// begin nnvm/graph/passes/simplify_inference.hpp
// Simplifications valid for inference: identity and inference-mode dropout disappear (their
// users read the input directly), a max pool whose Indices nobody reads stops computing them,
// and a batch normalization that follows a convolution with
// constant weights is folded into the convolution's weights and bias:
//   s = scale / sqrt(var + eps);  W'[o] = W[o] * s[o];  B'[o] = (B[o] - mean[o]) * s[o] + beta[o].

#include <cmath>


NNVM_BEGIN_NAMESPACE
namespace graph {

namespace detail {
inline bool is_float32_constant(const Graph& g, const Value& v) {
  if (!v.defined()) return false;
  const Node& n = g.node(v);
  return n.kind == NodeKind::constant && n.data->dtype() == dtype::float32;
}

// The folded conv for batch_norm node `bn` (old graph) reading conv node `conv`; npos if the
// pattern does not apply.
inline size_t fold_batch_norm(GraphRewriter& rw, const Graph& g, const Node& bn, const Node& conv) {
  if (conv.inputs.size() < 2 || bn.inputs.size() != 5) return Value::npos;
  for (size_t k = 1; k < 5; ++k)
    if (!is_float32_constant(g, bn.inputs[k])) return Value::npos;
  if (!is_float32_constant(g, conv.inputs[1])) return Value::npos;
  bool has_bias = conv.inputs.size() > 2 && conv.inputs[2].defined();
  if (has_bias && !is_float32_constant(g, conv.inputs[2])) return Value::npos;
  const NDArray& w = *g.node(conv.inputs[1]).data;
  int64_t out_channels = w.shape().at(0), per_channel = w.numel() / std::max<int64_t>(out_channels, 1);
  auto vec = [&](size_t k) { return g.node(bn.inputs[k]).data->values<float>(); };
  auto scale = vec(1), beta = vec(2), mean = vec(3), var = vec(4);
  if (int64_t(scale.size()) != out_channels || int64_t(beta.size()) != out_channels ||
      int64_t(mean.size()) != out_channels || int64_t(var.size()) != out_channels)
    return Value::npos;
  double eps = bn.attrs.get_float("epsilon", 1e-5);
  NDArray w2(dtype::float32, w.shape()), b2(dtype::float32, {out_channels});
  auto wv = w.values<float>();
  auto w2v = w2.values<float>();
  for (int64_t o = 0; o < out_channels; ++o) {
    double s = double(scale[size_t(o)]) / std::sqrt(double(var[size_t(o)]) + eps);
    for (int64_t j = 0; j < per_channel; ++j)
      w2v[size_t(o * per_channel + j)] = float(double(wv[size_t(o * per_channel + j)]) * s);
    double b = has_bias ? double(g.node(conv.inputs[2]).data->values<float>()[size_t(o)]) : 0.0;
    b2.values<float>()[size_t(o)] = float((b - double(mean[size_t(o)])) * s + double(beta[size_t(o)]));
  }
  Node folded = conv;
  folded.name = rw.fresh_name(conv.name + "_bn");
  folded.inputs = {rw.map(conv.inputs[0]), rw.add_constant(conv.name + "_w_bn", std::move(w2)),
                   rw.add_constant(conv.name + "_b_bn", std::move(b2))};
  return rw.add(std::move(folded));
}
}  // namespace detail

inline Graph simplify_inference(const Graph& g) {
  auto uses = use_counts(g);
  GraphRewriter rw(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::op && n.op == "identity" && n.inputs.size() == 1) {
      rw.replace(i, {rw.map(n.inputs[0])});
      continue;
    }
    // Dropout's optional mask output must be unused: it is not a copy of the input.
    if (n.kind == NodeKind::op && n.op == "dropout" && (n.num_outputs() < 2 || uses[i][1] == 0)) {
      std::vector<Value> outs{rw.map(n.inputs[0])};
      if (n.num_outputs() > 1) outs.push_back(Value{});
      rw.replace(i, outs);
      continue;
    }
    // A max pool's Indices cost a second pass over the input; ONNX models rarely read them.
    if (n.kind == NodeKind::op && n.op == "max_pool" && n.num_outputs() == 2 && uses[i][1] == 0) {
      ops::Attrs attrs = n.attrs;
      attrs.set_int("compute_indices", 0);
      rw.keep_with(i, std::move(attrs));
      continue;
    }
    if (n.kind == NodeKind::op && n.op == "batch_norm" && n.num_outputs() == 1) {
      const Value& x = n.inputs[0];
      const Node& producer = g.node(x);
      if (producer.kind == NodeKind::op && producer.op == "conv" && uses[x.node][x.index] == 1) {
        size_t folded = detail::fold_batch_norm(rw, g, n, producer);
        if (folded != Value::npos) {
          rw.replace(i, {{folded, 0}});
          continue;
        }
      }
    }
    rw.keep(i);
  }
  // The conv the batch norm consumed may now be dead; dead-code elimination removes it.
  return rw.finish();
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/simplify_inference.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

struct PassOptions {
  int opt_level = 2;
  // What the graph compiles for (layout alteration depends on it).
  target::Target target;
  // Called after each pass with its name and result (nnvmc --print-graph-after).
  std::function<void(const std::string& pass, const Graph&)> on_pass;
  // Each pass's wall time in milliseconds is added here when set.
  std::map<std::string, double>* pass_ms = nullptr;
};

struct GraphPass {
  std::string name;
  int min_level;
  std::function<Graph(const Graph&, const PassOptions&)> run;
};

inline const std::vector<GraphPass>& graph_passes() {
  static const std::vector<GraphPass> passes{
      {"simplify_inference", 1, [](const Graph& g, const PassOptions&) { return simplify_inference(g); }},
      {"fold_constants", 1, [](const Graph& g, const PassOptions&) { return fold_constants(g); }},
      {"alter_layout", 2, [](const Graph& g, const PassOptions& o) { return alter_layout(g, o.target); }},
      {"eliminate_common_subexpressions", 1,
       [](const Graph& g, const PassOptions&) { return eliminate_common_subexpressions(g); }},
      {"eliminate_dead_code", 1, [](const Graph& g, const PassOptions&) { return eliminate_dead_code(g); }},
  };
  return passes;
}

inline Graph optimize(const Graph& input, const PassOptions& options = {}) {
  Graph g = input;
  for (auto& pass : graph_passes()) {
    if (options.opt_level < pass.min_level) continue;
    auto t0 = std::chrono::steady_clock::now();
    g = pass.run(g, options);
    if (options.pass_ms)
      (*options.pass_ms)["graph." + pass.name] +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (options.on_pass) options.on_pass(pass.name, g);
  }
  return g;
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/passes/pipeline.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

struct CompileOptions {
  target::Target target;
  // 0: each op its own kernel, nothing rewritten; 1: graph passes; 2 (default): and fusion.
  int opt_level = 2;
  // Called after each graph pass (nnvmc --print-graph-after).
  std::function<void(const std::string& pass, const Graph&)> on_graph_pass;
  // Values for the graph inputs' symbolic extents (bind_shapes); every extent must be known.
  std::map<std::string, int64_t> symbols;
  // Empty: the host C compiler (graph/executor.hpp). The LLVM library provides one for target
  // "llvm" (codegen/llvm_graph.hpp).
  KernelCompiler compiler;
  // Passed to every kernel's lowering: on_pass shows the IR after each pass, pass_ms times them.
  lower::LowerOptions lower;
};

// A model whose kernels are lowered but not yet compiled: the first half of compile(). The
// conformance runner prepares many models and links them in one compiler batch.
struct PreparedModel {
  CompiledModel model;
  std::vector<ir::LoweredFunc> funcs;  // one per kernel of model.steps()
};

namespace detail {
inline std::vector<int64_t> static_shape(const Graph& g, const Node& n, const TensorType& t) {
  std::vector<int64_t> shape;
  for (auto& e : t.shape) {
    ir::Expr s = ir::simplify(e);
    auto* c = ir::as_const_int(s);
    if (!c)
      throw UserError("nnvm.compile.symbolic_extent",
                      str_cat("extent ", ir::to_string(s), " is not known; bind it (CompileOptions::symbols, "
                                                           "nnvmc --define-symbol)"),
                      where(g, &n));
    shape.push_back(*c);
  }
  return shape;
}

// Identical op uses (same op, attributes and input types) share one kernel.
inline std::string kernel_key(const Node& n, const std::vector<TensorType>& in, const Attrs& attrs) {
  std::string key = n.op + "(";
  for (auto& t : in) {
    key += t.absent ? std::string("-") : t.dtype.str();
    for (auto& e : t.shape) key += "," + ir::to_string(e);
    key += ";";
  }
  key += ")";
  for (auto& [name, v] : attrs.values()) {
    key += name + "=";
    std::visit([&](auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, std::string>) key += x;
      else if constexpr (std::is_arithmetic_v<T>) key += str_cat(x);
      else for (auto& e : x) key += str_cat(e, ",");
    }, v);
    key += ";";
  }
  return key;
}

inline std::string kernel_name(const Node& n, size_t index) {
  std::string s = str_cat("k", index, "_", n.op);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}
inline UserError with_node_context(const Graph& g, const Node& n, const UserError& e) {
  std::vector<std::string> ctx = where(g, &n);
  ctx.insert(ctx.end(), e.context().begin(), e.context().end());
  return UserError(e.id(), e.message(), std::move(ctx));
}

// The arena's buffers: every activation a step writes that is not a model output, living from
// that step to the last step that reads it; `slots` lists them in order of first write.
struct ActivationLifetimes {
  std::vector<size_t> slots;
  std::vector<BufferLifetime> lifetimes;  // parallel to `slots`
};
inline ActivationLifetimes activation_lifetimes(const std::vector<Step>& steps, const std::vector<Slot>& slots,
                                                const std::vector<size_t>& output_slots) {
  std::vector<bool> is_output(slots.size(), false);
  for (size_t s : output_slots) is_output[s] = true;
  ActivationLifetimes out;
  std::map<size_t, size_t> index;
  for (size_t st = 0; st < steps.size(); ++st) {
    for (size_t s : steps[st].outputs) {
      if (slots[s].kind != Slot::Kind::activation || is_output[s]) continue;
      index[s] = out.slots.size();
      out.slots.push_back(s);
      out.lifetimes.push_back({slots[s].bytes(), st, st});
    }
    for (size_t s : steps[st].inputs)
      if (auto it = index.find(s); it != index.end()) out.lifetimes[it->second].last = st;
  }
  return out;
}

}  // namespace detail

// Binds symbols, runs the graph passes, infers types, groups ops, lowers one kernel per distinct
// group and plans slots, steps and memory. Errors name the node: an op that cannot be built
// ("nnvm.ops.*" with graph › node context), an extent left symbolic ("nnvm.compile.symbolic_extent").
inline PreparedModel prepare(const Graph& input, const CompileOptions& options = {}) {
  PreparedModel p;
  CompiledModel& m = p.model;
  m.target_ = options.target;
  Graph bound = options.symbols.empty() ? input : bind_shapes(input, options.symbols);
  infer_types(bound);
  m.graph_ = optimize(bound, {.opt_level = options.opt_level, .target = options.target, .on_pass = options.on_graph_pass,
                              .pass_ms = options.lower.pass_ms});
  infer_types(m.graph_);
  const Graph& g = m.graph_;

  // One slot per node output.
  std::vector<std::vector<size_t>> slot_of(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (size_t k = 0; k < n.num_outputs(); ++k) {
      Slot s;
      s.dtype = n.types[k].dtype;
      s.shape = detail::static_shape(g, n, n.types[k]);
      s.name = k == 0 ? n.name : str_cat(n.name, ":", k);
      if (n.kind == NodeKind::input) {
        s.kind = Slot::Kind::input;
        s.input_index = m.input_slots_.size();
        m.input_slots_.push_back(m.slots_.size());
      } else if (n.kind == NodeKind::constant) {
        s.kind = Slot::Kind::constant;
        s.data = n.data;
      }
      slot_of[i].push_back(m.slots_.size());
      m.slots_.push_back(std::move(s));
    }
  }

  // Groups in node order; opt level < 2 keeps every op alone.
  std::vector<size_t> group_of = options.opt_level >= 2 ? fusion_groups(g, {.family = options.target.recipe_family()}) : std::vector<size_t>{};
  std::map<size_t, std::vector<size_t>> groups;
  std::vector<size_t> order;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != NodeKind::op) continue;
    size_t id = options.opt_level >= 2 ? group_of[i] : i;
    if (!groups.count(id)) order.push_back(id);
    groups[id].push_back(i);
  }
  auto uses = use_counts(g);
  std::map<std::string, size_t> kernel_of;
  for (size_t id : order) {
    const std::vector<size_t>& nodes = groups[id];
    std::string key;
    for (size_t i : nodes) {
      const Node& n = g.nodes[i];
      const ops::OpDef& def = g.registry->get(n.op);
      key += detail::kernel_key(n, detail::input_types(g, n), detail::node_attrs(g, n, def)) + "|";
    }
    // The wiring matters too (which inputs are the same value, which come from inside): values
    // from outside are numbered by first use, values from inside by position relative to the master.
    std::map<std::pair<size_t, size_t>, size_t> outside;
    for (size_t i : nodes)
      for (auto& v : g.nodes[i].inputs) {
        if (!v.defined()) key += "-,";
        else if (v.node >= nodes[0] && groups[id].end() != std::find(nodes.begin(), nodes.end(), v.node))
          key += str_cat("i", v.node - nodes[0], ":", v.index, ",");
        else key += str_cat("o", outside.emplace(std::pair{v.node, v.index}, outside.size()).first->second, ",");
      }
    // Fusion (passes/fuse.hpp) decided the groups; each becomes exactly one kernel. A group that
    // cannot be built is an error naming its first node, never a silent split into op kernels.
    detail::GroupKernel built;
    try {
      built = detail::build_group(g, nodes, uses, options.target, options.lower,
                                  detail::kernel_name(g.nodes[nodes[0]], p.funcs.size()));
    } catch (const UserError& e) {
      throw detail::with_node_context(g, g.nodes[nodes[0]], e);
    }
    Step st;
    st.nodes = nodes;
    for (size_t i : st.nodes) st.label += (st.label.empty() ? "" : "+") + g.nodes[i].op;
    auto [it, fresh] = kernel_of.emplace(key, p.funcs.size());
    if (fresh) p.funcs.push_back(built.func);
    st.kernel = it->second;
    for (auto& v : built.inputs) st.inputs.push_back(slot_of[v.node][v.index]);
    for (auto& v : built.outputs) st.outputs.push_back(slot_of[v.node][v.index]);
    m.steps_.push_back(std::move(st));
  }
  for (auto& v : g.outputs) m.output_slots_.push_back(slot_of[v.node][v.index]);

  // Memory: activations that are not model outputs share the arena by lifetime.
  std::vector<bool> is_output(m.slots_.size(), false);
  for (size_t s : m.output_slots_) is_output[s] = true;
  for (auto& st : m.steps_)
    for (size_t s : st.outputs)
      if (m.slots_[s].kind == Slot::Kind::activation && is_output[s]) m.memory_.output_bytes += m.slots_[s].bytes();
  detail::ActivationLifetimes act = detail::activation_lifetimes(m.steps_, m.slots_, m.output_slots_);
  MemoryPlan plan = plan_memory(act.lifetimes);
  for (size_t b = 0; b < act.slots.size(); ++b) m.slots_[act.slots[b]].arena_offset = plan.offsets[b];
  m.memory_.arena_bytes = plan.arena_bytes;
  m.memory_.unplanned_bytes = plan.unplanned_bytes;
  m.plan_run();
  return p;
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/prepare.hpp

NNVM_BEGIN_NAMESPACE
namespace graph {

// The host C compiler (target::jit_c) as a KernelCompiler: one compiler call for the batch.
inline KernelCompiler c_kernel_compiler(target::CJitOptions options = {}) {
  return [options](const std::vector<ir::LoweredFunc>& fns) { return target::jit_c(fns, options); };
}

// Compiles the kernels of several prepared models in one batch (kernel names get a per-model
// prefix so they stay unique) and returns the runnable models in order.
inline std::vector<CompiledModel> link(std::vector<PreparedModel> prepared, const KernelCompiler& compiler = {}) {
  std::vector<ir::LoweredFunc> all;
  for (size_t i = 0; i < prepared.size(); ++i)
    for (auto f : prepared[i].funcs) {
      if (prepared.size() > 1) f.name = str_cat("m", i, "_", f.name);
      all.push_back(std::move(f));
    }
  std::vector<target::Kernel> kernels = compiler ? compiler(all) : c_kernel_compiler()(all);
  if (kernels.size() != all.size())
    throw InternalError("nnvm.compile.kernel_count",
                        str_cat("the kernel compiler returned ", kernels.size(), " kernels for ", all.size()));
  std::vector<CompiledModel> out;
  size_t next = 0;
  for (auto& p : prepared) {
    CompiledModel& m = p.model;
    m.kernels_.assign(kernels.begin() + ptrdiff_t(next), kernels.begin() + ptrdiff_t(next + p.funcs.size()));
    next += p.funcs.size();
    // The run loop calls kernels by their entry points, with static shapes and the largest
    // step's workspace.
    const int64_t no_sizes = 0;
    for (const target::Kernel& k : m.kernels_) {
      if (!k.func().size_vars.empty())
        throw InternalError("nnvm.compile.symbolic_kernel",
                            str_cat("kernel ", k.func().name, " has symbolic sizes after shapes were bound"));
      m.plan_.kernels.push_back(k.raw_function());
      m.plan_.workspace_bytes = std::max(m.plan_.workspace_bytes, k.raw_workspace_bytes()(&no_sizes));
    }
    m.plan_.workspace_bytes = (m.plan_.workspace_bytes + 63) / 64 * 64;
    out.push_back(std::move(m));
  }
  return out;
}

// Compiles `g` for options.target: prepare, then one compiler batch for its kernels.
inline CompiledModel compile(const Graph& g, const CompileOptions& options = {}) {
  std::vector<PreparedModel> one;
  one.push_back(prepare(g, options));
  KernelCompiler compiler = options.compiler;
  if (!compiler) {  // the host C compiler, for the target's CPU
    target::CJitOptions c;
    c.cpu = options.target.cpu;
    compiler = c_kernel_compiler(c);
  }
  return std::move(link(std::move(one), compiler).front());
}

}  // namespace graph
NNVM_END_NAMESPACE
// end nnvm/graph/executor.hpp
// end nnvm/graph/graph.hpp
// end nnvm/nnvm.hpp
