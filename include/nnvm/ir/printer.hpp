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
#pragma once

#include <charconv>
#include <cmath>
#include <optional>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "nnvm/ir/function.hpp"

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
      case ExprKind::BitCast:
        os_ << "bit_cast<" << e.dtype() << ">";
        call("", {e.as<BitCast>()->value});
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
