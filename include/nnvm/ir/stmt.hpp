// Statement nodes of the loop-nest IR.
#pragma once

#include "nnvm/ir/op.hpp"

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
