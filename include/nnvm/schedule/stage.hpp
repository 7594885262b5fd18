// A Stage is the schedule of one compute operation: the order and kind of its loops.
// Every primitive validates its arguments and throws UserError with a stable id whose context
// names the stage and the axis.
#pragma once

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "nnvm/schedule/relations.hpp"
#include "nnvm/schedule/thread_axis.hpp"
#include "nnvm/ir/stmt.hpp"
#include "nnvm/te/operation.hpp"

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
  bool scan_body = false;                 // computed per step of a scan (reads its state): never at the root
  std::string scan;                       // a scan's stage or body stage: the scan's (first output's) name
};

class Stage {
 public:
  Stage() = default;
  explicit Stage(const te::Tensor& t) {
    if (t.op().kind == te::OpKind::placeholder)
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
  void mark_scan_body(const std::string& scan) {
    node_->scan_body = true;
    node_->scan = scan;
  }
  // The serial step loop of a scan stage (axis 0): never split, fused, reordered inward or
  // annotated, because each step reads the rows the steps before it wrote.
  bool is_scan_axis(const IterVar& iv) const {
    return node_->tensor.op().kind == te::OpKind::scan && !node_->axis.empty() && iv.same_as(node_->axis[0]);
  }
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
    for (auto& iv : order)
      if (is_scan_axis(iv) && !leaves[0].same_as(iv)) check_not_scan_axis(iv, "reorder");
    node_->leaf_iter_vars = std::move(leaves);
  }
  // Fuses two adjacent loops (outer immediately enclosing inner) into one.
  IterVar fuse(const IterVar& outer, const IterVar& inner) {
    size_t po = leaf_position(outer, "fuse"), pi = leaf_position(inner, "fuse");
    check_not_scan_axis(outer, "fuse");
    check_not_scan_axis(inner, "fuse");
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
    check_not_scan("compute_at");
    parent.leaf_position(iv, "compute_at");
    node_->attach = AttachKind::at;
    node_->attach_stage = parent.node_;
    node_->attach_iv = iv;
  }
  // Substitutes this stage's body into its consumers: no loops, no storage.
  void compute_inline() {
    if (node_->is_output)
      throw UserError("nnvm.schedule.inline_output", "an output of the schedule cannot be inlined", ctx());
    check_not_scan("compute_inline");
    if (!node_->reduce_axes.empty())
      throw UserError("nnvm.schedule.inline_reduction",
                      "a reduction cannot be inlined (its value needs a loop); compute it at a consumer's loop instead", ctx());
    node_->attach = AttachKind::inlined;
  }
  // Computes the whole tensor at the kernel's top level (the default).
  void compute_root() {
    if (node_->scan_body)
      throw UserError("nnvm.schedule.scan_body_root",
                      "this stage reads a scan's state, so it runs once per step inside the scan's loop; at the root "
                      "it would compute every step before the state exists",
                      ctx());
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
  // Binds the loop to a GPU grid axis: gpu::block_x/y/z, gpu::thread_x/y/z or gpu::vthread. A
  // reduction loop may be bound to a thread axis: the threads of a block then reduce together
  // (lower/cross_thread_reduction.hpp); blocks and virtual threads cannot share a reduction.
  void bind(const IterVar& iv, ThreadAxis axis) {
    const std::string thread_tag = schedule::thread_tag(axis);
    const bool thread = axis == ThreadAxis::thread_x || axis == ThreadAxis::thread_y || axis == ThreadAxis::thread_z;
    if (iv->kind == ir::IterKind::reduce && !thread)
      throw UserError("nnvm.schedule.bind_reduction",
                      str_cat("cannot bind reduction loop ", iv.name(), " to ", thread_tag,
                              ": only the threads of one block can reduce together (bind it to threadIdx)"),
                      ctx(iv));
    if (iv->kind == ir::IterKind::reduce)
      for (auto& [other, a] : node_->attrs)
        if (a.kind == ForKind::thread_binding && other != iv.get() && other->kind == ir::IterKind::reduce)
          throw UserError("nnvm.schedule.bind_reduction",
                          str_cat("another reduction loop of this stage is already bound to ", a.thread_tag,
                                  "; a stage reduces across one thread axis"),
                          ctx(iv));
    // A scan's steps wait for each other at barriers, which reach the threads of one block only.
    const std::string scan = node_->tensor.op().kind == te::OpKind::scan ? node_->tensor.op().scan_outputs.front()->name : node_->scan;
    if (!thread && !scan.empty())
      throw UserError("nnvm.schedule.scan_block",
                      str_cat("cannot bind loop ", iv.name(), " of scan ", scan, " to ", thread_tag,
                              ": a scan runs in one block, whose threads share each step (bind to threadIdx)"),
                      ctx(iv));
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
  void check_not_scan_axis(const IterVar& iv, const char* primitive) const {
    if (is_scan_axis(iv))
      throw UserError("nnvm.schedule.scan_axis",
                      str_cat(primitive, " on the step axis of a scan: each step reads the rows earlier steps wrote, so "
                                         "the axis stays one serial loop, outermost; schedule the other axes or the body stages"),
                      ctx(iv));
  }
  void check_not_scan(const char* primitive) const {
    if (node_->tensor.op().kind == te::OpKind::scan)
      throw UserError("nnvm.schedule.scan_stage",
                      str_cat(primitive, " on a scan: a scan is computed whole at the root (its body stages are "
                                         "what runs per step)"),
                      ctx());
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
    check_not_scan_axis(parent, "split");
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
    check_not_scan_axis(iv, primitive);
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
