// tfidf_vectorizer (include/nnvm/ops/transform/tfidf_vectorizer.hpp) against a plain loop that
// follows ONNX's reference step by step (a pool of n-grams keyed by tokens, the skip-distance
// loop that counts unigrams only on its first pass, then the mode's weighting), on the seven
// ONNX node tests (their expected outputs as literals too), every mode with and without weights,
// 1-D and 2-D X, int32 and int64, n-grams up to size 3 with skips, repeated n-grams and shared
// columns; then its error ids.
#include "support/pch.hpp"
#include "support/op_check.hpp"

#include <map>
#include <set>

namespace ops_tfidf_vectorizer {

using namespace nnvm;
using nnvm_test::OpCheck;
using nnvm_test::infer_error;

namespace {

using Ints = std::vector<int64_t>;

struct Spec {
  std::string mode = "TF";
  int64_t min_gram = 1, max_gram = 2, max_skip = 0;
  Ints counts, indexes, pool;
  std::vector<double> weights;
};

ops::Attrs attrs_of(const Spec& s) {
  ops::Attrs a;
  a.set_string("mode", s.mode)
      .set_int("min_gram_length", s.min_gram)
      .set_int("max_gram_length", s.max_gram)
      .set_int("max_skip_count", s.max_skip)
      .set_ints("ngram_counts", s.counts)
      .set_ints("ngram_indexes", s.indexes)
      .set_ints("pool_int64s", s.pool);
  if (!s.weights.empty()) a.set_floats("weights", s.weights);
  return a;
}

NDArray ints(DataType t, Ints shape, const Ints& v) {
  NDArray a(t, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == dtype::int32) a.data<int32_t>()[i] = int32_t(v[i]);
    else a.data<int64_t>()[i] = v[i];
  }
  return a;
}

NDArray floats(Ints shape, const std::vector<float>& v) {
  NDArray a(dtype::float32, std::move(shape));
  std::copy(v.begin(), v.end(), a.data<float>());
  return a;
}

NDArray expect(const NDArray& x, const Spec& s) {
  // The pool as the reference's trie: n-gram -> id (1-based over the whole pool; a repeat takes
  // the later id), and every prefix of a counted n-gram.
  std::map<Ints, int64_t> id;
  std::set<Ints> prefixes;
  int64_t next = 1;
  for (size_t i = 0; i < s.counts.size(); ++i) {
    int64_t n = int64_t(i) + 1, end = i + 1 < s.counts.size() ? s.counts[i + 1] : int64_t(s.pool.size());
    for (int64_t p = s.counts[i]; p < end; p += n, ++next) {
      if (n < s.min_gram || n > s.max_gram) continue;
      Ints g(s.pool.begin() + p, s.pool.begin() + p + n);
      id[g] = next;
      for (int64_t k = 1; k <= n; ++k) prefixes.insert(Ints(g.begin(), g.begin() + k));
    }
  }
  int64_t out = *std::max_element(s.indexes.begin(), s.indexes.end()) + 1;
  bool batch = x.shape().size() == 2;
  int64_t rows = batch ? x.shape()[0] : 1, c = x.shape().back();
  std::vector<int64_t> freq(size_t(rows * out), 0);
  for (int64_t r = 0; r < rows; ++r) {
    auto at = [&](int64_t i) { return int64_t(nnvm_test::detail::element(x, r * c + i)); };
    int64_t start_size = s.min_gram;
    for (int64_t skip = 1; skip <= s.max_skip + 1; ++skip) {
      for (int64_t start = 0; start < c; ++start) {
        if (start + skip * (start_size - 1) >= c) break;
        Ints g;
        for (int64_t item = start; int64_t(g.size()) < s.max_gram && item < c; item += skip) {
          g.push_back(at(item));
          if (!prefixes.count(g)) break;
          auto hit = id.find(g);
          if (int64_t(g.size()) >= start_size && hit != id.end())
            ++freq[size_t(r * out + s.indexes[size_t(hit->second - 1)])];
        }
      }
      if (start_size == 1 && ++start_size > s.max_gram) break;  // unigrams count once
    }
  }
  Ints shape{out};
  if (batch) shape.insert(shape.begin(), rows);
  NDArray y(dtype::float32, shape);
  for (size_t p = 0; p < freq.size(); ++p) {
    double f = double(freq[p]), w = s.weights.empty() ? 1 : s.weights[p % size_t(out)];
    y.data<float>()[p] = float(s.mode == "TF" ? f : s.mode == "IDF" ? (f > 0 ? w : 0) : w * f);
  }
  return y;
}

}  // namespace

TEST_CASE("transform ops: tfidf_vectorizer") {
  const DataType i32 = dtype::int32, i64 = dtype::int64;
  std::vector<OpCheck> cases;
  auto add = [&](std::string label, const NDArray& x, const Spec& s) {
    cases.push_back({std::move(label), "tfidf_vectorizer", {x}, attrs_of(s), {expect(x, s)}});
  };

  // The ONNX node tests: unigrams 2 3 5 4, bigrams (5 6) (7 8) (6 7).
  const Ints row{1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8};
  NDArray x1 = ints(i32, {12}, row), x2 = ints(i32, {2, 6}, row);
  Spec node{"TF", 2, 2, 0, {0, 4}, {0, 1, 2, 3, 4, 5, 6}, {2, 3, 5, 4, 5, 6, 7, 8, 6, 7}, {}};
  auto with = [](Spec s, int64_t min_gram, int64_t skip) {
    s.min_gram = min_gram, s.max_skip = skip;
    return s;
  };
  struct Node {
    const char* name;
    NDArray x;
    Spec spec;
    NDArray want;
  };
  Spec levelempty{"TF", 2, 2, 0, {0, 0}, {0, 1, 2}, {5, 6, 7, 8, 6, 7}, {}};
  std::vector<Node> node_tests{
      {"tf_only_bigrams_skip0", x1, with(node, 2, 0), floats({7}, {0, 0, 0, 0, 1, 1, 1})},
      {"tf_onlybigrams_skip5", x1, with(node, 2, 5), floats({7}, {0, 0, 0, 0, 1, 3, 1})},
      {"tf_uniandbigrams_skip5", x1, with(node, 1, 5), floats({7}, {0, 3, 1, 0, 1, 3, 1})},
      {"tf_onlybigrams_levelempty", x1, levelempty, floats({3}, {1, 1, 1})},
      {"tf_batch_onlybigrams_skip0", x2, with(node, 2, 0),
       floats({2, 7}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1})},
      {"tf_batch_onlybigrams_skip5", x2, with(node, 2, 5),
       floats({2, 7}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1})},
      {"tf_batch_uniandbigrams_skip5", x2, with(node, 1, 5),
       floats({2, 7}, {0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 1})},
  };
  for (auto& t : node_tests) {
    INFO(t.name);
    CHECK(nnvm_test::detail::compare_arrays(expect(t.x, t.spec), t.want, 0, 0).empty());
    cases.push_back({str_cat("node test ", t.name), "tfidf_vectorizer", {t.x}, attrs_of(t.spec), {t.want}});
  }

  // Every mode, with and without weights, on int64 and int32, 1-D and 2-D.
  Ints tokens(30);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = int64_t((i * 7 + 3) % 5 + 1);
  NDArray y1 = ints(i64, {30}, tokens), y2 = ints(i32, {3, 10}, tokens);
  for (const char* mode : {"TF", "IDF", "TFIDF"})
    for (bool weighted : {false, true}) {
      Spec s{mode, 1, 2, 2, {0, 3}, {0, 1, 2, 3, 4, 5}, {1, 2, 3, 1, 2, 2, 4, 3, 5}, {}};
      if (weighted) s.weights = {0.5, 2, 0.25, 1.5, 3, 0.75};
      const NDArray& x = weighted ? y2 : y1;
      add(str_cat(mode, weighted ? " weighted" : "", " ", x.dtype(), " rank ", x.shape().size()), x, s);
    }
  // Sizes 1 to 3, skips: unigrams out of range but still numbering the pool, a repeated bigram
  // (its later column wins), two n-grams sharing a column, and skips longer than the row.
  Spec mixed{"TFIDF", 2, 3, 3, {0, 2, 10}, {3, 0, 1, 6, 5, 4, 6, 0}, {4, 2, 1, 2, 3, 4, 5, 1, 1, 2, 1, 2, 3, 2, 4, 1},
             {1, 2, 3, 4, 5, 6, 7}};
  add("sizes 2 and 3 with skip 3, int64", y1, mixed);
  add("sizes 2 and 3 with skip 3, int32 batch", y2, mixed);
  Spec all = mixed;
  all.min_gram = 1, all.max_skip = 40, all.mode = "TF";
  add("sizes 1 to 3 with skips past the row", ints(i32, {2, 4}, {1, 2, 1, 2, 4, 4, 1, 2}), all);
  // Tokens past int32: they match in int64 X and can never match in int32 X.
  const int64_t big = int64_t(1) << 40;
  Spec wide{"TF", 1, 2, 1, {0, 2}, {0, 1, 2, 1}, {big, 7, big, 7, 7, big}, {}};
  add("tokens past int32, int64 X", ints(i64, {5}, {big, 7, big, 7, 7}), wide);
  add("tokens past int32, int32 X", ints(i32, {5}, {0, 7, 0, 7, 7}), wide);
  // No pool size within [min_gram_length, max_gram_length]: all zeros.
  Spec none = node;
  none.min_gram = none.max_gram = 3;
  add("no counted sizes", y1, none);
  nnvm_test::check_ops(cases, "tfidf_vectorizer");

  using T = ops::TensorType;
  T xt(i32, {2, 6});
  ops::Attrs good = attrs_of(node);
  CHECK(infer_error("tfidf_vectorizer", {xt}, good) == "(no error)");
  auto out = ops::infer_types(ops::get_op("tfidf_vectorizer"), {xt}, good);
  CHECK(out[0].dtype == dtype::float32);
  CHECK(out[0].shape.size() == 2);
  ir::Var n("n"), len("len");  // symbolic batch and row length
  auto sym = ops::infer_types(ops::get_op("tfidf_vectorizer"), {T(i64, std::vector<ir::Expr>{n, len})}, good);
  CHECK(ir::to_string(sym[0].shape[0]) == "n");
  CHECK(ir::is_const_int(sym[0].shape[1], 7));
  CHECK(infer_error("tfidf_vectorizer", {T(dtype::float32, {2, 6})}, good) == "nnvm.ops.input_dtype");
  CHECK(infer_error("tfidf_vectorizer", {T(i32, {2, 3, 2})}, good) == "nnvm.ops.input_shape");
  auto bad = [&](auto change) {
    ops::Attrs a = good;
    change(a);
    return infer_error("tfidf_vectorizer", {xt}, a);
  };
  CHECK(bad([](ops::Attrs& a) { a.set_string("pool_strings", "a"); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_string("mode", "BM25"); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.erase("mode"); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_int("min_gram_length", 3); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_int("min_gram_length", 0); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_int("max_skip_count", -1); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_ints("ngram_counts", {4, 0}); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_ints("ngram_counts", {0, 5}); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_ints("ngram_indexes", {0, 1, 2, 3, 4, 5}); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_ints("ngram_indexes", {0, 1, 2, 3, 4, 5, -1}); }) == "nnvm.ops.attr");
  CHECK(bad([](ops::Attrs& a) { a.set_floats("weights", {1, 2}); }) == "nnvm.ops.attr");
}

}  // namespace ops_tfidf_vectorizer
