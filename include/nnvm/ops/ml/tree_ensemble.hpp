// tree_ensemble (ONNX ai.onnx.ml TreeEnsemble, opset 5): X (N, F) float32 or float64 -> Y
// (N, n_targets) of X's type. Each tree sends a row from its root down to one leaf: node i
// compares X[n, nodes_featureids[i]] with nodes_splits[i] by nodes_modes[i] (0 LEQ, 1 LT, 2 GTE,
// 3 GT, 4 EQ, 5 NEQ, 6 MEMBER of the node's set in membership_values), and a NaN feature also takes
// the true branch where nodes_missing_value_tracks_true[i] is 1. The leaf reached adds
// leaf_weights[l] to target leaf_targetids[l]; aggregate_function (0 AVERAGE, 1 SUM, 2 MIN, 3 MAX)
// combines the trees per target, then post_transform (0 NONE, 1 SOFTMAX, 2 LOGISTIC,
// 3 SOFTMAX_ZERO, 4 PROBIT) maps each row.
//
// Semantics follow ONNX's reference: a comparison is IEEE (x != s holds for a NaN x) or'ed with
// the missing-value rule; MIN and MAX start from float max and lowest, so a target that no tree
// reaches is float max (MIN) or lowest (MAX) and 0 for SUM and AVERAGE; AVERAGE divides by the
// number of trees. The sets of membership_values belong to the MEMBER nodes in node order (as the
// spec says), each ended by a NaN. A tree that is a single leaf is a node whose branches are the
// same leaf. The transforms are those of ONNX's classifiers (PROBIT with its erf^-1
// approximation); splits and set members compare exactly (in float64 when not a float32 value).
//
// Closed form, no data-dependent loops: the trees are attributes, so per tree and target the
// compute is a nested select along the tree (select(cond_i, true side, false side)), pruned to the
// paths that reach a leaf of that target, and the trees combine as a balanced sum, min or max; a
// balanced select on the target index picks the target's expression. Cost per output element: the
// pruned nodes of every tree (one comparison each, shared between targets), i.e. at most the
// ensemble's node count, and only the nodes on the row's path where selects are evaluated lazily
// (the C emitters' ?:). The transforms are one more stage (three for the softmaxes).
//
// Hostile attributes are UserError "nnvm.ops.attr" naming the attribute (lengths that differ, ids
// out of range, a node reached twice from one root, trees deeper than max_depth); an ensemble
// whose unrolled expression would pass max_selects selects is "nnvm.ops.too_large".
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "nnvm/limits.hpp"
#include "nnvm/ops/checks.hpp"
#include "nnvm/ops/op_def.hpp"
#include "nnvm/ops/reduce/softmax.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

// The attributes, as ONNX names them (nodes_modes etc. as integer codes).
struct TreeEnsembleSpec {
  std::vector<int64_t> nodes_featureids, nodes_modes, nodes_truenodeids, nodes_trueleafs, nodes_falsenodeids,
      nodes_falseleafs, nodes_missing_value_tracks_true, tree_roots, leaf_targetids;
  std::vector<double> nodes_splits, leaf_weights, membership_values;
  int64_t n_targets = -1;  // -1: max(leaf_targetids) + 1
  int64_t aggregate_function = 1, post_transform = 0;

  static TreeEnsembleSpec from(const Attrs& a) {
    TreeEnsembleSpec s;
    s.nodes_featureids = a.get_ints("nodes_featureids");
    s.nodes_modes = a.get_ints("nodes_modes");
    s.nodes_truenodeids = a.get_ints("nodes_truenodeids");
    s.nodes_trueleafs = a.get_ints("nodes_trueleafs");
    s.nodes_falsenodeids = a.get_ints("nodes_falsenodeids");
    s.nodes_falseleafs = a.get_ints("nodes_falseleafs");
    s.nodes_missing_value_tracks_true = a.get_ints("nodes_missing_value_tracks_true", {});
    s.tree_roots = a.get_ints("tree_roots");
    s.leaf_targetids = a.get_ints("leaf_targetids");
    s.nodes_splits = a.get_floats("nodes_splits");
    s.leaf_weights = a.get_floats("leaf_weights");
    s.membership_values = a.get_floats("membership_values", {});
    s.n_targets = a.get_int("n_targets", -1);
    s.aggregate_function = a.get_int("aggregate_function", 1);
    s.post_transform = a.get_int("post_transform", 0);
    return s;
  }
};

namespace tree_detail {

enum Mode : int64_t { leq = 0, lt, gte, gt, eq, neq, member };
enum Aggregate : int64_t { agg_average = 0, agg_sum, agg_min, agg_max };
enum Post : int64_t { post_none = 0, post_softmax, post_logistic, post_softmax_zero, post_probit };

// Deeper trees would nest selects (and the recursive passes over them) past a safe depth.
inline constexpr int64_t max_depth = 128;
// Selects in the unrolled expression, and node visits while checking (roots may share subtrees).
inline constexpr int64_t max_selects = int64_t(1) << 17;

[[noreturn]] inline void bad_attr(const char* attr, const std::string& why) {
  throw UserError("nnvm.ops.attr", str_cat("attribute ", attr, " ", why), {str_cat("attribute ", attr)});
}
[[noreturn]] inline void too_large(const std::string& why) {
  throw UserError("nnvm.ops.too_large", str_cat("the tree ensemble ", why, "; nnvm unrolls at most ", max_selects,
                                                " decision nodes into one expression"));
}

// The checked structure: the set of each MEMBER node, and the target count.
struct Checked {
  std::vector<std::vector<double>> sets;  // by node; empty for other modes
  int64_t n_targets = 0;
};

inline Checked check(const TreeEnsembleSpec& s, int64_t features) {
  const size_t nodes = s.nodes_modes.size(), leaves = s.leaf_weights.size();
  auto same_length = [&](const char* name, size_t n, size_t want, const char* as) {
    if (n != want) bad_attr(name, str_cat("has ", n, " entries but ", as, " has ", want, "; they must match"));
  };
  same_length("nodes_featureids", s.nodes_featureids.size(), nodes, "nodes_modes");
  same_length("nodes_splits", s.nodes_splits.size(), nodes, "nodes_modes");
  same_length("nodes_truenodeids", s.nodes_truenodeids.size(), nodes, "nodes_modes");
  same_length("nodes_trueleafs", s.nodes_trueleafs.size(), nodes, "nodes_modes");
  same_length("nodes_falsenodeids", s.nodes_falsenodeids.size(), nodes, "nodes_modes");
  same_length("nodes_falseleafs", s.nodes_falseleafs.size(), nodes, "nodes_modes");
  if (!s.nodes_missing_value_tracks_true.empty())
    same_length("nodes_missing_value_tracks_true", s.nodes_missing_value_tracks_true.size(), nodes, "nodes_modes");
  same_length("leaf_targetids", s.leaf_targetids.size(), leaves, "leaf_weights");
  if (nodes == 0) bad_attr("nodes_modes", "is empty; every tree needs a node");
  if (s.tree_roots.empty()) bad_attr("tree_roots", "is empty; the ensemble needs a tree");
  if (s.aggregate_function < agg_average || s.aggregate_function > agg_max)
    bad_attr("aggregate_function", str_cat("is ", s.aggregate_function, "; expected 0 (AVERAGE), 1 (SUM), 2 (MIN) or 3 (MAX)"));
  if (s.post_transform < post_none || s.post_transform > post_probit)
    bad_attr("post_transform", str_cat("is ", s.post_transform,
                                       "; expected 0 (NONE), 1 (SOFTMAX), 2 (LOGISTIC), 3 (SOFTMAX_ZERO) or 4 (PROBIT)"));

  Checked c;
  c.n_targets = s.n_targets;
  if (c.n_targets == -1)
    for (int64_t t : s.leaf_targetids) c.n_targets = std::max(c.n_targets, t + 1);
  if (c.n_targets < 1 || uint64_t(c.n_targets) > max_tensor_bytes)
    bad_attr("n_targets", str_cat("is ", c.n_targets, "; it must lie in [1, 2^48]"));
  for (size_t l = 0; l < leaves; ++l)
    if (s.leaf_targetids[l] < 0 || s.leaf_targetids[l] >= c.n_targets)
      bad_attr("leaf_targetids", str_cat("holds ", s.leaf_targetids[l], " at leaf ", l, "; targets lie in [0, ",
                                         c.n_targets, ")"));

  size_t members = 0;
  for (size_t i = 0; i < nodes; ++i) {
    int64_t m = s.nodes_modes[i], f = s.nodes_featureids[i];
    if (m < leq || m > member)
      bad_attr("nodes_modes", str_cat("holds ", m, " at node ", i, "; modes are 0 (BRANCH_LEQ) to 6 (BRANCH_MEMBER)"));
    members += m == member;
    if (f < 0 || f >= features)
      bad_attr("nodes_featureids", str_cat("holds ", f, " at node ", i, "; X has ", features, " features"));
    if (!s.nodes_missing_value_tracks_true.empty() && (s.nodes_missing_value_tracks_true[i] & ~int64_t(1)))
      bad_attr("nodes_missing_value_tracks_true", str_cat("holds ", s.nodes_missing_value_tracks_true[i], " at node ", i,
                                                          "; expected 0 or 1"));
    for (bool side : {true, false}) {
      int64_t leaf = side ? s.nodes_trueleafs[i] : s.nodes_falseleafs[i];
      int64_t id = side ? s.nodes_truenodeids[i] : s.nodes_falsenodeids[i];
      const char* flag = side ? "nodes_trueleafs" : "nodes_falseleafs";
      const char* ids = side ? "nodes_truenodeids" : "nodes_falsenodeids";
      if (leaf != 0 && leaf != 1) bad_attr(flag, str_cat("holds ", leaf, " at node ", i, "; expected 0 or 1"));
      size_t bound = leaf ? leaves : nodes;
      if (id < 0 || uint64_t(id) >= bound)
        bad_attr(ids, str_cat("holds ", id, " at node ", i, "; it names ", leaf ? "a leaf" : "a node", " in [0, ", bound, ")"));
    }
  }

  // Sets in node order, each ended by a NaN.
  c.sets.resize(nodes);
  size_t at = 0, ended = 0;
  for (size_t i = 0; i < nodes; ++i) {
    if (s.nodes_modes[i] != member) continue;
    while (at < s.membership_values.size() && !std::isnan(s.membership_values[at])) c.sets[i].push_back(s.membership_values[at++]);
    if (at == s.membership_values.size())
      bad_attr("membership_values", str_cat("holds ", ended, " NaN-ended sets but nodes_modes has ", members,
                                            " BRANCH_MEMBER nodes; it needs one set per such node"));
    ++at, ++ended;
  }
  if (at != s.membership_values.size())
    bad_attr("membership_values", str_cat("has ", s.membership_values.size() - at, " values past the set of the last ",
                                          "BRANCH_MEMBER node (", members, " such nodes)"));

  // Every tree is a tree: no node twice from one root (no cycles), bounded depth and total size.
  std::vector<size_t> seen_in(nodes, SIZE_MAX);
  int64_t visits = 0;
  for (size_t r = 0; r < s.tree_roots.size(); ++r) {
    int64_t root = s.tree_roots[r];
    if (root < 0 || uint64_t(root) >= nodes)
      bad_attr("tree_roots", str_cat("holds ", root, " for tree ", r, "; nodes lie in [0, ", nodes, ")"));
    std::vector<std::pair<int64_t, int64_t>> stack{{root, 1}};
    while (!stack.empty()) {
      auto [i, depth] = stack.back();
      stack.pop_back();
      if (seen_in[size_t(i)] == r)
        bad_attr("tree_roots", str_cat("tree ", r, " reaches node ", i, " twice (a cycle, or a subtree shared within ",
                                       "the tree); nodes_truenodeids and nodes_falsenodeids must form trees"));
      seen_in[size_t(i)] = r;
      if (depth > max_depth) bad_attr("tree_roots", str_cat("tree ", r, " is deeper than ", max_depth, " nodes"));
      if (++visits > max_selects) too_large(str_cat("has more than ", max_selects, " decision nodes over its trees"));
      for (bool side : {true, false})
        if (!(side ? s.nodes_trueleafs : s.nodes_falseleafs)[size_t(i)])
          stack.push_back({(side ? s.nodes_truenodeids : s.nodes_falsenodeids)[size_t(i)], depth + 1});
    }
  }
  return c;
}

// Builds the per-target expressions of one row.
struct Builder {
  const TreeEnsembleSpec& s;
  const Checked& c;
  std::function<ir::Expr(int64_t)> feature;  // X[n, f] in the compute type
  DataType t;                                // float32 or float64
  ir::Expr neutral;                          // what a tree adds to a target it does not reach
  std::vector<std::optional<ir::Expr>> conds;
  int64_t selects = 0;

  // `x op value`, exact: in float64 when value is not a value of type t.
  ir::Expr compare(const ir::Expr& x, int64_t mode, double value) const {
    bool exact = t == dtype::float64 || std::isnan(value) || double(float(value)) == value;
    ir::Expr a = exact ? x : ir::cast(dtype::float64, x), b = ir::make_const(exact ? t : dtype::float64, value);
    switch (mode) {
      case leq: return a <= b;
      case lt: return a < b;
      case gte: return a >= b;
      case gt: return a > b;
      case eq: return a == b;
      default: return a != b;
    }
  }
  const ir::Expr& cond(int64_t i) {
    auto& slot = conds[size_t(i)];
    if (slot) return *slot;
    ir::Expr x = feature(s.nodes_featureids[size_t(i)]);
    ir::Expr e;
    if (s.nodes_modes[size_t(i)] == member) {
      for (double v : c.sets[size_t(i)]) e = e.defined() ? (e || compare(x, eq, v)) : compare(x, eq, v);
      if (!e.defined()) e = ir::const_false();
    } else {
      e = compare(x, s.nodes_modes[size_t(i)], s.nodes_splits[size_t(i)]);
    }
    if (!s.nodes_missing_value_tracks_true.empty() && s.nodes_missing_value_tracks_true[size_t(i)])
      e = e || ir::call(ir::CallOp::isnan, x);
    slot = e;
    return *slot;
  }

  using Targets = std::map<int64_t, ir::Expr>;  // target -> the weight this subtree gives it
  Targets side(int64_t i, bool truth) {
    bool leaf = (truth ? s.nodes_trueleafs : s.nodes_falseleafs)[size_t(i)];
    int64_t id = (truth ? s.nodes_truenodeids : s.nodes_falsenodeids)[size_t(i)];
    if (!leaf) return node(id);
    return {{s.leaf_targetids[size_t(id)], ir::make_const(t, s.leaf_weights[size_t(id)])}};
  }
  // The subtree at node i, pruned per target (check() bounded its depth).
  Targets node(int64_t i) {
    if (s.nodes_trueleafs[size_t(i)] && s.nodes_falseleafs[size_t(i)] &&
        s.nodes_truenodeids[size_t(i)] == s.nodes_falsenodeids[size_t(i)])
      return side(i, true);  // both branches reach one leaf: no test
    Targets yes = side(i, true), no = side(i, false), out;
    const ir::Expr& c = cond(i);
    for (auto& [k, e] : yes) {
      auto it = no.find(k);
      out.emplace(k, ir::select(c, e, it == no.end() ? neutral : it->second));
    }
    for (auto& [k, e] : no)
      if (!yes.count(k)) out.emplace(k, ir::select(c, neutral, e));
    selects += int64_t(out.size());
    if (selects > max_selects) too_large(str_cat("unrolls to more than ", max_selects, " selects"));
    return out;
  }
};

// Balanced, so the expression's depth grows with log(trees).
inline ir::Expr combine(const std::vector<ir::Expr>& v, size_t lo, size_t hi, int64_t agg) {
  if (hi - lo == 1) return v[lo];
  size_t mid = (lo + hi) / 2;
  ir::Expr a = combine(v, lo, mid, agg), b = combine(v, mid, hi, agg);
  return agg == agg_min ? ir::min(a, b) : agg == agg_max ? ir::max(a, b) : a + b;
}
inline ir::Expr pick(const ir::Expr& k, const std::vector<std::pair<int64_t, ir::Expr>>& v, size_t lo, size_t hi,
                     const ir::Expr& otherwise) {
  if (hi - lo == 1) return ir::select(k == ir::Expr(v[lo].first), v[lo].second, otherwise);
  size_t mid = (lo + hi) / 2;
  return ir::select(k < ir::Expr(v[mid].first), pick(k, v, lo, mid, otherwise), pick(k, v, mid, hi, otherwise));
}

}  // namespace tree_detail

inline te::Tensor tree_ensemble(const te::Tensor& x, const TreeEnsembleSpec& spec, std::string name = "tree_ensemble") {
  using namespace tree_detail;
  check_rank(x, "X", 2);
  check_float(x, "X");
  const ir::Expr f_extent = ir::simplify(x.shape()[1]);
  const int64_t* features = ir::as_const_int(f_extent);
  if (!features)
    throw UserError("nnvm.ops.input_shape", str_cat("X's feature axis must be a constant extent, got ", ir::to_string(f_extent)),
                    {"input X"});
  Checked checked = check(spec, *features);
  DataType t = x.dtype();
  const int64_t agg = spec.aggregate_function, trees = int64_t(spec.tree_roots.size());
  ir::Expr neutral = agg == agg_min   ? ir::make_const(t, t == dtype::float32 ? double(std::numeric_limits<float>::max())
                                                                          : std::numeric_limits<double>::max())
                     : agg == agg_max ? ir::make_const(t, t == dtype::float32 ? double(std::numeric_limits<float>::lowest())
                                                                          : std::numeric_limits<double>::lowest())
                                  : ir::make_zero(t);
  std::vector<ir::Expr> shape{x.shape()[0], ir::Expr(checked.n_targets)};
  bool post = spec.post_transform != post_none;

  te::Tensor scores = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        Builder b{spec, checked, [&](int64_t f) { return x({ir::Expr(v[0]), ir::Expr(f)}); }, t, neutral,
                  std::vector<std::optional<ir::Expr>>(spec.nodes_modes.size()), 0};
        std::map<int64_t, std::vector<ir::Expr>> per_target;
        for (int64_t root : spec.tree_roots)
          for (auto& [k, e] : b.node(root)) per_target[k].push_back(e);
        std::vector<std::pair<int64_t, ir::Expr>> targets;
        for (auto& [k, es] : per_target) {
          ir::Expr e = combine(es, 0, es.size(), agg);
          if (agg == agg_average) e = e / ir::make_const(t, double(trees));
          targets.emplace_back(k, std::move(e));
        }
        // Each target has a leaf (check() made the target ids lie below n_targets).
        return targets.empty() ? neutral : pick(v[1], targets, 0, targets.size(), neutral);
      },
      post ? name + "_scores" : name);
  if (!post) return scores;

  auto at = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>{v[0], v[1]}; };
  auto row = [](const std::vector<ir::Var>& v) { return std::vector<ir::Expr>{v[0], ir::Expr(int64_t(0))}; };
  auto c = [t](double v) { return ir::make_const(t, v); };
  switch (spec.post_transform) {
    case post_softmax: return ops::softmax(scores, -1, std::move(name));
    case post_logistic:
      // 1 / (1 + exp(-|s|)), mirrored for s < 0: no overflow for large |s|.
      return te::compute(
          shape,
          [&](const std::vector<ir::Var>& v) {
            ir::Expr s = scores(at(v));
            ir::Expr p = c(1) / (c(1) + ir::call(ir::CallOp::exp, -ir::call(ir::CallOp::abs, s)));
            return ir::select(s < c(0), c(1) - p, p);
          },
          std::move(name));
    case post_softmax_zero: {
      // Softmax that leaves zero scores (|s| <= 1e-7) near zero (s * exp(-max)); 0.5 everywhere
      // when the row's sum is zero.
      std::vector<ir::Expr> kept{shape[0], ir::Expr(int64_t(1))};
      auto k1 = te::reduce_axis(shape[1], "k");
      te::Tensor mx = te::compute(
          kept, [&](const std::vector<ir::Var>& v) { return te::max_reduce(scores({v[0], k1.var()}), {k1}); },
          name + "_max");
      te::Tensor ex = te::compute(
          shape,
          [&](const std::vector<ir::Var>& v) {
            ir::Expr s = scores(at(v)), m = mx(row(v));
            return ir::select(s > c(1e-7) || s < c(-1e-7), ir::call(ir::CallOp::exp, s - m),
                              s * ir::call(ir::CallOp::exp, -m));
          },
          name + "_exp");
      auto k2 = te::reduce_axis(shape[1], "k");
      te::Tensor sm = te::compute(
          kept, [&](const std::vector<ir::Var>& v) { return te::sum(ex({v[0], k2.var()}), {k2}); }, name + "_sum");
      return te::compute(
          shape,
          [&](const std::vector<ir::Var>& v) {
            ir::Expr total = sm(row(v));
            return ir::select(total == c(0), c(0.5), ex(at(v)) / total);
          },
          std::move(name));
    }
    default:
      // sqrt(2) * erf^-1(2s - 1), erf^-1 by Winitzki's approximation (a = 0.147), as ONNX's
      // reference and ONNX Runtime compute it.
      return te::compute(
          shape,
          [&](const std::vector<ir::Var>& v) {
            ir::Expr p = c(2) * scores(at(v)) - c(1);
            ir::Expr u = (c(1) - p) * (c(1) + p);
            ir::Expr lg = ir::call(ir::CallOp::log, u);
            ir::Expr a = c(2 / (3.14159265358979323846 * 0.147)) + c(0.5) * lg;
            ir::Expr root = ir::call(ir::CallOp::sqrt, -a + ir::call(ir::CallOp::sqrt, a * a - c(1 / 0.147) * lg));
            ir::Expr signed_root = ir::select(p < c(0), -root, root);
            return ir::select(u == c(0), c(0), c(1.41421356) * signed_root);
          },
          std::move(name));
  }
}

inline OpDef tree_ensemble_def() {
  return OpDef{
      .name = "tree_ensemble",
      .importer_names = {"onnx:ai.onnx.ml.TreeEnsemble"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{tree_ensemble(in[0], TreeEnsembleSpec::from(attrs))};
          },
      .doc = "ai.onnx.ml TreeEnsemble: decision trees over the rows of X (N, F), aggregated per target and "
             "post-transformed, unrolled into selects",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
