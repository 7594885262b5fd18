// tfidf_vectorizer (ONNX TfIdfVectorizer): counts the n-grams of a fixed pool (attribute
// pool_int64s) in each row of X (int32 or int64, (C) or (N, C)) and writes float32 (C_out) or
// (N, C_out), C_out = max(ngram_indexes) + 1, weighted by mode (TF, IDF, TFIDF).
//
// The pool lists the n-grams size by size: ngram_counts[i] is where the (i + 1)-grams start. The
// g-th n-gram of the pool, over all sizes, lands on output column ngram_indexes[g]; only sizes in
// [min_gram_length, max_gram_length] are counted, and an n-gram listed twice counts only for its
// last column (ONNX's reference builds a trie and the later id overwrites the earlier).
//
// Occurrences follow the reference: an n-gram of size n >= 2 matches at start s with distance
// d in [1, max_skip_count + 1] when X[s + k * d] is its k-th token for every k < n; a unigram
// matches once per position (the reference counts unigrams for distance 1 only). So one
// occurrence of each (s, d) pair is counted, for every n-gram that matches there.
//
// Written as a compute over the output: the pool is an attribute, so each n-gram's tokens are
// constants in the expression. counts[b, j] reduces over starts s and distances d a balanced
// select tree on j whose leaf for column c sums the matches of c's n-grams; a second stage
// weights the counts. Reads past the row end are clamped to it, and the fit test makes them not
// count.
#pragma once

#include <map>

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

struct TfIdfSpec {
  std::string mode;  // TF, IDF or TFIDF
  int64_t min_gram_length = 1, max_gram_length = 1, max_skip_count = 0;
  std::vector<int64_t> ngram_counts, ngram_indexes, pool_int64s;
  std::vector<double> weights;  // empty: 1 for every column
};

namespace tfidf_detail {

[[noreturn]] inline void bad_attr(const char* attr, const std::string& why) {
  throw UserError("nnvm.ops.attr", str_cat("attribute ", attr, " ", why), {str_cat("attribute ", attr)});
}

// The counted n-grams (tokens -> output column; a repeat keeps the last column), and C_out.
inline std::pair<std::map<std::vector<int64_t>, int64_t>, int64_t> counted_grams(const TfIdfSpec& s) {
  if (s.mode != "TF" && s.mode != "IDF" && s.mode != "TFIDF")
    bad_attr("mode", str_cat("is '", s.mode, "'; expected TF, IDF or TFIDF"));
  if (s.min_gram_length < 1 || s.max_gram_length < s.min_gram_length)
    bad_attr("max_gram_length", str_cat("and min_gram_length are ", s.max_gram_length, " and ", s.min_gram_length,
                                        "; they need 1 <= min_gram_length <= max_gram_length"));
  if (s.max_skip_count < 0 || uint64_t(s.max_skip_count) > max_tensor_bytes)
    bad_attr("max_skip_count", str_cat("is ", s.max_skip_count, "; it must lie in [0, 2^48]"));
  int64_t pool = int64_t(s.pool_int64s.size()), grams = 0, out = 0;
  for (size_t i = 0; i < s.ngram_counts.size(); ++i) {
    int64_t begin = s.ngram_counts[i], end = i + 1 < s.ngram_counts.size() ? s.ngram_counts[i + 1] : pool;
    if (begin < 0 || end < begin || end > pool)
      bad_attr("ngram_counts", str_cat("is ", transform_detail::list_string(s.ngram_counts),
                                       "; it must not decrease and must stay within pool_int64s (", pool, " items)"));
    if ((end - begin) % int64_t(i + 1) != 0)
      bad_attr("ngram_counts", str_cat("gives the ", i + 1, "-grams ", end - begin, " pool items, not a multiple of ",
                                       i + 1));
    grams += (end - begin) / int64_t(i + 1);
  }
  if (int64_t(s.ngram_indexes.size()) != grams || grams == 0)
    bad_attr("ngram_indexes", str_cat("has ", s.ngram_indexes.size(), " entries but the pool holds ", grams,
                                      " n-grams; it needs one per n-gram, at least one"));
  for (int64_t c : s.ngram_indexes) {
    if (c < 0 || uint64_t(c) >= max_tensor_bytes) bad_attr("ngram_indexes", str_cat("holds ", c, ", not in [0, 2^48)"));
    out = std::max(out, c + 1);
  }
  if (!s.weights.empty() && int64_t(s.weights.size()) < out)
    bad_attr("weights",
             str_cat("has ", s.weights.size(), " entries; it is indexed by output column, so it needs ", out));
  std::map<std::vector<int64_t>, int64_t> counted;
  size_t g = 0;
  for (size_t i = 0; i < s.ngram_counts.size(); ++i) {
    int64_t n = int64_t(i) + 1, end = i + 1 < s.ngram_counts.size() ? s.ngram_counts[i + 1] : pool;
    for (int64_t p = s.ngram_counts[i]; p < end; p += n, ++g)
      if (n >= s.min_gram_length && n <= s.max_gram_length)
        counted[std::vector<int64_t>(s.pool_int64s.begin() + p, s.pool_int64s.begin() + p + n)] = s.ngram_indexes[g];
  }
  return {std::move(counted), out};
}

// leaves (sorted by key) as a balanced select tree on j: the leaf whose key is j, else `none`.
inline ir::Expr pick(const ir::Expr& j, const std::vector<std::pair<int64_t, ir::Expr>>& leaves, size_t lo, size_t hi,
                     const ir::Expr& none) {
  if (hi - lo == 1) return ir::select(j == ir::Expr(leaves[lo].first), leaves[lo].second, none);
  size_t mid = (lo + hi) / 2;
  return ir::select(j < ir::Expr(leaves[mid].first), pick(j, leaves, lo, mid, none), pick(j, leaves, mid, hi, none));
}

}  // namespace tfidf_detail

inline te::Tensor tfidf_vectorizer(const te::Tensor& x, const TfIdfSpec& spec, std::string name = "tfidf_vectorizer") {
  using namespace transform_detail;
  check_rank(x, "X", 1, 2);
  check_index_dtype(x, "X");
  auto counted = tfidf_detail::counted_grams(spec);
  const auto& grams = counted.first;
  int64_t out = counted.second;
  DataType xt = x.dtype();
  bool batch = x.rank() == 2;
  ir::Expr c = x.shape().back();
  std::vector<ir::Expr> shape{ir::Expr(out)};
  if (batch) shape.insert(shape.begin(), x.shape()[0]);
  // Distances past C - 1 fit no n-gram of size 2 or more, so a constant row caps the axis.
  int64_t distances = spec.max_gram_length > 1 ? spec.max_skip_count + 1 : 1;
  if (auto cc = ir::simplified_const_int(c)) distances = std::max<int64_t>(1, std::min(distances, *cc - 1));

  te::Tensor counts = te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::IterVar s = te::reduce_axis(c, "s"), d = te::reduce_axis(ir::Expr(distances), "d");
        ir::Expr step = ir::Expr(d->var) + int64_t(1), last = c - int64_t(1);
        auto token = [&](int64_t k) {
          ir::Expr at = k == 0 ? ir::Expr(s->var) : ir::min(s->var + step * k, last);
          return batch ? x({ir::Expr(v[0]), at}) : x({at});
        };
        std::map<int64_t, ir::Expr> per_column;
        for (auto& [tokens, column] : grams) {
          // An int32 X holds no token outside int32: such an n-gram never matches.
          if (xt == dtype::int32 &&
              std::any_of(tokens.begin(), tokens.end(), [](int64_t t) { return int64_t(int32_t(t)) != t; }))
            continue;
          int64_t n = int64_t(tokens.size());
          ir::Expr match = n == 1 ? ir::Expr(d->var) == int64_t(0) : s->var + step * (n - 1) <= last;
          for (int64_t k = 0; k < n; ++k) match = match && token(k) == ir::make_int_const(xt, tokens[k]);
          ir::Expr one = ir::cast(dtype::int32, match);
          auto [it, fresh] = per_column.try_emplace(column, one);
          if (!fresh) it->second = it->second + one;
        }
        std::vector<std::pair<int64_t, ir::Expr>> leaves(per_column.begin(), per_column.end());
        ir::Expr zero = ir::make_zero(dtype::int32);
        ir::Expr body = leaves.empty() ? zero : tfidf_detail::pick(v.back(), leaves, 0, leaves.size(), zero);
        return ir::Reduce::make(ir::Combiner::sum, body, {s, d});
      },
      name + "_counts");

  std::vector<std::pair<int64_t, ir::Expr>> weights;
  if (!spec.weights.empty() && spec.mode != "TF") {
    std::map<int64_t, ir::Expr> used;  // only columns with n-grams can have a count above 0
    for (auto& [tokens, column] : grams) used.try_emplace(column, ir::make_const(dtype::float32, spec.weights[column]));
    weights.assign(used.begin(), used.end());
  }
  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        ir::Expr n = counts(exprs(v)), f = ir::cast(dtype::float32, n);
        ir::Expr w = weights.empty() ? ir::make_const(dtype::float32, 1)
                                     : tfidf_detail::pick(v.back(), weights, 0, weights.size(),
                                                          ir::make_zero(dtype::float32));
        if (spec.mode == "TF") return f;
        if (spec.mode == "IDF") return ir::select(n > 0, w, ir::make_zero(dtype::float32));
        return weights.empty() ? f : w * f;
      },
      std::move(name));
}

inline OpDef tfidf_vectorizer_def() {
  return OpDef{
      .name = "tfidf_vectorizer",
      .importer_names = {"onnx:TfIdfVectorizer"},
      .input_names = {"X"},
      .pattern = OpPattern::reduction,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            if (attrs.has("pool_strings"))
              tfidf_detail::bad_attr("pool_strings", "is given, but nnvm has no string tensors; use pool_int64s");
            TfIdfSpec spec{attrs.get_string("mode"),          attrs.get_int("min_gram_length"),
                           attrs.get_int("max_gram_length"),  attrs.get_int("max_skip_count"),
                           attrs.get_ints("ngram_counts"),    attrs.get_ints("ngram_indexes"),
                           attrs.get_ints("pool_int64s"),     attrs.get_floats("weights", {})};
            return std::vector<te::Tensor>{tfidf_vectorizer(in[0], spec)};
          },
      .doc = "n-gram counts of int rows over a fixed pool (attribute pool_int64s), weighted by mode TF, IDF or TFIDF",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
