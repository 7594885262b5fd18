// The whole lowering, as one readable list of passes: Schedule -> LoweredFunc.
//
// Set NNVM_DUMP_IR to a comma-separated list of pass names (or "all") to print the IR after
// those passes to stderr; LowerOptions::on_pass receives the same (name, IR) pairs, which is
// how tutorials show each step.
#pragma once

#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <iostream>
#include <sstream>

#include "nnvm/ir/printer.hpp"
#include "nnvm/ir/simplify.hpp"
#include "nnvm/ir/verifier.hpp"
#include "nnvm/lower/infer_bounds.hpp"
#include "nnvm/lower/legalize_vectors.hpp"
#include "nnvm/lower/schedule_ops.hpp"
#include "nnvm/lower/storage_flatten.hpp"
#include "nnvm/lower/unroll.hpp"
#include "nnvm/lower/vectorize.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

struct LowerOptions {
  // Called after every pass with its name and the IR it produced.
  std::function<void(const std::string& pass, const ir::Stmt&)> on_pass;
  // When set, each pass's wall time in milliseconds is added to (*pass_ms)[pass name]
  // ("schedule_ops" includes inlining and bound inference), summed over every kernel lowered.
  std::map<std::string, double>* pass_ms = nullptr;
  // The target's SIMD register width in bits: legalize_vectors splits wider vectorized loops
  // into register-wide ones. Defaults to this machine's, where JIT-compiled kernels run;
  // graph::compile sets it from CompileOptions::target. 0 keeps vectors as scheduled.
  int vector_bits = target::Target::host_vector_bits();
};

// The pass names, in order; NNVM_DUMP_IR accepts these.
inline const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names{"schedule_ops", "storage_flatten",  "simplify", "legalize_vectors",
                                              "vectorize",    "unroll",           "final_simplify"};
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
  auto last = std::chrono::steady_clock::now();
  auto step = [&](const std::string& pass, ir::Stmt s) {
    if (options.pass_ms) {
      auto now = std::chrono::steady_clock::now();
      (*options.pass_ms)[pass] += std::chrono::duration<double, std::milli>(now - last).count();
      last = now;
    }
    if (options.on_pass) options.on_pass(pass, s);
    if (detail::dump_requested(pass)) std::cerr << "// ---- after " << pass << " (" << name << ")\n" << ir::to_string(s) << "\n";
    return s;
  };
  BodyMap bodies = inline_stages(sch);
  ir::Stmt s = step("schedule_ops", schedule_ops(sch, bodies, infer_bounds(sch, bodies), args));
  s = step("storage_flatten", storage_flatten(s, arg_buffers));
  s = step("simplify", ir::simplify(s));
  s = step("legalize_vectors", legalize_vectors(s, options.vector_bits));
  s = step("vectorize", vectorize_loops(s));
  s = step("unroll", unroll_loops(s));
  s = step("final_simplify", ir::simplify(s));
  fn.size_vars = detail::shape_vars(fn.params);
  for (auto& v : detail::free_vars(s))
    if (std::none_of(fn.size_vars.begin(), fn.size_vars.end(), [&](const ir::Var& x) { return x.same_as(v); }))
      throw UserError("nnvm.lower.unbound_size",
                      str_cat("symbolic size ", v.name(), " is used by kernel ", name,
                              " but is not an extent of any argument, so no call could bind it"));
  fn.body = s;
  fn.written = detail::written_params(fn);
  ir::verify(fn);
  return fn;
}

}  // namespace lower
NNVM_END_NAMESPACE
