// The host/device split of a GPU function. A function lowered for the GPU family is a nest of
// global allocations (intermediate stages) around a sequence of loop nests, one per stage root,
// whose outer loops are bound to grid axes (ops/schedule_gpu.hpp). Each such nest becomes one
// device kernel with its launch: the grid and block extents are the extents of the loops bound
// to blockIdx.* and threadIdx.*. The global allocations become device buffers the host creates
// once and passes to the kernels that use them; the host launches the kernels in order.
//
// Checked here, each with an error id (the verifier's part of GPU lowering; a stage binding two
// of its own loops to one axis is refused earlier, by Stage::bind):
//   nnvm.codegen.launch_extent       a bound loop whose extent is not a constant
//   nnvm.codegen.block_limit         a block of more threads than the target's limit
//   nnvm.codegen.shared_memory_limit shared memory over the target's per-block limit
// A loop bound to an axis inside another loop bound to it (a stage computed at a thread's loop
// that binds its own loops, such as a shared tile the block's threads load together) takes the
// same thread index. Where loops bound to one axis have different extents in one kernel, the
// axis takes the largest and the shorter loops are guarded, so every thread of a launch runs the
// same code. Shared storage is one per block wherever its allocation sits (the emitter declares
// it at kernel scope).
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "nnvm/ir/function.hpp"
#include "nnvm/ir/functor.hpp"
#include "nnvm/target/target.hpp"

NNVM_BEGIN_NAMESPACE
namespace target {

// Grid and block extents of one launch, x y z.
struct LaunchDims {
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int64_t threads_per_block() const { return block[0] * block[1] * block[2]; }
  int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
};

struct DeviceKernel {
  // Its parameters are the buffers it reads or writes (module.buffer(args[i])), then the
  // function's symbolic sizes.
  ir::LoweredFunc func;
  std::vector<size_t> args;  // per func.params: index into DeviceModule::buffer()
  LaunchDims launch;
  int64_t shared_bytes = 0;  // static shared memory of one block
};

struct DeviceModule {
  std::string name, origin;
  std::vector<ir::Buffer> params;  // the function's parameters, in the caller's order
  std::vector<ir::Buffer> temps;   // device buffers the host allocates for intermediates
  std::vector<DeviceKernel> kernels;  // in launch order
  std::vector<ir::Var> size_vars;

  size_t buffer_count() const { return params.size() + temps.size(); }
  const ir::Buffer& buffer(size_t i) const { return i < params.size() ? params[i] : temps[i - params.size()]; }
};

namespace detail {

inline int axis_of(const std::string& tag) { return tag.back() - 'x'; }
inline bool is_block_tag(const std::string& tag) { return tag.rfind("blockIdx.", 0) == 0; }

// Launch extents, shared memory and the checks of one kernel's body.
class LaunchScan : public ir::IRVisitor {
 public:
  explicit LaunchScan(const std::string& kernel) : kernel_(kernel) {}
  std::map<std::string, int64_t> extent;  // per bound axis tag: the largest loop extent
  int64_t shared_bytes = 0;
  std::set<const ir::BufferNode*> used, stored;

  void visit(const ir::For* op) override {
    if (op->for_kind != ir::ForKind::thread_binding) return IRVisitor::visit(op);
    const int64_t* e = ir::as_const_int(op->extent);
    if (!e || !ir::is_const_int(op->min, 0))
      throw UserError("nnvm.codegen.launch_extent",
                      str_cat("loop ", op->loop_var.name(), " bound to ", op->thread_tag,
                              " needs a constant extent from 0 to size the launch (shapes must be static on GPUs)"),
                      {"kernel " + kernel_});
    extent[op->thread_tag] = std::max(extent[op->thread_tag], *e);
    IRVisitor::visit(op);
  }
  void visit(const ir::Allocate* op) override {
    if (op->buffer->scope == ir::MemoryScope::shared) {
      int64_t bytes = op->buffer->dtype.bytes();
      for (auto& d : op->buffer->shape) {
        const int64_t* c = ir::as_const_int(d);
        if (!c)
          throw UserError("nnvm.codegen.launch_extent",
                          str_cat("shared buffer ", op->buffer->name, " needs a constant size"), {"kernel " + kernel_});
        bytes *= *c;
      }
      shared_bytes += bytes;
    }
    IRVisitor::visit(op);
  }
  void visit(const ir::Load* op) override {
    used.insert(op->buffer.get());
    IRVisitor::visit(op);
  }
  void visit(const ir::Store* op) override {
    used.insert(op->buffer.get());
    stored.insert(op->buffer.get());
    IRVisitor::visit(op);
  }

 private:
  std::string kernel_;
};

// Gives every loop bound to an axis the axis' launch extent, guarding the shorter ones; a loop
// bound to vthread becomes a serial loop (one thread runs the virtual threads in turn).
class FillLaunch : public ir::IRMutator {
 public:
  explicit FillLaunch(const std::map<std::string, int64_t>& extent) : extent_(extent) {}

 protected:
  ir::Stmt visit(const ir::For* op, const ir::Stmt& s) override {
    if (op->for_kind != ir::ForKind::thread_binding) return IRMutator::visit(op, s);
    ir::Stmt body = mutate(op->body);
    if (op->thread_tag == "vthread")
      return ir::For::make(op->loop_var, op->min, op->extent, ir::ForKind::serial, body);
    int64_t launch = extent_.at(op->thread_tag), own = *ir::as_const_int(op->extent);
    if (own < launch) body = ir::IfThenElse::make(op->loop_var < ir::Expr(own), body);
    return ir::For::make(op->loop_var, op->min, ir::Expr(launch), op->for_kind, body, op->thread_tag);
  }

 private:
  const std::map<std::string, int64_t>& extent_;
};

// The top-level statements of `s` below its global allocations, which go to `temps`.
inline void peel_kernels(const ir::Stmt& s, std::vector<ir::Buffer>& temps, std::vector<ir::Stmt>& nests) {
  if (auto* a = s.as<ir::Allocate>(); a && a->buffer->scope == ir::MemoryScope::global) {
    temps.push_back(a->buffer);
    return peel_kernels(a->body, temps, nests);
  }
  if (auto* q = s.as<ir::Seq>()) {
    for (auto& item : q->seq) peel_kernels(item, temps, nests);
    return;
  }
  if (s.defined()) nests.push_back(s);
}

}  // namespace detail

// One kernel per top-level loop nest of `fn` (see the file comment). A nest with no bound loop
// (a stage with no axes) runs as one thread.
NNVM_COMPILER_INLINE DeviceModule split_host_device(const ir::LoweredFunc& fn, const Target& target);
#if NNVM_COMPILER_DEFINITIONS
NNVM_COMPILER_INLINE DeviceModule split_host_device(const ir::LoweredFunc& fn, const Target& target) {
  DeviceModule m;
  m.name = fn.name;
  m.origin = fn.origin;
  m.params = fn.params;
  m.size_vars = fn.size_vars;
  std::vector<ir::Stmt> nests;
  detail::peel_kernels(fn.body, m.temps, nests);
  for (size_t k = 0; k < nests.size(); ++k) {
    DeviceKernel kernel;
    std::string name = nests.size() == 1 ? fn.name : str_cat(fn.name, "_k", k);
    detail::LaunchScan scan(name);
    scan.visit_stmt(nests[k]);
    // Plain pairs, not a structured binding: built by GCC 12 with -fsanitize=address, that loop
    // read a key of the previous kernel's (freed) map.
    for (const auto& bound : scan.extent) {
      if (bound.first == "vthread") continue;
      int64_t* dims = detail::is_block_tag(bound.first) ? kernel.launch.grid : kernel.launch.block;
      dims[detail::axis_of(bound.first)] = bound.second;
    }
    if (kernel.launch.threads_per_block() > target.gpu.max_threads_per_block)
      throw UserError("nnvm.codegen.block_limit",
                      str_cat("a block of ", kernel.launch.threads_per_block(), " threads is over the target's limit of ",
                              target.gpu.max_threads_per_block, "; split the thread axes further"),
                      {"kernel " + name});
    if (scan.shared_bytes > target.gpu.shared_memory_bytes)
      throw UserError("nnvm.codegen.shared_memory_limit",
                      str_cat("the block uses ", scan.shared_bytes, " bytes of shared memory, over the target's ",
                              target.gpu.shared_memory_bytes),
                      {"kernel " + name});
    kernel.shared_bytes = scan.shared_bytes;
    kernel.func.name = name;
    kernel.func.origin = nests.size() == 1 ? fn.origin : str_cat("launch ", k + 1, " of ", nests.size(), " of ", fn.origin);
    kernel.func.size_vars = fn.size_vars;
    for (size_t b = 0; b < m.buffer_count(); ++b)
      if (scan.used.count(m.buffer(b).get())) {
        kernel.args.push_back(b);
        kernel.func.params.push_back(m.buffer(b));
        kernel.func.written.push_back(scan.stored.count(m.buffer(b).get()) > 0);
      }
    kernel.func.body = detail::FillLaunch(scan.extent).mutate(nests[k]);
    m.kernels.push_back(std::move(kernel));
  }
  return m;
}
#endif  // NNVM_COMPILER_DEFINITIONS

}  // namespace target
NNVM_END_NAMESPACE
