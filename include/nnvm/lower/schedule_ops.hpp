// Loop nest construction: turns each stage into loops over its leaf iter vars (each running
// from 0; a leaf whose range starts elsewhere is offset where it is used) around a
// ProducerStore of its body, puts the nests of stages computed at a consumer's loop at the top
// of that loop, and wraps intermediate tensors in ProducerRealize where they are computed.
// Requires: inlined bodies and bounds from infer_bounds. Ensures: a statement with
// ProducerStore/ProducerLoad on tensors (not yet on flat buffers). Non-divisible splits get guards on the original axes, so
// no point outside a tensor is ever computed; a non-divisible split whose inner loop is
// vectorized or unrolled is instead partitioned into full tiles and a serial tail, so the full
// tiles need no guard and still vectorize. A scan is a nest of init's rows [0, k) followed by
// its step loop t (the leaf loops of the scan stage; axis 0 ranges over [k, T)), which holds
// the body stages attached to it and then the store of update's row t. A scan of several states
// is all in its first output's nest: every output's init rows, then one step loop holding the
// body stages and, per output in order, the nest of its other loops storing its row t.
#pragma once

#include "nnvm/lower/cross_thread_reduction.hpp"

NNVM_BEGIN_NAMESPACE
namespace lower {

namespace detail {

// Lowers every stage into nests, placing attached stages inside their consumers' loops.
class NestLowering {
 public:
  NestLowering(const schedule::Schedule& sch, const BodyMap& bodies, const Bounds& bounds,
               const std::vector<te::Tensor>& args)
      : sch_(sch), bodies_(bodies), bounds_(bounds), args_(args) {
    for (auto& st : sch.stages()) {
      const auto& n = st.node();
      bool is_arg = std::any_of(args.begin(), args.end(), [&](const te::Tensor& a) { return a.same_as(st.tensor()); });
      if (is_arg && n.attach != schedule::AttachKind::root)
        throw UserError("nnvm.lower.arg_not_root",
                        str_cat("tensor ", st.name(), " is a kernel argument, so it must be computed whole at the root, "
                                                     "not inlined or computed at another stage's loop"),
                        st.ctx());
      if (n.attach == schedule::AttachKind::at) attached_[n.attach_iv.get()].push_back(st);
      if (schedule::Schedule::is_scan_follower(st)) scan_rows_[st.leaf_iter_vars().front().get()].push_back(st);
    }
  }

  Stmt lower_all() {
    std::vector<Stmt> nests;
    std::vector<schedule::Stage> realized;
    for (auto& st : sch_.stages()) {
      if (st.node().attach != schedule::AttachKind::root) continue;
      if (!schedule::Schedule::is_scan_follower(st)) nests.push_back(stage_nest(st));
      if (!is_arg(st)) realized.push_back(st);
    }
    Stmt body = ir::Seq::make(nests);
    for (auto it = realized.rbegin(); it != realized.rend(); ++it) body = realize(*it, body);
    for (auto& [iv, stages] : attached_)
      for (auto& st : stages)
        if (!placed_.count(&st.node()))
          throw UserError("nnvm.schedule.compute_at_unused_loop",
                          str_cat("stage ", st.name(), " is computed at loop ", st.node().attach_iv.name(),
                                  ", which is no longer a loop of its consumer (split or fused afterwards)"),
                          st.ctx());
    return body;
  }

 private:
  bool is_arg(const schedule::Stage& st) const {
    return std::any_of(args_.begin(), args_.end(), [&](const te::Tensor& a) { return a.same_as(st.tensor()); });
  }
  Stmt realize(const schedule::Stage& st, Stmt body) const {
    return ir::make_stmt<ir::ProducerRealize>(st.tensor().node_ptr(), bounds_.realize.at(&st.node()), st.node().scope,
                                              std::move(body));
  }

  // Attached stages of loop `iv`, computed first in its body and stored around it; in a scan's
  // step loop, after its first output's row, the rows of its other outputs.
  Stmt attach(const IterVar& iv, Stmt inner) {
    if (auto rows = scan_rows_.find(iv.get()); rows != scan_rows_.end()) {
      std::vector<Stmt> seq{inner};
      for (auto& st : rows->second) seq.push_back(stage_nest(st, true));
      inner = ir::Seq::make(seq);
    }
    auto it = attached_.find(iv.get());
    if (it == attached_.end()) return inner;
    std::vector<Stmt> seq;
    for (auto& st : it->second) {
      placed_.insert(&st.node());
      seq.push_back(stage_nest(st));
    }
    seq.push_back(inner);
    Stmt body = ir::Seq::make(seq);
    for (auto s = it->second.rbegin(); s != it->second.rend(); ++s) body = realize(*s, body);
    return body;
  }

  // The loop nest of one stage. A reduction becomes, inside the loops that enclose its first
  // reduction loop, an init nest over the remaining data-parallel loops followed by the update.
  // `scan_row`: only the loops inside the step loop of a scan's output (its step's row).
  Stmt stage_nest(const schedule::Stage& st, bool scan_row = false) {
    using Ctx = StageNestBuilder::Ctx;
    const schedule::StageNode& n = st.node();
    const Expr& body = bodies_.at(&n);
    StageNestBuilder builder(st, bounds_, [this](const IterVar& iv, Stmt inner, const Ctx&) { return attach(iv, std::move(inner)); });
    auto substitute_axes = [&](const Expr& e, const Values& value) {
      ir::VarMap m;
      for (auto& iv : n.root_iter_vars) m[iv.var()] = value.at(iv.get());
      return ir::substitute(e, m);
    };
    auto out_indices = [&](const Values& value) {
      std::vector<Expr> idx;
      for (auto& iv : n.axis) idx.push_back(value.at(iv.get()));
      return idx;
    };
    const auto& tensor = st.tensor().node_ptr();
    const auto& leaves = st.leaf_iter_vars();
    const ir::Reduce* red = body.as<ir::Reduce>();
    if (!red) {
      Ctx start = builder.root_ctx();
      std::vector<IterVar> loops = leaves;
      if (scan_row) {
        start.bound.insert(loops.front().get());  // the step loop, open in the first output's nest
        loops.erase(loops.begin());
      }
      Stmt nest = builder.build(loops, start, [&](const Ctx& ctx) {
        auto value = builder.values(ctx);
        Stmt store = ir::make_stmt<ir::ProducerStore>(tensor, substitute_axes(body, value), out_indices(value));
        return guarded(builder.guard(ctx, value, ir::IterKind::data_par), store);
      });
      if (scan_row || st.tensor().op().kind != te::OpKind::scan) return nest;
      std::vector<Stmt> seq;
      for (size_t i = 0; i < st.tensor().op().scan_outputs.size(); ++i)
        seq.push_back(scan_init_nest(sch_[te::scan_output(st.tensor(), i)]));
      seq.push_back(nest);
      return ir::Seq::make(seq);
    }
    auto is_reduce = [](const IterVar& iv) { return iv->kind == ir::IterKind::reduce; };
    auto first = std::find_if(leaves.begin(), leaves.end(), is_reduce);
    std::vector<IterVar> prefix(leaves.begin(), first), rest(first, leaves.end()), init_leaves;
    std::copy_if(rest.begin(), rest.end(), std::back_inserter(init_leaves), [&](auto& iv) { return !is_reduce(iv); });
    if (const IterVar* tid = thread_bound_reduce_leaf(st))
      return builder.build(prefix, builder.root_ctx(), [&](const Ctx& outer) {
        return cross_thread_reduction(st, builder, outer, *red, prefix, rest, *tid, substitute_axes, out_indices);
      });
    return builder.build(prefix, builder.root_ctx(), [&](const Ctx& outer) {
      Ctx init_ctx = outer;
      init_ctx.attachments = false;  // attached producers feed the update, not the init
      Stmt init = builder.build(init_leaves, init_ctx, [&](const Ctx& ctx) {
        auto value = builder.values(ctx);
        Stmt s = ir::make_stmt<ir::ProducerStore>(tensor, substitute_axes(red->init, value), out_indices(value));
        return guarded(builder.guard(ctx, value, ir::IterKind::data_par), s);
      });
      Stmt update = builder.build(rest, outer, [&](const Ctx& ctx) {
        auto value = builder.values(ctx);
        auto idx = out_indices(value);
        Expr acc = ir::make_expr<ir::ProducerLoad>(red->dtype, tensor, idx);
        Stmt s = ir::make_stmt<ir::ProducerStore>(tensor, combine(red->combiner, acc, substitute_axes(red->source, value)), idx);
        Expr cond = conj(builder.guard(ctx, value, ir::IterKind::data_par), builder.guard(ctx, value, ir::IterKind::reduce));
        if (red->condition.defined()) cond = conj(cond, substitute_axes(red->condition, value));
        return guarded(cond, s);
      });
      return ir::Seq::make({init, update});
    });
  }

  // A scan's first rows, copied from its init (which may be inlined) before the step loop.
  Stmt scan_init_nest(const schedule::Stage& st) const {
    const te::OperationNode& op = st.tensor().op();
    te::Tensor init(op.scan_init);
    std::vector<ir::Var> vars;
    std::vector<Expr> idx;
    for (auto& iv : op.axis) {
      vars.emplace_back(iv.name() + ".init");
      idx.push_back(vars.back());
    }
    Expr value = init(idx);
    for (auto& s : sch_.stages())
      if (s.tensor().same_as(init) && s.node().attach == schedule::AttachKind::inlined) {
        ir::VarMap m;
        for (size_t d = 0; d < s.node().axis.size(); ++d) m[s.node().axis[d].var()] = idx[d];
        value = ir::substitute(bodies_.at(&s.node()), m);
      }
    Stmt body = ir::make_stmt<ir::ProducerStore>(st.tensor().node_ptr(), value, idx);
    // A symbolic step count may bind below k at run time: the copy stops at the tensor's end.
    for (size_t d = vars.size(); d-- > 0;) {
      Expr extent = d ? init.shape()[d] : ir::simplify(ir::min(init.shape()[0], st.tensor().shape()[0]));
      body = ir::For::make(vars[d], Expr(int64_t(0)), extent, ir::ForKind::serial, body);
    }
    return body;
  }

  const schedule::Schedule& sch_;
  const BodyMap& bodies_;
  const Bounds& bounds_;
  const std::vector<te::Tensor>& args_;
  std::unordered_map<const ir::IterVarNode*, std::vector<schedule::Stage>> attached_;
  std::unordered_set<const schedule::StageNode*> placed_;
  std::unordered_map<const ir::IterVarNode*, std::vector<schedule::Stage>> scan_rows_;  // per step axis
};

}  // namespace detail

// Requires: every tensor in `args` is a placeholder or a root stage of `sch`.
// Ensures: one nest per root stage in producer order, attached stages inside their consumers'
// loops; intermediates (stages not in args) realized where they are computed.
inline Stmt schedule_ops(const schedule::Schedule& sch, const BodyMap& bodies, const Bounds& bounds,
                         const std::vector<te::Tensor>& args) {
  return detail::NestLowering(sch, bodies, bounds, args).lower_all();
}

}  // namespace lower
NNVM_END_NAMESPACE
