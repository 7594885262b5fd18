// Checks the buffers given to a kernel call against the kernel's signature and binds its
// symbolic sizes. Shared by the interpreter and every JIT, so all report the same errors.
#pragma once

#include <optional>
#include <span>

#include "nnvm/ir/function.hpp"
#include "nnvm/ir/substitute.hpp"
#include "nnvm/ndarray.hpp"

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
NNVM_COMPILER_INLINE std::vector<int64_t> bind_arguments(const ir::LoweredFunc& fn, std::span<const BufferView> args);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE std::vector<int64_t> bind_arguments(const ir::LoweredFunc& fn, std::span<const BufferView> args) {
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
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace target
NNVM_END_NAMESPACE
