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
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <map>
#include <iostream>
#include <sstream>

#include "nnvm/ir/printer.hpp"
#include "nnvm/ir/simplify.hpp"
#include "nnvm/ir/verifier.hpp"
#include "nnvm/lower/infer_bounds.hpp"
#include "nnvm/lower/insert_barriers.hpp"
#include "nnvm/lower/legalize_vectors.hpp"
#include "nnvm/lower/schedule_ops.hpp"
#include "nnvm/lower/storage_flatten.hpp"
#include "nnvm/lower/unroll.hpp"
#include "nnvm/lower/vectorize.hpp"
#include "nnvm/target/family.hpp"
#include "nnvm/target/target.hpp"

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
        // Shared memory that threads write and then read needs barriers between (GPU only).
        {"insert_barriers", {P::flat_buffers}, {}, {}, {target::Family::gpu},
         [](LowerState& s) { s.body = insert_barriers(s.body); }},
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
NNVM_COMPILER_INLINE ir::LoweredFunc lower(const schedule::Schedule& sch, const std::vector<te::Tensor>& args,
                                           const std::string& name, const LowerOptions& options = {});
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE ir::LoweredFunc lower(const schedule::Schedule& sch, const std::vector<te::Tensor>& args,
                                           const std::string& name, const LowerOptions& options) {
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
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace lower
NNVM_END_NAMESPACE
