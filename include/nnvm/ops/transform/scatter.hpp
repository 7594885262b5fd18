// The scatters: scatter_elements (ONNX ScatterElements) and scatter_nd (ONNX ScatterND), with
// reduction none, add, mul, max or min.
//
// Written as computes over the output: element p looks at every update that could land on it
// (along `axis` for scatter_elements, every index row for scatter_nd) and combines those whose
// index hits p, in update order. With reduction none the last such update wins (ONNX leaves
// duplicates undefined), found as the largest hitting update position. Negative indices count
// from the end; an index still out of range hits nothing, so its update is dropped.
#pragma once

#include "nnvm/ops/transform/common.hpp"

NNVM_BEGIN_NAMESPACE
namespace ops {

namespace transform_detail {

inline ir::Combiner scatter_combiner(const std::string& reduction) {
  if (reduction == "add") return ir::Combiner::sum;
  if (reduction == "mul") return ir::Combiner::prod;
  if (reduction == "max") return ir::Combiner::max;
  if (reduction == "min") return ir::Combiner::min;
  throw UserError("nnvm.ops.attr",
                  str_cat("attribute 'reduction' is '", reduction, "' but must be none, add, mul, max or min"),
                  {"attribute reduction"});
}

inline void check_scatter_inputs(const te::Tensor& data, const te::Tensor& indices, const te::Tensor& updates,
                                 const std::string& reduction) {
  check_index_dtype(indices, "indices");
  check_same_dtype(data, "data", updates, "updates");
  if (reduction == "none") return;
  scatter_combiner(reduction);
  DataType t = data.dtype();
  if (t.is_bool() || t.is_storage_only() || !t.is_scalar())
    throw UserError("nnvm.ops.input_dtype",
                    str_cat("input data (tensor ", data.name(), ") is ", t, "; reduction ", reduction,
                            " needs a number type with arithmetic"),
                    {"input data"});
}

// The output: data where no update hits, else the hitting updates combined. `hit(p, r)` is the
// condition that update row `r` (the reduce axes' vars) lands on p; `update(p, r)` reads it;
// `flat(r)` numbers the rows in update order.
using ScatterFn = std::function<ir::Expr(const std::vector<ir::Var>&, const std::vector<ir::Expr>&)>;
inline te::Tensor scatter_compute(const te::Tensor& data, const std::vector<ir::Expr>& rows, const ScatterFn& hit,
                                  const ScatterFn& update, const std::string& reduction, const std::string& name) {
  auto axes = [&] {
    std::vector<ir::IterVar> r;
    for (size_t d = 0; d < rows.size(); ++d) r.push_back(te::reduce_axis(rows[d], str_cat("r", d)));
    return r;
  };
  auto vars = [](const std::vector<ir::IterVar>& r) {
    std::vector<ir::Expr> v;
    for (auto& iv : r) v.push_back(iv->var);
    return v;
  };
  if (reduction != "none") {
    return te::compute(
        data.shape(),
        [&](const std::vector<ir::Var>& p) {
          auto r = axes();
          return ir::Reduce::make(scatter_combiner(reduction), update(p, vars(r)), r, data(exprs(p)), hit(p, vars(r)));
        },
        name);
  }
  te::Tensor last = te::compute(
      data.shape(),
      [&](const std::vector<ir::Var>& p) {
        auto r = axes();
        return ir::Reduce::make(ir::Combiner::max, ravel(vars(r), rows), r, ir::Expr(int64_t(-1)), hit(p, vars(r)));
      },
      name + "_last");
  return te::compute(
      data.shape(),
      [&](const std::vector<ir::Var>& p) {
        ir::Expr l = last(exprs(p));
        return ir::select(l >= int64_t(0), update(p, unravel(ir::max(l, ir::Expr(int64_t(0))), rows)), data(exprs(p)));
      },
      name);
}

inline void schedule_scatter(schedule::Schedule& s, const std::vector<te::Tensor>& out, const Target& target) {
  const te::Tensor& y = out[0];
  if (!y.op().reduce_axes.empty()) {
    schedule_reduction(s[y], target);
    return;
  }
  for (auto& in : y.op().inputs)
    if (in->name == y.name() + "_last") schedule_reduction(s[te::Tensor(in)], target);
  schedule_injective(s[y], target);
}

}  // namespace transform_detail

// indices and updates share a shape, of data's rank, no larger than data off `axis`: update u
// at position q goes to data's position q with q[axis] = indices[q].
inline te::Tensor scatter_elements(const te::Tensor& data, const te::Tensor& indices, const te::Tensor& updates,
                                   int64_t axis = 0, const std::string& reduction = "none",
                                   std::string name = "scatter_elements") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", data.rank());
  check_rank(updates, "updates", data.rank());
  check_scatter_inputs(data, indices, updates, reduction);
  size_t a = normalize_axis(axis, data.rank(), "axis");
  // Off `axis`, an output position beyond indices' extent gets no update; reads clamp there.
  std::vector<bool> shorter(data.rank(), false);
  for (size_t d = 0; d < data.rank(); ++d) {
    check_same_extent(indices.shape()[d], updates.shape()[d], str_cat("axis ", d, " of indices and updates"));
    if (d == a || same_extent(indices.shape()[d], data.shape()[d])) continue;
    auto ci = ir::simplified_const_int(indices.shape()[d]), cd = ir::simplified_const_int(data.shape()[d]);
    if (!ci || !cd || *ci > *cd)
      throw UserError("nnvm.ops.input_shape",
                      str_cat("indices axis ", d, " has extent ", ir::to_string(indices.shape()[d]),
                              ", more than data's ", ir::to_string(data.shape()[d])),
                      {"input indices"});
    shorter[d] = true;
  }
  auto at = [&](const std::vector<ir::Var>& p, const ir::Expr& k) {
    std::vector<ir::Expr> q;
    for (size_t d = 0; d < p.size(); ++d)
      q.push_back(d == a ? k : shorter[d] ? ir::min(ir::Expr(p[d]), indices.shape()[d] - int64_t(1)) : ir::Expr(p[d]));
    return q;
  };
  ScatterFn hit = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& r) {
    ir::Expr h = wrap_negative(indices(at(p, r[0])), data.shape()[a]) == ir::Expr(p[a]);
    for (size_t d = 0; d < p.size(); ++d)
      if (shorter[d]) h = h && p[d] < indices.shape()[d];
    return h;
  };
  ScatterFn update = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& r) {
    return updates(at(p, r[0]));
  };
  return scatter_compute(data, {indices.shape()[a]}, hit, update, reduction, std::move(name));
}

// indices' last axis (constant extent K <= data's rank) holds coordinates of data's first K
// axes; updates has shape indices.shape[:-1] + data.shape[K:].
inline te::Tensor scatter_nd(const te::Tensor& data, const te::Tensor& indices, const te::Tensor& updates,
                             const std::string& reduction = "none", std::string name = "scatter_nd") {
  using namespace transform_detail;
  check_rank(data, "data", 1, SIZE_MAX);
  check_rank(indices, "indices", 1, SIZE_MAX);
  check_scatter_inputs(data, indices, updates, reduction);
  size_t q = indices.rank(), r = data.rank();
  int64_t k = const_extent(indices.shape()[q - 1], "the last axis of indices");
  if (k < 1 || size_t(k) > r)
    throw UserError("nnvm.ops.input_shape",
                    str_cat("the last axis of indices has extent ", k, " but data has rank ", r), {"input indices"});
  std::vector<ir::Expr> rows(indices.shape().begin(), indices.shape().end() - 1);
  std::vector<ir::Expr> want = rows;
  want.insert(want.end(), data.shape().begin() + k, data.shape().end());
  check_rank(updates, "updates", want.size());
  for (size_t d = 0; d < want.size(); ++d)
    check_same_extent(updates.shape()[d], want[d], str_cat("axis ", d, " of updates and indices.shape[:-1] + data.shape[K:]"));
  // One index row (indices of rank 1) still needs a reduce axis: a single row of extent 1.
  bool single = rows.empty();
  if (single) rows.emplace_back(int64_t(1));
  auto row = [&](const std::vector<ir::Expr>& m) {
    return single ? std::vector<ir::Expr>{} : m;
  };
  ScatterFn hit = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& m) {
    std::vector<ir::Expr> at = row(m);
    at.emplace_back(int64_t(0));
    ir::Expr h;
    for (int64_t j = 0; j < k; ++j) {
      at.back() = ir::Expr(j);
      ir::Expr e = wrap_negative(indices(at), data.shape()[size_t(j)]) == ir::Expr(p[size_t(j)]);
      h = h.defined() ? (h && e) : e;
    }
    return h;
  };
  ScatterFn update = [&](const std::vector<ir::Var>& p, const std::vector<ir::Expr>& m) {
    std::vector<ir::Expr> at = row(m);
    at.insert(at.end(), p.begin() + k, p.end());
    return updates(at);
  };
  return scatter_compute(data, rows, hit, update, reduction, std::move(name));
}

inline OpDef scatter_elements_def() {
  return OpDef{
      .name = "scatter_elements",
      .importer_names = {"onnx:ScatterElements", "onnx:Scatter"},
      .input_names = {"data", "indices", "updates"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{
                scatter_elements(in[0], in[1], in[2], attrs.get_int("axis", 0), attrs.get_string("reduction", "none"))};
          },
      .cpu_schedule = transform_detail::schedule_scatter,
      .doc = "data with updates written at indices along attribute axis (attribute reduction none/add/mul/max/min)",
  };
}

inline OpDef scatter_nd_def() {
  return OpDef{
      .name = "scatter_nd",
      .importer_names = {"onnx:ScatterND"},
      .input_names = {"data", "indices", "updates"},
      .pattern = OpPattern::opaque,
      .compute =
          [](const std::vector<te::Tensor>& in, const Attrs& attrs) {
            return std::vector<te::Tensor>{scatter_nd(in[0], in[1], in[2], attrs.get_string("reduction", "none"))};
          },
      .cpu_schedule = transform_detail::schedule_scatter,
      .doc = "data with updates written at the coordinates in indices' last axis (attribute reduction)",
  };
}

}  // namespace ops
NNVM_END_NAMESPACE
