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
#pragma once

#include <algorithm>
#include <set>
#include <unordered_set>

#include "nnvm/target/c_like.hpp"
#include "nnvm/target/kernel_abi_source.hpp"
#include "nnvm/target/kernel_signature.hpp"
#include "nnvm/target/reserved_names.hpp"
#include "nnvm/target/storage_plan.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// C99 with GCC/Clang vector extensions: typedef'd vector types indexed by lane, compound-literal
// broadcasts, memcpy for the bit casts of the float16/bfloat16 helpers, and a union for ir::BitCast.
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
    c.bit_cast = "((union { ${from} from; ${to} to; }){.from = ${value}}).to";  // C99 type punning
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
NNVM_COMPILER_INLINE std::string emit_c(const std::vector<ir::LoweredFunc>& fns);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE std::string emit_c(const std::vector<ir::LoweredFunc>& fns) {
  return CEmitter().emit_module(fns).source;
}
#endif  // NNVM_COMPILER_DEFINITIONS
inline std::string emit_c(const ir::LoweredFunc& fn) { return emit_c(std::vector<ir::LoweredFunc>{fn}); }
// The symbols emit_c exports for `fns`, in order (name_workspace_bytes is each plus that suffix).
NNVM_COMPILER_INLINE CModule emit_c_module(const std::vector<ir::LoweredFunc>& fns, CModuleOptions options = {});
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE CModule emit_c_module(const std::vector<ir::LoweredFunc>& fns, CModuleOptions options) {
  return CEmitter(options).emit_module(fns);
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace target
NNVM_END_NAMESPACE
