// tree_ensemble (include/nnvm/ops/ml/tree_ensemble.hpp) through the interpreter, the C JIT and
// LLVM (when built), against a plain loop that walks each tree node by node as ONNX's reference
// does (a row at a time, one branch per node, aggregating the leaves reached), on the two ONNX
// node tests (their expected outputs as literals too) and on an ensemble with every node mode,
// MEMBER sets (one empty), NaN features with and without missing-value tracking, thresholds that
// are not float32 values, a single-leaf tree, a leaf shared by two trees, several targets (one
// never reached), every aggregate function and every post transform, in float32 and float64;
// then its error ids for bad inputs and hostile attributes.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <cmath>
#include <limits>

namespace ops_tree_ensemble {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Ints = std::vector<int64_t>;
using Reals = std::vector<double>;
const double nan = std::numeric_limits<double>::quiet_NaN();

struct Ensemble {
  Ints featureids, modes, truenodeids, trueleafs, falsenodeids, falseleafs, tracks, roots, targetids;
  Reals splits, weights, members;
  int64_t n_targets = 1, aggregate = 1, post = 0;
};

ops::Attrs attrs_of(const Ensemble& e) {
  ops::Attrs a;
  a.set_ints("nodes_featureids", e.featureids)
      .set_ints("nodes_modes", e.modes)
      .set_ints("nodes_truenodeids", e.truenodeids)
      .set_ints("nodes_trueleafs", e.trueleafs)
      .set_ints("nodes_falsenodeids", e.falsenodeids)
      .set_ints("nodes_falseleafs", e.falseleafs)
      .set_ints("tree_roots", e.roots)
      .set_ints("leaf_targetids", e.targetids)
      .set_floats("nodes_splits", e.splits)
      .set_floats("leaf_weights", e.weights)
      .set_int("n_targets", e.n_targets)
      .set_int("aggregate_function", e.aggregate)
      .set_int("post_transform", e.post);
  if (!e.tracks.empty()) a.set_ints("nodes_missing_value_tracks_true", e.tracks);
  if (!e.members.empty()) a.set_floats("membership_values", e.members);
  return a;
}

// The spec's algorithm, in X's type T: per row and tree, follow the branches from the root until
// a leaf, then aggregate the leaf's weight into its target, then transform the row.
template <class T>
std::vector<T> walk(const Ensemble& e, const std::vector<T>& x, int64_t rows, int64_t features) {
  // membership_values: one NaN-ended set per MEMBER node, in node order.
  std::vector<Reals> sets(e.modes.size());
  size_t at = 0;
  for (size_t i = 0; i < e.modes.size(); ++i)
    if (e.modes[i] == 6) {
      for (; !std::isnan(e.members.at(at)); ++at) sets[i].push_back(e.members[at]);
      ++at;  // the NaN that ends the set
    }
  const int64_t targets = e.n_targets;
  std::vector<T> y(size_t(rows * targets));
  for (int64_t n = 0; n < rows; ++n) {
    T* out = &y[size_t(n * targets)];
    T start = e.aggregate == 2 ? std::numeric_limits<T>::max() : e.aggregate == 3 ? std::numeric_limits<T>::lowest() : T(0);
    for (int64_t k = 0; k < targets; ++k) out[k] = start;
    for (int64_t root : e.roots) {
      int64_t node = root;
      for (;;) {
        double v = double(x[size_t(n * features + e.featureids[size_t(node)])]), s = e.splits[size_t(node)];
        bool go = false;
        switch (e.modes[size_t(node)]) {
          case 0: go = v <= s; break;
          case 1: go = v < s; break;
          case 2: go = v >= s; break;
          case 3: go = v > s; break;
          case 4: go = v == s; break;
          case 5: go = v != s; break;
          case 6:
            for (double m : sets[size_t(node)]) go = go || v == m;
            break;
        }
        if (std::isnan(v) && !e.tracks.empty() && e.tracks[size_t(node)]) go = true;
        int64_t next = go ? e.truenodeids[size_t(node)] : e.falsenodeids[size_t(node)];
        if (go ? e.trueleafs[size_t(node)] : e.falseleafs[size_t(node)]) {
          T w = T(e.weights[size_t(next)]);
          T& o = out[e.targetids[size_t(next)]];
          if (e.aggregate == 0) o += w / T(e.roots.size());
          else if (e.aggregate == 1) o += w;
          else if (e.aggregate == 2) o = std::min(o, w);
          else o = std::max(o, w);
          break;
        }
        node = next;
      }
    }
    if (e.post == 1 || e.post == 3) {
      T top = *std::max_element(out, out + targets), total = 0;
      for (int64_t k = 0; k < targets; ++k) {
        bool zero = e.post == 3 && !(out[k] > T(1e-7) || out[k] < T(-1e-7));
        out[k] = zero ? out[k] * std::exp(-top) : std::exp(out[k] - top);
        total += out[k];
      }
      for (int64_t k = 0; k < targets; ++k) out[k] = total == 0 ? T(0.5) : out[k] / total;
    } else if (e.post == 2) {
      for (int64_t k = 0; k < targets; ++k) {
        T v = T(1) / (T(1) + std::exp(-std::abs(out[k])));
        out[k] = out[k] < 0 ? T(1) - v : v;
      }
    } else if (e.post == 4) {
      for (int64_t k = 0; k < targets; ++k) {
        T p = T(2) * out[k] - T(1), u = (T(1) - p) * (T(1) + p);
        if (u == 0) {
          out[k] = 0;
          continue;
        }
        T lg = std::log(u), a = T(2 / (3.14159265358979323846 * 0.147)) + T(0.5) * lg;
        T r = std::sqrt(-a + std::sqrt(a * a - T(1 / 0.147) * lg));
        out[k] = T(1.41421356) * (p < 0 ? -r : r);
      }
    }
  }
  return y;
}

NDArray array(DataType t, Ints shape, const Reals& v) {
  NDArray a(t, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == dtype::float32) a.data<float>()[i] = float(v[i]);
    else a.data<double>()[i] = v[i];
  }
  return a;
}

NDArray expect(const Ensemble& e, const NDArray& x) {
  int64_t rows = x.shape()[0], features = x.shape()[1];
  Reals y;
  if (x.dtype() == dtype::float32) {
    std::vector<float> v(x.data<float>(), x.data<float>() + x.numel());
    for (float f : walk(e, v, rows, features)) y.push_back(f);
  } else {
    std::vector<double> v(x.data<double>(), x.data<double>() + x.numel());
    y = walk(e, v, rows, features);
  }
  return array(x.dtype(), {rows, e.n_targets}, y);
}

// The ONNX node tests' models (test_ai_onnx_ml_tree_ensemble_single_tree and _set_membership).
Ensemble single_tree() {
  Ensemble e;
  e.featureids = {0, 0, 0}, e.modes = {0, 0, 0}, e.splits = {3.14, 1.2, 4.2};
  e.truenodeids = {1, 0, 1}, e.trueleafs = {0, 1, 1}, e.falsenodeids = {2, 2, 3}, e.falseleafs = {0, 1, 1};
  e.roots = {0}, e.targetids = {0, 1, 0, 1}, e.weights = {5.23, 12.12, -12.23, 7.21}, e.n_targets = 2;
  return e;
}
Ensemble set_membership() {
  Ensemble e;
  e.featureids = {0, 0, 0}, e.modes = {0, 6, 6}, e.splits = {11, double(232344.0f), nan};
  e.truenodeids = {1, 0, 1}, e.trueleafs = {0, 1, 1}, e.falsenodeids = {2, 2, 3}, e.falseleafs = {1, 0, 1};
  e.roots = {0}, e.targetids = {0, 1, 2, 3}, e.weights = {1, 10, 1000, 100}, e.n_targets = 4;
  e.members = {double(1.2f), double(3.7f), 8, 9, nan, 12, 7, nan};
  return e;
}

// Four trees over three features: every mode; NaN tracking on some nodes; 0.1 and 1e30, which
// float32 cannot hold; an empty MEMBER set; a single-leaf tree (a node whose branches are one
// leaf, with a NaN split); leaf 4 shared by trees A and D.
Ensemble mixed() {
  Ensemble e;
  //                A: 0   1    2    3     B: 4  5  6  7     C: 8   D: 9  10
  e.modes =          {0,   1,   2,   4,       3, 5, 6, 6,       0,     6, 1};
  e.featureids =     {0,   1,   2,   0,       1, 2, 0, 2,       0,     1, 2};
  e.splits =         {0.5, 0.1, -1,  0.25,    2, 3, 0, 0,       nan,   0, 1e30};
  e.tracks =         {1,   0,   0,   1,       0, 0, 1, 0,       0,     0, 1};
  e.truenodeids =    {1,   0,   1,   3,       5, 5, 7, 8,       10,    10, 12};
  e.trueleafs =      {0,   1,   1,   1,       0, 1, 1, 1,       1,     0, 1};
  e.falsenodeids =   {2,   3,   2,   4,       6, 6, 7, 9,       10,    11, 4};
  e.falseleafs =     {0,   0,   1,   1,       0, 1, 0, 1,       1,     1, 1};
  e.roots = {0, 4, 8, 9};
  e.members = {0.25, 1, 3, nan, nan, 2.5, -1, nan};
  e.weights = {1.5, -2, 0.75, 4, -0.5, 2.25, 3, -1.25, 10, 0.125, 0.5, -3, 1};
  e.targetids = {0, 1, 2, 0, 2, 1, 0, 2, 1, 0, 1, 0, 2};
  e.n_targets = 3;
  return e;
}
const Reals mixed_rows{0.5, 0.1,       -1,  0.25, 2.5,  3,    nan, 0.1, 5,   1,   nan, -2,  3,         2,
                       nan, 0.2,       -1,  1e30, nan,  nan,  nan, 0.25, 0.0999, 1e29, -7, 3, 0, 1,
                       2.0000001, 3,   0.5000001, -1, -1.0000001, 3, 2.5, 2};

}  // namespace

TEST_CASE("ml ops: tree_ensemble") {
  const DataType f32 = dtype::float32, f64 = dtype::float64;
  std::vector<OpCheck> cases;
  auto add = [&](std::string label, const NDArray& x, const Ensemble& e) {
    cases.push_back({std::move(label), "tree_ensemble", {x}, attrs_of(e), {expect(e, x)}});
  };

  // The node tests, and their outputs as the suite stores them.
  NDArray x1 = array(f64, {3, 2}, {1.2, 3.4, -0.12, 1.66, 4.14, 1.77});
  NDArray y1 = array(f64, {3, 2}, {5.23, 0, 5.23, 0, 0, 12.12});
  NDArray x2 = array(f32, {6, 1}, {1.2, 3.4, -0.12, nan, 12, 7});
  NDArray y2 = array(f32, {6, 4}, {1, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 100, 0, 0, 1000, 0, 0, 0, 1000, 0, 0, 10, 0, 0});
  CHECK(nnvm_test::detail::compare_arrays(expect(single_tree(), x1), y1, 1e-12, 0).empty());
  CHECK(nnvm_test::detail::compare_arrays(expect(set_membership(), x2), y2, 0, 0).empty());
  cases.push_back({"node test single_tree", "tree_ensemble", {x1}, attrs_of(single_tree()), {y1}});
  cases.push_back({"node test set_membership", "tree_ensemble", {x2}, attrs_of(set_membership()), {y2}});

  // Every aggregate function with every post transform, float32; float64 for each aggregate.
  const char* aggregates[] = {"AVERAGE", "SUM", "MIN", "MAX"};
  const char* posts[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  NDArray xs = array(f32, {12, 3}, mixed_rows), xd = array(f64, {12, 3}, mixed_rows);
  for (int64_t agg = 0; agg < 4; ++agg) {
    for (int64_t post = 0; post < 5; ++post) {
      Ensemble e = mixed();
      e.aggregate = agg, e.post = post;
      add(str_cat(aggregates[agg], " ", posts[post], " float32"), xs, e);
    }
    Ensemble e = mixed();
    e.aggregate = agg, e.post = agg == 1 ? 3 : 0;
    add(str_cat(aggregates[agg], " ", posts[e.post], " float64"), xd, e);
    // A fourth target no leaf names: 0 for SUM and AVERAGE, float max or lowest for MIN and MAX.
    e.n_targets = 4, e.post = 0;
    add(str_cat(aggregates[agg], " with an unreached target"), xs, e);
  }
  // Without nodes_missing_value_tracks_true: NaN compares false (true for NEQ) everywhere.
  Ensemble untracked = mixed();
  untracked.tracks.clear();
  add("no missing-value tracking", xs, untracked);
  // One tree of the ensemble alone, and a single-leaf tree alone.
  Ensemble only_b = mixed();
  only_b.roots = {4};
  add("one tree of several", xd, only_b);
  Ensemble leaf = mixed();
  leaf.roots = {8};
  add("a single-leaf tree", xs, leaf);
  // SOFTMAX_ZERO with a row of zeros: 0.5 everywhere.
  Ensemble zeros = single_tree();
  zeros.weights = {0, 0, 0, 0}, zeros.post = 3;
  add("SOFTMAX_ZERO of zeros", x1, zeros);
  nnvm_test::check_ops(cases, "tree_ensemble");

  // Types and shapes.
  using T = ops::TensorType;
  const ops::Attrs good = attrs_of(mixed());
  auto out = ops::infer_types(ops::get_op("tree_ensemble"), {T(f64, {7, 3})}, good);
  CHECK(out[0].dtype == f64);
  CHECK(ir::is_const_int(out[0].shape[1], 3));
  ir::Var n("n");
  auto sym = ops::infer_types(ops::get_op("tree_ensemble"), {T(f32, std::vector<ir::Expr>{n, ir::Expr(int64_t(3))})}, good);
  CHECK(ir::to_string(sym[0].shape[0]) == "n");
  CHECK(infer_error("tree_ensemble", {T(f32, {7, 3})}, good) == "(no error)");
  CHECK(infer_error("tree_ensemble", {T(dtype::int64, {7, 3})}, good) == "nnvm.ops.input_dtype");
  CHECK(infer_error("tree_ensemble", {T(f32, {3})}, good) == "nnvm.ops.input_shape");
  CHECK(infer_error("tree_ensemble", {T(f32, std::vector<ir::Expr>{ir::Expr(int64_t(2)), n})}, good) ==
        "nnvm.ops.input_shape");
  // Feature 2 is read: X needs three features.
  CHECK(infer_error("tree_ensemble", {T(f32, {7, 2})}, good) == "nnvm.ops.attr");
  // n_targets absent: the largest target id plus one.
  ops::Attrs no_count = good;
  no_count.erase("n_targets");
  CHECK(ir::is_const_int(ops::infer_types(ops::get_op("tree_ensemble"), {T(f32, {7, 3})}, no_count)[0].shape[1], 3));

  // Hostile attributes.
  auto bad = [&](auto change) {
    Ensemble e = mixed();
    change(e);
    return infer_error("tree_ensemble", {T(f32, {7, 3})}, attrs_of(e));
  };
  CHECK(bad([](Ensemble&) {}) == "(no error)");
  CHECK(bad([](Ensemble& e) { e.splits.pop_back(); }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.falseleafs.push_back(0); }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.tracks.pop_back(); }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.targetids.pop_back(); }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.featureids[3] = -1; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.modes[1] = 7; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.trueleafs[0] = 2; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.tracks[0] = 3; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.truenodeids[0] = 11; }) == "nnvm.ops.attr");   // past the nodes
  CHECK(bad([](Ensemble& e) { e.falsenodeids[3] = 13; }) == "nnvm.ops.attr");  // past the leaves
  CHECK(bad([](Ensemble& e) { e.falsenodeids[3] = -1; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.roots.push_back(11); }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.roots.clear(); }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.targetids[2] = 3; }) == "nnvm.ops.attr");  // n_targets is 3
  CHECK(bad([](Ensemble& e) { e.n_targets = 0; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.aggregate = 4; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.post = 5; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.members.pop_back(); }) == "nnvm.ops.attr");     // a set not ended
  CHECK(bad([](Ensemble& e) { e.members.push_back(4); }) == "nnvm.ops.attr");   // values past the last set
  CHECK(bad([](Ensemble& e) { e.members.clear(); }) == "nnvm.ops.attr");        // MEMBER nodes, no sets
  // Cycles: node 3's true branch back to the root, and node 10 to itself.
  CHECK(bad([](Ensemble& e) { e.trueleafs[3] = 0, e.truenodeids[3] = 0; }) == "nnvm.ops.attr");
  CHECK(bad([](Ensemble& e) { e.falseleafs[10] = 0, e.falsenodeids[10] = 10; }) == "nnvm.ops.attr");
  // A subtree reached twice in one tree (node 2 from nodes 0 and 3).
  CHECK(bad([](Ensemble& e) { e.trueleafs[3] = 0, e.truenodeids[3] = 2; }) == "nnvm.ops.attr");
  // Trees may share subtrees: tree B's node 6 as a root of its own.
  CHECK(bad([](Ensemble& e) { e.roots.push_back(6); }) == "(no error)");
  // A chain deeper than the limit.
  CHECK(bad([](Ensemble& e) {
          const int64_t deep = 300;
          e = Ensemble{};
          for (int64_t i = 0; i < deep; ++i) {
            e.modes.push_back(0), e.featureids.push_back(0), e.splits.push_back(double(i));
            e.trueleafs.push_back(1), e.truenodeids.push_back(0);
            e.falseleafs.push_back(i + 1 == deep), e.falsenodeids.push_back(i + 1 == deep ? 1 : i + 1);
          }
          e.roots = {0}, e.weights = {1, 2}, e.targetids = {0, 0};
        }) == "nnvm.ops.attr");
  // Too many trees to unroll: the same node as the root of 2^17 + 1 trees.
  CHECK(bad([](Ensemble& e) { e.roots.assign((size_t(1) << 17) + 1, 4); }) == "nnvm.ops.too_large");
  // Required attributes.
  ops::Attrs missing = good;
  missing.erase("nodes_splits");
  CHECK(infer_error("tree_ensemble", {T(f32, {7, 3})}, missing) == "nnvm.ops.attr");
}

}  // namespace ops_tree_ensemble
