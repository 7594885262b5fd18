// A Schedule holds one Stage per compute (or scan) operation that the outputs depend on,
// producers first. `s[C]` is the stage of tensor C. cache_read, cache_write and rfactor add
// stages. The stages between a scan's states and its updates start computed at the scan's step
// loop (once per step; a scan of several states steps in its first output's stage, and every
// output of it is a stage); everything else starts at the root.
#pragma once

#include "nnvm/schedule/stage.hpp"

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
      if (t.op().kind != te::OpKind::placeholder) stages_.emplace_back(t);
    for (auto& o : outputs_) {
      if (o.op().kind == te::OpKind::placeholder)
        throw UserError("nnvm.schedule.output_placeholder", str_cat("output ", o.name(), " is a placeholder, not a computed tensor"));
      (*this)[o].mark_output();
    }
    for (auto& st : stages_) {
      // The body of a scan of several states runs in the first output's step loop.
      if (!is_scan_leader(st)) continue;
      for (auto& t : st.tensor().op().scan_body) {
        Stage body = (*this)[te::Tensor(t)];
        if (body.node().is_output)
          throw UserError("nnvm.schedule.scan_body_output",
                          str_cat("output ", t->name, " reads the state of scan ", st.name(),
                                  " and is computed one step at a time inside it; make it part of the scan's result"),
                          body.ctx());
        body.compute_at(st, st.axis(0));
        body.mark_scan_body(st.name());
      }
    }
  }

  const std::vector<te::Tensor>& outputs() const { return outputs_; }

  // A scan's first output: its stage's nest is the step loop of every output of the scan,
  // which holds the body stages and stores each output's row (lower/schedule_ops.hpp).
  static bool is_scan_leader(const Stage& st) {
    const te::OperationNode& op = st.tensor().op();
    return op.kind == te::OpKind::scan && op.scan_outputs.front() == st.tensor().get();
  }
  // Another output of a scan of several states: stored inside the first output's step loop.
  static bool is_scan_follower(const Stage& st) {
    return st.tensor().op().kind == te::OpKind::scan && !is_scan_leader(st);
  }
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
    for (auto& st : stages_)
      if (st.tensor().op().scan_state.get() == t.get())
        throw UserError("nnvm.schedule.scan_state",
                        str_cat("cache_read of ", t.name(), ", the state of scan ", st.name(),
                                ": its rows are written step by step, so a copy made before the scan would be stale"));
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
    if (t.op().kind == te::OpKind::scan)
      throw UserError("nnvm.schedule.scan_stage", "cache_write on a scan: a scan is computed whole at the root", st.ctx());
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
