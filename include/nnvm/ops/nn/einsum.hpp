// einsum: ONNX Einsum, Einstein summation over any number of operands. The equation names each
// operand axis with a letter ("ij,jk->ik"); an output axis per output letter, and every letter that
// is not in the output is summed. Repeated letters in one operand read its diagonal ("ii->i"),
// "..." stands for the axes no letter names (broadcast between operands, right-aligned), and
// without "->" the output is "..." then the letters used exactly once, in alphabetical order.
// The whole product is one compute: one index variable per letter, reduce axes for the summed ones.
#pragma once

#include <map>

#include "nnvm/ops/broadcast/broadcast.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace detail {
// One operand's (or the output's) term: letters in order, with the "..." position (npos if none).
struct EinsumTerm {
  std::string letters;
  size_t ellipsis = std::string::npos;  // index into letters where the "..." axes go
};

[[noreturn]] inline void einsum_bad(const std::string& eq, const std::string& why) {
  throw UserError("nnvm.ops.attr", str_cat("attribute 'equation' (\"", eq, "\"): ", why), {"attribute equation"});
}

inline EinsumTerm parse_einsum_term(const std::string& eq, std::string term) {
  EinsumTerm t;
  for (size_t i = 0; i < term.size(); ++i) {
    char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (term.compare(i, 3, "...") != 0 || t.ellipsis != std::string::npos)
        einsum_bad(eq, "'.' may only appear as one \"...\" per term");
      t.ellipsis = t.letters.size();
      i += 2;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      t.letters += c;
    } else {
      einsum_bad(eq, str_cat("unexpected character '", c, "'"));
    }
  }
  return t;
}
}  // namespace detail

inline te::Tensor einsum(const std::vector<te::Tensor>& xs, const std::string& eq, std::string name = "einsum") {
  using detail::einsum_bad;
  if (xs.empty()) throw UserError("nnvm.ops.input_count", "einsum needs at least one input");
  DataType t = xs[0].dtype();
  if (!t.is_scalar() || t.is_bool() || t.is_handle() || t.is_storage_only())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input Inputs (tensor ", xs[0].name(), ") is ", t, ", expected float32, float64 or an integer"),
                    {"input Inputs"});
  for (size_t i = 1; i < xs.size(); ++i) check_same_dtype(xs[0], "Inputs[0]", xs[i], "Inputs[i]");

  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  std::vector<detail::EinsumTerm> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(detail::parse_einsum_term(eq, lhs.substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != xs.size())
    einsum_bad(eq, str_cat("it names ", terms.size(), " operands but the op has ", xs.size(), " inputs"));

  // Extent of each letter, and the broadcast extents of the "..." axes.
  std::map<char, ir::Expr> extent;
  std::map<char, int> uses;
  std::vector<ir::Expr> ell_shape;
  std::vector<size_t> ell_rank(xs.size(), 0);
  for (size_t o = 0; o < xs.size(); ++o) {
    const auto& term = terms[o];
    size_t named = term.letters.size();
    bool has_ell = term.ellipsis != std::string::npos;
    if (xs[o].rank() < named || (!has_ell && xs[o].rank() != named))
      throw UserError("nnvm.ops.input_shape",
                      str_cat("input ", o, " (tensor ", xs[o].name(), ") has rank ", xs[o].rank(), " but equation term ",
                              o, " names ", named, " axes", has_ell ? " plus \"...\"" : ""),
                      {str_cat("input Inputs[", o, "]")});
    ell_rank[o] = xs[o].rank() - named;
    std::vector<ir::Expr> mine;
    for (size_t d = 0; d < ell_rank[o]; ++d) mine.push_back(xs[o].shape()[term.ellipsis + d]);
    try {
      ell_shape = broadcast_shape(ell_shape, mine);
    } catch (const UserError& e) {
      throw UserError("nnvm.ops.input_shape", "the \"...\" axes: " + e.message(), {str_cat("input Inputs[", o, "]")});
    }
    for (size_t l = 0; l < named; ++l) {
      char c = term.letters[l];
      const ir::Expr& e = xs[o].shape()[l < term.ellipsis ? l : l + ell_rank[o]];
      ++uses[c];
      if (auto it = extent.find(c); it == extent.end()) extent.emplace(c, e);
      else if (!same_extent(it->second, e))
        throw UserError("nnvm.ops.input_shape",
                        str_cat("letter '", c, "' has extents ", ir::to_string(it->second), " and ", ir::to_string(e)),
                        {str_cat("input Inputs[", o, "]")});
    }
  }

  detail::EinsumTerm out;
  if (arrow != std::string::npos) {
    out = detail::parse_einsum_term(eq, eq.substr(arrow + 2));
    for (size_t i = 0; i < out.letters.size(); ++i) {
      if (!extent.count(out.letters[i])) einsum_bad(eq, str_cat("output letter '", out.letters[i], "' names no input axis"));
      if (out.letters.find(out.letters[i]) != i) einsum_bad(eq, str_cat("output letter '", out.letters[i], "' repeats"));
    }
  } else {
    out.ellipsis = 0;
    for (auto& [c, n] : uses)
      if (n == 1) out.letters += c;  // std::map: alphabetical (upper case first, as NumPy)
  }
  bool out_ell = out.ellipsis != std::string::npos;

  std::vector<ir::Expr> shape;
  for (size_t l = 0; l <= out.letters.size(); ++l) {
    if (l == out.ellipsis) shape.insert(shape.end(), ell_shape.begin(), ell_shape.end());
    if (l < out.letters.size()) shape.push_back(extent[out.letters[l]]);
  }
  // Summed: letters missing from the output, and the "..." axes when the output has no "...".
  std::vector<ir::IterVar> reduce;
  std::map<char, ir::Expr> summed;
  for (auto& [c, e] : extent)
    if (out.letters.find(c) == std::string::npos) {
      reduce.push_back(te::reduce_axis(e, std::string(1, c)));
      summed.emplace(c, reduce.back().var());
    }
  std::vector<ir::Expr> ell_summed;
  if (!out_ell)
    for (size_t d = 0; d < ell_shape.size(); ++d) {
      reduce.push_back(te::reduce_axis(ell_shape[d], str_cat("e", d)));
      ell_summed.push_back(reduce.back().var());
    }

  return te::compute(
      shape,
      [&](const std::vector<ir::Var>& v) {
        std::map<char, ir::Expr> at = summed;
        std::vector<ir::Expr> ell = ell_summed;
        size_t pos = 0;
        for (size_t l = 0; l <= out.letters.size(); ++l) {
          if (l == out.ellipsis)
            for (size_t d = 0; d < ell_shape.size(); ++d) ell.push_back(v[pos++]);
          if (l < out.letters.size()) at[out.letters[l]] = v[pos++];
        }
        ir::Expr prod;
        for (size_t o = 0; o < xs.size(); ++o) {
          const auto& term = terms[o];
          std::vector<ir::Expr> idx;
          for (size_t l = 0; l <= term.letters.size(); ++l) {
            if (l == term.ellipsis)
              for (size_t d = 0; d < ell_rank[o]; ++d) {
                const ir::Expr& e = xs[o].shape()[term.ellipsis + d];
                idx.push_back(ir::is_const_int(ir::simplify(e), 1) ? ir::Expr(int64_t(0))
                                                                   : ell[ell.size() - ell_rank[o] + d]);
              }
            if (l < term.letters.size()) idx.push_back(at[term.letters[l]]);
          }
          ir::Expr x = xs[o](idx);
          prod = prod.defined() ? prod * x : x;
        }
        return reduce.empty() ? prod : te::sum(prod, reduce);
      },
      std::move(name));
}

inline OpDef einsum_def() {
  return OpDef{
      .name = "einsum",
      .importer_names = {"onnx:Einsum"},
      // ONNX's one variadic input; an importer passes however many the node has.
      .input_names = {"Inputs0", "Inputs1", "Inputs2", "Inputs3", "Inputs4", "Inputs5", "Inputs6", "Inputs7"},
      .optional_inputs = 7,
      .pattern = OpPattern::out_fusable,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            for (auto& x : in)
              if (!x.defined()) throw UserError("nnvm.ops.input_count", "einsum inputs cannot be left out");
            return std::vector<te::Tensor>{einsum(in, attrs.get_string("equation"))};
          },
      .cpu_schedule =
          [](schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& t) {
            if (out[0].op().reduce_axes.empty()) schedule_injective(s[out[0]], t);
            else schedule_reduction(s[out[0]], t);
          },
      .doc = "Einstein summation of up to 8 inputs by attribute equation (\"ij,jk->ik\", \"ii->i\", \"...ij->...ji\")",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
