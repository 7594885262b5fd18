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
#pragma once

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "nnvm/ir/function.hpp"
#include "nnvm/ir/substitute.hpp"
#include "nnvm/target/dialect.hpp"
#include "nnvm/target/name_table.hpp"
#include "nnvm/target/storage_helpers.hpp"

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
  bool needs_storage_[target::kStorageHelpers] = {};

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
  // `s` (a kernel's origin) as the text of a // comment: one line, and no backslash that would
  // continue the comment onto the next line.
  static std::string comment_text(const std::string& s) {
    std::string out;
    for (char c : s) out += (c == '\n' || c == '\r') ? ' ' : c == '\\' ? '/' : c;
    return out.empty() ? "(origin not recorded)" : out;
  }

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
      end = operand(ext, cprec::rel, true);  // `i < (n < 1 ? n : 1)`, a min() extent
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
    if (t.is_sub_byte_int()) return t.is_int() ? "int8" : "uint8";
    if (t.is_storage_only()) return t.bits <= 8 ? "uint8" : "uint16";
    return t.element_of().str();
  }

  // ---- literals ------------------------------------------------------------------------------

  virtual CExpr float_literal(double v, DataType t) {
    if (t.is_storage_only()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, t.bits <= 8 ? "0x%02x" : "0x%04x", unsigned(storage_encode(t, float(v))));
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
    if (to.is_sub_byte_int()) {  // the value's low bits, sign-extended for int4/int2 (a float truncated as for int64)
      std::string x = from.is_storage_only() && from.is_float() ? storage_to_float(from, v.text) : operand(v, cprec::unary);
      if (from.is_float()) x = "(" + scalar_type(dtype::int64) + ")" + x;
      std::string u = "(" + scalar_type(dtype::uint32) + ")" + x, sh = std::to_string(32 - to.bits);
      result_ = {to.is_int() ? "(" + scalar_type(to) + ")((" + scalar_type(dtype::int32) + ")(" + u + " << " + sh + ") >> " + sh + ")"
                             : "(" + scalar_type(to) + ")(" + u + " & " + std::to_string((1u << to.bits) - 1u) + "u)",
                 cprec::unary};
      return;
    }
    if (from.is_sub_byte_int()) from = from.is_int() ? dtype::int8 : dtype::uint8;  // held as such
    if (from == to) { result_ = v; return; }
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

  void visit(const ir::BitCast* op) override {
    DataType to = op->dtype.element_of();
    if (op->dtype.is_vector()) {
      result_ = lanewise({op->value}, [to](const std::vector<ir::Expr>& x) { return ir::BitCast::make(to, x[0]); });
      return;
    }
    if (dialect_.bit_cast.empty())
      throw BackendError("nnvm.codegen.bit_cast", str_cat("the dialect spells no bit cast (", op->value.dtype(), " to ", to, ")"));
    result_ = {fill(dialect_.bit_cast, {{"from", scalar_type(op->value.dtype())}, {"to", scalar_type(to)},
                                        {"value", print(op->value).text}}),
               cprec::primary};
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
    needs_storage_[target::storage_helper_index(t, true)] = true;
    return target::storage_helper_name(t, true) + "(" + v + ")";
  }
  std::string float_to_storage(DataType t, const std::string& v) {
    needs_storage_[target::storage_helper_index(t, false)] = true;
    return target::storage_helper_name(t, false) + "(" + v + ")";
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
